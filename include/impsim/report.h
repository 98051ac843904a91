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
std::string grouped(Count n);

// A count as JSON: a number. Past 2^64 nlohmann cannot hold it, so it
// becomes a placeholder that dump_json() writes back as exact digits.
nlohmann::ordered_json count_json(Count n);
// j.dump(2), with every count written exactly.
std::string dump_json(const nlohmann::ordered_json& j);

}  // namespace impsim
