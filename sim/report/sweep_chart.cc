#include "impsim/report/sweep_chart.h"

#include <fmt/format.h>

namespace impsim {

ChartSpec sweep_chart(const SweepResult& result) {
  const ScenarioRun& run = result.run;
  const ScenarioFacts& sc = run.scenario;
  ChartSpec spec;
  spec.title = sc.name.empty() ? sc.file : sc.name;
  spec.subtitle = sc.description;
  const std::string& t = sc.sweep->title;
  spec.x_label = t == sc.sweep->param || t.find("(" + sc.sweep->param + ")") != std::string::npos
                     ? t
                     : fmt::format("{} ({})", t, sc.sweep->param);
  spec.x = run.sweep_values;
  const std::vector<ReportRow>& rows = sc.rows;
  spec.y_label = rows.size() == 1 ? rows[0].title + " (log scale)" : "count (log scale)";
  const size_t nv = run.variants.size();
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t v = 0; v < nv; ++v) {
      ChartSeries s;
      s.name = rows.size() == 1 ? variant_name(run.variants[v])
                                : fmt::format("{}, {}", rows[r].title, variant_name(run.variants[v]));
      s.color = static_cast<int>(v);
      s.dash = static_cast<int>(r);
      s.labels_below = v > 0;
      for (size_t i = 0; i < run.sweep_values.size(); ++i) {
        const VariantRun& vr = run.at(i, v);
        if (vr.limit) s.values.push_back(std::nullopt);
        else {
          Count c = counter_of(vr, rows[r].counter);
          if (!c.fits_u64())
            throw ChartTooBig(fmt::format("--svg: {} reaches {} at {}={}, past what the chart draws (2^64); drop "
                                          "--svg or sweep smaller values",
                                          rows[r].counter, count_text(c), sc.sweep->param, run.sweep_values[i]));
          s.values.push_back(c.u64());
        }
      }
      spec.series.push_back(std::move(s));
    }
  return spec;
}

}  // namespace impsim
