// Runs a scenario: every sweep value times every variant, each on a fresh
// engine, then checks the expectations and compares outcomes across
// variants. What the report printers read.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impsim/engine/engine.h"
#include "impsim/model/model.h"
#include "impsim/scenario/counters.h"
#include "impsim/scenario/scenario.h"

namespace impsim {

struct RunOptions {
  Params overrides;                   // --set NAME=N
  std::vector<std::string> variants;  // --variant; empty: the scenario's
  EngineLimits limits;
  ModelLimits model_limits;
  EngineKind engine = EngineKind::Step;
  std::optional<Revision> revision;  // --revision; unset: the scenario's, else b52ce17
  std::optional<CPython> cpython;    // --cpython; unset: the scenario's, else 3.11
  std::string schedule;              // --schedule: a threaded scenario's schedule; empty: the default
  // Called before each sweep value compiles (index, count, value), so a
  // long sweep can show progress.
  std::function<void(size_t, size_t, int64_t)> progress;
};

// The command line's axes over the scenario's (compile_model took those).
inline void apply_axes(Model& model, const RunOptions& o) {
  if (o.revision) model.axes.revision = *o.revision;
  if (o.cpython) model.axes.cpython = *o.cpython;
}

// A reason about a variant holds the variant, and the report words it.
enum class UncheckedWhy {
  Stated,        // `reason` says it: "written for k=1..4", a run stopped at a limit
  NotRun,        // `about` is not among the variants run
  RatioNotRun,   // a ratio to `about`, which is not among the variants run
  RatioStopped,  // a ratio to `about`, whose run stopped at a limit
  NotFirst,      // a verdict against `about`, which is not the first variant run
};

// An expectation of the scenario that a run did not check, and why: a
// --set of the swept parameter off the sweep's values, a variant (or a
// ratio's variant) that does not run, a run a limit stopped. The reports list
// them, so that an expectation is never skipped in silence.
struct UncheckedExpectation {
  std::string kind;                // "count" (expect), "outcome" (expect_outcome), "equivalent" (expect_equivalent)
  std::optional<Variant> variant;  // unset for "equivalent"
  std::string counter;             // "count" only
  std::optional<Params> params;    // where it was not checked; nullopt: anywhere (the variant does not run)
  std::string pointer;             // its entry in the scenario file
  std::string reason;              // UncheckedWhy::Stated's: "written for k=1..4"
  UncheckedWhy why = UncheckedWhy::Stated;
  std::optional<Variant> about = std::nullopt;  // the variant the reason names (unset: Stated, or no variant is first)
};

struct ExpectationResult {
  std::string counter;
  Count expected = 0;  // an exact expectation's value
  Count actual = 0;
  bool ok = false;
  std::optional<Budget> budget;   // a budget instead of `expected`
  std::optional<Count> baseline;  // a ratio budget: its ratio_to variant's count
  std::string pointer;            // the entry in the scenario file ("/expect/after/lookups/2")
};

// What a run left behind (docs/scenario-format.md, "Outcome").
struct Outcome {
  std::vector<std::string> modules;                      // sys.modules, filler left out, in order
  std::map<std::string, std::string> marks;              // name -> enabled | disabled | enabled+disabled
  std::vector<std::pair<std::string, Results>> results;  // by label, in label order
  int64_t proxy_copies = 0;
  std::optional<PyError> error;
  // Hook scenarios: the final sys.meta_path, by finder id (empty otherwise).
  std::vector<std::string> meta_path;
  // Threaded scenarios: how each thread ended (returned, raised, waiting in
  // a hang, never started), and a hang's waits (empty otherwise).
  std::vector<ThreadEnd> threads;
  std::vector<HangWait> hang;
  std::string hang_at;  // the step pointer it hung at, for a failure's line (not compared)

  // Provenance (not compared): which step created each module, set its
  // mark, last changed the number of copies ("before the program" if none).
  std::map<std::string, std::string> created_by;
  std::map<std::string, std::string> marked_by;
  std::string copies_changed_by;

