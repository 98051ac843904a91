// `impsim sweep`: a scenario run over the values of one parameter, whatever
// sweep the file declares, then printed as `impsim run`'s sweep table (or
// its JSON report) and, optionally, charted.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "impsim/run/run.h"
#include "impsim/scenario/scenario.h"

namespace impsim {

// "1..8", "1,2,5", "1..4,8,16": integers in the order written. Throws
// InputError for anything else or a descending range, InputLimitError
// ("max-sweep-values", exit 3) for more than `max_values` values.
std::vector<int64_t> parse_sweep_values(const std::string& text, size_t max_values = 10'000);

// The values as parse_sweep_values reads them, runs written as ranges:
// "1..4,8". Past 12 items, the first 10, "...", the last and how many
// values there are.
std::string sweep_values_text(const std::vector<int64_t>& values);

struct SweepOptions {
  std::string param;
  std::vector<int64_t> values;
  // Counters for the table and the chart ("lookups", "probe.lookups");
  // empty: the scenario's report rows (or `lookups` when it has none).
  std::vector<std::string> counters;
  RunOptions run;
  // Called before each value runs (index, count, value).
  std::function<void(size_t, size_t, int64_t)> progress;
};

struct SweepResult {
  // run.scenario is the scenario as swept: its sweep replaced by the one
  // asked for, its report rows by the counters asked for, its expectations
  // re-aligned to the new values (kept where a value of the old sweep, or
  // the parameter's default for a scenario without a sweep, is run again).
  ScenarioRun run;
};

// Counters named on the command line (sweep --counter, compare --counters):
// throws UsageError for one the scenario does not have, naming `flag`.
void check_counter_flags(const Scenario& sc, const std::vector<std::string>& counters, const std::string& flag);

// Throws InputError (unknown parameter or counter, --set of the swept
// parameter, bad --variant) or ModelLimitError.
SweepResult run_sweep(const Scenario& sc, const SweepOptions& options);


}  // namespace impsim
