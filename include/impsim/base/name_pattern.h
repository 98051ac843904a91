// The shell-style patterns a hook may claim names by (pytest's python_files,
// `test_*`), matched as Python's fnmatch.fnmatchcase matches them. Only the
// part of the syntax whose meaning is the same in every CPython 3.9-3.13 is
// taken: `*`, `?`, literal identifier characters, and sets `[...]` /
// `[!...]` of identifier characters and ranges `a-z` (low <= high). What
// fnmatch reads otherwise (an unclosed `[`, an empty or reversed range,
// `-` or `]` as set members, backslashes, set operators) is refused, so
// that no pattern means one thing here and another there.
#pragma once

#include <string>
#include <string_view>

namespace impsim {

// Why `pattern` is not one of the patterns above, or "" when it is.
std::string name_pattern_error(std::string_view pattern);

// fnmatch.fnmatchcase(text, pattern), code point by code point, for a
// pattern name_pattern_error accepts and UTF-8 text.
bool name_pattern_matches(std::string_view pattern, std::string_view text);

}  // namespace impsim
