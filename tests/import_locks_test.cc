// ImportLocks: CPython's import locks as data. tools/check/lock_model
// checks the same operations against each interpreter's own _bootstrap;
// these are the cases worth reading one by one.
#include <doctest/doctest.h>

#include "impsim/engine/import_locks.h"

using impsim::ImportLocks;
using impsim::LockResult;
using Woken = std::vector<impsim::PyThreadId>;

TEST_CASE("a module lock is reentrant for its owner and released as often as taken") {
  ImportLocks locks;
  CHECK(locks.acquire_module_step(0, 7) == LockResult::Acquired);
  CHECK(locks.acquire_module_step(0, 7) == LockResult::Acquired);
  CHECK(locks.module_lock(7)->count == 2);
  CHECK(locks.acquire_module_step(1, 7) == LockResult::Wait);
  CHECK(locks.release_module_step(0, 7) == Woken{});  // still held once: nobody wakes
  CHECK(locks.release_module_step(0, 7) == Woken{1});
  CHECK(locks.module_lock(7)->owner == impsim::kNoThread);
  // The woken thread retries, as _ModuleLock.acquire's loop does.
  CHECK(locks.acquire_module_step(1, 7) == LockResult::Acquired);
  CHECK_FALSE(locks.blocking_on(1).has_value());
}

TEST_CASE("releasing a lock one does not own is CPython's RuntimeError") {
  ImportLocks locks;
  CHECK_FALSE(locks.release_module_step(0, 1).has_value());  // never taken
  locks.acquire_module_step(0, 1);
  CHECK_FALSE(locks.release_module_step(1, 1).has_value());  // another's
  CHECK_FALSE(locks.release_global_step(0).has_value());
}

TEST_CASE("two threads each waiting for the other's module: the second gets _DeadlockError") {
  ImportLocks locks;
  locks.acquire_module_step(0, 1);                             // thread 0 imports a
  locks.acquire_module_step(1, 2);                             // thread 1 imports b
  CHECK(locks.acquire_module_step(0, 2) == LockResult::Wait);  // a's body imports b
  CHECK(locks.blocking_on(0) == 2);
  CHECK(locks.has_deadlock(1, 1));
  CHECK(locks.acquire_module_step(1, 1) == LockResult::Deadlock);  // b's body imports a
  // The raise removed thread 1's _blocking_on entry; thread 0 still waits.
  CHECK_FALSE(locks.blocking_on(1).has_value());
  CHECK(locks.blocking_on(0) == 2);
}

TEST_CASE("a cycle of three is found from any of them") {
  ImportLocks locks;
  for (int t = 0; t < 3; ++t) locks.acquire_module_step(t, t);
  CHECK(locks.acquire_module_step(0, 1) == LockResult::Wait);
  CHECK(locks.acquire_module_step(1, 2) == LockResult::Wait);
  CHECK(locks.acquire_module_step(2, 0) == LockResult::Deadlock);
}

TEST_CASE("a chain of waits that ends at a running thread is no deadlock") {
  ImportLocks locks;
  locks.acquire_module_step(0, 0);
  locks.acquire_module_step(1, 1);
  CHECK(locks.acquire_module_step(1, 0) == LockResult::Wait);  // 1 waits for 0, which runs
  CHECK_FALSE(locks.has_deadlock(2, 1));
  CHECK(locks.acquire_module_step(2, 1) == LockResult::Wait);  // 2 waits for 1
}

TEST_CASE("a woken thread's _blocking_on entry counts until its retry") {
  ImportLocks locks;
  locks.acquire_module_step(0, 0);
  locks.acquire_module_step(1, 1);
  CHECK(locks.acquire_module_step(1, 0) == LockResult::Wait);
  CHECK(locks.release_module_step(0, 0) == Woken{1});              // 1 is woken, has not retried
  CHECK(locks.acquire_module_step(2, 0) == LockResult::Acquired);  // 2 was first
  // 2 asks for module 1, held by 1, whose entry still names module 0,
  // now 2's: CPython raises, and rightly (1's retry would wait for 2).
  CHECK(locks.acquire_module_step(2, 1) == LockResult::Deadlock);
  CHECK(locks.acquire_module_step(1, 0) == LockResult::Wait);
}

