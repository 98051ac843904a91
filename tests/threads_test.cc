// The engine's threads: CPython's import locks taken where _bootstrap takes
// them, searched schedule by schedule. The outcomes each scenario must
// reach are those tools/check/threads_real_selftest forces on the real
// interpreters (tests/data/threads/); here they are checked on the engine.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "impsim/engine/engine.h"
#include "impsim/engine/schedule_search.h"
#include "impsim/model/model.h"
#include "impsim/reader/read_scenario.h"
#include "impsim/report/threaded_outcome_text.h"
#include "impsim/run/run.h"
#include "impsim/run/schedules.h"
#include "test_util.h"

#include <nlohmann/json.hpp>

using namespace impsim;

namespace {

Scenario scenario(const std::string& text) { return parse_scenario(text, "threads.json"); }

ScheduleSearch search(const std::string& text, int bound = 2, const std::string& cpython = "3.11",
                      const std::string& variant = "before") {
  Scenario sc = scenario(text);
  RunOptions options;
  options.variants = {variant};
  options.cpython = parse_cpython(cpython);
  SearchOptions o;
  o.preemption_bound = bound;
  std::vector<DesignSearch> found = search_scenario_schedules(sc, options, o);
  REQUIRE(found.size() == 1);
  return found[0].search;
}

// A class's outcome as the reports print it.
std::string text(const OutcomeClass& c) { return threaded_outcome_text(c.outcome); }

std::string text_of_only(const ScheduleSearch& s) { return s.outcomes.empty() ? "" : text(s.outcomes[0]); }

bool has(const ScheduleSearch& s, const std::string& part) {
  for (const OutcomeClass& c : s.outcomes)
    if (text(c).find(part) != std::string::npos) return true;
  return false;
}

const char* kCrossImport = R"({"impsim": 1,
  "tree": {"a": {"body": [{"import": "b"}]}, "b": {"body": [{"import": "a"}]}},
  "threads": {"w": [{"import": "b"}]},
  "program": [{"start": "w"}, {"import": "a"}, {"join": "w"}]})";

}  // namespace

TEST_CASE("threads: the default schedule runs each thread until it blocks") {
  Scenario sc = scenario(kCrossImport);
  Model model = compile_model(sc, {});
  Engine e(model, *parse_variant("before"));
  e.run();
  CHECK_FALSE(e.error());
  CHECK_FALSE(e.limit());
  CHECK(e.sys_modules().contains(model.names.find("a")));
  CHECK(e.sys_modules().contains(model.names.find("b")));
}

TEST_CASE("threads: crossing import statements complete, or one gets _DeadlockError") {
  for (const char* v : {"3.9", "3.10", "3.11", "3.12", "3.13"}) {
    CAPTURE(v);
    const ScheduleSearch s = search(kCrossImport, 2, v);
    REQUIRE_FALSE(s.error);
    CHECK(s.complete);
    CHECK(has(s, "main: ok; w: ok; sys.modules: a b"));
    CHECK(has(s, "_DeadlockError: deadlock detected by _ModuleLock("));
    CHECK_FALSE(has(s, "hang"));
    // With no preemption the main thread imports both before w runs.
    const ScheduleSearch serial = search(kCrossImport, 0, v);
    REQUIRE(serial.outcomes.size() == 1);
    CHECK(text(serial.outcomes[0]).starts_with("main: ok; w: ok; sys.modules: a b"));
  }
}

TEST_CASE("threads: every outcome's schedule replays to it") {
  Scenario sc = scenario(kCrossImport);
  Model model = compile_model(sc, {});
  RunOptions options;
  ScheduledProgram program = [&](Scheduler& s) {
    return threaded_outcome(model, *parse_variant("before"), options, s);
  };
  SearchOptions o;
  o.preemption_bound = 2;
  const ScheduleSearch s = search_schedules(program, o);
  REQUIRE(s.outcomes.size() >= 2);
  for (const OutcomeClass& c : s.outcomes) {
    CAPTURE(c.schedule);
    const std::optional<ScheduleReplay> r = replay_schedule(program, c.schedule);
    REQUIRE(r);
    CHECK(r->outcome == c.outcome);
    CHECK(r->preemptions == c.preemptions);
  }
}

TEST_CASE("threads: a module body that joins a thread waiting for that module's lock hangs") {
  const ScheduleSearch s = search(R"({"impsim": 1,
    "tree": {"a": {"body": [{"join": "w"}]}},
    "threads": {"w": [{"import": "a"}]},
    "program": [{"start": "w"}, {"import": "a"}]})",
                                  1);
  CHECK(has(s,
            "main: waiting; w: waiting; hang: thread main waits for thread w to finish (join); thread w waits "
            "for the module lock of a, held by thread main"));
  // w importing a first runs the join in w itself.
  CHECK(has(s, "w: RuntimeError: cannot join current thread"));
}

