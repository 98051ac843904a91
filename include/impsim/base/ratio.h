// The one notation for a ratio in every text report (run, compare, sweep,
// budgets): a multiplier, "x" then value / baseline, readable at any size.
//   x1        the same count (both zero included)
//   x0        the value is zero
//   x2.50     below 100: two decimals
//   x1,957    from 100: a grouped whole number
//   x3.31e17  from 10^9: mantissa and power of ten
//   x1/2,494  below 1: the inverse, written the same way
//   n/a       the baseline is zero and the value is not
// JSON reports carry ratios as numbers (value / baseline) instead.
#pragma once

#include <string>

#include "impsim/base/count.h"

namespace impsim {

std::string ratio_text(const Count& value, const Count& baseline);

// a / b (a >= b > 0) in the notation above, without the "x".
std::string ratio_number(const Count& a, const Count& b);

}  // namespace impsim
