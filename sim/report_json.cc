#include "impsim/report.h"

namespace impsim {

using nlohmann::ordered_json;

namespace {
constexpr std::string_view kBigCount = "\u0001count:";
}  // namespace

ordered_json count_json(Count n) {
  if (n <= UINT64_MAX) return static_cast<uint64_t>(n);
  return std::string(kBigCount) + count_text(n);
}

std::string dump_json(const ordered_json& j) {
  std::string text = j.dump(2);
  // nlohmann escapes U+0001 as \u0001: replace "\u0001count:DIGITS" by DIGITS.
  const std::string marker = "\"\\u0001count:";
  for (size_t at = text.find(marker); at != std::string::npos; at = text.find(marker, at)) {
    size_t end = text.find('"', at + marker.size());
    text.replace(at, end + 1 - at, text.substr(at + marker.size(), end - at - marker.size()));
  }
  return text;
}

namespace {

ordered_json counters_json(const Counters& c) {
  ordered_json j;
  j["asks"] = count_json(c.asks);
  j["suppressed"] = count_json(c.suppressed);
  j["lookups"] = count_json(c.lookups);
  j["toggles"] = count_json(c.toggles);
  j["walks"] = count_json(c.walks);
  j["comparisons"] = count_json(c.comparisons);
  j["max_depth"] = count_json(c.max_depth);
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
      ex.push_back({{"counter", e.counter}, {"expected", e.expected}, {"actual", count_json(e.actual)}, {"ok", e.ok}});
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
