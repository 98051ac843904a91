// Scheduler: simulated threads on fibers, one schedule at a time, blocked
// by the import locks (ImportLocks) and woken by their releases; hangs said
// with who waits for what; schedules replayed choice for choice.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "impsim/engine/import_locks.h"
#include "impsim/engine/scheduler.h"

using namespace impsim;

namespace {
// Takes turns: at each choice, the runnable thread after the one that ran.
Scheduler::Policy round_robin() {
  return [](const std::vector<PyThreadId>& runnable, PyThreadId current) -> size_t {
    for (size_t i = 0; i < runnable.size(); ++i)
      if (runnable[i] > current) return i;
    return 0;
  };
}

// A hang's waits, by id, in the test's own short words.
std::vector<std::string> scheduler_waits(const ScheduleOutcome& out) {
  std::vector<std::string> said;
  for (const ScheduleOutcome::Waiting& w : out.waits) {
    const std::string who = std::to_string(w.thread), on = std::to_string(w.wait.on);
    switch (w.wait.kind) {
      case WaitKind::GlobalLock:
        said.push_back(who + " waits for the global lock, held by " + on);
        break;
      case WaitKind::ModuleLock:
        said.push_back(who + " waits for module lock " + std::to_string(w.wait.module) + ", held by " + on);
        break;
      case WaitKind::HookLock:
        said.push_back(who + " waits for hook lock " + std::to_string(w.wait.module) + ", held by " + on);
        break;
      case WaitKind::Join:
        said.push_back(who + " joins " + on);
        break;
    }
  }
  return said;
}
}  // namespace

TEST_CASE("run until blocked: each thread goes on until it finishes, then the next") {
  Scheduler s;
  std::string log;
  for (char c : {'a', 'b'})
    s.spawn([&, c] {
      for (int i = 0; i < 3; ++i) {
        log += c;
        s.point();
      }
    });
  const ScheduleOutcome out = s.run();
  CHECK(log == "aaabbb");
  CHECK_FALSE(out.hang);
  CHECK(out.schedule == "0.0.0.0");  // a choice at each of a's points, none once b runs alone
  CHECK(s.finished(0));
  CHECK(s.finished(1));
}

TEST_CASE("a schedule replays the same interleaving") {
  std::string first;
  std::string schedule;
  {
    Scheduler s(round_robin());
    for (char c : {'a', 'b', 'c'})
      s.spawn([&, c] {
        for (int i = 0; i < 2; ++i) {
          first += c;
          s.point();
        }
      });
    schedule = s.run().schedule;
  }
  CHECK(first == "abcabc");
  std::string again;
  Scheduler s = Scheduler::replay(schedule);
  for (char c : {'a', 'b', 'c'})
    s.spawn([&, c] {
      for (int i = 0; i < 2; ++i) {
        again += c;
        s.point();
      }
    });
  const ScheduleOutcome out = s.run();
  CHECK(again == first);
  CHECK(out.schedule == schedule);
  CHECK_FALSE(out.bad_schedule.has_value());
}

TEST_CASE("a replayed choice that cannot be followed is said, not guessed") {
  Scheduler s = Scheduler::replay("7");
  s.spawn([&] { s.point(); });
  s.spawn([&] { s.point(); });
  const ScheduleOutcome out = s.run();
  REQUIRE(out.bad_schedule.has_value());
  CHECK(*out.bad_schedule == "choice 1: the thread asked for cannot run there (runnable: 0, 1)");
}

TEST_CASE("a string that is not a schedule is refused whole, not misread") {
  for (const auto& [text, choice] : std::vector<std::pair<std::string, int>>{
           {"0.x", 2}, {"0.", 2}, {".1", 1}, {"0..1", 2}, {"-1", 1}, {"1234567890", 1}, {"0.1\n", 2}}) {
    CAPTURE(text);
    Scheduler s = Scheduler::replay(text);
    std::string log;
    s.spawn([&] {
      log += 'a';
      s.point();
      log += 'a';
    });
    s.spawn([&] { log += 'b'; });
    const ScheduleOutcome out = s.run();
    REQUIRE(out.bad_schedule.has_value());
    CHECK(*out.bad_schedule ==
          "not a schedule: choice " + std::to_string(choice) +
              " is not a thread number (a schedule is thread numbers joined by dots, e.g. 0.1.1.0)");
    CHECK(log == "aab");  // none of it followed: run until blocked
  }
  Scheduler empty = Scheduler::replay("");
  empty.spawn([] {});
  CHECK_FALSE(empty.run().bad_schedule.has_value());
}

