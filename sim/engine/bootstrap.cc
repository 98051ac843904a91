// CPython's side: importlib._bootstrap (3.11) and importlib.util.find_spec.
// Each function names the one it mirrors; read them side by side.
#include <fmt/format.h>

#include <optional>
#include <tuple>

#include "impsim/engine/engine.h"
#include "impsim/engine/finders/proxy_hot_path.h"

namespace impsim {

namespace {
constexpr const char* kCallSuffix = " while calling a Python object";
std::string repr(const std::string& s) { return "'" + s + "'"; }
}  // namespace

EngineContext::EngineContext(const Model& model, Variant variant, EngineLimits limits, EngineKind kind)
    : model_(model),
      names_(model.names),
      variant_(variant),
      design_(design_of(variant)),
      rules_(rules_of(variant.revision.value_or(model.axes.revision))),
      snapshot_meta_path_(find_spec_iterates_snapshot(model.axes.cpython)),
      recursion_(recursion_rule(model.axes.cpython)),
      fast_(kind == EngineKind::Fast) {
  book_.limits = limits;
  finder_.sets = model.sets;
  finder_.sets.pin_all();
  finder_.covers.reset(finder_.sets.ids(), names_.size());
  interp_.collect_interval = kMinCollect;
  hooks_ = model.hooks.used;
  // The memo does not key on the list of finder objects: hook scenarios are
  // stepped whatever was asked (plan_runs refuses --engine fast for them).
  if (hooks_) fast_ = false;
  if (!model.threads.empty()) fast_ = false;  // the memo knows nothing of threads
  search_extras_ = hooks_ || snapshot_meta_path_;
  book_.max_events = limits.max_events.value_or(fast_ ? kNoEventLimit : limits.default_bound);
  book_.max_work = limits.max_work.value_or(fast_ ? limits.default_bound : kNoEventLimit);
  update_step_limit();
}

void EngineContext::raise(std::string type, std::string message) { throw PyError{std::move(type), std::move(message), {}}; }

void EngineContext::update_step_limit() {
  // max_work, or what max_events leaves after the replayed events (in 64
  // bits: replayed never passes max_events), whichever is less.
  uint64_t limit = book_.max_work;
  if (book_.max_events != kNoEventLimit) {
    Count left = Count(book_.max_events) - book_.replayed_events;
    if (left < limit) limit = left.u64();
  }
  // A replay is made only if it stays within max_events, so the limit is
  // never below what was stepped; were it so, the next event stops the run
  // rather than the difference wrapping into no limit at all.
  const uint64_t stepped = book_.stepped_events();
  const uint64_t room = limit > stepped ? limit - stepped : 0;
  // At most 2^63 - 1 events ahead: more would take centuries to step.
  book_.events_left = room > uint64_t{INT64_MAX} ? INT64_MAX : static_cast<int64_t>(room);
  book_.events_base = stepped + static_cast<uint64_t>(book_.events_left);
}

void EngineContext::event_limit_reached() {
  if (book_.max_events != kNoEventLimit && events() > book_.max_events)
    throw LimitReached{
        "max-events",
        fmt::format("{} simulated events (finder asks + toggles); raise it with --max-events", book_.max_events),
        {}};
  throw LimitReached{"max-work",
                     fmt::format("{} events stepped (asks + toggles not answered from memory); raise it with "
                                 "--max-work",
                                 book_.max_work),
                     {}};
}

ModuleId EngineContext::new_module(NameId name, bool proxy, PathRef path, SpecId spec) {
  return interp_.records.new_module(Module{name, proxy, path, 0, spec, current_step(), nullptr});
}

SpecId EngineContext::new_spec(NameId name, LoaderId loader, PathRef search) {
  return interp_.records.new_spec(Spec{name, loader, search});
}

LoaderId EngineContext::new_loader(Loader l) { return interp_.records.new_loader(l); }

// The threads' counters summed (the deepest lookup: the deepest of any).
Counters EngineContext::counters() const {
  Counters c = py_thread_.counters();
  for (const PyThread& t : parked_) {
    const Counters tc = t.counters();
    c.add_delta(tc, Counters{});
    c.max_depth = std::max(c.max_depth, tc.max_depth);
  }
  return c;
}

HookCounters FinderObjects::hook_counters() const {
  HookCounters h = py_thread_.hook_counters;
  for (const PyThread& t : parked_) {
    h.add_delta(t.hook_counters, HookCounters{});
    h.max_depth = std::max(h.max_depth, t.hook_counters.max_depth);
    h.hook_depth = std::max(h.hook_depth, t.hook_counters.hook_depth);
  }
  return h;
}

// The interpreter before the program's first line: sys.modules as the
// scenario describes it, sys.meta_path = [BuiltinImporter, FrozenImporter,
// PathFinder], the finder absent, global, with an empty scope.
void ImportSystem::set_up() {
  interp_.sys_modules.reset(names_, model_.filler);
  finder_.cache.reset(names_.size());
  finder_.reset_object();
  finder_.scope_objects.clear();
  finder_.free_scope_objects.clear();
  if (!rules_.guard_saves_copy) finder_.scope_object = new_scope_object(kEmptySet);
  finder_.blocked = model_.blocked;
  py_thread_.resolving.assign(names_.size(), 0);
  finder_.resolving.assign(names_.size(), 0);
  finder_.resolving_list.clear();
  py_thread_.meta_path_snapshots.clear();
  lazy_ = LazyImports{};
  lazy_.used = model_.lazy;
  interp_.path_miss.assign(names_.size(), kNoPath);
  book_.labels.assign(model_.labels.size(), LabelTotals{});
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
    interp_.sys_modules.set(name, new_module(name, false, path, spec));
  };
  for (NameId n : model_.preloaded) preload(n, false);
  for (NameId n : model_.torch_modules) preload(n, true);
  interp_.meta_path.assign({kBuiltinImporter, kFrozenImporter, kPathFinder});
  if (hooks_) set_up_hooks();
}

