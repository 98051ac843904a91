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
  std::vector<char32_t> cps;
  NamePattern p;
  std::vector<Token>& out = p.tokens_;
  auto refuse = [&](std::string w) -> std::optional<NamePattern> {
    *why = std::move(w);
    return std::nullopt;
  };
  auto token = [](Token::Kind kind, char32_t literal = 0) { return Token{kind, literal, false, {}}; };
  if (!decode_utf8(pattern, cps)) return refuse("it is not UTF-8");
  if (cps.empty()) return refuse("it is empty");
  for (size_t i = 0; i < cps.size(); ++i) {
    const char32_t c = cps[i];
    if (c == '*') {
      if (out.empty() || out.back().kind != Token::Star) out.push_back(token(Token::Star));
    } else if (c == '?') {
      out.push_back(token(Token::Any));
    } else if (c == '[') {
      Token t = token(Token::Set);
      size_t j = i + 1;
      if (j < cps.size() && cps[j] == '!') {
        t.negated = true;
        ++j;
      }
      for (; j < cps.size() && cps[j] != ']'; ++j) {
        const char32_t lo = cps[j];
        if (!literal_char(lo))
          return refuse(
              fmt::format("\"{}\" in a set: a set holds identifier characters and ranges such as a-z", shown(lo)));
        char32_t hi = lo;
        if (j + 2 < cps.size() && cps[j + 1] == '-' && cps[j + 2] != ']') {
          hi = cps[j + 2];
          if (!literal_char(hi))
            return refuse(fmt::format("\"{}\" ends a range: a range joins two identifier characters", shown(hi)));
          if (hi < lo)
            return refuse(fmt::format("the range {}-{} is empty (its first character comes after its last)", shown(lo),
                                      shown(hi)));
          j += 2;
        }
        t.ranges.emplace_back(lo, hi);
      }
      if (j >= cps.size()) return refuse("a \"[\" has no \"]\" to close its set");
      if (t.ranges.empty()) return refuse("a set \"[]\" or \"[!]\" holds nothing");
      out.push_back(std::move(t));
      i = j;
    } else if (c == '.') {
      return refuse(
          "a pattern is matched against the last part of a name, which holds no \".\" (to claim a package and "
          "everything inside it, use \"packages\")");
    } else if (!literal_char(c)) {
      return refuse(
          fmt::format("\"{}\": a pattern holds identifier characters, \"*\", \"?\" and sets [...]", shown(c)));
    } else {
      out.push_back(token(Token::Literal, c));
    }
  }
  return p;
}

bool NamePattern::one(const Token& t, char32_t c) {
  if (t.kind == Token::Any) return true;
  if (t.kind == Token::Literal) return t.literal == c;
  bool in = false;
  for (const auto& [lo, hi] : t.ranges) in = in || (lo <= c && c <= hi);
  return in != t.negated;
}

bool NamePattern::matches(std::string_view text) const {
  const std::vector<Token>& p = tokens_;
  std::vector<char32_t> s;
  if (!decode_utf8(text, s)) return false;
  // Every token but `*` takes one character: a `*` is tried at its shortest
  // first, and the last one met takes one more character each time what
  // follows it fails (no earlier `*` need take more).
  size_t pi = 0, si = 0, star = p.size(), star_si = 0;
  while (si < s.size()) {
    if (pi < p.size() && p[pi].kind == Token::Star) {
      star = pi++;
      star_si = si;
    } else if (pi < p.size() && one(p[pi], s[si])) {
      ++pi;
      ++si;
    } else if (star != p.size()) {
      pi = star + 1;
      si = ++star_si;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi].kind == Token::Star) ++pi;
  return pi == p.size();
}

bool last_part_matches(const std::vector<NamePattern>& patterns, std::string_view name) {
  const std::string_view last = name.substr(name.rfind('.') + 1);  // npos + 1 == 0
  return std::any_of(patterns.begin(), patterns.end(), [&](const NamePattern& p) { return p.matches(last); });
}

}  // namespace impsim
