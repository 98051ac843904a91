// compare on a threaded scenario: each design's outcome classes are those
// `impsim schedules --variant DESIGN` finds with the same search, every end
// a design reaches replays from its schedule, and the verdicts are the
// ones the engine gave for tests/data/threads/ (figures measured, not
// derived).
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "impsim/reader/read_scenario.h"
#include "impsim/report/threaded_outcome_text.h"
#include "impsim/run/ends_by_design.h"
#include "test_util.h"

using namespace impsim;

namespace {

const std::string kCompareData = test::kSource + "/tests/data/threads/";

// proxy_guards.json's six designs search about 1,400 schedules each; under
// AddressSanitizer each simulated thread maps its fiber stack anew (the
// pool is off there) and those searches take minutes: the sanitizer build
// runs the smaller scenarios' searches, the Release build all of them.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kFullSearches = false;
#else
constexpr bool kFullSearches = true;
#endif

// The reports' verdicts, not the gate (schedule_gate_test.cc): these
// scenarios reach the deadlocks and hangs they were written for.
nlohmann::json json_of(const std::string& args) {
  const auto r = test::impsim(args + " --format json --fail-on none");
  CAPTURE(args);
  CAPTURE(r.out);
  REQUIRE(r.status == 0);
  return nlohmann::json::parse(r.out);
}

// The report's end (by its text) and which designs reach it, as a set.
std::set<std::string> reached_by(const nlohmann::json& point, const std::string& part) {
  for (const auto& e : point["ends"])
    if (e["end"].get<std::string>().find(part) != std::string::npos)
      return e["reached_by"].get<std::set<std::string>>();
  FAIL("no end holds " << part);
  return {};
}

}  // namespace

TEST_CASE("compare across schedules: each design's classes are schedules' own, for the same search") {
  struct Case {
    std::string file, search, designs;  // the search's flags (and axes), compare's --variants
  };
  for (const Case& c : {Case{"cross_import.json", "", ""}, Case{"proxy_guards.json", "", ""},
                        Case{"guard_sets.json", "", " --variants as_is,guard_thread_set,guard_global_set"},
                        Case{"proxy_guards.json", " --preemption-bound 1 --cpython 3.9", ""},
                        Case{"guard_sets.json", " --search random --seed 7 --max-schedules 150", ""},
                        Case{"two_waiters.json", " --search pct --seed 3 --pct-depth 2 --max-schedules 100", ""}}) {
    if (!kFullSearches && c.file == "proxy_guards.json" && c.search.empty()) continue;
    CAPTURE(c.file);
    CAPTURE(c.search);
    const nlohmann::json compared = json_of("compare " + kCompareData + c.file + c.search + c.designs);
    REQUIRE(compared["points"].size() == 1);
    const auto& searches = compared["points"][0]["searches"];
    REQUIRE(searches.size() == compared["variants"].size());
    for (const auto& design : compared["variants"]) {
      const std::string d = design.get<std::string>();
      CAPTURE(d);
      const nlohmann::json alone = json_of("schedules " + kCompareData + c.file + c.search + " --variant " + d);
      const auto& s = alone["searches"][0];
      CHECK(searches[d]["schedules"] == s["schedules"]);
      CHECK(searches[d]["complete"] == s["complete"]);
      CHECK(searches[d]["shrink_runs"] == s["shrink_runs"]);
      CHECK(searches[d]["outcomes"] == s["outcomes"]);
      // Every class of the design sits under exactly one end, counts summed.
      uint64_t under_ends = 0;
      for (const auto& e : compared["points"][0]["ends"])
        if (e["designs"].contains(d)) under_ends += e["designs"][d]["schedules"].get<uint64_t>();
      CHECK(under_ends == s["schedules"].get<uint64_t>());
    }
  }
}

