// The step engine: CPython 3.11's import system (importlib._bootstrap and
// importlib.util.find_spec), Paddle's torch proxy finder and the hook
// finders, replayed call by call. Engine holds the functions, each named
// after what it mirrors (bootstrap.cc CPython's side, finders/ the
// finders', program.cc the scenario steps); the state they work on is in
// the parts below, one job each: the Interpreter (what CPython shares
// between threads), the running PyThread, Paddle's FinderState, the
// HookFinders, and the run's Bookkeeping.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "impsim/engine/bookkeeping.h"
#include "impsim/engine/finders/hook_finders.h"
#include "impsim/engine/finders/proxy_finder.h"
#include "impsim/engine/interpreter.h"
#include "impsim/engine/memo.h"
#include "impsim/engine/py_thread.h"
#include "impsim/engine/records.h"
#include "impsim/engine/run_mode.h"
#include "impsim/engine/scheduler.h"
#include "impsim/engine/sys_modules.h"
#include "impsim/engine/threaded_outcome.h"
#include "impsim/engine/trace_sink.h"
#include "impsim/model/model.h"
#include "impsim/scenario/axes.h"
#include "impsim/scenario/counters.h"
#include "impsim/scenario/hook_counters.h"
#include "impsim/scenario/hook_language.h"
#include "impsim/scenario/results.h"
#include "impsim/scenario/variant.h"

namespace impsim {

// step: every event replayed (the reference). fast: an ask whose whole state
// was seen before, and which then changed nothing but the counters, is
// answered from memory with its counter deltas (docs/performance.md).
enum class EngineKind { Step, Fast };

// Python's `try: body() finally: cleanup()`. Only the simulated exception
// runs `finally`: a LimitReached stops the run where it is, skipping every
// `finally` (its state is reported as found), so no destructor-based guard.
// A cleanup taking a bool learns whether the body raised (for the trace).
// Always inlined: out of line, each lookup paid a call and a frame for it.
template <class Body, class Cleanup>
[[gnu::always_inline]] inline decltype(auto) try_finally(Body&& body, Cleanup&& cleanup) {
  auto finally = [&](bool raised) {
    if constexpr (std::is_invocable_v<Cleanup&, bool>)
      cleanup(raised);
    else
      cleanup();
  };
  if constexpr (std::is_void_v<decltype(body())>) {
    try {
      body();
    } catch (PyError&) {
      finally(true);
      throw;
    } finally(false);
  } else {
    auto result = [&] {
      try {
        return body();
      } catch (PyError&) {
        finally(true);
        throw;
      }
    }();
    finally(false);
    return result;
  }
}

// A run without threads whose only thread waits for a lock it holds itself
// (a hook's `threading.Lock` acquired again by its owner): the process
// never ends. Thrown past every `finally`, as LimitReached is, so the state
// is reported as the hang left it; `wait` says who waits for what.
struct Hang {
  HangWait wait;
};

// The scheduling points a threaded run has (threads.cc), as the real
// interpreter's are named by tools/lib/crosscheck/threads_real.py.
enum class PointKind : uint8_t {
  Step,
  GlobalAcquire,
  GlobalRelease,
  ModuleAcquire,
  ModuleRelease,
  ExecBegin,
  ExecEnd,
  Start,
  Join,
  HookAcquire,  // a hook's own lock (HookClass::lock)
  HookRelease
};
const char* point_name(PointKind k);
// Where the global import lock is taken: around a finder's find_spec, in
// _get_module_lock, or in the callback of a module lock that died.
enum class LockSite : uint8_t { None, FindSpec, ModuleLock, LockGc };
const char* lock_site_name(LockSite s);

struct SchedulePoint {
  PyThreadId thread = kNoThread;
  PointKind kind = PointKind::Step;
  LockSite site = LockSite::None;
  NameId module = kNoName;
  int32_t target = -1;                   // start, join: the thread's index in model.threads
  const std::string* pointer = nullptr;  // step: the step's JSON pointer
};

// try_finally for a threaded run, whose cleanup may switch threads (a
// lock release is a scheduling point): the cleanup runs outside the catch
// block. No fiber may switch inside one: the C++ runtime keeps the
// exceptions being handled per OS thread, so a `throw;` after another
// fiber caught its own exception would rethrow that one.
template <class Body, class Cleanup>
decltype(auto) try_finally_switching(Body&& body, Cleanup&& cleanup) {
  auto finally = [&](bool raised) {
    if constexpr (std::is_invocable_v<Cleanup&, bool>)
      cleanup(raised);
    else
      cleanup();
  };
  std::exception_ptr raised;
  if constexpr (std::is_void_v<decltype(body())>) {
    try {
      body();
    } catch (PyError&) {
      raised = std::current_exception();
    } finally(raised != nullptr);
    if (raised) std::rethrow_exception(raised);
  } else {
    std::optional<std::decay_t<decltype(body())>> result;
    try {
      result.emplace(body());
    } catch (PyError&) {
      raised = std::current_exception();
    } finally(raised != nullptr);
    if (raised) std::rethrow_exception(raised);
    return std::decay_t<decltype(body())>(std::move(*result));  // a value, not a reference to the local
  }
}

class Engine {
 public:
  Engine(const Model& model, Variant variant, EngineLimits limits = {}, EngineKind kind = EngineKind::Step);