  bool operator==(const Outcome& o) const;
};

// A run's finder objects by id: every hook run of a comparison (ten
// designs) has the same ones unless `new` steps made others, and each kept
// its own copy of every id, twice (a 7.5 MB id was 150 MB of compare's
// memory). run_scenario shares one between runs whose ids are equal.
struct FinderNames {
  std::vector<std::string> ids;  // by FinderId; P's empty
  // ids inverted (views into ids, which never change once built): `new`
  // steps can make a million objects, and the reports look every one up
  // by name.
  std::map<std::string_view, size_t, std::less<>> index;
  explicit FinderNames(std::vector<std::string> by_object);
};

// A lazy scenario's (PEP 810) counts and sys.lazy_modules as the run ended.
struct LazySummary {
  uint64_t statements = 0;   // statements that bound a lazy object
  uint64_t resolutions = 0;  // reads that resolved one, each attempt
  uint64_t filter_calls = 0;
  std::vector<std::string> lazy_modules;  // the scenario's entries, sorted
  bool operator==(const LazySummary&) const = default;
};

struct VariantRun {
  Variant variant = Variant::Before;
  Params params;
  size_t sweep_index = 0;              // which sweep value (0 without a sweep)
  std::optional<size_t> expect_index;  // where its expectations sit, if anywhere
  Counters counters;
  std::vector<std::pair<std::string, Counters>> labels;
  // Hook scenarios (hooks_used): their counters, in total and per label,
  // and the ids of the hook finder objects by FinderId (others empty).
  bool hooks_used = false;
  HookCounters hooks;
  std::vector<std::pair<std::string, HookCounters>> label_hooks;
  // Each label's sys.meta_path (finder objects, finder_id() names them) as
  // its step last ended; unset where it never ended (it never ran, or a
  // hang or a limit stopped it). Kept as objects, not their ids' text: a
  // copy of every id for every label was labels x the ids' length (1,000
  // labels and a 100 KB id took 1 GB in compare).
  std::vector<std::optional<std::vector<FinderId>>> label_meta_path;
  // The ids of the finder objects by FinderId (P's empty), and inverted;
  // runs with the same objects share them (see FinderNames).
  std::shared_ptr<const FinderNames> finders;
  const std::vector<std::string>& finder_ids() const;
  std::string_view finder_id(FinderId f) const {
    if (f == kProxyFinder) return kPredefinedFinders[kProxyFinder];
    return finder_ids()[static_cast<size_t>(f)];
  }
  Outcome outcome;
  std::optional<LazySummary> lazy;  // a lazy scenario's
  std::vector<ExpectationResult> expectations;
  // expect_outcome: "identical"/"differs" against the first variant.
  std::optional<std::string> verdict_expected;
  // "identical", "differs", or "not compared" when this run or the first
  // variant's was stopped by a limit (empty for the first variant).
  std::string verdict;
  std::optional<LimitReached> limit;
  Count events = 0;
  uint64_t memo_hits = 0;     // fast engine: asks answered from memory
  uint64_t peak_modules = 0;  // largest len(sys.modules) a walk saw
  double seconds = 0;         // engine time (wall)
  double cpu_seconds = 0;     // CPU time of the process during the run
};

// What the reports say of the scenario a run came from, copied into the
// run so that no report points into a Scenario (a sweep runs a modified
// copy that is gone once the sweep returns).
struct ScenarioFacts {
  std::string name;
  std::string description;
  std::string file;
  std::vector<std::string> labels;
  std::optional<Sweep> sweep;         // as run: sweep --param replaces the file's
  std::vector<ReportRow> rows;        // report_rows(): the table's, the chart's and --bless's
  std::vector<std::string> counters;  // --counters: the table's rows, in order (empty: `rows`, or every counter)
  std::vector<Expectation> expect;    // as run: a sweep re-aligns them to its values
  bool allow_error = false;
  std::shared_ptr<const std::string> source;  // the file's text (Scenario::source), when it was read from one

