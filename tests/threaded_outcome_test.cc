// A threaded run's outcome as data: its predicates say what the reports
// used to find by searching its line, its line reads as the line always
// has, and the reports order classes by that line whatever order they
// come in.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "impsim/engine/threaded_outcome.h"
#include "impsim/report/threaded_outcome_text.h"

// Named, not anonymous: the sanitizer build compiles the tests in batches
// (a unity build), where another file's helpers of the same name meet these.
namespace threaded_outcome_test {

using impsim::OutcomeClass;
using impsim::OutcomeEnd;
using impsim::ThreadedOutcome;
using impsim::ThreadEnd;
using How = impsim::ThreadEnd::How;

ThreadedOutcome deadlock() {
  ThreadedOutcome o;
  o.end.threads = {{"main", How::Returned, "", ""},
                   {"w", How::Raised, "_DeadlockError", "deadlock detected by _ModuleLock('a')"}};
  o.end.sys_modules = {"a", "b"};
  return o;
}

ThreadedOutcome hang() {
  ThreadedOutcome o;
  o.end.threads = {{"main", How::Waiting, "", ""}, {"w", How::Waiting, "", ""}, {"x", How::NeverStarted, "", ""}};
  o.end.hang = {{"main", impsim::HangWait::Kind::ModuleLock, "b", "w"},
                {"w", impsim::HangWait::Kind::ModuleLock, "a", "main"}};
  o.counters.asks = 3;
  return o;
}

TEST_CASE("threaded outcome: hung() and raised() say what the line's \"hang:\" and error types said") {
  CHECK_FALSE(deadlock().hung());
  CHECK(deadlock().raised("_DeadlockError"));
  CHECK_FALSE(deadlock().raised("KeyError"));
  CHECK(hang().hung());
  CHECK_FALSE(hang().raised("_DeadlockError"));
  // A thread named like the line's words is not a hang, nor a message
  // naming an error that error.
  ThreadedOutcome named;
  named.end.threads = {{"main", How::Returned, "", ""}, {"hang", How::Raised, "RuntimeError", "not _DeadlockError"}};
  CHECK_FALSE(named.hung());
  CHECK_FALSE(named.raised("_DeadlockError"));
  CHECK(named.raised("RuntimeError"));
}

TEST_CASE("threaded outcome: the line reads as it always has") {
  CHECK(impsim::threaded_outcome_text(deadlock()) ==
        "main: ok; w: _DeadlockError: deadlock detected by _ModuleLock('a'); sys.modules: a b; asks 0, lookups 0, "
        "toggles 0");
  CHECK(impsim::threaded_outcome_text(hang()) ==
        "main: waiting; w: waiting; x: never started; hang: thread main waits for the module lock of b, held by "
        "thread w; thread w waits for the module lock of a, held by thread main; sys.modules: (none); asks 3, "
        "lookups 0, toggles 0");
  ThreadedOutcome o = deadlock();
  o.end.stopped_at = "max-events";
  o.end.marks = {{"torch", "enabled"}, {"a", "disabled"}};
  o.end.proxy_copies = 2;
  o.counters.searches = 12;
  CHECK(impsim::outcome_end_text(o.end) ==
        "main: ok; w: _DeadlockError: deadlock detected by _ModuleLock('a'); stopped: limit max-events; sys.modules: "
        "a b; marks: a=disabled torch=enabled; copies of P: 2");
  CHECK(impsim::outcome_counters_text(o.counters) == "asks 0, lookups 0, toggles 0, searches 12");
  CHECK(impsim::threaded_outcome_text(o) ==
        impsim::outcome_end_text(o.end) + "; " + impsim::outcome_counters_text(o.counters));
  // A run that started no thread and did not hang names none.
  CHECK(impsim::threaded_outcome_text(ThreadedOutcome{}) == "; sys.modules: (none); asks 0, lookups 0, toggles 0");
}

TEST_CASE("threaded outcome: equal exactly when the line is, and the end leaves out the counters") {
  CHECK(deadlock() == deadlock());
  ThreadedOutcome more = deadlock();
  more.counters.asks = 1;
  CHECK(more != deadlock());
  CHECK(more.end == deadlock().end);
  CHECK((more < deadlock()) != (deadlock() < more));
}

TEST_CASE("threaded outcome: the reports list classes by their lines, whatever order the search holds") {
  // By the data, main's Raised comes after its Returned; by the line, a
  // KeyError ("main: KeyError") comes before "main: ok".
  std::vector<OutcomeClass> classes;
  classes.push_back(OutcomeClass{hang(), 1, "0", 0});
  classes.push_back(OutcomeClass{deadlock(), 2, "1", 1});
  ThreadedOutcome raised;
  raised.end.threads = {{"main", How::Raised, "KeyError", "'a'"}};
  classes.push_back(OutcomeClass{raised, 3, "2", 0});
  const std::vector<size_t> order = impsim::classes_by_text(classes);
  REQUIRE(order.size() == 3);
  // "main: KeyError..." < "main: ok..." < "main: waiting...".
  CHECK(order == std::vector<size_t>{2, 1, 0});
}

}  // namespace threaded_outcome_test