TEST_CASE("threads: a join inside find_spec waits on the global import lock forever") {
  const ScheduleSearch s = search(R"({"impsim": 1,
    "tree": {"body": {"body": [{"start": "w"}, {"join": "w"}]}, "other": {}},
    "hooks": {"importer": {"claims": {"names": ["outer"]}, "find_spec": [{"import": "body"}]}},
    "finders": {"h": {"hook": "importer"}},
    "meta_path": ["h", "BuiltinImporter", "FrozenImporter", "PathFinder"],
    "threads": {"w": [{"import": "other"}]},
    "program": [{"import": "outer", "optional": true}]})",
                                  2, "3.11", "as_is");
  REQUIRE(s.outcomes.size() == 1);
  CHECK(has(s,
            "thread main waits for thread w to finish (join); thread w waits for the global import lock, held by "
            "thread main"));
}

TEST_CASE("threads: start and join are checked as Python checks them") {
  SUBCASE("a thread starts once") {
    const ScheduleSearch s = search(R"({"impsim": 1, "tree": {},
      "threads": {"w": []}, "program": [{"start": "w"}, {"start": "w"}]})",
                                    0);
    CHECK(has(s, "main: RuntimeError: threads can only be started once"));
  }
  SUBCASE("a join before the start") {
    const ScheduleSearch s = search(R"({"impsim": 1, "tree": {},
      "threads": {"w": []}, "program": [{"join": "w"}]})",
                                    0);
    CHECK(has(s, "main: RuntimeError: cannot join thread before it is started; w: never started"));
  }
}

TEST_CASE("threads: a scenario without threads has no schedules to search") {
  Scenario sc = scenario(R"({"impsim": 1, "tree": {"a": {}}, "program": [{"import": "a"}]})");
  CHECK_THROWS_WITH_AS(search_scenario_schedules(sc, RunOptions{}, SearchOptions{}),
                       doctest::Contains("declares no threads"), UsageError);
}

TEST_CASE("threads: the reader refuses unknown threads, main, and names that are not identifiers") {
  CHECK_THROWS_WITH_AS(scenario(R"({"impsim": 1, "tree": {}, "threads": {"w": []}, "program": [{"start": "v"}]})"),
                       doctest::Contains("at /program/0/start: unknown thread \"v\""), InputError);
  CHECK_THROWS_WITH_AS(scenario(R"({"impsim": 1, "tree": {}, "threads": {"w": []}, "program": [{"join": "main"}]})"),
                       doctest::Contains("the main thread is running already"), InputError);
  CHECK_THROWS_WITH_AS(scenario(R"({"impsim": 1, "tree": {}, "threads": {"1w": []}, "program": []})"),
                       doctest::Contains("letters, digits and \"_\""), InputError);
  CHECK_THROWS_WITH_AS(scenario(R"({"impsim": 1, "tree": {}, "threads": {"w": [{"start": 3}]}, "program": []})"),
                       doctest::Contains("at /threads/w/0/start: expected a thread's name"), InputError);
}

namespace {
const std::string kThreads = impsim::test::kSource + "/tests/data/threads/";

// The points of the run-until-blocked schedule, one "thread point what" a line.
std::vector<std::string> default_points(const std::string& text, const char* variant = "before") {
  Scenario sc = scenario(text);
  Model model = compile_model(sc, {});
  RunOptions options;
  options.cpython = parse_cpython("3.11");
  std::vector<std::string> out;
  for (const PointText& p : schedule_points(model, *parse_variant(variant), options, ""))
    out.push_back(p.thread + " " + p.point + " " + p.module + p.target + p.site);
  return out;
}

bool follows(const std::vector<std::string>& points, const std::string& first, const std::string& then) {
  for (size_t i = 0; i + 1 < points.size(); ++i)
    if (points[i] == first) return points[i + 1] == then;
  return false;
}

}  // namespace

