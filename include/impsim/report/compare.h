// `impsim compare`: finder designs side by side on one scenario, with the
// ratio of every counter to a baseline design and an outcome verdict per
// design, as text, Markdown (for a code review) or JSON.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "impsim/base/ratio.h"
#include "impsim/run/run.h"

namespace impsim {

struct Comparison {
  const ScenarioRun* run = nullptr;
  Variant baseline = Variant::Before;
  // --counters: the rows to show ("lookups", "probe.lookups"); empty: all.
  std::vector<std::string> counters;
};

enum class CompareFormat { Text, Markdown, Json };

// 3 a limit stopped a run, 1 an expectation failed, else 0. A design the
// scenario does not run may raise where the scenario's do not: that alone
// is a finding of the comparison, not a failure.
int compare_exit_status(const ScenarioRun& run);

std::string compare_text(const Comparison& c, CompareFormat format);
// The report's heading: the scenario's name and description, escaped for
// the terminal (wrapped) or for markdown; compare across schedules shares it.
std::string compare_heading(const std::string& name, const std::string& description, bool markdown);
nlohmann::ordered_json compare_json(const Comparison& c);

}  // namespace impsim
