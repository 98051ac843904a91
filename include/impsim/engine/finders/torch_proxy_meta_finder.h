// Paddle's torch proxy finder (python/paddle/compat/proxy.py): its
// find_spec (one ask), the lookup it makes for a name in scope
// (_find_spec_for_specific_module), enable_torch_proxy and
// disable_torch_proxy with the walks of sys.modules they make, the guard
// use_torch_proxy_guard, its scope and its set objects (04efefd), the fix's
// _resolving, and the fast engine's memo of whole asks (memo.cc).
//
// Its state is FinderState (proxy_finder.h); the functions are here, on
// the engine, because an ask calls back into CPython's import system
// (importlib.util.find_spec for the lookup, _find_and_load for a paddle
// twin): those calls go up through engine(). The hot path (the ask, the
// lookup, the guard, the toggles) is defined in proxy_hot_path.h so that
// _find_spec takes it inline; proxy_finder.cc holds the rest. A caller
// of the ask from outside the engine's .cc files includes proxy_hot_path.h
// too: the ask is always inlined, so its body must be in sight.
#pragma once

#include "impsim/engine/engine_context.h"

namespace impsim {

class TorchProxyMetaFinder : public EngineContext {

 public:
  using EngineContext::EngineContext;

  const FinderState& finder() const { return finder_; }
  const TorchCache& torch_cache() const { return finder_.cache; }  // TORCH_MODULES_CACHE
  const SetTable& sets() const { return finder_.sets; }            // what the finder's SetIds stand for
  // The current value of a set object (04efefd's scope bookkeeping).
  SetId scope_object_value(int32_t object) const { return finder_.scope_objects[static_cast<size_t>(object)].value; }
  // Fast engine: asks answered from memory, and how many states it remembers.
  uint64_t memo_hits() const { return book_.memo.hits(); }
  size_t memo_size() const { return book_.memo.size(); }
  // Name sets alive now: the scenario's, and the unions something still holds.
  size_t live_sets() const { return finder_.sets.live(); }
  // The names the fix's _resolving holds now, in the order added: this
  // thread's, or the finder's one set (after-global-set).
  const std::vector<NameId>& resolving_names() const {
    return design_.resolving_global ? finder_.resolving_list : py_thread_.resolving_list;
  }
  // Copies of Paddle's finder in sys.meta_path.
  int64_t copies() const { return interp_.meta_path.proxy_copies(); }
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

 protected:
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
  // The fast engine's ask (sim/engine/memo.cc): replayed from book_.memo when its whole
  // state was seen before, else stepped and, if it changed nothing but the
  // counters, remembered.
  SpecId proxy_find_spec_memo(NameId name);
  MemoKey memo_key(NameId name) const;
};

}  // namespace impsim