TEST_CASE("compare across schedules: every end's schedule replays to it, for each design that reaches it") {
  if (!kFullSearches) return;
  const Scenario sc = parse_scenario_file(kCompareData + "proxy_guards.json");
  RunOptions options;
  options.variants = {"before", "after", "disable-all"};
  const std::vector<EndsByDesign> points = find_ends_by_design(sc, options, SearchOptions{});
  REQUIRE(points.size() == 1);
  Model model = compile_model(sc, points[0].params);
  size_t replayed = 0;
  for (const ThreadedEnd& e : points[0].ends)
    for (size_t v = 0; v < e.designs.size(); ++v) {
      if (!e.designs[v]) continue;
      const DesignSearch& t = points[0].searches[v];
      const OutcomeClass& c = t.search.outcomes[e.designs[v]->representative];
      const ScheduledProgram run = [&](Scheduler& s) { return threaded_outcome(model, t.variant, options, s); };
      const std::optional<ScheduleReplay> r = replay_schedule(run, c.schedule);
      REQUIRE(r);
      CHECK(r->outcome == c.outcome);
      CHECK(r->outcome.end == e.end);
      // The representative is the design's best among the classes of the end.
      for (size_t k : e.designs[v]->outcomes)
        CHECK_FALSE(better_representative(t.search.outcomes[k].preemptions, t.search.outcomes[k].schedule, c));
      ++replayed;
    }
  CHECK(replayed == 15);  // before reaches 6 ends, after 4, disable-all 5
}

TEST_CASE("compare across schedules: the verdicts measured on tests/data/threads") {
  if (!kFullSearches) return;
  SUBCASE("guard sets: a per-thread set and a process-wide one reach the same ends, the same number of times") {
    const nlohmann::json j =
        json_of("compare " + kCompareData + "guard_sets.json --variants as_is,guard_thread_set,guard_global_set");
    const auto& p = j["points"][0];
    CHECK(j["baseline"] == "as_is");
    CHECK(p["searches"]["as_is"]["schedules"] == 1047);
    CHECK(p["searches"]["guard_thread_set"]["schedules"] == 927);
    CHECK(p["searches"]["guard_global_set"]["schedules"] == 927);
    REQUIRE(p["ends"].size() == 2);
    // The loader's toggle runs outside the lock: w misses x in some schedules of every design.
    const auto& missed = p["ends"][0];
    CHECK(missed["end"] == "main: ok; w: ModuleNotFoundError: No module named 'x'; sys.modules: a b");
    CHECK(missed["designs"]["as_is"]["schedules"] == 494);
    CHECK(missed["designs"]["guard_thread_set"]["schedules"] == 418);
    CHECK(missed["designs"]["guard_global_set"]["schedules"] == 418);
    CHECK(missed["designs"]["guard_thread_set"]["preemptions"] == 1);
    CHECK(p["ends"][1]["end"] == "main: ok; w: ok; sys.modules: a b x");
    for (const char* d : {"guard_thread_set", "guard_global_set"}) {
      CHECK(p["verdicts"][d]["identical"] == true);
      CHECK(p["ends"][1]["designs"][d]["schedules"] == 509);
    }
  }
  SUBCASE("Paddle's designs: which modules end marked, and copies of the finder left behind") {
    const nlohmann::json j = json_of("compare " + kCompareData + "proxy_guards.json");
    const auto& p = j["points"][0];
    CHECK(p["searches"]["before"]["schedules"] == 1405);
    CHECK(p["searches"]["after"]["schedules"] == 1539);
    CHECK(p["searches"]["disable-all"]["schedules"] == 1265);
    CHECK(p["ends"].size() == 10);
    // pkg.helper, imported by the blocked module's body, ends marked in 1473 of after's 1539 schedules.
    uint64_t helper_marked = 0;
    for (const auto& e : p["ends"])
      if (e["end"].get<std::string>().find("pkg.helper=enabled") != std::string::npos && e["designs"].contains("after"))
        helper_marked += e["designs"]["after"]["schedules"].get<uint64_t>();
    CHECK(helper_marked == 1473);
    // As released, two threads can leave copies of P in sys.meta_path; no design does.
    CHECK(reached_by(p, "copies of P: 1") == std::set<std::string>{"before"});
    CHECK(reached_by(p, "copies of P: 2") == std::set<std::string>{"before"});
    // The end where only the blocked module is marked: as released and under the designs without the fix.
    CHECK(reached_by(p, "marks: tvm_ffi=disabled") ==
          std::set<std::string>{"before", "idempotent-enable", "disable-all", "after+idempotent-enable"});
    for (const char* d : {"after", "idempotent-enable", "disable-all", "indexed-walk", "after+idempotent-enable"})
      CHECK(p["verdicts"][d]["identical"] == false);
    // The ends are listed by the designs that reach them, then by text.
    CHECK(p["verdicts"]["after"]["ends_only_here"] == nlohmann::json({7, 8, 9}));
    CHECK(p["verdicts"]["after"]["ends_only_in_baseline"] == nlohmann::json({2, 3, 4, 5, 6}));
    CHECK(p["verdicts"]["indexed-walk"]["ends_only_here"] == p["verdicts"]["after"]["ends_only_here"]);
    CHECK(p["verdicts"]["disable-all"]["ends_only_in_baseline"] == nlohmann::json({5, 6}));
  }
  SUBCASE("the text report says each verdict, and what a never holds within") {
    const auto r = test::impsim("compare " + kCompareData + "proxy_guards.json --variants before,after");
    CHECK(r.status == 0);
    // The search's kind and bound once, each design's extent under it.
    CHECK(r.out.find("searches them\n(exhaustive within 2 preemptions, every schedule within the bound):\n  before: "
                     "1405 schedules, 8 outcomes\n  after: 1539 schedules, 6 outcomes\n") != std::string::npos);
    // The ends under a line saying which designs reach them.
    CHECK(r.out.find("\nreached by before only; never by after:\n  2. ") != std::string::npos);
    CHECK(r.out.find("\nreached by after only; never by before:\n  7. ") != std::string::npos);
    CHECK(r.out.find("  after: differs: reaches ends 7 to 9, which before never does; never reaches\n    ends 2 to "
                     "6, which before does\n") != std::string::npos);
    const auto md = test::impsim("compare " + kCompareData + "guard_sets.json --format markdown --fail-on none");
    CHECK(md.status == 0);
    CHECK(md.out.starts_with("### impsim compare: guard_sets\n"));
    CHECK(md.out.find("- `guard_thread_set`: identical: the same 2 ends\n") != std::string::npos);
  }
}

