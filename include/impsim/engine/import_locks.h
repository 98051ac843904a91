// CPython's import locks as data, for the threaded engine: the global
// import lock (`_imp.acquire_lock`, reentrant: an owner and a count) and
// one `_ModuleLock` per module name (`_bootstrap._get_module_lock`), with
// the `_blocking_on` table its deadlock check walks.
//
// A real thread blocks inside `acquire`; a simulated one cannot, so each
// operation is one step of one thread and says what happened: the lock was
// taken, the thread must wait (it is parked on the lock until a release
// wakes it, then calls acquire again, as `_ModuleLock.acquire`'s loop
// does), or `_DeadlockError` was raised. A release returns the threads it
// wakes: every waiter (of a module lock, the `wakeup` lock lets them
// through one after another; of the global lock, the operating system
// picks one, and the others find it taken again), each to retry. Which
// woken thread retries first is the scheduler's choice, as the operating
// system's is in CPython.
//
// What the thread that waits has left in `_blocking_on` stays there until
// its retry takes the lock or raises: other threads' deadlock checks see it
// in between, as they do in CPython, where the entry is removed only when
// acquire returns.
//
// tools/check/import_locks --model runs random sequences of these
// operations on each interpreter's own `_bootstrap` (threads of its own,
// one step at a time) and on tests/import_locks_driver.cc, and compares.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace impsim {

// A simulated Python thread, 0 the main thread.
using PyThreadId = int32_t;
inline constexpr PyThreadId kNoThread = -1;

enum class LockResult { Acquired, Wait, Deadlock };

// `_ModuleLock`: owner and count (reentrant for its owner), and who waits.
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
};
LockRules lock_rules_of(const std::string& cpython);

class ImportLocks {
 public:
  // `_ModuleLock.acquire` (the lock of module `m`, made on first use as
  // `_get_module_lock` makes it) by thread `t`: one pass of its loop.
  LockResult acquire_module(PyThreadId t, int32_t m);
  // `_ModuleLock.release`. Returns the threads to wake (each must call
  // acquire_module again), or nullopt where CPython raises RuntimeError
  // ('cannot release un-acquired lock': `t` does not own it).
  std::optional<std::vector<PyThreadId>> release_module(PyThreadId t, int32_t m);
  // `_ModuleLock.has_deadlock`: whether waiting for `m` would close a
  // cycle of threads each waiting for a module lock the next one holds.
  bool has_deadlock(PyThreadId t, int32_t m) const;

  // `_imp.acquire_lock()`: reentrant; no deadlock check (a thread waiting
  // for it is outside `_blocking_on`, so a cycle through it is a hang).
  LockResult acquire_global(PyThreadId t);
  // `_imp.release_lock()`: the threads to wake; nullopt where
  // CPython raises RuntimeError ('not holding the import lock').
  std::optional<std::vector<PyThreadId>> release_global(PyThreadId t);

  const ModuleLock* module_lock(int32_t m) const;
  PyThreadId global_owner() const { return global_.owner; }
  // The module lock thread `t` waits for (its `_blocking_on` entry).
  std::optional<int32_t> blocking_on(PyThreadId t) const;

 private:
  ModuleLock global_;
  std::map<int32_t, ModuleLock> modules_;
  std::map<PyThreadId, int32_t> blocking_on_;
};

}  // namespace impsim
