// Folders as arguments (scenario_files.h): every .json file under one, in
// order of their paths; and under GitHub Actions each file's report folded
// in a group of the log.
#include "scenario_files.h"

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "test_util.h"

using impsim::test::kSource;

namespace fs = std::filesystem;

namespace {

void touch(const std::string& path, const std::string& text = "{}") {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

// How many times `needle` occurs in `hay`.
size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + needle.size())) ++n;
  return n;
}

}  // namespace

TEST_CASE("a folder stands for the .json files under it, subfolders included, in order of their paths") {
  const std::string d = impsim::test::scratch_subdir("folders");
  touch(d + "/b.json");
  touch(d + "/a/z.json");
  touch(d + "/a/sub/y.json");
  touch(d + "/notes.txt");
  touch(d + "/upper.JSON");
  touch(d + "/.hidden.json");
  touch(d + "/.git/config.json");
  fs::create_directories(d + "/empty");
  fs::create_directory_symlink(d + "/a", d + "/link_to_a");  // a link to a folder is not entered
  REQUIRE(mkfifo((d + "/fifo.json").c_str(), 0600) == 0);   // not a regular file
  auto named = impsim::cli::expand_folders({"-", d, "no_such.json", d + "/b.json"});
  CHECK(named.files == std::vector<std::string>{"-", d + "/a/sub/y.json", d + "/a/z.json", d + "/b.json",
                                                "no_such.json", d + "/b.json"});
  CHECK(named.refused.empty());

  // A folder that names no file stays in its place, with the reason.
  auto empty = impsim::cli::expand_folders({d + "/b.json", d + "/empty", d + "/a/sub"});
  CHECK(empty.files == std::vector<std::string>{d + "/b.json", d + "/empty", d + "/a/sub/y.json"});
  CHECK(empty.refused == std::map<std::string, std::string>{{d + "/empty", "a folder with no .json file under it"}});

  // The walk is bounded: a folder of more entries than that is refused, not
  // walked to its end.
  auto big = impsim::cli::expand_folders({d}, 5);
  CHECK(big.files == std::vector<std::string>{d});
  CHECK(big.refused[d] == "a folder of more than 5 entries; name its scenario files, or a smaller folder");
}

TEST_CASE("validate, run and compare take scenarios/ as every shipped scenario, and a folder of none is an error") {
  std::vector<std::string> shipped;
  for (const auto& e : fs::recursive_directory_iterator(kSource + "/scenarios"))
    if (e.is_regular_file() && e.path().extension() == ".json") shipped.push_back(e.path().string());
  std::sort(shipped.begin(), shipped.end());
  REQUIRE(shipped.size() > 40);
  auto r = impsim::test::impsim("validate " + kSource + "/scenarios --json");
  CHECK(r.status == 0);
  auto reports = nlohmann::json::parse(r.out)["reports"];
  REQUIRE(reports.size() == shipped.size());
  for (size_t i = 0; i < shipped.size(); ++i) CHECK(reports[i]["file"] == shipped[i]);

  // The trailing slash changes nothing but the names.
  auto slash = impsim::test::impsim("validate " + kSource + "/scenarios/zoo/ --quiet");
  CHECK(slash.status == 0);

  const std::string empty = impsim::test::scratch_subdir("no_scenarios");
  touch(empty + "/readme.txt");
  auto none = impsim::test::impsim("run " + empty);
  CHECK(none.status == 2);
  CHECK(none.out == "impsim: error: " + empty + ": a folder with no .json file under it\n");
  auto j = impsim::test::impsim("compare " + empty + " --json 2>/dev/null");
  CHECK(j.status == 2);
  CHECK(nlohmann::json::parse(j.out)["error"]["message"] == empty + ": a folder with no .json file under it");
}

TEST_CASE("under GitHub Actions each file's text report is a group of the log, never in a file or JSON") {
  const std::string d = impsim::test::scratch_subdir("groups");
  // A hostile file name: a newline and a workflow command of its own.
  const std::string odd = d + "/x%0A\n::error::y.json";
  fs::copy_file(kSource + "/scenarios/import_chain.json", d + "/a.json");
  fs::copy_file(kSource + "/scenarios/import_chain.json", odd);
  const std::string bin = std::string(IMPSIM_BINARY);
  auto r = impsim::test::shell_split("GITHUB_ACTIONS=true " + bin + " run " + d + " | cat");
  CHECK(r.status == 0);
  CHECK(count(r.out, "::group::") == 2);
  CHECK(count(r.out, "::endgroup::\n") == 2);
  CHECK(r.out.starts_with("::group::impsim run " + d + "/a.json\n==> " + d + "/a.json <==\n"));
  // The name's newline, percent sign and `::` escaped: one line, no command
  // of its own.
  CHECK(r.out.find("::group::impsim run " + d + "/x%250A\\n:\\x3aerror:\\x3ay.json\n") != std::string::npos);
  CHECK(r.out.find("\n::error::y.json") == std::string::npos);

  // Redirected into a file, in JSON, under --quiet, for one file, or off
  // the runner: the report as it always was.
  const std::string kept = d + "/kept.txt";
  impsim::test::shell("GITHUB_ACTIONS=true " + bin + " run " + d + "/a.json " + d + "/a.json >" + kept);
  CHECK(impsim::test::read_file(kept).find("::group::") == std::string::npos);
  for (const std::string& args : {" run " + d + " --json", " run " + d + " --quiet", " run " + d + "/a.json",
                                  " run " + d + " --format markdown"}) {
    CAPTURE(args);
    auto plain = impsim::test::shell_split("GITHUB_ACTIONS=true " + bin + args + " | cat");
    CHECK(plain.out.find("::group::") == std::string::npos);
  }
  CHECK(impsim::test::impsim("run " + d + "/a.json " + d + "/a.json").out.find("::group::") == std::string::npos);
}
