// Reads the hook language (docs/scenario-format.md, "Hooks"): errors name
// file:line:column, the JSON pointer and what was expected, as the rest of
// the reader's do.
#include "read_hooks.h"

#include "reader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "impsim/base/name_pattern.h"
#include "impsim/scenario/counters.h"

namespace impsim {

using nlohmann::json;

namespace {

const char* const kMetaPathSteps[] = {"install", "uninstall", "insert", "append", "remove", "unload", "new", "reload"};

// A find_spec action's kinds: the key that names one, every key it takes
// (that one first), and what an error calls it.
struct ActionSyntax {
  std::string_view key;
  ActionKind kind;
  std::vector<std::string_view> keys;
  const char* what;
};

const std::vector<ActionSyntax>& action_syntax() {
  static const std::vector<ActionSyntax> table = {
      {"import", ActionKind::Import, {"import"}, "an import action"},
      {"reenter", ActionKind::Reenter, {"reenter"}, "a reenter action"},
      {"call", ActionKind::Call, {"call"}, "a call action"},
      {"call_next", ActionKind::CallNext, {"call_next"}, "a call_next action"},
      {"serve", ActionKind::Serve, {"serve", "module", "package", "table", "create_module"}, "a serve action"},
      {"unload", ActionKind::Unload, {"unload", "submodules"}, "an unload action"},
      {"start", ActionKind::Start, {"start"}, "a start action"},
      {"join", ActionKind::Join, {"join"}, "a join action"},
      {"use", ActionKind::Use, {"use", "module"}, "a use action"},
      {"return", ActionKind::ReturnNone, {"return"}, "a return action"},
  };
  return table;
}

// A finder id: what a scenario calls a finder object (a Python identifier).
bool is_finder_id(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

class HookReader : public reading::Reader {
 public:
  explicit HookReader(const reading::Reader& in) : reading::Reader(in.src(), in.file(), in.limits()) {}

  void must_be_true(const json& v, const std::string& ptr, const std::string& what) const {
    if (!boolean(v, ptr, what)) fail(ptr, fmt::format("{} takes only true", what));
  }
  // One of `choices`, by its word.
  template <class E>
  E choice(const json& v, const std::string& ptr, const std::string& what,
           std::initializer_list<std::pair<const char*, E>> choices) const {
    std::string list;
    for (auto& [word, _] : choices) list += (list.empty() ? "\"" : ", \"") + std::string(word) + "\"";
    if (!v.is_string()) fail(ptr, fmt::format("expected {} (one of {}), found {}", what, list, reading::type_name(v)));
    std::string s = v.get<std::string>();
    for (auto& [word, e] : choices)
      if (s == word) return e;
    fail(ptr, fmt::format("unknown {} \"{}\"; expected one of {}", what, s, list));
  }

  // root[key], an object {NAME: value} whose names are Python identifiers: fn(NAME, value, pointer).
  void each_named(const json& root, const std::string& key, const std::string& what, const char* name_kind,
                  const std::function<void(const std::string&, const json&, const std::string&)>& fn) const {
    if (!root.contains(key)) return;
    object(root[key], "/" + key, what);
    for (auto& [k, v] : root[key].items()) {
      const std::string ptr = "/" + key + "/" + pointer_token(k);
      if (!is_finder_id(k)) fail(ptr, fmt::format("{} must be a Python identifier, found \"{}\"", name_kind, k));
      fn(k, v, ptr);
    }
  }

  HookText hook(const json& v, const std::string& ptr, const std::string& hook_name) const;
  // Where an action runs: find_spec's actions, a loader wrapper's
  // after_exec, a served loader's create_module (import actions only in
  // the last two; an import of create_module may be "optional").
  enum class Place : uint8_t { FindSpec, AfterExec, CreateModule };
  HookActionText action(const json& v, const std::string& ptr, Place place = Place::FindSpec) const;
  HookLock lock(const json& v, const std::string& ptr) const;
};

// hook_claims (compile_hooks.cc) on the text, for the reader's checks: a
// look-up per name (or per dotted prefix), not a scan of every claim, as a
// table may have as many keys as the claims have names.
class ClaimsText {
 public:
  explicit ClaimsText(const HookText& h) : h_(h), claimed_(h.claim_names.begin(), h.claim_names.end()) {}
  bool claims(std::string_view name) const {
    switch (h_.claims) {
      case ClaimKind::All:
        return true;
      case ClaimKind::TopLevel:
        return name.find('.') == std::string_view::npos;
      case ClaimKind::Names:
        return claimed_.count(name) != 0;
      case ClaimKind::Packages:
        // The name itself, or a claimed package it is inside: each prefix that ends a part.
        for (size_t end = name.size(); end != std::string_view::npos; end = name.rfind('.', end - 1)) {
          if (claimed_.count(name.substr(0, end))) return true;
          if (end == 0) break;
        }
        return false;
      case ClaimKind::Patterns:
        return last_part_matches(h_.claim_patterns, name);
    }
    return false;
  }

 private:
  const HookText& h_;
  std::unordered_set<std::string_view> claimed_;
};

HookActionText HookReader::action(const json& v, const std::string& ptr, Place place) const {
  const bool after_exec = place == Place::AfterExec;
  const bool create_module = place == Place::CreateModule;
  object(v, ptr,
         after_exec      ? "an after_exec action ({\"import\": M})"
         : create_module ? "a create_module action ({\"import\": M} or {\"import\": M, \"optional\": true})"
                         : "a find_spec action");
  static const std::string kinds = [] {
    std::string out;
    for (const ActionSyntax& a : action_syntax()) out += (out.empty() ? "" : ", ") + std::string(a.key);
    return out;
  }();
  const ActionSyntax* syntax = nullptr;
  for (auto& [k, _] : v.items())
    for (const ActionSyntax& a : action_syntax())
      if (k == a.key) {
        if (syntax)
          fail(ptr,
               fmt::format("an action has exactly one of {}; found both \"{}\" and \"{}\"", kinds, syntax->key, k));
        syntax = &a;
      }
  if (!syntax) fail(ptr, "an action needs one of: " + kinds);
  if (place != Place::FindSpec && syntax->kind != ActionKind::Import)
    fail(ptr, after_exec ? "after the wrapped exec_module a loader runs import actions only ({\"import\": M})"
                         : "a served loader's create_module runs import actions only ({\"import\": M})");
  HookActionText a;
  if (create_module) {
    expect_keys(v, ptr, {"import", "optional"}, "a create_module action");
    if (v.contains("optional")) a.optional = boolean(v["optional"], ptr + "/optional", "\"optional\"");
  } else {
    expect_keys(v, ptr, syntax->keys.data(), syntax->keys.data() + syntax->keys.size(), syntax->what);
  }
  a.kind = syntax->kind;
  a.pointer = ptr;
  const std::string kind(syntax->key);
  const std::string kp = ptr + "/" + kind;
  const json& x = v[kind];
  switch (a.kind) {
    case ActionKind::Import:
      a.target = name(x, kp,
                      after_exec      ? "the module imported after the wrapped exec_module"
                      : create_module ? "the module imported by the loader's create_module"
                                      : "the module imported inside find_spec");
      break;
    case ActionKind::Reenter:
      if (string(x, kp, "\"find_spec\" (importlib.util.find_spec)") != "find_spec")
        fail(kp, fmt::format("expected \"find_spec\" (importlib.util.find_spec), found \"{}\"", x.get<std::string>()));
      break;
    case ActionKind::Call:
      a.target = string(x, kp, "the id of the finder object whose find_spec is called");
      break;
    case ActionKind::CallNext:
      must_be_true(x, kp, "\"call_next\"");
      break;
    case ActionKind::Serve:
      must_be_true(x, kp, "\"serve\"");
      if (v.contains("module")) a.target = name(v["module"], ptr + "/module", "the module object served");
      // true (every name served is a package), or the names that are (six:
      // six.moves.urllib has a __path__, six.moves.urllib.parse has none).
      if (v.contains("package")) {
        if (v["package"].is_array())
          a.package_names = names(v["package"], ptr + "/package", "the claimed names served as packages");
        else
          a.package = boolean(v["package"], ptr + "/package", "\"package\" (true, false or a list of names)");
      }
      if (v.contains("create_module")) {
        // pyximport's build: what the served loader runs before the module
        // exists, outside find_spec
        const std::string cp = ptr + "/create_module";
        array(v["create_module"], cp, "the imports the loader's create_module runs");
        for (size_t i = 0; i < v["create_module"].size(); ++i)
          a.create_module.push_back(action(v["create_module"][i], cp + "/" + std::to_string(i), Place::CreateModule));
      }
      if (v.contains("table")) {
        const std::string tp = ptr + "/table";
        object(v["table"], tp, "the serve table (claimed name -> the module served for it)");
        for (auto& [k, target] : v["table"].items())
          a.table.emplace_back(name(json(k), tp + "/" + pointer_token(k), "a claimed module name (a table key)"),
                               name(target, tp + "/" + pointer_token(k), "the module served for " + k));
      }
      break;
    case ActionKind::Unload:
      a.names = names(x, kp, "the module names deleted from sys.modules");
      if (v.contains("submodules")) a.submodules = boolean(v["submodules"], ptr + "/submodules", "\"submodules\"");
      break;
    case ActionKind::Start:
    case ActionKind::Join:
      a.target = string(x, kp, "the name of a thread declared under \"threads\"");
      break;
    case ActionKind::Use:
      // The function's globals are its module's: that module's lazy
      // bindings are what the read resolves.
      a.names.push_back(name(x, kp, "a dotted name to read (\"m\", \"a.b.c\")"));
      if (!v.contains("module"))
        fail(ptr, "a use action needs \"module\": the module find_spec is defined in, whose globals it reads");
      a.target = name(v["module"], ptr + "/module", "the module find_spec is defined in");
      break;
    case ActionKind::ReturnNone:
      if (string(x, kp, "\"none\"") != "none")
        fail(kp, fmt::format("expected \"none\", found \"{}\"", x.get<std::string>()));
      break;
  }
  return a;
}

// "lock": {"type": "Lock" | "RLock", "per": "class" | "object", "taken": PLACE or [PLACE, ...]}.
HookLock HookReader::lock(const json& v, const std::string& ptr) const {
  object(v, ptr, "the hook's own lock {\"type\": \"Lock\" or \"RLock\", \"per\": ..., \"taken\": ...}");
  expect_keys(v, ptr, {"type", "per", "taken"}, "a hook lock");
  if (!v.contains("type"))
    fail(ptr, "a hook lock needs \"type\": \"Lock\" (threading.Lock) or \"RLock\" (threading.RLock)");
  HookLock l;
  l.kind = choice<HookLockKind>(v["type"], ptr + "/type", "lock type",
                                {{"Lock", HookLockKind::Lock}, {"RLock", HookLockKind::RLock}});
  if (v.contains("per"))
    l.per = choice<HookLockScope>(v["per"], ptr + "/per", "lock owner",
                                  {{"class", HookLockScope::Class}, {"object", HookLockScope::Object}});
  if (!v.contains("taken")) return l;
  // One place, or a list of them: find_spec's (at most one), the install
  // step, the wrapped loader's work after exec_module.
  enum class LockPlace : uint8_t { AfterGuardTest, BeforeGuardTest, Install, AfterExec };
  const std::string tp = ptr + "/taken";
  const json& t = v["taken"];
  std::vector<std::pair<const json*, std::string>> items;
  if (t.is_array()) {
    if (t.empty()) fail(tp, "expected at least one place the lock is taken; leave out \"lock\" for a hook without one");
    for (size_t i = 0; i < t.size(); ++i) items.emplace_back(&t[i], tp + "/" + std::to_string(i));
  } else {
    items.emplace_back(&t, tp);
  }
  l.taken = HookLockTaken::NotInFindSpec;
  std::vector<LockPlace> seen;
  for (const auto& [x, xp] : items) {
    const LockPlace p = choice<LockPlace>(*x, xp, "place the lock is taken",
                                  {{"after_guard_test", LockPlace::AfterGuardTest},
                                   {"before_guard_test", LockPlace::BeforeGuardTest},
                                   {"install", LockPlace::Install},
                                   {"after_exec", LockPlace::AfterExec}});
    if (std::find(seen.begin(), seen.end(), p) != seen.end())
      fail(xp, fmt::format("\"{}\" is listed twice", x->get<std::string>()));
    const bool in_find_spec = p == LockPlace::AfterGuardTest || p == LockPlace::BeforeGuardTest;
    if (in_find_spec && l.taken != HookLockTaken::NotInFindSpec)
      fail(xp, "find_spec takes the lock in one place: \"after_guard_test\" or \"before_guard_test\", not both");
    seen.push_back(p);
    if (p == LockPlace::AfterGuardTest) l.taken = HookLockTaken::AfterGuardTest;
    if (p == LockPlace::BeforeGuardTest) l.taken = HookLockTaken::BeforeGuardTest;
    if (p == LockPlace::Install) l.install = true;
    if (p == LockPlace::AfterExec) l.after_exec = true;
  }
  return l;
}

HookText HookReader::hook(const json& v, const std::string& ptr, const std::string& hook_name) const {
  object(v, ptr, "a hook definition");
  expect_keys(v, ptr, {"claims", "find_spec", "guard", "loader", "install", "presence", "uninstall", "api", "lock"},
              "a hook definition");
  HookText h;
  h.name = hook_name;
  h.pointer = ptr;
  if (v.contains("claims")) {
    const std::string cp = ptr + "/claims";
    const json& c = object(v["claims"], cp, "the names the hook claims");
    expect_keys(c, cp, {"names", "packages", "patterns", "top_level", "all", "top_level_only"}, "claims");
    int kinds = 0;
    if (c.contains("names")) {
      h.claims = ClaimKind::Names;
      h.claim_names = names(c["names"], cp + "/names", "the exact names claimed");
      ++kinds;
    }
    if (c.contains("packages")) {
      h.claims = ClaimKind::Packages;
      h.claim_names = names(c["packages"], cp + "/packages", "the packages claimed (with their submodules)");
      ++kinds;
    }
    if (c.contains("patterns")) {
      h.claims = ClaimKind::Patterns;
      const std::string pp = cp + "/patterns";
      array(c["patterns"], pp, "the patterns of the names claimed (fnmatch's, on a name's last part)");
      if (c["patterns"].empty()) fail(pp, "expected at least one pattern, such as \"test_*\"");
      for (size_t i = 0; i < c["patterns"].size(); ++i) {
        const std::string ip = pp + "/" + std::to_string(i);
        const std::string p = string(c["patterns"][i], ip, "a pattern such as \"test_*\"");
        std::string why;
        std::optional<NamePattern> parsed = NamePattern::parse(p, &why);
        if (!parsed) fail(ip, fmt::format("pattern \"{}\" is refused: {}", p, why));
        h.claim_patterns.push_back(std::move(*parsed));
      }
      ++kinds;
    }
    if (c.contains("top_level")) {
      h.claims = ClaimKind::TopLevel;
      must_be_true(c["top_level"], cp + "/top_level", "\"top_level\"");
      ++kinds;
    }
    if (c.contains("all")) {
      h.claims = ClaimKind::All;
      must_be_true(c["all"], cp + "/all", "\"all\"");
      ++kinds;
    }
    if (kinds != 1) fail(cp, "claims needs exactly one of names, packages, patterns, top_level, all");
    if (c.contains("top_level_only"))
      h.top_level_only = boolean(c["top_level_only"], cp + "/top_level_only", "\"top_level_only\"");
  }
  if (v.contains("find_spec")) {
    const std::string ap = ptr + "/find_spec";
    array(v["find_spec"], ap, "the find_spec actions");
    for (size_t i = 0; i < v["find_spec"].size(); ++i)
      h.actions.push_back(action(v["find_spec"][i], ap + "/" + std::to_string(i)));
  }
  // A table entry, or a package name, the claims never reach would be dead: say so.
  const ClaimsText claims(h);
  auto must_claim = [&](const std::string& name, const std::string& at) {
    if (!claims.claims(name))
      fail(at,
           fmt::format("the hook does not claim \"{}\" (see its \"claims\"), so its find_spec never serves it", name));
  };
  for (const HookActionText& a : h.actions) {
    for (size_t i = 0; i < a.package_names.size(); ++i)
      must_claim(a.package_names[i], a.pointer + "/package/" + std::to_string(i));
    for (const auto& [key, _] : a.table) must_claim(key, a.pointer + "/table/" + pointer_token(key));
  }
  if (v.contains("guard"))
    h.guard = choice<GuardKind>(v["guard"], ptr + "/guard", "guard",
                                {{"none", GuardKind::None},
                                 {"global_set", GuardKind::GlobalSet},
                                 {"object_set", GuardKind::ObjectSet},
                                 {"thread_set", GuardKind::ThreadSet},
                                 {"flag", GuardKind::Flag},
                                 {"skip_self", GuardKind::SkipSelf},
                                 {"remove_self", GuardKind::RemoveSelf}});
  if (v.contains("loader")) {
    const std::string lp = ptr + "/loader";
    const json& l = v["loader"];
    if (l.is_string()) {
      if (l.get<std::string>() != "unchanged")
        fail(lp, fmt::format("expected \"unchanged\" or {{\"wrap\": ...}}, found \"{}\"", l.get<std::string>()));
    } else {
      object(l, lp, "\"unchanged\" or a loader wrapper {\"wrap\": \"set_attribute\" | \"toggle\", ...}");
      if (!l.contains("wrap")) fail(lp, "a loader wrapper needs \"wrap\": \"set_attribute\" or \"toggle\"");
      h.loader = choice<LoaderWrap>(l["wrap"], lp + "/wrap", "loader wrapper",
                                    {{"set_attribute", LoaderWrap::SetAttribute}, {"toggle", LoaderWrap::Toggle}});
      if (h.loader == LoaderWrap::SetAttribute) {
        expect_keys(l, lp, {"wrap", "attribute", "after_exec"}, "a set_attribute wrapper");
        if (!l.contains("attribute")) fail(lp, "a set_attribute wrapper needs \"attribute\" (the attribute's name)");
        h.attribute = string(l["attribute"], lp + "/attribute", "the attribute's name");
        if (!is_finder_id(h.attribute))
          fail(lp + "/attribute", fmt::format("expected a Python identifier, found \"{}\"", h.attribute));
        if (l.contains("after_exec")) {
          // wrapt's post-import hooks: code run once the wrapped exec_module
          // returns. Only imports: what such a hook does to the import system.
          const std::string ep = lp + "/after_exec";
          array(l["after_exec"], ep, "the actions run after the wrapped exec_module (import actions)");
          for (size_t i = 0; i < l["after_exec"].size(); ++i) {
            h.after_exec.push_back(action(l["after_exec"][i], ep + "/" + std::to_string(i), Place::AfterExec));
          }
        }
      } else {
        expect_keys(l, lp, {"wrap", "finder"}, "a toggle wrapper");
        if (!l.contains("finder"))
          fail(lp, "a toggle wrapper needs \"finder\" (the finder object removed around exec)");
        h.toggle_finder = string(l["finder"], lp + "/finder", "a finder id");
        h.toggle_pointer = lp + "/finder";
      }
    }
  }
  if (v.contains("install"))
    h.install = choice<InstallPolicy>(v["install"], ptr + "/install", "install policy",
                                      {{"insert0", InstallPolicy::Insert0},
                                       {"insert0_if_absent", InstallPolicy::Insert0IfAbsent},
                                       {"append", InstallPolicy::Append},
                                       {"append_if_absent", InstallPolicy::AppendIfAbsent}});
  if (v.contains("presence"))
    h.presence = choice<InstallPresence>(v["presence"], ptr + "/presence", "presence test",
                                         {{"object", InstallPresence::Object}, {"class", InstallPresence::Class}});
  if (v.contains("uninstall"))
    h.uninstall = choice<UninstallPolicy>(v["uninstall"], ptr + "/uninstall", "uninstall policy",
                                          {{"first", UninstallPolicy::First},
                                           {"all", UninstallPolicy::All},
                                           {"counted", UninstallPolicy::Counted},
                                           {"if_inserted", UninstallPolicy::IfInserted}});
  if (v.contains("api")) {
    h.legacy = choice<bool>(v["api"], ptr + "/api", "finder API", {{"find_spec", false}, {"find_module", true}});
  }
  if (v.contains("lock")) h.lock = lock(v["lock"], ptr + "/lock");
  if (h.lock.after_exec && h.loader != LoaderWrap::SetAttribute)
    fail(ptr + "/lock/taken",
         "\"after_exec\" is a place in the wrapped loader's exec_module: the hook needs \"loader\": {\"wrap\": "
         "\"set_attribute\", ...}");
  if (h.legacy) {
    // A legacy finder's find_module returns a loader, which _find_spec_legacy
    // turns into spec_from_loader(name, loader): exact for a served loader
    // and for None; a spec found elsewhere would lose its origin and search
    // locations, so those actions (and loader wrappers) are refused.
    for (const HookActionText& a : h.actions)
      if (a.kind == ActionKind::Reenter || a.kind == ActionKind::Call || a.kind == ActionKind::CallNext)
        fail(a.pointer,
             "a legacy hook (\"api\": \"find_module\") returns a loader, not a spec; impsim models its "
             "find_module with import, serve, unload, start, join and return actions only");
    if (h.loader != LoaderWrap::Unchanged)
      fail(ptr + "/loader", "a legacy hook (\"api\": \"find_module\") takes \"loader\": \"unchanged\" only");
  }
  return h;
}

// What read_hooks needs of the steps, in one walk over them all (on a
// 50,000-module tree, each walk was a cache miss per body): whether one
// takes P's part, and the sys.meta_path and sys.modules steps, in reading
// order, for their checks.
struct StepSurvey {
  bool proxy = false;
  std::vector<const Step*> meta_path;
};

StepSurvey survey_steps(const Scenario& sc) {
  StepSurvey out;
  auto visit = [&](const Step& s) {
    out.proxy = out.proxy || s.kind == StepKind::Enable || s.kind == StepKind::Disable || s.kind == StepKind::Guard ||
                s.kind == StepKind::Block;
    if (!is_meta_path_step_kind(s.kind)) return;
    out.proxy = out.proxy || s.detail().finder == "P";
    out.meta_path.push_back(&s);
  };
  each_step(sc.program, visit);
  for (const TreeEntry& e : sc.tree) each_step(e.body, visit);
  return out;
}

// HooksText::proxy_used, from the text: read before the finder ids are
// checked, so that an error about one lists P only where P takes part.
bool uses_proxy(const json& root, const HooksText& h, const StepSurvey& steps) {
  if (root.contains("meta_path") && root["meta_path"].is_array())
    for (const json& id : root["meta_path"])
      if (id == "P") return true;
  for (const HookText& hook : h.hooks) {
    if (hook.toggle_finder == "P") return true;
    for (const HookActionText& a : hook.actions)
      if (a.kind == ActionKind::Call && a.target == "P") return true;
  }
  return steps.proxy;
}

}  // namespace

bool is_meta_path_step(std::string_view key) {
  return std::find_if(std::begin(kMetaPathSteps), std::end(kMetaPathSteps), [&](const char* x) { return key == x; }) !=
         std::end(kMetaPathSteps);
}

const char* meta_path_step_list() { return "install, uninstall, insert, append, remove, unload, new, reload"; }

void read_meta_path_step(const reading::Reader& in, const json& v, const std::string& ptr, const std::string& kind,
                         Step& st, std::vector<std::string_view>& allowed) {
  HookReader r(in);
  const std::string kp = ptr + "/" + kind;
  const json& x = v[kind];
  // The steps that name one finder object, and what that object is.
  static const struct {
    const char* key;
    StepKind kind;
    const char* what;
  } kFinderSteps[] = {{"install", StepKind::Install, "the id of the hook finder object to install"},
                      {"uninstall", StepKind::Uninstall, "the id of the hook finder object to uninstall"},
                      {"insert", StepKind::Insert, "the id of the finder object to insert"},
                      {"append", StepKind::Append, "the id of the finder object to append"},
                      {"remove", StepKind::Remove, "the id of the finder object to remove"},
                      {"new", StepKind::New, "the id of the hook finder object made anew"}};
  bool names_finder = false;
  for (const auto& s : kFinderSteps)
    if (kind == s.key) {
      st.kind = s.kind;
      std::string id = r.string(x, kp, s.what);
      // "ID#k": the k-th object `new` made for ID, named after a newer one exists.
      if (const size_t hash = id.find('#'); hash != std::string::npos) {
        const std::string k = id.substr(hash + 1);
        if (k == "{i}" && s.kind != StepKind::New) {
          // "ID#{i}": the object of this iteration of the do block.
          in.check_iteration_use(kp, id);
          st.mutable_detail().instance = StepDetail::kIteration;
        } else {
          if (k.empty() || k.size() > 9 || k[0] == '0' || k.find_first_not_of("0123456789") != std::string::npos)
            r.fail(kp, fmt::format("expected {} (\"ID\", or \"ID#k\" for the k-th object a \"new\" step makes "
                                   "for ID, k from 1, or \"ID#{{i}}\" in a do block), found \"{}\"",
                                   s.what, id));
          if (s.kind == StepKind::New)
            r.fail(kp, fmt::format("new takes the declared id (\"{}\"): each new step makes the next \"{}#k\"",
                                   id.substr(0, hash), id.substr(0, hash)));
          st.mutable_detail().instance = std::stoll(k);
        }
        id.resize(hash);
      }
      st.mutable_detail().finder = std::move(id);
      names_finder = true;
    }
  if (kind == "install") {
    // wrapt's register_post_import_hook(hook, NAME): the finder inserted
    // once, NAME added to the names it claims (its _post_import_hooks).
    allowed.push_back("claim");
    if (v.contains("claim"))
      st.target = in.step_name(v["claim"], ptr + "/claim", "a module name the hook claims from then on");
  } else if (kind == "insert") {
    allowed.push_back("at");
    if (!v.contains("at")) r.fail(ptr, "an insert step needs \"at\" (the index, as list.insert takes it)");
    st.mutable_detail().at = r.integer(v["at"], ptr + "/at", "the index", INT64_MIN);
  } else if (kind == "remove") {
    allowed.push_back("copies");
    allowed.push_back("optional");
    if (v.contains("copies"))
      st.mutable_detail().all_copies =
          r.choice<bool>(v["copies"], ptr + "/copies", "\"copies\"", {{"first", false}, {"all", true}});
    if (v.contains("optional")) st.optional = r.boolean(v["optional"], ptr + "/optional", "\"optional\"");
  } else if (kind == "new") {
    allowed.push_back("same_class");
    if (v.contains("same_class"))
      st.mutable_detail().same_class = r.boolean(v["same_class"], ptr + "/same_class", "\"same_class\"");
  } else if (kind == "reload") {
    st.kind = StepKind::Reload;
    st.target = in.step_name(x, kp, "the name of the module to reload");
    allowed.push_back("optional");
    if (v.contains("optional")) st.optional = r.boolean(v["optional"], ptr + "/optional", "\"optional\"");
  } else if (!names_finder) {
    st.kind = StepKind::Unload;
    st.mutable_detail().unload = in.step_names(x, kp, "the module names deleted from sys.modules");
    allowed.push_back("submodules");
    if (v.contains("submodules"))
      st.mutable_detail().submodules = r.boolean(v["submodules"], ptr + "/submodules", "\"submodules\"");
  }
}

void read_hooks(const reading::Reader& in, const json& root, Scenario& sc, bool variants_given) {
  HookReader r(in);
  HooksText& h = sc.hooks;
  h.used = root.contains("hooks") || root.contains("finders") || root.contains("meta_path") || root.contains("builtin");
  std::set<std::string, std::less<>>& hook_names = h.hook_names;
  r.each_named(root, "hooks", "the hook definitions (name -> definition)", "a hook name",
               [&](const std::string& k, const json& v, const std::string& ptr) {
                 h.hooks.push_back(r.hook(v, ptr, k));
                 hook_names.insert(k);
               });
  std::set<std::string> ids(std::begin(kPredefinedFinders), std::end(kPredefinedFinders));
  std::set<std::string, std::less<>>& hook_ids = h.hook_finder_ids;
  r.each_named(root, "finders", "the finder objects (id -> {\"hook\": NAME})", "a finder id",
               [&](const std::string& k, const json& v, const std::string& ptr) {
                 if (ids.count(k))
                   r.fail(ptr, fmt::format("\"{}\" is a predefined finder object; choose another id", k));
                 r.object(v, ptr, "a finder object {\"hook\": NAME}");
                 r.expect_keys(v, ptr, {"hook"}, "a finder object");
                 if (!v.contains("hook"))
                   r.fail(ptr, "a finder object needs \"hook\" (the name of its hook definition)");
                 std::string hook = r.string(v["hook"], ptr + "/hook", "a hook name");
                 if (!hook_names.count(hook))
                   r.fail(ptr + "/hook",
                          fmt::format("unknown hook \"{}\"; \"hooks\" defines: {}", hook,
                                      hook_names.empty() ? std::string("none")
                                                         : fmt::format("{}", fmt::join(hook_names, ", "))));
                 h.finders.push_back({k, hook, ptr});
                 ids.insert(k);
                 hook_ids.insert(k);
               });
  const StepSurvey steps = survey_steps(sc);
  h.proxy_used = uses_proxy(root, h, steps);
  // The ids an error offers: those this scenario has, so P only where it takes part.
  std::vector<std::string> offered;
  for (const std::string& id : ids)
    if (id != "P" || h.proxy_used) offered.push_back(id);
  auto known = [&](const std::string& id, const std::string& ptr) {
    if (!ids.count(id))
      r.fail(ptr, fmt::format("unknown finder object \"{}\"{}; expected one of: {}", id,
                              did_you_mean_note(id, offered, '"'), name_list(offered)));
  };
  if (root.contains("meta_path")) {
    r.array(root["meta_path"], "/meta_path", "the initial sys.meta_path (a list of finder ids)");
    std::vector<std::string> mp;
    for (size_t i = 0; i < root["meta_path"].size(); ++i) {
      const std::string ptr = "/meta_path/" + std::to_string(i);
      mp.push_back(r.string(root["meta_path"][i], ptr, "a finder id"));
      known(mp.back(), ptr);
    }
    h.meta_path = std::move(mp);
  }
  if (root.contains("builtin")) h.builtin = r.names(root["builtin"], "/builtin", "the names BuiltinImporter finds");
  // "real" ties a scenario to the package tools/check/crosscheck runs; impsim reads nothing in it.
  std::unordered_map<std::string_view, const HookText*> hook_by_name;
  for (const HookText& t : h.hooks) hook_by_name.emplace(t.name, &t);
  std::unordered_map<std::string_view, const HookText*> hook_of_finder;
  for (const FinderText& f : h.finders) hook_of_finder.emplace(f.id, hook_by_name.at(f.hook));
  for (size_t i = 0; i < h.hooks.size(); ++i) {
    const HookText& hook = h.hooks[i];
    for (const HookActionText& a : hook.actions) {
      if (a.kind != ActionKind::Call) continue;
      known(a.target, a.pointer + "/call");
      // `X.find_spec(...)` on a legacy finder is an AttributeError in Python.
      if (auto f = hook_of_finder.find(a.target); f != hook_of_finder.end() && f->second->legacy)
        r.fail(a.pointer + "/call", fmt::format("\"{}\" is a legacy finder (its hook \"{}\" has \"api\": "
                                                "\"find_module\"): it has no find_spec to call",
                                                a.target, f->second->name));
    }
    if (!hook.toggle_finder.empty()) known(hook.toggle_finder, hook.toggle_pointer);
  }
  std::vector<const Step*> numbered;  // steps that name "ID#k"
  for (const Step* step : steps.meta_path) {
    const Step& s = *step;
    h.used = true;
    if (s.kind == StepKind::Unload || s.kind == StepKind::Reload) continue;
    const char* key = s.kind == StepKind::Install     ? "install"
                      : s.kind == StepKind::Uninstall ? "uninstall"
                      : s.kind == StepKind::Insert    ? "insert"
                      : s.kind == StepKind::Append    ? "append"
                      : s.kind == StepKind::New       ? "new"
                                                      : "remove";
    const std::string ptr = s.pointer + "/" + key;
    const std::string& finder = s.detail().finder;
    known(finder, ptr);
    if (s.kind == StepKind::New) h.renewed_ids.insert(finder);
    if (s.detail().instance != 0) numbered.push_back(&s);
    const bool hook_only = s.kind == StepKind::Install || s.kind == StepKind::Uninstall || s.kind == StepKind::New;
    if (hook_only && !hook_ids.count(finder))
      r.fail(ptr, fmt::format("{} takes a hook finder object (one of \"finders\"), found \"{}\"; use insert, "
                              "append or remove for the interpreter's finders{}",
                              key, finder, h.proxy_used ? " and P" : ""));
    // A claim grows a list of names: a hook that claims everything, or by
    // a rule, has none to grow.
    if (s.kind == StepKind::Install && !s.target.empty())
      if (const HookText* hook = hook_of_finder.at(finder);
          hook->claims != ClaimKind::Names && hook->claims != ClaimKind::Packages)
        r.fail(s.pointer + "/claim",
               fmt::format("\"claim\" adds a name to what the hook claims, and hook \"{}\" claims {}; give it "
                           "\"claims\": {{\"names\": [...]}} (or \"packages\") to grow",
                           hook->name, hook->claims == ClaimKind::All ? "every name" : "by a rule"));
  }
  for (const Step* s : numbered)
    if (!h.renewed_ids.count(s->detail().finder))
      r.fail(s->pointer,
             fmt::format("\"{}#{}\" names an object a \"new\" step makes for \"{}\", and no step makes "
                         "one; name \"{}\" itself, or add {{\"new\": \"{}\"}} where the package makes it",
                         s->detail().finder,
                         s->detail().instance == StepDetail::kIteration ? std::string("{i}")
                                                                        : std::to_string(s->detail().instance),
                         s->detail().finder, s->detail().finder, s->detail().finder));
  if (h.used && !variants_given) sc.variants = {Variant{DesignId::AsIs, std::nullopt, {}}};
  for (size_t i = 0; i < sc.variants.size(); ++i)
    if (std::optional<std::string> why = hook_variant_problem(sc, sc.variants[i]))
      r.fail("/variants/" + std::to_string(i), *why);
}

}  // namespace impsim
