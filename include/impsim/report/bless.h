// `impsim run FILE --bless`: writes the counts a run measured into the
// scenario's `expect`, like pytest-regressions' regenerate flag. Only the
// numbers change: every exact value is replaced where it stands (the file's
// layout, key order and other values are kept), budgets and nulls are left
// alone (a budget is a decision, not a measurement), and a scenario without
// `expect` gets one for its report rows (or lookups), in every variant.
#pragma once

#include <string>

#include "impsim/run/run.h"

namespace impsim {

struct Blessed {
  std::string text;    // the new file
  size_t changed = 0;  // values that differ from the file's
  size_t added = 0;    // values in a new `expect`
};

// `source` is the file `run` was loaded from, run at its own parameters,
// variants and axes (no --set, --variant, --revision or --cpython). Throws
// UsageError when the run cannot be trusted: it raised (and the scenario does
// not allow it) or a limit stopped it.
Blessed bless(const std::string& source, const ScenarioRun& run);

// Why `run`'s counts must not be blessed, or nullopt.
std::optional<std::string> bless_refusal(const ScenarioRun& run);

}  // namespace impsim
