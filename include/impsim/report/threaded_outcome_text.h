// A threaded run's outcome (engine/threaded_outcome.h) as the line the
// `schedules` and `compare` reports print: each thread's end, a limit, a
// hang and its waits, sys.modules, the marks and the copies of P, then the
// counters, e.g. "main: ok; w: _DeadlockError: deadlock detected by
// _ModuleLock('a'); sys.modules: a b; asks 0, lookups 0, toggles 0".
//
// The reports list a search's outcome classes in the order of these lines
// (what they have always done), so the order lives here with the text.
#pragma once

#include <string>
#include <vector>

#include "impsim/engine/schedule_search.h"
#include "impsim/engine/threaded_outcome.h"

namespace impsim {

// What the threads end with: the line without its counters.
std::string outcome_end_text(const OutcomeEnd& end);
// "asks 0, lookups 0, toggles 0" (", searches N" where hooks ran).
std::string outcome_counters_text(const OutcomeCounters& counters);
// The whole line: the end, "; ", the counters.
std::string threaded_outcome_text(const ThreadedOutcome& outcome);

// The indexes of `classes` in the order of their lines.
std::vector<size_t> classes_by_text(const std::vector<OutcomeClass>& classes);

}  // namespace impsim
