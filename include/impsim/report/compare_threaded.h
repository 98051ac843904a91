// `impsim compare` on a threaded scenario: each design's outcome classes,
// with how many schedules reached each, and per end of the threads a
// verdict across the designs (reached by every design, or by some and
// never by the others within their searches), as text, Markdown (for a
// code review) or JSON.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "impsim/report/compare.h"
#include "impsim/report/schedule_gate.h"
#include "impsim/run/ends_by_design.h"

namespace impsim {

struct ThreadedComparison {
  const Scenario* scenario = nullptr;
  std::vector<EndsByDesign> points;  // the baseline is each point's first design
  // The schedule gate over every point's searches, in order (null: none).
  const ScheduleGate* gate = nullptr;
};

// Every point's searches, in order: what gate_schedules takes.
std::vector<const DesignSearch*> compared_searches(const std::vector<EndsByDesign>& points);

// 1 when a design's search means nothing (its program did not repeat itself
// under the same choices) or the gate failed, else 0, as `impsim schedules`
// says it.
int compare_threaded_exit_status(const ThreadedComparison& c);

std::string compare_threaded_text(const ThreadedComparison& c, CompareFormat format);
nlohmann::ordered_json compare_threaded_json(const ThreadedComparison& c);

}  // namespace impsim