  // Runs the program. Returns normally, or with error/limit set. A
  // scenario with threads runs them under the default schedule (each
  // thread goes on until it blocks or ends).
  void run();
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
  // nothing. thread_results() is the same as thread_end_text words it
  // ("main: ok", "w: waiting", "w: never started").
  std::vector<ThreadEnd> thread_ends() const;
  std::vector<std::string> thread_results() const;
  const std::vector<HangWait>& hang_waits() const { return hang_waits_; }
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
  // The interpreter before the program's first line (run() starts with it;
  // tests call it to drive enable/disable/guard directly).
  void set_up();

  // The run's counters so far: what was replayed and folded, plus what was
  // stepped since (Engine::py_thread_.counts).
  Counters counters() const;
  const std::vector<LabelTotals>& labels() const { return book_.labels; }
  const std::optional<PyError>& error() const { return py_thread_.error; }
  const std::optional<LimitReached>& limit() const { return book_.limit; }
  const SysModules& sys_modules() const { return interp_.sys_modules; }
  const FinderState& finder() const { return finder_; }
  const TorchCache& torch_cache() const { return finder_.cache; }  // TORCH_MODULES_CACHE
  const SetTable& sets() const { return finder_.sets; }            // what the finder's SetIds stand for
  const Module& module(ModuleId m) const { return interp_.records.module(m); }
  const Model& model() const { return model_; }
  // The current value of a set object (04efefd's scope bookkeeping).
  SetId scope_object_value(int32_t object) const { return finder_.scope_objects[static_cast<size_t>(object)].value; }
  // Simulated events (asks + toggles), replayed ones included.
  Count events() const { return book_.stepped_events() + book_.replayed_events; }
  // Fast engine: asks answered from memory, and how many states it remembers.
  uint64_t memo_hits() const { return book_.memo.hits(); }
  size_t memo_size() const { return book_.memo.size(); }
  // The largest len(sys.modules) a walk examined.
  uint64_t walk_peak() const { return book_.walk_peak; }
  // Name sets alive now: the scenario's, and the unions something still holds.
  size_t live_sets() const { return finder_.sets.live(); }
  // Module, spec and loader records alive now / slots ever needed at once.
  size_t records_live() const { return interp_.records.live(); }
  size_t record_slots() const { return interp_.records.slots(); }
  // Collect once `n` new records were made since the last collection.
  // Tests set 0: collect at every chance, so every slot is reused at the
  // first chance, even when nothing new was made; at kMinCollect or
  // more the interval also grows with what is alive, so collecting costs
  // O(1) per record made.
  void set_collect_interval(uint64_t n) { interp_.collect_interval = n; }
  uint64_t lookup_depth() const { return py_thread_.depth; }
  // The innermost step that last changed the number of copies in sys.meta_path.
  const CStep* copies_changed_by() const {
    return book_.copies_moves != book_.copies_moves_seen ? py_thread_.step : book_.copies_changed_by;
  }
  const CStep* current_step() const { return py_thread_.step; }
  const std::vector<ModuleId>& frames() const { return py_thread_.frames; }
  // The Python thread running now.
  const PyThread& thread() const { return py_thread_; }
  // The names the fix's _resolving holds now, in the order added: this
  // thread's, or the finder's one set (after-global-set).
  const std::vector<NameId>& resolving_names() const {
    return design_.resolving_global ? finder_.resolving_list : py_thread_.resolving_list;
  }
  // Attaches an observer (not owned); nullptr detaches.
  void set_trace(TraceSink* sink) { book_.trace = sink; }

