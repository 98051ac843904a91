// Every entry of sys.meta_path but Paddle's finder, as objects: the
// interpreter's own finders (BuiltinImporter, FrozenImporter, PathFinder
// over the scenario's tree) and the hook finders declared as data (the
// hook language, docs/hooks.md). finder_find_spec asks any finder object
// by its class, as `finder.find_spec(name, path)` does; a hook's
// find_spec runs its declared actions (claim, serve, import, its guard,
// its own lock), and its wrapped loaders run the work they add around
// exec_module. Also here: sys.meta_path's list operations, a hook's
// install() and uninstall(), and `ID = Hook()` run again.
//
// Their state is HookFinders (hook_finders.h) and the Interpreter's
// finder objects; finder_objects.cc and hook_finder.cc hold the functions.
// A hook that imports (an action's import_module) goes up to
// _find_and_load through engine().
#pragma once

#include "impsim/engine/finders/torch_proxy_meta_finder.h"

namespace impsim {

class FinderObjects : public TorchProxyMetaFinder {
  // The parts below call up into this one through engine().
  friend class TorchProxyMetaFinder;

 public:
  using TorchProxyMetaFinder::TorchProxyMetaFinder;

  // Every finder object's class: the interpreter's own three and Paddle's
  // finder have fixed ids, a hook's is looked up.
  FinderClass class_of(FinderId f) const {
    static_assert(static_cast<FinderId>(FinderClass::Builtin) == kBuiltinImporter &&
                  static_cast<FinderId>(FinderClass::Frozen) == kFrozenImporter &&
                  static_cast<FinderId>(FinderClass::Path) == kPathFinder &&
                  static_cast<FinderId>(FinderClass::Proxy) == kProxyFinder);
    return f <= kProxyFinder ? static_cast<FinderClass>(f) : interp_.objects[static_cast<size_t>(f)].cls;
  }
  // PathFinder.find_spec(name, path) over the scenario's tree. The tests
  // that answer None without a search are inline, always (with a
  // TalliedRun's copies calling it too, GCC stopped inlining it in the
  // plain run's): a probe for a missing name asks again and again with the
  // same path.
  [[gnu::always_inline]] SpecId path_finder_find_spec(NameId name, PathRef path) {
    if (names_.parent(name) == kNoName) {
      if (path != kNoPath) return kNoSpec;  // never happens: top-level searches pass None
    } else if (path < 0 || interp_.path_miss[static_cast<size_t>(name)] == path) {
      return kNoSpec;  // None or [], or the path where this name was last missed
    }
    return path_finder_search(name, path);
  }
  SpecId path_finder_search(NameId name, PathRef path);
  bool hooks_used() const { return hooks_; }
  const MetaPath& meta_path() const { return interp_.meta_path; }
  // The threads' hook counters summed.
  HookCounters hook_counters() const;
  // The hooks' reentrancy guards now (trace, explore): the global_set and
  // thread_set guards' names, and one object's own set and flag.
  const std::vector<NameId>& global_finding() const { return hook_finders_.global_finding; }
  const std::vector<NameId>& thread_finding() const { return py_thread_.thread_finding; }
  const std::vector<NameId>& object_in_progress(FinderId f) const {
    return hook_finders_.state[static_cast<size_t>(f)].in_progress;
  }
  bool object_flag(FinderId f) const { return hook_finders_.state[static_cast<size_t>(f)].flag; }
  // What a hang calls the lock object `f` takes ("the threading.Lock of class virtualenv").
  const std::string& hook_lock_name(FinderId f) const {
    return hook_finders_.locks[static_cast<size_t>(hook_finders_.lock_of[static_cast<size_t>(f)])].name;
  }
  // The same by the lock's index (ThreadWait::lock).
  const std::string& hook_lock_text(int32_t l) const { return hook_finders_.locks[static_cast<size_t>(l)].name; }
  // Every finder object of the run, by FinderId: the model's, then those `new` steps made.
  const std::vector<FinderObject>& finder_objects() const { return interp_.objects; }
  // Attributes set on a module by a hook's wrapped loader, and how many
  // times each (outcome marks).
  const std::vector<HookFinders::Attribute>* module_attributes(ModuleId m) const;
  // finder.find_spec(name, path) for any finder object.
  SpecId finder_find_spec(FinderId finder, NameId name, PathRef path);
  // BuiltinImporter.find_spec: the scenario's "builtin" names.
  SpecId builtin_importer_find_spec(NameId name);
  // A hook finder object's find_spec (finders/hook_finder.cc).
  SpecId hook_find_spec(FinderId finder, NameId name, PathRef path);
  // A legacy (find_module-only) hook reached by _find_spec up to 3.11 (finders/finder_objects.cc).
  SpecId _find_spec_legacy(FinderId finder, NameId name, PathRef path);
  bool is_legacy_finder(FinderId finder) const;
  // What the implementations of meta_path_finder.h ask of their object:
  // a call of one of the interpreter's finders counted, a hook object's
  // find_spec (AttributeError for a legacy one), whether it is legacy.
  void count_interpreter_finder_call(FinderId finder);
  SpecId hook_object_find_spec(FinderId finder, NameId name, PathRef path);
  bool is_legacy_hook(FinderId finder) const;
  // serve from a table: the spec of `name` standing for module `target`.
  SpecId serve_from_table(int32_t hook, NameId name, NameId target, const HookAction& serve);
  ModuleId import_module_by_name(NameId name);
  // sys.meta_path.insert(at, f) / .append(f) / .remove(f) (false: ValueError).
  void meta_path_insert(int64_t at, FinderId finder);
  void meta_path_append(FinderId finder);
  bool meta_path_remove(FinderId finder);
  // The hook's install() and uninstall(), by its policies.
  void install_hook(FinderId finder);
  void uninstall_hook(FinderId finder);
  // `ID = Hook()` run again: a new object of ID's hook, fresh state, named
  // ID#k; of a new class (a re-run module body defines it again) unless
  // `same_class`.
  void new_hook_object(FinderId declared, bool same_class = false);
  // A hook's own lock for `object` (empty: the class declared), made anew.
  int32_t new_hook_lock(int32_t hook, const std::string& object);
  // The object a scenario's finder id names now: the newest `new` made, or the declared one.
  FinderId bound_object(FinderId declared) const {
    return declared >= 0 && static_cast<size_t>(declared) < hook_finders_.newest.size()
               ? hook_finders_.newest[static_cast<size_t>(declared)]
               : declared;
  }
  // A step's "ID#k": the k-th object `new` made for ID (KeyError, as the
  // crosscheck's table of objects raises, before it is made).
  FinderId numbered_object(FinderId declared, int32_t k);
  // del sys.modules[name] (and its submodules).
  void unload_modules(const std::vector<NameId>& names, bool submodules);

