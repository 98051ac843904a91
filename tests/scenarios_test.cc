// Every shipped scenario runs and its expectations hold.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "impsim/report/report.h"
#include "test_util.h"

using namespace impsim;

TEST_CASE("every shipped scenario's expectations hold") {
  auto files = test::shipped_scenarios();
  for (const std::string& file : files) {
    CAPTURE(file);
    Scenario sc = parse_scenario_file(file);
    ScenarioRun run = run_scenario(sc, {});
    CHECK(run.exit_status() == 0);
    if (run.exit_status() != 0) MESSAGE(report_text(run));
  }
  CHECK(files.size() >= 6);
}

TEST_CASE("impsim run scenarios/nested_guards.json prints the seed table") {
  // Without the subcommand it is a usage error, not a run.
  test::Command bare = test::impsim(std::string(IMPSIM_SOURCE_DIR) + "/scenarios/nested_guards.json");
  CHECK(bare.status == 2);
  CHECK(bare.out.find("; to run it: impsim run ") != std::string::npos);
  CHECK(bare.out.find("(see impsim help)") != std::string::npos);
  test::Command r = test::impsim("run " + std::string(IMPSIM_SOURCE_DIR) + "/scenarios/nested_guards.json");
  CHECK(r.status == 0);
  auto squash = [](std::string s) {
    std::string out;
    for (char c : s)
      if (!(c == ' ' && !out.empty() && out.back() == ' ')) out += c;
    return out;
  };
  std::string text = squash(r.out);
  CHECK(text.find("finder registrations in sys.meta_path 1 2 3 4\n") != std::string::npos);
  CHECK(text.find("lookups per probe, before 1 4 15 64\n") != std::string::npos);
  CHECK(text.find("lookups per probe, after 1 2 3 4\n") != std::string::npos);
}

TEST_CASE("the JSON report of the format's example is CPython's figures") {
  test::Command r =
      test::impsim("run " + std::string(IMPSIM_SOURCE_DIR) + "/scenarios/nested_guards.json --json --set k=1");
  CHECK(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  auto& before = j["runs"][0];
  CHECK(before["variant"] == "before");
  CHECK(before["counters"]["asks"] == 2);
  CHECK(before["counters"]["toggles"] == 8);
  CHECK(before["counters"]["comparisons"] == 1613);
  CHECK(before["labels"]["probe"]["comparisons"] == 404);
  CHECK(before["outcome"]["modules"] == nlohmann::json::array({"numpy", "pkg"}));
  CHECK(before["outcome"]["marks"]["pkg"] == "enabled");
  CHECK(before["outcome"]["results"]["probe"] == nlohmann::json::array({"none"}));
  CHECK(j["equivalent"] == true);
}
