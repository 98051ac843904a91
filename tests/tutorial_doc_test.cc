// docs/tutorial.md, run: a code block whose first line is `$ build/impsim
// ...` shows that command's output. Its lines must be the output's, in
// order; a line that starts "..." (indented or not, maybe with a comment
// after it) stands for lines left out, and nothing else may be. So the tutorial cannot show a line impsim no longer
// prints, nor skip one without saying so.
#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>

#include "markdown_blocks.h"
#include "test_util.h"

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

// "...", indented or not, and maybe followed by a comment of the page's
// ("...   (the same as for copy 1: 2 lookups)").
bool is_elision(const std::string& line) {
  const size_t at = line.find_first_not_of(' ');
  return at != std::string::npos && line.compare(at, 3, "...") == 0;
}

// Where the shown lines stop matching the output: empty when every shown
// line is an output line, in order, with an elision wherever lines were
// left out (before the first shown line and after the last included).
std::string mismatch(const std::vector<std::string>& shown, const std::vector<std::string>& out) {
  size_t o = 0;
  bool skipping = true;  // what comes before the first shown line may be left out
  for (size_t s = 0; s < shown.size(); ++s) {
    if (is_elision(shown[s])) {
      skipping = true;
      continue;
    }
    size_t found = o;
    if (skipping) {
      while (found < out.size() && out[found] != shown[s]) ++found;
    }
    if (found >= out.size() || out[found] != shown[s])
      return "shown line " + std::to_string(s + 2) + " of the block is not the next line of the output" +
             (found < out.size() ? " (the output has: \"" + out[found] + "\")" : " (the output has ended)") +
             (skipping ? "" : "; left-out lines need a \"...\" line") + ": \"" + shown[s] + "\"";
    o = found + 1;
    skipping = false;
  }
  return "";
}

}  // namespace

TEST_CASE("docs/tutorial.md shows what each of its commands prints, every left-out line marked") {
  const std::string page = impsim::test::read_file(std::string(IMPSIM_SOURCE_DIR) + "/docs/tutorial.md");
  // Run where a written file (an --svg) lands in scratch, scenarios/ at hand.
  const std::string dir = impsim::test::scratch_subdir("tutorial");
  std::filesystem::create_directory_symlink(std::string(IMPSIM_SOURCE_DIR) + "/scenarios", dir + "/scenarios");
  size_t commands = 0;
  for (const impsim::test::Block& b : impsim::test::blocks(page)) {
    std::vector<std::string> shown = lines_of(b.body);
    if (shown.empty() || !shown[0].starts_with("$ build/impsim ")) continue;
    const std::string command = shown[0].substr(std::string("$ build/impsim ").size());
    CAPTURE(command);
    const impsim::test::Command c =
        impsim::test::shell("cd " + impsim::test::sh_word(dir) + " && " + IMPSIM_BINARY + " " + command);
    shown.erase(shown.begin());
    CHECK(mismatch(shown, lines_of(c.out)) == "");
    ++commands;
  }
  CHECK(commands >= 5);
}
