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
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace impsim {

// A pattern read once (the reader checks it, the model keeps it), then
// matched at every finder call of the hook that claims by it. It holds its
// text once, shared by every copy (a hook class is copied per design), and
// reads its elements from the text as it matches: a pattern costs its own
// bytes, not a structure per character (docs/limits.md, "Long strings").
class NamePattern {
 public:
  // The pattern, or nullopt with the reason it is refused in `why`.
  static std::optional<NamePattern> parse(std::string_view pattern, std::string* why);

  // fnmatch.fnmatchcase(text, pattern), code point by code point; false
  // for text that is not UTF-8.
  bool matches(std::string_view text) const;

 private:
  // One element read at a byte of text_: `*`, `?`, a literal, or a set
  // (its members are the bytes [members, end) of text_, before its `]`).
  struct Token {
    enum Kind : uint8_t { Star, Any, Literal, Set } kind = Literal;
    bool negated = false;
    char32_t literal = 0;
    size_t members = 0;
    size_t end = 0;  // where the next element starts
  };
  Token read(size_t at) const;
  bool one(const Token& t, char32_t c) const;
  // The checked pattern, runs of `*` written as one.
  std::shared_ptr<const std::string> text_;
  // The characters a name matched has at least: one per element but `*`.
  size_t min_chars_ = 0;
};
// Claims by pattern: the last part of the dotted name `name` ("test_x" of
// "pkg.test_x") matched by any of `patterns`.
bool last_part_matches(const std::vector<NamePattern>& patterns, std::string_view name);

}  // namespace impsim