 protected:
  // Hook scenarios: set-up, steps, and the actions of a claimed name.
  void set_up_hooks();
  SpecId run_hook_actions(FinderId finder, const HookClass& hook, NameId name, PathRef path);
  SpecId hook_guarded(FinderId finder, const HookClass& hook, NameId name, PathRef path);
  SpecId hook_guard_test(FinderId finder, const HookClass& hook, NameId name, PathRef path, bool lock_after_test);
  // `with lock:` of the object's own lock (HookClass::lock) around `body`.
  template <class Body>
  SpecId with_hook_lock(FinderId finder, NameId name, Body&& body, HookLockSite site = HookLockSite::FindSpec) {
    hook_lock_acquire(finder, name, site);
    return try_finally_switching(body, [&] { hook_lock_release(finder, name, site); });
  }
  // `body` under that lock where the hook takes it at `site` (the install,
  // the wrapper's after-exec work: HookLock::install, after_exec), as it is
  // otherwise.
  template <class Body>
  void at_hook_lock_site(bool taken, FinderId finder, NameId name, HookLockSite site, Body&& body) {
    if (!taken) return body();
    with_hook_lock(
        finder, name,
        [&] {
          body();
          return kNoSpec;
        },
        site);
  }
  // `lock.acquire()` / `lock.release()`: in a run with threads, each a
  // scheduling point, and an acquire waits while another thread (or, for a
  // Lock, its owner) holds it; in a run without, an owner acquiring its
  // Lock again hangs (Hang).
  void hook_lock_acquire(FinderId finder, NameId name, HookLockSite site);
  void hook_lock_release(FinderId finder, NameId name, HookLockSite site);
  void hook_exec_module(LoaderId loader, ModuleId module);
  ModuleId hook_create_module(LoaderId loader, SpecId spec);
  void run_create_module(const std::vector<HookAction>& imports, NameId name);
  // One call of finder object `f` counted (finder_calls:ID), and in every
  // open labelled step: each step notes the objects called inside it, with
  // their count when first called, so a step costs what it calls, not a
  // copy of every object's count.
  void count_object_call(FinderId f) {
    const auto i = static_cast<size_t>(f);
    if (!py_thread_.hook_regions.empty() && py_thread_.region_mark[i] < py_thread_.hook_regions.back().serial)
        [[unlikely]]
      note_object_in_regions(f);
    ++py_thread_.hook_counters.by_object[i];
  }
  void note_object_in_regions(FinderId f);
};

}  // namespace impsim