// importlib.reload's _exec holds the module's lock around the body it runs
// again, as _find_and_load does (the points measured on the real threads by
// crosscheck --threads, tests/data/threads/reload_*.json).
TEST_CASE("threads: a reload takes the module's lock around its exec, which a deadlock can involve") {
  const std::vector<std::string> reload = default_points(R"({"impsim": 1, "tree": {"a": {}},
    "threads": {"w": []}, "program": [{"import": "a"}, {"reload": "a"}]})",
                                                         "as_is");
  // After the second step's point: the reload's search, then a's lock
  // taken, its exec inside it.
  std::vector<std::string> after_import;
  int steps = 0;
  for (const std::string& p : reload) {
    if (steps == 2) after_import.push_back(p);
    if (p == "main step ") ++steps;
  }
  CHECK(after_import.front() == "main global_acquire find_spec");
  const auto at = [&](const std::string& p) {
    return std::find(after_import.begin(), after_import.end(), p) - after_import.begin();
  };
  REQUIRE(at("main module_acquire a") < static_cast<long>(after_import.size()));
  CHECK(at("main module_acquire a") < at("main exec_begin a"));
  CHECK(at("main exec_begin a") < at("main exec_end a"));
  CHECK(at("main exec_end a") < at("main module_release a"));
  // Searching every schedule finds the reload's own _DeadlockError, not
  // swallowed, and the import's that is.
  const auto r = impsim::test::impsim("schedules " + kThreads + "reload_deadlock.json");
  CHECK(r.out.find("w: _DeadlockError: deadlock detected by _ModuleLock('a')") != std::string::npos);
  CHECK(r.out.find("main: ok; w: ok") != std::string::npos);
  const auto again = impsim::test::impsim("schedules " + kThreads + "reload_reloading.json");
  CHECK(again.out.find("2 outcomes") != std::string::npos);
}

// Where the real threads pass them (tools/check/crosscheck --threads): the
// return of exec_module by an exception is exec_end, and a join that
// Thread.join refuses has passed its point first.
TEST_CASE("threads: exec_end is passed when the body raises, the join point before join's check") {
  const std::vector<std::string> raised = default_points(R"({"impsim": 1,
    "tree": {"a": {"body": [{"import": "missing"}]}},
    "threads": {"w": []}, "program": [{"import": "a"}]})");
  CHECK(follows(raised, "main exec_begin a", "main step "));
  CHECK(std::find(raised.begin(), raised.end(), "main exec_end a") != raised.end());
  CHECK(follows(raised, "main exec_end a", "main module_release a"));
  const std::vector<std::string> self_join = default_points(R"({"impsim": 1,
    "tree": {"a": {"body": [{"join": "w"}]}},
    "threads": {"w": [{"import": "a"}]}, "program": [{"start": "w"}, {"join": "w"}]})");
  CHECK(std::find(self_join.begin(), self_join.end(), "w join w") != self_join.end());
  // Thread.join of a thread never started refuses after its call too.
  const std::vector<std::string> early_join = default_points(R"({"impsim": 1,
    "tree": {}, "threads": {"w": []}, "program": [{"join": "w"}]})");
  CHECK(early_join == std::vector<std::string>{"main step ", "main join w"});
}