TEST_CASE("every waiter of a module lock wakes, and the first to retry takes it") {
  ImportLocks locks;
  locks.acquire_module_step(0, 5);
  CHECK(locks.acquire_module_step(1, 5) == LockResult::Wait);
  CHECK(locks.acquire_module_step(2, 5) == LockResult::Wait);
  CHECK(locks.release_module_step(0, 5) == Woken{1, 2});
  CHECK(locks.acquire_module_step(2, 5) == LockResult::Acquired);
  CHECK(locks.acquire_module_step(1, 5) == LockResult::Wait);
  CHECK(locks.module_lock(5)->waiters == Woken{1});
}

TEST_CASE("the global import lock: reentrant, no deadlock check, a release wakes its waiters") {
  ImportLocks locks;
  CHECK(locks.acquire_global_step(0) == LockResult::Acquired);
  CHECK(locks.acquire_global_step(0) == LockResult::Acquired);
  CHECK(locks.acquire_global_step(1) == LockResult::Wait);
  CHECK(locks.release_global_step(0) == Woken{});
  CHECK(locks.release_global_step(0) == Woken{1});
  CHECK(locks.acquire_global_step(1) == LockResult::Acquired);
  CHECK(locks.global_owner() == 1);
}

TEST_CASE("a hook's own lock: a Lock taken again by its owner waits, an RLock is taken again") {
  ImportLocks locks;
  // threading.Lock: no owner's exemption, so its owner acquiring it again
  // waits for itself (the single-thread hang of a hook's `with lock:`).
  CHECK(locks.acquire_hook_step(0, 3, false) == LockResult::Acquired);
  CHECK(locks.acquire_hook_step(0, 3, false) == LockResult::Wait);
  CHECK(locks.acquire_hook_step(1, 3, false) == LockResult::Wait);
  // threading.RLock: reentrant for its owner only.
  CHECK(locks.acquire_hook_step(0, 4, true) == LockResult::Acquired);
  CHECK(locks.acquire_hook_step(0, 4, true) == LockResult::Acquired);
  CHECK(locks.acquire_hook_step(1, 4, true) == LockResult::Wait);
}

TEST_CASE("lock rules per version: 3.9 and 3.10 lock every _find_and_load") {
  CHECK(impsim::lock_rules_of(impsim::CPython::V3_9).find_and_load_always_locks);
  CHECK(impsim::lock_rules_of(impsim::CPython::V3_10).find_and_load_always_locks);
  CHECK_FALSE(impsim::lock_rules_of(impsim::CPython::V3_11).find_and_load_always_locks);
  CHECK_FALSE(impsim::lock_rules_of(impsim::CPython::V3_13).find_and_load_always_locks);
  CHECK_FALSE(impsim::lock_rules_of(impsim::CPython::V3_14).find_and_load_always_locks);
}

TEST_CASE("lock rules per release line: gh-130094's parent re-import, gh-143650's re-check") {
  using impsim::CPython;
  using impsim::lock_rules_of;
  for (CPython v : {CPython::V3_12, CPython::V3_13, CPython::V3_13_13})
    CHECK_FALSE(lock_rules_of(v).reimports_initialising_parent);
  for (CPython v : {CPython::V3_13_16, CPython::V3_14, CPython::V3_14_4, CPython::V3_15})
    CHECK(lock_rules_of(v).reimports_initialising_parent);
  for (CPython v : {CPython::V3_12, CPython::V3_13, CPython::V3_14})
    CHECK_FALSE(lock_rules_of(v).rechecks_module_after_wait);
  for (CPython v : {CPython::V3_13_13, CPython::V3_13_16, CPython::V3_14_4, CPython::V3_15})
    CHECK(lock_rules_of(v).rechecks_module_after_wait);
}
