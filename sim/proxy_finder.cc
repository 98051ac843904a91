// The torch proxy finder's side (paddle/compat/proxy.py, as released, and
// with the reentrancy fix): TorchProxyMetaFinder.find_spec and its helpers,
// enable_torch_proxy, disable_torch_proxy, use_torch_proxy_guard.
#include "impsim/engine.h"

namespace impsim {

// TorchProxyMetaFinder.find_spec
SpecId Engine::proxy_find_spec(NameId name) {
  ++counters_.asks;
  count_event();
  if (design_.resolving_fix && finder_.resolving[name]) {
    ++counters_.suppressed;
    return kNoSpec;
  }
  if (covers(finder_.blocked, name))
    return _find_spec_for_specific_module(name, /*exec_enable=*/false, kMarkDisabled);
  if (covers(finder_.scope, name))
    return _find_spec_for_specific_module(name, /*exec_enable=*/true, kMarkEnabled);
  if (!names_.is_torch(name)) return kNoSpec;
  if (called_by_module_marked(kMarkDisabled))
    return cache_.contains(name) ? _find_spec_for_cached_torch_module(name) : kNoSpec;
  if (!finder_.globally_enabled && !called_by_module_marked(kMarkEnabled))
    return cache_.contains(name) ? _find_spec_for_cached_torch_module(name) : kNoSpec;
  return _find_spec_for_torch_module(name);
}

bool Engine::covers(SetId set, NameId name) {
  if (set == kEmptySet) return false;
  if (static_cast<size_t>(set) >= covers_.size()) covers_.resize(static_cast<size_t>(set) + 1);
  std::vector<int8_t>& row = covers_[static_cast<size_t>(set)];
  if (row.empty()) row.assign(names_.size(), -1);
  int8_t& v = row[static_cast<size_t>(name)];
  if (v < 0) v = sets_.covers(names_, set, name) ? 1 : 0;
  return v != 0;
}

// _is_called_by_module_with_specific_dunder_attr: any frame on the stack
// whose globals (its module's __dict__) carry the mark now.
bool Engine::called_by_module_marked(uint8_t mark) const {
  for (ModuleId m : frames_)
    if (modules_[m].marks & mark) return true;
  return false;
}

// _find_spec_for_specific_module: the real spec, looked up with the proxy
// disabled, its loader wrapped so the body runs under a guard and is marked.
SpecId Engine::_find_spec_for_specific_module(NameId name, bool exec_enable, uint8_t mark) {
  ++counters_.lookups;
  ++depth_;
  if (depth_ > counters_.max_depth) counters_.max_depth = depth_;
  if (depth_ > label_high_) label_high_ = depth_;
  if (depth_ > static_cast<uint64_t>(limits_.max_lookup_depth))
    throw LimitReached{"lookup-depth",
                       "lookups nested " + std::to_string(depth_) + " deep; raise it with --max-lookup-depth", {}};
  const bool fix = design_.resolving_fix;
  if (trace_) trace_->lookup_begin(*this, name, depth_, mark);
  GuardEntry g = guard_enter(false, std::nullopt);
  SpecId spec;
  try {
    if (fix) finder_.resolving[name] = 1;
    try {
      spec = find_spec(name);
    } catch (PyError&) {
      if (fix) finder_.resolving[name] = 0;
      throw;
    }
    if (fix) finder_.resolving[name] = 0;
    if (spec != kNoSpec) {
      LoaderId original = specs_[spec].loader;
      specs_[spec].loader = new_loader(Loader{LoaderKind::Specific, exec_enable, mark, original});
    }
  } catch (PyError&) {
    guard_exit(g);
    if (trace_) trace_->lookup_end(*this, name, depth_, false);
    --depth_;
    throw;
  }
  guard_exit(g);
  if (trace_) trace_->lookup_end(*this, name, depth_, spec != kNoSpec);
  --depth_;
  return spec;
}

// _find_spec_for_cached_torch_module: always a package, so submodules of a
// cached module can be found.
SpecId Engine::_find_spec_for_cached_torch_module(NameId name) {
  ModuleId m = cache_.get(name);
  LoaderId loader = new_loader(Loader{LoaderKind::Cached, false, 0, m});
  PathRef path = modules_[m].path == kNoPath ? kEmptyPath : modules_[m].path;
  return new_spec(name, loader, path);
}

// _find_spec_for_torch_module: import the paddle twin, serve it as torch.
SpecId Engine::_find_spec_for_torch_module(NameId name) {
  ModuleId source = _find_and_load(model_.paddle_of[name]);
  bool is_pkg = modules_[source].path != kNoPath;
  LoaderId loader = new_loader(Loader{LoaderKind::Proxy, false, 0, source});
  return new_spec(name, loader, is_pkg ? kEmptyPath : kNoPath);
}

// _modify_scope_of_torch_proxy (its warnings are not modelled).
void Engine::_modify_scope(std::optional<SetId> scope) {
  auto set_scope = [&](std::optional<SetId> s) {
    finder_.scope = s.value_or(kEmptySet);
    finder_.globally_enabled = !s.has_value();
  };
  if (finder_.copies == 0 || finder_.globally_enabled) {
    set_scope(scope);
    return;
  }
  if (!scope) {
    finder_.globally_enabled = true;
    return;
  }
  finder_.scope = sets_.unite(finder_.scope, *scope);
}

// One toggle: one pass over sys.modules examining every name in it.
void Engine::count_walk() {
  ++counters_.toggles;
  ++counters_.walks;
  // indexed-walk: a prefix index hands the toggle the torch names only.
  uint64_t n = design_.indexed_walk ? sys_modules_.torch_count() : sys_modules_.size();
  last_walk_ = n;
  counters_.comparisons += n;
  if (n > walk_peak_) walk_peak_ = n;
  count_event();
}

// enable_torch_proxy: _swap_torch_modules_to_cache, the scope update, then
// sys.meta_path.insert(0, P) whether or not P is there already.
void Engine::enable(std::optional<SetId> scope) {
  count_walk();
  sys_modules_.for_each_torch([&](NameId n) {
    ModuleId m = sys_modules_.get(n);
    if (!modules_[m].proxy) cache_.set(n, m);
    sys_modules_.erase(n);
  });
  _modify_scope(scope);
  if (!design_.idempotent_enable || finder_.copies == 0) {
    ++finder_.copies;
    copies_changed_by_ = current_step();
  }
  if (trace_) trace_->toggle(*this, true, last_walk_, finder_.copies);
}

// disable_torch_proxy: removes ONE occurrence, clears proxy modules and puts
// the cached real torch modules back.
void Engine::disable() {
  if (finder_.copies == 0) return;  // only a warning
  finder_.copies = design_.disable_all ? 0 : finder_.copies - 1;
  copies_changed_by_ = current_step();
  count_walk();
  sys_modules_.for_each_torch([&](NameId n) {
    if (modules_[sys_modules_.get(n)].proxy) sys_modules_.erase(n);
  });
  for (NameId n : cache_.order()) sys_modules_.set(n, cache_.get(n));
  if (trace_) trace_->toggle(*this, false, last_walk_, finder_.copies);
}

// use_torch_proxy_guard, entry.
GuardEntry Engine::guard_enter(bool enable_, std::optional<SetId> scope) {
  GuardEntry g{false, enable_, finder_.scope, finder_.globally_enabled};
  bool had = finder_.copies > 0;
  if (enable_ == had && ((g.old_global && !scope) || g.old_scope == scope.value_or(kEmptySet))) {
    g.noop = true;
    return g;
  }
  if (enable_) enable(scope);
  else disable();
  return g;
}

// use_torch_proxy_guard, exit (its `finally`).
void Engine::guard_exit(const GuardEntry& g) {
  if (g.noop) return;
  if (g.enable) {
    finder_.scope = g.old_scope;
    finder_.globally_enabled = g.old_global;
    disable();
  } else {
    enable(std::nullopt);
    finder_.scope = g.old_scope;
    finder_.globally_enabled = g.old_global;
  }
}

}  // namespace impsim
