// `impsim sweep --svg`: a sweep's counters as a line chart (svg_chart.h).
#pragma once

#include <stdexcept>

#include "impsim/report/svg_chart.h"
#include "impsim/run/sweep.h"

namespace impsim {

// A count past 2^64 cannot be charted (the chart's axis is 64-bit).
struct ChartTooBig : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The chart of a sweep: one line per counter and variant, y on a log scale.
// Throws ChartTooBig.
ChartSpec sweep_chart(const SweepResult& result);

}  // namespace impsim
