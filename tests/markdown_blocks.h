// The fenced code blocks of a Markdown page, for the tests that run what a
// page of docs/ shows (ci_doc_test.cc, tutorial_doc_test.cc).
#pragma once

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

namespace impsim::test {

struct Block {
  std::string lang, name;  // ```json probe_cost.json: "json", "probe_cost.json"
  std::string body;
  bool follows_block = false;  // nothing but blank lines since the previous block
};

// The fenced code blocks of a Markdown page, in order, indented ones (in a
// list item) too, their indent taken off. A fence closes at a line of
// backticks at least as long as the one that opened it.
inline std::vector<Block> blocks(const std::string& page) {
  std::vector<Block> out;
  std::istringstream in(page);
  std::string line;
  bool only_blank_since = false;
  while (std::getline(in, line)) {
    const size_t indent = std::min(line.find_first_not_of(' '), line.size());
    if (line.compare(indent, 3, "```") == 0) {
      line.erase(0, indent);
      const size_t ticks = std::min(line.find_first_not_of('`'), line.size());
      const std::string fence = line.substr(0, ticks);
      std::istringstream info(line.substr(ticks));
      Block b;
      info >> b.lang >> b.name;
      b.follows_block = only_blank_since;
      std::string body_line;
      while (std::getline(in, body_line)) {
        const size_t cut = std::min(body_line.find_first_not_of(' '), std::min(indent, body_line.size()));
        body_line.erase(0, cut);
        if (body_line.starts_with(fence) && body_line.find_first_not_of('`') == std::string::npos) break;
        b.body += body_line + "\n";
      }
      out.push_back(b);
      only_blank_since = true;
    } else if (line.find_first_not_of(" \t") != std::string::npos) {
      only_blank_since = false;
    }
  }
  return out;
}

}  // namespace impsim::test