  // --- CPython: importlib._bootstrap / importlib.util --------------------
  // The IMPORT_NAME opcode (`import a.b`): import a.b, then make sure `a` is there.
  // The functions of the hot path take the run's mode M (run_mode.h);
  // called from elsewhere, they run as AnyRun.
  template <class M = AnyRun>
  void import_statement(NameId name);
  // _gcd_import / importlib.import_module: _find_and_load.
  template <class M = AnyRun>
  ModuleId _find_and_load(NameId name);
  template <class M = AnyRun>
  ModuleId _find_and_load_unlocked(NameId name);
  // _find_spec(name, path): ask each finder of sys.meta_path.
  template <class M = AnyRun>
  SpecId _find_spec(NameId name, PathRef path);
  // Every finder object's class: the interpreter's own three and Paddle's
  // finder have fixed ids, a hook's is looked up.
  FinderClass class_of(FinderId f) const {
    static_assert(static_cast<FinderId>(FinderClass::Builtin) == kBuiltinImporter &&
                  static_cast<FinderId>(FinderClass::Frozen) == kFrozenImporter &&
                  static_cast<FinderId>(FinderClass::Path) == kPathFinder &&
                  static_cast<FinderId>(FinderClass::Proxy) == kProxyFinder);
    return f <= kProxyFinder ? static_cast<FinderClass>(f) : interp_.objects[static_cast<size_t>(f)].cls;
  }
  template <class M = AnyRun>
  ModuleId _load_unlocked(SpecId spec);
  ModuleId module_from_spec(SpecId spec);
  // importlib.util.find_spec(name).
  template <class M = AnyRun>
  SpecId find_spec(NameId name);
  // importlib.reload(sys.modules[name]).
  template <class M = AnyRun>
  void reload(NameId name);
  // _bootstrap._exec(spec, module): a reload's exec of the found loader on
  // the module it already has.
  template <class M = AnyRun>
  void _exec(SpecId spec, ModuleId module);
  // PathFinder.find_spec(name, path) over the scenario's tree. The tests
  // that answer None without a search are inline, always (with a
  // TalliedRun's copies calling it too, GCC stopped inlining it in the
  // plain run's): a probe for a missing name asks again and again with the
  // same path.
  [[gnu::always_inline]] SpecId path_finder_find_spec(NameId name, PathRef path) {
    if (names_.parent(name) == kNoName) {
      if (path != kNoPath) return kNoSpec;  // never happens: top-level searches pass None
    } else if (path < 0 || interp_.path_miss[static_cast<size_t>(name)] == path) {
      return kNoSpec;  // None or [], or the path where this name was last missed
    }
    return path_finder_search(name, path);
  }
  SpecId path_finder_search(NameId name, PathRef path);

