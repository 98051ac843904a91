// The zoo (scenarios/zoo/, docs/zoo.md): real import hooks as scenarios.
// Each runs and meets the figures pinned from the real packages (or from
// the re-statement, where Debian has no package), and the "real" key that
// tools/check/crosscheck --zoo reads changes nothing impsim prints.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "test_util.h"

using namespace impsim;

namespace {

std::vector<std::string> zoo_files() { return test::json_files("scenarios/zoo"); }

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

}  // namespace

TEST_CASE("the zoo has at least eight hooks and four of them are checked against real packages") {
  std::vector<std::string> files = zoo_files();
  int real = 0;
  for (const std::string& f : files) real += read_json(f).contains("real") ? 1 : 0;
  CHECK(files.size() >= 8);
  CHECK(real >= 4);
}

TEST_CASE("every zoo scenario runs and meets its pinned counts and verdicts") {
  for (const std::string& path : zoo_files()) {
    CAPTURE(path);
    nlohmann::json scenario = read_json(path);
    test::Command r = test::impsim("run " + path + " --json");
    CHECK(r.status == 0);
    nlohmann::json report = nlohmann::json::parse(r.out, nullptr, false);
    REQUIRE_FALSE(report.is_discarded());
    REQUIRE(report.contains("runs"));
    for (const auto& run : report["runs"]) {
      CAPTURE(run["variant"]);
      // every variant pins at least searches and finder_calls (a zoo file
      // that lost its figures would otherwise pass unchecked)
      std::set<std::string> pinned;
      for (const auto& e : run["expectations"]) {
        pinned.insert(e["counter"].get<std::string>());
        CAPTURE(e);
        CHECK(e["ok"] == true);
      }
      CHECK(pinned.count("searches") == 1);
      CHECK(pinned.count("finder_calls") == 1);
    }
  }
}

TEST_CASE("the real key of a zoo scenario changes nothing impsim prints") {
  for (const std::string& path : zoo_files()) {
    nlohmann::json scenario = read_json(path);
    if (!scenario.contains("real")) continue;
    CAPTURE(path);
    scenario.erase("real");
    std::string stripped = std::filesystem::temp_directory_path() / "impsim_zoo_test_stripped.json";
    {
      std::ofstream out(stripped);
      out << scenario.dump(2);
    }
    // Every key but the report's file, which names each copy.
    auto report = [](const std::string& file) {
      nlohmann::json j = nlohmann::json::parse(test::impsim("run " + file + " --json").out);
      j.erase("file");
      return j;
    };
    CHECK(report(path) == report(stripped));
    CHECK(test::impsim("run " + path).out == test::impsim("run " + stripped).out);
    std::filesystem::remove(stripped);
  }
}

// six 1.16 (measured on the real package by tools/check/crosscheck --zoo): each
// import of six makes a new importer object, and the new body removes the
// old one, so one object is left after the re-import, the second one; its
// table serves six.moves.queue by importing queue inside find_spec.
TEST_CASE("six_moves: the re-import leaves the second importer object and queue is served from the table") {
  const std::string path = std::string(IMPSIM_SOURCE_DIR) + "/scenarios/zoo/six_moves.json";
  test::Command r = test::impsim("run " + path + " --json");
  REQUIRE(r.status == 0);
  nlohmann::json run = nlohmann::json::parse(r.out)["runs"][0];
  CHECK(run["outcome"]["meta_path"] ==
        nlohmann::json::array({"BuiltinImporter", "FrozenImporter", "PathFinder", "six_importer#2"}));
  CHECK(run["finder_calls_by_object"]["six_importer"] == 0);  // the declared object: never installed
  CHECK(run["labels"]["import_queue"]["max_depth"] == 2);
  const auto& modules = run["outcome"]["modules"];
  CHECK(std::find(modules.begin(), modules.end(), "queue") != modules.end());
}

// virtualenv 20.17.1 (measured on the real package by tools/check/crosscheck
// --zoo, the hang read from the stuck frame): one _Finder object does not
// hang; two or more of one class deadlock on the class's threading.Lock at
// the third hook call of `import distutils.dist`.
TEST_CASE("virtualenv_same_class: two objects of one class hang on the class's lock, one does not") {
  const std::string path = std::string(IMPSIM_SOURCE_DIR) + "/scenarios/zoo/virtualenv_same_class.json";
  test::Command r = test::impsim("run " + path + " --json");
  REQUIRE(r.status == 0);  // allow_error: the hang is the documented end
  const nlohmann::json runs = nlohmann::json::parse(r.out)["runs"];
  REQUIRE(runs.size() == 3);
  CHECK_FALSE(runs[0]["outcome"].contains("hang"));
  for (size_t i = 1; i < 3; ++i) {
    CAPTURE(i);
    CHECK(runs[i]["outcome"]["hang"] ==
          nlohmann::json::array({"thread main waits for the threading.Lock of class virtualenv, held by thread main"}));
    CHECK(runs[i]["outcome"]["threads"] == nlohmann::json::array({"main: waiting"}));
    CHECK(runs[i]["outcome"]["results"]["import_dist"] == nlohmann::json::array());
  }
}
