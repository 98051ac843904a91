#include "impsim/base/text.h"

#include <fmt/format.h>

#include "impsim/base/escape.h"

namespace impsim {

std::string grouped(const Count& n) {
  std::string s = count_text(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

std::string params_text(const std::map<std::string, int64_t>& params) {
  std::string s;
  for (auto& [k, v] : params) s += (s.empty() ? "" : ", ") + fmt::format("{}={}", k, v);
  return s;
}

std::string markdown_table(const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  for (size_t i = 0; i < rows.size(); ++i) {
    std::string line = "|";
    for (size_t j = 0; j < rows[i].size(); ++j)
      line += " " + markdown_text(rows[i][j], j == 0 && i > 0 ? Markdown::CodeCell : Markdown::Cell) + " |";
    out += line + "\n";
    if (i == 0) {
      line = "|";
      for (size_t j = 0; j < rows[i].size(); ++j) line += j == 0 ? " --- |" : " ---: |";
      out += line + "\n";
    }
  }
  return out;
}

}  // namespace impsim
