// The step engine: CPython 3.11's import system (importlib._bootstrap and
// importlib.util.find_spec) and the torch proxy finder, replayed call by call
// over the state in this file. Functions are named after what they mirror;
// import_system.cc holds CPython's side, proxy_finder.cc the finder's,
// program.cc the scenario steps.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "impsim/scenario/axes.h"
#include "impsim/scenario/counters.h"
#include "impsim/engine/memo.h"
#include "impsim/scenario/hook_counters.h"
#include "impsim/scenario/hook_language.h"
#include "impsim/model/model.h"
#include "impsim/engine/records.h"
#include "impsim/scenario/results.h"
#include "impsim/engine/sys_modules.h"
#include "impsim/engine/trace_sink.h"
#include "impsim/scenario/variant.h"

namespace impsim {


// step: every event replayed (the reference). fast: an ask whose whole state
// was seen before, and which then changed nothing but the counters, is
// answered from memory with its counter deltas (docs/performance.md).
enum class EngineKind { Step, Fast };

// No bound on simulated events.
inline constexpr uint64_t kNoEventLimit = UINT64_MAX;
inline constexpr uint64_t kDefaultMaxEvents = 500'000'000;

struct EngineLimits {
  // Simulated finder asks + toggles, replayed ones included: one meaning in
  // both engines, so the same flag stops both at the same event. Unset: 500
  // million for the step engine, no bound for the fast one (a replayed ask
  // costs nothing; max_work bounds what it does).
  std::optional<uint64_t> max_events;
  // Events actually stepped (not answered from memory): the work done.
  // Unset: no bound for the step engine (it steps every event, so
  // max_events bounds it), 500 million for the fast one.
  std::optional<uint64_t> max_work;
  // What an unset bound means (a field so tests can reach "the default was
  // hit" without stepping 500 million events).
  uint64_t default_bound = kDefaultMaxEvents;
  int max_lookup_depth = 200;         // nested _find_spec_for_specific_module
  int max_body_depth = 200;           // nested module bodies and calls
  int max_guard_depth = 5000;         // guards open at once (nest levels included)
  uint64_t max_steps = 10'000'000;    // scenario steps run (repeats counted), events or not
  // Hook scenarios: finder objects a run has besides the interpreter's four
  // (those "finders" declares and those `new` steps make: each is a row of
  // every report), and the length of sys.meta_path (every insert moves the
  // list, every search walks it).
  uint64_t max_objects = 10'000;
  uint64_t max_meta_path = 10'000;
};

// A Python exception in flight through the simulated interpreter.
struct PyError {
  std::string type;     // "ModuleNotFoundError", "KeyError", ...
  std::string message;  // str(exc)
  std::vector<std::string> traceback;  // step pointers, outermost first
  bool is_import_error() const { return type == "ImportError" || type == "ModuleNotFoundError"; }
};

// A resource bound was reached: the run stops where it is (exit status 3).
struct LimitReached {
  std::string limit;   // "max-events", "lookup-depth", "body-depth"
  std::string detail;
  std::vector<std::string> traceback;
};

// Python's `try: body() finally: cleanup()`. Only the simulated exception
// runs `finally`: a LimitReached stops the run where it is, skipping every
// `finally` (its state is reported as found), so no destructor-based guard.
// A cleanup taking a bool learns whether the body raised (for the trace).
template <class Body, class Cleanup>
decltype(auto) try_finally(Body&& body, Cleanup&& cleanup) {
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
    }
    finally(false);
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

// The torch proxy finder's state (TORCH_PROXY_FINDER and module globals).
struct FinderState {
  int64_t copies = 0;  // occurrences of P in sys.meta_path; they always lead the list
  SetId scope = kEmptySet;  // the value of _local_enabled_scope
  // TORCH_PROXY_FINDER = TorchProxyMetaFinder() runs _set_scope(None): the
  // finder starts global, with an empty scope.
  bool globally_enabled = true;
  // 04efefd: which set object _local_enabled_scope is. Its guard saves the
  // object, not a copy, so an in-place |= during the guard changes what the
  // guard restores (Engine::scope_objects_). Unused by b52ce17.
  int32_t scope_object = -1;
  SetId blocked = kEmptySet;
  std::vector<char> resolving;  // the fix's _resolving_names, by NameId
  std::vector<NameId> resolving_list;  // the same names, in the order they were added
};

// What a guard remembered on entry, for its exit.
struct GuardEntry {
  bool noop;
  bool enable;
  SetId old_scope;             // b52ce17: set(_local_enabled_scope), a copy
  int32_t old_scope_object;    // 04efefd: _local_enabled_scope itself
  bool old_global;
  GuardSite site;      // for a trace only
  GuardAction action;  // for a trace only
};

struct LabelTotals {
  Counters counters;
  Results results;
  HookCounters hooks;  // hook scenarios only
};

class Engine {
 public:
  Engine(const Model& model, Variant variant, EngineLimits limits = {}, EngineKind kind = EngineKind::Step);

