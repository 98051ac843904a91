// The threaded engine's side of _bootstrap: _find_and_load under its
// module lock (_ModuleLockManager), _get_module_lock and the global import
// lock, `_initializing` while a module executes, import.c's wait for a
// module another thread initialises, and the scenario's thread start and
// join. Each lock operation is a scheduling point, where the Scheduler may
// switch to another thread; ImportLocks holds the locks themselves.
//
// Also here is what a threaded run comes to: how each thread ended and
// the ThreadedOutcome a schedule search groups runs by. How the pieces
// fit, and why fibers: docs/threads-design.md.
#pragma once

#include "impsim/engine/import_system.h"

namespace impsim {

class ThreadedImport : public ImportSystem {
  // The parts below call up into this one through engine().
  friend class TorchProxyMetaFinder;
  friend class FinderObjects;
  friend class ImportSystem;

 public:
  using ImportSystem::ImportSystem;

  // A threaded scenario's run under `scheduler`'s schedule (threads.cc):
  // what came of it; error() and limit() are the main thread's and the run's.
  ScheduleOutcome run_threads(Scheduler& scheduler);
  // What tells one threaded run's outcome from another (what each thread
  // ended with, a hang's waits, sys.modules' names, the counters): a
  // schedule search groups runs by it. The marks and the copies of P are
  // the run's to add (run/run.h's outcome_of reads them).
  ThreadedOutcome threaded_outcome() const;
  // By PyThreadId: the thread's name ("main" first) and what ended it.
  std::vector<std::string> thread_names() const;
  // How each thread of the last threaded run ended, main first, then those
  // never started; in a run without threads, main alone if it hung, else
  // nothing. run/outcome_words.h words them.
  std::vector<ThreadEnd> thread_ends() const;
  const std::vector<HangWait>& hang_waits() const { return hang_waits_; }
  // The step pointer the run hung at ("/program/3"), empty when it did not.
  const std::string& hang_at() const { return hang_at_; }
  std::optional<PyError> thread_error(PyThreadId t) const;
  bool threaded_run() const { return thread_run_.scheduler != nullptr; }
  // The schedule run() follows (Scheduler::replay's string); empty: each
  // thread goes on until it blocks or ends. What went wrong following it.
  void set_schedule(std::string schedule) { schedule_ = std::move(schedule); }
  const std::optional<std::string>& bad_schedule() const { return bad_schedule_; }
  // Records, in `log`, every scheduling point each thread passes, in the
  // order they pass them (a schedule written out; tools/check/crosscheck
  // --threads forces the same order on real threads). nullptr: none.
  void record_points(std::vector<SchedulePoint>* log) { thread_run_.points = log; }
  PyThreadId running_thread() const { return thread_run_.running; }

 protected:
  // Threads (threads.cc): CPython's import locks taken where _bootstrap
  // takes them, the scheduling points, start and join.
  // _find_and_load with its module lock (`with _ModuleLockManager(name)`).
  ModuleId _find_and_load_threaded(NameId name);
  ModuleId find_and_load_locked(NameId name);
  // One absolute name as import.c imports it (the import statement, and
  // `__import__`): a module found in sys.modules is waited for while
  // another thread initialises it (import_ensure_initialized); a missing
  // one goes to _find_and_load.
  ModuleId import_name_threaded(NameId name);
  // _load_unlocked with the module's spec `_initializing` while it executes.
  ModuleId _load_unlocked_threaded(SpecId spec, ModuleId module);
  // _get_module_lock(name) (the global lock, briefly), and the lock's last
  // reference dropped (its weakref callback takes the global lock too).
  void _get_module_lock(NameId name);
  void drop_module_lock(NameId name);
  // _ModuleLockManager.__enter__ / __exit__.
  // `_ModuleLock.acquire` / `.release`, each a scheduling point.
  LockResult acquire_module_lock(NameId name);
  void release_module_lock(NameId name);
  void module_lock_enter(NameId name);
  std::vector<ThreadWait> deadlock_cycle(NameId name) const;
  void module_lock_exit(NameId name);
  void _lock_unlock_module(NameId name);
  // _imp.acquire_lock() / _imp.release_lock() (_ImportLockContext).
  void acquire_import_lock(LockSite site);
  void release_import_lock(LockSite site);
  // A scheduling point: another thread may run here. `kind` and the rest
  // say which, for record_points.
  void schedule_point(PointKind kind, NameId module = kNoName, const std::string* pointer = nullptr,
                      int32_t target = -1);
  void about_to_pass(PointKind kind, NameId module = kNoName, LockSite site = LockSite::None,
                     const std::string* pointer = nullptr, int32_t target = -1) {
    if (thread_run_.points)
      thread_run_.next_point[static_cast<size_t>(thread_run_.running)] =
          SchedulePoint{thread_run_.running, kind, site, module, target, pointer};
  }
  // After a switch: a run another thread ended (a limit) ends this one too.
  void resumed();
  // spec._initializing of the module in sys.modules under `name`.
  bool initializing(NameId name) const;
  void thread_start(int32_t at);  // by the scenario's thread index
  void thread_join(int32_t at);
  // A new thread's state, sized as the running thread's.
  PyThread new_py_thread() const;
  // The scheduler is about to resume thread `t`: its state becomes py_thread_.
  void install_thread(PyThreadId t);
  void run_thread_program(const std::vector<CStep>& program);
};

}  // namespace impsim
