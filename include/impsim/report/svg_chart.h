// A self-contained SVG line chart (no scripts, no external fonts or styles):
// x linear over the given values, y on a log scale, one line per series,
// every point marked and labelled with its value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace impsim {

struct ChartSeries {
  std::string name;                           // the legend's text
  std::vector<std::optional<uint64_t>> values;  // one per x; nullopt: no point (a run that hit a limit)
  int color = 0;                              // palette index
  int dash = 0;                               // 0 solid, 1 dashed, 2 dotted, ...
  bool labels_below = false;                  // write the point labels under the points
};

struct ChartSpec {
  std::string title;
  std::string subtitle;
  std::string x_label;
  std::string y_label;
  std::vector<int64_t> x;
  std::vector<ChartSeries> series;
};

// Deterministic: the same spec gives the same bytes. A value 0 cannot sit
// on a log scale: it is drawn on the bottom edge as a hollow point, labelled 0.
std::string svg_line_chart(const ChartSpec& spec);

}  // namespace impsim
