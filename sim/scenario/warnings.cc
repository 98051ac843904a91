#include "impsim/scenario/warnings.h"

#include <fmt/format.h>

#include <unordered_set>

#include "impsim/scenario/hook_language.h"
#include "impsim/scenario/names.h"

namespace impsim {

namespace {

using Names = std::unordered_set<std::string>;

// What `import name` (`itself`) or importlib.util.find_spec(name) (not
// `itself`: only its parents are imported) may leave in sys.modules.
void may_import(Names& names, const std::string& name, bool itself) {
  for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1))
    names.insert(name.substr(0, dot));
  if (itself) names.insert(name);
  if (is_torch_name(name)) may_import(names, "paddle" + name.substr(5), true);
}

void step_imports(Names& names, const Step& s) {
  if (s.kind == StepKind::Import || s.kind == StepKind::ImportModule) may_import(names, s.target, true);
  if (s.kind == StepKind::FindSpec) may_import(names, s.target, false);
}

// A join of a thread nothing has started raises RuntimeError. Generous as
// the call check is: a start anywhere but the program (another thread, a
// module body, a hook) may run before any join, so only a program whose
// own steps have not started the thread yet, with no such start elsewhere,
// is sure to raise; a thread nothing starts at all, wherever its join is.
void join_warnings(const Scenario& sc, std::vector<ScenarioWarning>& out) {
  Names elsewhere, in_program;
  auto note_start = [](Names& into) {
    return [&into](const Step& s) {
      if (s.kind == StepKind::Start) into.insert(s.detail().thread);
    };
  };
  for (const ThreadText& t : sc.threads) each_step(t.program, note_start(elsewhere));
  for (const TreeEntry& e : sc.tree) each_step(e.body, note_start(elsewhere));
  for (const HookText& h : sc.hooks.hooks)
    for (const HookActionText& a : h.actions)
      if (a.kind == ActionKind::Start) elsewhere.insert(a.target);
  each_step(sc.program, note_start(in_program));
  auto warn = [&](const std::string& pointer, const std::string& thread, const char* why) {
    out.push_back({pointer + "/join",
                   fmt::format("thread \"{0}\" has not been started when this join runs, so it raises RuntimeError: "
                               "cannot join thread before it is started ({1}); if that is not the point, start it "
                               "first (a step {{\"start\": \"{0}\"}} ahead of it)",
                               thread, why)});
  };
  Names started;
  each_step(sc.program, [&](const Step& s) {
    if (s.kind == StepKind::Start) started.insert(s.detail().thread);
    if (s.kind != StepKind::Join) return;
    const std::string& t = s.detail().thread;
    if (started.count(t) || elsewhere.count(t)) return;
    warn(s.pointer, t, in_program.count(t) ? "the program starts it only after this step, and no thread, module body "
                                             "or hook starts it"
                                           : "no step, thread, module body or hook starts it");
  });
  auto started_nowhere = [&](const std::string& t) { return !elsewhere.count(t) && !in_program.count(t); };
  auto never_started = [&](const Step& s) {
    if (s.kind == StepKind::Join && started_nowhere(s.detail().thread))
      warn(s.pointer, s.detail().thread, "no step, thread, module body or hook starts it");
  };
  for (const ThreadText& t : sc.threads) each_step(t.program, never_started);
  for (const TreeEntry& e : sc.tree) each_step(e.body, never_started);
  for (const HookText& h : sc.hooks.hooks)
    for (const HookActionText& a : h.actions)
      if (a.kind == ActionKind::Join && started_nowhere(a.target))
        out.push_back({a.pointer + "/join",
                       fmt::format("thread \"{0}\" is never started, so this join raises RuntimeError: cannot join "
                                   "thread before it is started (no step, thread, module body or hook starts it); "
                                   "start it somewhere (a step {{\"start\": \"{0}\"}})",
                                   a.target)});
}

}  // namespace

std::vector<ScenarioWarning> scenario_warnings(const Scenario& sc) {
  std::vector<ScenarioWarning> out;
  join_warnings(sc, out);
  bool any = false;
  auto note_call = [&](const Step& s) { any = any || s.kind == StepKind::Call; };
  each_step(sc.program, note_call);
  for (const TreeEntry& e : sc.tree) each_step(e.body, note_call);
  if (!any) return out;

  // What may be in sys.modules at any point: the starting modules, and
  // what module bodies and hooks import, whenever they run.
  Names maybe;
  for (const std::string& n : sc.preloaded) may_import(maybe, n, true);
  for (const std::string& n : sc.torch_modules) may_import(maybe, n, true);
  for (const TreeEntry& e : sc.tree) each_step(e.body, [&](const Step& s) { step_imports(maybe, s); });
  for (const HookText& h : sc.hooks.hooks)
    for (const HookActionText& a : h.actions) {
      if (a.kind == ActionKind::Import || a.kind == ActionKind::Serve) may_import(maybe, a.target, true);
      for (const auto& [_, served] : a.table) may_import(maybe, served, true);
      for (const HookActionText& b : a.create_module) may_import(maybe, b.target, true);
    }
  for (const HookText& h : sc.hooks.hooks)
    for (const HookActionText& a : h.after_exec) may_import(maybe, a.target, true);

  auto check = [&](const Step& s, const char* who) {
    // A do block's "m{i}" names a module per iteration: no warning can be sure.
    if (s.kind != StepKind::Call || maybe.count(s.target) || s.target.find("{i}") != std::string::npos) return;
    out.push_back({s.pointer + "/call",
                   fmt::format("\"{0}\" is not in sys.modules when this call runs, so it raises KeyError: '{0}' "
                               "({1} imports it, and sys_modules does not list it); if that is not the point, "
                               "import \"{0}\" before the call (a step {{\"import\": \"{0}\"}} ahead of it)",
                               s.target, who)});
  };
  // The program runs in order: a call sees what the steps before it imported.
  each_step(sc.program, [&](const Step& s) {
    check(s, "no step before it, no module body and no hook");
    step_imports(maybe, s);
  });
  // A module body may run at any point of the program.
  for (const TreeEntry& e : sc.tree)
    each_step(e.body, [&](const Step& s) { check(s, "no step, no module body and no hook"); });
  return out;
}

}  // namespace impsim