template <class M>
void ImportSystem::import_statement(NameId name) {
  if (threaded<M>()) [[unlikely]] {
    // `import a.b` imports a.b, then `a` again as its own name.
    engine().import_name_threaded(name);
    if (const NameId top = names_.top(name); top != name) engine().import_name_threaded(top);
    return;
  }
  if (!interp_.sys_modules.contains(name)) _find_and_load<M>(name);
  NameId top = names_.top(name);
  if (top != name && !interp_.sys_modules.contains(top)) _find_and_load<M>(top);
}

// _find_and_load: a module already in sys.modules (even one still
// initialising, as in a circular import) is returned as it is. The trace sees
// the import where CPython holds the module's lock (`with
// _ModuleLockManager(name)`), raising or not.
template <class M>
ModuleId ImportSystem::_find_and_load(NameId name) {
  if (threaded<M>()) [[unlikely]]
    return engine()._find_and_load_threaded(name);
  if (interp_.sys_modules.contains(name)) return interp_.sys_modules.get(name);
  if (!traced<M>()) return _find_and_load_unlocked<M>(name);
  book_.trace->import_begin(engine(), name);
  return try_finally([&] { return _find_and_load_unlocked<M>(name); },
                     [&](bool raised) { book_.trace->import_end(engine(), name, !raised); });
}

