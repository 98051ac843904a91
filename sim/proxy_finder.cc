// The torch proxy finder's side (paddle/compat/proxy.py, as released, and
// with the reentrancy fix): TorchProxyMetaFinder.find_spec and its helpers,
// enable_torch_proxy, disable_torch_proxy, use_torch_proxy_guard.
#include "impsim/engine.h"

#include <algorithm>

namespace impsim {

size_t Engine::MemoKeyHash::operator()(const MemoKey& k) const {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t x) { h = (h ^ x) * 1099511628211ull; };
  mix(static_cast<uint64_t>(k.name));
  mix(static_cast<uint64_t>(k.copies));
  mix(static_cast<uint64_t>(k.scope));
  mix(static_cast<uint64_t>(k.scope_object));
  mix(k.global);
  mix(static_cast<uint64_t>(k.blocked));
  mix(k.epoch);
  mix(k.frames);
  for (NameId n : k.resolving) mix(static_cast<uint64_t>(n));
  return h;
}

Engine::MemoKey Engine::memo_key(NameId name) const {
  MemoKey k{name,
            finder_.copies,
            sets_.identity(finder_.scope),
            finder_.scope_object,
            finder_.globally_enabled,
            sets_.identity(finder_.blocked),
            epoch(),
            frames_id_,
            finder_.resolving_list};
  std::sort(k.resolving.begin(), k.resolving.end());
  return k;
}

// The fast engine's ask. An ask is a function of the whole interpreter
// state: the key holds every part an ask can read (the finder's copies,
// scope, flag, blocked list and resolving set, the frame stack, and the
// versions of sys.modules, the cache and every module, spec and loader). An
// ask that left all of them as it found it, and raised nothing, changed only
// the counters; when the same key comes again it is answered with those
// deltas. Anything else (an import that ran a body, a torch module moved)
// changes a version and is stepped.
SpecId Engine::proxy_find_spec(NameId name) {
  if (!fast_ || trace_) return proxy_find_spec_stepped(name);
  forget_stale_memo();
  MemoKey key = memo_key(name);
  if (auto it = memo_.find(key); it != memo_.end()) {
    const MemoValue& v = it->second;
    // A replay that would cross a limit is stepped instead, so the run stops
    // at the very event the step engine stops at (docs/limits.md).
    if (depth_ + v.rel_depth <= static_cast<uint64_t>(limits_.max_lookup_depth) &&
        (max_events_ == kNoEventLimit || events() + v.events <= Count(max_events_))) {
      ++memo_hits_;
      Counters& c = counters_;
      c += v.delta;
      replayed_events_ += v.events;
      update_step_limit();
      if (v.rel_depth > 0) {
        uint64_t deepest = depth_ + v.rel_depth;
        if (deepest > c.max_depth) c.max_depth = deepest;
        label_high_ = std::max(label_high_, deepest);
        fast_high_ = std::max(fast_high_, deepest);
      }
      if (v.delta.walks > 0) {
        uint64_t n = design_.indexed_walk ? sys_modules_.torch_count() : sys_modules_.size();
        walk_peak_ = std::max(walk_peak_, n);
      }
      if (v.moved_copies) {
        ++copies_moves_;
        copies_changed_by_ = current_step();
      }
      return v.result;
    }
  }
  const Counters start = counters_;
  const Count start_events = events();
  const uint64_t start_moves = copies_moves_;
  const uint64_t saved_high = fast_high_;
  fast_high_ = depth_;
  SpecId result = proxy_find_spec_stepped(name);  // an exception skips the memo
  const uint64_t rel_depth = fast_high_ - depth_;
  fast_high_ = std::max(saved_high, fast_high_);
  if (memo_key(name) == key) {
    MemoValue v{};
    v.delta.add_delta(counters_, start);
    v.events = events() - start_events;
    v.rel_depth = rel_depth;
    v.moved_copies = copies_moves_ != start_moves;
    v.result = result;
    memo_.emplace(std::move(key), v);
  }
  return result;
}