TEST_CASE("compare across schedules: a threaded scenario's expectations are said not to be checked, not ignored") {
  const std::string file = test::write_temp("expecting.json", R"({"impsim": 1,
    "tree": {"a": {}}, "threads": {"w": [{"import": "a"}]},
    "program": [{"start": "w"}, {"import": "a"}], "expect": {"before": {"lookups": 5}}})");
  // run follows one schedule and checks them: lookups is 0, not 5.
  test::impsim_says("run " + file + " --variant before", 1, "FAILED");
  test::impsim_says("compare " + file, 0,
                    "not checked: the scenario's expectations are of the schedule `impsim run`\nfollows");
  const nlohmann::json j = json_of("compare " + file);
  CHECK(j["expectations_not_checked"].get<std::string>().starts_with("the scenario's expectations are of"));
  CHECK_FALSE(json_of("compare " + kCompareData + "cross_import.json").contains("expectations_not_checked"));
}

TEST_CASE("compare across schedules: the flags of one kind of scenario are refused on the other") {
  test::impsim_says("compare " + test::kNested + " --preemption-bound 3", 2,
                    "--preemption-bound searches a threaded scenario's schedules, and this one declares no "
                    "threads");
  test::impsim_says("compare " + test::kNested + " --seed 3", 2, "--seed searches a threaded");
  test::impsim_says("compare " + kCompareData + "cross_import.json --counters lookups", 2,
                    "--counters picks rows of the counters table");
  test::impsim_says("compare " + kCompareData + "cross_import.json --shard 1/2", 2,
                    "unknown flag '--shard' for compare (a flag of schedules)");
  test::impsim_says("compare " + kCompareData + "cross_import.json --merge", 2,
                    "unknown flag '--merge' for compare (a flag of schedules)");
  test::impsim_says("compare " + kCompareData + "cross_import.json --engine fast", 2,
                    "--engine fast does not model threads");
}
// _find_spec reads the finder at i before it takes the global import lock,
// as `for finder in meta_path:` does: a thread that waits for the lock asks
// the finder it read, whatever the list holds by then. Forced on CPython
// 3.9-3.13, this schedule gives w ModuleNotFoundError
// (tests/data/threads/logs/guard_sets.json); read after the lock, w would
// find x.
TEST_CASE("threads: a finder read before the global lock is the one asked, as CPython's loop asks it") {
  const Scenario sc = parse_scenario_file(kCompareData + "guard_sets.json");
  Model model = compile_model(sc, {});
  RunOptions options;
  const ScheduledProgram run = [&](Scheduler& s) {
    return threaded_outcome(model, *parse_variant("as_is"), options, s);
  };
  const std::optional<ScheduleReplay> r = replay_schedule(run,
                                                          "0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0."
                                                          "0.0.0.0.0.0.0.0.0.0.0.0.1.1.1.1.1.1.1.1.1.0.0.0.0.0.0.0");
  REQUIRE(r);
  CHECK(outcome_end_text(r->outcome.end) == "main: ok; w: ModuleNotFoundError: No module named 'x'; sys.modules: a b");
}

