// The zoo (scenarios/zoo/, docs/zoo.md): real import hooks as scenarios.
// Each runs and meets the figures pinned from the real packages (or from
// the re-statement, where Debian has no package), and the "real" key that
// tools/check/crosscheck --zoo reads changes nothing impsim prints.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
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
    if (scenario.contains("threads")) continue;  // outcome classes, not counts: below
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

namespace {

// `impsim schedules FILE --cpython X.Y --format json` (exhaustive, bound 2):
// each variant's outcomes, as {outcome line: schedules reaching it}.
// `variants`: --variants (default: the scenario's).
std::map<std::string, std::map<std::string, int64_t>> outcome_classes(const std::string& file,
                                                                      const std::string& cpython,
                                                                      const std::string& variants = "") {
  test::Command r =
      test::impsim("schedules " + std::string(IMPSIM_SOURCE_DIR) + "/scenarios/zoo/" + file + " --cpython " + cpython +
                   " --format json" + (variants.empty() ? "" : " --variants " + variants));
  // 1: the gate (a finding the scenario does not accept on this version);
  // these tests read the classes, the gate's tests its verdicts.
  REQUIRE(r.status <= 1);
  std::map<std::string, std::map<std::string, int64_t>> out;
  const nlohmann::json report = nlohmann::json::parse(r.out);
  for (const auto& search : report["searches"]) {
    CHECK(search["complete"] == true);
    for (const auto& o : search["outcomes"])
      out[search["variant"].get<std::string>()][o["outcome"].get<std::string>()] = o["schedules"].get<int64_t>();
  }
  return out;
}

// The outcome line up to the marks, copies of P and counters: each thread's
// result, a hang, sys.modules.
std::string results(const std::string& outcome) {
  size_t end = outcome.find("; asks ");
  for (const char* tail : {"; marks: ", "; copies of P: "}) end = std::min(end, outcome.find(tail));
  return outcome.substr(0, end);
}

}  // namespace

// The zoo's threaded scenarios (docs/threads-verification.md, "The zoo's
// threaded scenarios"): what every schedule within the bound comes to, each outcome
// class forced on real threads of CPython 3.9-3.13 by
// tools/check/crosscheck --threads.
TEST_CASE("ddtrace_thread_join: every schedule hangs on the join, none once the watchdog calls the next finders") {
  for (const std::string v : {"3.9", "3.11", "3.13"}) {
    CAPTURE(v);
    auto classes = outcome_classes("ddtrace_thread_join.json", v);
    REQUIRE(classes["as_is"].size() == 1);
    CHECK(results(classes["as_is"].begin()->first) ==
          "main: waiting; loader: waiting; hang: thread main waits for thread loader to finish (join); thread loader "
          "waits for the module lock of snowflake.connector, held by thread main; sys.modules: snowflake "
          "snowflake.connector");
    REQUIRE(classes["call_next"].size() == 1);
    CHECK(results(classes["call_next"].begin()->first) ==
          "main: ok; loader: ok; sys.modules: snowflake snowflake.connector snowflake.connector.vendored");
  }
}

// wrapt 1.14.1 holds its RLock around the post-import hooks; the hang is
// checked on the real package by tools/check/wrapt_notify_lock.
TEST_CASE("wrapt_notify_lock: a hang between wrapt's lock and a module lock, none once the hooks run unlocked") {
  for (const std::string v : {"3.9", "3.11", "3.13"}) {
    CAPTURE(v);
    auto classes = outcome_classes("wrapt_notify_lock.json", v);
    std::set<std::string> seen;
    for (const auto& [outcome, n] : classes["as_is"]) seen.insert(results(outcome));
    CHECK(seen == std::set<std::string>{
                      "main: ok; w: ok; sys.modules: dep target",
                      "main: waiting; w: waiting; hang: thread main waits for the module lock of dep, held by thread "
                      "w; thread w waits for the threading.RLock of class wrapt, held by thread main; sys.modules: "
                      "dep target"});
    REQUIRE(classes["unlock_after_exec"].size() == 1);
    CHECK(results(classes["unlock_after_exec"].begin()->first) == "main: ok; w: ok; sys.modules: dep target");
  }
}