  // --- Finder objects (hook scenarios, model.hooks.used; sim/finders/) ---
  bool hooks_used() const { return hooks_; }
  const MetaPath& meta_path() const { return interp_.meta_path; }
  // Copies of Paddle's finder in sys.meta_path.
  int64_t copies() const { return interp_.meta_path.proxy_copies(); }
  // The threads' hook counters summed.
  HookCounters hook_counters() const;
  // The hooks' reentrancy guards now (trace, explore): the global_set and
  // thread_set guards' names, and one object's own set and flag.
  const std::vector<NameId>& global_finding() const { return hook_finders_.global_finding; }
  const std::vector<NameId>& thread_finding() const { return py_thread_.thread_finding; }
  const std::vector<NameId>& object_in_progress(FinderId f) const {
    return hook_finders_.state[static_cast<size_t>(f)].in_progress;
  }
  bool object_flag(FinderId f) const { return hook_finders_.state[static_cast<size_t>(f)].flag; }
  // What a hang calls the lock object `f` takes ("the threading.Lock of class virtualenv").
  const std::string& hook_lock_name(FinderId f) const {
    return hook_finders_.locks[static_cast<size_t>(hook_finders_.lock_of[static_cast<size_t>(f)])].name;
  }
  // The same by the lock's index (ThreadWait::lock).
  const std::string& hook_lock_text(int32_t l) const { return hook_finders_.locks[static_cast<size_t>(l)].name; }
  // Every finder object of the run, by FinderId: the model's, then those `new` steps made.
  const std::vector<FinderObject>& finder_objects() const { return interp_.objects; }
  // Attributes set on a module by a hook's wrapped loader, and how many
  // times each (outcome marks).
  const std::vector<HookFinders::Attribute>* module_attributes(ModuleId m) const;
  // finder.find_spec(name, path) for any finder object.
  SpecId finder_find_spec(FinderId finder, NameId name, PathRef path);
  // BuiltinImporter.find_spec: the scenario's "builtin" names.
  SpecId builtin_importer_find_spec(NameId name);
  // A hook finder object's find_spec (finders/hook_finder.cc).
  SpecId hook_find_spec(FinderId finder, NameId name, PathRef path);
  // A legacy (find_module-only) hook reached by _find_spec up to 3.11 (finders/finder_objects.cc).
  SpecId _find_spec_legacy(FinderId finder, NameId name, PathRef path);
  bool is_legacy_finder(FinderId finder) const;
  // serve from a table: the spec of `name` standing for module `target`.
  SpecId serve_from_table(int32_t hook, NameId name, NameId target, const HookAction& serve);
  ModuleId import_module_by_name(NameId name);
  // sys.meta_path.insert(at, f) / .append(f) / .remove(f) (false: ValueError).
  void meta_path_insert(int64_t at, FinderId finder);
  void meta_path_append(FinderId finder);
  bool meta_path_remove(FinderId finder);
  // The hook's install() and uninstall(), by its policies.
  void install_hook(FinderId finder);
  void uninstall_hook(FinderId finder);
  // `ID = Hook()` run again: a new object of ID's hook, fresh state, named
  // ID#k; of a new class (a re-run module body defines it again) unless
  // `same_class`.
  void new_hook_object(FinderId declared, bool same_class = false);
  // A hook's own lock for `object` (empty: the class declared), made anew.
  int32_t new_hook_lock(int32_t hook, const std::string& object);
  // The object a scenario's finder id names now: the newest `new` made, or the declared one.
  FinderId bound_object(FinderId declared) const {
    return declared >= 0 && static_cast<size_t>(declared) < hook_finders_.newest.size()
               ? hook_finders_.newest[static_cast<size_t>(declared)]
               : declared;
  }
  // A step's "ID#k": the k-th object `new` made for ID (KeyError, as the
  // crosscheck's table of objects raises, before it is made).
  FinderId numbered_object(FinderId declared, int32_t k);
  // del sys.modules[name] (and its submodules).
  void unload_modules(const std::vector<NameId>& names, bool submodules);

  // --- The proxy finder (python/paddle/compat/proxy.py) ------------------
  // TorchProxyMetaFinder.find_spec: one ask (the fast engine's memo first).
  template <class M = AnyRun>
  SpecId proxy_find_spec(NameId name) {
    return fast<M>() && !traced<M>() ? proxy_find_spec_memo(name) : proxy_find_spec_stepped<M>(name);
  }
  template <class M = AnyRun>
  [[gnu::always_inline]] SpecId proxy_find_spec_stepped(NameId name);
  // TorchProxyMetaFinder.find_spec's tests, in its order: which branch answers.
  template <class M>
  [[gnu::always_inline]] FindReason find_spec_branch(NameId name);
  // _find_spec_for_specific_module: one lookup.
  template <class M = AnyRun>
  [[gnu::always_inline]] SpecId _find_spec_for_specific_module(NameId name, bool exec_enable, uint8_t mark);
  template <class M>
  [[gnu::always_inline]] void lookup_exit(NameId name, const GuardEntry& g, SpecId spec);
  template <class M = AnyRun>
  SpecId _find_spec_for_cached_torch_module(NameId name);
  template <class M = AnyRun>
  SpecId _find_spec_for_torch_module(NameId name);
  // enable_torch_proxy(scope) / disable_torch_proxy().
  template <class M = AnyRun>
  void enable(std::optional<SetId> scope);
  template <class M = AnyRun>
  void disable();
  template <class M>
  void trace_toggle(bool enable);
  // The walks of sys.modules a toggle makes, when there is anything to move.
  template <class M>
  [[gnu::noinline]] void _swap_torch_modules_to_cache();
  [[gnu::noinline]] void _clear_torch_proxy_modules();
  [[gnu::noinline]] void _copy_torch_modules_from_cache();
  // use_torch_proxy_guard(enable, scope): entry and exit.
  // `site` only labels the guard in a trace.
  template <class M = AnyRun>
  GuardEntry guard_enter(bool enable, std::optional<SetId> scope, GuardSite site = GuardSite::Step);
  [[gnu::cold, gnu::noinline]] void trace_guard_enter(GuardEntry& g, bool scope_asked, bool had);
  [[gnu::cold, gnu::noinline]] void trace_guard_exit(const GuardEntry& g);
  template <class M>
  void trace_guard_begin(GuardEntry& g, bool scope_asked, bool had);
  template <class M>
  void trace_guard_end(const GuardEntry& g);
  template <class M = AnyRun>
  void guard_exit(const GuardEntry& g);
  // _modify_scope_of_torch_proxy.
  template <class M = AnyRun>
  void _modify_scope(std::optional<SetId> scope);
  // TorchProxyMetaFinder._set_scope: a new set object (or None: global).
  template <class M = AnyRun>
  void _set_scope(std::optional<SetId> scope);
  // _is_called_by_module_with_specific_dunder_attr.
  bool called_by_module_marked(uint8_t mark) const;

