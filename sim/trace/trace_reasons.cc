// The words every trace format uses for a finder decision (FindReason) and a
// guard (GuardSite, GuardAction): one key for machines, one sentence for
// people, listed in docs/model.md ("Why the finder answers").
#include "impsim/trace_formats.h"

namespace impsim::trace_detail {

const char* reason_key(FindReason r) {
  switch (r) {
    case FindReason::Suppressed: return "suppressed";
    case FindReason::Blocked: return "blocked";
    case FindReason::InScope: return "in-scope";
    case FindReason::NotTorch: return "not-torch";
    case FindReason::CallerDisabled: return "caller-disabled";
    case FindReason::CallerDisabledCached: return "caller-disabled-cached";
    case FindReason::NotEnabled: return "not-enabled";
    case FindReason::NotEnabledCached: return "not-enabled-cached";
    case FindReason::ProxiedGlobal: return "proxied-global";
    case FindReason::ProxiedCaller: return "proxied-caller";
  }
  return "?";
}

const char* reason_text(FindReason r) {
  switch (r) {
    case FindReason::Suppressed: return "suppressed: the fix sees this name is being resolved";
    case FindReason::Blocked: return "a blocked name: P looks it up itself, to mark it disabled";
    case FindReason::InScope: return "in scope: P looks it up itself, to mark it enabled";
    case FindReason::NotTorch: return "not a torch name";
    case FindReason::CallerDisabled: return "a calling module is marked disabled, and the name is not cached";
    case FindReason::CallerDisabledCached: return "a calling module is marked disabled: served from the cache";
    case FindReason::NotEnabled: return "not globally enabled, no calling module marked enabled, not cached";
    case FindReason::NotEnabledCached:
      return "not globally enabled, no calling module marked enabled: served from the cache";
    case FindReason::ProxiedGlobal: return "globally enabled: the paddle twin is imported and served as torch";
    case FindReason::ProxiedCaller:
      return "a calling module is marked enabled: the paddle twin is imported and served as torch";
  }
  return "?";
}

const char* guard_site_key(GuardSite s) {
  switch (s) {
    case GuardSite::Step: return "step";
    case GuardSite::Lookup: return "lookup";
    case GuardSite::Loader: return "loader";
  }
  return "?";
}

const char* guard_site_text(GuardSite s) {
  switch (s) {
    case GuardSite::Step: return "the step's guard";
    case GuardSite::Lookup: return "the lookup's guard";
    case GuardSite::Loader: return "the loader's guard around the module body";
  }
  return "?";
}

const char* guard_action_key(GuardAction a) {
  switch (a) {
    case GuardAction::NoopGlobal: return "noop-global";
    case GuardAction::NoopSameScope: return "noop-same-scope";
    case GuardAction::Enable: return "enable";
    case GuardAction::EnableRescope: return "enable-rescope";
    case GuardAction::EnableGlobal: return "enable-global";
    case GuardAction::Disable: return "disable";
    case GuardAction::DisableAbsent: return "disable-absent";
  }
  return "?";
}

const char* guard_action_text(GuardAction a) {
  switch (a) {
    case GuardAction::NoopGlobal: return "does nothing: P is already as asked and globally enabled, no scope asked";
    case GuardAction::NoopSameScope: return "does nothing: P is already as asked, with the scope asked";
    case GuardAction::Enable: return "toggles: P is not in sys.meta_path, so enable_torch_proxy";
    case GuardAction::EnableRescope:
      return "toggles: P is there with another scope, so enable_torch_proxy adds a copy and extends the scope";
    case GuardAction::EnableGlobal:
      return "toggles: P is there, scoped, and no scope is asked, so enable_torch_proxy adds a copy and switches "
             "P to global";
    case GuardAction::Disable: return "toggles: P is in sys.meta_path, so disable_torch_proxy removes one copy";
    case GuardAction::DisableAbsent:
      return "toggles: P is absent but its saved scope is not the empty one asked, so disable_torch_proxy "
             "(which only warns), and the exit enables P";
  }
  return "?";
}

const char* guard_exit_text(GuardAction a) {
  switch (a) {
    case GuardAction::NoopGlobal:
    case GuardAction::NoopSameScope: return "nothing to undo";
    case GuardAction::Enable:
    case GuardAction::EnableRescope:
    case GuardAction::EnableGlobal: return "scope and flag restored, then disable_torch_proxy removes one copy";
    case GuardAction::Disable:
    case GuardAction::DisableAbsent: return "enable_torch_proxy(), then scope and flag restored";
  }
  return "?";
}

}  // namespace impsim::trace_detail
