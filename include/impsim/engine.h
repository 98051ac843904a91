// The step engine: CPython 3.11's import system (importlib._bootstrap and
// importlib.util.find_spec) and the torch proxy finder, replayed call by call
// over the state in this file. Functions are named after what they mirror;
// import_system.cc holds CPython's side, proxy_finder.cc the finder's,
// program.cc the scenario steps.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "impsim/axes.h"
#include "impsim/arena.h"
#include "impsim/counters.h"
#include "impsim/model.h"
#include "impsim/results.h"
#include "impsim/sys_modules.h"
#include "impsim/trace.h"
#include "impsim/variant.h"

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

enum Mark : uint8_t { kMarkEnabled = 1, kMarkDisabled = 2 };

// Where a package's __path__ points: a tree entry, an empty list, or no
// __path__ at all (not a package).
using PathRef = int32_t;
inline constexpr PathRef kNoPath = -2;
inline constexpr PathRef kEmptyPath = -1;

using SpecId = int32_t;
using LoaderId = int32_t;
inline constexpr SpecId kNoSpec = -1;

struct Module {
  NameId name;
  bool proxy;      // a ProxyModule made by the finder's TorchProxyLoader
  PathRef path;    // __path__
  uint8_t marks;   // __enable_torch_proxy__ / __disable_torch_proxy__ in its __dict__
  SpecId spec;     // __spec__
  // Provenance, for verdicts: the innermost step running when the module
  // was created and when its last mark was set (nullptr: before the program).
  const CStep* created_by = nullptr;
  const CStep* marked_by = nullptr;
};

enum class LoaderKind : uint8_t {
  Source,    // a tree file (SourceFileLoader): exec runs the entry's body
  Empty,     // a preloaded module's loader: exec does nothing
  Proxy,     // TorchProxyLoader over a paddle module
  Cached,    // CachedTorchModuleLoader (b52ce17): create_module returns the module captured with the spec
  CachedByName,  // CachedTorchModuleLoader (04efefd): create_module returns TORCH_MODULES_CACHE[name] then
  Specific,  // SpecificModuleLoader wrapping another loader
};

struct Loader {
  LoaderKind kind;
  bool exec_enable;  // Specific: the guard around exec enables the proxy
  uint8_t mark;      // Specific: the mark set after exec
  int32_t ref;       // Source: tree entry; Proxy, Cached: module; CachedByName: name; Specific: inner loader
};

struct Spec {
  NameId name;
  LoaderId loader;
  PathRef search;  // submodule_search_locations (kNoPath: None)
};

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
};

struct LabelTotals {
  Counters counters;
  Results results;
};

class Engine {
 public:
  Engine(const Model& model, Variant variant, EngineLimits limits = {}, EngineKind kind = EngineKind::Step);

  // Runs the program. Returns normally, or with error/limit set.
  void run();
  // The interpreter before the program's first line (run() starts with it;
  // tests call it to drive enable/disable/guard directly).
  void set_up();

  const Counters& counters() const { return counters_; }
  const std::vector<LabelTotals>& labels() const { return labels_; }
  const std::optional<PyError>& error() const { return error_; }
  const std::optional<LimitReached>& limit() const { return limit_; }
  const SysModules& sys_modules() const { return sys_modules_; }
  const FinderState& finder() const { return finder_; }
  const Module& module(ModuleId m) const { return modules_[m]; }
  const Model& model() const { return model_; }
  // The current value of a set object (04efefd's scope bookkeeping).
  SetId scope_object_value(int32_t object) const { return scope_objects_[static_cast<size_t>(object)].value; }
  // Simulated events (asks + toggles), replayed ones included.
  Count events() const { return events_ + replayed_events_; }
  // Fast engine: asks answered from memory, and how many states it remembers.
  uint64_t memo_hits() const { return memo_hits_; }
  size_t memo_size() const { return memo_.size(); }
  uint64_t walk_peak() const { return walk_peak_; }
  // Name sets alive now: the scenario's, and the unions something still holds.
  size_t live_sets() const { return sets_.live(); }
  // Module, spec and loader records alive now / slots ever needed at once.
  size_t records_live() const { return modules_.live() + specs_.live() + loaders_.live(); }
  size_t record_slots() const { return modules_.slots() + specs_.slots() + loaders_.slots(); }
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
  void set_trace(TraceSink* sink) { trace_ = sink; }  // largest len(sys.modules) a walk examined

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

  // --- The proxy finder (python/paddle/compat/proxy.py) ------------------
  // TorchProxyMetaFinder.find_spec: one ask (the fast engine's memo first).
  SpecId proxy_find_spec(NameId name);
  SpecId proxy_find_spec_stepped(NameId name);
  // _find_spec_for_specific_module: one lookup.
  SpecId _find_spec_for_specific_module(NameId name, bool exec_enable, uint8_t mark);
  SpecId _find_spec_for_cached_torch_module(NameId name);
  SpecId _find_spec_for_torch_module(NameId name);
  // enable_torch_proxy(scope) / disable_torch_proxy().
  void enable(std::optional<SetId> scope);
  void disable();
  // use_torch_proxy_guard(enable, scope): entry and exit.
  GuardEntry guard_enter(bool enable, std::optional<SetId> scope);
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
  void count_walk();
  // SetTable::covers, remembered per (set, name): the scope and blocked
  // tests run on every ask, against a handful of distinct sets.
  bool covers(SetId set, NameId name);
  void resolving_add(NameId name);
  void resolving_discard(NameId name);
  [[noreturn]] void raise(std::string type, std::string message);

