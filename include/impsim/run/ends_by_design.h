// Designs compared over the whole explored space of a threaded scenario
// (`impsim compare` on a scenario with threads): each design's schedules
// searched exactly as `impsim schedules --variant DESIGN` searches them,
// and the designs' outcome classes grouped by what the threads end with,
// so that each end says which designs reach it, with how many schedules
// and a schedule that replays it, and which never do within the search.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "impsim/run/schedules.h"

namespace impsim {

// One design's share of an end: its outcome classes that end so (they
// differ in their counters only), their schedules summed, and the one
// whose representative schedule is preferred.
struct DesignReach {
  std::vector<size_t> outcomes;  // indexes into the design's search's outcomes
  uint64_t schedules = 0;
  size_t representative = 0;  // one of `outcomes`
};

// What the threads end with, across the designs.
struct ThreadedEnd {
  OutcomeEnd end;
  std::vector<std::optional<DesignReach>> designs;  // by design; nullopt: never, within its search
};

// The designs at one parameter point: each one's search, and the ends
// they reach.
struct EndsByDesign {
  Params params;
  Axes axes;                           // the model's revision and CPython
  std::vector<DesignSearch> searches;  // one per design, in the order asked
  std::vector<ThreadedEnd> ends;       // by OutcomeEnd's order (a report lists them by their text)
};

// `options.variants` are the designs, the first the baseline. Throws
// UsageError as search_scenario_schedules does.
std::vector<EndsByDesign> find_ends_by_design(const Scenario& sc, const RunOptions& options,
                                              const SearchOptions& search);

}  // namespace impsim