  // Runs the program. Returns normally, or with error/limit set.
  void run();
  // The interpreter before the program's first line (run() starts with it;
  // tests call it to drive enable/disable/guard directly).
  void set_up();

  // The run's counters so far: what was replayed and folded, plus what was
  // stepped since (Engine::step_counts_).
  Counters counters() const;
  const std::vector<LabelTotals>& labels() const { return labels_; }
  const std::optional<PyError>& error() const { return error_; }
  const std::optional<LimitReached>& limit() const { return limit_; }
  const SysModules& sys_modules() const { return sys_modules_; }
  const FinderState& finder() const { return finder_; }
  const TorchCache& torch_cache() const { return cache_; }  // TORCH_MODULES_CACHE
  const SetTable& sets() const { return sets_; }  // what the finder's SetIds stand for
  const Module& module(ModuleId m) const { return records_.module(m); }
  const Model& model() const { return model_; }
  // The current value of a set object (04efefd's scope bookkeeping).
  SetId scope_object_value(int32_t object) const { return scope_objects_[static_cast<size_t>(object)].value; }
  // Simulated events (asks + toggles), replayed ones included.
  Count events() const { return events_ + replayed_events_; }
  // Fast engine: asks answered from memory, and how many states it remembers.
  uint64_t memo_hits() const { return memo_.hits(); }
  size_t memo_size() const { return memo_.size(); }
  // The largest len(sys.modules) a walk examined.
  uint64_t walk_peak() const { return walk_peak_; }
  // Name sets alive now: the scenario's, and the unions something still holds.
  size_t live_sets() const { return sets_.live(); }
  // Module, spec and loader records alive now / slots ever needed at once.
  size_t records_live() const { return records_.live(); }
  size_t record_slots() const { return records_.slots(); }
  // Collect once `n` new records were made since the last collection.
  // Tests set 0: collect at every chance, so every slot is reused at the
  // first chance, even when nothing new was made; at kMinCollect or
  // more the interval also grows with what is alive, so collecting costs
  // O(1) per record made.
  void set_collect_interval(uint64_t n) { collect_interval_ = n; }
  uint64_t lookup_depth() const { return depth_; }
  // The innermost step that last changed the number of copies in sys.meta_path.
  const CStep* copies_changed_by() const { return copies_changed_by_; }
  const CStep* current_step() const { return steps_.empty() ? nullptr : steps_.back(); }
  const std::vector<ModuleId>& frames() const { return frames_; }
  // Attaches an observer (not owned); nullptr detaches.
  void set_trace(TraceSink* sink) { trace_ = sink; }

  // --- CPython: importlib._bootstrap / importlib.util --------------------
  // The IMPORT_NAME opcode (`import a.b`): import a.b, then make sure `a` is there.
  void import_statement(NameId name);
  // _gcd_import / importlib.import_module: _find_and_load.
  ModuleId _find_and_load(NameId name);
  ModuleId _find_and_load_unlocked(NameId name);
  // _find_spec(name, path): ask each finder of the live sys.meta_path.
  SpecId _find_spec(NameId name, PathRef path);
  ModuleId _load_unlocked(SpecId spec);
  ModuleId module_from_spec(SpecId spec);
  // importlib.util.find_spec(name).
  SpecId find_spec(NameId name);
  // PathFinder.find_spec(name, path) over the scenario's tree.
  SpecId path_finder_find_spec(NameId name, PathRef path);