TEST_CASE("circular_import_threads: _DeadlockError in either thread, or neither, in every version") {
  for (const std::string v : {"3.9", "3.10", "3.11", "3.12", "3.13"}) {
    CAPTURE(v);
    const auto classes = outcome_classes("circular_import_threads.json", v).at("before");
    std::set<std::string> seen;
    for (const auto& [outcome, n] : classes) seen.insert(results(outcome));
    CHECK(seen == std::set<std::string>{
                      "main: _DeadlockError: deadlock detected by _ModuleLock('bar'); w: ok; sys.modules: bar foo",
                      "main: ok; w: _DeadlockError: deadlock detected by _ModuleLock('foo'); sys.modules: bar foo",
                      "main: ok; w: ok; sys.modules: bar foo"});
  }
}

// Every design searches (the `after` one crashed while _find_spec read the
// finder after taking the global lock), and the fix's set, per thread or
// shared, changes no thread's result: the races are in the toggles.
TEST_CASE("paddle_proxy_threads: one thread's toggles fail the other's import, with or without the fix") {
  auto classes = outcome_classes("paddle_proxy_threads.json", "3.11", "before,after,after-global-set");
  std::map<std::string, std::map<std::string, int64_t>> by_results;
  for (const char* design : {"before", "after"})
    for (const auto& [outcome, n] : classes[design]) by_results[design][results(outcome)] += n;
  CHECK(by_results["before"] == by_results["after"]);
  // The shared set: class for class the per-thread one, counters included.
  CHECK(classes["after-global-set"] == classes["after"]);
  CHECK(by_results["before"].size() == 13);
  CHECK(by_results["before"]["main: ok; w: ok; sys.modules: app app.a app.b paddle paddle.nn"] == 1611);
  CHECK(by_results["before"]["main: KeyError: 'torch'; w: ok; sys.modules: app app.b paddle paddle.nn"] == 22);
}

// The proxy's lookup waits, inside find_spec, for a parent another thread
// is initialising; with the global import lock held that is a hang no
// design of the fix removes, and one CPython alone does not have.
TEST_CASE("paddle_proxy_parent_wait: the lookup's parent import hangs both threads, without the proxy none does") {
  const std::string hang =
      "main: waiting; w: waiting; hang: thread main waits for the global import lock, held by thread w; thread w "
      "waits for the module lock of app, held by thread main";
  for (const std::string v : {"3.9", "3.11", "3.13"}) {
    CAPTURE(v);
    auto classes = outcome_classes("paddle_proxy_parent_wait.json", v);
    for (const char* design : {"before", "after", "after-global-set"}) {
      CAPTURE(design);
      std::set<std::string> seen;
      for (const auto& [outcome, n] : classes[design]) seen.insert(results(outcome).substr(0, hang.size()));
      CHECK(seen.count(hang) == 1);
      CHECK(seen.count("main: ok; w: ok; sys.modules: app app.b app.util") == 1);
    }
    CHECK(classes["after-global-set"] == classes["after"]);
  }
  // The same program with the proxy never enabled.
  nlohmann::json sc = nlohmann::json::parse(
      test::read_file(std::string(IMPSIM_SOURCE_DIR) + "/scenarios/zoo/paddle_proxy_parent_wait.json"));
  sc.erase("$schema");
  sc["program"].erase(0);
  sc["variants"] = {"before"};
  sc["expect_schedules"] = {{"before", {{"hang", "never"}}}};  // the gate says it too
  const std::string plain = test::write_temp("parent_wait_plain.json", sc.dump());
  test::Command r = test::impsim("schedules " + plain + " --format json");
  REQUIRE(r.status == 0);
  const nlohmann::json report = nlohmann::json::parse(r.out);
  REQUIRE(report["searches"].size() == 1);
  CHECK(report["searches"][0]["complete"] == true);
  REQUIRE(report["searches"][0]["outcomes"].size() == 1);
  CHECK(results(report["searches"][0]["outcomes"][0]["outcome"]) == "main: ok; w: ok; sys.modules: app app.b app.util");
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
