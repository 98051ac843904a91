#include "impsim/run/run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <string_view>
#include <unordered_set>

#include "impsim/base/did_you_mean.h"
#include "impsim/base/engine_stack.h"
#include "impsim/base/plural.h"
#include "impsim/base/resources.h"
#include "impsim/base/text.h"
#include "impsim/engine/stack_budget.h"
#include "impsim/run/outcome_words.h"
#include "impsim/run/sweep.h"

namespace impsim {

bool Outcome::operator==(const Outcome& o) const {
  auto same_error = [](const std::optional<PyError>& a, const std::optional<PyError>& b) {
    if (a.has_value() != b.has_value()) return false;
    if (!a) return true;
    return a->type == b->type && a->message == b->message && a->traceback == b->traceback;
  };
  return modules == o.modules && marks == o.marks && results == o.results && proxy_copies == o.proxy_copies &&
         same_error(error, o.error) && meta_path == o.meta_path && threads == o.threads && hang == o.hang;
}

FinderNames::FinderNames(std::vector<std::string> by_object) : ids(std::move(by_object)) {
  for (size_t i = 0; i < ids.size(); ++i)
    if (!ids[i].empty()) index.emplace(ids[i], i);
}

const std::vector<std::string>& VariantRun::finder_ids() const {
  static const std::vector<std::string> none;
  return finders ? finders->ids : none;
}

namespace {

Count hook_run_counter(const VariantRun& r, const Counters& c, const HookCounters& h, std::string_view name) {
  if (name == "searches") return h.searches;
  if (name == "finder_calls") return h.finder_calls;
  if (name == "max_depth") return h.max_depth;
  if (name == "legacy_warnings") return h.legacy_warnings;
  if (name == "hook_depth") return h.hook_depth;
  if (name == "hook_reentries") return h.hook_reentries;
  if (name == "lookup_depth") return c.max_depth;
  if (name.starts_with("finder_calls:")) {
    if (!r.finders) return 0;
    auto it = r.finders->index.find(name.substr(13));
    if (it == r.finders->index.end()) return 0;
    return it->second < h.by_object.size() ? h.by_object[it->second] : Count(0);
  }
  return counter_value(c, name);
}

}  // namespace

Count counter_of(const VariantRun& r, const std::string& counter) {
  auto dot = counter.find('.');
  if (dot == std::string::npos) return counter_at(r, SIZE_MAX, counter);
  std::string label = counter.substr(0, dot);
  for (size_t i = 0; i < r.labels.size(); ++i)
    if (r.labels[i].first == label) return counter_at(r, i, counter.substr(dot + 1));
  return 0;
}

Count counter_at(const VariantRun& r, size_t label, const std::string& counter) {
  if (label == SIZE_MAX)
    return r.hooks_used ? hook_run_counter(r, r.counters, r.hooks, counter) : counter_value(r.counters, counter);
  if (label >= r.labels.size()) return 0;
  return r.hooks_used ? hook_run_counter(r, r.labels[label].second, r.label_hooks[label].second, counter)
                      : counter_value(r.labels[label].second, counter);
}

std::vector<std::string> report_counter_names(const std::vector<VariantRun>& runs) {
  std::vector<std::string> out;
  if (runs.empty() || !runs.front().hooks_used) {
    for (const CounterInfo& c : kCounters) out.emplace_back(c.name);
    return out;
  }
  out = {"searches", "finder_calls"};
  // Hook objects first (every id any run has: runs may differ in the
  // objects `new` steps made), then the interpreter's three.
  std::set<std::string> listed;
  auto add = [&](const std::string& id) {
    if (!id.empty() && listed.insert(id).second) out.push_back("finder_calls:" + id);
  };
  for (const VariantRun& r : runs)
    for (size_t i = kProxyFinder + 1; i < r.finder_ids().size(); ++i) add(r.finder_ids()[i]);
  for (FinderId f : {kBuiltinImporter, kFrozenImporter, kPathFinder})
    if (static_cast<size_t>(f) < runs.front().finder_ids().size())
      add(runs.front().finder_ids()[static_cast<size_t>(f)]);
  out.push_back("max_depth");
  // Only where hook calls nest or a hook re-enters the import system.
  if (std::any_of(runs.begin(), runs.end(),
                  [](const VariantRun& r) { return r.hooks.hook_depth > 1 || r.hooks.hook_reentries != 0; })) {
    out.push_back("hook_depth");
    out.push_back("hook_reentries");
  }
  // Only where a legacy finder warned.
  if (std::any_of(runs.begin(), runs.end(), [](const VariantRun& r) { return r.hooks.legacy_warnings != 0; }))
    out.push_back("legacy_warnings");
  for (const CounterInfo& c : kCounters) {
    std::string name = c.name == "max_depth" ? "lookup_depth" : std::string(c.name);
    if (std::any_of(runs.begin(), runs.end(), [&](const VariantRun& r) { return counter_of(r, name) != 0; }))
      out.push_back(name);
  }
  return out;
}

Outcome outcome_of(const Engine& engine) {
  Outcome out;
  const Model& model = engine.model();
  const NameTable& names = model.names;
  auto origin = [&](const CStep* s) { return s ? describe_step(*s, model) : std::string("before the program"); };
  for (NameId n : engine.sys_modules().names()) {
    const std::string& name = names.text(n);
    const Module& m = engine.module(engine.sys_modules().get(n));
    out.modules.push_back(name);
    out.created_by[name] = origin(m.created_by);
    if (m.marks == (kMarkEnabled | kMarkDisabled))
      out.marks[name] = "enabled+disabled";
    else if (m.marks == kMarkEnabled)
      out.marks[name] = "enabled";
    else if (m.marks == kMarkDisabled)
      out.marks[name] = "disabled";
    if (m.marks) out.marked_by[name] = origin(m.marked_by);
    // Attributes a hook's loader set show as marks of their own; one set
    // k times (a chain of k wrappers, a reload) shows as "x*k".
    if (const auto* attrs = engine.module_attributes(engine.sys_modules().get(n))) {
      for (const HookFinders::Attribute& a : *attrs) {
        std::string& mark = out.marks[name];
        mark += (mark.empty() ? "" : "+") + a.name;
        if (a.times > 1) mark += "*" + std::to_string(a.times);
      }
      if (!attrs->empty()) out.marked_by[name] = origin(m.marked_by);
    }
  }
  if (engine.hooks_used())
    for (FinderId f : engine.meta_path().list())
      out.meta_path.push_back(engine.finder_objects()[static_cast<size_t>(f)].id);
  const auto& labels = model.labels;
  for (size_t i = 0; i < labels.size(); ++i) out.results.emplace_back(labels[i], engine.labels()[i].results);
  out.proxy_copies = engine.copies();
  out.copies_changed_by = origin(engine.copies_changed_by());
  out.error = engine.error();
  out.threads = engine.thread_ends();
  out.hang = engine.hang_waits();
  out.hang_at = engine.hang_at();
  return out;
}

namespace {

std::string list_text(const std::vector<std::string>& v) {
  std::string s;
  for (auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return "[" + s + "]";
}

std::string lookup(const std::map<std::string, std::string>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? std::string("?") : it->second;
}

}  // namespace

std::vector<std::string> describe_differences(const Outcome& a, const Outcome& b, const std::string& an,
                                              const std::string& bn, size_t max) {
  std::vector<std::string> out;
  auto add = [&](std::string s) {
    if (out.size() < max) out.push_back(std::move(s));
  };
  // Look-ups, not a scan of the other list per module (100,000 modules each).
  const std::unordered_set<std::string_view> in_a(a.modules.begin(), a.modules.end());
  const std::unordered_set<std::string_view> in_b(b.modules.begin(), b.modules.end());
  for (auto& m : a.modules)
    if (!in_b.count(m))
      add(fmt::format("{} is in sys.modules only in {} (imported by {})", m, an, lookup(a.created_by, m)));
  for (auto& m : b.modules)
    if (!in_a.count(m))
      add(fmt::format("{} is in sys.modules only in {} (imported by {})", m, bn, lookup(b.created_by, m)));
  if (out.empty() && a.modules != b.modules)
    add(fmt::format("sys.modules holds the same names in another order: {} {} vs {} {}", an, list_text(a.modules), bn,
                    list_text(b.modules)));
  std::map<std::string, std::pair<std::string, std::string>> marks;
  for (auto& [k, v] : a.marks) marks[k].first = v;
  for (auto& [k, v] : b.marks) marks[k].second = v;
  for (auto& [k, v] : marks) {
    if (v.first == v.second) continue;
    std::string where = !v.second.empty() ? fmt::format("{} marks it during {}", bn, lookup(b.marked_by, k))
                                          : fmt::format("{} marks it during {}", an, lookup(a.marked_by, k));
    add(fmt::format("{} is marked {} in {} and {} in {}; {}", k, v.first.empty() ? "nothing" : v.first, an,
                    v.second.empty() ? "nothing" : v.second, bn, where));
  }
  for (size_t i = 0; i < a.results.size() && i < b.results.size(); ++i)
    if (a.results[i] != b.results[i])
      add(fmt::format("labelled step {} gives {} in {} and {} in {}", a.results[i].first,
                      results_text(a.results[i].second), an, results_text(b.results[i].second), bn));
  if (a.proxy_copies != b.proxy_copies)
    add(
        fmt::format("{} {} of the finder {} left in sys.meta_path in {} (last changed by {}) and {} in {} (last "
                    "changed by {})",
                    a.proxy_copies, plural(a.proxy_copies, "copy", "copies"), plural(a.proxy_copies, "is", "are"), an,
                    a.copies_changed_by, b.proxy_copies, bn, b.copies_changed_by));
  auto err = [](const std::optional<PyError>& e) {
    if (!e) return std::string("no error");
    return fmt::format("{}: {} at {}", e->type, e->message, e->traceback.empty() ? "?" : e->traceback.back());
  };
  if (a.meta_path != b.meta_path)
    add(fmt::format("sys.meta_path ends as {} in {} and {} in {}", list_text(a.meta_path), an, list_text(b.meta_path),
                    bn));
  // Without threads the list is main's hang alone, which the next line says.
  if (a.threads != b.threads && (a.threads.size() > 1 || b.threads.size() > 1))
    add(fmt::format("the threads end as {} in {} and {} in {}", list_text(thread_end_texts(a.threads)), an, list_text(thread_end_texts(b.threads)), bn));
  auto hang = [](const std::vector<HangWait>& waits) {
    return waits.empty() ? std::string("does not hang") : fmt::format("hangs ({})", hang_waits_text(waits));
  };
  if (a.hang != b.hang) add(fmt::format("the program {} in {} and {} in {}", hang(a.hang), an, hang(b.hang), bn));
  if (err(a.error) != err(b.error))
    add(fmt::format("the program ends with {} in {} and {} in {}", err(a.error), an, err(b.error), bn));
  return out;
}

bool ScenarioRun::verdicts_ok() const {
  for (auto& r : runs)
    if (r.verdict_expected && *r.verdict_expected != r.verdict) return false;
  return true;
}

bool ScenarioRun::expectations_ok() const {
  for (auto& r : runs)
    for (auto& e : r.expectations)
      if (!e.ok) return false;
  return !equivalence_failure && verdicts_ok();
}

bool ScenarioRun::raised_unexpectedly() const {
  if (scenario.allow_error) return false;
  // A hang is an end no process comes back from: the program never ends.
  return std::any_of(runs.begin(), runs.end(),
                     [](const VariantRun& r) { return r.outcome.error.has_value() || !r.outcome.hang.empty(); });
}

bool ScenarioRun::all_compared() const {
  return std::all_of(compared_at.begin(), compared_at.end(), [](bool b) { return b; });
}

bool ScenarioRun::limit_reached() const {
  return std::any_of(runs.begin(), runs.end(), [](const VariantRun& r) { return r.limit.has_value(); });
}

int ScenarioRun::exit_status() const {
  if (limit_reached()) return kExitLimit;
  if (!expectations_ok() || raised_unexpectedly()) return kExitFailed;
  return kExitOk;
}

namespace {

// The step engine stopped at its default --max-events: would the fast
// engine (whose default bounds the work done, not the events simulated)
// finish the run? It is given the same work, so asking costs at most what
// the step run did.
std::string fast_engine_hint(const Model& model, Variant variant, const EngineLimits& limits) {
  if (model.hooks.used) return "";  // the fast engine does not run hook scenarios
  EngineLimits fast = limits;       // max_events unset: no bound under --engine fast
  Engine engine(model, variant, fast, EngineKind::Fast);
  engine.run();
  if (engine.limit()) return "";
  return fmt::format("; --engine fast finishes this run ({} simulated events)", grouped(engine.events()));
}

// Ratio budgets of the runs from `first` on (one point): each against its
// ratio_to variant's same counter at the same point. One whose variant did
// not run (--variant) cannot be checked: it is dropped here and listed by
// unchecked_expectations, as the expectations of a variant that does not
// run are.
void check_ratio_budgets(std::vector<VariantRun>& runs, size_t first) {
  for (size_t i = first; i < runs.size(); ++i) {
    auto& ex = runs[i].expectations;
    for (auto it = ex.begin(); it != ex.end();) {
      if (!it->budget || !it->budget->ratio_to) {
        ++it;
        continue;
      }
      auto base = std::find_if(runs.begin() + static_cast<ptrdiff_t>(first), runs.end(),
                               [&](const VariantRun& r) { return r.variant == *it->budget->ratio_to; });
      if (base == runs.end()) {
        it = ex.erase(it);
        continue;
      }
      // A stopped baseline's count is partial: its ratio says nothing.
      if (base->limit) {
        it = ex.erase(it);
        continue;
      }
      it->baseline = counter_of(*base, it->counter);
      it->ok = budget_holds(*it->budget, it->actual, it->baseline);
      ++it;
    }
  }
}

// The scenario's expectations that `run` (of `plan`) did not check, each
// with why; an entry's null for a sweep value is the scenario's own choice
// and is not listed.
std::vector<UncheckedExpectation> unchecked_expectations(const Scenario& sc, const RunPlan& plan,
                                                         const ScenarioRun& run) {
  std::vector<UncheckedExpectation> out;
  auto variant_index = [&](const Variant& variant) -> std::optional<size_t> {
    auto at = std::find(plan.variants.begin(), plan.variants.end(), variant);
    if (at == plan.variants.end()) return std::nullopt;
    return static_cast<size_t>(at - plan.variants.begin());
  };
  for (const Expectation& e : sc.expect) {
    const bool any = std::any_of(e.values.begin(), e.values.end(), [](auto& v) { return v.has_value(); }) ||
                     std::any_of(e.budgets.begin(), e.budgets.end(), [](auto& b) { return b.has_value(); });
    if (!any) continue;
    const std::optional<size_t> vi = variant_index(e.variant);
    if (!vi) {
      out.push_back({"count", e.variant, e.counter, std::nullopt, e.pointer, "", UncheckedWhy::NotRun, e.variant});
      continue;
    }
    for (size_t p = 0; p < plan.points(); ++p) {
      const VariantRun& r = run.runs[plan.index(p, *vi)];
      if (!plan.expect_at[p]) {
        out.push_back({"count", e.variant, e.counter, r.params, e.pointer, plan.unchecked_why[p]});
        continue;
      }
      const size_t idx = e.values.size() == 1 ? 0 : *plan.expect_at[p];
      const Budget* budget = e.budget_at(idx);
      if (!budget && (idx >= e.values.size() || !e.values[idx])) continue;
      const std::string ptr = e.listed ? e.pointer + "/" + std::to_string(idx) : e.pointer;
      UncheckedExpectation u{"count", e.variant, e.counter, r.params, ptr, "", UncheckedWhy::Stated, std::nullopt};
      if (r.limit) {
        u.reason = "the run stopped at a limit (its counts are partial)";
      } else if (budget && budget->ratio_to) {
        const std::optional<size_t> base = variant_index(*budget->ratio_to);
        if (!base || run.runs[plan.index(p, *base)].limit) {
          u.why = !base ? UncheckedWhy::RatioNotRun : UncheckedWhy::RatioStopped;
          u.about = budget->ratio_to;
        }
      }
      if (!u.reason.empty() || u.about) out.push_back(std::move(u));
    }
  }
  for (const Scenario::OutcomeExpectation& e : sc.expect_outcome) {
    const std::optional<size_t> vi = variant_index(e.variant);
    // The reader refuses a scenario without variants, but one built in code may have none.
    if (!vi || sc.variants.empty() || plan.variants.front() != sc.variants.front()) {
      const std::optional<Variant> first =
          sc.variants.empty() ? std::nullopt : std::optional<Variant>(sc.variants.front());
      out.push_back({"outcome", e.variant, "", std::nullopt, e.pointer, "",
                     !vi ? UncheckedWhy::NotRun : UncheckedWhy::NotFirst, !vi ? e.variant : first});
      continue;
    }
    for (size_t p = 0; p < plan.points(); ++p) {
      const VariantRun& r = run.runs[plan.index(p, *vi)];
      if (!plan.expect_at[p])
        out.push_back({"outcome", e.variant, "", r.params, e.pointer, plan.unchecked_why[p]});
      else if (!run.compared_at[p])
        out.push_back({"outcome", e.variant, "", r.params, e.pointer,
                       "a run stopped at a limit, so the outcomes are not compared"});
    }
  }
  if (sc.expect_equivalent) {
    if (plan.variants.size() < 2)
      out.push_back({"equivalent", std::nullopt, "", std::nullopt, "/expect_equivalent", "only one variant runs"});
    else if (run.equivalent && !run.all_compared())
      out.push_back({"equivalent", std::nullopt, "", std::nullopt, "/expect_equivalent",
                     "a run stopped at a limit, so the outcomes are not all compared"});
  }
  return out;
}

// A run that never started: its point's model was past a limit.
VariantRun stopped_before_start(const RunPlan& plan, size_t point, Variant variant, const ModelLimitError& e) {
  VariantRun r;
  r.variant = variant;
  r.params = plan.params[point];
  for (auto& [k, v] : plan.scenario->params)
    if (!r.params.count(k)) r.params[k] = v;
  r.sweep_index = point;
  r.expect_index = plan.expect_at[point];
  for (const std::string& label : plan.scenario->labels) r.labels.emplace_back(label, Counters{});
  r.limit = LimitReached{e.limit, e.detail, {e.pointer}};
  return r;
}

}  // namespace

RunPlan plan_runs(const Scenario& sc, const RunOptions& options, SweepMode mode) {
  RunPlan plan;
  plan.scenario = &sc;
  // The fast engine's memo keys hold the proxy's state, not a list of finder
  // objects: it would answer hook asks from a state that is gone.
  if (sc.hooks.used && options.engine == EngineKind::Fast)
    throw UsageError(sc.file,
                     "--engine fast does not model finder objects (this scenario declares hooks, finders, meta_path "
                     "or meta_path steps); run it with the step engine (the default)");
  const CPython cpython = options.cpython.value_or(sc.cpython.value_or(CPython::V3_11));
  if (sc.lazy && cpython != CPython::V3_15)
    throw UsageError(sc.file, fmt::format("the scenario has lazy imports (PEP 810), in its lazy steps or in a hook's "
                                          "\"use\" of the globals they bind, which CPython {} does not have: "
                                          "`lazy import` is new in 3.15; run it with --cpython 3.15 (or set "
                                          "\"cpython\": \"3.15\")",
                                          cpython_name(cpython)));
  if (sc.lazy && options.engine == EngineKind::Fast)
    throw UsageError(sc.file,
                     "--engine fast does not model lazy imports (PEP 810); run it with the step engine (the default)");
  if (!sc.threads.empty() && !threads_modelled(cpython))
    throw UsageError(sc.file, fmt::format("the scenario declares threads, which impsim does not model on CPython {}: "
                                          "its _find_and_load takes the module locks of a dotted name's parents "
                                          "in order (_HierarchicalLockManager); run it with --cpython 3.14.4 or "
                                          "earlier",
                                          cpython_name(cpython)));
  for (auto& [k, v] : options.overrides)
    if (!sc.params.count(k)) {
      std::string known;
      for (auto& p : sc.param_order) known += (known.empty() ? "" : ", ") + p;
      throw UsageError(sc.file, fmt::format("--set {}: the scenario has no parameter \"{}\"{}; {}", k, k,
                                            did_you_mean_note(k, sc.param_order),
                                            known.empty() ? "it has none" : "it has: " + known));
    }
  // The scenario's variants were checked as it was read; --variant is text
  // from the command line, checked here against this scenario.
  if (options.variants.empty()) plan.variants = sc.variants;
  for (const std::string& v : options.variants) {
    auto parsed = parse_variant(v);
    if (!parsed)
      throw UsageError(sc.file,
                       fmt::format("--variant {}: unknown variant{}; expected one of: {}{}", v, nearest_variant_note(v),
                                   variant_list(), sc.hooks.used ? "; or a hook design: " + hook_variant_list() : ""));
    if (std::optional<std::string> why = hook_variant_problem(sc, *parsed))
      throw UsageError(sc.file, fmt::format("--variant {}: {}", v, *why));
    if (std::find(plan.variants.begin(), plan.variants.end(), *parsed) != plan.variants.end())
      throw UsageError(sc.file, fmt::format("--variant {} is given twice", v));
    plan.variants.push_back(*parsed);
  }
  const Sweep* sweep = mode == SweepMode::Follow && sc.sweep ? &*sc.sweep : nullptr;
  // A --set of the swept parameter runs that one value instead of the sweep.
  if (sweep && !options.overrides.count(sweep->param)) {
    plan.sweep_values = sweep->values;
    for (size_t i = 0; i < sweep->values.size(); ++i) {
      plan.params.push_back(options.overrides);
      plan.params.back()[sweep->param] = sweep->values[i];
    }
  } else {
    plan.params.push_back(options.overrides);
  }
  // The expectations are written for the sweep's values: a run at another
  // value (--set k=9) checks none of them, and the report says so.
  for (const Params& p : plan.params) {
    if (!sweep) {
      plan.expect_at.push_back(0);
      plan.unchecked_why.emplace_back();
      continue;
    }
    auto it = std::find(sweep->values.begin(), sweep->values.end(), p.at(sweep->param));
    if (it == sweep->values.end()) {
      plan.expect_at.push_back(std::nullopt);
      plan.unchecked_why.push_back(fmt::format("written for {}={}", sweep->param, sweep_values_text(sweep->values)));
    } else {
      plan.expect_at.push_back(static_cast<size_t>(it - sweep->values.begin()));
      plan.unchecked_why.emplace_back();
    }
  }
  return plan;
}

VariantRun run_one(const RunPlan& plan, const Model& model, size_t point, Variant variant, const RunOptions& options,
                   TraceSink* trace, const std::function<void(const Engine&)>& finished) {
  const Scenario& sc = *plan.scenario;
  Engine engine(model, variant, options.limits, options.engine);
  engine.set_trace(trace);
  engine.set_schedule(options.schedule);
  auto t0 = std::chrono::steady_clock::now();
  double cpu0 = process_cpu_seconds();
  engine.run();
  double cpu1 = process_cpu_seconds();
  auto t1 = std::chrono::steady_clock::now();
  engine.set_trace(nullptr);
  if (engine.bad_schedule())
    throw UsageError(sc.file, fmt::format("--schedule {}: {}", options.schedule, *engine.bad_schedule()));
  if (finished) finished(engine);
  VariantRun r;
  r.variant = variant;
  r.params = model.params;
  r.sweep_index = point;
  r.expect_index = plan.expect_at[point];
  r.counters = engine.counters();
  for (size_t i = 0; i < model.labels.size(); ++i) r.labels.emplace_back(model.labels[i], engine.labels()[i].counters);
  if (engine.hooks_used()) {
    r.hooks_used = true;
    r.hooks = engine.hook_counters();
    for (size_t i = 0; i < model.labels.size(); ++i) {
      const LabelTotals& t = engine.labels()[i];
      r.label_hooks.emplace_back(model.labels[i], t.hooks);
      r.label_meta_path.push_back(t.meta_path);
    }
    // The interpreter's three are counted per object too; P is not (its asks are).
    std::vector<std::string> ids;
    for (const FinderObject& f : engine.finder_objects()) ids.push_back(f.cls == FinderClass::Proxy ? "" : f.id);
    r.finders = std::make_shared<const FinderNames>(std::move(ids));
  }
  r.outcome = outcome_of(engine);
  if (engine.lazy().used) {
    const LazyImports& l = engine.lazy();
    LazySummary s{l.statements, l.resolutions, l.filter_calls, {}};
    for (NameId n : l.lazy_modules) s.lazy_modules.push_back(model.names.text(n));
    std::sort(s.lazy_modules.begin(), s.lazy_modules.end());
    r.lazy = std::move(s);
  }
  r.limit = engine.limit();
  r.events = engine.events();
  r.memo_hits = engine.memo_hits();
  r.peak_modules = engine.walk_peak();
  r.seconds = std::chrono::duration<double>(t1 - t0).count();
  r.cpu_seconds = cpu1 - cpu0;
  // A stopped run's counts are partial: checking them says nothing.
  if (r.expect_index && !r.limit) {
    for (const Expectation& e : sc.expect) {
      if (e.variant != variant) continue;
      size_t idx = e.values.size() == 1 ? 0 : *r.expect_index;
      std::string ptr = e.listed ? e.pointer + "/" + std::to_string(idx) : e.pointer;
      Count actual = counter_of(r, e.counter);
      if (const Budget* b = e.budget_at(idx)) {
        // A ratio is checked once every variant at this point has run
        // (check_ratio_budgets); until then it holds.
        r.expectations.push_back({e.counter, 0, actual,
                                  !b->ratio_to ? budget_holds(*b, actual, std::nullopt) : true, *b, std::nullopt,
                                  ptr});
        continue;
      }
      if (!e.values[idx]) continue;
      r.expectations.push_back(
          {e.counter, *e.values[idx], actual, actual == *e.values[idx], std::nullopt, std::nullopt, ptr});
    }
  }
  return r;
}

ScenarioFacts ScenarioFacts::of(const Scenario& sc) {
  return {sc.name, sc.description, sc.file,        sc.labels, sc.sweep, report_rows(sc),
          {},      sc.expect,      sc.allow_error, sc.source};
}

ScenarioRun run_scenario(const Scenario& sc, const RunOptions& options) {
  RunPlan plan = plan_runs(sc, options);
  ScenarioRun out;
  out.scenario = ScenarioFacts::of(sc);
  out.sweep_values = plan.sweep_values;
  out.variants = plan.variants;
  // The engine's stack is made on first use: make it here, so its mapping
  // is not timed as part of the first run.
  run_on_engine_stack(stack_budget(options.limits), [] {});
  for (size_t si = 0; si < plan.points(); ++si) {
    if (options.progress && !plan.sweep_values.empty())
      options.progress(si, plan.sweep_values.size(), plan.sweep_values[si]);
    std::optional<Model> compiled;
    try {
      compiled.emplace(compile_model(sc, plan.params[si], options.model_limits));
    } catch (const ModelLimitError& e) {
      // In a sweep, a value past a model limit (--max-nest, --max-repeat,
      // ...) stops that value's runs, as --max-events does, not the table.
      if (plan.sweep_values.size() < 2) throw;
      for (Variant variant : plan.variants) {
        out.runs.push_back(stopped_before_start(plan, si, variant, e));
        if (variant != plan.variants.front()) out.runs.back().verdict = "not compared";
      }
      out.equivalent_at.push_back(true);
      out.compared_at.push_back(false);
      continue;
    }
    Model& model = *compiled;
    apply_axes(model, options);
    out.axes = model.axes;
    for (Variant variant : plan.variants) {
      VariantRun r = run_one(plan, model, si, variant, options);
      if (r.limit && r.limit->limit == "max-events" && options.engine == EngineKind::Step && !options.limits.max_events)
        r.limit->detail += fast_engine_hint(model, variant, options.limits);
      // The objects of the run before, most often: one copy of their ids.
      if (r.finders && !out.runs.empty() && out.runs.back().finders &&
          out.runs.back().finders->ids == r.finders->ids)
        r.finders = out.runs.back().finders;
      out.runs.push_back(std::move(r));
    }
    const size_t first = plan.index(si, 0);
    check_ratio_budgets(out.runs, first);
    bool eq = true;
    bool compared = std::none_of(out.runs.begin() + static_cast<ptrdiff_t>(first), out.runs.end(),
                                 [](const VariantRun& r) { return r.limit.has_value(); });
    for (size_t i = first + 1; i < out.runs.size(); ++i) {
      VariantRun& r = out.runs[i];
      // A run stopped by a limit ends mid-program (guards never exited):
      // its outcome is not behaviour, so nothing is compared against it.
      if (!compared) {
        r.verdict = "not compared";
        continue;
      }
      bool same = r.outcome == out.runs[first].outcome;
      eq = eq && same;
      r.verdict = same ? "identical" : "differs";
      if (!r.expect_index || sc.variants.empty() || out.runs[first].variant != sc.variants.front()) continue;
      for (auto& e : sc.expect_outcome)
        if (e.variant == r.variant)
          r.verdict_expected = e.verdicts[e.verdicts.size() == 1 ? 0 : *r.expect_index];
    }
    out.equivalent_at.push_back(eq);
    out.compared_at.push_back(compared);
    out.equivalent = out.equivalent && eq;
  }
  out.equivalence_failure = equivalence_failure(sc, out);
  out.unchecked = unchecked_expectations(sc, plan, out);
  return out;
}

std::optional<std::string> equivalence_failure(const Scenario& sc, const ScenarioRun& run) {
  if (!sc.expect_equivalent || run.variants.size() < 2 || *sc.expect_equivalent == run.equivalent) return std::nullopt;
  if (run.equivalent && !run.all_compared()) return std::nullopt;  // unknown: a limit stopped a run
  return fmt::format("the scenario expects the variants to end {}, but they end {}",
                     *sc.expect_equivalent ? "identical" : "different", run.equivalent ? "identical" : "different");
}

}  // namespace impsim
