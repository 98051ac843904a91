#include "impsim/base/name_pattern.h"

#include <fmt/format.h>

#include <algorithm>

#include "impsim/base/unicode_names.h"

namespace impsim {

namespace {

// The characters a pattern may hold as literals: those of identifiers
// (ASCII letters, digits, "_", and any non-ASCII character, which an
// identifier's NFKC form may hold).
bool literal_char(char32_t c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

std::string shown(char32_t c) {
  std::string s;
  append_utf8(s, c);
  return s;
}

}  // namespace

std::optional<NamePattern> NamePattern::parse(std::string_view pattern, std::string* why) {
  auto refuse = [&](std::string w) -> std::optional<NamePattern> {
    *why = std::move(w);
    return std::nullopt;
  };
  if (pattern.empty()) return refuse("it is empty");
  // Checked in one walk of the UTF-8 text, copied as it goes (runs of `*`
  // as one): nothing is kept per character but the character.
  std::string text;
  text.reserve(pattern.size());
  size_t chars = 0;
  size_t i = 0;
  char32_t c = 0;
  auto next = [&](size_t& at, char32_t& cp) { return next_utf8(pattern, at, cp); };
  // Refusals as the character-by-character reading gave them: invalid
  // UTF-8 anywhere comes first.
  for (size_t k = 0; k < pattern.size();)
    if (!next(k, c)) return refuse("it is not UTF-8");
  while (i < pattern.size()) {
    const size_t start = i;
    next(i, c);
    if (c == '*') {
      if (text.empty() || text.back() != '*') text += '*';
      continue;
    }
    if (c == '?') {
      text += '?';
      ++chars;
      continue;
    }
    if (c == '[') {
      size_t j = i;
      char32_t m = 0;
      auto peek = [&](size_t at, char32_t& cp) {
        size_t k = at;
        return k < pattern.size() && next(k, cp) ? k : std::string::npos;
      };
      size_t after = peek(j, m);
      if (after != std::string::npos && m == '!') j = after;
      bool any = false;
      for (;;) {
        char32_t lo = 0;
        size_t k = peek(j, lo);
        if (k == std::string::npos) return refuse("a \"[\" has no \"]\" to close its set");
        if (lo == ']') {
          j = k;
          break;
        }
        if (!literal_char(lo))
          return refuse(
              fmt::format("\"{}\" in a set: a set holds identifier characters and ranges such as a-z", shown(lo)));
        char32_t dash = 0, hi = 0;
        size_t k2 = peek(k, dash), k3 = k2 == std::string::npos ? k2 : peek(k2, hi);
        if (k3 != std::string::npos && dash == '-' && hi != ']') {
          if (!literal_char(hi))
            return refuse(fmt::format("\"{}\" ends a range: a range joins two identifier characters", shown(hi)));
          if (hi < lo)
            return refuse(fmt::format("the range {}-{} is empty (its first character comes after its last)", shown(lo),
                                      shown(hi)));
          k = k3;
        }
        any = true;
        j = k;
      }
      if (!any) return refuse("a set \"[]\" or \"[!]\" holds nothing");
      text.append(pattern.substr(start, j - start));
      ++chars;
      i = j;
      continue;
    }
    if (c == '.')
      return refuse(
          "a pattern is matched against the last part of a name, which holds no \".\" (to claim a package and "
          "everything inside it, use \"packages\")");
    if (!literal_char(c))
      return refuse(
          fmt::format("\"{}\": a pattern holds identifier characters, \"*\", \"?\" and sets [...]", shown(c)));
    text.append(pattern.substr(start, i - start));
    ++chars;
  }
  text.shrink_to_fit();
  NamePattern p;
  p.text_ = std::make_shared<const std::string>(std::move(text));
  p.min_chars_ = chars;
  return p;
}

// The text is the one parse checked: every set is closed and well formed.
NamePattern::Token NamePattern::read(size_t at) const {
  const std::string_view p = *text_;
  Token t;
  char32_t c = 0;
  size_t i = at;
  next_utf8(p, i, c);
  if (c == '*')
    t.kind = Token::Star;
  else if (c == '?')
    t.kind = Token::Any;
  else if (c != '[')
    t.literal = c;
  else {
    t.kind = Token::Set;
    if (p[i] == '!') {
      t.negated = true;
      ++i;
    }
    t.members = i;
    i = p.find(']', i) + 1;  // no member is a "]", and the set is closed
  }
  t.end = i;
  return t;
}

bool NamePattern::one(const Token& t, char32_t c) const {
  if (t.kind == Token::Any) return true;
  if (t.kind == Token::Literal) return t.literal == c;
  const std::string_view p = *text_;
  const size_t close = t.end - 1;
  bool in = false;
  for (size_t j = t.members; j < close && !in;) {
    char32_t lo = 0;
    next_utf8(p, j, lo);
    char32_t hi = lo;
    // A "-" is never a member: after one, it joins a range (parse checked).
    if (p[j] == '-') {
      ++j;
      next_utf8(p, j, hi);
    }
    in = lo <= c && c <= hi;
  }
  return in != t.negated;
}

bool NamePattern::matches(std::string_view text) const {
  std::vector<char32_t> s;
  if (!decode_utf8(text, s)) return false;
  if (s.size() < min_chars_) return false;  // every element but `*` takes a character
  const size_t size = text_->size();
  constexpr size_t kNone = std::string::npos;
  // Every element but `*` takes one character: a `*` is tried at its
  // shortest first, and the last one met takes one more character each
  // time what follows it fails (no earlier `*` need take more). pi is a
  // byte of the pattern's text; star the byte after the last `*` met.
  size_t pi = 0, si = 0, star = kNone, star_si = 0;
  while (si < s.size()) {
    Token t;
    if (pi < size) t = read(pi);
    if (pi < size && t.kind == Token::Star) {
      pi = star = t.end;
      star_si = si;
    } else if (pi < size && one(t, s[si])) {
      pi = t.end;
      ++si;
    } else if (star != kNone) {
      pi = star;
      si = ++star_si;
    } else {
      return false;
    }
  }
  // Runs of `*` are one: at most one is left before the end.
  if (pi < size && (*text_)[pi] == '*') ++pi;
  return pi == size;
}

bool last_part_matches(const std::vector<NamePattern>& patterns, std::string_view name) {
  const std::string_view last = name.substr(name.rfind('.') + 1);  // npos + 1 == 0
  return std::any_of(patterns.begin(), patterns.end(), [&](const NamePattern& p) { return p.matches(last); });
}

}  // namespace impsim
