// docs/ci.md, run: every command it shows, with the exit status and the
// output it gives, so that the page cannot drift from what impsim does.
//
// The page's conventions (it states them too): a ```json block whose info
// string names a file (```json probe_cost.json) is that file; every line of
// a ```sh block is run, in order, in one folder holding a copy of
// scenarios/ and those files, and must end with the status of its
// `# exit N` comment (0 without one); a ```text block right after a ```sh
// block is what the block's last command prints (standard output and
// standard error together); a `run: impsim ...` line of a ```yaml block
// (the workflow) is run too. `impsim` and `build/impsim` are the binary
// under test.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "markdown_blocks.h"
#include "test_util.h"

using impsim::test::kSource;

namespace {

using impsim::test::Block;
using impsim::test::blocks;

using impsim::test::sh_word;

// Whether `path` (a.b[].c: an array's elements) names a value in `j`, in
// at least one element of each array on the way.
bool has_path(const nlohmann::json& j, const std::string& path) {
  if (path.empty()) return true;
  size_t dot = path.find('.');
  std::string key = path.substr(0, dot);
  std::string rest = dot == std::string::npos ? "" : path.substr(dot + 1);
  const bool array = key.ends_with("[]");
  if (array) key.resize(key.size() - 2);
  if (!j.is_object() || !j.contains(key)) return false;
  const nlohmann::json& v = j.at(key);
  if (!array) return has_path(v, rest);
  if (!v.is_array()) return false;
  for (const nlohmann::json& e : v)
    if (has_path(e, rest)) return true;
  return false;
}

}  // namespace

TEST_CASE("docs/ci.md: every command runs with the exit status and the output the page gives") {
  const std::string page = impsim::test::read_file(kSource + "/docs/ci.md");
  REQUIRE(!page.empty());
  const std::string dir = impsim::test::scratch_subdir("ci_doc");
  std::filesystem::create_directories(dir + "/bin");
  std::filesystem::create_directories(dir + "/build");
  std::filesystem::create_symlink(IMPSIM_BINARY, dir + "/bin/impsim");
  std::filesystem::create_symlink(IMPSIM_BINARY, dir + "/build/impsim");
  std::filesystem::copy(kSource + "/scenarios", dir + "/scenarios", std::filesystem::copy_options::recursive);

  // A command line of the page, run in `dir` with impsim on PATH and no
  // GitHub variable but those the line sets.
  const std::regex exit_comment(R"(#\s*exit\s+(\d+))");
  auto run = [&](const std::string& line) {
    std::smatch m;
    const int want = std::regex_search(line, m, exit_comment) ? std::stoi(m[1]) : 0;
    impsim::test::Command c = impsim::test::shell("cd " + sh_word(dir) + " && env -u GITHUB_ACTIONS -u GITHUB_STEP_SUMMARY PATH=" +
                                  sh_word(dir + "/bin") + ":\"$PATH\" sh -c " + sh_word(line));
    CAPTURE(line);
    CAPTURE(c.out);
    CHECK(c.status == want);
    return c.out;
  };

  size_t impsim_commands = 0, outputs = 0, files = 0;
  std::optional<std::string> last_output;  // the previous block's last command's, when it was a sh block
  const std::regex impsim_line(R"(^([A-Z_]+=\S*\s+)*(build/)?impsim\s)");
  for (const Block& b : blocks(page)) {
    CAPTURE(b.body);
    if (b.lang == "json" && !b.name.empty()) {
      std::ofstream(dir + "/" + b.name) << b.body;
      ++files;
    } else if (b.lang == "sh") {
      std::istringstream lines(b.body);
      std::string line, joined;
      while (std::getline(lines, line)) {
        if (line.ends_with("\\")) {
          joined += line.substr(0, line.size() - 1);
          continue;
        }
        joined += line;
        if (joined.find_first_not_of(" \t") != std::string::npos && !joined.starts_with("#")) {
          impsim_commands += std::regex_search(joined, impsim_line);
          last_output = run(joined);
        }
        joined.clear();
      }
      continue;
    } else if (b.lang == "text" && b.follows_block && last_output) {
      // Blank lines at the end are not shown on the page.
      auto trimmed = [](std::string s) {
        while (s.ends_with("\n\n")) s.pop_back();
        return s;
      };
      CHECK(trimmed(*last_output) == trimmed(b.body));
      ++outputs;
    } else if (b.lang == "yaml") {
      std::istringstream lines(b.body);
      std::string line;
      const std::regex run_line(R"(^\s*(-\s+)?run:\s+(impsim\s.*)$)");
      while (std::getline(lines, line)) {
        std::smatch m;
        if (std::regex_match(line, m, run_line)) {
          ++impsim_commands;
          run(m[2]);
        }
      }
    }
    last_output.reset();
  }
  // The page shows its fixtures, a dozen commands and what several print.
  CHECK(files >= 3);
  CHECK(impsim_commands >= 12);
  CHECK(outputs >= 6);

  // The JSON report's keys the page lists are in the report it made.
  const nlohmann::json report = nlohmann::json::parse(impsim::test::read_file(dir + "/report.json"));
  const size_t section = page.find("## The JSON report");
  REQUIRE(section != std::string::npos);
  const std::regex key_row(R"(\n\| `([a-z_\[\].]+)` \|)");
  size_t keys = 0;
  for (std::sregex_iterator it(page.begin() + static_cast<ptrdiff_t>(section), page.end(), key_row), end; it != end;
       ++it) {
    CAPTURE((*it)[1].str());
    CHECK(has_path(report, (*it)[1].str()));
    ++keys;
  }
  CHECK(keys >= 10);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the README links docs/ci.md where it tells how to run impsim in CI") {
  CHECK(impsim::test::read_file(kSource + "/README.md").find("(docs/ci.md)") != std::string::npos);
}