  // --- Finder objects (hook scenarios, model.hooks.used; sim/finders/) ---
  bool hooks_used() const { return hooks_; }
  const std::vector<FinderId>& meta_path() const { return meta_path_; }
  const HookCounters& hook_counters() const { return hook_counters_; }
  // The hooks' reentrancy guards now (trace, explore): the global_set and
  // thread_set guards' names, and one object's own set and flag.
  const std::vector<NameId>& global_finding() const { return global_finding_; }
  const std::vector<NameId>& thread_finding() const { return thread_finding_; }
  const std::vector<NameId>& object_in_progress(FinderId f) const { return hook_state_[static_cast<size_t>(f)].in_progress; }
  bool object_flag(FinderId f) const { return hook_state_[static_cast<size_t>(f)].flag; }
  // Every finder object of the run, by FinderId: the model's, then those `new` steps made.
  const std::vector<FinderObject>& finder_objects() const { return objects_; }
  // Attributes set on a module by a hook's wrapped loader (outcome marks).
  const std::vector<std::string>* module_attributes(ModuleId m) const;
  // _find_spec over a list of finder objects, live or snapshot (finders/meta_path.cc).
  SpecId _find_spec_over_objects(NameId name, PathRef path);
  // finder.find_spec(name, path) for any finder object.
  SpecId finder_find_spec(FinderId finder, NameId name, PathRef path);
  // BuiltinImporter.find_spec: the scenario's "builtin" names.
  SpecId builtin_importer_find_spec(NameId name);
  // A hook finder object's find_spec (finders/hook_finder.cc).
  SpecId hook_find_spec(FinderId finder, NameId name, PathRef path);
  // A legacy (find_module-only) hook reached by _find_spec up to 3.11 (finders/meta_path.cc).
  SpecId _find_spec_legacy(FinderId finder, NameId name, PathRef path);
  bool is_legacy_finder(FinderId finder) const;
  // serve from a table: the spec of `name` standing for module `target`.
  SpecId serve_from_table(int32_t hook, NameId name, NameId target);
  ModuleId import_module_by_name(NameId name);
  // sys.meta_path.insert(at, f) / .append(f) / .remove(f) (false: ValueError).
  void meta_path_insert(int64_t at, FinderId finder);
  void meta_path_append(FinderId finder);
  bool meta_path_remove(FinderId finder);
  // The hook's install() and uninstall(), by its policies.
  void install_hook(FinderId finder);
  void uninstall_hook(FinderId finder);
  // `ID = Hook()` run again: a new object of ID's hook, fresh state, named ID#k.
  void new_hook_object(FinderId declared);
  // The object a scenario's finder id names now: the newest `new` made, or the declared one.
  FinderId bound_object(FinderId declared) const {
    return declared >= 0 && static_cast<size_t>(declared) < newest_.size() ? newest_[static_cast<size_t>(declared)]
                                                                             : declared;
  }
  // del sys.modules[name] (and its submodules).
  void unload_modules(const std::vector<NameId>& names, bool submodules);

  // --- The proxy finder (python/paddle/compat/proxy.py) ------------------
  // TorchProxyMetaFinder.find_spec: one ask (the fast engine's memo first).
  SpecId proxy_find_spec(NameId name) {
    return fast_ && !trace_ ? proxy_find_spec_memo(name) : proxy_find_spec_stepped(name);
  }
  SpecId proxy_find_spec_stepped(NameId name);
  // TorchProxyMetaFinder.find_spec's tests, in its order: which branch answers.
  [[gnu::always_inline]] FindReason find_spec_branch(NameId name);
  // _find_spec_for_specific_module: one lookup.
  SpecId _find_spec_for_specific_module(NameId name, bool exec_enable, uint8_t mark);
  SpecId _find_spec_for_cached_torch_module(NameId name);
  SpecId _find_spec_for_torch_module(NameId name);
  // enable_torch_proxy(scope) / disable_torch_proxy().
  void enable(std::optional<SetId> scope);
  void disable();
  // use_torch_proxy_guard(enable, scope): entry and exit.
  // `site` only labels the guard in a trace.
  GuardEntry guard_enter(bool enable, std::optional<SetId> scope, GuardSite site = GuardSite::Step);
  [[gnu::cold, gnu::noinline]] void trace_guard_enter(GuardEntry& g, bool scope_asked, bool had);
  [[gnu::cold, gnu::noinline]] void trace_guard_exit(const GuardEntry& g);
  void guard_exit(const GuardEntry& g);
  // _modify_scope_of_torch_proxy.
  void _modify_scope(std::optional<SetId> scope);
  // TorchProxyMetaFinder._set_scope: a new set object (or None: global).
  void _set_scope(std::optional<SetId> scope);
  // _is_called_by_module_with_specific_dunder_attr.
  bool called_by_module_marked(uint8_t mark) const;

