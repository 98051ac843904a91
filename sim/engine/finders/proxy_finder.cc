// The torch proxy finder's side (paddle/compat/proxy.py, as released, and
// with the reentrancy fix): TorchProxyMetaFinder.find_spec and its helpers,
// enable_torch_proxy, disable_torch_proxy, use_torch_proxy_guard.
#include "impsim/engine/engine.h"
#include "impsim/engine/finders/proxy_hot_path.h"

#include <algorithm>

namespace impsim {

void EngineContext::reach_lookup_depth(uint64_t depth) {
  reach_depth(depth);
  if (depth > static_cast<uint64_t>(book_.limits.max_lookup_depth))
    throw LimitReached{
        "lookup-depth", "lookups nested " + std::to_string(depth) + " deep; raise it with --max-lookup-depth", {}};
}

bool TorchProxyMetaFinder::learn_covers(SetId set, NameId name) {
  const bool c = finder_.sets.covers(names_, set, name);
  finder_.covers.learn(set, name, c);
  return c;
}

// _is_called_by_module_with_specific_dunder_attr: any frame on the stack
// whose globals (its module's __dict__) carry the mark now.
bool TorchProxyMetaFinder::called_by_module_marked(uint8_t mark) const {
  for (ModuleId m : py_thread_.frames)
    if (interp_.records.module(m).marks & mark) return true;
  return false;
}

// _find_spec_for_cached_torch_module. b52ce17: always a package (search
// locations: the module's __path__, or []), so submodules of a cached module
// can be found; the module is taken when the spec is made. 04efefd: not a
// package (the module keeps its own __path__, if any); the loader reads the
// cache when it creates the module.
template <class M>
SpecId TorchProxyMetaFinder::_find_spec_for_cached_torch_module(NameId name) {
  if (!rules<M>().cached_spec_is_package)
    return new_spec(name, new_loader(Loader{LoaderKind::CachedByName, false, 0, name}), kNoPath);
  ModuleId m = finder_.cache.get(name);
  LoaderId loader = new_loader(Loader{LoaderKind::Cached, false, 0, m});
  PathRef path = interp_.records.module(m).path == kNoPath ? kEmptyPath : interp_.records.module(m).path;
  return new_spec(name, loader, path);
}

// _find_spec_for_torch_module: import the paddle twin, serve it as torch.
template <class M>
SpecId TorchProxyMetaFinder::_find_spec_for_torch_module(NameId name) {
  ModuleId source = engine()._find_and_load<M>(model_.paddle_of[name]);
  bool is_pkg = interp_.records.module(source).path != kNoPath;
  LoaderId loader = new_loader(Loader{LoaderKind::Proxy, false, 0, source});
  return new_spec(name, loader, is_pkg ? kEmptyPath : kNoPath);
}

void TorchProxyMetaFinder::forget_covers(SetId set) { finder_.covers.forget(set); }

int32_t TorchProxyMetaFinder::new_scope_object(SetId value) {
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

void TorchProxyMetaFinder::release_scope_object(int32_t object) {
  FinderState::ScopeObject& o = finder_.scope_objects[static_cast<size_t>(object)];
  if (--o.holders > 0) return;
  release_set(o.value);
  finder_.free_scope_objects.push_back(object);
}

// 2^64 comparisons more: into the exact total, the word keeps the rest.
void TorchProxyMetaFinder::comparisons_wrapped() {
  py_thread_.totals.comparisons += UINT64_MAX;
  py_thread_.totals.comparisons += 1;
}

// The walks themselves, out of line: with no torch module in sys.modules
// and none cached (every Paddle scenario's guards around non-torch names),
// a toggle is only its counts, and enable and disable stay small.

// _swap_torch_modules_to_cache
template <class M>
void TorchProxyMetaFinder::_swap_torch_modules_to_cache() {
  interp_.sys_modules.for_each_torch([&](NameId n) {
    ModuleId m = interp_.sys_modules.get(n);
    if (!interp_.records.module(m).proxy) finder_.cache.set(n, m);
    if (!interp_.records.module(m).proxy || rules<M>().swap_drops_proxies) interp_.sys_modules.erase(n);
  });
}

// _clear_torch_proxy_modules
void TorchProxyMetaFinder::_clear_torch_proxy_modules() {
  interp_.sys_modules.for_each_torch([&](NameId n) {
    if (interp_.records.module(interp_.sys_modules.get(n)).proxy) interp_.sys_modules.erase(n);
  });
}

// _copy_torch_modules_from_cache
void TorchProxyMetaFinder::_copy_torch_modules_from_cache() {
  for (NameId n : finder_.cache.order()) interp_.sys_modules.set(n, finder_.cache.get(n));
}

// What the guard's entry test decided, and why (a trace only; kept out of
// line so the untraced guard stays as small as it was).
void TorchProxyMetaFinder::trace_guard_enter(GuardEntry& g, bool scope_asked, bool had) {
  if (g.noop)
    g.action = g.old_global && !scope_asked ? GuardAction::NoopGlobal : GuardAction::NoopSameScope;
  else if (g.enable)
    g.action = !had ? GuardAction::Enable : scope_asked ? GuardAction::EnableRescope : GuardAction::EnableGlobal;
  else
    g.action = had ? GuardAction::Disable : GuardAction::DisableAbsent;
  book_.trace->guard_begin(engine(), g.site, g.enable, g.action);
}

void TorchProxyMetaFinder::trace_guard_exit(const GuardEntry& g) { book_.trace->guard_end(engine(), g.site, g.action); }

#define IMPSIM_INSTANTIATE(M)                                                        \
  template SpecId TorchProxyMetaFinder::_find_spec_for_cached_torch_module<M>(NameId);             \
  template SpecId TorchProxyMetaFinder::_find_spec_for_torch_module<M>(NameId);                    \
  template void TorchProxyMetaFinder::_modify_scope<M>(std::optional<SetId>);                      \
  template void TorchProxyMetaFinder::_set_scope<M>(std::optional<SetId>);                         \
  template void TorchProxyMetaFinder::scope_ior<M>(SetId);                                         \
  template void TorchProxyMetaFinder::enable<M>(std::optional<SetId>);                             \
  template void TorchProxyMetaFinder::disable<M>();                                                \
  template void TorchProxyMetaFinder::_swap_torch_modules_to_cache<M>();                           \
  template GuardEntry TorchProxyMetaFinder::guard_enter<M>(bool, std::optional<SetId>, GuardSite); \
  template void TorchProxyMetaFinder::guard_exit<M>(const GuardEntry&);
IMPSIM_EACH_RUN_MODE(IMPSIM_INSTANTIATE)
#undef IMPSIM_INSTANTIATE

}  // namespace impsim
