// The counters of MODEL.md, for a whole run or one labelled step.
//
// Counts are exact at any size (Count, count.h): the fast engine (--engine
// fast) reaches k = 34 nested guards and beyond, past 2^128.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "impsim/count.h"

namespace impsim {

struct Counters {
  Count asks = 0;         // calls of the proxy finder's find_spec, any copy
  Count suppressed = 0;   // asks answered None by the fix's resolving check
  Count lookups = 0;      // runs of _find_spec_for_specific_module
  Count toggles = 0;      // enables, and disables that removed a copy
  Count walks = 0;        // passes over sys.modules
  Count comparisons = 0;  // names examined by those passes
  Count max_depth = 0;    // deepest nesting of lookups

  // Adds the additive counters of `d` (max_depth is not additive).
  Counters& operator+=(const Counters& d) {
    asks += d.asks;
    suppressed += d.suppressed;
    lookups += d.lookups;
    toggles += d.toggles;
    walks += d.walks;
    comparisons += d.comparisons;
    return *this;
  }
  // Adds the additive counters of `end - start`.
  void add_delta(const Counters& end, const Counters& start) {
    asks += end.asks - start.asks;
    suppressed += end.suppressed - start.suppressed;
    lookups += end.lookups - start.lookups;
    toggles += end.toggles - start.toggles;
    walks += end.walks - start.walks;
    comparisons += end.comparisons - start.comparisons;
  }
};

inline constexpr std::array<std::string_view, 7> kCounterNames = {
    "asks", "suppressed", "lookups", "toggles", "walks", "comparisons", "max_depth"};

inline const Count& counter_value(const Counters& c, std::string_view name) {
  if (name == "asks") return c.asks;
  if (name == "suppressed") return c.suppressed;
  if (name == "lookups") return c.lookups;
  if (name == "toggles") return c.toggles;
  if (name == "walks") return c.walks;
  if (name == "comparisons") return c.comparisons;
  return c.max_depth;
}

}  // namespace impsim
