// CPython's import locks (include/impsim/engine/import_locks.h): each
// function follows the one it names in importlib/_bootstrap.py (3.11),
// Python/import.c or Lib/threading.py.
#include "impsim/engine/import_locks.h"

#include <algorithm>
#include <set>

namespace impsim {

LockRules lock_rules_of(CPython cpython) {
  LockRules r;
  r.find_and_load_always_locks = cpython == CPython::V3_9 || cpython == CPython::V3_10;
  r.reimports_initialising_parent = reimports_initialising_parent(cpython);
  r.rechecks_module_after_wait = rechecks_module_after_wait(cpython);
  return r;
}

namespace {
// A lock is released by its owner only; each release wakes every waiter.
std::optional<std::vector<PyThreadId>> release(ModuleLock& lock, PyThreadId t) {
  if (lock.owner != t || lock.count == 0) return std::nullopt;
  std::vector<PyThreadId> woken;
  if (--lock.count == 0) {
    lock.owner = kNoThread;
    woken.swap(lock.waiters);
  }
  return woken;
}

void add_waiter(ModuleLock& lock, PyThreadId t) {
  if (std::find(lock.waiters.begin(), lock.waiters.end(), t) == lock.waiters.end()) lock.waiters.push_back(t);
}

// Free, or ours again where the lock is reentrant: taken. Else `t` waits.
LockResult take_or_wait(ModuleLock& lock, PyThreadId t, bool reentrant) {
  if (lock.count == 0 || (reentrant && lock.owner == t)) {
    lock.owner = t;
    ++lock.count;
    return LockResult::Acquired;
  }
  add_waiter(lock, t);
  return LockResult::Wait;
}

// After a release: false where CPython raises RuntimeError; else the woken
// threads can run, and the release is a scheduling point.
bool released(Scheduler& s, const std::optional<std::vector<PyThreadId>>& woken) {
  if (!woken) return false;
  s.wake(*woken);
  s.point();
  return true;
}
}  // namespace

// _ModuleLock.has_deadlock: from the lock's owner, follow what each thread
// waits for to that lock's owner; reaching `t` is a cycle. A thread seen
// twice is a cycle that does not reach `t` (bpo-38091): no deadlock of
// ours.
bool ImportLocks::has_deadlock(PyThreadId t, int32_t m) const {
  const ModuleLock* lock = module_lock(m);
  PyThreadId tid = lock ? lock->owner : kNoThread;
  std::set<PyThreadId> seen;
  while (true) {
    const auto waits = blocking_on_.find(tid);
    if (waits == blocking_on_.end()) return false;
    const ModuleLock* next = module_lock(waits->second);
    tid = next ? next->owner : kNoThread;
    if (tid == t) return true;
    if (!seen.insert(tid).second) return false;
  }
}

// _ModuleLock.acquire: `_blocking_on[tid] = self`, then one pass of the
// loop: take it (free, or ours again), raise _DeadlockError, or wait for a
// release. The entry goes when acquire returns or raises.
LockResult ImportLocks::acquire_module_step(PyThreadId t, int32_t m) {
  blocking_on_[t] = m;
  ModuleLock& lock = modules_[m];
  if (lock.count == 0 || lock.owner == t) {
    lock.owner = t;
    ++lock.count;
    blocking_on_.erase(t);
    return LockResult::Acquired;
  }
  if (has_deadlock(t, m)) {
    blocking_on_.erase(t);
    return LockResult::Deadlock;
  }
  add_waiter(lock, t);
  return LockResult::Wait;
}

std::optional<std::vector<PyThreadId>> ImportLocks::release_module_step(PyThreadId t, int32_t m) {
  const auto it = modules_.find(m);
  if (it == modules_.end()) return std::nullopt;
  return release(it->second, t);
}

// _PyImport_AcquireLock: ours again, or free, or wait.
LockResult ImportLocks::acquire_global_step(PyThreadId t) { return take_or_wait(global_, t, true); }

LockResult ImportLocks::acquire_hook_step(PyThreadId t, int32_t lock, bool reentrant) {
  return take_or_wait(hooks_[lock], t, reentrant);
}

std::optional<std::vector<PyThreadId>> ImportLocks::release_global_step(PyThreadId t) { return release(global_, t); }

// _ModuleLock.acquire: its loop, each pass a step; a thread woken by a
// release tries again.
LockResult ImportLocks::module_lock_acquire(Scheduler& s, int32_t m) {
  s.point();
  LockResult r;
  while ((r = acquire_module_step(s.current(), m)) == LockResult::Wait)
    s.block({WaitKind::ModuleLock, m, module_lock(m)->owner});
  return r;
}

// _ModuleLock.release.
bool ImportLocks::module_lock_release(Scheduler& s, int32_t m) {
  return released(s, release_module_step(s.current(), m));
}

// _imp.acquire_lock (_PyImport_AcquireLock): ours again, or free, or wait
// and try again.
void ImportLocks::imp_acquire_lock(Scheduler& s) {
  s.point();
  while (acquire_global_step(s.current()) == LockResult::Wait) s.block({WaitKind::GlobalLock, -1, global_owner()});
}

// _imp.release_lock (_PyImport_ReleaseLock).
bool ImportLocks::imp_release_lock(Scheduler& s) { return released(s, release_global_step(s.current())); }

// threading.Lock.acquire (RLock.acquire: taken again by its owner): free,
// or wait for a release and try again.
void ImportLocks::hook_lock_acquire(Scheduler& s, int32_t lock, bool reentrant) {
  s.point();
  while (acquire_hook_step(s.current(), lock, reentrant) == LockResult::Wait)
    s.block({WaitKind::HookLock, lock, hooks_[lock].owner});
}

// threading.Lock.release (RLock.release).
bool ImportLocks::hook_lock_release(Scheduler& s, int32_t lock) {
  const auto it = hooks_.find(lock);
  if (it == hooks_.end()) return false;
  return released(s, release(it->second, s.current()));
}

const ModuleLock* ImportLocks::module_lock(int32_t m) const {
  const auto it = modules_.find(m);
  return it == modules_.end() ? nullptr : &it->second;
}

std::optional<int32_t> ImportLocks::blocking_on(PyThreadId t) const {
  const auto it = blocking_on_.find(t);
  if (it == blocking_on_.end()) return std::nullopt;
  return it->second;
}

}  // namespace impsim
