#include "impsim/report.h"

namespace impsim {

using nlohmann::ordered_json;

namespace {

ordered_json counters_json(const Counters& c) {
  ordered_json j;
  j["asks"] = c.asks;
  j["suppressed"] = c.suppressed;
  j["lookups"] = c.lookups;
  j["toggles"] = c.toggles;
  j["walks"] = c.walks;
  j["comparisons"] = c.comparisons;
  j["max_depth"] = c.max_depth;
  return j;
}

ordered_json error_json(const std::optional<PyError>& e) {
  if (!e) return nullptr;
  ordered_json j;
  j["type"] = e->type;
  j["message"] = e->message;
  j["step"] = e->traceback.empty() ? "" : e->traceback.back();
  j["traceback"] = e->traceback;
  return j;
}

}  // namespace

ordered_json report_json(const ScenarioRun& run) {
  ordered_json j;
  j["impsim"] = 1;
  j["scenario"] = run.scenario->name;
  ordered_json runs = ordered_json::array();
  for (const VariantRun& r : run.runs) {
    ordered_json jr;
    jr["variant"] = variant_name(r.variant);
    ordered_json params = ordered_json::object();
    for (auto& [k, v] : r.params) params[k] = v;
    jr["params"] = params;
    jr["counters"] = counters_json(r.counters);
    ordered_json labels = ordered_json::object();
    for (auto& [name, c] : r.labels) labels[name] = counters_json(c);
    jr["labels"] = labels;
    ordered_json outcome;
    outcome["modules"] = r.outcome.modules;
    ordered_json marks = ordered_json::object();
    for (auto& [k, v] : r.outcome.marks) marks[k] = v;
    outcome["marks"] = marks;
    ordered_json results = ordered_json::object();
    for (auto& [k, v] : r.outcome.results) results[k] = v;
    outcome["results"] = results;
    outcome["proxy_copies"] = r.outcome.proxy_copies;
    outcome["error"] = error_json(r.outcome.error);
    jr["outcome"] = outcome;
    ordered_json ex = ordered_json::array();
    for (auto& e : r.expectations)
      ex.push_back({{"counter", e.counter}, {"expected", e.expected}, {"actual", e.actual}, {"ok", e.ok}});
    jr["expectations"] = ex;
    if (!r.verdict.empty()) jr["verdict"] = r.verdict;
    if (r.verdict_expected)
      jr["verdict_expectation"] = {{"expected", *r.verdict_expected}, {"actual", r.verdict}, {"ok", *r.verdict_expected == r.verdict}};
    if (r.limit) {
      jr["limit"] = {{"limit", r.limit->limit},
                     {"detail", r.limit->detail},
                     {"step", r.limit->traceback.empty() ? "" : r.limit->traceback.back()},
                     {"traceback", r.limit->traceback}};
    } else {
      jr["limit"] = nullptr;
    }
    runs.push_back(jr);
  }
  j["runs"] = runs;
  j["equivalent"] = run.equivalent;
  if (run.equivalence_failure) j["equivalence_failure"] = *run.equivalence_failure;
  j["exit_status"] = run.exit_status();
  return j;
}

}  // namespace impsim