 private:
  // Loader protocol.
  ModuleId create_module(LoaderId loader, SpecId spec);  // kNoModule: default creation
  void exec_module(LoaderId loader, ModuleId module);
  // The proxy ask of _find_spec, with its trace events.
  SpecId traced_proxy_find_spec(NameId name, int64_t index, int64_t copies);
  // enable/disable in a hook scenario: sys.meta_path.insert(0, P), or
  // sys.meta_path.remove(P) (every copy under disable-all). Out of line and
  // cold: the Paddle engine's toggles only test hooks_.
  [[gnu::cold]] void proxy_moved_in_meta_path(bool inserted);
  // Hook scenarios: set-up, steps, and the actions of a claimed name.
  void set_up_hooks();
  void run_meta_path_step(const CStep& step);
  SpecId run_hook_actions(FinderId finder, const HookClass& hook, NameId name, PathRef path);
  SpecId hook_guarded(FinderId finder, const HookClass& hook, NameId name, PathRef path);
  void hook_exec_module(LoaderId loader, ModuleId module);
  ModuleId hook_create_module(LoaderId loader, SpecId spec);
  // One call of finder object `f` counted (finder_calls:ID), and in every
  // open labelled step: each step notes the objects called inside it, with
  // their count when first called, so a step costs what it calls, not a
  // copy of every object's count.
  void count_object_call(FinderId f) {
    const auto i = static_cast<size_t>(f);
    if (!hook_regions_.empty() && region_mark_[i] < hook_regions_.back().serial) [[unlikely]]
      note_object_in_regions(f);
    ++hook_counters_.by_object[i];
  }
  void note_object_in_regions(FinderId f);
  void check_meta_path_room();

  // Steps (program.cc).
  void run_steps(const std::vector<CStep>& steps);
  void run_step(const CStep& step);
  void run_step_once(const CStep& step);
  void run_guard_levels(const CStep& step, int64_t level);
  void run_body(ModuleId frame, const std::vector<CStep>& body, bool is_call);

  // `_local_enabled_scope |= scope`: in place, seen by every holder of the object.
  void scope_ior(SetId scope);
  // `slot = value` for a set the engine holds (the finder's scope and blocked
  // list, a 04efefd set object's value); the old value is released.
  void assign_set(SetId& slot, SetId value) {
    sets_.hold(value);
    release_set(slot);
    slot = value;
  }
  void release_set(SetId set) {
    if (sets_.release(set)) [[unlikely]]
      forget_covers(set);
  }
  void forget_covers(SetId set);
  // 04efefd's set objects: allocation, and one holder less.
  int32_t new_scope_object(SetId value);
  void release_scope_object(int32_t object);

  void count_event() {
    if (++events_ > step_limit_) [[unlikely]]
      event_limit_reached();
  }
  [[noreturn]] void event_limit_reached();
  uint64_t max_events_;  // limits_.max_events resolved for this engine kind
  uint64_t max_work_;
  // The events_ value past which count_event stops the run: max_work, or
  // what max_events leaves after the replayed events, whichever is less.
  void update_step_limit();
  // One toggle: one pass over sys.modules examining every name in it.
  void count_walk() {
    ++step_counts_.toggles;
    ++step_counts_.walks;
    // indexed-walk: a prefix index hands the toggle the torch names only.
    const uint64_t n = design_.indexed_walk ? sys_modules_.torch_count() : sys_modules_.size();
    last_walk_ = n;
    if (__builtin_add_overflow(step_counts_.comparisons, n, &step_counts_.comparisons)) [[unlikely]]
      comparisons_wrapped();
    if (n > walk_peak_) walk_peak_ = n;
    count_event();
  }
  void comparisons_wrapped();
  // SetTable::covers, remembered per (set, name): the scope and blocked
  // tests run on every ask, against a handful of distinct sets.
  bool covers(SetId set, NameId name) {
    if (set == kEmptySet) return false;
    if (static_cast<size_t>(set) < covers_.size()) {
      const std::vector<int8_t>& row = covers_[static_cast<size_t>(set)];
      if (!row.empty() && row[static_cast<size_t>(name)] >= 0) return row[static_cast<size_t>(name)] != 0;
    }
    return learn_covers(set, name);
  }
  bool learn_covers(SetId set, NameId name);
  void resolving_add(NameId name);
  void resolving_discard(NameId name);
  [[noreturn]] void raise(std::string type, std::string message);

