// The torch proxy finder's hot path: its ask (TorchProxyMetaFinder.find_spec),
// its lookup (_find_spec_for_specific_module), the guard and the toggles
// a lookup runs, defined in a header so that _find_spec (bootstrap.cc)
// takes them inline.
//
// A lookup is a recursion: _find_spec asks the finder, whose lookup calls
// importlib.util.find_spec, which runs _find_spec again. Compiled in two
// files, each turn of it made three calls, each with its own entry and
// exit (registers saved and restored): about a fifth of a lookup's
// instructions. Here the ask and the lookup are inlined into _find_spec,
// so a turn is one call, and the guard's entry and exit inline into it as
// they did into the lookup before. proxy_finder.cc keeps the rest of the
// finder, and the instances of these that the steps call.
#pragma once

#include <algorithm>

#include "impsim/engine/engine.h"

namespace impsim {

template <class M>
inline bool TorchProxyMetaFinder::resolving_has(NameId name) const {
  return design<M>().resolving_global ? finder_.resolving[name] : py_thread_.resolving[name];
}

template <class M>
inline void TorchProxyMetaFinder::resolving_add(NameId name) {
  const bool global = design<M>().resolving_global;
  (global ? finder_.resolving : py_thread_.resolving)[name] = 1;
  (global ? finder_.resolving_list : py_thread_.resolving_list).push_back(name);
}

template <class M>
inline void TorchProxyMetaFinder::resolving_discard(NameId name) {
  const bool global = design<M>().resolving_global;
  (global ? finder_.resolving : py_thread_.resolving)[name] = 0;
  auto& l = global ? finder_.resolving_list : py_thread_.resolving_list;
  l.erase(std::find(l.begin(), l.end(), name));
}

// The tests of TorchProxyMetaFinder.find_spec (the fix's resolving check
// first), each branch's cache test included.
template <class M>
inline FindReason TorchProxyMetaFinder::find_spec_branch(NameId name) {
  if (design<M>().resolving_fix && resolving_has<M>(name)) return FindReason::Suppressed;
  if (covers(finder_.blocked, name)) return FindReason::Blocked;
  if (covers(finder_.scope, name)) return FindReason::InScope;
  if (!names_.is_torch(name)) return FindReason::NotTorch;
  if (called_by_module_marked(kMarkDisabled))
    return finder_.cache.contains(name) ? FindReason::CallerDisabledCached : FindReason::CallerDisabled;
  if (finder_.globally_enabled) return FindReason::ProxiedGlobal;
  if (!called_by_module_marked(kMarkEnabled))
    return finder_.cache.contains(name) ? FindReason::NotEnabledCached : FindReason::NotEnabled;
  return FindReason::ProxiedCaller;
}

// TorchProxyMetaFinder.find_spec
template <class M>
inline SpecId TorchProxyMetaFinder::proxy_find_spec_stepped(NameId name) {
  ++py_thread_.counts.asks;
  count_event();
  const FindReason why = find_spec_branch<M>(name);
  if (traced<M>()) [[unlikely]] {
    if (TraceTally* t = tally<M>())
      t->note();
    else
      book_.trace->decide(engine(), name, why);
  }
  switch (why) {
    case FindReason::Suppressed:
      ++py_thread_.counts.suppressed;
      return kNoSpec;
    case FindReason::Blocked:
    case FindReason::InScope: {
      // One call of the lookup, inlined once: a blocked name's body runs
      // with the proxy disabled and is marked so, one in scope enabled.
      const bool in_scope = why == FindReason::InScope;
      return _find_spec_for_specific_module<M>(name, /*exec_enable=*/in_scope, in_scope ? kMarkEnabled : kMarkDisabled);
    }
    case FindReason::CallerDisabledCached:
    case FindReason::NotEnabledCached:
      return _find_spec_for_cached_torch_module<M>(name);
    case FindReason::ProxiedGlobal:
    case FindReason::ProxiedCaller:
      return _find_spec_for_torch_module<M>(name);
    case FindReason::NotTorch:
    case FindReason::CallerDisabled:
    case FindReason::NotEnabled:
      break;
  }
  return kNoSpec;
}

// _find_spec_for_specific_module: the real spec, looked up with the proxy
// disabled, its loader wrapped so the body runs under a guard and is marked.
// Its `finally` is spelled out rather than a try_finally: the closures of
// that helper stayed on the stack across the recursive call, a dozen stores
// and reloads a lookup.
template <class M>
inline SpecId TorchProxyMetaFinder::_find_spec_for_specific_module(NameId name, bool exec_enable, uint8_t mark) {
  ++py_thread_.counts.lookups;
  const uint64_t depth = ++py_thread_.depth;
  if (depth > py_thread_.high) [[unlikely]]
    reach_lookup_depth(depth);
  const bool fix = design<M>().resolving_fix;
  if (traced<M>()) {
    if (TraceTally* t = tally<M>()) {
      t->open(TraceTally::Lookup);
    } else {
      book_.trace->lookup_begin(engine(), name, depth, mark);
    }
  }
  GuardEntry g = guard_enter<M>(false, std::nullopt, GuardSite::Lookup);
  if (fix) resolving_add<M>(name);
  SpecId spec;
  try {
    spec = engine().find_spec<M>(name);
  } catch (PyError&) {
    if (fix) resolving_discard<M>(name);
    lookup_exit<M>(name, g, kNoSpec);
    throw;
  }
  if (fix) resolving_discard<M>(name);
  if (spec != kNoSpec) {
    LoaderId original = interp_.records.spec(spec).loader;
    interp_.records.write_spec(spec).loader = new_loader(Loader{LoaderKind::Specific, exec_enable, mark, original});
  }
  lookup_exit<M>(name, g, spec);
  return spec;
}

// The lookup's `finally`: the guard's exit, then the depth it entered at.
template <class M>
[[gnu::always_inline]] inline void TorchProxyMetaFinder::lookup_exit(NameId name, const GuardEntry& g, SpecId spec) {
  guard_exit<M>(g);
  if (traced<M>()) {
    if (TraceTally* t = tally<M>()) {
      t->close();
    } else {
      book_.trace->lookup_end(engine(), name, py_thread_.depth, spec != kNoSpec);
    }
  }
  --py_thread_.depth;
}

// _modify_scope_of_torch_proxy (its warnings are not modelled).
template <class M>
inline void TorchProxyMetaFinder::_modify_scope(std::optional<SetId> scope) {
  if (copies() == 0 || finder_.globally_enabled) {
    _set_scope<M>(scope);
    return;
  }
  if (!scope) {
    finder_.globally_enabled = true;
    return;
  }
  scope_ior<M>(*scope);
}

// TorchProxyMetaFinder._set_scope: `scope or set()` is a set object of its
// own (enable_torch_proxy's _parse_scope made it).
template <class M>
inline void TorchProxyMetaFinder::_set_scope(std::optional<SetId> scope) {
  assign_set(finder_.scope, scope.value_or(kEmptySet));
  finder_.globally_enabled = !scope.has_value();
  if (rules<M>().guard_saves_copy) return;
  release_scope_object(finder_.scope_object);
  finder_.scope_object = new_scope_object(finder_.scope);
}

template <class M>
inline void TorchProxyMetaFinder::scope_ior(SetId scope) {
  assign_set(finder_.scope, unite_sets(finder_.scope, scope));
  if (!rules<M>().guard_saves_copy)
    assign_set(finder_.scope_objects[static_cast<size_t>(finder_.scope_object)].value, finder_.scope);
}

// enable_torch_proxy: _swap_torch_modules_to_cache, the scope update, then
// sys.meta_path.insert(0, P) whether or not P is there already.
// 04efefd's swap caches and deletes only real torch modules: proxy modules
// stay in sys.modules.
template <class M>
inline void TorchProxyMetaFinder::enable(std::optional<SetId> scope) {
  if (traced<M>() && !tally<M>()) [[unlikely]]
    book_.trace->toggle_begin(engine(), true);
  count_walk<M>();
  if (interp_.sys_modules.torch_count() > 0) _swap_torch_modules_to_cache<M>();
  _modify_scope<M>(scope);
  if (!design<M>().idempotent_enable || copies() == 0) {
    moved_copies();
    if (hooks<M>()) [[unlikely]]
      check_meta_path_room();
    interp_.meta_path.insert_proxy_at_head();
  }
  if (traced<M>()) trace_toggle<M>(true);
}

// disable_torch_proxy: removes ONE occurrence, clears proxy modules and puts
// the cached real torch modules back.
template <class M>
inline void TorchProxyMetaFinder::disable() {
  if (copies() == 0) return;  // only a warning
  if (design<M>().disable_all)
    interp_.meta_path.remove_all(kProxyFinder);
  else
    interp_.meta_path.remove(kProxyFinder);
  moved_copies();
  if (traced<M>() && !tally<M>()) [[unlikely]]
    book_.trace->toggle_begin(engine(), false);
  count_walk<M>();
  if (interp_.sys_modules.torch_count() > 0) _clear_torch_proxy_modules();
  if (!finder_.cache.order().empty()) _copy_torch_modules_from_cache();
  if (traced<M>()) trace_toggle<M>(false);
}

// A guard's entry and exit, for the trace: a TalliedRun counts them.
template <class M>
[[gnu::always_inline]] inline void TorchProxyMetaFinder::trace_guard_begin(GuardEntry& g, bool scope_asked, bool had) {
  if (TraceTally* t = tally<M>())
    t->line(TraceTally::Guard);
  else
    trace_guard_enter(g, scope_asked, had);
}
template <class M>
[[gnu::always_inline]] inline void TorchProxyMetaFinder::trace_guard_end(const GuardEntry& g) {
  if (TraceTally* t = tally<M>())
    t->line(TraceTally::Guard);
  else
    trace_guard_exit(g);
}

// A toggle's trace event: its walk, in the tally past the sink's cut.
template <class M>
[[gnu::always_inline]] inline void TorchProxyMetaFinder::trace_toggle(bool enable) {
  if (TraceTally* t = tally<M>()) {
    t->ticks += book_.last_walk;
    t->line(TraceTally::Toggle);
    return;
  }
  book_.trace->toggle(engine(), enable, book_.last_walk, copies());
}

// use_torch_proxy_guard, entry. b52ce17 saves set(_local_enabled_scope);
// 04efefd saves the set object itself, so an in-place |= while the guard is
// open also changes what its exit restores.
template <class M>
inline GuardEntry TorchProxyMetaFinder::guard_enter(bool enable_, std::optional<SetId> scope, GuardSite site) {
  GuardEntry g{
      false, enable_, finder_.scope, finder_.scope_object, finder_.globally_enabled, site, GuardAction::Enable};
  bool had = copies() > 0;
  if (enable_ == had && ((g.old_global && !scope) || g.old_scope == scope.value_or(kEmptySet))) {
    g.noop = true;
    if (traced<M>()) [[unlikely]]
      trace_guard_begin<M>(g, scope.has_value(), had);
    return g;
  }
  if (traced<M>()) [[unlikely]]
    trace_guard_begin<M>(g, scope.has_value(), had);
  if (rules<M>().guard_saves_copy)
    finder_.sets.hold(g.old_scope);
  else
    ++finder_.scope_objects[static_cast<size_t>(g.old_scope_object)].holders;
  if (enable_)
    enable<M>(scope);
  else
    disable<M>();
  return g;
}

// use_torch_proxy_guard, exit (its `finally`).
template <class M>
inline void TorchProxyMetaFinder::guard_exit(const GuardEntry& g) {
  if (g.noop) {
    if (traced<M>()) [[unlikely]]
      trace_guard_end<M>(g);
    return;
  }
  if (!g.enable) enable<M>(std::nullopt);
  if (rules<M>().guard_saves_copy) {
    // The guard's own hold on the saved set passes to the finder (taking
    // a hold for the finder and dropping the guard's would count the same).
    if (finder_.scope == g.old_scope) {
      release_set(g.old_scope);
    } else {
      release_set(finder_.scope);
      finder_.scope = g.old_scope;
    }
  } else {
    // The guard's hold on the saved object passes to the finder.
    release_scope_object(finder_.scope_object);
    finder_.scope_object = g.old_scope_object;
    assign_set(finder_.scope, finder_.scope_objects[static_cast<size_t>(g.old_scope_object)].value);
  }
  finder_.globally_enabled = g.old_global;
  if (g.enable) disable<M>();
  if (traced<M>()) [[unlikely]]
    trace_guard_end<M>(g);
}

}  // namespace impsim