 private:
  // Loader protocol.
  ModuleId create_module(LoaderId loader, SpecId spec);  // kNoModule: default creation
  template <class M = AnyRun>
  void exec_module(LoaderId loader, ModuleId module);
  // The proxy ask of _find_spec, with its trace events.
  template <class M>
  SpecId traced_proxy_find_spec(NameId name, int64_t index, const MetaPath& meta_path);
  // Hook scenarios: set-up, steps, and the actions of a claimed name.
  void set_up_hooks();
  void run_meta_path_step(const CStep& step);
  SpecId run_hook_actions(FinderId finder, const HookClass& hook, NameId name, PathRef path);
  SpecId hook_guarded(FinderId finder, const HookClass& hook, NameId name, PathRef path);
  SpecId hook_guard_test(FinderId finder, const HookClass& hook, NameId name, PathRef path, bool lock_after_test);
  // `with lock:` of the object's own lock (HookClass::lock) around `body`.
  template <class Body>
  SpecId with_hook_lock(FinderId finder, NameId name, Body&& body, HookLockSite site = HookLockSite::FindSpec) {
    hook_lock_acquire(finder, name, site);
    return try_finally_switching(body, [&] { hook_lock_release(finder, name, site); });
  }
  // `body` under that lock where the hook takes it at `site` (the install,
  // the wrapper's after-exec work: HookLock::install, after_exec), as it is
  // otherwise.
  template <class Body>
  void at_hook_lock_site(bool taken, FinderId finder, NameId name, HookLockSite site, Body&& body) {
    if (!taken) return body();
    with_hook_lock(
        finder, name,
        [&] {
          body();
          return kNoSpec;
        },
        site);
  }
  // `lock.acquire()` / `lock.release()`: in a run with threads, each a
  // scheduling point, and an acquire waits while another thread (or, for a
  // Lock, its owner) holds it; in a run without, an owner acquiring its
  // Lock again hangs (Hang).
  void hook_lock_acquire(FinderId finder, NameId name, HookLockSite site);
  void hook_lock_release(FinderId finder, NameId name, HookLockSite site);
  void hook_exec_module(LoaderId loader, ModuleId module);
  ModuleId hook_create_module(LoaderId loader, SpecId spec);
  void run_create_module(const std::vector<HookAction>& imports, NameId name);
  // One call of finder object `f` counted (finder_calls:ID), and in every
  // open labelled step: each step notes the objects called inside it, with
  // their count when first called, so a step costs what it calls, not a
  // copy of every object's count.
  void count_object_call(FinderId f) {
    const auto i = static_cast<size_t>(f);
    if (!py_thread_.hook_regions.empty() && py_thread_.region_mark[i] < py_thread_.hook_regions.back().serial)
        [[unlikely]]
      note_object_in_regions(f);
    ++py_thread_.hook_counters.by_object[i];
  }
  void note_object_in_regions(FinderId f);
  void check_meta_path_room();
  const MetaPath& begin_search();
  void end_search();
  // CPython's RecursionError where the real interpreter runs out of frames
  // (recursion.h).
  [[noreturn]] void recursion_error(const char* suffix);

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

