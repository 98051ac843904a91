// Drives NamePattern (include/impsim/base/name_pattern.h) from
// standard input, for tools/check/name_patterns, which asks each
// interpreter's own fnmatch.fnmatchcase the same questions.
//
// Input, one question a line: PATTERN, a tab, NAME. Output, one line each:
// `1` or `0` (matches or not), or `refused: WHY` for a pattern the hook
// language does not take.
#include <iostream>
#include <optional>
#include <string>

#include "impsim/base/name_pattern.h"

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    const size_t tab = line.find('\t');
    const std::string pattern = line.substr(0, tab);
    const std::string name = tab == std::string::npos ? std::string() : line.substr(tab + 1);
    std::string why;
    if (const std::optional<impsim::NamePattern> p = impsim::NamePattern::parse(pattern, &why))
      std::cout << (p->matches(name) ? '1' : '0') << '\n';
    else
      std::cout << "refused: " << why << '\n';
  }
  return 0;
}
