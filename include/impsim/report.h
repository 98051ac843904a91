// Turns a ScenarioRun into what `impsim run` prints: the JSON report of
// docs/scenario-format.md, or aligned text for people.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "impsim/run.h"

namespace impsim {

nlohmann::ordered_json report_json(const ScenarioRun& run);
std::string report_text(const ScenarioRun& run);

// 13699 -> "13,699"
std::string grouped(const Count& n);

// a / b (b > 0) for the text reports: "1957.00" below 10^9, "3.31e17" from
// there on, at any magnitude (run, compare and sweep use this one notation).
std::string ratio_number(const Count& a, const Count& b);
// The same for a ratio below 1 written as 1/x: "2,494" (x >= 100, rounded),
// "2.50" below 100, "3.31e17" from 10^9.
std::string inverse_ratio_number(const Count& a, const Count& b);

// A count as JSON: a number, exact at any size. Past 2^53 (where doubles,
// and so JavaScript and jq, stop being exact) it is held as a binary value
// of its digits, which only dump_json() knows how to write.
nlohmann::ordered_json count_json(const Count& n);

struct JsonOptions {
  // --json-big-as-strings: counts past 2^53 as strings of digits, so a
  // reader whose numbers are doubles still gets them exactly.
  bool big_as_strings = false;
};
// j.dump(2), with every count written exactly.
std::string dump_json(const nlohmann::ordered_json& j, const JsonOptions& options = {});

}  // namespace impsim
