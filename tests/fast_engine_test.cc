// The fast engine gives the step engine's reports, and reaches where
// stepping cannot.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "impsim/report/report.h"
#include "test_util.h"

using namespace impsim;


TEST_CASE("fast engine: every shipped scenario gives the step engine's report") {
  auto files = test::shipped_paddle_scenarios();  // it refuses hook scenarios
  for (const std::string& file : files) {
    CAPTURE(file);
    Scenario sc = parse_scenario_file(file);
    if (sc.lazy) continue;  // and lazy imports (plan_runs says so: lazy_imports_test.cc)
    RunOptions step, fast;
    fast.engine = EngineKind::Fast;
    ScenarioRun a = run_scenario(sc, step), b = run_scenario(sc, fast);
    CHECK(dump_json(report_json(a)) == dump_json(report_json(b)));
  }
  CHECK(files.size() >= 10);
}

TEST_CASE("fast engine: lookups(k) = k x (lookups(k-1) + 1) before and k after, up to k = 30") {
  Count expected = 0;
  for (uint64_t k = 1; k <= 30; ++k) {
    expected = Count(k) * (expected + Count(1));
    CAPTURE(k);
    RunOptions o;
    o.engine = EngineKind::Fast;
    o.overrides["k"] = static_cast<int64_t>(k);
    auto r = test::run_json(test::kProbeScenario, o);
    const Counters& before = test::variant_run(r->run, Variant::Before).labels[0].second;
    const Counters& after = test::variant_run(r->run, Variant::After).labels[0].second;
    CHECK(count_text(before.lookups) == count_text(expected));
    CHECK(count_text(before.toggles) == count_text(Count(2) * expected));
    CHECK(count_text(before.comparisons) == count_text(Count(2) * expected * Count(202)));
    CHECK(before.max_depth == k);
    CHECK(after.lookups == k);
    CHECK(after.asks == k * k);
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

TEST_CASE("--max-events means simulated events in both engines: the same flag stops both at the same event") {
  RunOptions step;
  step.overrides["k"] = 6;
  step.limits.max_events = 500;
  RunOptions fast = step;
  fast.engine = EngineKind::Fast;
  auto a = test::run_json(test::kProbeScenario, step);
  auto b = test::run_json(test::kProbeScenario, fast);
  CHECK(a->run.exit_status() == 3);
  CHECK(b->run.exit_status() == 3);
  CHECK(dump_json(report_json(a->run)) == dump_json(report_json(b->run)));
}

TEST_CASE("--max-work bounds what the fast engine steps - replayed asks cost none of it") {
  RunOptions o;
  o.engine = EngineKind::Fast;
  o.overrides["k"] = 12;
  o.limits.max_work = 10000;
  auto r = test::run_json(test::kProbeScenario, o);
  CHECK_FALSE(r->run.limit_reached());
  o.limits.max_work = 50;
  auto stopped = test::run_json(test::kProbeScenario, o);
  REQUIRE(stopped->run.limit_reached());
  CHECK(stopped->run.runs[0].limit->limit == "max-work");
}

TEST_CASE("a step run stopped at the default event bound says when the fast engine would finish it") {
  RunOptions o;
  o.overrides["k"] = 6;
  o.limits.default_bound = 1000;  // stands for the 500 million of a real run
  auto r = test::run_json(test::kProbeScenario, o);
  const VariantRun& before = test::variant_run(r->run, Variant::Before);
  REQUIRE(before.limit);
  CHECK(before.limit->limit == "max-events");
  CHECK(before.limit->detail.find("; --engine fast finishes this run (") != std::string::npos);
  o.limits.max_events = 1000;  // given explicitly: the fast engine would stop at the same event
  auto given = test::run_json(test::kProbeScenario, o);
  CHECK(test::variant_run(given->run, Variant::Before).limit->detail.find("--engine fast") == std::string::npos);
}
