// Several Python threads in one run: CPython's import locks taken where
// _bootstrap takes them, and the points where another thread may run.
//
// Each simulated thread runs on a fiber of the Scheduler (scheduler.h); the
// engine's own state for the thread running (PyThread: frames, guards,
// thread-local sets, counters) is swapped into py_thread_ whenever the
// scheduler resumes a thread (install_thread), so every function of the
// engine keeps reading `py_thread_` as in a single-threaded run. What CPython
// shares between threads (sys.modules, sys.meta_path, the finder objects,
// Paddle's finder) is shared here too.
//
// The locks, as CPython 3.9-3.13 take them (read from each version's
// _bootstrap.py and import.c):
//
// - `_find_spec` asks each finder inside `with _ImportLockContext()`: the
//   global import lock is held around every `finder.find_spec(...)`, so
//   no two threads are ever inside find_spec at once.
// - `_find_and_load` takes the module's lock (`with _ModuleLockManager
//   (name)`): up to 3.10 always, from 3.11 only when the module is missing
//   or its spec is `_initializing`; a module found there after the lock
//   is taken goes through `_lock_unlock_module`, which waits for the
//   import in progress and swallows a `_DeadlockError` (a concurrent
//   circular import accepts the half-initialised module).
// - The import statement (import.c's PyImport_ImportModuleLevelObject)
//   and `importlib.util.find_spec`'s parent import (`__import__`) do the
//   same check for a module in sys.modules whose spec is `_initializing`.
// - `_get_module_lock` takes the global lock briefly; a module lock whose
//   last reference goes runs a weakref callback that takes it too.
//
// The scheduling points (each a place the schedule may switch threads):
// before each step a thread runs, before each lock acquire and after each
// release (module and global), before and after each `exec_module`,
// after a thread is started and before a join. A single-threaded run has
// none: every one of them is behind `threaded<M>()`, constant false in a
// plain run, and the threaded state is never made.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <set>

#include "impsim/engine/engine.h"
#include "impsim/engine/stack_budget.h"

