// The finder objects of a hook scenario: the interpreter's own finders
// asked as objects, the list operations a program or a hook performs on
// sys.meta_path, and the steps that perform them.
#include <fmt/format.h>

#include <algorithm>

#include "impsim/engine/engine.h"
#include "impsim/engine/finders/meta_path_finder.h"
#include "impsim/engine/finders/proxy_hot_path.h"

namespace impsim {

namespace {}  // namespace

void FinderObjects::set_up_hooks() {
  const HookModel& hm = model_.hooks;
  interp_.meta_path.assign(hm.meta_path);
  hook_finders_.classes.clear();
  for (const HookClass& h : hm.hooks) {
    const bool fixed = variant_.hook_target.empty() || variant_.hook_target == h.name;
    hook_finders_.classes.push_back(fixed ? apply_hook_fix(h, variant_.design) : h);
  }
  hook_finders_.legacy_finders = legacy_finders(model_.axes.cpython);
  py_thread_.hook_counters = HookCounters{};
  py_thread_.hook_counters.by_object.assign(hm.objects.size(), Count(0));
  hook_finders_.state.assign(hm.objects.size(), HookFinders::ObjectState{});
  py_thread_.hook_regions.clear();
  py_thread_.region_mark.assign(hm.objects.size(), 0);
  py_thread_.next_region = 0;
  interp_.objects = hm.objects;
  hook_finders_.newest.resize(hm.objects.size());
  for (size_t i = 0; i < hook_finders_.newest.size(); ++i) hook_finders_.newest[i] = static_cast<FinderId>(i);
  hook_finders_.made.assign(hm.objects.size(), 0);
  hook_finders_.class_of.assign(hm.objects.size(), -1);
  for (size_t f = kProxyFinder + 1; f < hm.objects.size(); ++f) hook_finders_.class_of[f] = hm.objects[f].hook;
  hook_finders_.next_class = static_cast<int32_t>(hm.hooks.size());
  hook_finders_.global_finding.clear();
  hook_finders_.locks.clear();
  hook_finders_.lock_of.assign(hm.objects.size(), -1);
  // One lock per class (every object of a hook declaration) or per object.
  std::vector<int32_t> class_lock(hm.hooks.size(), -1);
  for (size_t f = kProxyFinder + 1; f < hm.objects.size(); ++f) {
    const int32_t h = hm.objects[f].hook;
    const HookLock& lock = hm.hooks[static_cast<size_t>(h)].lock;
    int32_t& shared = class_lock[static_cast<size_t>(h)];
    if (lock.kind == HookLockKind::None) continue;
    if (lock.per == HookLockScope::Object)
      hook_finders_.lock_of[f] = new_hook_lock(h, hm.objects[f].id);
    else
      hook_finders_.lock_of[f] = shared >= 0 ? shared : (shared = new_hook_lock(h, ""));
  }
  py_thread_.thread_finding.clear();
  hook_finders_.loaders.clear();
  hook_finders_.attributes.clear();
  py_thread_.search_depth = 0;
  py_thread_.hook_call_depth = 0;
  py_thread_.label_search_high = 0;
  py_thread_.label_hook_high = 0;
  // Hook loaders refer to records through hook_finders_.loaders, which collect()
  // does not walk: hook scenarios are small, so nothing is reused.
  interp_.next_collect = UINT64_MAX;
  const uint64_t declared = hm.objects.size() - (kProxyFinder + 1);
  if (declared > book_.limits.max_objects)
    throw LimitReached{"max-objects",
                       fmt::format("\"finders\" declares {} finder objects; the limit is {}; raise it with "
                                   "--max-objects",
                                   declared, book_.limits.max_objects),
                       {}};
}

// A labelled step noting object f: the innermost open step that has not,
// and each step around it that has not either (a step noted f when an inner
// one first called it, with the same count: it was not called in between).
void FinderObjects::note_object_in_regions(FinderId f) {
  const auto i = static_cast<size_t>(f);
  for (auto r = py_thread_.hook_regions.rbegin();
       r != py_thread_.hook_regions.rend() && py_thread_.region_mark[i] < r->serial; ++r)
    r->called.emplace_back(f, py_thread_.hook_counters.by_object[i]);
  py_thread_.region_mark[i] = py_thread_.hook_regions.back().serial;
}

// Every insert shifts the list and every search walks it: its length is bounded.
void EngineContext::check_meta_path_room() {
  if (static_cast<uint64_t>(interp_.meta_path.size()) >= book_.limits.max_meta_path)
    throw LimitReached{"max-meta-path",
                       fmt::format("sys.meta_path holds {} finders, the limit; raise it with --max-meta-path",
                                   interp_.meta_path.size()),
                       {}};
}

// _find_spec_legacy (3.9 to 3.11): 3.10 and 3.11 first warn
// "X.find_spec() not found; falling back to find_module()" (ImportWarning),
// 3.9 does not; then spec_from_loader(name, finder.find_module(name, path)),
// the same spec a served loader gives (the reader refuses other actions).
SpecId FinderObjects::_find_spec_legacy(FinderId finder, NameId name, PathRef path) {
  if (hook_finders_.legacy_finders == LegacyFinders::ReachedWithWarning) ++py_thread_.hook_counters.legacy_warnings;
  return hook_find_spec(finder, name, path);
}

bool FinderObjects::is_legacy_finder(FinderId finder) const {
  const FinderClass cls = interp_.objects[static_cast<size_t>(finder)].cls;
  return meta_path_finder(cls).legacy(engine(), finder);
}

bool FinderObjects::is_legacy_hook(FinderId finder) const {
  return hook_finders_.classes[static_cast<size_t>(interp_.objects[static_cast<size_t>(finder)].hook)].legacy;
}

// finder.find_spec(name, path): a call on the object, never through
// sys.meta_path, answered by the implementation of its class.
SpecId FinderObjects::finder_find_spec(FinderId finder, NameId name, PathRef path) {
  const FinderClass cls = interp_.objects[static_cast<size_t>(finder)].cls;
  return meta_path_finder(cls).find_spec(engine(), finder, name, path);
}

// The interpreter's three are counted per object (finder_calls:PathFinder,
// every call: from _find_spec and from a hook's `call`), outside the
// hooks-only total finder_calls; P keeps its own counters (asks). An event
// each, as a hook's call is: a list of a thousand PathFinders walked by
// every import costs its calls, so --max-events bounds them.
void FinderObjects::count_interpreter_finder_call(FinderId finder) {
  count_object_call(finder);
  count_event();
}

// A hook object's find_spec. A legacy finder has none (a `call` of one is
// refused by the reader; `call_next` may meet one in the list).
SpecId FinderObjects::hook_object_find_spec(FinderId finder, NameId name, PathRef path) {
  if (is_legacy_hook(finder))
    raise("AttributeError",
          fmt::format("'{}' object has no attribute 'find_spec'",
                      hook_finders_.classes[static_cast<size_t>(interp_.objects[static_cast<size_t>(finder)].hook)].name));
  return hook_find_spec(finder, name, path);
}

// BuiltinImporter.find_spec: `_imp.is_builtin(fullname)`, whatever the path.
SpecId FinderObjects::builtin_importer_find_spec(NameId name) {
  const auto& b = model_.hooks.builtin;
  if (!std::binary_search(b.begin(), b.end(), name)) return kNoSpec;
  return new_spec(name, new_loader(Loader{LoaderKind::Empty, false, 0, -1}), kNoPath);
}

// list.insert(at, x): a negative index counts from the end; out of range clamps.
void FinderObjects::meta_path_insert(int64_t at, FinderId finder) {
  const int64_t n = interp_.meta_path.size();
  if (at < 0) at = std::max<int64_t>(at + n, 0);
  at = std::min(at, n);
  check_meta_path_room();
  interp_.meta_path.insert(at, finder);
  if (finder == kProxyFinder) {
    moved_copies();
  }
}

void FinderObjects::meta_path_append(FinderId finder) { meta_path_insert(interp_.meta_path.size(), finder); }

// list.remove(x): the first occurrence; false where Python raises ValueError.
bool FinderObjects::meta_path_remove(FinderId finder) {
  if (!interp_.meta_path.remove(finder)) return false;
  if (finder == kProxyFinder) {
    moved_copies();
  }
  return true;
}

// The hook's install(): its policy, or the variant's (idempotent_install).
void FinderObjects::install_hook(FinderId finder) {
  const HookClass& h = hook_finders_.classes[static_cast<size_t>(interp_.objects[static_cast<size_t>(finder)].hook)];
  bool present = interp_.meta_path.contains(finder);
  if (h.presence == InstallPresence::Class && !present) {
    const int32_t cls = hook_finders_.class_of[static_cast<size_t>(finder)];
    for (FinderId f : interp_.meta_path.list())
      if (f > kProxyFinder && hook_finders_.class_of[static_cast<size_t>(f)] == cls) present = true;
  }
  bool inserted = false;
  switch (h.install) {
    case InstallPolicy::Insert0:
      meta_path_insert(0, finder);
      inserted = true;
      break;
    case InstallPolicy::Insert0IfAbsent:
      if (!present) meta_path_insert(0, finder);
      inserted = !present;
      break;
    case InstallPolicy::Append:
      meta_path_append(finder);
      inserted = true;
      break;
    case InstallPolicy::AppendIfAbsent:
      if (!present) meta_path_append(finder);
      inserted = !present;
      break;
  }
  HookFinders::ObjectState& s = hook_finders_.state[static_cast<size_t>(finder)];
  s.inserted = inserted;
  ++s.participants;
}

// The hook's uninstall(), by its policy (UninstallPolicy): a removal is
// `list.remove` with ValueError ignored.
void FinderObjects::uninstall_hook(FinderId finder) {
  const HookClass& h = hook_finders_.classes[static_cast<size_t>(interp_.objects[static_cast<size_t>(finder)].hook)];
  HookFinders::ObjectState& s = hook_finders_.state[static_cast<size_t>(finder)];
  switch (h.uninstall) {
    case UninstallPolicy::First:
      meta_path_remove(finder);
      return;
    case UninstallPolicy::All:
      while (meta_path_remove(finder)) {
      }
      return;
    case UninstallPolicy::Counted:
      if (s.participants == 0) return;
      if (--s.participants == 0) meta_path_remove(finder);
      return;
    case UninstallPolicy::IfInserted:
      if (s.inserted) meta_path_remove(finder);
      s.inserted = false;  // what install returned is given once
      return;
  }
}

// `del sys.modules[name]` for each name (and each submodule's name, as
// `_distutils_hack.clear_distutils` does with a name.startswith test).
void FinderObjects::unload_modules(const std::vector<NameId>& names, bool submodules) {
  // The names alone: no walk of sys.modules (a repeated unload would cost
  // every module each time).
  if (!submodules) {
    for (NameId n : names) interp_.sys_modules.erase(n);
    return;
  }
  auto targeted = [&](NameId n) {
    for (NameId x = n; x != kNoName; x = submodules ? names_.parent(x) : kNoName)
      if (std::find(names.begin(), names.end(), x) != names.end()) return true;
    return false;
  };
  for (NameId n : interp_.sys_modules.names())
    if (targeted(n)) interp_.sys_modules.erase(n);
}

// A hook's lock: `threading.Lock()` or `threading.RLock()` made for object
// `object`, or for the class (`object` empty: the class declared; else the
// class a `new` step made along with that object).
int32_t FinderObjects::new_hook_lock(int32_t hook, const std::string& object) {
  const HookClass& h = model_.hooks.hooks[static_cast<size_t>(hook)];
  const char* type = h.lock.kind == HookLockKind::RLock ? "threading.RLock" : "threading.Lock";
  std::string name = h.lock.per == HookLockScope::Object ? fmt::format("the {} of {}", type, object)
                     : object.empty()                    ? fmt::format("the {} of class {}", type, h.name)
                                                         : fmt::format("the {} of {}'s class", type, object);
  hook_finders_.locks.push_back(HookFinders::Lock{std::move(name), h.lock.kind == HookLockKind::RLock, 0});
  return static_cast<int32_t>(hook_finders_.locks.size() - 1);
}

void FinderObjects::new_hook_object(FinderId declared, bool same_class) {
  const size_t d = static_cast<size_t>(declared);
  // Each object is a row of every report (and of every label's counters).
  if (interp_.objects.size() - (kProxyFinder + 1) >= book_.limits.max_objects)
    throw LimitReached{"max-objects",
                       fmt::format("{} finder objects (declared, and made by `new` steps); raise it with --max-objects",
                                   book_.limits.max_objects),
                       {}};
  FinderObject made = interp_.objects[d];
  made.id += "#" + std::to_string(++hook_finders_.made[d]);
  interp_.objects.push_back(std::move(made));
  py_thread_.hook_counters.by_object.push_back(Count(0));
  hook_finders_.state.push_back(HookFinders::ObjectState{});
  py_thread_.region_mark.push_back(0);
  const FinderId before = hook_finders_.newest[d];
  hook_finders_.newest[d] = static_cast<FinderId>(interp_.objects.size() - 1);
  // Its lock: its own, its class's (the class of the object the id named
  // so far), or that of the new class the re-run module body defined.
  const int32_t h = interp_.objects[d].hook;
  const HookLock& lock = model_.hooks.hooks[static_cast<size_t>(h)].lock;
  int32_t l = -1;
  if (lock.kind != HookLockKind::None)
    l = lock.per == HookLockScope::Class && same_class ? hook_finders_.lock_of[static_cast<size_t>(before)]
                                                       : new_hook_lock(h, interp_.objects.back().id);
  hook_finders_.lock_of.push_back(l);
  hook_finders_.class_of.push_back(same_class ? hook_finders_.class_of[static_cast<size_t>(before)]
                                              : hook_finders_.next_class++);
}

FinderId FinderObjects::numbered_object(FinderId declared, int32_t k) {
  const FinderObject& d = interp_.objects[static_cast<size_t>(declared)];
  if (k <= hook_finders_.made[static_cast<size_t>(declared)]) {
    const std::string id = d.id + "#" + std::to_string(k);
    for (size_t f = interp_.objects.size(); f-- > static_cast<size_t>(declared);)
      if (interp_.objects[f].id == id) return static_cast<FinderId>(f);
  }
  raise("KeyError", "'" + d.id + "#" + std::to_string(k) + "'");
}

void Engine::run_meta_path_step(const CStep& step) {
  const FinderId f = step.instance ? numbered_object(step.finder, step.instance) : bound_object(step.finder);
  switch (step.kind) {
    case StepKind::Install: {
      // wrapt's register_post_import_hook runs under its lock.
      HookClass& hook = hook_finders_.classes[static_cast<size_t>(interp_.objects[static_cast<size_t>(f)].hook)];
      at_hook_lock_site(hook.lock.install, f, kNoName, HookLockSite::Install, [&] {
        install_hook(f);
        // wrapt's _post_import_hooks[name]: one registry per copy of the
        // module, so the claim is the hook class's, every object's.
        if (step.target != kNoName) {
          std::vector<NameId>& names = hook.claim_names;
          if (auto at = std::lower_bound(names.begin(), names.end(), step.target);
              at == names.end() || *at != step.target)
            names.insert(at, step.target);
        }
      });
      return;
    }
    case StepKind::Uninstall:
      uninstall_hook(f);
      return;
    case StepKind::Insert:
      meta_path_insert(step.at, f);
      return;
    case StepKind::Append:
      meta_path_append(f);
      return;
    case StepKind::Remove:
      if (step.all_copies) {
        while (meta_path_remove(f)) {
        }
        return;
      }
      if (!meta_path_remove(f) && !step.optional) raise("ValueError", "list.remove(x): x not in list");
      return;
    case StepKind::New:
      new_hook_object(step.finder, step.same_class);
      return;
    case StepKind::Unload:
      unload_modules(step.unload, step.submodules);
      return;
    default:
      return;
  }
}

const std::vector<HookFinders::Attribute>* FinderObjects::module_attributes(ModuleId m) const {
  auto it = hook_finders_.attributes.find(m);
  return it == hook_finders_.attributes.end() ? nullptr : &it->second;
}

}  // namespace impsim
