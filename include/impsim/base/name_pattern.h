// The shell-style patterns a hook may claim names by (pytest's python_files,
// `test_*`), matched as Python's fnmatch.fnmatchcase matches them. Only the
// part of the syntax whose meaning is the same in every CPython 3.9-3.13 is
// taken: `*`, `?`, literal identifier characters, and sets `[...]` /
// `[!...]` of identifier characters and ranges `a-z` (low <= high). What
// fnmatch reads otherwise (an unclosed `[`, an empty or reversed range,
// `-` or `]` as set members, backslashes, set operators) is refused, so
// that no pattern means one thing here and another there.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace impsim {

// A pattern read once (the reader checks it, the model keeps it), then
// matched at every finder call of the hook that claims by it.
class NamePattern {
 public:
  // The pattern, or nullopt with the reason it is refused in `why`.
  static std::optional<NamePattern> parse(std::string_view pattern, std::string* why);

  // fnmatch.fnmatchcase(text, pattern), code point by code point; false
  // for text that is not UTF-8.
  bool matches(std::string_view text) const;

 private:
  // One element: `*`, `?`, a literal, or a set.
  struct Token {
    enum Kind : uint8_t { Star, Any, Literal, Set } kind = Literal;
    char32_t literal = 0;
    bool negated = false;
    std::vector<std::pair<char32_t, char32_t>> ranges;  // a single character is (c, c)
  };
  static bool one(const Token& t, char32_t c);
  std::vector<Token> tokens_;
};

// Claims by pattern: the last part of the dotted name `name` ("test_x" of
// "pkg.test_x") matched by any of `patterns`.
bool last_part_matches(const std::vector<NamePattern>& patterns, std::string_view name);

}  // namespace impsim