namespace impsim {

ScheduleOutcome ThreadedImport::run_threads(Scheduler& scheduler) {
  std::vector<SchedulePoint>* const points = thread_run_.points;
  thread_run_ = ThreadRun{};
  thread_run_.points = points;
  thread_run_.scheduler = &scheduler;
  interp_.locks = ImportLocks{};
  scheduler.set_stack_bytes(stack_budget(book_.limits));
  scheduler.stop_on_error(true);
  thread_run_.lock_rules = lock_rules_of(model_.axes.cpython);
  thread_run_.of_model.assign(model_.threads.size(), kNoThread);
  thread_run_.model_of = {-1};
  scheduler.on_resume([this](PyThreadId t) { install_thread(t); });
  thread_run_.next_point.assign(1, SchedulePoint{});
  thread_run_.global_site.assign(1, LockSite::None);
  if (thread_run_.points)
    scheduler.on_point(
        [this] { thread_run_.points->push_back(thread_run_.next_point[static_cast<size_t>(thread_run_.running)]); });
  if (book_.trace)
    scheduler.on_wait([this](const Scheduler::Wait& w, bool waiting) {
      // The waiting thread is the running one (Scheduler::block calls this
      // before it parks and once it is back): its own site.
      const LockSite site = thread_run_.global_site[static_cast<size_t>(thread_run_.running)];
      const ThreadWait tw{w.kind, w.kind == WaitKind::ModuleLock ? static_cast<NameId>(w.module) : kNoName, w.on,
                          w.kind == WaitKind::GlobalLock ? lock_site_name(site) : "",
                          w.kind == WaitKind::HookLock ? w.module : -1};
      if (waiting)
        book_.trace->wait_begin(engine(), tw);
      else
        book_.trace->wait_end(engine(), tw);
    });
  scheduler.name_threads_with([this](PyThreadId t) { return "thread " + thread_names()[static_cast<size_t>(t)]; });
  try {
    set_up();  // a scenario past --max-objects stops here
  } catch (LimitReached& l) {
    book_.limit = std::move(l);
    return {};
  }
  parked_.assign(1, PyThread{});  // main's slot: blank while main runs in py_thread_
  scheduler.spawn([this] { run_thread_program(model_.program); });
  // What the scheduler calls back refers to this engine: forgotten on
  // every way out, a ResourceError's (a thread's stack, memory) included.
  auto forget = [&] {
    install_thread(0);
    scheduler.on_resume(nullptr);
    scheduler.on_point(nullptr);
    scheduler.on_wait(nullptr);
    thread_run_.scheduler = nullptr;
  };
  ScheduleOutcome out;
  try {
    out = scheduler.run();
  } catch (...) {
    forget();
    throw;
  }
  for (size_t t = 0; t < scheduler.threads(); ++t)
    thread_run_.finished.push_back(scheduler.finished(static_cast<PyThreadId>(t)));
  // The scheduler knows its waits by id; the outcome carries the names.
  hang_waits_.clear();
  hang_at_.clear();
  if (!out.waits.empty()) {
    const auto t = static_cast<size_t>(out.waits.front().thread);
    const CStep* step = out.waits.front().thread == thread_run_.running ? py_thread_.step : parked_[t].step;
    if (step && step->pointer) hang_at_ = *step->pointer;
  }
  const std::vector<std::string> names = out.waits.empty() ? std::vector<std::string>{} : thread_names();
  for (const ScheduleOutcome::Waiting& w : out.waits) {
    HangWait h;
    h.thread = names[static_cast<size_t>(w.thread)];
    h.on = names[static_cast<size_t>(w.wait.on)];
    switch (w.wait.kind) {
      case WaitKind::GlobalLock:
        break;
      case WaitKind::ModuleLock:
        h.kind = HangWait::Kind::ModuleLock;
        h.lock = names_.text(static_cast<NameId>(w.wait.module));
        break;
      case WaitKind::HookLock:
        h.kind = HangWait::Kind::HookLock;
        h.lock = hook_lock_text(w.wait.module);
        break;
      case WaitKind::Join:
        h.kind = HangWait::Kind::Join;
        break;
    }
    hang_waits_.push_back(std::move(h));
  }
  // Threads left waiting are unwound while the engine they refer to is here.
  scheduler.cancel();
  forget();
  return out;
}

void ThreadedImport::run_thread_program(const std::vector<CStep>& program) {
  try {
    engine().run_steps<AnyRun>(program);
  } catch (PyError& e) {
    py_thread_.error = std::move(e);
  } catch (LimitReached& l) {
    if (!book_.limit) book_.limit = std::move(l);
    return;
  }
  // The thread's exception is discarded as it ends (threading's excepthook
  // has printed it): a _DeadlockError's references to its lock go with it,
  // the last one running the lock's callback here. Outside the handler: a
  // point may switch fibers.
  std::vector<NameId> refs = std::move(py_thread_.deadlock_refs);
  py_thread_.deadlock_refs.clear();
  for (NameId name : refs) drop_module_lock(name);
}

std::vector<std::string> ThreadedImport::thread_names() const {
  std::vector<std::string> out;
  for (int k : thread_run_.model_of) out.push_back(k < 0 ? "main" : model_.threads[static_cast<size_t>(k)].name);
  return out;
}

std::optional<PyError> ThreadedImport::thread_error(PyThreadId t) const {
  return t == thread_run_.running ? py_thread_.error : parked_[static_cast<size_t>(t)].error;
}

PyThread ThreadedImport::new_py_thread() const {
  PyThread p;
  p.resolving.assign(names_.size(), 0);
  p.hook_counters.by_object.assign(py_thread_.hook_counters.by_object.size(), Count(0));
  p.region_mark.assign(py_thread_.region_mark.size(), 0);
  return p;
}

void ThreadedImport::install_thread(PyThreadId t) {
  if (t == thread_run_.running) return;
  // The thread that ran last knows every finder object made so far.
  const size_t objects = py_thread_.hook_counters.by_object.size();
  std::swap(py_thread_, parked_[static_cast<size_t>(thread_run_.running)]);
  std::swap(py_thread_, parked_[static_cast<size_t>(t)]);
  thread_run_.running = t;
  if (py_thread_.hook_counters.by_object.size() < objects) {
    py_thread_.hook_counters.by_object.resize(objects, Count(0));
    py_thread_.region_mark.resize(objects, 0);
  }
}

void ThreadedImport::resumed() {
  if (book_.limit) [[unlikely]]
    throw LimitReached(*book_.limit);
}

const char* point_name(PointKind k) {
  switch (k) {
    case PointKind::Step:
      return "step";
    case PointKind::GlobalAcquire:
      return "global_acquire";
    case PointKind::GlobalRelease:
      return "global_release";
    case PointKind::ModuleAcquire:
      return "module_acquire";
    case PointKind::ModuleRelease:
      return "module_release";
    case PointKind::ExecBegin:
      return "exec_begin";
    case PointKind::ExecEnd:
      return "exec_end";
    case PointKind::Start:
      return "start";
    case PointKind::Join:
      return "join";
    case PointKind::HookAcquire:
      return "hook_acquire";
    case PointKind::HookRelease:
      return "hook_release";
  }
  return "step";
}

const char* lock_site_name(LockSite s) {
  switch (s) {
    case LockSite::None:
      return "";
    case LockSite::FindSpec:
      return "find_spec";
    case LockSite::ModuleLock:
      return "module_lock";
    case LockSite::LockGc:
      return "lock_gc";
  }
  return "";
}

void ThreadedImport::schedule_point(PointKind kind, NameId module, const std::string* pointer, int32_t target) {
  about_to_pass(kind, module, LockSite::None, pointer, target);
  thread_run_.scheduler->point();
  resumed();
}

void ThreadedImport::acquire_import_lock(LockSite site) {
  about_to_pass(PointKind::GlobalAcquire, kNoName, site);
  thread_run_.global_site[static_cast<size_t>(thread_run_.running)] = site;
  interp_.locks.imp_acquire_lock(*thread_run_.scheduler);
  resumed();
}

void ThreadedImport::release_import_lock(LockSite site) {
  about_to_pass(PointKind::GlobalRelease, kNoName, site);
  interp_.locks.imp_release_lock(*thread_run_.scheduler);
  resumed();
}

bool ThreadedImport::initializing(NameId name) const {
  if (!interp_.sys_modules.contains(name)) return false;
  const SpecId spec = interp_.records.module(interp_.sys_modules.get(name)).spec;
  return std::find(thread_run_.initializing.begin(), thread_run_.initializing.end(), spec) !=
         thread_run_.initializing.end();
}

// _get_module_lock: `_imp.acquire_lock()`, the lock looked up or made,
// `_imp.release_lock()`. The caller holds a reference from here on.
void ThreadedImport::_get_module_lock(NameId name) {
  acquire_import_lock(LockSite::ModuleLock);
  ++thread_run_.lock_refs[name];
  release_import_lock(LockSite::ModuleLock);
}

// The last reference to a module lock gone: the weakref callback
// `_get_module_lock` set runs, under the global lock.
void ThreadedImport::drop_module_lock(NameId name) {
  auto it = thread_run_.lock_refs.find(name);
  if (--it->second > 0) return;
  thread_run_.lock_refs.erase(it);
  acquire_import_lock(LockSite::LockGc);
  release_import_lock(LockSite::LockGc);
}

LockResult ThreadedImport::acquire_module_lock(NameId name) {
  about_to_pass(PointKind::ModuleAcquire, name);
  const LockResult r = interp_.locks.module_lock_acquire(*thread_run_.scheduler, name);
  resumed();
  return r;
}

void ThreadedImport::release_module_lock(NameId name) {
  about_to_pass(PointKind::ModuleRelease, name);
  interp_.locks.module_lock_release(*thread_run_.scheduler, name);
  resumed();
}

// For a trace: the cycle has_deadlock found when the running thread asked
// for `name`'s lock, each wait's holder waiting for the next lock.
std::vector<ThreadWait> ThreadedImport::deadlock_cycle(NameId name) const {
  const ImportLocks& locks = interp_.locks;
  std::vector<ThreadWait> cycle;
  std::set<PyThreadId> seen{thread_run_.running};
  std::optional<int32_t> m = static_cast<int32_t>(name);
  while (m) {
    const ModuleLock* lock = locks.module_lock(*m);
    const PyThreadId holder = lock ? lock->owner : kNoThread;
    cycle.push_back(ThreadWait{WaitKind::ModuleLock, static_cast<NameId>(*m), holder, "", -1});
    if (holder == kNoThread || !seen.insert(holder).second) break;
    m = locks.blocking_on(holder);
  }
  return cycle;
}

void ThreadedImport::module_lock_enter(NameId name) {
  _get_module_lock(name);
  if (acquire_module_lock(name) == LockResult::Deadlock) {
    if (book_.trace) book_.trace->deadlock(engine(), deadlock_cycle(name), /*swallowed=*/false);
    // The error's traceback keeps this thread's reference (PyThread::deadlock_refs).
    py_thread_.deadlock_refs.push_back(name);
    raise("_DeadlockError", fmt::format("deadlock detected by _ModuleLock('{}')", names_.text(name)));
  }
}

void ThreadedImport::module_lock_exit(NameId name) {
  release_module_lock(name);
  drop_module_lock(name);
}

// _lock_unlock_module: wait for an import in progress; a deadlock is
// swallowed ("Concurrent circular import, we'll accept a partially
// initialized module object").
void ThreadedImport::_lock_unlock_module(NameId name) {
  _get_module_lock(name);
  const LockResult r = acquire_module_lock(name);
  if (r == LockResult::Acquired) release_module_lock(name);
  if (r == LockResult::Deadlock && book_.trace) book_.trace->deadlock(engine(), deadlock_cycle(name), /*swallowed=*/true);
  drop_module_lock(name);
}

ModuleId ThreadedImport::_find_and_load_threaded(NameId name) {
  if (!thread_run_.lock_rules.find_and_load_always_locks && interp_.sys_modules.contains(name) && !initializing(name))
    return interp_.sys_modules.get(name);
  if (!book_.trace) return find_and_load_locked(name);
  book_.trace->find_and_load_begin(engine(), name);
  return try_finally([&] { return find_and_load_locked(name); },
                     [&](bool raised) { book_.trace->find_and_load_end(engine(), name, !raised); });
}

// _find_and_load's `with _ModuleLockManager(name):` and what follows it.
ModuleId ThreadedImport::find_and_load_locked(NameId name) {
  module_lock_enter(name);
  if (!interp_.sys_modules.contains(name)) {
    auto load = [&] { return _find_and_load_unlocked<AnyRun>(name); };
    if (book_.trace) book_.trace->import_begin(engine(), name);
    return try_finally_switching(load, [&](bool raised) {
      if (book_.trace) book_.trace->import_end(engine(), name, !raised);
      module_lock_exit(name);
    });
  }
  const ModuleId m = interp_.sys_modules.get(name);
  module_lock_exit(name);
  _lock_unlock_module(name);
  return m;
}

// _load_unlocked's `spec._initializing = True ... finally: False` around
// the module's execution, which other threads' imports wait on.
ModuleId ThreadedImport::_load_unlocked_threaded(SpecId spec, ModuleId module) {
  const NameId name = interp_.records.spec(spec).name;
  thread_run_.initializing.push_back(spec);
  auto initialized = [&] {
    thread_run_.initializing.erase(std::find(thread_run_.initializing.begin(), thread_run_.initializing.end(), spec));
  };
  return try_finally(
      [&] {
        interp_.sys_modules.set(name, module);
        schedule_point(PointKind::ExecBegin, name);
        // exec_module's return, by an exception too, is a point; it is
        // passed outside the handler, as no fiber may switch inside one
        // (the C++ runtime's record of the exceptions being handled is
        // per OS thread, not per fiber).
        std::optional<PyError> raised;
        try {
          exec_module<AnyRun>(interp_.records.spec(spec).loader, module);
        } catch (PyError& e) {
          raised = std::move(e);
        }
        schedule_point(PointKind::ExecEnd, name);
        if (raised) {
          interp_.sys_modules.erase(name);
          throw std::move(*raised);
        }
        if (!interp_.sys_modules.contains(name)) raise("KeyError", "'" + names_.text(name) + "'");
        interp_.sys_modules.move_to_end(name);
        return interp_.sys_modules.get(name);
      },
      initialized);
}

// import.c keeps the module object it found in sys.modules and returns that
// one after the wait: the body it waited for may have failed and taken the
// name out of sys.modules (or another module put there), which must not
// change what `__import__` hands back. From gh-143650 on, a module gone from
// sys.modules after the wait is imported again (`import_find_and_load`), so
// the caller gets the failed import's own error or a fresh module. The
// record stays: a threaded run collects nothing (collect.cc).
ModuleId ThreadedImport::import_name_threaded(NameId name) {
  if (!interp_.sys_modules.contains(name)) return _find_and_load_threaded(name);
  const ModuleId module = interp_.sys_modules.get(name);
  if (!initializing(name)) return module;
  _lock_unlock_module(name);
  if (thread_run_.lock_rules.rechecks_module_after_wait &&
      (!interp_.sys_modules.contains(name) || interp_.sys_modules.get(name) != module))
    return _find_and_load_threaded(name);
  return module;
}

void ThreadedImport::thread_start(int32_t at) {
  const auto k = static_cast<size_t>(at);
  if (thread_run_.of_model[k] != kNoThread) raise("RuntimeError", "threads can only be started once");
  parked_.push_back(new_py_thread());
  thread_run_.next_point.emplace_back();
  thread_run_.global_site.push_back(LockSite::None);
  const PyThreadId id = thread_run_.scheduler->spawn([this, k] { run_thread_program(model_.threads[k].program); });
  thread_run_.of_model[k] = id;
  thread_run_.model_of.push_back(static_cast<int>(k));
  schedule_point(PointKind::Start, kNoName, nullptr, at);
}

void ThreadedImport::thread_join(int32_t at) {
  // The point is the call of Thread.join, before its own checks: another
  // thread may start the target in between.
  schedule_point(PointKind::Join, kNoName, nullptr, at);
  const PyThreadId t = thread_run_.of_model[static_cast<size_t>(at)];
  if (t == kNoThread) raise("RuntimeError", "cannot join thread before it is started");
  if (t == thread_run_.running) raise("RuntimeError", "cannot join current thread");
  thread_run_.scheduler->join(t);
  resumed();
}

std::vector<ThreadEnd> ThreadedImport::thread_ends() const {
  std::vector<ThreadEnd> out;
  // A run without threads: the main thread alone, told only when it hangs.
  if (thread_run_.model_of.empty()) {
    if (!hang_waits_.empty()) out.push_back(ThreadEnd{"main", ThreadEnd::How::Waiting, {}, {}});
    return out;
  }
  const std::vector<std::string> names = thread_names();
  for (size_t t = 0; t < names.size(); ++t) {
    const std::optional<PyError> e = thread_error(static_cast<PyThreadId>(t));
    const bool done = t < thread_run_.finished.size() && thread_run_.finished[t];
    if (!done)
      out.push_back(ThreadEnd{names[t], ThreadEnd::How::Waiting, {}, {}});
    else if (e)
      out.push_back(ThreadEnd{names[t], ThreadEnd::How::Raised, e->type, e->message});
    else
      out.push_back(ThreadEnd{names[t], ThreadEnd::How::Returned, {}, {}});
  }
  for (size_t k = 0; k < model_.threads.size(); ++k)
    if (thread_run_.of_model[k] == kNoThread)
      out.push_back(ThreadEnd{model_.threads[k].name, ThreadEnd::How::NeverStarted, {}, {}});
  return out;
}

ThreadedOutcome ThreadedImport::threaded_outcome() const {
  ThreadedOutcome out;
  OutcomeEnd& end = out.end;
  end.threads = thread_ends();
  if (book_.limit) end.stopped_at = book_.limit->limit;
  end.hang = hang_waits_;
  for (NameId n : interp_.sys_modules.names()) end.sys_modules.push_back(names_.text(n));
  std::sort(end.sys_modules.begin(), end.sys_modules.end());
  const Counters c = counters();
  out.counters.asks = c.asks;
  out.counters.lookups = c.lookups;
  out.counters.toggles = c.toggles;
  if (hooks_used()) out.counters.searches = hook_counters().searches;
  return out;
}

}  // namespace impsim