template <class M>
ModuleId ImportSystem::_find_and_load_unlocked(NameId name) {
  PathRef path = kNoPath;  // None: a top-level search of sys.path
  NameId parent = names_.parent(name);
  if (parent != kNoName) {
    if (!interp_.sys_modules.contains(parent)) {
      // A C++ frame per part of the name: a name of millions of parts
      // (--max-name-length raised) would overflow the engine's stack, so
      // the nesting counts against --max-body-depth as bodies do.
      enter_body_depth("module bodies, calls and parent imports");
      try_finally([&] { _find_and_load<M>(parent); }, [&] { --py_thread_.body_depth; });
    }
    // "Crazy side-effects!": the parent's import may have imported us.
    if (interp_.sys_modules.contains(name)) return interp_.sys_modules.get(name);
    if (!interp_.sys_modules.contains(parent)) raise("KeyError", repr(names_.text(parent)));
    const Module& parent_module = interp_.records.module(interp_.sys_modules.get(parent));
    if (parent_module.path == kNoPath)
      raise("ModuleNotFoundError",
            fmt::format("No module named {}; {} is not a package", repr(names_.text(name)), repr(names_.text(parent))));
    path = parent_module.path;
    // gh-130094: a parent still initialising is imported again, which waits
    // for the thread running its body; it may have imported us meanwhile.
    // Only another thread's import can be waited for: in a single thread
    // the module lock is the thread's own, taken again and given back.
    if (threaded<M>() && thread_run_.lock_rules.reimports_initialising_parent && engine().initializing(parent)) {
      engine()._find_and_load_threaded(parent);
      if (interp_.sys_modules.contains(name)) return interp_.sys_modules.get(name);
    }
  }
  SpecId spec = _find_spec<M>(name, path);
  if (spec == kNoSpec) raise("ModuleNotFoundError", fmt::format("No module named {}", repr(names_.text(name))));
  ModuleId module = _load_unlocked<M>(spec);
  // setattr(sys.modules[parent], child, module)
  if (parent != kNoName && !interp_.sys_modules.contains(parent)) raise("KeyError", repr(names_.text(parent)));
  if constexpr (!M::plain)
    if (lazy_.used) engine().module_loaded(name, module);
  return module;
}

// _find_spec: `for finder in sys.meta_path`, over the live list. Python's
// list iterator keeps an index and re-reads the length at every step, so a
// finder inserted at 0 or removed while another runs shifts what comes
// next. CPython 3.14 (gh-130094) iterates `list(sys.meta_path)`, a snapshot
// taken when the loop starts. Up to 3.11 a finder without find_spec (a
// legacy one) is asked through _find_spec_legacy; 3.12 skips it.
template <class M>
SpecId ImportSystem::_find_spec(NameId name, PathRef path) {
  if constexpr (!M::plain) {
    // Past the sink's cut, a search runs as its TalliedRun (run_mode.h).
    if (tallied_.find_spec && book_.trace->tally) [[unlikely]] {
      book_.tally = book_.trace->tally;
      return (engine().*tallied_.find_spec)(name, path);
    }
  }
  const MetaPath& meta_path = search_extras<M>() ? begin_search() : interp_.meta_path;
  const bool is_reload = interp_.sys_modules.contains(name);
  // The parent import may have already imported this module.
  auto found = [&](SpecId spec) {
    if (spec != kNoSpec && !is_reload && interp_.sys_modules.contains(name)) {
      const SpecId existing = interp_.records.module(interp_.sys_modules.get(name)).spec;
      return existing == kNoSpec ? spec : existing;
    }
    return spec;
  };
  SpecId spec = kNoSpec;
  if constexpr (M::plain) {
    // A plain run's list is P's copies, then BuiltinImporter,
    // FrozenImporter and PathFinder (only a hook scenario's steps put
    // anything else there), and the first two answer None untraced: the
    // loop asks the copies, their count re-read at every turn as the
    // list's length is, then PathFinder.
    int64_t i = 0;
    for (; i < meta_path.proxy_copies(); ++i) {
      spec = traced_proxy_find_spec<M>(name, i, meta_path);
      if (spec != kNoSpec) return found(spec);
    }
    if constexpr (M::tallied) {
      // Traced, the loop asks every finder from i on: BuiltinImporter and
      // FrozenImporter answer None, PathFinder, the last, searches. (i is
      // past the copies: further, if an ask disabled copies before it.)
      const int64_t n = meta_path.size();
      if (i >= n) return found(kNoSpec);
      // Each ask opened and closed with nothing between: counted at once.
      TraceTally* t = tally<M>();
      const auto asks = static_cast<uint64_t>(n - i);
      t->opened[TraceTally::Ask] += asks;
      t->closed += asks;
      t->merged += asks;
      t->ticks += asks;
      t->pending = false;
      return found(path_finder_find_spec(name, path));
    }
    return found(path_finder_find_spec(name, path));
  }
  // One turn of the loop: `finder`, read at i, asked; `stop` when the rest
  // of the list need not be.
  auto ask_at = [&](int64_t i, FinderId finder, bool& stop) -> SpecId {
    if (finder == kProxyFinder) return traced_proxy_find_spec<M>(name, i, meta_path);
    const FinderClass cls = class_of(finder);
    if (!hooks<M>()) {
      // BuiltinImporter and FrozenImporter answer None without touching
      // anything (a Paddle scenario declares no builtin names): untraced
      // and single-threaded, the loop goes straight to PathFinder, the last.
      if (!traced<M>() && !threaded<M>()) {
        stop = true;
        return path_finder_find_spec(name, path);
      }
      if (traced<M>()) book_.trace->ask_begin(engine(), name, cls, finder, i, meta_path);
      const SpecId found_here = cls == FinderClass::Path ? path_finder_find_spec(name, path) : kNoSpec;
      if (traced<M>())
        book_.trace->ask_end(engine(), name, cls, found_here != kNoSpec ? AskAnswer::Spec : AskAnswer::None);
      return found_here;
    }
    // A legacy finder: `finder.find_spec` raises AttributeError, so 3.12+
    // goes on to the next finder; up to 3.11 _find_spec_legacy calls
    // find_module.
    const bool legacy = is_legacy_finder(finder);
    if (legacy && hook_finders_.legacy_finders == LegacyFinders::Skipped) {
      count_event();  // the AttributeError of `finder.find_spec`: an ask all the same
      return kNoSpec;
    }
    auto ask = [&] { return legacy ? _find_spec_legacy(finder, name, path) : finder_find_spec(finder, name, path); };
    if (!traced<M>()) return ask();
    // The trace hears the ask end even when an exception leaves it.
    SpecId answer = kNoSpec;
    book_.trace->ask_begin(engine(), name, cls, finder, i, meta_path);
    try_finally([&] { answer = ask(); },
                [&](bool raised) {
                  book_.trace->ask_end(engine(), name, cls,
                                       raised              ? AskAnswer::Raised
                                       : answer != kNoSpec ? AskAnswer::Spec
                                                           : AskAnswer::None);
                });
    return answer;
  };
  try {
    for (int64_t i = 0; i < meta_path.size(); ++i) {
      bool stop = false;
      if (threaded<M>()) [[unlikely]] {
        // `for finder in meta_path: with _ImportLockContext(): ...
        // finder.find_spec(...)`: the finder is taken before the lock,
        // which another thread may hold while it edits the list.
        const FinderId finder = meta_path.at(i);
        engine().acquire_import_lock(LockSite::FindSpec);
        spec = try_finally_switching([&] { return ask_at(i, finder, stop); },
                                     [&] { engine().release_import_lock(LockSite::FindSpec); });
      } else {
        spec = ask_at(i, meta_path.at(i), stop);
      }
      if (spec != kNoSpec || stop) break;
    }
  } catch (PyError&) {
    if (search_extras<M>()) end_search();
    throw;
  }
  if (search_extras<M>()) [[unlikely]]
    end_search();
  return found(spec);
}

