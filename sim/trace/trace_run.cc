// `impsim trace`'s driver: one engine per variant with a TraceWriter
// attached, and the helpers every trace format shares.
#include <fmt/format.h>

#include <algorithm>

#include "impsim/base/text.h"
#include "impsim/trace/trace_formats.h"

namespace impsim {

std::optional<TraceFormat> parse_trace_format(const std::string& s) {
  if (s == "text") return TraceFormat::Text;
  if (s == "chrome") return TraceFormat::Chrome;
  if (s == "dot") return TraceFormat::Dot;
  if (s == "importtime") return TraceFormat::ImportTime;
  return std::nullopt;
}

namespace trace_detail {

std::string finder_id(const Engine& e, FinderId f) {
  if (f < 0 || static_cast<size_t>(f) >= e.finder_objects().size()) return "";
  return e.finder_objects()[static_cast<size_t>(f)].id;
}

std::string thread_name(const Engine& e, int32_t thread) {
  const std::vector<std::string> names = e.thread_names();
  if (names.empty() && thread == 0) return "main";  // a run without threads (a hook lock's hang)
  return thread >= 0 && static_cast<size_t>(thread) < names.size() ? names[static_cast<size_t>(thread)] : "?";
}

std::string wait_text(const Engine& e, const ThreadWait& w) {
  const std::string on = thread_name(e, w.on);
  switch (w.kind) {
    case WaitKind::GlobalLock: {
      const std::string_view site = w.site;
      const char* where = site == "find_spec"     ? " (to call a finder's find_spec)"
                          : site == "module_lock" ? " (in _get_module_lock)"
                          : site == "lock_gc"     ? " (in a dead module lock's weakref callback)"
                                                  : "";
      return fmt::format("waits for the global import lock{}, held by {}", where, on);
    }
    case WaitKind::ModuleLock:
      return fmt::format("waits for _ModuleLock('{}'), held by {}", e.model().names.text(w.module), on);
    case WaitKind::Join:
      return fmt::format("waits for {} to finish ({}.join())", on, on);
    case WaitKind::HookLock:
      return fmt::format("waits for {}, held by {}", e.hook_lock_text(w.lock), on);
  }
  return "waits";
}

const char* wait_key(const ThreadWait& w) {
  return w.kind == WaitKind::GlobalLock   ? "global"
         : w.kind == WaitKind::ModuleLock ? "module"
         : w.kind == WaitKind::HookLock   ? "hook"
                                          : "join";
}

std::string woken_text(const Engine& e, const ThreadWait& w) {
  if (w.kind == WaitKind::Join) return fmt::format("{} has finished: join returns", thread_name(e, w.on));
  if (w.kind == WaitKind::HookLock)
    return fmt::format("woken: {} was released; acquire tries again", e.hook_lock_text(w.lock));
  return w.kind == WaitKind::GlobalLock ? "woken: the global import lock was released; acquire tries again"
                                        : fmt::format("woken: _ModuleLock('{}') was released; acquire tries again",
                                                      e.model().names.text(w.module));
}

std::string deadlock_text(const Engine& e, const std::vector<ThreadWait>& cycle, bool swallowed) {
  if (cycle.empty()) return "_DeadlockError";
  const std::string& module = e.model().names.text(cycle.front().module);
  std::string s = swallowed ? fmt::format(
                                  "_DeadlockError for _ModuleLock('{}'), swallowed by _lock_unlock_module: {} goes on "
                                  "with '{}' as it is, partly initialised",
                                  module, thread_name(e, e.running_thread()), module)
                            : fmt::format("_DeadlockError (deadlock detected by _ModuleLock('{}'))", module);
  int32_t waiter = e.running_thread();
  for (size_t i = 0; i < cycle.size(); ++i) {
    // The first wait is the one that was not begun.
    const std::string wait = wait_text(e, cycle[i]);
    s += fmt::format("{} {} {}", i == 0 ? ":" : ";", thread_name(e, waiter),
                     i == 0 ? "would wait" + wait.substr(std::string_view("waits").size()) : wait);
    waiter = cycle[i].on;
  }
  return s;
}

// The words of a lazy event, one text for the text trace's line and the explorer's why band.
std::string lazy_event_text(const Engine& e, LazyEvent what, NameId name, const std::string& read) {
  const NameTable& names = e.model().names;
  const LazyImports& lazy = e.lazy();
  // A hook's find_spec read the name (a body it caused to run, deeper, is
  // still inside that call): the search it starts runs inside the call.
  const bool hook_read = lazy.reader != kNoFinder && e.frames().size() == lazy.reader_frames;
  std::string where = e.frames().empty() || hook_read
                          ? ""
                          : fmt::format(" (in {})", names.text(e.module(e.frames().back()).name));
  if (lazy.reader != kNoFinder)
    where += fmt::format(", inside {}.find_spec('{}')", finder_id(e, lazy.reader), names.text(lazy.searched));
  switch (what) {
    case LazyEvent::Bound:
      return fmt::format(
          "no search now: {} is bound to a lazy object, and '{}' is added to sys.lazy_modules; the first read of {} "
          "imports it",
          read, names.text(name), read);
    case LazyEvent::Eager:
      return fmt::format("the lazy-imports filter answered False for {}: it is imported now", names.text(name));
    case LazyEvent::Resolve:
      if (read.starts_with("globals()["))
        return fmt::format("resolved here, by `{}`{}: the lazy object imports {} now, against sys.meta_path as it is "
                           "now, and the global keeps the lazy object",
                           read, where, names.text(name));
      return fmt::format(
          "resolved here, at the first read of `{}`{}: the lazy object imports {} now, against sys.meta_path as it "
          "is now",
          read, where, names.text(name));
    case LazyEvent::Cycle:
      return fmt::format(
          "`{}`{}: the lazy object for {} is being resolved further out, and its import has not returned: "
          "ImportCycleError",
          read, where, names.text(name));
    case LazyEvent::Attribute:
      return fmt::format(
          "`{}`: no such attribute, but sys.lazy_modules lists '{}' or a submodule of it: it is imported now{}", read,
          names.text(name), where);
  }
  return {};
}

const char* finder_method(const Engine& e, FinderId f) { return e.is_legacy_finder(f) ? "find_module" : "find_spec"; }

// A hook scenario's sys.meta_path, by finder id, the entry at `at` starred.
// A list longer than kMetaPathShown entries (a scenario can append a
// thousand PathFinders, and every ask writes the list) shows its first
// entries, those around the star and its last ones, and says how many it
// leaves out between them: a trace of it stays the size of its events.
constexpr int64_t kMetaPathShown = 40;

std::string meta_path_text(const Engine& e, int64_t at) { return meta_path_text(e, e.meta_path(), at); }

std::string meta_path_text(const Engine& e, const MetaPath& list, int64_t at) {
  const int64_t n = list.size();
  auto shown = [&](int64_t i) {
    return n <= kMetaPathShown || i < 16 || i >= n - 8 || (at >= 0 && i >= at - 4 && i <= at + 4);
  };
  std::string s;
  for (int64_t i = 0; i < n;) {
    if (!shown(i)) {
      int64_t j = i;
      while (j < n && !shown(j)) ++j;
      s += fmt::format(" \u2026 ({} more) \u2026", j - i);
      i = j;
      continue;
    }
    s += fmt::format("{}{}{}", s.empty() ? "" : " ", i == at ? "*" : "", finder_id(e, list.at(i)));
    ++i;
  }
  return "[" + s + "]";
}

bool ask_stands(const MetaPath& walked, int64_t index, FinderId finder) {
  return index >= 0 && index < walked.size() && walked.at(index) == finder;
}

std::string ask_note(const Engine& e, const MetaPath& walked, int64_t index, FinderId finder) {
  if (!ask_stands(walked, index, finder))
    return fmt::format(
        "{} was read at i={} before this thread held the global import lock; another thread has "
        "changed sys.meta_path since",
        finder_id(e, finder), index);
  if (&walked != &e.meta_path() && !walked.same_as(e.meta_path()))
    return fmt::format("a snapshot: sys.meta_path is now {}", meta_path_now(e, e.meta_path().proxy_copies()));
  return {};
}

std::string ask_list_text(const Engine& e, const MetaPath& walked, int64_t index, FinderId finder) {
  const int64_t at = ask_stands(walked, index, finder) ? index : -1;
  std::string s = e.hooks_used() ? meta_path_text(e, walked, at) : meta_path_text(walked.proxy_copies(), at);
  const std::string note = ask_note(e, walked, index, finder);
  return note.empty() ? s : s + " (" + note + ")";
}

std::string meta_path_now(const Engine& e, int64_t copies, int64_t at) {
  return e.hooks_used() ? meta_path_text(e, at) : meta_path_text(copies, at);
}

std::vector<std::pair<std::string, Count>> finder_calls_by_object(const Engine& e) {
  std::vector<std::pair<std::string, Count>> out;
  const auto& objects = e.finder_objects();  // with those `new` steps made
  const auto& by = e.hook_counters().by_object;
  // Hook objects first, then the interpreter's finders that were called.
  for (FinderId f : counted_finder_order(objects.size())) {
    const size_t i = static_cast<size_t>(f);
    const Count n = i < by.size() ? by[i] : Count(0);
    if (objects[i].cls == FinderClass::Hook || n != 0) out.emplace_back(objects[i].id, n);
  }
  return out;
}

std::string hook_totals_text(const Engine& e) {
  const HookCounters& h = e.hook_counters();
  const auto& objects = e.finder_objects();  // with those `new` steps made
  // The hook objects' calls make up finder_calls; the interpreter's finders are listed apart.
  std::string hooks, predefined;
  for (FinderId f : counted_finder_order(objects.size())) {
    const size_t i = static_cast<size_t>(f);
    const Count n = i < h.by_object.size() ? h.by_object[i] : Count(0);
    std::string& s = objects[i].cls == FinderClass::Hook ? hooks : predefined;
    if (objects[i].cls == FinderClass::Hook || n != 0)
      s += fmt::format("{}{} {}", s.empty() ? "" : ", ", objects[i].id, grouped(n));
  }
  return fmt::format("{} {}, {} finder call{}{}{}, deepest _find_spec nesting {}", grouped(h.searches),
                     h.searches == 1 ? "search" : "searches", grouped(h.finder_calls), h.finder_calls == 1 ? "" : "s",
                     hooks.empty() ? "" : " (" + hooks + ")",
                     predefined.empty() ? "" : ", interpreter's finders: " + predefined, h.max_depth);
}

std::string meta_path_text(int64_t copies, int64_t at) {
  // By hand, not by fmt: a trace writes one per ask and per toggle.
  static const char* kBuiltins[3] = {"Builtin", "Frozen", "Path"};
  std::string s = "[";
  if (copies > 8) {
    s += "P x";
    s += std::to_string(copies);
    if (at >= 0 && at < copies) {
      s += " (*";
      s += std::to_string(at);
      s += ")";
    }
    s += " | ";
  } else if (copies > 0) {
    for (int64_t i = 0; i < copies; ++i) {
      if (i) s += ' ';
      if (i == at) s += '*';
      s += 'P';
    }
    s += " | ";
  }
  for (int64_t i = 0; i < 3; ++i) {
    if (i) s += ' ';
    if (copies + i == at) s += '*';
    s += kBuiltins[i];
  }
  return s + "]";
}

namespace {

std::string set_text(const Model& model, SetId set) {
  std::vector<std::string> names;
  for (NameId n : model.sets.members(set)) names.push_back("'" + model.names.text(n) + "'");
  std::sort(names.begin(), names.end());
  std::string s;
  for (auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return "{" + s + "}";
}

}  // namespace

std::string step_text(const Model& model, const CStep& step) {
  std::string s;
  auto scope_arg = [&](size_t i) {
    if (!step.has_scope) return std::string();
    return ", scope=" + set_text(model, step.scopes[i]);
  };
  switch (step.kind) {
    case StepKind::Import:
      s = "import " + model.names.text(step.target);
      break;
    case StepKind::FindSpec:
      s = "importlib.util.find_spec('" + model.names.text(step.target) + "')";
      break;
    case StepKind::ImportModule:
      s = "importlib.import_module('" + model.names.text(step.target) + "')";
      break;
    case StepKind::Enable:
      s = step.has_scope ? "enable_torch_proxy(scope=" + set_text(model, step.scopes[0]) + ")" : "enable_torch_proxy()";
      break;
    case StepKind::Disable:
      s = "disable_torch_proxy()";
      break;
    case StepKind::Block: {
      std::string names;
      for (NameId n : model.sets.members(step.block))
        names += (names.empty() ? "'" : ", '") + model.names.text(n) + "'";
      s = "extend_torch_proxy_blocked_modules([" + names + "])";
      break;
    }
    case StepKind::Call:
      s = "a function of " + model.names.text(step.target) + " runs";
      break;
    case StepKind::Do:
      s = step.at > 0 ? fmt::format("for i in range(1, {}):  (i = {})", step.nest + 1, step.at)
                      : fmt::format("for _ in range({}):", step.repeat);
      break;
    case StepKind::Start:
    case StepKind::Join:
      s = fmt::format("{}.{}()", model.threads[static_cast<size_t>(step.at)].name,
                      step.kind == StepKind::Start ? "start" : "join");
      break;
    case StepKind::LazyImport:
    case StepKind::Use:
    case StepKind::SetLazyImports:
    case StepKind::SetLazyFilter:
    case StepKind::LazyFrom:
    case StepKind::SetLazyModules:
    case StepKind::Resolve:
      s = lazy_step_text(step, model);
      break;
    default:  // the meta_path steps
      s = describe_meta_path_step(step, model);
      break;
    case StepKind::Guard: {
      const char* en = step.guard_enable ? "True" : "False";
      if (step.nest < 0) {
        s = fmt::format("with use_torch_proxy_guard(enable={}{}):", en, scope_arg(0));
      } else if (step.nest == 0) {
        s = "(a guard nested 0 deep: the body runs unguarded)";
      } else {
        s = fmt::format("{} nested use_torch_proxy_guard(enable={}, ...): ", step.nest, en);
        size_t n = static_cast<size_t>(step.nest);
        for (size_t i = 0; i < n; ++i) {
          if (n > 4 && i == 2) {
            s += fmt::format("..., ");
            i = n - 2;
          }
          s += fmt::format("level {}{}{}", i + 1, step.has_scope ? " " + set_text(model, step.scopes[i]) : " global",
                           i + 1 < n ? ", " : "");
        }
      }
      break;
    }
  }
  if (step.optional) s += "  (optional: ImportError is caught)";
  if (step.label >= 0) s += "  [" + model.labels[static_cast<size_t>(step.label)] + "]";
  return s;
}

const char* finder_name(FinderClass k) {
  switch (k) {
    case FinderClass::Proxy:
      return "P";
    case FinderClass::Builtin:
      return "Builtin";
    case FinderClass::Frozen:
      return "Frozen";
    case FinderClass::Path:
      return "Path";
    case FinderClass::Hook:
      return "Hook";
  }
  return "?";
}

}  // namespace trace_detail

TraceResult write_trace(std::ostream& out, const Scenario& sc, const RunOptions& options, const TraceOptions& topt) {
  RunPlan plan = plan_runs(sc, options, SweepMode::Ignore);
  Model model = compile_model(sc, plan.params[0], options.model_limits);
  apply_axes(model, options);

  std::unique_ptr<TraceWriter> w;
  switch (topt.format) {
    case TraceFormat::Text:
      w = make_text_writer(out, topt);
      break;
    case TraceFormat::Chrome:
      w = make_chrome_writer(out, topt);
      break;
    case TraceFormat::Dot:
      w = make_dot_writer(out, topt);
      break;
    case TraceFormat::ImportTime:
      w = make_importtime_writer(out, topt);
      break;
    case TraceFormat::Explore:
      w = make_explore_writer(out, topt);
      break;
  }
  TraceResult result;
  w->begin(sc, model, plan.variants);
  for (size_t i = 0; i < plan.variants.size(); ++i) {
    w->begin_variant(model, plan.variants[i], i);
    VariantRun r = run_one(plan, model, 0, plan.variants[i], options, w.get(),
                           [&](const Engine& engine) { w->end_variant(engine); });
    // The text log and the page say where a limit stopped the run; the
    // Chrome, DOT and importtime files have no place for it: stderr does.
    if (r.limit && topt.format != TraceFormat::Text && topt.format != TraceFormat::Explore)
      fmt::print(stderr, "impsim: {}: {}: stopped: limit {} reached at {}: {}\n", sc.file, variant_name(r.variant),
                 r.limit->limit, r.limit->traceback.empty() ? "the start" : r.limit->traceback.back(), r.limit->detail);
    // A hang fails as an uncaught exception does: the program never ends
    // (ScenarioRun::raised_unexpectedly, run's status).
    const bool failed = !sc.allow_error && (r.outcome.error || !r.outcome.hang.empty());
    if (r.limit)
      result.status = kExitLimit;
    else if (failed && result.status == kExitOk)
      result.status = kExitFailed;
    if (r.limit || failed) result.failed.push_back(result.runs.size());
    result.runs.push_back(std::move(r));
  }
  w->end();
  return result;
}

std::vector<VariantRun> TraceResult::failed_runs() const {
  std::vector<VariantRun> out;
  for (size_t i : failed) out.push_back(runs[i]);
  return out;
}

}  // namespace impsim