  // Steps (program.cc).
  template <class M>
  void run_program();
  template <class M = AnyRun>
  void run_steps(const std::vector<CStep>& steps);
  template <class M>
  void run_step(const CStep& step);
  template <class M>
  void run_step_once(const CStep& step);
  template <class M>
  void run_guard_levels(const CStep& step, int64_t level);
  template <class M = AnyRun>
  void run_body(ModuleId frame, const std::vector<CStep>& body, bool is_call);
  void enter_body_depth(const char* what);

  // `_local_enabled_scope |= scope`: in place, seen by every holder of the object.
  template <class M>
  void scope_ior(SetId scope);
  // `slot = value` for a set the engine holds (the finder's scope and blocked
  // list, a 04efefd set object's value); the old value is released.
  [[gnu::always_inline]] void assign_set(SetId& slot, SetId value) {
    // The same set again (a guard restoring the scope it found): holding
    // it and letting it go would leave every count as it is.
    if (value == slot) return;
    // The empty set is the scope of every global enable and is pinned:
    // a hold of it is nothing, and this test folds away where the compiler
    // sees the constant (`_set_scope(None)`).
    if (value != kEmptySet) finder_.sets.hold(value);
    release_set(slot);
    slot = value;
  }
  [[gnu::always_inline]] void release_set(SetId set) {
    if (finder_.sets.release(set)) [[unlikely]]
      forget_covers(set);
  }
  void forget_covers(SetId set);
  // 04efefd's set objects: allocation, and one holder less.
  int32_t new_scope_object(SetId value);
  void release_scope_object(int32_t object);

  // The number of copies of Paddle's finder in sys.meta_path changed.
  void moved_copies() { ++book_.copies_moves; }
  // The step running changes: the moves made since the last change were
  // the leaving step's (see Bookkeeping::copies_changed_by).
  void enter_step(const CStep* step) {
    book_.copies_changed_by = copies_changed_by();
    book_.copies_moves_seen = book_.copies_moves;
    py_thread_.step = step;
  }
  void count_event() {
    if (--book_.events_left < 0) [[unlikely]]
      event_limit_reached();
  }
  [[noreturn]] void event_limit_reached();
  // The number of stepped events past which count_event stops the run:
  // max_work, or what max_events leaves after the replayed events,
  // whichever is less.
  void update_step_limit();
  // One toggle: one pass over sys.modules examining every name in it.
  template <class M>
  void count_walk() {
    ++py_thread_.counts.toggles;  // and a walk (PyThread::counters)
    // indexed-walk: a prefix index hands the toggle the torch names only.
    const uint64_t n = design<M>().indexed_walk ? interp_.sys_modules.torch_count() : interp_.sys_modules.size();
    if (traced<M>()) book_.last_walk = n;  // what the trace's toggle line prints
    if (__builtin_add_overflow(py_thread_.counts.comparisons, n, &py_thread_.counts.comparisons)) [[unlikely]]
      comparisons_wrapped();
    if (n > book_.walk_peak) book_.walk_peak = n;
    count_event();
  }
  void comparisons_wrapped();
  // SetTable::covers, remembered per (set, name) (finders/covers_memo.h).
  bool covers(SetId set, NameId name) {
    const int8_t known = finder_.covers.get(set, name);
    if (known >= 0) [[likely]]
      return known != 0;
    return learn_covers(set, name);
  }
  // a | b, with a row of the covers memo for the id it may be new under.
  SetId unite_sets(SetId a, SetId b) {
    const SetId s = finder_.sets.unite(a, b);
    finder_.covers.widen(finder_.sets.ids());
    return s;
  }
  bool learn_covers(SetId set, NameId name);
  // The fix's _resolving: this thread's threading.local, or the finder's
  // one set (after-global-set).
  template <class M>
  bool resolving_has(NameId name) const;
  template <class M>
  void resolving_add(NameId name);
  template <class M>
  void resolving_discard(NameId name);
  [[noreturn]] void raise(std::string type, std::string message);