  // The fast engine's memo of pure asks.
  struct MemoKey {
    NameId name;
    int64_t copies;
    uint64_t scope;        // SetTable::identity: ids of freed sets are reused
    int32_t scope_object;  // 04efefd: which set object (-1 under b52ce17)
    bool global;
    uint64_t blocked;
    uint64_t epoch;         // engine + sys.modules + cache versions
    uint64_t frames;        // identity of the frame stack
    std::vector<NameId> resolving;  // sorted
    bool operator==(const MemoKey&) const = default;
  };
  struct MemoKeyHash {
    size_t operator()(const MemoKey& k) const;
  };
  struct MemoValue {
    Counters delta;
    Count events;
    uint64_t rel_depth;  // deepest lookup nesting below the ask
    bool moved_copies;   // the number of copies changed (and came back) inside
    SpecId result;
  };
  MemoKey memo_key(NameId name) const;
  // epoch() never decreases, so an entry of an older epoch can never match
  // again: dropping those keeps the memo to one epoch's asks instead of
  // growing with the run (docs/performance.md, memory).
  void forget_stale_memo() {
    if (memo_epoch_ == epoch()) return;
    if (!memo_.empty()) memo_ = {};
    memo_epoch_ = epoch();
  }
  uint64_t epoch() const { return epoch_ + sys_modules_.version() + cache_.version(); }

  // Frees the modules, specs and loaders nothing can reach any more. Runs
  // only where no C++ frame holds a record that nothing else refers to: at
  // the start of a scenario step and before each proxy ask (sim/collect.cc).
  void collect();
  void maybe_collect() {
    if (records_made() >= next_collect_) collect();
  }
  uint64_t records_made() const { return modules_.allocated() + specs_.allocated() + loaders_.allocated(); }

  // Every change of a module, spec, loader or mark goes through these or
  // new_*: the version they bump is part of every memo key, so a write that
  // skipped it would let the fast engine answer from a state that is gone.
  Module& write_module(ModuleId m) {
    ++epoch_;
    return modules_[m];
  }
  Spec& write_spec(SpecId s) {
    ++epoch_;
    return specs_[s];
  }
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
  std::unordered_map<MemoKey, MemoValue, MemoKeyHash> memo_;
  uint64_t memo_hits_ = 0;
  uint64_t memo_epoch_ = 0;     // the epoch every entry of memo_ was made in
  Count replayed_events_ = 0;
  uint64_t epoch_ = 0;          // bumped by every change of modules, specs, loaders, marks
  uint64_t frames_id_ = 0;      // identity of the current frame stack
  uint64_t next_frames_id_ = 0;
  uint64_t fast_high_ = 0;      // deepest lookup since the innermost memo recording began
  uint64_t copies_moves_ = 0;   // times the number of copies changed
  EngineLimits limits_;
  SetTable sets_;  // a copy: scope unions intern new sets while running
  std::vector<std::vector<int8_t>> covers_;  // by SetId, by NameId: -1 unknown, 0, 1
  std::vector<std::pair<PathRef, SpecId>> path_cache_;  // by NameId: PathFinder's last miss
  struct ScopeObject {
    SetId value;
    int32_t holders;  // the finder, and the open guards that saved it
  };
  std::vector<ScopeObject> scope_objects_;  // 04efefd only; slots with no holder are reused
  std::vector<int32_t> free_scope_objects_;

  SysModules sys_modules_;
  TorchCache cache_;
  FinderState finder_;
  // Records nothing refers to any more are reused (collect, sim/collect.cc).
  Arena<Module> modules_;
  Arena<Spec> specs_;
  Arena<Loader> loaders_;
  uint64_t next_collect_ = 0;  // records made (ever) at which collect runs next
  static constexpr uint64_t kMinCollect = 16384;  // at most ~0.5 MB of garbage between collections
  uint64_t collect_interval_ = kMinCollect;
  std::vector<ModuleId> frames_;  // module bodies and calls on the Python stack
  std::vector<const CStep*> steps_;  // scenario steps running, outermost first
  const CStep* copies_changed_by_ = nullptr;

  Counters counters_;
  uint64_t events_ = 0;         // events stepped
  uint64_t step_limit_ = 0;     // update_step_limit()
  uint64_t walk_peak_ = 0;
  uint64_t last_walk_ = 0;
  uint64_t depth_ = 0;       // current lookup nesting
  uint64_t label_high_ = 0;  // deepest lookup since the innermost label began
  int body_depth_ = 0;
  int guard_depth_ = 0;
  uint64_t steps_run_ = 0;
  std::vector<LabelTotals> labels_;
  std::optional<PyError> error_;
  std::optional<LimitReached> limit_;
};

}  // namespace impsim