// What _find_spec does besides its loop in some runs: a hook scenario's
// search is counted, and bounded where CPython raises RecursionError
// (recursion.h), or by --max-lookup-depth where that is not modelled (each
// nesting is a C++ frame here); CPython 3.14 walks a snapshot of
// sys.meta_path, kept on the thread until the search ends. Returns the list
// to walk.
const MetaPath& ImportSystem::begin_search() {
  const SearchEntry entry = py_thread_.next_entry;
  py_thread_.next_entry = SearchEntry::ImportStatement;
  if (snapshot_meta_path_) py_thread_.meta_path_snapshots.push_back(interp_.meta_path);
  if (!hooks_) return py_thread_.meta_path_snapshots.back();
  // _find_spec's frame, above the frames of the way in.
  const int64_t depth = py_thread_.py_depth + entry_frames(entry) + 1;
  if (recursion_.modelled) {
    const int64_t bound =
        entry == SearchEntry::ImportStatement ? recursion_.search_via_import : recursion_.search_via_find_spec;
    // An import chain runs out of room on its module lock's C calls or on
    // its own frames, alternately (3.9 to 3.11 name only the first).
    const bool names_call = entry != SearchEntry::ImportStatement || (depth - bound) % 2 == 1;
    if (depth > bound) recursion_error(recursion_.call_suffix && names_call ? kCallSuffix : "");
  }
  ++py_thread_.hook_counters.searches;
  // Every open hook call of this thread passed its claims test: one of
  // them (a re-entry, an import in its actions, a body that runs) began it.
  if (py_thread_.hook_call_depth > 0) ++py_thread_.hook_counters.hook_reentries;
  ++py_thread_.search_depth;
  if (py_thread_.search_depth > py_thread_.hook_counters.max_depth)
    py_thread_.hook_counters.max_depth = py_thread_.search_depth;
  if (py_thread_.search_depth > py_thread_.label_search_high) py_thread_.label_search_high = py_thread_.search_depth;
  py_thread_.py_outer.emplace_back(py_thread_.py_depth, py_thread_.py_in_hook);
  py_thread_.py_depth = depth;
  py_thread_.py_in_hook = false;
  if (recursion_.modelled) {
    // The search is counted; its first finder call finds no room.
    if (depth > recursion_.finder_after_search && interp_.meta_path.size() > 0) {
      end_search();
      recursion_error(recursion_.call_suffix ? kCallSuffix : "");
    }
  } else if (py_thread_.search_depth > static_cast<uint64_t>(book_.limits.max_lookup_depth)) {
    throw LimitReached{
        "lookup-depth",
        fmt::format("_find_spec nested {} deep; raise it with --max-lookup-depth", py_thread_.search_depth),
        {}};
  }
  return snapshot_meta_path_ ? py_thread_.meta_path_snapshots.back() : interp_.meta_path;
}

