// sys.meta_path as a list of finder objects, and hook finders declared as
// data (docs/scenario-format.md, "Hooks"; docs/model.md, "Finder objects").
// A scenario that declares none of it keeps the Paddle engine's own
// representation ("k copies of P in front of the interpreter's three").
//
// Text side (what the reader validated, names as strings) and compiled side
// (names interned, finder ids resolved) of the same model, side by side.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "impsim/base/name_pattern.h"
#include "impsim/scenario/names.h"

namespace impsim {

// The class of a finder object in sys.meta_path.
enum class FinderClass : uint8_t { Builtin, Frozen, Path, Proxy, Hook };

// Which fullnames a hook acts on; any other name: find_spec returns None at once.
// Patterns: the last part of the name matched as fnmatch.fnmatchcase
// matches it (base/name_pattern.h), by any of the patterns.
enum class ClaimKind : uint8_t { Names, Packages, TopLevel, All, Patterns };

enum class ActionKind : uint8_t {
  Import,    // `import m` inside find_spec
  Reenter,   // importlib.util.find_spec(fullname)
  Call,      // OTHER.find_spec(fullname, path), never through sys.meta_path
  CallNext,  // each finder after this one in sys.meta_path, first spec wins
  Serve,     // a spec whose loader is the hook's own
  Unload,    // del sys.modules[...]
  Start,     // threading.Thread(...).start() of a scenario's thread
  Join,      // its .join()
  Use,       // a read of a global of the module find_spec is defined in (PEP 810: resolves a lazy one)
  ReturnNone
};

// The reentrancy guard around a claimed name's actions.
enum class GuardKind : uint8_t { None, GlobalSet, ObjectSet, ThreadSet, Flag, SkipSelf, RemoveSelf };

// A lock of the hook's own held across a claimed name's actions
// (virtualenv's class-level `threading.Lock`): none, a `threading.Lock`
// (its owner acquiring it again waits forever) or a `threading.RLock`.
enum class HookLockKind : uint8_t { None, Lock, RLock };
// Whose lock: one per class (shared by every object of the hook
// declaration; a `new` step makes a new class, and a new lock, unless it
// says "same_class") or one per object.
enum class HookLockScope : uint8_t { Class, Object };
// Where find_spec takes it: after the guard's test and before the guard's
// set-up (virtualenv: `if ... self.fullname is None:`, then `with lock:`,
// then `self.fullname = fullname`), before the test (`with lock:` around
// the whole guard), or not at all (wrapt 1.14's find_spec takes none).
enum class HookLockTaken : uint8_t { AfterGuardTest, BeforeGuardTest, NotInFindSpec };

struct HookLock {
  HookLockKind kind = HookLockKind::None;
  HookLockScope per = HookLockScope::Class;
  HookLockTaken taken = HookLockTaken::AfterGuardTest;
  // Taken outside find_spec as well: around the install step (wrapt's
  // register_post_import_hook), and around what the wrapped loader does
  // after the wrapped exec_module (wrapt's notify_module_loaded, which
  // runs the post-import hooks under the lock).
  bool install = false;
  bool after_exec = false;
};

enum class LoaderWrap : uint8_t { Unchanged, SetAttribute, Toggle };
enum class InstallPolicy : uint8_t { Insert0, Insert0IfAbsent, Append, AppendIfAbsent };
// What an *_if_absent install looks for in sys.meta_path: the object itself
// (`obj in sys.meta_path`) or any object of its class (an isinstance test,
// as a fixed pyximport._have_importers makes: Cython 3's install makes a
// new importer on every call, which no identity test ever finds).
enum class InstallPresence : uint8_t { Object, Class };
// First and All remove one copy or every copy. Counted: each install adds a
// participant and an uninstall takes one away, removing the object with the
// last (ddtrace's universal watchdog finder). IfInserted: the uninstall is
// given what the latest install returned, the object only if that install
// inserted it (pyximport's `uninstall(*install())`, a no-op after an install
// that found its importer there).
enum class UninstallPolicy : uint8_t { First, All, Counted, IfInserted };

// ---- as written -----------------------------------------------------------

struct HookActionText {
  ActionKind kind = ActionKind::ReturnNone;
  std::string target;                      // import/serve/use: module; call: finder id; start/join: thread
  std::vector<std::string> names;          // unload; use: the expression read
  bool submodules = false;                 // unload
  bool package = false;                    // serve: the spec is a package's
  std::vector<std::string> package_names;  // serve: only these names' specs are packages'
  // serve: {claimed name: module it stands for} (six.moves.queue -> queue)
  std::vector<std::pair<std::string, std::string>> table;
  // serve: what the loader's create_module runs before the module is made
  // (pyximport's build): import actions, in order
  std::vector<HookActionText> create_module;
  bool optional = false;  // an import of create_module: ImportError caught
  std::string pointer;
};

struct HookText {
  std::string name;
  std::string pointer;
  ClaimKind claims = ClaimKind::All;
  std::vector<std::string> claim_names;     // Names, Packages
  std::vector<NamePattern> claim_patterns;  // Patterns
  bool top_level_only = false;           // acts only when path is None
  std::vector<HookActionText> actions;
  GuardKind guard = GuardKind::None;
  LoaderWrap loader = LoaderWrap::Unchanged;
  std::string attribute;  // SetAttribute
  // SetAttribute: what the wrapped loader runs after the wrapped
  // exec_module (wrapt's post-import hooks): import actions.
  std::vector<HookActionText> after_exec;
  std::string toggle_finder;  // Toggle
  std::string toggle_pointer;
  InstallPolicy install = InstallPolicy::Insert0;
  InstallPresence presence = InstallPresence::Object;
  UninstallPolicy uninstall = UninstallPolicy::First;
  bool legacy = false;  // "api": "find_module": no find_spec at all
  HookLock lock;
};

struct FinderText {
  std::string id;
  std::string hook;
  std::string pointer;
};

struct HooksText {
  bool used = false;  // any of hooks/finders/meta_path/builtin, or a meta_path step
  // Whether Paddle's finder P takes part: a step of its API (enable,
  // disable, guard, block) or P named as a finder object. Without it, P is
  // never in sys.meta_path, so neither P nor its designs can change a run.
  bool proxy_used = false;
  std::vector<HookText> hooks;
  std::vector<FinderText> finders;
  std::optional<std::vector<std::string>> meta_path;  // unset: the interpreter's three
  std::vector<std::string> builtin;                   // names BuiltinImporter finds