TEST_CASE("threads on the command line: schedules, trace --schedule, and a hang's exit status") {
  using impsim::test::impsim;
  SUBCASE("schedules lists each outcome with a schedule that trace --schedule follows") {
    auto r = impsim("schedules " + kThreads + "cross_import.json --variant before --format json");
    REQUIRE(r.status == 1);  // the gate: a _DeadlockError is reachable, and the scenario does not accept it
    auto j = nlohmann::json::parse(r.out);
    const auto& search = j["searches"][0];
    CHECK(j["exit_status"] == 1);
    CHECK(j["gate"]["passed"] == false);
    CHECK(search["findings"]["deadlock"]["classes"] == 2);
    CHECK(search["findings"]["deadlock"]["fails"] == true);
    CHECK(search["complete"] == true);
    CHECK(search["preemption_bound"] == 2);
    bool deadlock = false;
    for (const auto& o : search["outcomes"]) {
      if (o["outcome"].get<std::string>().find("main: _DeadlockError") == std::string::npos) continue;
      deadlock = true;
      auto t = impsim("trace " + kThreads + "cross_import.json --variant before --schedule " +
                      o["schedule"].get<std::string>());
      CHECK(t.status == 1);  // main raised
      CHECK(t.out.find("\n     w | step /threads/w/0: import b\n") != std::string::npos);
      CHECK(t.out.find("raised _DeadlockError: deadlock detected by _ModuleLock('b')") != std::string::npos);
    }
    CHECK(deadlock);
  }
  SUBCASE("a schedule that cannot be followed, or a scenario without threads, is refused") {
    auto bad = impsim("trace " + kThreads + "cross_import.json --schedule 5");
    CHECK(bad.status == 2);
    CHECK(bad.out.find("--schedule 5: choice 1 is thread 5, which cannot run there (the before run): main (0) or w "
                       "(1) can run") != std::string::npos);
    auto none = impsim("trace " + impsim::test::kNested + " --schedule 0");
    CHECK(none.status == 2);
    CHECK(none.out.find("declares no threads") != std::string::npos);
    CHECK(impsim("schedules " + impsim::test::kNested).status == 2);
  }
  SUBCASE("a schedule is checked in full before anything is printed: too many choices, too few, a wrong one") {
    using impsim::test::shell_split;
    const std::string trace = impsim::test::kBin + " trace " + kThreads + "cross_import.json --variant before ";
    const std::string full = "0.0.0.0.0.0.0.0.0.0.0.0.0.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.0";
    CHECK(shell_split(trace + "--schedule " + full).status == 1);  // main raises _DeadlockError
    // 5,000 choices on a run of 38 used to exit 0, the rest dropped.
    std::string many = "0";
    for (int i = 1; i < 5000; ++i) many += ".0";
    const auto too_many = shell_split(trace + "--schedule " + many);
    CHECK(too_many.status == 2);
    CHECK(too_many.out.empty());
    CHECK(too_many.err.find("the schedule has 5000 choices, but the run makes only 38: choice 39 has nothing to "
                            "choose") != std::string::npos);
    CHECK(too_many.err.find("(9999 characters)") != std::string::npos);  // not printed whole
    const auto too_few = shell_split(trace + "--schedule 0.0.0.0.0.0.0.0.0.0.0.0.0.1");
    CHECK(too_few.status == 2);
    CHECK(too_few.out.empty());
    CHECK(too_few.err.find("the schedule has 14 choices, and the run makes more: at choice 15, main (0) or w (1) "
                           "can run") != std::string::npos);
    // A choice that cannot be followed used to come after a whole trace
    // of another schedule.
    const auto wrong = shell_split(trace + "--schedule 0.0.0.0.0.0.0.0.0.0.0.0.0.1.1.1.1.1.1.1.1.2");
    CHECK(wrong.status == 2);
    CHECK(wrong.out.empty());
    CHECK(wrong.err.find("choice 22 is thread 2, which cannot run there: main (0) or w (1) can run") !=
          std::string::npos);
    for (const char* format : {"chrome", "dot", "importtime"})
      CHECK(shell_split(trace + "--format " + format + " --schedule 0.0.5").out.empty());
  }
  SUBCASE("a run that hangs fails, and says who waits for what") {
    auto r = impsim("run " + kThreads + "join_in_body.json --variant before");
    CHECK(r.status == 1);
    CHECK(r.out.find("before: hangs: thread w waits for the module lock of a, held by thread main") !=
          std::string::npos);
  }
}

// A release in a finally is a scheduling point: were it passed inside the
// catch block, the other thread's exception could be the one rethrown (the
// C++ runtime keeps the exceptions being handled per OS thread, not per
// fiber). Each thread must end with its own error in every schedule.
TEST_CASE("threads: each thread's exception stays its own across switches in cleanups") {
  const ScheduleSearch s = search(R"({"impsim": 1,
    "tree": {"a": {"body": [{"import": "missing_a"}]}, "b": {"body": [{"import": "missing_b"}]}},
    "threads": {"w": [{"import": "b"}]},
    "program": [{"start": "w"}, {"import": "a"}, {"join": "w"}]})",
                                  3);
  REQUIRE(s.outcomes.size() >= 1);
  for (const OutcomeClass& c : s.outcomes) {
    CAPTURE(text(c));
    CHECK(
        text(c).starts_with("main: ModuleNotFoundError: No module named 'missing_a'; w: ModuleNotFoundError: No "
                              "module named 'missing_b'"));
  }
  CHECK(s.schedules > 100);
}

