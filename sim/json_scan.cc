#include "impsim/json_scan.h"

#include <set>
#include <vector>

namespace impsim {

std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

namespace {

struct Frame {
  bool object;
  int index = 0;
  std::string pointer;
  std::set<std::string> keys;
};

}  // namespace

std::optional<JsonScanProblem> JsonSource::scan(int max_depth) {
  starts_.clear();
  const std::string& s = text_;
  size_t i = 0;
  auto skip_ws = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  };
  // Reads a string starting at s[i] == '"'; returns false on a bad one.
  auto read_string = [&](std::string& out) {
    ++i;
    while (i < s.size()) {
      char c = s[i++];
      if (c == '"') return true;
      if (c == '\\') {
        if (i >= s.size()) return false;
        char e = s[i++];
        switch (e) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'u': out += "\\u" + s.substr(i, 4); i += 4; break;
          default: out += e;
        }
      } else {
        out += c;
      }
    }
    return false;
  };
  std::vector<Frame> stack;
  std::string pending = "";  // pointer of the value about to start
  skip_ws();
  while (i < s.size()) {
    // A value starts here.
    starts_.emplace(pending, i);
    char c = s[i];
    if (c == '{' || c == '[') {
      if (static_cast<int>(stack.size()) >= max_depth)
        return JsonScanProblem{pending, i,
                               "JSON nested deeper than " + std::to_string(max_depth) + " levels"};
      stack.push_back(Frame{c == '{', 0, pending, {}});
      ++i;
      skip_ws();
      if (i < s.size() && (s[i] == '}' || s[i] == ']')) {
        ++i;
        stack.pop_back();
        goto after_value;
      }
    } else if (c == '"') {
      std::string tmp;
      if (!read_string(tmp)) return std::nullopt;
      goto after_value;
    } else {
      while (i < s.size() && std::string_view(",]} \t\r\n").find(s[i]) == std::string_view::npos) ++i;
      goto after_value;
    }
    // Inside a fresh container: read the first member's key if an object.
    if (stack.back().object) {
      skip_ws();
      if (i >= s.size() || s[i] != '"') return std::nullopt;
      size_t key_at = i;
      std::string key;
      if (!read_string(key)) return std::nullopt;
      stack.back().keys.insert(key);
      skip_ws();
      if (i >= s.size() || s[i] != ':') return std::nullopt;
      ++i;
      (void)key_at;
      pending = stack.back().pointer + "/" + pointer_token(key);
    } else {
      pending = stack.back().pointer + "/0";
    }
    skip_ws();
    continue;
  after_value:
    skip_ws();
    while (true) {
      if (stack.empty()) return std::nullopt;  // done; trailing junk is nlohmann's to report
      Frame& f = stack.back();
      if (i >= s.size()) return std::nullopt;
      if (s[i] == ',') {
        ++i;
        skip_ws();
        ++f.index;
        if (f.object) {
          if (i >= s.size() || s[i] != '"') return std::nullopt;
          size_t key_at = i;
          std::string key;
          if (!read_string(key)) return std::nullopt;
          if (!f.keys.insert(key).second)
            return JsonScanProblem{f.pointer + "/" + pointer_token(key), key_at,
                                   "duplicate key \"" + key + "\""};
          skip_ws();
          if (i >= s.size() || s[i] != ':') return std::nullopt;
          ++i;
          pending = f.pointer + "/" + pointer_token(key);
        } else {
          pending = f.pointer + "/" + std::to_string(f.index);
        }
        skip_ws();
        break;
      }
      if (s[i] == '}' || s[i] == ']') {
        ++i;
        stack.pop_back();
        skip_ws();
        continue;
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}

SourcePos JsonSource::position_at(size_t offset) const {
  SourcePos p;
  for (size_t k = 0; k < offset && k < text_.size(); ++k) {
    if (text_[k] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

SourcePos JsonSource::position_of(std::string pointer) const {
  while (true) {
    if (auto it = starts_.find(pointer); it != starts_.end()) return position_at(it->second);
    if (pointer.empty()) return {};
    pointer.erase(pointer.rfind('/'));
  }
}

}  // namespace impsim