  // The fast engine's ask (sim/engine/memo.cc): replayed from book_.memo when its whole
  // state was seen before, else stepped and, if it changed nothing but the
  // counters, remembered.
  SpecId proxy_find_spec_memo(NameId name);
  MemoKey memo_key(NameId name) const;
  uint64_t epoch() const { return interp_.records.version() + interp_.sys_modules.version() + finder_.cache.version(); }

  // Deepest lookup nesting inside a region (a labelled step, a remembered
  // ask); regions nest. open_region returns what close_region needs.
  uint64_t open_region() {
    const uint64_t outer = py_thread_.high;
    py_thread_.high = py_thread_.depth;
    return outer;
  }
  // The region's deepest lookup (its opening depth if none began inside).
  uint64_t close_region(uint64_t outer) {
    const uint64_t inner = py_thread_.high;
    py_thread_.high = std::max(outer, inner);
    return inner;
  }
  // high never passes peak_depth (a region opens at a depth already
  // reached), so a depth that does not pass high passes neither.
  void reach_depth(uint64_t depth) {
    if (depth <= py_thread_.high) return;
    py_thread_.high = depth;
    if (depth > py_thread_.peak_depth) py_thread_.peak_depth = depth;
  }
  // A lookup went deeper than any since the region began: the peaks, and
  // --max-lookup-depth (a depth at or below high passed it already).
  [[gnu::noinline]] void reach_lookup_depth(uint64_t depth);

  // Frees the modules, specs and loaders nothing can reach any more. Runs
  // only where no C++ frame holds a record that nothing else refers to: at
  // the start of a scenario step and before each proxy ask (sim/engine/collect.cc).
  void collect();
  void maybe_collect() {
    if (records_made() >= interp_.next_collect) collect();
  }
  uint64_t records_made() const { return interp_.records.made(); }

  // Records made the way the engine's callers spell them (Records::new_*).
  ModuleId new_module(NameId name, bool proxy, PathRef path, SpecId spec);
  SpecId new_spec(NameId name, LoaderId loader, PathRef search);
  LoaderId new_loader(Loader l);

  // The run's fixed facts as mode M knows them: constants in a plain run,
  // which has none of the four below (a TalliedRun is traced).
  template <class M>
  static bool unless_plain(bool now) {
    if constexpr (M::plain)
      return false;
    else
      return now;
  }
  // A TalliedRun is traced; a PlainRun is not.
  template <class M>
  bool traced() const {
    if constexpr (M::plain)
      return M::tallied;
    else
      return book_.trace != nullptr;
  }
  template <class M>
  bool hooks() const {
    return unless_plain<M>(hooks_);
  }
  template <class M>
  bool fast() const {
    return unless_plain<M>(fast_);
  }
  template <class M>
  bool threaded() const {
    return unless_plain<M>(thread_run_.scheduler != nullptr);
  }
  template <class M>
  bool search_extras() const {
    return unless_plain<M>(search_extras_);
  }
  // Where a TalliedRun counts its frequent events (asks, P's decisions,
  // lookups, toggles, guards): the sink's tally, never null there, so the
  // calls of the sink those events make in any other run fold away. nullptr
  // in any other mode: the sink hears every event.
  template <class M>
  TraceTally* tally() const {
    if constexpr (M::tallied) {
      TraceTally* t = book_.tally;
      if (t == nullptr) __builtin_unreachable();
      return t;
    } else {
      return nullptr;
    }
  }
  // Whether this run, but for its trace, would be a plain one.
  bool plain_but_traced() const;
  template <class M>
  const Design& design() const {
    if constexpr (M::plain)
      return M::design;
    else
      return design_;
  }
  template <class M>
  const RevisionRules& rules() const {
    if constexpr (M::plain)
      return M::rules;
    else
      return rules_;
  }
  // Whether this run is a plain one (run_mode.h).
  bool plain_run() const;

  // What is fixed for the whole run.
  const Model& model_;
  const NameTable& names_;
  Variant variant_;
  Design design_;
  RevisionRules rules_;
  bool snapshot_meta_path_;  // _find_spec iterates list(sys.meta_path) (CPython 3.14)
  RecursionRule recursion_;  // where this CPython raises RecursionError
  bool fast_;
  bool hooks_ = false;                            // a hook scenario (model.hooks.used): sys.meta_path as finder objects
  bool search_extras_ = false;                    // hooks_ or snapshot_meta_path_: _find_spec's begin_search
  static constexpr uint64_t kMinCollect = 16384;  // at most ~0.5 MB of garbage between collections

