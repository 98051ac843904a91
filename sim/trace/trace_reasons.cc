// The words every trace format uses for a finder decision (FindReason) and a
// guard (GuardSite, GuardAction): one key for machines, one sentence for
// people, listed in docs/model.md ("Why the finder answers"). One table per
// enum, in the enum's order, so a new value without its words fails to build.
#include <fmt/format.h>

#include <iterator>

#include "impsim/trace/trace_formats.h"

namespace impsim::trace_detail {
namespace {

struct Words {
  const char* key;
  const char* text;
  const char* exit = nullptr;  // GuardAction: what its exit does
};

constexpr Words kReasons[] = {
    {"suppressed", "suppressed: the fix sees this name is being resolved"},
    {"blocked", "a blocked name: P looks it up itself, to mark it disabled"},
    {"in-scope", "in scope: P looks it up itself, to mark it enabled"},
    {"not-torch", "not a torch name"},
    {"caller-disabled", "a calling module is marked disabled, and the name is not cached"},
    {"caller-disabled-cached", "a calling module is marked disabled: served from the cache"},
    {"not-enabled", "not globally enabled, no calling module marked enabled, not cached"},
    {"not-enabled-cached", "not globally enabled, no calling module marked enabled: served from the cache"},
    {"proxied-global", "globally enabled: the paddle twin is imported and served as torch"},
    {"proxied-caller", "a calling module is marked enabled: the paddle twin is imported and served as torch"},
};
static_assert(std::size(kReasons) == static_cast<size_t>(FindReason::ProxiedCaller) + 1);

constexpr Words kSites[] = {
    {"step", "the step's guard"},
    {"lookup", "the lookup's guard"},
    {"loader", "the loader's guard around the module body"},
};
static_assert(std::size(kSites) == static_cast<size_t>(GuardSite::Loader) + 1);

constexpr const char* kUndoEnable = "scope and flag restored, then disable_torch_proxy removes one copy";
constexpr const char* kUndoDisable = "enable_torch_proxy(), then scope and flag restored";

constexpr Words kActions[] = {
    {"noop-global", "does nothing: P is already as asked and globally enabled, no scope asked", "nothing to undo"},
    {"noop-same-scope", "does nothing: P is already as asked, with the scope asked", "nothing to undo"},
    {"enable", "toggles: P is not in sys.meta_path, so enable_torch_proxy", kUndoEnable},
    {"enable-rescope",
     "toggles: P is there with another scope, so enable_torch_proxy adds a copy and extends the scope", kUndoEnable},
    {"enable-global",
     "toggles: P is there, scoped, and no scope is asked, so enable_torch_proxy adds a copy and switches P to global",
     kUndoEnable},
    {"disable", "toggles: P is in sys.meta_path, so disable_torch_proxy removes one copy", kUndoDisable},
    {"disable-absent",
     "toggles: P is absent but its saved scope is not the empty one asked, so disable_torch_proxy (which only "
     "warns), and the exit enables P",
     kUndoDisable},
};
static_assert(std::size(kActions) == static_cast<size_t>(GuardAction::DisableAbsent) + 1);

constexpr Words kHookReasons[] = {
    {"not-claimed", "not claimed: the hook does not act on this name"},
    {"not-top-level", "not claimed: the hook acts only on top-level searches (path is None), and this one has a path"},
    {"guard-holds", "a re-entry, turned away: the guard's set already holds this name"},
    {"guard-flag", "a re-entry, turned away: the guard's flag is up while the hook runs"},
    {"claimed", "claimed: the hook runs its actions"},
};
static_assert(std::size(kHookReasons) == static_cast<size_t>(HookReason::Claimed) + 1);

constexpr Words kHookCalls[] = {
    {"reenter", "re-enters the import system: importlib.util.find_spec('{}')"},
    {"direct", "calls {1}.find_spec('{0}') directly, not through sys.meta_path"},
    {"call-next", "asks each finder after it in sys.meta_path for '{}' (call_next), the first spec wins"},
};
static_assert(std::size(kHookCalls) == static_cast<size_t>(HookCall::CallNext) + 1);

constexpr Words kLazyEvents[] = {
    {"bound", "statement bound"},
    {"eager", "filter made it eager"},
    {"resolve", "resolution"},
    {"attribute", "attribute import"},
    {"cycle", "import cycle"},
};
static_assert(std::size(kLazyEvents) == static_cast<size_t>(LazyEvent::Cycle) + 1);

template <typename E, size_t N>
const Words& words(const Words (&table)[N], E e) {
  static const Words unknown{"?", "?", "?"};
  const auto i = static_cast<size_t>(e);
  return i < N ? table[i] : unknown;
}

}  // namespace

const char* reason_key(FindReason r) { return words(kReasons, r).key; }
const char* reason_text(FindReason r) { return words(kReasons, r).text; }
const char* guard_site_key(GuardSite s) { return words(kSites, s).key; }
const char* guard_site_text(GuardSite s) { return words(kSites, s).text; }
const char* guard_action_key(GuardAction a) { return words(kActions, a).key; }
const char* guard_action_text(GuardAction a) { return words(kActions, a).text; }
const char* guard_exit_text(GuardAction a) { return words(kActions, a).exit; }
const char* hook_reason_key(HookReason r) { return words(kHookReasons, r).key; }
const char* hook_reason_text(HookReason r) { return words(kHookReasons, r).text; }
const char* hook_call_key(HookCall c) { return words(kHookCalls, c).key; }
const char* lazy_event_key(LazyEvent w) { return words(kLazyEvents, w).key; }
const char* lazy_event_label(LazyEvent w) { return words(kLazyEvents, w).text; }
std::string hook_lock_where(HookLockSite s, const std::string& name) {
  switch (s) {
    case HookLockSite::FindSpec:
      return "('" + name + "')";
    case HookLockSite::Install:
      return "(install)";
    case HookLockSite::AfterExec:
      return "(after exec_module('" + name + "'))";
  }
  return "";
}

const char* hook_lock_site_key(HookLockSite s) {
  switch (s) {
    case HookLockSite::FindSpec:
      return "find_spec";
    case HookLockSite::Install:
      return "install";
    case HookLockSite::AfterExec:
      return "after_exec";
  }
  return "";
}

std::string hook_call_text(HookCall c, const std::string& name, const std::string& called) {
  return fmt::format(fmt::runtime(words(kHookCalls, c).text), name, called);
}

}  // namespace impsim::trace_detail