TEST_CASE("threads: shards of a search merge into the unsplit search, a missing or repeated shard is refused") {
  using impsim::test::impsim;
  const std::string file = kThreads + "two_waiters.json --variant before";
  const std::string dir = impsim::test::scratch_subdir("shards");
  for (int i = 1; i <= 3; ++i)
    // 1: each part reaches the uncaught exceptions the scenario does not accept.
    REQUIRE(impsim(fmt::format("schedules {} --shard {}/3 --format json -o {}/s{}.json", file, i, dir, i)).status == 1);
  const auto whole = impsim("schedules " + file + " --format json");
  const auto merged = impsim(fmt::format("schedules --merge {0}/s1.json {0}/s2.json {0}/s3.json --format json", dir));
  // The merge gates the whole search as the unsplit one does.
  CHECK(whole.status == 1);
  REQUIRE(merged.status == 1);
  CHECK(merged.out == whole.out);
  const auto missing = impsim(fmt::format("schedules --merge {0}/s1.json {0}/s3.json", dir));
  CHECK(missing.status == 2);
  CHECK(missing.out.find("shard 2/3 of the before search is missing") != std::string::npos);
  const auto twice = impsim(fmt::format("schedules --merge {0}/s1.json {0}/s1.json {0}/s2.json {0}/s3.json", dir));
  CHECK(twice.status == 2);
  CHECK(twice.out.find("is given twice") != std::string::npos);
  // A shard document is input from another machine: a schedule that is not one is refused, not printed.
  std::string doc = impsim::test::read_file(dir + "/s1.json");
  const size_t at = doc.find("\"schedule\": \"");
  REQUIRE(at != std::string::npos);
  doc.insert(at + 13, "\\u001b]0;x\\u0007");
  const std::string forged = impsim::test::write_temp("forged_shard.json", doc);
  const auto refused = impsim(fmt::format("schedules --merge {} {}/s2.json {}/s3.json", forged, dir, dir));
  CHECK(refused.status == 2);
  CHECK(refused.out.find("at /searches/0/outcomes/0/schedule: \"schedule\": not a schedule") != std::string::npos);
  CHECK(impsim("schedules " + file + " --shard 1/3").status == 2);  // a shard is JSON, for --merge
  CHECK(impsim("schedules " + file + " --shard 4/3 --format json").status == 2);
}

TEST_CASE("threads: two runs that both hang, on different waits, are told apart as such") {
  Outcome a, b;
  a.hang = {{"main", HangWait::Kind::Join, "", "w"}};
  b.hang = {{"w", HangWait::Kind::GlobalLock, "", "main"}};
  const std::vector<std::string> d = describe_differences(a, b, "before", "after", 10);
  REQUIRE(d.size() == 1);
  CHECK(d[0] ==
        "the program hangs (thread main waits for thread w to finish (join)) in before and hangs (thread w "
        "waits for the global import lock, held by thread main) in after");
  b.hang.clear();
  CHECK(describe_differences(a, b, "before", "after", 10)[0].ends_with("in before and does not hang in after"));
}

namespace {

// At each toggle: which thread runs it, and the names the fix's _resolving
// holds as that thread reads it.
struct ResolvingAtToggles : TraceSink {
  std::vector<std::pair<PyThreadId, std::vector<NameId>>> seen;
  void toggle_begin(const Engine& e, bool) override { seen.emplace_back(e.running_thread(), e.resolving_names()); }
};

}  // namespace

TEST_CASE("threads: after keeps the fix's _resolving per thread, after-global-set one set for every thread") {
  Scenario sc = parse_scenario_file(kThreads + "proxy_resolving_shared.json");
  Model model = compile_model(sc, {});
  const NameId app_b = model.names.find("app.b");
  // main runs until P has answered 'app'; w then runs until its lookup of
  // app.b waits for app's module lock; main runs app's body and the rest.
  std::string schedule;
  for (int i = 0; i < 13 + 9 + 30; ++i)
    schedule += (schedule.empty() ? "" : ".") + std::string(i >= 13 && i < 22 ? "1" : "0");
  for (const std::string v : {"after", "after-global-set"}) {
    CAPTURE(v);
    Engine e(model, *parse_variant(v));
    ResolvingAtToggles at;
    e.set_trace(&at);
    e.set_schedule(schedule);
    e.run();
    REQUIRE_FALSE(e.bad_schedule());
    REQUIRE_FALSE(e.error());
    // main's toggles in app's body, while w's lookup of app.b waits, see
    // w's name only in the shared set.
    const bool main_sees_w = std::any_of(at.seen.begin(), at.seen.end(), [&](const auto& s) {
      return s.first == 0 && std::find(s.second.begin(), s.second.end(), app_b) != s.second.end();
    });
    CHECK(main_sees_w == (v == "after-global-set"));
  }
}

TEST_CASE("threads: the shared set and the per-thread one reach the same ends from the same schedules") {
  // find_spec runs under the global import lock, and the set is added to
  // and emptied inside it: no ask reads another thread's names.
  for (const char* file : {"proxy_resolving_shared.json", "proxy_guards.json"}) {
    CAPTURE(file);
    Scenario sc = parse_scenario_file(kThreads + file);
    Model model = compile_model(sc, {});
    RunOptions options;
    auto search_of = [&](const char* v) {
      ScheduledProgram program = [&](Scheduler& s) { return threaded_outcome(model, *parse_variant(v), options, s); };
      SearchOptions o;
      o.preemption_bound = 2;
      return search_schedules(program, o);
    };
    const ScheduleSearch per_thread = search_of("after"), shared = search_of("after-global-set");
    REQUIRE(per_thread.complete);
    REQUIRE(shared.complete);
    CHECK(per_thread.schedules == shared.schedules);
    REQUIRE(per_thread.outcomes.size() == shared.outcomes.size());
    CHECK(per_thread.outcomes.size() >= 2);
    for (size_t i = 0; i < shared.outcomes.size(); ++i) {
      CHECK(per_thread.outcomes[i].outcome == shared.outcomes[i].outcome);
      CHECK(per_thread.outcomes[i].schedules == shared.outcomes[i].schedules);
      CHECK(per_thread.outcomes[i].schedule == shared.outcomes[i].schedule);
    }
  }
}