void ImportSystem::end_search() {
  if (hooks_) {
    --py_thread_.search_depth;
    std::tie(py_thread_.py_depth, py_thread_.py_in_hook) = py_thread_.py_outer.back();
    py_thread_.py_outer.pop_back();
  }
  if (snapshot_meta_path_) py_thread_.meta_path_snapshots.pop_back();
}

void EngineContext::recursion_error(const char* suffix) {
  raise("RecursionError", std::string("maximum recursion depth exceeded") + suffix);
}

// PathFinder.find_spec's search of the tree, once path_finder_find_spec's
// tests let it through.
SpecId FinderObjects::path_finder_search(NameId name, PathRef path) {
  TreeId t;
  if (names_.parent(name) == kNoName) {
    t = model_.tree_of_top[name];
  } else {
    t = model_.find_child(path, name);
    if (t < 0) interp_.path_miss[static_cast<size_t>(name)] = path;
  }
  if (t < 0) return kNoSpec;
  LoaderId loader = new_loader(Loader{LoaderKind::Source, false, 0, t});
  return new_spec(name, loader, model_.tree[t].package ? t : kNoPath);
}

// module_from_spec, with _init_module_attrs: __spec__ is always set,
// __path__ only where the module has none yet.
ModuleId ImportSystem::module_from_spec(SpecId spec) {
  ModuleId m = create_module(interp_.records.spec(spec).loader, spec);
  if (m == kNoModule) m = new_module(interp_.records.spec(spec).name, false, kNoPath, spec);
  Module& mod = interp_.records.write_module(m);
  mod.spec = spec;
  if (mod.path == kNoPath && interp_.records.spec(spec).search != kNoPath) mod.path = interp_.records.spec(spec).search;
  return m;
}

ModuleId ImportSystem::create_module(LoaderId loader, SpecId spec) {
  const Loader l = interp_.records.loader(loader);
  switch (l.kind) {
    case LoaderKind::Source:
    case LoaderKind::Empty:
      return kNoModule;
    case LoaderKind::Cached:
      return l.ref;
    case LoaderKind::CachedByName:
      return finder_.cache.get(l.ref);  // the cache is never emptied
    case LoaderKind::Proxy: {
      // TorchProxyLoader.create_module: a ProxyModule carrying the paddle
      // module's __path__ when the spec was made for a package.
      const Module& source = interp_.records.module(l.ref);
      bool is_pkg = interp_.records.spec(spec).search != kNoPath;
      PathRef path = is_pkg ? (source.path == kNoPath ? kEmptyPath : source.path) : kNoPath;
      return new_module(interp_.records.spec(spec).name, true, path, spec);
    }
    case LoaderKind::HookServe:
    case LoaderKind::HookWrapped:
      return hook_create_module(loader, spec);
    case LoaderKind::Specific: {
      ModuleId m = create_module(l.ref, spec);
      if (m == kNoModule)
        m = new_module(interp_.records.spec(spec).name, false, interp_.records.spec(spec).search, spec);
      return m;
    }
  }
  return kNoModule;
}