TEST_CASE("two threads crossing module locks: the second to ask gets _DeadlockError, the first goes on") {
  Scheduler s(round_robin());
  ImportLocks locks;
  std::vector<std::string> log;
  auto body = [&](int32_t mine, int32_t theirs) {
    return [&, mine, theirs] {
      const PyThreadId me = s.current();
      REQUIRE(locks.module_lock_acquire(s, mine) == LockResult::Acquired);
      const LockResult r = locks.module_lock_acquire(s, theirs);
      log.push_back(std::to_string(me) + (r == LockResult::Deadlock ? " deadlock" : " took both"));
      if (r == LockResult::Acquired) locks.module_lock_release(s, theirs);
      locks.module_lock_release(s, mine);  // _ModuleLockManager.__exit__, raising or not
    };
  };
  s.spawn(body(1, 2));
  s.spawn(body(2, 1));
  const ScheduleOutcome out = s.run();
  CHECK_FALSE(out.hang);
  CHECK(log == std::vector<std::string>{"1 deadlock", "0 took both"});
}

TEST_CASE("a cycle through the global import lock is a hang, with who waits for what") {
  Scheduler s(round_robin());
  ImportLocks locks;
  std::string reached;
  s.spawn([&] {
    const std::string held = "a heap string a hung thread must free";  // LSan sees it freed
    locks.imp_acquire_lock(s);                                         // inside find_spec, say
    locks.module_lock_acquire(s, 5);  // held by thread 1, which waits for the global lock
    reached += held;
  });
  s.spawn([&] {
    locks.module_lock_acquire(s, 5);
    locks.imp_acquire_lock(s);  // _get_module_lock of another module
    reached += "never";
  });
  const ScheduleOutcome out = s.run();
  CHECK(out.hang);
  CHECK(reached.empty());
  CHECK(scheduler_waits(out) ==
        std::vector<std::string>{"0 waits for module lock 5, held by 1", "1 waits for the global lock, held by 0"});
}

// A hook's own lock (virtualenv's threading.Lock) is outside _blocking_on:
// a cycle through it and a module lock is no _DeadlockError but a hang.
TEST_CASE("a cycle through a hook's lock and a module lock is a hang, which the deadlock check does not see") {
  Scheduler s(round_robin());
  ImportLocks locks;
  std::vector<LockResult> module_results;
  s.spawn([&] {
    locks.hook_lock_acquire(s, 7, false);
    module_results.push_back(locks.module_lock_acquire(s, 5));  // held by thread 1, which waits for the hook lock
  });
  s.spawn([&] {
    module_results.push_back(locks.module_lock_acquire(s, 5));
    locks.hook_lock_acquire(s, 7, false);
  });
  const ScheduleOutcome out = s.run();
  CHECK(out.hang);
  CHECK(module_results == std::vector<LockResult>{LockResult::Acquired});  // thread 1's; thread 0 waits
  CHECK(scheduler_waits(out) ==
        std::vector<std::string>{"0 waits for module lock 5, held by 1", "1 waits for hook lock 7, held by 0"});
}

TEST_CASE("a hook's Lock taken again by its owner waits for ever, an RLock does not, a release wakes a waiter") {
  {
    Scheduler s;
    ImportLocks locks;
    s.spawn([&] {
      locks.hook_lock_acquire(s, 0, false);
      locks.hook_lock_acquire(s, 0, false);
    });
    const ScheduleOutcome out = s.run();
    CHECK(out.hang);
    CHECK(scheduler_waits(out) == std::vector<std::string>{"0 waits for hook lock 0, held by 0"});
  }
  {
    Scheduler s;
    ImportLocks locks;
    bool done = false;
    s.spawn([&] {
      locks.hook_lock_acquire(s, 0, true);
      locks.hook_lock_acquire(s, 0, true);
      CHECK(locks.hook_lock_release(s, 0));
      CHECK(locks.hook_lock_release(s, 0));
      CHECK_FALSE(locks.hook_lock_release(s, 0));  // not held: RuntimeError in Python
      done = true;
    });
    CHECK_FALSE(s.run().hang);
    CHECK(done);
  }
  {
    Scheduler s(round_robin());
    ImportLocks locks;
    std::string order;
    s.spawn([&] {
      locks.hook_lock_acquire(s, 0, false);
      order += "0 took;";
      s.point();  // thread 1 asks for it now, and waits
      locks.hook_lock_release(s, 0);
    });
    s.spawn([&] {
      locks.hook_lock_acquire(s, 0, false);
      order += "1 took;";
      locks.hook_lock_release(s, 0);
    });
    CHECK_FALSE(s.run().hang);
    CHECK(order == "0 took;1 took;");
  }
}

TEST_CASE("what a thread's body throws stays with that thread") {
  Scheduler s;
  s.spawn([] { throw std::runtime_error("boom"); });
  bool ran = false;
  s.spawn([&] { ran = true; });
  s.run();
  CHECK(ran);
  REQUIRE(s.error(0));
  CHECK_THROWS_WITH(std::rethrow_exception(s.error(0)), "boom");
  CHECK_FALSE(s.error(1));
}