// TorchProxyMetaFinder.find_spec
SpecId Engine::proxy_find_spec_stepped(NameId name) {
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

void Engine::resolving_add(NameId name) {
  finder_.resolving[name] = 1;
  finder_.resolving_list.push_back(name);
}

void Engine::resolving_discard(NameId name) {
  finder_.resolving[name] = 0;
  auto& l = finder_.resolving_list;
  l.erase(std::find(l.begin(), l.end(), name));
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
  if (depth_ > fast_high_) fast_high_ = depth_;
  if (depth_ > static_cast<uint64_t>(limits_.max_lookup_depth))
    throw LimitReached{"lookup-depth",
                       "lookups nested " + std::to_string(depth_) + " deep; raise it with --max-lookup-depth", {}};
  const bool fix = design_.resolving_fix;
  if (trace_) trace_->lookup_begin(*this, name, depth_, mark);
  GuardEntry g = guard_enter(false, std::nullopt);
  SpecId spec = kNoSpec;
  try_finally(
      [&] {
        if (fix) resolving_add(name);
        spec = try_finally([&] { return find_spec(name); }, [&] {
          if (fix) resolving_discard(name);
        });
        if (spec != kNoSpec) {
          LoaderId original = specs_[spec].loader;
          write_spec(spec).loader = new_loader(Loader{LoaderKind::Specific, exec_enable, mark, original});
        }
      },
      [&] {
        guard_exit(g);
        if (trace_) trace_->lookup_end(*this, name, depth_, spec != kNoSpec);
        --depth_;
      });
  return spec;
}

// _find_spec_for_cached_torch_module. b52ce17: always a package (search
// locations: the module's __path__, or []), so submodules of a cached module
// can be found; the module is taken when the spec is made. 04efefd: not a
// package (the module keeps its own __path__, if any); the loader reads the
// cache when it creates the module.
SpecId Engine::_find_spec_for_cached_torch_module(NameId name) {
  if (!rules_.cached_spec_is_package)
    return new_spec(name, new_loader(Loader{LoaderKind::CachedByName, false, 0, name}), kNoPath);
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
  if (finder_.copies == 0 || finder_.globally_enabled) {
    _set_scope(scope);
    return;
  }
  if (!scope) {
    finder_.globally_enabled = true;
    return;
  }
  scope_ior(*scope);
}

// TorchProxyMetaFinder._set_scope: `scope or set()` is a set object of its
// own (enable_torch_proxy's _parse_scope made it).
void Engine::_set_scope(std::optional<SetId> scope) {
  assign_set(finder_.scope, scope.value_or(kEmptySet));
  finder_.globally_enabled = !scope.has_value();
  if (rules_.guard_saves_copy) return;
  release_scope_object(finder_.scope_object);
  finder_.scope_object = new_scope_object(finder_.scope);
}

void Engine::scope_ior(SetId scope) {
  assign_set(finder_.scope, sets_.unite(finder_.scope, scope));
  if (!rules_.guard_saves_copy) assign_set(scope_objects_[static_cast<size_t>(finder_.scope_object)].value, finder_.scope);
}

void Engine::forget_covers(SetId set) {
  if (static_cast<size_t>(set) < covers_.size()) std::vector<int8_t>().swap(covers_[static_cast<size_t>(set)]);
}

int32_t Engine::new_scope_object(SetId value) {
  sets_.hold(value);
  if (free_scope_objects_.empty()) {
    scope_objects_.push_back(ScopeObject{value, 1});
    return static_cast<int32_t>(scope_objects_.size() - 1);
  }
  int32_t o = free_scope_objects_.back();
  free_scope_objects_.pop_back();
  scope_objects_[static_cast<size_t>(o)] = ScopeObject{value, 1};
  return o;
}

void Engine::release_scope_object(int32_t object) {
  ScopeObject& o = scope_objects_[static_cast<size_t>(object)];
  if (--o.holders > 0) return;
  release_set(o.value);
  free_scope_objects_.push_back(object);
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
// 04efefd's swap caches and deletes only real torch modules: proxy modules
// stay in sys.modules.
void Engine::enable(std::optional<SetId> scope) {
  count_walk();
  sys_modules_.for_each_torch([&](NameId n) {
    ModuleId m = sys_modules_.get(n);
    if (!modules_[m].proxy) cache_.set(n, m);
    if (!modules_[m].proxy || rules_.swap_drops_proxies) sys_modules_.erase(n);
  });
  _modify_scope(scope);
  if (!design_.idempotent_enable || finder_.copies == 0) {
    ++finder_.copies;
    ++copies_moves_;
    copies_changed_by_ = current_step();
  }
  if (trace_) trace_->toggle(*this, true, last_walk_, finder_.copies);
}

// disable_torch_proxy: removes ONE occurrence, clears proxy modules and puts
// the cached real torch modules back.
void Engine::disable() {
  if (finder_.copies == 0) return;  // only a warning
  finder_.copies = design_.disable_all ? 0 : finder_.copies - 1;
  ++copies_moves_;
  copies_changed_by_ = current_step();
  count_walk();
  sys_modules_.for_each_torch([&](NameId n) {
    if (modules_[sys_modules_.get(n)].proxy) sys_modules_.erase(n);
  });
  for (NameId n : cache_.order()) sys_modules_.set(n, cache_.get(n));
  if (trace_) trace_->toggle(*this, false, last_walk_, finder_.copies);
}

// use_torch_proxy_guard, entry. b52ce17 saves set(_local_enabled_scope);
// 04efefd saves the set object itself, so an in-place |= while the guard is
// open also changes what its exit restores.
GuardEntry Engine::guard_enter(bool enable_, std::optional<SetId> scope) {
  GuardEntry g{false, enable_, finder_.scope, finder_.scope_object, finder_.globally_enabled};
  bool had = finder_.copies > 0;
  if (enable_ == had && ((g.old_global && !scope) || g.old_scope == scope.value_or(kEmptySet))) {
    g.noop = true;
    return g;
  }
  if (rules_.guard_saves_copy) sets_.hold(g.old_scope);
  else ++scope_objects_[static_cast<size_t>(g.old_scope_object)].holders;
  if (enable_) enable(scope);
  else disable();
  return g;
}

// use_torch_proxy_guard, exit (its `finally`).
void Engine::guard_exit(const GuardEntry& g) {
  if (g.noop) return;
  if (!g.enable) enable(std::nullopt);
  if (rules_.guard_saves_copy) {
    assign_set(finder_.scope, g.old_scope);
    release_set(g.old_scope);  // the guard's own hold
  } else {
    // The guard's hold on the saved object passes to the finder.
    release_scope_object(finder_.scope_object);
    finder_.scope_object = g.old_scope_object;
    assign_set(finder_.scope, scope_objects_[static_cast<size_t>(g.old_scope_object)].value);
  }
  finder_.globally_enabled = g.old_global;
  if (g.enable) disable();
}

}  // namespace impsim
