// How text reports fit a terminal's 80 columns: a paragraph wrapped at its
// spaces, a table too wide for the width split into blocks of columns.
// Text arrives escaped for the terminal (escape.h): one code point is
// taken as one column, which holds for every character terminal_text
// leaves as it is but the wide ones of East Asian scripts.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace impsim {

inline constexpr size_t kTextWidth = 80;

// The columns `s` takes: its code points.
size_t text_width(std::string_view s);

// One paragraph (no newline in it) wrapped at `width` at its spaces: the
// first line starts with `first`, the others with `rest`; every line ends
// with "\n". A word longer than a line is kept whole on a line of its own
// (a long name or path is not cut).
std::string wrap_paragraph(std::string_view text, std::string_view first = "", std::string_view rest = "",
                           size_t width = kTextWidth);

// Rows of cells, the first the header: the first column left-aligned, the
// others right-aligned, two spaces apart, no trailing spaces. A table
// wider than `width` is printed as blocks of its columns, each repeating
// the first column and as wide as fits (at least one more column), a blank
// line between blocks: every number stays whole and aligned. A cell wider
// than kLongestAlignedCell (a counter of a label or finder id thousands of
// characters long) is written as it is and sets no column's width: padding
// every row, in every block, to it made the table's size the longest name
// times the rows (a 7.5-million-character finder id: 900 MB of `compare`).
inline constexpr size_t kLongestAlignedCell = 256;
std::string text_table(const std::vector<std::vector<std::string>>& rows, size_t width = kTextWidth);

}  // namespace impsim