  // Indexes read_hooks fills, so that each counter name, variant and call
  // is checked by a look-up, not a scan of every finder or step: a file
  // with tens of thousands of them validates in linear time.
  std::set<std::string, std::less<>> hook_names;       // the keys of "hooks"
  std::set<std::string, std::less<>> hook_finder_ids;  // the keys of "finders"
  std::set<std::string, std::less<>> renewed_ids;      // finder ids some `new` step names
};

// ---- compiled ---------------------------------------------------------------

using FinderId = int32_t;  // index into HookModel::objects
inline constexpr FinderId kNoFinder = -1;
// The predefined objects, always present, in this order.
inline constexpr FinderId kBuiltinImporter = 0, kFrozenImporter = 1, kPathFinder = 2, kProxyFinder = 3;

struct HookAction {
  ActionKind kind = ActionKind::ReturnNone;
  NameId module = kNoName;      // import, serve, use
  FinderId finder = kNoFinder;  // call
  std::vector<NameId> names;    // unload; use: the expression read
  bool submodules = false;
  bool package = false;
  std::vector<NameId> package_names;             // sorted: serve's per-name package flag
  std::vector<std::pair<NameId, NameId>> table;  // serve: claimed name -> the module served for it
  std::vector<HookAction> create_module;         // serve: HookActionText::create_module
  int32_t thread = -1;                           // start, join: the scenario's thread, by index
  bool optional = false;                         // an import of create_module
};

struct HookClass {
  std::string name;
  ClaimKind claims = ClaimKind::All;
  std::vector<NameId> claim_names;
  std::vector<NamePattern> claim_patterns;  // Patterns
  bool top_level_only = false;
  std::vector<HookAction> actions;
  GuardKind guard = GuardKind::None;
  LoaderWrap loader = LoaderWrap::Unchanged;
  std::string attribute;
  std::vector<HookAction> after_exec;  // HookText::after_exec
  FinderId toggle = kNoFinder;
  InstallPolicy install = InstallPolicy::Insert0;
  InstallPresence presence = InstallPresence::Object;
  UninstallPolicy uninstall = UninstallPolicy::First;
  // Only find_module (a pre-3.4 finder): _find_spec reaches it through
  // _find_spec_legacy up to 3.11 and skips it from 3.12 (docs/model.md).
  bool legacy = false;
  HookLock lock;
};

struct FinderObject {
  std::string id;  // "PathFinder", "P", "wd1"; "wd1#2": the second object a `new` step made for wd1
  FinderClass cls = FinderClass::Hook;
  int32_t hook = -1;  // Hook: index into HookModel::hooks
};

struct HookModel {
  bool used = false;
  std::vector<HookClass> hooks;
  std::vector<FinderObject> objects;                // the four predefined ones first
  std::unordered_map<std::string, FinderId> by_id;  // objects by id: find() is a look-up
  std::vector<FinderId> meta_path;                  // the initial sys.meta_path
  std::vector<NameId> builtin;                      // sorted: BuiltinImporter's test is a binary search

  FinderId find(const std::string& id) const;
  // The hook objects, in declaration order (what the per-object counters list).
  std::vector<FinderId> hook_objects() const;
};

// The ids every scenario has, in HookModel::objects order.
inline const char* const kPredefinedFinders[] = {"BuiltinImporter", "FrozenImporter", "PathFinder", "P"};

// The objects whose calls are counted one by one (finder_calls:ID), in the
// order reports list them: the hook objects as declared, then the
// interpreter's three (P is counted by the proxy's counters instead).
inline std::vector<FinderId> counted_finder_order(size_t objects) {
  std::vector<FinderId> out;
  for (size_t i = kProxyFinder + 1; i < objects; ++i) out.push_back(static_cast<FinderId>(i));
  for (FinderId f : {kBuiltinImporter, kFrozenImporter, kPathFinder}) out.push_back(f);
  return out;
}

// Interns the hooks' names; resolves finder ids (the reader checked them).
HookModel compile_hooks(const HooksText& text, NameTable& names);

// Whether `hook` acts on `name` (path: None for a top-level search).
bool hook_claims(const HookClass& hook, const NameTable& names, NameId name, bool path_is_none);

enum class DesignId;  // variant.h
// The hook as a hook design (docs/designs.md, "Designs for hooks") leaves
// it: each but as_is is a generic fix of the hook class; any other design
// leaves it as declared.
HookClass apply_hook_fix(HookClass hook, DesignId design);

}  // namespace impsim
