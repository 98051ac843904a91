// The finder-object model compiled from the scenario (hook_language.h): ids
// resolved, names interned, and the hook designs as edits of a hook class.
#include <fmt/format.h>

#include <algorithm>

#include "impsim/base/name_pattern.h"
#include "impsim/model/model.h"
#include "impsim/scenario/hook_language.h"
#include "impsim/scenario/variant.h"

namespace impsim {

FinderId HookModel::find(const std::string& id) const {
  auto it = by_id.find(id);
  return it == by_id.end() ? kNoFinder : it->second;
}

std::vector<FinderId> HookModel::hook_objects() const {
  std::vector<FinderId> out;
  for (size_t i = 0; i < objects.size(); ++i)
    if (objects[i].cls == FinderClass::Hook) out.push_back(static_cast<FinderId>(i));
  return out;
}

HookModel compile_hooks(const HooksText& text, NameTable& names) {
  // An import action of a loader (after_exec, create_module).
  auto import_action = [&](const HookActionText& a) {
    HookAction x;
    x.kind = a.kind;
    x.module = names.intern(a.target);
    x.optional = a.optional;
    return x;
  };
  HookModel m;
  m.used = text.used;
  const FinderClass predefined[] = {FinderClass::Builtin, FinderClass::Frozen, FinderClass::Path, FinderClass::Proxy};
  for (size_t i = 0; i < 4; ++i) m.objects.push_back({kPredefinedFinders[i], predefined[i], -1});
  for (const HookText& h : text.hooks) {
    HookClass c;
    c.name = h.name;
    c.claims = h.claims;
    for (auto& n : h.claim_names) c.claim_names.push_back(names.intern(n));
    c.claim_patterns = h.claim_patterns;
    // Sorted: every finder call tests its name against them (hook_claims).
    std::sort(c.claim_names.begin(), c.claim_names.end());
    c.top_level_only = h.top_level_only;
    c.guard = h.guard;
    c.loader = h.loader;
    c.attribute = h.attribute;
    c.install = h.install;
    c.presence = h.presence;
    c.uninstall = h.uninstall;
    c.legacy = h.legacy;
    c.lock = h.lock;
    m.hooks.push_back(std::move(c));
  }
  std::unordered_map<std::string, int32_t> hook_index;
  for (size_t i = 0; i < m.hooks.size(); ++i) hook_index.emplace(m.hooks[i].name, static_cast<int32_t>(i));
  for (const FinderText& f : text.finders) {
    auto h = hook_index.find(f.hook);
    m.objects.push_back({f.id, FinderClass::Hook, h == hook_index.end() ? -1 : h->second});
  }
  for (size_t i = 0; i < m.objects.size(); ++i) m.by_id.emplace(m.objects[i].id, static_cast<FinderId>(i));
  // Actions may name finder objects: resolved once every object exists.
  for (size_t i = 0; i < text.hooks.size(); ++i) {
    const HookText& h = text.hooks[i];
    HookClass& c = m.hooks[i];
    for (const HookActionText& a : h.actions) {
      HookAction x;
      x.kind = a.kind;
      // A start or join names a thread: the model resolves it (compile_model).
      if (a.kind == ActionKind::Call) x.finder = m.find(a.target);
      else if (a.kind != ActionKind::Start && a.kind != ActionKind::Join && !a.target.empty())
        x.module = names.intern(a.target);
      for (auto& n : a.names) x.names.push_back(names.intern(n));
      x.submodules = a.submodules;
      x.package = a.package;
      for (auto& n : a.package_names) x.package_names.push_back(names.intern(n));
      std::sort(x.package_names.begin(), x.package_names.end());
      for (auto& [claimed, served] : a.table) x.table.emplace_back(names.intern(claimed), names.intern(served));
      for (const HookActionText& b : a.create_module) x.create_module.push_back(import_action(b));
      c.actions.push_back(std::move(x));
    }
    for (const HookActionText& a : h.after_exec) c.after_exec.push_back(import_action(a));
    if (!h.toggle_finder.empty()) c.toggle = m.find(h.toggle_finder);
  }
  if (text.meta_path)
    for (auto& id : *text.meta_path) m.meta_path.push_back(m.find(id));
  else
    m.meta_path = {kBuiltinImporter, kFrozenImporter, kPathFinder};
  for (auto& n : text.builtin) m.builtin.push_back(names.intern(n));
  std::sort(m.builtin.begin(), m.builtin.end());
  return m;
}

bool hook_claims(const HookClass& hook, const NameTable& names, NameId name, bool path_is_none) {
  if (hook.top_level_only && !path_is_none) return false;
  switch (hook.claims) {
    case ClaimKind::All: return true;
    case ClaimKind::TopLevel: return names.parent(name) == kNoName;
    case ClaimKind::Names:
      return std::binary_search(hook.claim_names.begin(), hook.claim_names.end(), name);
    case ClaimKind::Packages:
      for (NameId n = name; n != kNoName; n = names.parent(n))
        if (std::binary_search(hook.claim_names.begin(), hook.claim_names.end(), n)) return true;
      return false;
    case ClaimKind::Patterns:
      return last_part_matches(hook.claim_patterns, names.text(name));
  }
  return false;
}

HookClass apply_hook_fix(HookClass hook, DesignId design) {
  switch (design) {
    case DesignId::Before:
    case DesignId::After:
    case DesignId::IdempotentEnable:
    case DesignId::DisableAll:
    case DesignId::IndexedWalk:
    case DesignId::AfterIdempotentEnable:
    case DesignId::AfterGlobalSet:
    case DesignId::AsIs:
      break;
    case DesignId::IdempotentInstall:
      if (hook.install == InstallPolicy::Insert0) hook.install = InstallPolicy::Insert0IfAbsent;
      if (hook.install == InstallPolicy::Append) hook.install = InstallPolicy::AppendIfAbsent;
      break;
    case DesignId::RemoveAll: hook.uninstall = UninstallPolicy::All; break;
    case DesignId::SkipSelf: hook.guard = GuardKind::SkipSelf; break;
    case DesignId::CallNext:
      for (HookAction& a : hook.actions)
        if (a.kind == ActionKind::Reenter) a.kind = ActionKind::CallNext;
      break;
    case DesignId::GuardGlobalSet: hook.guard = GuardKind::GlobalSet; break;
    case DesignId::GuardObjectSet: hook.guard = GuardKind::ObjectSet; break;
    case DesignId::GuardThreadSet: hook.guard = GuardKind::ThreadSet; break;
    case DesignId::GuardFlag: hook.guard = GuardKind::Flag; break;
    case DesignId::GuardRemoveSelf: hook.guard = GuardKind::RemoveSelf; break;
    case DesignId::UnlockAfterExec: hook.lock.after_exec = false; break;
  }
  return hook;
}

std::string describe_meta_path_step(const CStep& step, const Model& m) {
  const std::string declared = step.finder == kNoFinder ? "?" : m.hooks.objects[static_cast<size_t>(step.finder)].id;
  // "ID#k": the k-th object a new step made for ID, as counters name it.
  const std::string id = step.instance > 0 ? fmt::format("{}#{}", declared, step.instance) : declared;
  switch (step.kind) {
    case StepKind::Install:
      if (step.target != kNoName) return fmt::format("install({}), claiming '{}'", id, m.names.text(step.target));
      return fmt::format("install({})", id);
    case StepKind::Uninstall: return fmt::format("uninstall({})", id);
    case StepKind::Insert: return fmt::format("sys.meta_path.insert({}, {})", step.at, id);
    case StepKind::Append: return fmt::format("sys.meta_path.append({})", id);
    case StepKind::Remove:
      return step.all_copies ? fmt::format("while {0} in sys.meta_path: sys.meta_path.remove({0})", id)
                             : fmt::format("sys.meta_path.remove({})", id);
    case StepKind::New:
      if (step.same_class) return fmt::format("{0} = type({0})()", id);
      return fmt::format("{} = {}()", id, m.hooks.hooks[static_cast<size_t>(m.hooks.objects[static_cast<size_t>(step.finder)].hook)].name);
    case StepKind::Reload: return fmt::format("importlib.reload(sys.modules['{}'])", m.names.text(step.target));
    case StepKind::Unload: {
      std::string names;
      for (NameId n : step.unload) names += (names.empty() ? "" : ", ") + ("'" + m.names.text(n) + "'");
      return fmt::format("unload([{}]{})", names, step.submodules ? ", submodules" : "");
    }
    default: return "?";
  }
}

}  // namespace impsim
