// What every part of the engine shares: the run's fixed facts, the state
// (the parts of docs/architecture.md, "The engine's state": Interpreter,
// the running PyThread, Paddle's FinderState, the HookFinders, the
// Bookkeeping, a threaded run's ThreadRun), the run's mode, and the
// bookkeeping every part does (events, regions of lookup depth, records).
//
// The engine is parts stacked on this context, as lld's passes share its
// Ctx:
//
//   EngineContext         state, mode, bookkeeping        (this file)
//   TorchProxyMetaFinder  Paddle's finder                 (finders/torch_proxy_meta_finder.h)
//   FinderObjects         sys.meta_path's other entries   (finders/finder_objects.h)
//   ImportSystem          importlib._bootstrap            (import_system.h)
//   ThreadedImport        the import locks, threads       (threaded_import.h)
//   Engine                the program's steps, the API    (engine.h)
//
// Each part is a class with the functions of one thing the real process
// has, named after them, and sees the context and the parts below it.
// Python's import system is one recursion, though: a finder's lookup
// calls importlib.util.find_spec, which asks the finders again. A part
// calls a part above it through engine(), which is this object, typed as
// the whole: a static cast, no pointer to follow, so the hot path reaches
// every piece of state at a fixed offset as it did when the engine was
// one class. Why not parts that each hold a reference to a shared Ctx:
// that is a load on every access of the innermost loop, and the lookups
// are that loop.
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
#include "impsim/engine/lazy_imports.h"
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
  std::string at;  // the innermost step it hung in (set as it unwinds through the steps)
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

class Engine;

class EngineContext {
 public:
  EngineContext(const Model& model, Variant variant, EngineLimits limits, EngineKind kind);
  // The run's counters so far: what was replayed and folded, plus what was
  // stepped since (EngineContext::py_thread_.counts).
  Counters counters() const;
  // Simulated events (asks + toggles), replayed ones included.
  Count events() const { return book_.stepped_events() + book_.replayed_events; }
  // Module, spec and loader records alive now / slots ever needed at once.
  size_t records_live() const { return interp_.records.live(); }
  size_t record_slots() const { return interp_.records.slots(); }
  // The innermost step that last changed the number of copies in sys.meta_path.
  const CStep* copies_changed_by() const {
    return book_.copies_moves != book_.copies_moves_seen ? py_thread_.step : book_.copies_changed_by;
  }
  const CStep* current_step() const { return py_thread_.step; }

 protected:
  // The whole engine, for a part's call to a part above it (a finder asking
  // CPython's import system again) and for what a trace sink is handed.
  Engine& engine();
  const Engine& engine() const;
  void check_meta_path_room();
  // CPython's RecursionError where the real interpreter runs out of frames
  // (recursion.h).
  [[noreturn]] void recursion_error(const char* suffix);
  void enter_body_depth(const char* what);
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
  [[noreturn]] void raise(std::string type, std::string message);
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
  LazyImports lazy_;          // PEP 810: the modules' globals, sys.lazy_modules, the modes
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
    // By PyThreadId: where that thread is taking the global lock (a trace's
    // waits). One per thread: a thread woken from its wait that finds the
    // lock taken again waits again, by then after others have taken it
    // at sites of their own.
    std::vector<LockSite> global_site;
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
  // The step the first waiting thread (main, when it waits) hung in: a
  // failure's line. Not part of the outcome, which groups by the waits.
  std::string hang_at_;
};

}  // namespace impsim