template <class M>
void ImportSystem::exec_module(LoaderId loader, ModuleId module) {
  const Loader l = interp_.records.loader(loader);
  switch (l.kind) {
    case LoaderKind::Source:
      engine().run_body<M>(module, model_.tree[l.ref].body, /*is_call=*/false);
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
      if (const uint8_t marks = interp_.records.module(l.ref).marks) {
        Module& m = interp_.records.write_module(module);
        m.marks |= marks;
        m.marked_by = current_step();
      }
      return;
    case LoaderKind::Specific: {
      // SpecificModuleLoader.exec_module: the body under its own guard,
      // then the mark.
      GuardEntry g = guard_enter<M>(l.exec_enable, std::nullopt, GuardSite::Loader);
      try_finally([&] { exec_module<M>(l.ref, module); }, [&] { guard_exit<M>(g); });
      Module& m = interp_.records.write_module(module);
      m.marks |= l.mark;
      m.marked_by = current_step();
      return;
    }
  }
}

template <class M>
ModuleId ImportSystem::_load_unlocked(SpecId spec) {
  ModuleId module = module_from_spec(spec);
  NameId name = interp_.records.spec(spec).name;
  if (threaded<M>()) [[unlikely]]
    return engine()._load_unlocked_threaded(spec, module);
  interp_.sys_modules.set(name, module);
  try {
    exec_module<M>(interp_.records.spec(spec).loader, module);
  } catch (PyError&) {
    interp_.sys_modules.erase(name);
    throw;
  }
  // module = sys.modules.pop(spec.name); sys.modules[spec.name] = module
  if (!interp_.sys_modules.contains(name)) raise("KeyError", repr(names_.text(name)));
  interp_.sys_modules.move_to_end(name);
  return interp_.sys_modules.get(name);
}

// importlib.util.find_spec(name): sys.modules first, then the parent is
// imported (`__import__(parent, fromlist=['__path__'])`), then _find_spec.
template <class M>
SpecId ImportSystem::find_spec(NameId name) {
  if (interp_.sys_modules.contains(name)) return interp_.records.module(interp_.sys_modules.get(name)).spec;
  NameId parent = names_.parent(name);
  PathRef path = kNoPath;
  if (parent != kNoName) {
    // `__import__(parent_name, fromlist=['__path__'])`
    const ModuleId parent_module = threaded<M>() ? engine().import_name_threaded(parent) : _find_and_load<M>(parent);
    path = interp_.records.module(parent_module).path;
    if (path == kNoPath)
      raise("ModuleNotFoundError", fmt::format("__path__ attribute not found on {} while trying to find {}",
                                               repr(names_.text(parent)), repr(names_.text(name))));
  }
  py_thread_.next_entry = SearchEntry::FindSpec;
  return _find_spec<M>(name, path);
}

// importlib.reload(sys.modules[name]): the name searched for again through
// sys.meta_path (_find_spec with the module as target, which no finder
// modelled here reads), then _bootstrap._exec: the found loader's
// exec_module runs on the SAME module object, with no create_module, and
// the module is moved to the end of sys.modules, raising or not. With
// threads, _exec holds the module's lock (`with _ModuleLockManager(name)`)
// across all of that: a thread importing the name for the first time waits
// for it, two locks taken in opposite orders are a _DeadlockError, and the
// exec is bracketed by scheduling points as _load_unlocked's is. The
// module's spec is not `_initializing`, so an import of the name in
// sys.modules does not wait.
template <class M>
void ImportSystem::reload(NameId name) {
  if (!interp_.sys_modules.contains(name)) raise("KeyError", repr(names_.text(name)));  // sys.modules[name]
  const ModuleId module = interp_.sys_modules.get(name);
  std::vector<NameId>& reloading = interp_.reloading;
  if (std::find(reloading.begin(), reloading.end(), name) != reloading.end()) return;
  reloading.push_back(name);
  try_finally(
      [&] {
        PathRef path = kNoPath;
        if (const NameId parent = names_.parent(name); parent != kNoName) {
          if (!interp_.sys_modules.contains(parent))
            raise("ImportError", fmt::format("parent {} not in sys.modules", repr(names_.text(parent))));
          path = interp_.records.module(interp_.sys_modules.get(parent)).path;
          if (path == kNoPath)
            raise("AttributeError", fmt::format("module {} has no attribute '__path__'", repr(names_.text(parent))));
        }
        // reload calls _find_spec itself, one frame deep, as util.find_spec does.
        py_thread_.next_entry = SearchEntry::FindSpec;
        const SpecId spec = _find_spec<M>(name, path);
        if (spec == kNoSpec)
          raise("ModuleNotFoundError", fmt::format("spec not found for the module {}", repr(names_.text(name))));
        interp_.records.write_module(module).spec = spec;  // module.__spec__ = spec
        if (threaded<M>()) [[unlikely]] {
          engine().module_lock_enter(name);
          try_finally_switching([&] { _exec<M>(spec, module); }, [&] { engine().module_lock_exit(name); });
        } else {
          _exec<M>(spec, module);  // one thread: nobody else holds the module's lock
        }
      },
      [&] { std::erase(interp_.reloading, name); });
}

