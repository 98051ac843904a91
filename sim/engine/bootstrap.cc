// CPython's side: importlib._bootstrap (3.11) and importlib.util.find_spec.
// Each function names the one it mirrors; read them side by side.
#include <fmt/format.h>

#include "impsim/engine/engine.h"

namespace impsim {

namespace {
std::string repr(const std::string& s) { return "'" + s + "'"; }
}  // namespace

Engine::Engine(const Model& model, Variant variant, EngineLimits limits, EngineKind kind)
    : model_(model),
      names_(model.names),
      variant_(variant),
      design_(design_of(variant)),
      rules_(rules_of(variant.revision.value_or(model.axes.revision))),
      snapshot_meta_path_(find_spec_iterates_snapshot(model.axes.cpython)),
      fast_(kind == EngineKind::Fast),
      limits_(limits),
      sets_(model.sets) {
  sets_.pin_all();
  hooks_ = model.hooks.used;
  // The memo does not key on the list of finder objects: hook scenarios are
  // stepped whatever was asked (plan_runs refuses --engine fast for them).
  if (hooks_) fast_ = false;
  max_events_ = limits.max_events.value_or(fast_ ? kNoEventLimit : limits.default_bound);
  max_work_ = limits.max_work.value_or(fast_ ? limits.default_bound : kNoEventLimit);
  update_step_limit();
}

void Engine::raise(std::string type, std::string message) { throw PyError{std::move(type), std::move(message), {}}; }

void Engine::update_step_limit() {
  step_limit_ = max_work_;
  if (max_events_ == kNoEventLimit) return;
  // max_events - replayed, in 64 bits (replayed never passes max_events).
  Count left = Count(max_events_) - replayed_events_;
  if (left < step_limit_) step_limit_ = left.u64();
}

void Engine::event_limit_reached() {
  if (max_events_ != kNoEventLimit && events() > max_events_)
    throw LimitReached{"max-events",
                       fmt::format("{} simulated events (finder asks + toggles); raise it with --max-events",
                                   max_events_),
                       {}};
  throw LimitReached{"max-work",
                     fmt::format("{} events stepped (asks + toggles not answered from memory); raise it with "
                                 "--max-work",
                                 max_work_),
                     {}};
}

ModuleId Engine::new_module(NameId name, bool proxy, PathRef path, SpecId spec) {
  return records_.new_module(Module{name, proxy, path, 0, spec, current_step(), nullptr});
}

SpecId Engine::new_spec(NameId name, LoaderId loader, PathRef search) { return records_.new_spec(Spec{name, loader, search}); }

LoaderId Engine::new_loader(Loader l) { return records_.new_loader(l); }

Counters Engine::counters() const {
  Counters c = totals_;
  c.asks += step_counts_.asks;
  c.suppressed += step_counts_.suppressed;
  c.lookups += step_counts_.lookups;
  c.toggles += step_counts_.toggles;
  c.walks += step_counts_.walks;
  c.comparisons += step_counts_.comparisons;
  c.max_depth = peak_depth_;
  return c;
}

// The interpreter before the program's first line: sys.modules as the
// scenario describes it, sys.meta_path = [BuiltinImporter, FrozenImporter,
// PathFinder], the finder absent, global, with an empty scope.
void Engine::set_up() {
  sys_modules_.reset(names_, model_.filler);
  cache_.reset(names_.size());
  finder_ = FinderState{};
  scope_objects_.clear();
  free_scope_objects_.clear();
  if (!rules_.guard_saves_copy) finder_.scope_object = new_scope_object(kEmptySet);
  finder_.blocked = model_.blocked;
  finder_.resolving.assign(names_.size(), 0);
  path_miss_.assign(names_.size(), kNoPath);
  labels_.assign(model_.labels.size(), LabelTotals{});
  auto preload = [&](NameId name, bool torch) {
    TreeId t = model_.find_tree(name);
    LoaderId loader;
    PathRef path;
    if (t >= 0) {
      loader = new_loader(Loader{LoaderKind::Source, false, 0, t});
      path = model_.tree[t].package ? t : kNoPath;
    } else {
      loader = new_loader(Loader{LoaderKind::Empty, false, 0, -1});
      path = torch ? kEmptyPath : kNoPath;
    }
    SpecId spec = new_spec(name, loader, path);
    sys_modules_.set(name, new_module(name, false, path, spec));
  };
  for (NameId n : model_.preloaded) preload(n, false);
  for (NameId n : model_.torch_modules) preload(n, true);
  if (hooks_) set_up_hooks();
}

void Engine::import_statement(NameId name) {
  if (!sys_modules_.contains(name)) _find_and_load(name);
  NameId top = names_.top(name);
  if (top != name && !sys_modules_.contains(top)) _find_and_load(top);
}

// _find_and_load: a module already in sys.modules (even one still
// initialising, as in a circular import) is returned as it is. The trace sees
// the import where CPython holds the module's lock (`with
// _ModuleLockManager(name)`), raising or not.
ModuleId Engine::_find_and_load(NameId name) {
  if (sys_modules_.contains(name)) return sys_modules_.get(name);
  if (!trace_) return _find_and_load_unlocked(name);
  trace_->import_begin(*this, name);
  return try_finally([&] { return _find_and_load_unlocked(name); },
                     [&](bool raised) { trace_->import_end(*this, name, !raised); });
}

ModuleId Engine::_find_and_load_unlocked(NameId name) {
  PathRef path = kNoPath;  // None: a top-level search of sys.path
  NameId parent = names_.parent(name);
  if (parent != kNoName) {
    if (!sys_modules_.contains(parent)) _find_and_load(parent);
    // "Crazy side-effects!": the parent's import may have imported us.
    if (sys_modules_.contains(name)) return sys_modules_.get(name);
    if (!sys_modules_.contains(parent)) raise("KeyError", repr(names_.text(parent)));
    const Module& parent_module = records_.module(sys_modules_.get(parent));
    if (parent_module.path == kNoPath)
      raise("ModuleNotFoundError", fmt::format("No module named {}; {} is not a package", repr(names_.text(name)),
                                               repr(names_.text(parent))));
    path = parent_module.path;
  }
  SpecId spec = _find_spec(name, path);
  if (spec == kNoSpec) raise("ModuleNotFoundError", fmt::format("No module named {}", repr(names_.text(name))));
  ModuleId module = _load_unlocked(spec);
  // setattr(sys.modules[parent], child, module)
  if (parent != kNoName && !sys_modules_.contains(parent)) raise("KeyError", repr(names_.text(parent)));
  return module;
}

// _find_spec: `for finder in sys.meta_path` over the live list. Python's
// list iterator keeps an index and re-reads the length at every step, so
// copies inserted at 0 or removed while a finder runs shift what comes next.
// CPython 3.14 (gh-130094) iterates `list(sys.meta_path)`, taken here: the
// copies present when the loop starts, whatever happens to the list after.
// Scenarios with finder objects (hooks) walk a list of them instead
// (sim/engine/finders/meta_path.cc): this loop is Paddle's fast path.
SpecId Engine::_find_spec(NameId name, PathRef path) {
  if (hooks_) [[unlikely]]
    return _find_spec_over_objects(name, path);
  const int64_t snapshot = finder_.copies;
  auto copies = [&] { return snapshot_meta_path_ ? snapshot : finder_.copies; };
  bool is_reload = sys_modules_.contains(name);
  for (int64_t i = 0; i < copies() + 3; ++i) {
    SpecId spec;
    if (i < copies()) {
      spec = traced_proxy_find_spec(name, i, copies());
    } else {
      // BuiltinImporter and FrozenImporter answer None without touching
      // anything: untraced, the loop goes straight to PathFinder, the last.
      if (!trace_) i = copies() + 2;
      const int64_t which = i - copies();
      const FinderKind kind = which == 0 ? FinderKind::Builtin : which == 1 ? FinderKind::Frozen : FinderKind::Path;
      if (trace_) trace_->ask_begin(*this, name, kind, i, copies());
      spec = which == 2 ? path_finder_find_spec(name, path) : kNoSpec;
      if (trace_) trace_->ask_end(*this, name, kind, spec != kNoSpec ? AskAnswer::Spec : AskAnswer::None);
    }
    if (spec != kNoSpec) {
      if (!is_reload && sys_modules_.contains(name)) {
        SpecId existing = records_.module(sys_modules_.get(name)).spec;
        return existing == kNoSpec ? spec : existing;
      }
      return spec;
    }
  }
  return kNoSpec;
}

SpecId Engine::path_finder_find_spec(NameId name, PathRef path) {
  TreeId t;
  if (names_.parent(name) == kNoName) {
    if (path != kNoPath) return kNoSpec;  // never happens: top-level searches pass None
    t = model_.tree_of_top[name];
  } else {
    if (path < 0) return kNoSpec;  // None or []
    // A probe for a missing name asks again and again with the same path.
    PathRef& missed = path_miss_[static_cast<size_t>(name)];
    if (missed == path) return kNoSpec;
    t = model_.find_child(path, name);
    if (t < 0) missed = path;
  }
  if (t < 0) return kNoSpec;
  LoaderId loader = new_loader(Loader{LoaderKind::Source, false, 0, t});
  return new_spec(name, loader, model_.tree[t].package ? t : kNoPath);
}

// module_from_spec, with _init_module_attrs: __spec__ is always set,
// __path__ only where the module has none yet.
ModuleId Engine::module_from_spec(SpecId spec) {
  ModuleId m = create_module(records_.spec(spec).loader, spec);
  if (m == kNoModule) m = new_module(records_.spec(spec).name, false, kNoPath, spec);
  Module& mod = records_.write_module(m);
  mod.spec = spec;
  if (mod.path == kNoPath && records_.spec(spec).search != kNoPath) mod.path = records_.spec(spec).search;
  return m;
}

ModuleId Engine::create_module(LoaderId loader, SpecId spec) {
  const Loader l = records_.loader(loader);
  switch (l.kind) {
    case LoaderKind::Source:
    case LoaderKind::Empty:
      return kNoModule;
    case LoaderKind::Cached:
      return l.ref;
    case LoaderKind::CachedByName:
      return cache_.get(l.ref);  // the cache is never emptied
    case LoaderKind::Proxy: {
      // TorchProxyLoader.create_module: a ProxyModule carrying the paddle
      // module's __path__ when the spec was made for a package.
      const Module& source = records_.module(l.ref);
      bool is_pkg = records_.spec(spec).search != kNoPath;
      PathRef path = is_pkg ? (source.path == kNoPath ? kEmptyPath : source.path) : kNoPath;
      return new_module(records_.spec(spec).name, true, path, spec);
    }
    case LoaderKind::HookServe:
    case LoaderKind::HookWrapped:
      return hook_create_module(loader, spec);
    case LoaderKind::Specific: {
      ModuleId m = create_module(l.ref, spec);
      if (m == kNoModule) m = new_module(records_.spec(spec).name, false, records_.spec(spec).search, spec);
      return m;
    }
  }
  return kNoModule;
}

void Engine::exec_module(LoaderId loader, ModuleId module) {
  const Loader l = records_.loader(loader);
  switch (l.kind) {
    case LoaderKind::Source:
      run_body(module, model_.tree[l.ref].body, /*is_call=*/false);
      return;
    case LoaderKind::Empty:
    case LoaderKind::Cached:
    case LoaderKind::CachedByName:
      return;
    case LoaderKind::HookServe:
    case LoaderKind::HookWrapped:
      hook_exec_module(loader, module);
      return;
    case LoaderKind::Proxy:
      // Copies the paddle module's __dict__, its marks included.
      if (const uint8_t marks = records_.module(l.ref).marks) {
        Module& m = records_.write_module(module);
        m.marks |= marks;
        m.marked_by = current_step();
      }
      return;
    case LoaderKind::Specific: {
      // SpecificModuleLoader.exec_module: the body under its own guard,
      // then the mark.
      GuardEntry g = guard_enter(l.exec_enable, std::nullopt, GuardSite::Loader);
      try_finally([&] { exec_module(l.ref, module); }, [&] { guard_exit(g); });
      Module& m = records_.write_module(module);
      m.marks |= l.mark;
      m.marked_by = current_step();
      return;
    }
  }
}

ModuleId Engine::_load_unlocked(SpecId spec) {
  ModuleId module = module_from_spec(spec);
  NameId name = records_.spec(spec).name;
  sys_modules_.set(name, module);
  try {
    exec_module(records_.spec(spec).loader, module);
  } catch (PyError&) {
    sys_modules_.erase(name);
    throw;
  }
  // module = sys.modules.pop(spec.name); sys.modules[spec.name] = module
  if (!sys_modules_.contains(name)) raise("KeyError", repr(names_.text(name)));
  sys_modules_.move_to_end(name);
  return sys_modules_.get(name);
}

// importlib.util.find_spec(name): sys.modules first, then the parent is
// imported (`__import__(parent, fromlist=['__path__'])`), then _find_spec.
SpecId Engine::find_spec(NameId name) {
  if (sys_modules_.contains(name)) return records_.module(sys_modules_.get(name)).spec;
  NameId parent = names_.parent(name);
  PathRef path = kNoPath;
  if (parent != kNoName) {
    ModuleId pm = _find_and_load(parent);
    if (records_.module(pm).path == kNoPath)
      raise("ModuleNotFoundError", fmt::format("__path__ attribute not found on {} while trying to find {}",
                                               repr(names_.text(parent)), repr(names_.text(name))));
    path = records_.module(pm).path;
  }
  return _find_spec(name, path);
}

}  // namespace impsim
