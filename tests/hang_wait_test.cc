// A hang's waits as data: each kind of wait reads as the sentence the
// reports and traces have always printed, and the engine fills the fields
// (who waits, for what, held by whom) from a real hang, so that a reader
// of an outcome compares fields instead of searching a sentence.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "impsim/engine/threaded_outcome.h"
#include "impsim/reader/read_scenario.h"
#include "impsim/report/threaded_outcome_text.h"
#include "impsim/run/outcome_words.h"
#include "impsim/run/run.h"
#include "impsim/run/schedules.h"
#include "test_util.h"

// Named, not anonymous: the sanitizer build compiles the tests in batches
// (a unity build), where another file's helpers of the same name meet these.
namespace hang_wait_test {

using impsim::HangWait;
using Kind = impsim::HangWait::Kind;

// Every hang the schedules of a file of tests/data/threads/ reach, each as
// its waits.
std::set<std::vector<HangWait>> hangs_of(const std::string& file) {
  const impsim::Scenario sc = impsim::parse_scenario_file(impsim::test::kSource + "/tests/data/threads/" + file);
  const impsim::RunOptions options;
  impsim::SearchOptions search;
  search.preemption_bound = 2;
  std::set<std::vector<HangWait>> out;
  for (const impsim::DesignSearch& d : impsim::search_scenario_schedules(sc, options, search))
    for (const impsim::OutcomeClass& c : d.search.outcomes)
      if (c.outcome.hung()) out.insert(c.outcome.end.hang);
  return out;
}

TEST_CASE("hang wait: each kind reads as the sentence the reports print") {
  CHECK(impsim::hang_wait_text({"w", Kind::ModuleLock, "a", "main"}) ==
        "thread w waits for the module lock of a, held by thread main");
  CHECK(impsim::hang_wait_text({"w", Kind::GlobalLock, "", "main"}) ==
        "thread w waits for the global import lock, held by thread main");
  CHECK(impsim::hang_wait_text({"main", Kind::HookLock, "the threading.Lock of class virtualenv", "main"}) ==
        "thread main waits for the threading.Lock of class virtualenv, held by thread main");
  CHECK(impsim::hang_wait_text({"main", Kind::Join, "", "w"}) == "thread main waits for thread w to finish (join)");

  impsim::ThreadedOutcome o;
  o.end.threads = {{"main", impsim::ThreadEnd::How::Waiting, "", ""}, {"w", impsim::ThreadEnd::How::Waiting, "", ""}};
  o.end.hang = {{"main", Kind::Join, "", "w"}, {"w", Kind::ModuleLock, "a", "main"}};
  CHECK(o.hung());
  CHECK(impsim::threaded_outcome_text(o) ==
        "main: waiting; w: waiting; hang: thread main waits for thread w to finish (join); thread w waits for the "
        "module lock of a, held by thread main; sys.modules: (none); asks 0, lookups 0, toggles 0");
  // Two hangs that differ in one field are two outcomes.
  impsim::ThreadedOutcome other = o;
  other.end.hang[1].lock = "b";
  CHECK(other != o);
}

TEST_CASE("hang wait: a module body joining a thread that waits for that module's lock") {
  CHECK(hangs_of("join_in_body.json") ==
        std::set<std::vector<HangWait>>{{{"main", Kind::Join, "", "w"}, {"w", Kind::ModuleLock, "a", "main"}}});
}

TEST_CASE("hang wait: a thread waiting for the global import lock its joiner holds inside find_spec") {
  CHECK(hangs_of("join_in_find_spec.json") ==
        std::set<std::vector<HangWait>>{{{"main", Kind::Join, "", "w"}, {"w", Kind::GlobalLock, "", "main"}}});
}

TEST_CASE("hang wait: a hook's threading.Lock taken again by the thread that holds it") {
  CHECK(hangs_of("hook_lock.json") ==
        std::set<std::vector<HangWait>>{{{"main", Kind::HookLock, "the threading.Lock of class locked", "main"}}});
}

}  // namespace hang_wait_test