// _bootstrap._exec(spec, module) inside its `with _ModuleLockManager(name)`:
// the module must still be the one in sys.modules; _init_module_attrs
// (override=True), the loader's exec_module, and, raising or not, the
// name moved to the end of sys.modules.
template <class M>
void ImportSystem::_exec(SpecId spec, ModuleId module) {
  const NameId name = interp_.records.spec(spec).name;
  if (!interp_.sys_modules.contains(name) || interp_.sys_modules.get(name) != module)
    raise("ImportError", fmt::format("module {} not in sys.modules", repr(names_.text(name))));
  if (interp_.records.spec(spec).search != kNoPath)
    interp_.records.write_module(module).path = interp_.records.spec(spec).search;
  // finally: module = sys.modules.pop(name); sys.modules[name] = module
  auto pop_and_put_back = [&] {
    if (!interp_.sys_modules.contains(name)) raise("KeyError", repr(names_.text(name)));
    interp_.sys_modules.move_to_end(name);
  };
  // With threads the exec's start and end are scheduling points, the end
  // passed outside the handler (no fiber may switch inside one).
  if (threaded<M>()) [[unlikely]]
    engine().schedule_point(PointKind::ExecBegin, name);
  std::optional<PyError> raised;
  try {
    exec_module<M>(interp_.records.spec(spec).loader, module);
  } catch (PyError& e) {
    raised = std::move(e);
  }
  if (threaded<M>()) [[unlikely]]
    engine().schedule_point(PointKind::ExecEnd, name);
  pop_and_put_back();  // a KeyError here replaces the error, as in Python
  if (raised) throw std::move(*raised);
}

// Whether the run's mode can be a PlainRun (run_mode.h): stepped, untraced,
// no hooks, the live list walked. Its design and revision pick which one.
bool EngineContext::plain_run() const { return !book_.trace && plain_but_traced(); }

// A traced run that is otherwise plain: past its sink's cut, a TalliedRun
// (run_mode.h).
bool EngineContext::plain_but_traced() const { return !fast_ && !hooks_ && !snapshot_meta_path_ && model_.threads.empty(); }

#define IMPSIM_INSTANTIATE(M)                                   \
  template void ImportSystem::import_statement<M>(NameId);            \
  template ModuleId ImportSystem::_find_and_load<M>(NameId);          \
  template ModuleId ImportSystem::_find_and_load_unlocked<M>(NameId); \
  template SpecId ImportSystem::_find_spec<M>(NameId, PathRef);       \
  template void ImportSystem::exec_module<M>(LoaderId, ModuleId);     \
  template ModuleId ImportSystem::_load_unlocked<M>(SpecId);          \
  template SpecId ImportSystem::find_spec<M>(NameId);                 \
  template void ImportSystem::reload<M>(NameId);                      \
  template void ImportSystem::_exec<M>(SpecId, ModuleId);
IMPSIM_EACH_RUN_MODE(IMPSIM_INSTANTIATE)
#undef IMPSIM_INSTANTIATE

}  // namespace impsim