TEST_CASE("threads: a hook's find_spec may start and join a thread, and the reader checks the thread it names") {
  // Under the global import lock, which the thread's import needs: every
  // schedule hangs (forced on real threads by tools/check/crosscheck --threads).
  Scenario sc = parse_scenario_file(kThreads + "hook_start_join.json");
  RunOptions options;
  options.variants = {"as_is"};
  SearchOptions o;
  o.preemption_bound = 2;
  const std::vector<DesignSearch> found = search_scenario_schedules(sc, options, o);
  REQUIRE(found.size() == 1);
  REQUIRE(found[0].search.complete);
  REQUIRE(found[0].search.outcomes.size() == 1);
  CHECK(text(found[0].search.outcomes[0]).starts_with(
      "main: waiting; t: waiting; hang: thread main waits for thread t to finish (join); thread t waits for the global "
      "import lock, held by thread main"));
  // The same thread started from the program instead completes.
  const ScheduleSearch plain = search(R"({"impsim": 1, "tree": {"x": {}}, "threads": {"t": [{"import": "x"}]},
    "program": [{"start": "t"}, {"join": "t"}]})");
  REQUIRE(plain.outcomes.size() == 1);
  CHECK(text(plain.outcomes[0]).starts_with("main: ok; t: ok"));

  const std::string hook = R"({"impsim": 1, "tree": {"y": {}}, "threads": {"t": []},
    "hooks": {"h": {"claims": {"names": ["y"]}, "find_spec": [ACTION]}}, "finders": {"f": {"hook": "h"}},
    "program": [{"install": "f"}, {"import": "y"}]})";
  auto with = [&](const std::string& action) {
    std::string s = hook;
    return s.replace(s.find("ACTION"), 6, action);
  };
  CHECK_THROWS_WITH_AS(scenario(with(R"({"start": "u"})")),
                       doctest::Contains("at /hooks/h/find_spec/0/start: unknown thread \"u\""), InputError);
  CHECK_THROWS_WITH_AS(scenario(with(R"({"join": "main"})")), doctest::Contains("the main thread is running already"),
                       InputError);
  CHECK_THROWS_WITH_AS(scenario(with(R"({"join": 1})")),
                       doctest::Contains("at /hooks/h/find_spec/0/join: expected the name of a thread"), InputError);
  CHECK_NOTHROW(scenario(with(R"({"start": "t"}, {"join": "t"})")));
}

TEST_CASE("threads: real torch modules leave sys.modules under another thread's import of them") {
  // w's import of torch is served from the finder's cache; before its
  // _load_unlocked reads sys.modules['torch'] back, main's enable (in the
  // blocked tvm_ffi's loader) moves the torch modules to the cache again.
  // Forced on CPython 3.9-3.13 with the real proxy.py (crosscheck --threads).
  Scenario sc = parse_scenario_file(kThreads + "proxy_torch_cache.json");
  Model model = compile_model(sc, {});
  RunOptions options;
  for (const char* v : {"before", "after"}) {
    CAPTURE(v);
    ScheduledProgram program = [&](Scheduler& s) { return threaded_outcome(model, *parse_variant(v), options, s); };
    const ScheduleSearch search = search_schedules(program, {});
    REQUIRE(search.complete);
    uint64_t key_errors = 0, ok = 0;
    for (const OutcomeClass& c : search.outcomes) {
      if (text(c).find("w: KeyError: 'torch'") != std::string::npos ||
          text(c).find("w: KeyError: 'torch.nn'") != std::string::npos)
        key_errors += c.schedules;
      if (text(c).rfind("main: ok; w: ok;", 0) == 0) ok += c.schedules;
      CHECK(text(c).rfind("main: ok;", 0) == 0);
    }
    CHECK(key_errors > 0);
    CHECK(ok > 0);
    CHECK(key_errors + ok == search.schedules);
  }
}

