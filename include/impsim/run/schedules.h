// A threaded scenario's schedules searched: for each parameter point and
// design, every outcome the scenario's threads can reach under CPython's
// import locks (engine/schedule_search.h runs the engine once per schedule).
#pragma once

#include <string>
#include <vector>

#include "impsim/engine/schedule_search.h"
#include "impsim/run/run.h"

namespace impsim {

struct ThreadSearch {
  Variant variant;
  Params params;
  ScheduleSearch search;
};

// Throws UsageError for a scenario without threads, as plan_runs does for
// a bad --set or --variant.
std::vector<ThreadSearch> search_scenario_schedules(const Scenario& sc, const RunOptions& options,
                                                    const SearchOptions& search);

// One run of the engine under `scheduler`: what each thread ended with, a
// hang and its waits, sys.modules, and the counters (a schedule search's
// outcome line).
std::string threaded_outcome(const Model& model, Variant variant, const RunOptions& options, Scheduler& scheduler);

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