  // The fast engine's ask (sim/engine/memo.cc): replayed from memo_ when its whole
  // state was seen before, else stepped and, if it changed nothing but the
  // counters, remembered.
  SpecId proxy_find_spec_memo(NameId name);
  MemoKey memo_key(NameId name) const;
  uint64_t epoch() const { return records_.version() + sys_modules_.version() + cache_.version(); }

  // Deepest lookup nesting inside a region (a labelled step, a remembered
  // ask); regions nest. open_region returns what close_region needs.
  uint64_t open_region() {
    const uint64_t outer = high_;
    high_ = depth_;
    return outer;
  }
  // The region's deepest lookup (its opening depth if none began inside).
  uint64_t close_region(uint64_t outer) {
    const uint64_t inner = high_;
    high_ = std::max(outer, inner);
    return inner;
  }
  void reach_depth(uint64_t depth) {
    if (depth > high_) high_ = depth;
    if (depth > peak_depth_) peak_depth_ = depth;
  }

  // Frees the modules, specs and loaders nothing can reach any more. Runs
  // only where no C++ frame holds a record that nothing else refers to: at
  // the start of a scenario step and before each proxy ask (sim/engine/collect.cc).
  void collect();
  void maybe_collect() {
    if (records_made() >= next_collect_) collect();
  }
  uint64_t records_made() const { return records_.made(); }

  // Records made the way the engine's callers spell them (Records::new_*).
  ModuleId new_module(NameId name, bool proxy, PathRef path, SpecId spec);
  SpecId new_spec(NameId name, LoaderId loader, PathRef search);
  LoaderId new_loader(Loader l);

  const Model& model_;
  const NameTable& names_;
  TraceSink* trace_ = nullptr;
  Variant variant_;
  Design design_;
  RevisionRules rules_;
  bool snapshot_meta_path_;  // _find_spec iterates list(sys.meta_path) (CPython 3.14)
  bool fast_;
  Memo memo_;
  Count replayed_events_ = 0;
  uint64_t copies_moves_ = 0;   // times the number of copies changed
  EngineLimits limits_;
  SetTable sets_;  // a copy: scope unions intern new sets while running
  std::vector<std::vector<int8_t>> covers_;  // by SetId, by NameId: -1 unknown, 0, 1
  // By NameId: the path PathFinder last searched in vain for the name (the
  // tree never changes, so a search there would miss again).
  std::vector<PathRef> path_miss_;
  struct ScopeObject {
    SetId value;
    int32_t holders;  // the finder, and the open guards that saved it
  };
  std::vector<ScopeObject> scope_objects_;  // 04efefd only; slots with no holder are reused
  std::vector<int32_t> free_scope_objects_;

  SysModules sys_modules_;
  TorchCache cache_;
  FinderState finder_;
  // Records nothing refers to any more are reused (collect, sim/engine/collect.cc).
  Records records_;
  uint64_t next_collect_ = 0;  // records made (ever) at which collect runs next
  static constexpr uint64_t kMinCollect = 16384;  // at most ~0.5 MB of garbage between collections
  uint64_t collect_interval_ = kMinCollect;
  std::vector<ModuleId> frames_;  // module bodies and calls on the Python stack
  std::vector<const CStep*> steps_;  // scenario steps running, outermost first
  const CStep* copies_changed_by_ = nullptr;

  // What the step engine counts, in machine words: one add each where a
  // Count would test for its big form first. Each is at most the events
  // stepped (a uint64 too) except comparisons, which add_comparisons folds
  // into totals_ before it wraps. counters() adds them to totals_.
  struct StepCounts {
    uint64_t asks = 0, suppressed = 0, lookups = 0, toggles = 0, walks = 0, comparisons = 0;
  };
  StepCounts step_counts_;
  Counters totals_;             // replayed deltas and wrapped comparisons
  uint64_t peak_depth_ = 0;     // the run's max_depth

