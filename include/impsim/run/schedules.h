// A threaded scenario's schedules searched: for each parameter point and
// design, every outcome the scenario's threads can reach under CPython's
// import locks (engine/schedule_search.h runs the engine once per schedule).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "impsim/engine/schedule_search.h"
#include "impsim/run/run.h"

namespace impsim {

// The search of one design's schedules at one parameter point.
struct DesignSearch {
  Variant variant;
  Params params;
  ScheduleSearch search;
  // The model the search ran on, shared by the designs at one point: what
  // reads a found schedule again (--points) or the point's axes uses it
  // instead of compiling the scenario a second time. Null in a search
  // merged from shards, which ran elsewhere.
  std::shared_ptr<const Model> model;
};

// Throws UsageError for a scenario without threads, as plan_runs does for
// a bad --set or --variant.
std::vector<DesignSearch> search_scenario_schedules(const Scenario& sc, const RunOptions& options,
                                                    const SearchOptions& search);

// One run of the engine under `scheduler`: what each thread ended with, a
// hang and its waits, sys.modules, the marks, and the counters (a schedule
// search's outcome).
ThreadedOutcome threaded_outcome(const Model& model, Variant variant, const RunOptions& options, Scheduler& scheduler);

// "exhaustive", "random", "pct": the --search value.
const char* search_kind_name(SearchKind kind);

// What a search covered ("exhaustive within 2 preemptions: 554 schedules,
// every one within the bound"), said beside every "not found" and "never":
// they hold only within it.
std::string search_coverage(const ScheduleSearch& search);
// Its two halves: how the search chose schedules ("exhaustive within 2
// preemptions", the same for every design compare searches), and how far
// it went ("554 schedules, every one within the bound").
std::string search_how(const SearchOptions& options);
std::string search_extent(const ScheduleSearch& search);

// A --schedule for `sc`'s runs under `options` (each variant at the
// parameters a trace or an explorer page runs), checked in full before any
// of them is shown: every choice must be one the run can follow, and the
// run must make exactly as many choices as the schedule has (`impsim
// schedules` prints whole ones). nullopt, or what is wrong: the choice's
// number and what the run could do there.
std::optional<std::string> schedule_problem(const Scenario& sc, const RunOptions& options);

// One point of a schedule written out, by name (what
// tools/lib/crosscheck/threads_real.py forces on real threads).
struct PointText {
  std::string thread;
  std::string point;    // "step", "global_acquire", ... (engine.h's PointKind)
  std::string site;     // global_acquire/release: find_spec, module_lock, lock_gc
  std::string module;   // module_acquire/release, exec_begin/end
  std::string target;   // start, join: the thread
  std::string pointer;  // step
};

// The points the threads pass, in order, when `schedule` is replayed.
std::vector<PointText> schedule_points(const Model& model, Variant variant, const RunOptions& options,
                                       const std::string& schedule);

}  // namespace impsim