TEST_CASE("compare across schedules measures against --baseline wherever it stands among the designs") {
  // after is second among the default designs; before is measured against it.
  const nlohmann::json j = json_of("compare " + kCompareData + "proxy_resolving_shared.json --baseline after");
  CHECK(j["baseline"] == "after");
  CHECK(j["variants"][0] == "after");
  const auto& verdicts = j["points"][0]["verdicts"];
  CHECK_FALSE(verdicts.contains("after"));
  CHECK(verdicts.contains("before"));
  CHECK(verdicts["after-global-set"]["identical"] == true);
  const auto r = test::impsim("compare " + kCompareData + "proxy_resolving_shared.json --baseline after");
  CHECK(r.out.find("verdict against after:\n") != std::string::npos);
}

TEST_CASE("compare's default designs: after-global-set only for a scenario with threads") {
  const nlohmann::json threaded = json_of("compare " + kCompareData + "proxy_resolving_shared.json");
  CHECK(std::find(threaded["variants"].begin(), threaded["variants"].end(), "after-global-set") !=
        threaded["variants"].end());
  const auto unthreaded = test::impsim("compare " + test::kSource + "/scenarios/seed_incident.json --format json");
  REQUIRE(unthreaded.status == 0);
  const nlohmann::json one = nlohmann::json::parse(unthreaded.out);
  CHECK(one.dump().find("after-global-set") == std::string::npos);
}

TEST_CASE("run's verdict on a threaded scenario says it is one schedule, where compare finds designs differ") {
  // paddle_proxy_threads: on the schedule run takes every design ends
  // alike; over the schedules compare finds `after` reaching ends that
  // `before` never does. run must not read as the answer for all of them.
  const std::string file = test::kSource + "/scenarios/zoo/paddle_proxy_threads.json";
  const auto run = test::impsim("run " + file);
  CAPTURE(run.out);
  CHECK(run.out.find("outcome: identical in every variant, on this one schedule (`impsim compare` searches them all)") !=
        std::string::npos);
  const auto compare = test::impsim("compare " + file + " --fail-on none --max-schedules 2000");
  CAPTURE(compare.out);
  CHECK(compare.out.find("after: differs:") != std::string::npos);
  // A scenario without threads keeps its verdict as it was.
  const auto plain = test::impsim("run " + test::kSource + "/scenarios/nested_guards.json");
  CHECK(plain.out.find("outcome: identical in every variant at every sweep value\n") != std::string::npos);
  // Two designs that differ on the one schedule say so, with the same words.
  const auto differs = test::impsim("run " + test::kSource + "/scenarios/zoo/ddtrace_thread_join.json");
  CHECK(differs.out.find("outcome: as_is and call_next differ, on this one schedule") != std::string::npos);
}
