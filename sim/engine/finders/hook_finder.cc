// A hook finder declared as data (hook_language.h): its find_spec, the
// reentrancy guard around a claimed name's actions, and the loaders it
// returns. Each piece names the real pattern it stands for
// (docs/scenario-format.md, "Hooks").
#include <fmt/format.h>

#include <algorithm>

#include "impsim/engine/engine.h"

namespace impsim {

// <hook>.find_spec(fullname, path, target=None): every call counts, a
// suppressed one included; an unclaimed name is None at once.
SpecId FinderObjects::hook_find_spec(FinderId finder, NameId name, PathRef path) {
  // The hook's frame. Called from _find_spec, begin_search made sure there
  // is room for it; called by a hook (`call`, `call_next`), it is one frame
  // above its caller's, and CPython may have no room left (recursion.h).
  const int64_t depth = py_thread_.py_depth + 1;
  const bool bounded = recursion_.modelled && recursion_.hook_from_hook > 0;
  if (bounded && py_thread_.py_in_hook && depth > recursion_.hook_from_hook) recursion_error(recursion_.hook_suffix);
  ++py_thread_.hook_counters.finder_calls;
  // Its depth among hook calls: those open below it all passed their claims
  // test (an unclaimed call returns at once), so hook_call_depth counts them.
  const uint64_t nested = py_thread_.hook_call_depth + 1;
  if (nested > py_thread_.hook_counters.hook_depth) py_thread_.hook_counters.hook_depth = nested;
  if (nested > py_thread_.label_hook_high) py_thread_.label_hook_high = nested;
  count_object_call(finder);
  count_event();
  const int32_t hi = interp_.objects[static_cast<size_t>(finder)].hook;
  const HookClass& hook = hook_finders_.classes[static_cast<size_t>(hi)];
  if (!hook_claims(hook, names_, name, path == kNoPath)) {
    if (book_.trace)
      book_.trace->hook_decide(
          engine(), finder, name,
          hook.top_level_only && path != kNoPath ? HookReason::NotTopLevel : HookReason::NotClaimed);
    return kNoSpec;
  }
  // A hook calling itself directly (`call` of its own id) never walks
  // sys.meta_path, so _find_spec's bound does not see it: where CPython's
  // RecursionError is not modelled for it, this one does.
  const bool unbounded = !recursion_.modelled || (!bounded && py_thread_.py_in_hook);
  if (++py_thread_.hook_call_depth > static_cast<uint64_t>(book_.limits.max_lookup_depth) && unbounded)
    throw LimitReached{"lookup-depth",
                       fmt::format("hook find_spec calls nested {} deep; raise it with --max-lookup-depth",
                                   py_thread_.hook_call_depth),
                       {}};
  const int64_t outer_depth = py_thread_.py_depth;
  const bool outer_in_hook = py_thread_.py_in_hook;
  py_thread_.py_depth = depth;
  py_thread_.py_in_hook = true;
  SpecId spec = try_finally([&] { return hook_guarded(finder, hook, name, path); },
                            [&] {
                              --py_thread_.hook_call_depth;
                              py_thread_.py_depth = outer_depth;
                              py_thread_.py_in_hook = outer_in_hook;
                            });
  if (spec != kNoSpec && hook.loader != LoaderWrap::Unchanged) {
    // spec.loader = Wrapper(spec.loader)
    LoaderId inner = interp_.records.spec(spec).loader;
    hook_finders_.loaders.push_back(HookFinders::Loader{inner, hi, kNoModule, kNoName, finder});
    interp_.records.write_spec(spec).loader =
        new_loader(Loader{LoaderKind::HookWrapped, false, 0, static_cast<int32_t>(hook_finders_.loaders.size() - 1)});
  }
  return spec;
}

// The guard around the actions. A guarded re-entry returns None (it still
// counted as a call in hook_find_spec). A hook with a lock of its own takes
// it before the guard's test, or after it, around the guard's set-up, the
// actions and the guard's clean-up (virtualenv: `if self.fullname is None:`,
// `with self.lock[0]:`, `self.fullname = fullname`, `try: ... finally:`).
SpecId FinderObjects::hook_guarded(FinderId finder, const HookClass& hook, NameId name, PathRef path) {
  if (hook.lock.kind == HookLockKind::None || hook.lock.taken == HookLockTaken::NotInFindSpec)
    return hook_guard_test(finder, hook, name, path, false);
  if (hook.lock.taken == HookLockTaken::BeforeGuardTest)
    return with_hook_lock(finder, name, [&] { return hook_guard_test(finder, hook, name, path, false); });
  return hook_guard_test(finder, hook, name, path, true);
}

SpecId FinderObjects::hook_guard_test(FinderId finder, const HookClass& hook, NameId name, PathRef path,
                               bool lock_after_test) {
  // The guard's test let the name through: said before a lock taken after
  // the test, whose acquire may never return.
  auto run = [&] {
    if (book_.trace && !lock_after_test) book_.trace->hook_decide(engine(), finder, name, HookReason::Claimed);
    return run_hook_actions(finder, hook, name, path);
  };
  auto turned_away = [&](HookReason why) {
    if (book_.trace) book_.trace->hook_decide(engine(), finder, name, why);
    return kNoSpec;
  };
  // What follows a passed test, under the lock when it is taken there.
  auto locked = [&](auto body) -> SpecId {
    if (!lock_after_test) return body();
    if (book_.trace) book_.trace->hook_decide(engine(), finder, name, HookReason::Claimed);
    return with_hook_lock(finder, name, body);
  };
  // `if fullname in S: return None; S.add(fullname); try: ... finally: S.discard(fullname)`.
  // The actions can run a `new` step, which grows hook_finders_.state and moves
  // every object's set: the set is found again for the `finally`, never
  // held across the actions (nor across a lock's acquire, where another
  // thread may run one).
  auto with_set = [&](auto set_now) -> SpecId {
    const std::vector<NameId>& set = set_now();
    if (std::find(set.begin(), set.end(), name) != set.end()) return turned_away(HookReason::InGuardSet);
    return locked([&] {
      set_now().push_back(name);
      return try_finally(run, [&] {
        std::vector<NameId>& after = set_now();
        after.erase(std::find(after.begin(), after.end(), name));
      });
    });
  };
  auto state = [this, finder]() -> HookFinders::ObjectState& {
    return hook_finders_.state[static_cast<size_t>(finder)];
  };
  switch (hook.guard) {
    case GuardKind::None:
      return locked(run);
    case GuardKind::GlobalSet:  // ddtrace's module-level _finding
      return with_set([this]() -> std::vector<NameId>& { return hook_finders_.global_finding; });
    case GuardKind::ThreadSet:  // a threading.local: the running thread's own set
      return with_set([this]() -> std::vector<NameId>& { return py_thread_.thread_finding; });
    case GuardKind::ObjectSet:  // wrapt's self._in_progress
      return with_set([&]() -> std::vector<NameId>& { return state().in_progress; });
    case GuardKind::Flag:        // virtualenv's fullname slot, pytest's _writing_pyc
    case GuardKind::SkipSelf: {  // "skip me while I run": the same test on the object
      if (state().flag) return turned_away(HookReason::GuardFlag);
      return locked([&] {
        state().flag = true;
        return try_finally(run, [&] { state().flag = false; });
      });
    }
    case GuardKind::RemoveSelf:
      return locked([&] {
        // i = sys.meta_path.index(self); sys.meta_path.remove(self); try: ...
        // finally: sys.meta_path.insert(i, self)   (a direct call finds no self: nothing moves)
        const int64_t index = interp_.meta_path.index(finder);
        if (index < 0) return run();
        meta_path_remove(finder);
        return try_finally(run, [&] { meta_path_insert(index, finder); });
      });
  }
  return run();
}

// `lock.acquire()`: in a run without threads the main thread holds every
// lock taken, so a Lock held already is its own, and the process hangs.
void FinderObjects::hook_lock_acquire(FinderId finder, NameId name, HookLockSite site) {
  const int32_t l = hook_finders_.lock_of[static_cast<size_t>(finder)];
  HookFinders::Lock& lock = hook_finders_.locks[static_cast<size_t>(l)];
  if (book_.trace) book_.trace->hook_lock(engine(), finder, name, true, site);
  if (thread_run_.scheduler) {
    engine().about_to_pass(PointKind::HookAcquire, name);
    interp_.locks.hook_lock_acquire(*thread_run_.scheduler, l, lock.reentrant);
    engine().resumed();
    return;
  }
  if (lock.count > 0 && !lock.reentrant) {
    if (book_.trace) book_.trace->wait_begin(engine(), ThreadWait{WaitKind::HookLock, kNoName, 0, "", l});
    throw Hang{HangWait{"main", HangWait::Kind::HookLock, lock.name, "main"}, {}};
  }
  ++lock.count;
}

// `lock.release()`, in the `finally` of `with lock:`.
void FinderObjects::hook_lock_release(FinderId finder, NameId name, HookLockSite site) {
  const int32_t l = hook_finders_.lock_of[static_cast<size_t>(finder)];
  if (book_.trace) book_.trace->hook_lock(engine(), finder, name, false, site);
  if (thread_run_.scheduler) {
    engine().about_to_pass(PointKind::HookRelease, name);
    interp_.locks.hook_lock_release(*thread_run_.scheduler, l);
    engine().resumed();
    return;
  }
  --hook_finders_.locks[static_cast<size_t>(l)].count;
}

// The actions of a claimed name, in order; the last one that yields a
// spec or None gives the return value.
SpecId FinderObjects::run_hook_actions(FinderId finder, const HookClass& hook, NameId name, PathRef path) {
  SpecId result = kNoSpec;
  const int32_t hi = interp_.objects[static_cast<size_t>(finder)].hook;
  for (const HookAction& a : hook.actions) {
    switch (a.kind) {
      case ActionKind::Import:
        engine().import_statement(a.module);
        break;
      case ActionKind::Reenter:
        if (book_.trace) book_.trace->hook_call(engine(), finder, name, HookCall::Reenter, kNoFinder);
        result = engine().find_spec(name);  // importlib.util.find_spec(fullname)
        break;
      case ActionKind::Call: {
        const FinderId other = bound_object(a.finder);
        if (book_.trace) book_.trace->hook_call(engine(), finder, name, HookCall::Direct, other);
        result = finder_find_spec(other, name, path);
        break;
      }
      case ActionKind::CallNext: {
        // i = sys.meta_path.index(self); for f in sys.meta_path[i + 1:]: ...
        result = kNoSpec;
        const int64_t index = interp_.meta_path.index(finder);
        if (index < 0) break;
        // The slice is a copy: what the calls do to sys.meta_path does not
        // change what is left to ask.
        std::vector<FinderId> rest = interp_.meta_path.list();
        rest.erase(rest.begin(), rest.begin() + index + 1);
        if (book_.trace) book_.trace->hook_call(engine(), finder, name, HookCall::CallNext, kNoFinder);
        for (FinderId f : rest) {
          result = finder_find_spec(f, name, path);
          if (result != kNoSpec) break;
        }
        break;
      }
      case ActionKind::Serve: {
        // importlib.util.spec_from_loader(fullname, HookLoader())
        auto entry = std::find_if(a.table.begin(), a.table.end(), [&](const auto& e) { return e.first == name; });
        if (entry != a.table.end()) {
          result = serve_from_table(hi, name, entry->second, a);
          break;
        }
        ModuleId served = kNoModule;
        if (a.module != kNoName) {
          if (!interp_.sys_modules.contains(a.module)) raise("KeyError", "'" + names_.text(a.module) + "'");
          served = interp_.sys_modules.get(a.module);
        }
        hook_finders_.loaders.push_back(HookFinders::Loader{-1, hi, served, kNoName, kNoFinder, &a});
        LoaderId loader =
            new_loader(Loader{LoaderKind::HookServe, false, 0, static_cast<int32_t>(hook_finders_.loaders.size() - 1)});
        const bool package = a.package || std::binary_search(a.package_names.begin(), a.package_names.end(), name);
        result = new_spec(name, loader, package ? kEmptyPath : kNoPath);
        break;
      }
      case ActionKind::Unload:
        unload_modules(a.names, a.submodules);
        break;
      case ActionKind::Start:
        engine().thread_start(a.thread);
        break;
      case ActionKind::Join:
        engine().thread_join(a.thread);
        break;
      case ActionKind::Use:
        engine().use_in(finder, name, a.module, names_.text(a.names[0]));
        break;
      case ActionKind::ReturnNone:
        result = kNoSpec;
        break;
    }
  }
  return result;
}

// A table entry (six's MovedModule): spec_from_loader asks the loader's
// is_package, which reads the entry's __path__, which imports the module it
// stands for (`__import__(target)`): its body runs inside find_spec. The
// spec is a package's when that module has a __path__.
SpecId FinderObjects::serve_from_table(int32_t hook, NameId name, NameId target, const HookAction& serve) {
  const ModuleId m = import_module_by_name(target);
  hook_finders_.loaders.push_back(HookFinders::Loader{-1, hook, kNoModule, target, kNoFinder, &serve});
  LoaderId loader =
      new_loader(Loader{LoaderKind::HookServe, false, 0, static_cast<int32_t>(hook_finders_.loaders.size() - 1)});
  return new_spec(name, loader, interp_.records.module(m).path != kNoPath ? kEmptyPath : kNoPath);
}

// six's _import_module(name): `__import__(name); return sys.modules[name]`.
ModuleId FinderObjects::import_module_by_name(NameId name) {
  engine().import_statement(name);
  if (!interp_.sys_modules.contains(name)) raise("KeyError", "'" + names_.text(name) + "'");
  return interp_.sys_modules.get(name);
}

// create_module: a served module object, or the wrapped loader's choice.
ModuleId FinderObjects::hook_create_module(LoaderId loader, SpecId spec) {
  const Loader l = interp_.records.loader(loader);
  const HookFinders::Loader h = hook_finders_.loaders[static_cast<size_t>(l.ref)];
  // What the loader does before the module exists (pyximport compiles the
  // .pyx: Cython 3 in create_module, 0.29 in load_module before
  // imp.load_dynamic inserts the module), so the name is not in sys.modules
  // while it runs.
  if (l.kind == LoaderKind::HookServe && h.serve && !h.serve->create_module.empty())
    run_create_module(h.serve->create_module, interp_.records.spec(spec).name);
  // six's create_module -> load_module: MovedModule._resolve() imports the
  // module again (nothing to do unless it left sys.modules) and serves it.
  if (l.kind == LoaderKind::HookServe && h.target != kNoName) return import_module_by_name(h.target);
  if (l.kind == LoaderKind::HookServe) return h.module;
  return engine().create_module(h.inner, spec);
}

// The imports of a served loader's create_module, in its frame (a loader
// that imports the name it is creating recurses as CPython does, until
// RecursionError or --max-body-depth).
void FinderObjects::run_create_module(const std::vector<HookAction>& imports, NameId name) {
  enter_body_depth("module bodies, calls and loaders' create_module");
  const int64_t outer_depth = py_thread_.py_depth;
  const bool outer_in_hook = py_thread_.py_in_hook;
  py_thread_.py_depth += recursion_.create_module_frames;
  py_thread_.py_in_hook = false;
  if (book_.trace) book_.trace->body_begin(engine(), name, BodyKind::CreateModule);
  try_finally(
      [&] {
        for (const HookAction& a : imports) {
          try {
            engine().import_statement(a.module);
          } catch (PyError& e) {
            if (!a.optional || !e.is_import_error()) throw;
          }
        }
      },
      [&] {
        py_thread_.py_depth = outer_depth;
        py_thread_.py_in_hook = outer_in_hook;
        --py_thread_.body_depth;
        if (book_.trace) book_.trace->body_end(engine(), name, BodyKind::CreateModule);
      });
}

// exec_module: a served module's body already ran (or there is none); a
// wrapper runs the wrapped exec under its toggle, then sets its attribute.
void FinderObjects::hook_exec_module(LoaderId loader, ModuleId module) {
  const Loader l = interp_.records.loader(loader);
  const HookFinders::Loader h = hook_finders_.loaders[static_cast<size_t>(l.ref)];
  if (l.kind == LoaderKind::HookServe) return;
  const HookClass& hook = hook_finders_.classes[static_cast<size_t>(h.hook)];
  if (hook.loader == LoaderWrap::Toggle && hook.toggle != kNoFinder) {
    const FinderId toggled = bound_object(hook.toggle);
    const int64_t index = interp_.meta_path.index(toggled);
    if (index >= 0) {
      meta_path_remove(toggled);
      try_finally([&] { engine().exec_module(h.inner, module); }, [&] { meta_path_insert(index, toggled); });
      return;
    }
  }
  engine().exec_module(h.inner, module);
  if (hook.loader != LoaderWrap::SetAttribute) return;
  // wrapt's notify_module_loaded: the post-import hooks (which set the
  // attribute, and may import) run under its lock when it takes one there.
  auto after_exec = [&] {
    std::vector<HookFinders::Attribute>& attrs = hook_finders_.attributes[module];
    auto at = std::find_if(attrs.begin(), attrs.end(), [&](const auto& a) { return a.name == hook.attribute; });
    if (at == attrs.end()) at = attrs.insert(attrs.end(), {hook.attribute, 0});
    ++at->times;
    // A verdict names the step that marked it, as for P's marks.
    interp_.records.write_module(module).marked_by = current_step();
    for (const HookAction& a : hook.after_exec) engine().import_statement(a.module);
  };
  at_hook_lock_site(hook.lock.after_exec, h.finder, interp_.records.module(module).name, HookLockSite::AfterExec,
                    after_exec);
}

}  // namespace impsim
