// CPython's import locks, which the Interpreter holds for every thread:
// the global import lock (`_imp.acquire_lock`, reentrant: an owner and a
// count), one `_ModuleLock` per module name (`_bootstrap._get_module_lock`)
// with the `_blocking_on` table its deadlock check walks, and the hooks'
// own `threading.Lock`s and `RLock`s.
//
// Two layers. The steps (`*_step`) are the locks as data: a real thread
// blocks inside `acquire`; a simulated one cannot, so each step is one
// pass of one thread and says what happened: the lock was taken, the
// thread must wait, or `_DeadlockError` was raised. A release step returns
// the threads it wakes: every waiter (of a module lock, the `wakeup` lock
// lets them through one after another; of the global lock, the operating
// system picks one, and the others find it taken again), each to retry.
//
// The functions named after CPython's (`module_lock_acquire` for
// `_ModuleLock.acquire`, ...) are what a running simulated thread calls:
// they loop over the steps as `_ModuleLock.acquire` loops, and where the
// lock is held by another thread they ask the Scheduler, passed in, to
// block the thread until a release wakes it. Which woken thread retries
// first is the scheduler's choice, as the operating system's is in
// CPython. The locks are the interpreter's, shared by its threads; the
// scheduler only picks who runs.
//
// What the thread that waits has left in `_blocking_on` stays there until
// its retry takes the lock or raises: other threads' deadlock checks see it
// in between, as they do in CPython, where the entry is removed only when
// acquire returns.
//
// tools/check/import_locks --model runs random sequences of the steps on
// each interpreter's own `_bootstrap` (threads of its own, one step at a
// time) and on tests/import_locks_driver.cc, and compares.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "impsim/engine/scheduler.h"
#include "impsim/scenario/axes.h"

namespace impsim {

enum class LockResult { Acquired, Wait, Deadlock };

// `_ModuleLock`: owner and count (reentrant for its owner), and who waits.
// A hook's lock is one too (a Lock is one its owner cannot take again).
struct ModuleLock {
  PyThreadId owner = kNoThread;
  int64_t count = 0;
  std::vector<PyThreadId> waiters;  // in the order they began to wait
};

// What differs between the versions' `_bootstrap.py` in how the locks are
// taken. `_ModuleLock` itself behaves the same in 3.9-3.13 for one thread
// blocking on one lock at a time: 3.12 keeps a list per thread in
// `_blocking_on` (`_BlockingOnManager`) and walks it depth first
// (`_has_deadlocked`), which only differs when a thread re-enters an
// import while blocking (a signal handler, a finaliser), which impsim does
// not simulate.
struct LockRules {
  // 3.9, 3.10: `_find_and_load` takes the module's lock even when the
  // module is in sys.modules (importlib.import_module of a loaded module
  // waits for an import in progress); 3.11 on take it only when the
  // module is missing or its spec is `_initializing`.
  bool find_and_load_always_locks = false;
  // gh-130094 (3.13.16, 3.14 on): `_find_and_load_unlocked` imports a
  // parent whose spec is still `_initializing` again, so a submodule's
  // import waits for the thread running the parent's body.
  bool reimports_initialising_parent = false;
  // gh-143650 (3.13.13, 3.14.4, 3.15): the import statement, having waited
  // for a module another thread was initialising, imports the name again
  // when sys.modules no longer holds that module (its body failed).
  bool rechecks_module_after_wait = false;
};
LockRules lock_rules_of(CPython cpython);

class ImportLocks {
 public:
  // What a running thread calls (the Scheduler's current one), each
  // blocking it on `s` while another thread holds the lock. Each acquire
  // is a scheduling point first; each release that succeeds, one after.

  // `_ModuleLock.acquire` of module `m`'s lock: Acquired, or Deadlock
  // (the caller raises _DeadlockError).
  LockResult module_lock_acquire(Scheduler& s, int32_t m);
  // `_ModuleLock.release`; false where CPython raises RuntimeError.
  bool module_lock_release(Scheduler& s, int32_t m);
  // `_imp.acquire_lock()`.
  void imp_acquire_lock(Scheduler& s);
  // `_imp.release_lock()`; false where CPython raises RuntimeError.
  bool imp_release_lock(Scheduler& s);
  // A hook's `threading.Lock.acquire()` (`reentrant`: `RLock.acquire()`).
  // Its owner asking again for a Lock waits for ever, and nothing checks
  // for a deadlock (`_blocking_on` holds module locks only), so a cycle
  // through one is a hang.
  void hook_lock_acquire(Scheduler& s, int32_t lock, bool reentrant);
  // A hook's `threading.Lock.release()`; false where Python raises
  // RuntimeError.
  bool hook_lock_release(Scheduler& s, int32_t lock);

  // The steps, for thread `t`.

  // One pass of `_ModuleLock.acquire`'s loop (the lock of module `m`,
  // made on first use as `_get_module_lock` makes it).
  LockResult acquire_module_step(PyThreadId t, int32_t m);
  // `_ModuleLock.release`. Returns the threads to wake (each must call
  // acquire_module_step again), or nullopt where CPython raises
  // RuntimeError ('cannot release un-acquired lock': `t` does not own it).
  std::optional<std::vector<PyThreadId>> release_module_step(PyThreadId t, int32_t m);
  // `_ModuleLock.has_deadlock`: whether waiting for `m` would close a
  // cycle of threads each waiting for a module lock the next one holds.
  bool has_deadlock(PyThreadId t, int32_t m) const;

  // One pass of `_imp.acquire_lock()`: reentrant; no deadlock check (a
  // thread waiting for it is outside `_blocking_on`, so a cycle through it
  // is a hang).
  LockResult acquire_global_step(PyThreadId t);
  // `_imp.release_lock()`: the threads to wake; nullopt where
  // CPython raises RuntimeError ('not holding the import lock').
  std::optional<std::vector<PyThreadId>> release_global_step(PyThreadId t);

  // One pass of `threading.Lock.acquire` (an RLock's: `reentrant`, taken
  // again by its owner): no deadlock check, as the global lock's.
  LockResult acquire_hook_step(PyThreadId t, int32_t lock, bool reentrant);

  const ModuleLock* module_lock(int32_t m) const;
  PyThreadId global_owner() const { return global_.owner; }
  // The module lock thread `t` waits for (its `_blocking_on` entry).
  std::optional<int32_t> blocking_on(PyThreadId t) const;

 private:
  ModuleLock global_;
  std::map<int32_t, ModuleLock> modules_;
  std::map<PyThreadId, int32_t> blocking_on_;
  std::map<int32_t, ModuleLock> hooks_;  // a hook's own locks, by the hook lock's index
};

}  // namespace impsim