  // Hook scenarios (model.hooks.used): sys.meta_path as a list of objects.
  bool hooks_ = false;
  std::vector<FinderId> meta_path_;
  std::vector<HookClass> hook_classes_;  // the model's, with the variant's fix
  HookCounters hook_counters_;
  LegacyFinders legacy_finders_ = LegacyFinders::ReachedWithWarning;  // the run's CPython's
  uint64_t search_depth_ = 0;       // current _find_spec nesting
  uint64_t hook_call_depth_ = 0;    // current nesting of hook find_spec calls
  uint64_t label_search_high_ = 0;  // deepest _find_spec since the innermost label began
  struct HookObjectState {
    std::vector<NameId> in_progress;  // object_set guard
    bool flag = false;                // flag and skip_self guards
  };
  // Both grow when a `new` step runs, which can happen inside any find_spec
  // (a module body): no reference into them is held across a call.
  std::vector<HookObjectState> hook_state_;  // by FinderId
  std::vector<FinderObject> objects_;        // by FinderId (finder_objects())
  std::vector<FinderId> newest_;             // by declared FinderId: what the id names now
  std::vector<int32_t> made_;                // by declared FinderId: objects `new` made for it
  std::vector<NameId> global_finding_;       // global_set guard: one set for every hook
  std::vector<NameId> thread_finding_;       // thread_set guard: the main thread's set
  struct HookLoader {
    LoaderId inner;   // HookWrapped: the loader it wraps
    int32_t hook;     // the hook class
    ModuleId module;  // HookServe: the module object served, or kNoModule
    NameId target;    // HookServe from a table: the module served (imported at create_module), or kNoName
  };
  std::vector<HookLoader> hook_loaders_;
  // The labelled steps running (outermost first), each with the objects
  // called since it began and their count then. A step's serial is larger
  // than any step's begun before it; region_mark_ (by FinderId) is the
  // serial of the latest step that noted the object, so a step has noted
  // object f exactly when region_mark_[f] >= its serial.
  struct HookRegion {
    uint64_t serial;
    std::vector<std::pair<FinderId, Count>> called;
  };
  std::vector<HookRegion> hook_regions_;
  std::vector<uint64_t> region_mark_;
  uint64_t next_region_ = 0;
  std::map<ModuleId, std::vector<std::string>> attributes_;
  uint64_t events_ = 0;         // events stepped
  uint64_t step_limit_ = 0;     // update_step_limit()
  uint64_t walk_peak_ = 0;
  uint64_t last_walk_ = 0;
  uint64_t depth_ = 0;       // current lookup nesting
  uint64_t high_ = 0;        // deepest lookup since the innermost region began
  int body_depth_ = 0;
  int guard_depth_ = 0;
  uint64_t steps_run_ = 0;
  std::vector<LabelTotals> labels_;
  std::optional<PyError> error_;
  std::optional<LimitReached> limit_;
};

// One proxy ask of _find_spec, as the trace sees it. Inline: it is the
// Paddle loop's every ask (out of line it cost the step engine 2%).
inline SpecId Engine::traced_proxy_find_spec(NameId name, int64_t index, int64_t copies) {
  maybe_collect();
  if (!trace_) return proxy_find_spec(name);
  trace_->ask_begin(*this, name, FinderKind::Proxy, index, copies);
  // Only a trace reads these (machine words: copying them is free).
  const StepCounts before = step_counts_;
  SpecId spec;
  try {
    spec = proxy_find_spec(name);
  } catch (PyError&) {
    // An ask that raises (the paddle twin is missing) still ends, for the trace.
    trace_->ask_end(*this, name, FinderKind::Proxy, AskAnswer::Raised);
    throw;
  }
  // Suppressed: this ask, and nothing nested in it, was answered by the fix.
  const bool suppressed = step_counts_.asks == before.asks + 1 && step_counts_.suppressed == before.suppressed + 1;
  trace_->ask_end(*this, name, FinderKind::Proxy,
                  spec != kNoSpec ? AskAnswer::Spec : suppressed ? AskAnswer::Suppressed : AskAnswer::None);
  return spec;
}


}  // namespace impsim