TEST_CASE("threads: a _DeadlockError keeps its lock alive until the thread that raised it ends") {
  // deadlock_keeps_lock.json: main raises _DeadlockError on b's lock; w,
  // let go once main has released a, finishes before main ends. Forced on
  // CPython 3.9-3.13, the real threads follow this log (b's callback in
  // main, at its end) and leave one with the callback in w
  // (tests/data/threads/logs/deadlock_keeps_lock.json, which holds both:
  // the engine's must be the first).
  Scenario sc = parse_scenario_file(kThreads + "deadlock_keeps_lock.json");
  Model model = compile_model(sc, {});
  RunOptions options;
  auto points_of = [&](const std::string& schedule) {
    std::vector<std::string> out;
    for (const PointText& p : schedule_points(model, *parse_variant("before"), options, schedule))
      out.push_back(p.thread + " " + p.point + " " + p.site + p.module);
    return out;
  };
  // main passes its module_release of a, then w runs to its end.
  std::string schedule;
  for (int i = 0; i < 24; ++i) schedule += "0.";
  for (int i = 0; i < 16; ++i) schedule += "1.";
  schedule += "0.1";
  const std::vector<std::string> points = points_of(schedule);
  REQUIRE(points.size() >= 12);
  const std::vector<std::string> tail(points.end() - 12, points.end());
  CHECK(tail == std::vector<std::string>{
                    "main module_release a", "w module_release a", "w global_acquire lock_gc",
                    "w global_release lock_gc",            // a's: w drops the last reference
                    "w exec_end b", "w module_release b",  // b's lock lives on: main's traceback
                    "main exec_end c", "main module_release c", "main global_acquire lock_gc",
                    "main global_release lock_gc",                                 // c's
                    "main global_acquire lock_gc", "main global_release lock_gc",  // b's, as main ends
                });
  const auto logs = nlohmann::json::parse(impsim::test::read_file(kThreads + "logs/deadlock_keeps_lock.json"));
  std::vector<std::string> forced;
  for (const auto& p : logs["schedules"][0]["log"])
    forced.push_back(p["thread"].get<std::string>() + " " + p["point"].get<std::string>() + " " +
                     p.value("site", "") + p.value("module", ""));
  CHECK(points == forced);
}

namespace {

// Each outcome's schedule replayed twice in this one process: a run that
// read what it does not own would not be bound to end alike twice.
void each_outcome_replays_twice(const std::string& text, const std::string& cpython, const ScheduleSearch& s) {
  Scenario sc = scenario(text);
  Model model = compile_model(sc, {});
  RunOptions options;
  options.cpython = parse_cpython(cpython);
  apply_axes(model, options);
  ScheduledProgram program = [&](Scheduler& sched) {
    return threaded_outcome(model, *parse_variant("before"), options, sched);
  };
  for (const OutcomeClass& c : s.outcomes) {
    CAPTURE(c.schedule);
    const std::optional<ScheduleReplay> first = replay_schedule(program, c.schedule);
    const std::optional<ScheduleReplay> second = replay_schedule(program, c.schedule);
    REQUIRE(first);
    REQUIRE(second);
    CHECK(first->outcome == c.outcome);
    CHECK(second->outcome == c.outcome);
  }
}

// w's importlib.util.find_spec('a.b') finds `a` initialising in main and
// waits for it; a's body fails, and main's import takes `a` out of
// sys.modules again. A package `a` has a submodule b to find.
std::string parent_fails(bool package) {
  return fmt::format(R"({{"impsim": 1,
    "tree": {{"a": {{"package": {}, "body": [{{"import": "missing"}}]}}{}}},
    "threads": {{"w": [{{"find_spec": "a.b"}}]}},
    "program": [{{"start": "w"}}, {{"import": "a", "optional": true}}, {{"join": "w"}}]}})",
                     package ? "true" : "false", package ? R"(, "a.b": {})" : "");
}

}  // namespace

TEST_CASE("threads: util.find_spec's parent import returns the module it waited for, though its body failed") {
  // `__import__` returns the module object it found before the wait (as
  // import.c does), not what sys.modules holds after it: the failed `a`,
  // whose __path__ the search then walks, or whose lack of one it reports.
  const ScheduleSearch pkg = search(parent_fails(true), 2);
  REQUIRE_FALSE(pkg.error);
  CHECK(has(pkg, "main: ok; w: ok; sys.modules: (none)"));
  for (const OutcomeClass& c : pkg.outcomes) {
    const std::string line = threaded_outcome_text(c.outcome);
    CAPTURE(line);
    CHECK((line.starts_with("main: ok; w: ok; sys.modules: (none)") ||
           line.starts_with("main: ok; w: ModuleNotFoundError: No module named 'missing'; sys.modules: (none)")));
  }
  each_outcome_replays_twice(parent_fails(true), "3.11", pkg);

  const ScheduleSearch plain = search(parent_fails(false), 2);
  REQUIRE_FALSE(plain.error);
  CHECK(has(plain, "w: ModuleNotFoundError: __path__ attribute not found on 'a' while trying to find 'a.b'"));
  for (const OutcomeClass& c : plain.outcomes) {
    const std::string line = threaded_outcome_text(c.outcome);
    CAPTURE(line);
    CHECK(line.starts_with("main: ok; w: ModuleNotFoundError: "));
  }
  each_outcome_replays_twice(parent_fails(false), "3.11", plain);
}

