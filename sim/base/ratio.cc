#include "impsim/base/ratio.h"

#include <fmt/format.h>

#include <cmath>

#include "impsim/base/text.h"

namespace impsim {

namespace {

constexpr int64_t kScientificFrom = 9;  // ratios from 10^9 on: mantissa and power of ten

}  // namespace

std::string ratio_number(const Count& a, const Count& b) {
  Count::Scientific r = Count::ratio(a, b);
  if (r.exponent >= kScientificFrom) return fmt::format("{:.2f}e{}", r.mantissa, r.exponent);
  double x = a.to_double() / b.to_double();
  return x >= 100 ? grouped(static_cast<uint64_t>(std::llround(x))) : fmt::format("{:.2f}", x);
}

std::string ratio_text(const Count& value, const Count& baseline) {
  if (value == baseline) return "x1";
  if (baseline == 0) return "n/a";
  if (value == 0) return "x0";
  if (value > baseline) return "x" + ratio_number(value, baseline);
  return "x1/" + ratio_number(baseline, value);
}

}  // namespace impsim
