#include "impsim/base/json_scan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <unordered_set>
#include <vector>

#include "impsim/base/escape.h"
#include "impsim/base/unicode_names.h"

namespace impsim {

std::string pointer_token(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

size_t bom_length(std::string_view text) { return text.starts_with("\xEF\xBB\xBF") ? 3 : 0; }

namespace {

// One open container on the walker's explicit stack.
struct Level {
  bool object = false;
  size_t index = 0;  // arrays: the current element; objects: members so far
  std::string key;   // objects: the current member's key, decoded
  // Objects, when the caller checks duplicates: every key seen so far.
  std::unordered_set<std::string> keys;
};

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool read_hex4(std::string_view s, size_t& i, uint32_t& out) {
  if (i + 4 > s.size()) return false;
  out = 0;
  for (int k = 0; k < 4; ++k) {
    int d = hex_digit(s[i + k]);
    if (d < 0) return false;
    out = out * 16 + static_cast<uint32_t>(d);
  }
  i += 4;
  return true;
}

// Reads the string at s[i] == '"', decoding it into `out` when given (keys
// are decoded as nlohmann decodes them, so "\u0061" and "a" are the same
// key and pointers match the reader's). False on a malformed string.
bool read_string(std::string_view s, size_t& i, std::string* out) {
  ++i;
  while (i < s.size()) {
    // The plain run up to the next quote or backslash, appended at once.
    size_t run = i;
    while (run < s.size() && s[run] != '"' && s[run] != '\\') ++run;
    if (out) out->append(s.data() + i, run - i);
    i = run;
    if (i >= s.size()) return false;
    char c = s[i++];
    if (c == '"') return true;
    if (i >= s.size()) return false;
    char e = s[i++];
    if (!out) {
      if (e == 'u' && (i += 4) > s.size()) return false;
      continue;
    }
    switch (e) {
      case 'n': *out += '\n'; break;
      case 't': *out += '\t'; break;
      case 'r': *out += '\r'; break;
      case 'b': *out += '\b'; break;
      case 'f': *out += '\f'; break;
      case 'u': {
        uint32_t cp = 0;
        if (!read_hex4(s, i, cp)) return false;
        if (cp >= 0xD800 && cp < 0xDC00) {
          uint32_t lo = 0;
          if (i + 2 > s.size() || s[i] != '\\' || s[i + 1] != 'u') return false;
          i += 2;
          if (!read_hex4(s, i, lo) || lo < 0xDC00 || lo > 0xDFFF) return false;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          return false;
        }
        append_utf8(*out, cp);
        break;
      }
      default: *out += e;
    }
  }
  return false;
}

std::string pointer_of(const std::vector<Level>& stack) {
  std::string p;
  for (const Level& l : stack) p += "/" + (l.object ? pointer_token(l.key) : std::to_string(l.index));
  return p;
}

// Walks every value of `s` in order, without recursion, calling
//   bool v.value(stack, offset)   as each value starts (path = the stack),
//   bool v.open(stack, offset)    before a container is pushed,
//   bool v.key(stack, offset)     after an object member's key is read
//                                 (stack.back().key holds it).
// Any of them returns false to stop. Stops quietly at a syntax error.
template <class Visitor>
void walk(std::string_view s, Visitor& v, bool keep_keys) {
  std::vector<Level> stack;
  size_t i = bom_length(s);
  const size_t n = s.size();
  auto skip_ws = [&] {
    while (i < n && is_ws(s[i])) ++i;
  };
  // Reads `"key":` of the next member of the object on top.
  auto member = [&] {
    Level& top = stack.back();
    if (i >= n || s[i] != '"') return false;
    size_t key_at = i;
    top.key.clear();
    if (!read_string(s, i, &top.key)) return false;
    if (!v.key(stack, key_at)) return false;
    if (keep_keys) top.keys.insert(top.key);
    skip_ws();
    if (i >= n || s[i] != ':') return false;
    ++i;
    skip_ws();
    return true;
  };
  skip_ws();
  while (i < n) {
    if (!v.value(stack, i)) return;
    char c = s[i];
    if (c == '{' || c == '[') {
      if (!v.open(stack, i)) return;
      stack.emplace_back().object = c == '{';
      ++i;
      skip_ws();
      if (i < n && (s[i] == '}' || s[i] == ']')) {
        ++i;
        stack.pop_back();
      } else {
        if (stack.back().object && !member()) return;
        continue;
      }
    } else if (c == '"') {
      if (!read_string(s, i, nullptr)) return;
    } else {
      while (i < n && !is_ws(s[i]) && s[i] != ',' && s[i] != ']' && s[i] != '}') ++i;
    }
    // After a value: commas and closing brackets until the next value.
    skip_ws();
    while (true) {
      if (stack.empty() || i >= n) return;  // done; trailing junk is nlohmann's to report
      if (s[i] == ',') {
        ++i;
        skip_ws();
        ++stack.back().index;
        if (stack.back().object && !member()) return;
        break;
      }
      if (s[i] != '}' && s[i] != ']') return;
      ++i;
      stack.pop_back();
      skip_ws();
    }
  }
}

struct Checker {
  int max_depth;
  std::optional<JsonScanProblem> problem;

  bool value(const std::vector<Level>&, size_t) { return true; }
  bool open(const std::vector<Level>& stack, size_t at) {
    if (static_cast<int>(stack.size()) < max_depth) return true;
    problem = JsonScanProblem{pointer_of(stack), at,
                              "JSON nested deeper than " + std::to_string(max_depth) + " levels", true};
    return false;
  }
  bool key(const std::vector<Level>& stack, size_t at) {
    const Level& top = stack.back();
    if (!top.keys.count(top.key)) return true;
    problem = JsonScanProblem{pointer_of(stack), at, "duplicate key \"" + top.key + "\"", false};
    return false;
  }
};

// Finds where the value at a pointer (or its deepest existing ancestor)
// starts. Between two value starts only the last token of the path is new,
// so it keeps how many leading tokens match and compares one token a value.
struct Locator {
  std::vector<std::string> target;
  size_t matched = 0;
  size_t best_depth = 0;
  size_t best_offset = 0;

  bool value(const std::vector<Level>& stack, size_t at) {
    size_t d = stack.size();
    matched = std::min(matched, d == 0 ? 0 : d - 1);
    if (d > 0 && matched == d - 1 && d - 1 < target.size()) {
      const Level& l = stack.back();
      if (l.object ? l.key == target[d - 1] : std::to_string(l.index) == target[d - 1]) matched = d;
    }
    if (matched != d) return true;
    best_depth = d;
    best_offset = at;
    return d < target.size();
  }
  bool open(const std::vector<Level>&, size_t) { return true; }
  bool key(const std::vector<Level>&, size_t) { return true; }
};

std::vector<std::string> pointer_tokens(const std::string& pointer) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < pointer.size()) {
    ++i;  // the '/'
    std::string t;
    for (; i < pointer.size() && pointer[i] != '/'; ++i) {
      if (pointer[i] == '~' && i + 1 < pointer.size()) {
        t += pointer[i + 1] == '1' ? '/' : '~';
        ++i;
      } else {
        t += pointer[i];
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

std::optional<JsonScanProblem> JsonSource::scan(int max_depth) const {
  // Before anything else: every string of the scenario then is UTF-8, and
  // the message can say which byte and where, which nlohmann's parse error
  // (quoting the byte itself) cannot.
  if (size_t bad = first_invalid_utf8(text_); bad != std::string::npos)
    return JsonScanProblem{"", bad,
                           fmt::format("the file is not UTF-8: byte 0x{:02X} here is not part of a UTF-8 character "
                                       "(JSON text is UTF-8: save the file as UTF-8, or write the character as "
                                       "\\uXXXX)",
                                       static_cast<unsigned char>(text_[bad])),
                           false, true};
  Checker c{max_depth, std::nullopt};
  walk(text_, c, /*keep_keys=*/true);
  return c.problem;
}

SourcePos JsonSource::position_at(size_t offset) const {
  SourcePos p;
  for (size_t k = bom_length(text_); k < offset && k < text_.size(); ++k) {
    unsigned char c = static_cast<unsigned char>(text_[k]);
    if (c == '\n') {
      ++p.line;
      p.column = 1;
    } else if ((c & 0xC0) != 0x80) {  // a UTF-8 continuation byte is not a new character
      ++p.column;
    }
  }
  return p;
}

SourcePos JsonSource::position_of(const std::string& pointer) const { return position_at(offset_of(pointer)); }

namespace {

// Finds the key of the member at `pointer`: compares the path of each key
// read, so it costs a string per key, which only an error pays.
struct KeyLocator {
  std::string target;
  std::optional<size_t> found;

  bool value(const std::vector<Level>&, size_t) { return true; }
  bool open(const std::vector<Level>&, size_t) { return true; }
  bool key(const std::vector<Level>& stack, size_t at) {
    if (pointer_of(stack) != target) return true;
    found = at;
    return false;
  }
};

}  // namespace

SourcePos JsonSource::key_position_of(const std::string& pointer) const {
  KeyLocator l{pointer, std::nullopt};
  walk(text_, l, /*keep_keys=*/false);
  return l.found ? position_at(*l.found) : position_of(pointer);
}

size_t JsonSource::offset_of(const std::string& pointer) const {
  Locator l{pointer_tokens(pointer)};
  l.best_offset = bom_length(text_);
  walk(text_, l, /*keep_keys=*/false);
  return l.best_offset;
}

}  // namespace impsim