TEST_CASE("threads: a thread started while another walks its sys.meta_path snapshot (3.14) leaves the walk alone") {
  // w1's _find_spec holds the snapshot it walks across the global lock's
  // acquire, where main may start w2 and make room for w2's state.
  const char* text = R"({"impsim": 1,
    "tree": {"x": {}, "y": {}},
    "threads": {"w1": [{"import": "x"}], "w2": [{"import": "y"}]},
    "program": [{"start": "w1"}, {"start": "w2"}, {"join": "w1"}, {"join": "w2"}]})";
  const ScheduleSearch s = search(text, 2, "3.14");
  REQUIRE_FALSE(s.error);
  REQUIRE(s.outcomes.size() >= 1);
  for (const OutcomeClass& c : s.outcomes) {
    const std::string line = threaded_outcome_text(c.outcome);
    CAPTURE(line);
    CHECK(line.starts_with("main: ok; w1: ok; w2: ok; sys.modules: x y"));
  }
  each_outcome_replays_twice(text, "3.14", s);
}

TEST_CASE("threads: from gh-143650 an import that waited for a failed body imports the name again") {
  // tests/data/threads/stale_after_failure.json; the side before the fix is
  // forced on real threads of 3.9-3.13.0 by crosscheck --threads.
  const char* text = R"({"impsim": 1,
    "tree": {"a": {"body": [{"import": "x"}, {"import": "missing"}]}, "x": {}},
    "threads": {"w": [{"import": "a"}]},
    "program": [{"start": "w"}, {"import": "a", "optional": true}, {"join": "w"}],
    "allow_error": true})";
  for (const char* before : {"3.12", "3.13", "3.13.12", "3.14", "3.14.3"}) {
    CAPTURE(before);
    const ScheduleSearch s = search(text, 2, before);
    CHECK(has(s, "w: ok"));  // the module object found before the wait, though gone
    CHECK(has(s, "w: ModuleNotFoundError"));
  }
  for (const char* after : {"3.13.13", "3.13.16", "3.14.4", "3.14.9"}) {
    CAPTURE(after);
    const ScheduleSearch s = search(text, 2, after);
    CHECK_FALSE(has(s, "w: ok"));
    CHECK(has(s, "w: ModuleNotFoundError"));
  }
}

TEST_CASE("threads: from gh-130094 a submodule's import waits for the parent's body another thread runs") {
  // tests/data/threads/parent_reimport_waits.json.
  const char* text = R"({"impsim": 1,
    "tree": {"pkg": {"package": true, "body": [{"import": "x"}, {"unload": ["pkg.sub"]}]}, "pkg.sub": {}, "x": {}},
    "threads": {"w": [{"import": "pkg.sub"}]},
    "program": [{"start": "w"}, {"import": "pkg"}, {"join": "w"}]})";
  for (const char* before : {"3.12", "3.13", "3.13.15"}) {
    CAPTURE(before);
    const ScheduleSearch s = search(text, 2, before, "as_is");
    CHECK(has(s, "w: KeyError: 'pkg.sub'"));
    CHECK(s.outcomes.size() == 3);
  }
  for (const char* after : {"3.13.16", "3.14", "3.14.4"}) {
    CAPTURE(after);
    const ScheduleSearch s = search(text, 2, after, "as_is");
    REQUIRE(s.outcomes.size() == 1);
    CHECK(text_of_only(s) == "main: ok; w: ok; sys.modules: pkg pkg.sub x; asks 0, lookups 0, toggles 0, searches 3");
  }
}

TEST_CASE("threads: 3.15's hierarchical module locks are not modelled, and a threaded run there says so") {
  const Scenario sc = scenario(kCrossImport);
  RunOptions options;
  options.cpython = parse_cpython("3.15.0rc1");
  CHECK_THROWS_WITH_AS(plan_runs(sc, options), doctest::Contains("_HierarchicalLockManager"), UsageError);
}