  // The parts, each one job (docs/architecture.md, "The engine's state").
  Interpreter interp_;        // sys.modules, sys.meta_path, the records
  PyThread py_thread_;        // the Python thread running now
  FinderState finder_;        // Paddle's finder
  HookFinders hook_finders_;  // the hook finders declared as data
  Bookkeeping book_;          // limits, events, labels, the trace sink, the memo
  // The other Python threads, their state set aside while py_thread_ runs, by
  // PyThreadId (the running thread's slot is blank): counters() sums them all.
  // A deque: a thread started while others are suspended must not move
  // them. A suspended thread's frames still refer to its state (the
  // sys.meta_path snapshot its _find_spec walks), and a vector, growing,
  // would copy every PyThread (its deque of snapshots makes its move
  // throwing) and free the originals under those frames.
  std::deque<PyThread> parked_;
  // A threaded run's own state (threads.cc); scheduler is nullptr in any other run.
  struct ThreadRun {
    Scheduler* scheduler = nullptr;
    PyThreadId running = 0;
    std::vector<PyThreadId> of_model;     // by Model::threads index: its thread once started
    std::vector<int> model_of;            // by PyThreadId: its Model::threads index, -1 for main
    std::vector<SpecId> initializing;     // specs whose module is being executed (_initializing)
    std::map<NameId, int64_t> lock_refs;  // module locks something still refers to
    std::vector<bool> finished;           // by PyThreadId, once the run is over
    std::vector<SchedulePoint>* points = nullptr;
    std::vector<SchedulePoint> next_point;  // by PyThreadId: the point it waits to pass
    LockRules lock_rules;
    LockSite global_site = LockSite::None;  // where the global lock is being taken (a trace's waits)
  };
  ThreadRun thread_run_;
  // A traced run that is plain but for its trace: the TalliedRun of its
  // design and revision (run_mode.h) that each search and step begun once
  // the sink has a tally runs as. Empty in any other run.
  struct Tallied {
    SpecId (Engine::*find_spec)(NameId, PathRef) = nullptr;
    void (Engine::*run_step)(const CStep&) = nullptr;
  };
  Tallied tallied_;
  std::string schedule_;
  std::optional<std::string> bad_schedule_;
  std::vector<HangWait> hang_waits_;
};

// One proxy ask of _find_spec, as the trace sees it. Inline: it is the
// Paddle loop's every ask (out of line it cost the step engine 2%).
template <class M>
inline SpecId Engine::traced_proxy_find_spec(NameId name, int64_t index, const MetaPath& meta_path) {
  maybe_collect();
  if (!traced<M>()) return proxy_find_spec<M>(name);
  if (TraceTally* t = tally<M>()) {
    // A TalliedRun: counted, and closed whether it raises or not.
    t->open(TraceTally::Ask);
    ++t->ticks;
    SpecId spec;
    try {
      spec = proxy_find_spec<M>(name);
    } catch (PyError&) {
      t->close();
      throw;
    }
    t->close();
    return spec;
  }
  book_.trace->ask_begin(*this, name, FinderClass::Proxy, kProxyFinder, index, meta_path);
  // Only a trace reads these (machine words: copying them is free).
  const StepCounts before = py_thread_.counts;
  SpecId spec;
  try {
    spec = proxy_find_spec<M>(name);
  } catch (PyError&) {
    // An ask that raises (the paddle twin is missing) still ends, for the trace.
    book_.trace->ask_end(*this, name, FinderClass::Proxy, AskAnswer::Raised);
    throw;
  }
  // Suppressed: this ask, and nothing nested in it, was answered by the fix.
  const bool suppressed =
      py_thread_.counts.asks == before.asks + 1 && py_thread_.counts.suppressed == before.suppressed + 1;
  book_.trace->ask_end(*this, name, FinderClass::Proxy,
                       spec != kNoSpec ? AskAnswer::Spec
                       : suppressed    ? AskAnswer::Suppressed
                                       : AskAnswer::None);
  return spec;
}

}  // namespace impsim
