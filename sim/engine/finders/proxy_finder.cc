// The torch proxy finder's side (paddle/compat/proxy.py, as released, and
// with the reentrancy fix): TorchProxyMetaFinder.find_spec and its helpers,
// enable_torch_proxy, disable_torch_proxy, use_torch_proxy_guard.
#include "impsim/engine/engine.h"

#include <algorithm>

namespace impsim {

// The tests of TorchProxyMetaFinder.find_spec (the fix's resolving check
// first), each branch's cache test included.
template <class M>
inline FindReason Engine::find_spec_branch(NameId name) {
  if (design<M>().resolving_fix && thread_.resolving[name]) return FindReason::Suppressed;
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
SpecId Engine::proxy_find_spec_stepped(NameId name) {
  ++thread_.counts.asks;
  count_event();
  const FindReason why = find_spec_branch<M>(name);
  if (traced<M>()) [[unlikely]] book_.trace->decide(*this, name, why);
  switch (why) {
    case FindReason::Suppressed:
      ++thread_.counts.suppressed;
      return kNoSpec;
    case FindReason::Blocked:
      return _find_spec_for_specific_module<M>(name, /*exec_enable=*/false, kMarkDisabled);
    case FindReason::InScope:
      return _find_spec_for_specific_module<M>(name, /*exec_enable=*/true, kMarkEnabled);
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

void Engine::resolving_add(NameId name) {
  thread_.resolving[name] = 1;
  thread_.resolving_list.push_back(name);
}

void Engine::resolving_discard(NameId name) {
  thread_.resolving[name] = 0;
  auto& l = thread_.resolving_list;
  l.erase(std::find(l.begin(), l.end(), name));
}

bool Engine::learn_covers(SetId set, NameId name) {
  if (static_cast<size_t>(set) >= finder_.covers.size()) finder_.covers.resize(static_cast<size_t>(set) + 1);
  std::vector<int8_t>& row = finder_.covers[static_cast<size_t>(set)];
  if (row.empty()) row.assign(names_.size(), -1);
  int8_t& v = row[static_cast<size_t>(name)];
  v = finder_.sets.covers(names_, set, name) ? 1 : 0;
  return v != 0;
}

// _is_called_by_module_with_specific_dunder_attr: any frame on the stack
// whose globals (its module's __dict__) carry the mark now.
bool Engine::called_by_module_marked(uint8_t mark) const {
  for (ModuleId m : thread_.frames)
    if (interp_.records.module(m).marks & mark) return true;
  return false;
}

// _find_spec_for_specific_module: the real spec, looked up with the proxy
// disabled, its loader wrapped so the body runs under a guard and is marked.
template <class M>
SpecId Engine::_find_spec_for_specific_module(NameId name, bool exec_enable, uint8_t mark) {
  ++thread_.counts.lookups;
  reach_depth(++thread_.depth);
  if (thread_.depth > static_cast<uint64_t>(book_.limits.max_lookup_depth))
    throw LimitReached{"lookup-depth",
                       "lookups nested " + std::to_string(thread_.depth) + " deep; raise it with --max-lookup-depth", {}};
  const bool fix = design<M>().resolving_fix;
  if (traced<M>()) book_.trace->lookup_begin(*this, name, thread_.depth, mark);
  GuardEntry g = guard_enter<M>(false, std::nullopt, GuardSite::Lookup);
  SpecId spec = kNoSpec;
  try_finally(
      [&] {
        if (fix) resolving_add(name);
        spec = try_finally([&] { return find_spec<M>(name); }, [&] {
          if (fix) resolving_discard(name);
        });
        if (spec != kNoSpec) {
          LoaderId original = interp_.records.spec(spec).loader;
          interp_.records.write_spec(spec).loader = new_loader(Loader{LoaderKind::Specific, exec_enable, mark, original});
        }
      },
      [&] {
        guard_exit<M>(g);
        if (traced<M>()) book_.trace->lookup_end(*this, name, thread_.depth, spec != kNoSpec);
        --thread_.depth;
      });
  return spec;
}

// _find_spec_for_cached_torch_module. b52ce17: always a package (search
// locations: the module's __path__, or []), so submodules of a cached module
// can be found; the module is taken when the spec is made. 04efefd: not a
// package (the module keeps its own __path__, if any); the loader reads the
// cache when it creates the module.
template <class M>
SpecId Engine::_find_spec_for_cached_torch_module(NameId name) {
  if (!rules<M>().cached_spec_is_package)
    return new_spec(name, new_loader(Loader{LoaderKind::CachedByName, false, 0, name}), kNoPath);
  ModuleId m = finder_.cache.get(name);
  LoaderId loader = new_loader(Loader{LoaderKind::Cached, false, 0, m});
  PathRef path = interp_.records.module(m).path == kNoPath ? kEmptyPath : interp_.records.module(m).path;
  return new_spec(name, loader, path);
}

// _find_spec_for_torch_module: import the paddle twin, serve it as torch.
template <class M>
SpecId Engine::_find_spec_for_torch_module(NameId name) {
  ModuleId source = _find_and_load<M>(model_.paddle_of[name]);
  bool is_pkg = interp_.records.module(source).path != kNoPath;
  LoaderId loader = new_loader(Loader{LoaderKind::Proxy, false, 0, source});
  return new_spec(name, loader, is_pkg ? kEmptyPath : kNoPath);
}

// _modify_scope_of_torch_proxy (its warnings are not modelled).
template <class M>
void Engine::_modify_scope(std::optional<SetId> scope) {
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
void Engine::_set_scope(std::optional<SetId> scope) {
  assign_set(finder_.scope, scope.value_or(kEmptySet));
  finder_.globally_enabled = !scope.has_value();
  if (rules<M>().guard_saves_copy) return;
  release_scope_object(finder_.scope_object);
  finder_.scope_object = new_scope_object(finder_.scope);
}

template <class M>
void Engine::scope_ior(SetId scope) {
  assign_set(finder_.scope, finder_.sets.unite(finder_.scope, scope));
  if (!rules<M>().guard_saves_copy) assign_set(finder_.scope_objects[static_cast<size_t>(finder_.scope_object)].value, finder_.scope);
}

void Engine::forget_covers(SetId set) {
  if (static_cast<size_t>(set) < finder_.covers.size()) std::vector<int8_t>().swap(finder_.covers[static_cast<size_t>(set)]);
}

int32_t Engine::new_scope_object(SetId value) {
  finder_.sets.hold(value);
  if (finder_.free_scope_objects.empty()) {
    finder_.scope_objects.push_back(FinderState::ScopeObject{value, 1});
    return static_cast<int32_t>(finder_.scope_objects.size() - 1);
  }
  int32_t o = finder_.free_scope_objects.back();
  finder_.free_scope_objects.pop_back();
  finder_.scope_objects[static_cast<size_t>(o)] = FinderState::ScopeObject{value, 1};
  return o;
}

void Engine::release_scope_object(int32_t object) {
  FinderState::ScopeObject& o = finder_.scope_objects[static_cast<size_t>(object)];
  if (--o.holders > 0) return;
  release_set(o.value);
  finder_.free_scope_objects.push_back(object);
}

// 2^64 comparisons more: into the exact total, the word keeps the rest.
void Engine::comparisons_wrapped() {
  thread_.totals.comparisons += UINT64_MAX;
  thread_.totals.comparisons += 1;
}

// enable_torch_proxy: _swap_torch_modules_to_cache, the scope update, then
// sys.meta_path.insert(0, P) whether or not P is there already.
// 04efefd's swap caches and deletes only real torch modules: proxy modules
// stay in sys.modules.
template <class M>
void Engine::enable(std::optional<SetId> scope) {
  if (traced<M>()) [[unlikely]] book_.trace->toggle_begin(*this, true);
  count_walk<M>();
  if (interp_.sys_modules.torch_count() > 0) _swap_torch_modules_to_cache<M>();
  _modify_scope<M>(scope);
  if (!design<M>().idempotent_enable || copies() == 0) {
    ++book_.copies_moves;
    book_.copies_changed_by = current_step();
    if (hooks<M>()) [[unlikely]]
      check_meta_path_room();
    interp_.meta_path.insert_proxy_at_head();
  }
  if (traced<M>()) book_.trace->toggle(*this, true, book_.last_walk, copies());
}

// disable_torch_proxy: removes ONE occurrence, clears proxy modules and puts
// the cached real torch modules back.
template <class M>
void Engine::disable() {
  if (copies() == 0) return;  // only a warning
  if (design<M>().disable_all) interp_.meta_path.remove_all(kProxyFinder);
  else interp_.meta_path.remove(kProxyFinder);
  ++book_.copies_moves;
  book_.copies_changed_by = current_step();
  if (traced<M>()) [[unlikely]] book_.trace->toggle_begin(*this, false);
  count_walk<M>();
  if (interp_.sys_modules.torch_count() > 0) _clear_torch_proxy_modules();
  if (!finder_.cache.order().empty()) _copy_torch_modules_from_cache();
  if (traced<M>()) book_.trace->toggle(*this, false, book_.last_walk, copies());
}

// The walks themselves, out of line: with no torch module in sys.modules
// and none cached (every Paddle scenario's guards around non-torch names),
// a toggle is only its counts, and enable and disable stay small.

// _swap_torch_modules_to_cache
template <class M>
void Engine::_swap_torch_modules_to_cache() {
  interp_.sys_modules.for_each_torch([&](NameId n) {
    ModuleId m = interp_.sys_modules.get(n);
    if (!interp_.records.module(m).proxy) finder_.cache.set(n, m);
    if (!interp_.records.module(m).proxy || rules<M>().swap_drops_proxies) interp_.sys_modules.erase(n);
  });
}

// _clear_torch_proxy_modules
void Engine::_clear_torch_proxy_modules() {
  interp_.sys_modules.for_each_torch([&](NameId n) {
    if (interp_.records.module(interp_.sys_modules.get(n)).proxy) interp_.sys_modules.erase(n);
  });
}

// _copy_torch_modules_from_cache
void Engine::_copy_torch_modules_from_cache() {
  for (NameId n : finder_.cache.order()) interp_.sys_modules.set(n, finder_.cache.get(n));
}

// use_torch_proxy_guard, entry. b52ce17 saves set(_local_enabled_scope);
// 04efefd saves the set object itself, so an in-place |= while the guard is
// open also changes what its exit restores.
template <class M>
GuardEntry Engine::guard_enter(bool enable_, std::optional<SetId> scope, GuardSite site) {
  GuardEntry g{false, enable_, finder_.scope, finder_.scope_object, finder_.globally_enabled, site, GuardAction::Enable};
  bool had = copies() > 0;
  if (enable_ == had && ((g.old_global && !scope) || g.old_scope == scope.value_or(kEmptySet))) {
    g.noop = true;
    if (traced<M>()) [[unlikely]] trace_guard_enter(g, scope.has_value(), had);
    return g;
  }
  if (traced<M>()) [[unlikely]] trace_guard_enter(g, scope.has_value(), had);
  if (rules<M>().guard_saves_copy) finder_.sets.hold(g.old_scope);
  else ++finder_.scope_objects[static_cast<size_t>(g.old_scope_object)].holders;
  if (enable_) enable<M>(scope);
  else disable<M>();
  return g;
}

// use_torch_proxy_guard, exit (its `finally`).
template <class M>
void Engine::guard_exit(const GuardEntry& g) {
  if (g.noop) {
    if (traced<M>()) [[unlikely]] trace_guard_exit(g);
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
  if (traced<M>()) [[unlikely]] trace_guard_exit(g);
}

// What the guard's entry test decided, and why (a trace only; kept out of
// line so the untraced guard stays as small as it was).
void Engine::trace_guard_enter(GuardEntry& g, bool scope_asked, bool had) {
  if (g.noop) g.action = g.old_global && !scope_asked ? GuardAction::NoopGlobal : GuardAction::NoopSameScope;
  else if (g.enable) g.action = !had ? GuardAction::Enable : scope_asked ? GuardAction::EnableRescope : GuardAction::EnableGlobal;
  else g.action = had ? GuardAction::Disable : GuardAction::DisableAbsent;
  book_.trace->guard_begin(*this, g.site, g.enable, g.action);
}

void Engine::trace_guard_exit(const GuardEntry& g) { book_.trace->guard_end(*this, g.site, g.action); }

#define IMPSIM_INSTANTIATE(M)                                                          \
  template SpecId Engine::proxy_find_spec_stepped<M>(NameId);                          \
  template SpecId Engine::_find_spec_for_specific_module<M>(NameId, bool, uint8_t);    \
  template SpecId Engine::_find_spec_for_cached_torch_module<M>(NameId);               \
  template SpecId Engine::_find_spec_for_torch_module<M>(NameId);                      \
  template void Engine::_modify_scope<M>(std::optional<SetId>);                        \
  template void Engine::_set_scope<M>(std::optional<SetId>);                           \
  template void Engine::scope_ior<M>(SetId);                                           \
  template void Engine::enable<M>(std::optional<SetId>);                               \
  template void Engine::disable<M>();                                                  \
  template void Engine::_swap_torch_modules_to_cache<M>();                             \
  template GuardEntry Engine::guard_enter<M>(bool, std::optional<SetId>, GuardSite);   \
  template void Engine::guard_exit<M>(const GuardEntry&);
IMPSIM_EACH_RUN_MODE(IMPSIM_INSTANTIATE)
#undef IMPSIM_INSTANTIATE

}  // namespace impsim
