// Text every report, trace and message writes the same way: counts with
// thousands grouped, a sweep point's parameters, Markdown tables. Once here,
// below every stage, so the stages cannot drift apart.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "impsim/base/count.h"

namespace impsim {

// 13699 -> "13,699"
std::string grouped(const Count& n);

// {"k": 2, "n": 10} -> "k=2, n=10" (a sweep point, as every report names it).
std::string params_text(const std::map<std::string, int64_t>& params);

// Rows of cells (the first the header) as a Markdown table, the first
// column in code font. Cells are plain text: each is escaped here
// (markdown_text, escape.h), so a title or label cannot break the table.
std::string markdown_table(const std::vector<std::vector<std::string>>& rows);

}  // namespace impsim
