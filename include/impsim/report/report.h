// Turns a ScenarioRun into what `impsim run` prints: the JSON report of
// docs/scenario-format.md, or aligned text for people.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "impsim/run/run.h"
#include "impsim/base/text.h"

namespace impsim {

nlohmann::ordered_json report_json(const ScenarioRun& run);
// What produced a report, after its "impsim" key: "version" (impsim's) and
// "axes" (the model's finder revision and CPython version).
void add_producer(nlohmann::ordered_json& j, const ScenarioRun& run);
// A run's "expectations" array: exact ones {"counter", "expected", "actual",
// "ok"}, budgets {"counter", "budget", "actual", ["baseline",] "ok"}.
nlohmann::ordered_json expectations_json(const VariantRun& r);
// The expectations a run did not check (ScenarioRun::unchecked), as the
// reports' "unchecked_expectations": {"kind", ["variant",] ["counter",]
// ["params",] "pointer", "reason"} each.
nlohmann::ordered_json unchecked_json(const ScenarioRun& run);
// Why `u` was not checked, in words: "written for k=1..4", "before is not
// among the variants run".
std::string unchecked_reason(const UncheckedExpectation& u);
// "expectations: 3/4 hold" and a FAILED line for each that does not (and
// for expect_equivalent), then a "not checked" line per reason, as run's
// text report has them: terminal text.
std::string expectations_text(const ScenarioRun& run);
std::string report_text(const ScenarioRun& run);
// The same for a code review or $GITHUB_STEP_SUMMARY: a heading, the
// counters as a Markdown table, the rest of the text report in a block.
// `command` names the subcommand in the heading ("### impsim run: NAME").
std::string report_markdown(const ScenarioRun& run, const std::string& command = "run");


// A count as JSON: a number, exact at any size. Past 2^53 (where doubles,
// and so JavaScript and jq, stop being exact) it is held as a binary value
// of its digits, which only dump_json() knows how to write.
nlohmann::ordered_json count_json(const Count& n);

// object[key] = value for a key the object cannot hold yet (finder ids,
// labels, module names): ordered_json's operator[] first compares the key
// with every key there, so an object of n keys built with it costs n^2.
void json_append_unique(nlohmann::ordered_json& object, std::string key, nlohmann::ordered_json value);

struct JsonOptions {
  // --json-big-as-strings: counts past 2^53 as strings of digits, so a
  // reader whose numbers are doubles still gets them exactly.
  bool big_as_strings = false;
};
// j.dump(2), with every count written exactly and every string (keys too)
// written by json_text (escape.h): never an exception for a byte that is
// not UTF-8.
std::string dump_json(const nlohmann::ordered_json& j, const JsonOptions& options = {});

}  // namespace impsim