  static ScenarioFacts of(const Scenario& sc);
};

struct ScenarioRun {
  ScenarioFacts scenario;
  std::vector<int64_t> sweep_values;  // empty without a sweep
  std::vector<Variant> variants;
  Axes axes;                        // the run's revision and CPython (a variant may name its own revision)
  std::vector<VariantRun> runs;     // sweep values outer, variants inner: use at()
  std::vector<bool> equivalent_at;  // per sweep value (true when not compared)
  // Per sweep value: false when a variant was stopped by a limit, so its
  // outcome (guards never exited, say) says nothing and is not compared.
  std::vector<bool> compared_at;
  bool equivalent = true;  // no compared sweep value differs
  // The counters the reports show (CounterGroup): the core ones, plus
  // those of any finder kind the scenario uses.
  unsigned counter_groups = kCoreCounters;
  bool all_compared() const;
  // Points run: the sweep values, or 1 without a sweep.
  size_t points() const { return variants.empty() ? 0 : runs.size() / variants.size(); }
  const VariantRun& at(size_t point, size_t variant) const { return runs[point * variants.size() + variant]; }
  std::vector<const CounterInfo*> shown_counters() const { return counters_of_groups(counter_groups); }
  std::optional<std::string> equivalence_failure;  // expect_equivalent not met
  std::vector<UncheckedExpectation> unchecked;     // the scenario's expectations this run did not check

  bool expectations_ok() const;
  bool verdicts_ok() const;
  bool raised_unexpectedly() const;
  bool limit_reached() const;
  int exit_status() const;  // 0, 1 or 3 (docs/scenario-format.md, "Exit status")
};

// What running a scenario means, decided before anything runs: every
// point (a sweep value, or the one run without a sweep) times every
// variant. run, sweep, trace and the fuzzer all run from a plan, so the
// flag checks and the sweep/expectation alignment exist once.
struct RunPlan {
  const Scenario* scenario = nullptr;
  std::vector<int64_t> sweep_values;  // empty without a sweep
  std::vector<Variant> variants;
  std::vector<Params> params;                    // per point: what compile_model gets
  std::vector<std::optional<size_t>> expect_at;  // per point: where its expectations sit
  // Per point: why its expectations are not checked there (the sweep
  // values they are written for), empty where expect_at is set.
  std::vector<std::string> unchecked_why;

  size_t points() const { return params.size(); }
  size_t runs() const { return points() * variants.size(); }
  // Where the run of (point, variant) sits in ScenarioRun::runs.
  size_t index(size_t point, size_t variant) const { return point * variants.size() + variant; }
};

// Whether a plan follows the scenario's sweep; trace runs the defaults.
enum class SweepMode { Follow, Ignore };

// Throws InputError (bad --set or --variant).
RunPlan plan_runs(const Scenario& sc, const RunOptions& options, SweepMode mode = SweepMode::Follow);

// Runs `variant` of the plan's `point` on `model` (compiled for that
// point) and checks its expectations. `trace`, when given, hears the run;
// `finished` sees the engine before it goes (a trace writer's last word).
VariantRun run_one(const RunPlan& plan, const Model& model, size_t point, Variant variant, const RunOptions& options,
                   TraceSink* trace = nullptr, const std::function<void(const Engine&)>& finished = {});

// Throws InputError (bad --set or --variant) or ModelLimitError.
ScenarioRun run_scenario(const Scenario& sc, const RunOptions& options);

// A counter of a run by name: a total ("lookups") or a labelled step's
// share ("probe.lookups"); 0 for a label the run does not have. Hook
// scenarios add searches, finder_calls, finder_calls:ID, and max_depth is
// the _find_spec nesting there (the proxy's lookup nesting: lookup_depth).
Count counter_of(const VariantRun& r, const std::string& counter);
// The same, by the label's index in r.labels (SIZE_MAX: the run's total),
// for a report that walks every label: no search of the labels per row.
Count counter_at(const VariantRun& r, size_t label, const std::string& counter);

// The counters a report lists for a run, in order: kCounters, or for a
// hook scenario the hook counters, one finder_calls:ID per hook object, then
// the proxy's counters that are not zero in every run.
std::vector<std::string> report_counter_names(const std::vector<VariantRun>& runs);

// expect_equivalent not met by `run`: the message, else nullopt.
std::optional<std::string> equivalence_failure(const Scenario& sc, const ScenarioRun& run);

// Outcome of one finished engine.
Outcome outcome_of(const Engine& engine);

// The differences between two outcomes, in words, at most `max`.
// Each names the step that produced it; `a_name`, `b_name` are the variants.
std::vector<std::string> describe_differences(const Outcome& a, const Outcome& b, const std::string& a_name,
                                              const std::string& b_name, size_t max = SIZE_MAX);

}  // namespace impsim
