// The bare replay floor: what stepping nested_guards and the seed incident
// costs when nothing is general. A hand-written replay of that one program
// shape (k nested scoped guards, `import pkg`, one probe for pkg.missing)
// under Paddle's finder at b52ce17 on CPython 3.11, for the designs before
// and after. It makes every ask, lookup and toggle the step engine makes,
// one by one, with no memo and no closed form, and counts the same
// counters; impsim_bench runs it beside the engine, checks the counters
// equal and prints the ratio. It is a yardstick for the engine's overheads,
// not a second engine: nothing else runs it.
#pragma once

#include <cstdint>

namespace impsim::floor {

struct Counters {
  uint64_t asks = 0, suppressed = 0, lookups = 0, toggles = 0, walks = 0, comparisons = 0, max_depth = 0;
};

struct Result {
  Counters total;  // the whole run
  Counters probe;  // the labelled find_spec step
};

// k nested guards (1..62), `filler` filler modules beside numpy in
// sys.modules, the reentrancy fix on (after) or off (before).
Result replay_nested_guards(int k, uint64_t filler, bool resolving_fix);

}  // namespace impsim::floor
