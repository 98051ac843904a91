// The fast engine gives the step engine's reports, and reaches where
// stepping cannot.
#include <doctest/doctest.h>

#include "impsim/report.h"
#include "test_util.h"

using namespace impsim;


TEST_CASE("fast engine: every shipped scenario gives the step engine's report") {
  auto files = test::shipped_scenarios();
  for (const std::string& file : files) {
    CAPTURE(file);
    Scenario sc = load_scenario_file(file);
    RunOptions step, fast;
    fast.engine = EngineKind::Fast;
    ScenarioRun a = run_scenario(sc, step), b = run_scenario(sc, fast);
    CHECK(dump_json(report_json(a)) == dump_json(report_json(b)));
  }
  CHECK(files.size() >= 10);
}

TEST_CASE("fast engine: lookups(k) = k x (lookups(k-1) + 1) before and k after, up to k = 30") {
  Count expected = 0;
  for (int k = 1; k <= 30; ++k) {
    expected = static_cast<Count>(k) * (expected + 1);
    CAPTURE(k);
    RunOptions o;
    o.engine = EngineKind::Fast;
    o.overrides["k"] = k;
    auto r = test::run_json(test::kProbeScenario, o);
    const Counters& before = test::variant_run(r->run, Variant::Before).labels[0].second;
    const Counters& after = test::variant_run(r->run, Variant::After).labels[0].second;
    CHECK(count_text(before.lookups) == count_text(expected));
    CHECK(count_text(before.toggles) == count_text(2 * expected));
    CHECK(count_text(before.comparisons) == count_text(2 * expected * 202));
    CHECK(before.max_depth == static_cast<Count>(k));
    CHECK(after.lookups == static_cast<Count>(k));
    CHECK(after.asks == static_cast<Count>(k) * k);
  }
}

TEST_CASE("fast engine: the k = 20 probe is the issue's 6,613,313,319,248,080,000 lookups, printed exactly") {
  RunOptions o;
  o.engine = EngineKind::Fast;
  o.overrides["k"] = 20;
  auto r = test::run_json(test::kProbeScenario, o);
  std::string json = dump_json(report_json(r->run));
  CHECK(json.find("\"lookups\": 6613313319248080000") != std::string::npos);
  // Comparisons pass 2^64 and are still written as exact digits.
  CHECK(json.find("\"comparisons\": 2671778580976224320000") != std::string::npos);
  CHECK(nlohmann::json::parse(json)["runs"][0]["labels"]["probe"]["max_depth"] == 20);
}

TEST_CASE("fast engine: a runaway the step engine would stop is still bounded by --max-events on stepped work") {
  RunOptions o;
  o.engine = EngineKind::Fast;
  o.overrides["k"] = 12;
  o.limits.max_events = 10000;
  auto r = test::run_json(test::kProbeScenario, o);
  CHECK_FALSE(r->run.limit_reached());
  RunOptions s = o;
  s.engine = EngineKind::Step;
  CHECK(test::run_json(test::kProbeScenario, s)->run.limit_reached());
}
