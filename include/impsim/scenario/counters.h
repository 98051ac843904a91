// The counters of docs/model.md, for a whole run or one labelled step, and
// the one table that names them: the JSON report's keys, the text and
// compare rows, the names `report`, `expect`, `impsim sweep --counter` and
// the Chrome trace accept or write all come from kCounters.
//
// Counts are exact at any size (Count, count.h): the fast engine (--engine
// fast) reaches k = 34 nested guards and beyond, past 2^128.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "impsim/base/count.h"

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
  Counters& operator+=(const Counters& d);
  // Adds the additive counters of `end - start`.
  void add_delta(const Counters& end, const Counters& start);
};

// Which reports show a counter. The core counters are shown for every
// scenario; a later group (a finder kind's own counters) is shown only for
// the scenarios that use it, so the reports of the others keep their bytes.
enum CounterGroup : unsigned {
  kCoreCounters = 1u << 0,
};

struct CounterInfo {
  std::string_view name;  // the report's key, and what `report`/`expect` name
  Count Counters::*field;
  bool additive;          // summed over steps (max_depth is a maximum)
  CounterGroup group;
  std::string_view description;
};

// In report order.
inline constexpr std::array<CounterInfo, 7> kCounters = {{
    {"asks", &Counters::asks, true, kCoreCounters, "calls of the proxy finder's find_spec, any copy"},
    {"suppressed", &Counters::suppressed, true, kCoreCounters, "asks answered None by the fix's resolving check"},
    {"lookups", &Counters::lookups, true, kCoreCounters, "runs of _find_spec_for_specific_module"},
    {"toggles", &Counters::toggles, true, kCoreCounters, "enables, and disables that removed a copy"},
    {"walks", &Counters::walks, true, kCoreCounters, "passes over sys.modules"},
    {"comparisons", &Counters::comparisons, true, kCoreCounters, "names examined by those passes"},
    {"max_depth", &Counters::max_depth, false, kCoreCounters, "deepest nesting of lookups"},
}};

// Calls f(std::integral_constant<size_t, I>) for every counter I: the
// fast engine sums counters on every remembered ask, so the table is
// walked at compile time, as the field-by-field sums it replaces were.
template <class F>
constexpr void for_each_counter(F&& f) {
  [&]<size_t... I>(std::index_sequence<I...>) {
    (f(std::integral_constant<size_t, I>{}), ...);
  }(std::make_index_sequence<kCounters.size()>{});
}

inline Counters& Counters::operator+=(const Counters& d) {
  for_each_counter([&](auto i) {
    constexpr const CounterInfo& c = kCounters[i];
    if constexpr (c.additive) this->*c.field += d.*c.field;
  });
  return *this;
}

inline void Counters::add_delta(const Counters& end, const Counters& start) {
  for_each_counter([&](auto i) {
    constexpr const CounterInfo& c = kCounters[i];
    if constexpr (c.additive) this->*c.field += end.*c.field - start.*c.field;
  });
}

// The counters of `groups`, in report order.
std::vector<const CounterInfo*> counters_of_groups(unsigned groups);

// The counter called `name`, or nullptr.
const CounterInfo* find_counter(std::string_view name);
// The counters a scenario may name in `report` and `expect`.
inline bool is_counter_name(std::string_view name) { return find_counter(name) != nullptr; }
// "asks, suppressed, ..., comparisons or max_depth": for an error message.
std::string counter_list();

// The counter called `name` of `c`; throws std::invalid_argument for a
// name that is not a counter (names from a scenario are checked on load).
const Count& counter_value(const Counters& c, std::string_view name);

}  // namespace impsim
