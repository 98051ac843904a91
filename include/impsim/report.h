// Turns a ScenarioRun into what `impsim run` prints: the JSON report of
// SCENARIO_FORMAT.md, or aligned text for people.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "impsim/run.h"

namespace impsim {

nlohmann::ordered_json report_json(const ScenarioRun& run);
std::string report_text(const ScenarioRun& run);

// 13699 -> "13,699"
std::string grouped(uint64_t n);

}  // namespace impsim
