#include "impsim/report/report.h"

#include <nlohmann/json.hpp>

#include "impsim/base/escape.h"
#include "impsim/base/version.h"
#include "impsim/run/outcome_words.h"

namespace impsim {

using nlohmann::ordered_json;

namespace {

// JavaScript (and jq) numbers are doubles: integers are exact up to 2^53.
const Count kExactInDouble = Count(uint64_t{1} << 53);

// A count past 2^53 travels through the JSON tree as a binary value holding
// its decimal digits: nlohmann has no integer type for it, and a binary
// value is never anything else in a report (names and labels are strings),
// so no text of the scenario's can be mistaken for it.
void write(std::string& out, const ordered_json& j, int indent, const JsonOptions& o) {
  const std::string pad(static_cast<size_t>(indent) + 2, ' ');
  switch (j.type()) {
    case nlohmann::json::value_t::object:
    case nlohmann::json::value_t::array: {
      const bool object = j.is_object();
      const char* brackets = object ? "{}" : "[]";
      if (j.empty()) {
        out += brackets;
        return;
      }
      out += brackets[0];
      out += "\n";
      bool first = true;
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (!first) out += ",\n";
        first = false;
        out += pad;
        if (object) out += json_quoted(it.key()) + ": ";
        write(out, it.value(), indent + 2, o);
      }
      out += "\n" + std::string(static_cast<size_t>(indent), ' ') + brackets[1];
      return;
    }
    case nlohmann::json::value_t::binary: {
      const auto& digits = j.get_binary();
      std::string text(digits.begin(), digits.end());
      out += o.big_as_strings ? "\"" + text + "\"" : text;
      return;
    }
    case nlohmann::json::value_t::string:
      // Not nlohmann's dump: a file name or an argument may hold bytes that
      // are not UTF-8, which it refuses with an exception (json_text
      // replaces them), and a string may hold what a terminal or a runner
      // reads as a command.
      out += json_quoted(j.get_ref<const std::string&>());
      return;
    default:
      out += j.dump();
  }
}

}  // namespace

void json_append_unique(ordered_json& object, std::string key, ordered_json value) {
  if (!object.is_object()) object = ordered_json::object();
  auto& map = object.get_ref<ordered_json::object_t&>();
  static_cast<ordered_json::object_t::Container&>(map).emplace_back(std::move(key), std::move(value));
}

ordered_json count_json(const Count& n) {
  if (n <= kExactInDouble) return n.u64();
  std::string digits = n.text();
  return ordered_json::binary(std::vector<uint8_t>(digits.begin(), digits.end()));
}

std::string dump_json(const ordered_json& j, const JsonOptions& options) {
  std::string out;
  write(out, j, 0, options);
  return out;
}

namespace {

ordered_json counters_json(const Counters& c, const std::vector<const CounterInfo*>& shown);

// A hook scenario's counters: the proxy's, its lookup nesting named
// lookup_depth, then the hook counters (max_depth: _find_spec nesting).
ordered_json hook_counters_json(const VariantRun& r, const Counters& c, const HookCounters& h,
                                const std::vector<const CounterInfo*>& shown) {
  ordered_json j = counters_json(c, shown);
  j.erase("max_depth");
  j["lookup_depth"] = count_json(c.max_depth);
  j["searches"] = count_json(h.searches);
  j["finder_calls"] = count_json(h.finder_calls);
  j["max_depth"] = count_json(h.max_depth);
  j["legacy_warnings"] = count_json(h.legacy_warnings);
  j["hook_depth"] = count_json(h.hook_depth);
  j["hook_reentries"] = count_json(h.hook_reentries);
  ordered_json by = ordered_json::object();
  // Hook objects first, then the interpreter's three.
  const std::vector<std::string>& ids = r.finder_ids();
  for (FinderId f : counted_finder_order(ids.size())) {
    const size_t i = static_cast<size_t>(f);
    if (!ids[i].empty())
      json_append_unique(by, ids[i], count_json(i < h.by_object.size() ? h.by_object[i] : Count(0)));
  }
  j["finder_calls_by_object"] = by;
  return j;
}

ordered_json counters_json(const Counters& c, const std::vector<const CounterInfo*>& shown) {
  ordered_json j;
  for (const CounterInfo* info : shown) j[std::string(info->name)] = count_json(c.*info->field);
  return j;
}

// A label's results. Up to kPlainResults results (repeats counted): the
// plain list of strings, as the format has always had them. Past that, a
// result repeated n > 1 times in a row is {"result": R, "times": n}, so a
// step repeated a million times is one entry, not a million.
constexpr uint64_t kPlainResults = 100;

ordered_json results_json(const Results& rs) {
  uint64_t total = 0;
  for (const ResultRun& x : rs) total += x.times;
  ordered_json out = ordered_json::array();
  for (const ResultRun& x : rs) {
    if (total <= kPlainResults)
      for (uint64_t i = 0; i < x.times; ++i) out.push_back(x.result);
    else if (x.times == 1)
      out.push_back(x.result);
    else
      out.push_back({{"result", x.result}, {"times", x.times}});
  }
  return out;
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

ordered_json expectations_json(const VariantRun& r) {
  ordered_json ex = ordered_json::array();
  for (auto& e : r.expectations) {
    if (!e.budget) {
      ex.push_back({{"counter", e.counter},
                    {"expected", count_json(e.expected)},
                    {"actual", count_json(e.actual)},
                    {"ok", e.ok}});
      continue;
    }
    ordered_json je;
    je["counter"] = e.counter;
    je["budget"] = budget_json(*e.budget);
    je["actual"] = count_json(e.actual);
    if (e.baseline) je["baseline"] = count_json(*e.baseline);
    je["ok"] = e.ok;
    ex.push_back(je);
  }
  return ex;
}

std::string unchecked_reason(const UncheckedExpectation& u) {
  const std::string about = u.about ? variant_name(*u.about) : "";
  switch (u.why) {
    case UncheckedWhy::Stated: return u.reason;
    case UncheckedWhy::NotRun: return about + " is not among the variants run";
    case UncheckedWhy::RatioNotRun: return "a ratio to " + about + ", which is not among the variants run";
    case UncheckedWhy::RatioStopped: return "a ratio to " + about + ", whose run stopped at a limit";
    case UncheckedWhy::NotFirst: return "a verdict against " + about + ", which is not the first variant run";
  }
  return u.reason;
}

ordered_json unchecked_json(const ScenarioRun& run) {
  ordered_json out = ordered_json::array();
  for (const UncheckedExpectation& u : run.unchecked) {
    ordered_json j;
    j["kind"] = u.kind;
    if (u.variant) j["variant"] = variant_name(*u.variant);
    if (!u.counter.empty()) j["counter"] = u.counter;
    if (u.params) {
      ordered_json params = ordered_json::object();
      for (auto& [k, v] : *u.params) params[k] = v;
      j["params"] = params;
    }
    j["pointer"] = u.pointer;
    j["reason"] = unchecked_reason(u);
    out.push_back(j);
  }
  return out;
}

void add_producer(ordered_json& j, const ScenarioRun& run) {
  j["version"] = impsim_version();
  j["axes"] = {{"revision", revision_name(run.axes.revision)}, {"cpython", cpython_name(run.axes.cpython)}};
}

ordered_json report_json(const ScenarioRun& run) {
  ordered_json j;
  j["impsim"] = 1;
  add_producer(j, run);
  j["scenario"] = run.scenario.name;
  // Which file: a report among several ({"reports": [...]}) is told apart
  // by it, as scenario names need not differ.
  j["file"] = run.scenario.file;
  const std::vector<const CounterInfo*> shown = run.shown_counters();
  ordered_json runs = ordered_json::array();
  for (const VariantRun& r : run.runs) {
    ordered_json jr;
    jr["variant"] = variant_name(r.variant);
    ordered_json params = ordered_json::object();
    for (auto& [k, v] : r.params) params[k] = v;
    jr["params"] = params;
    jr["counters"] =
        r.hooks_used ? hook_counters_json(r, r.counters, r.hooks, shown) : counters_json(r.counters, shown);
    if (r.hooks_used) jr["finder_calls_by_object"] = jr["counters"]["finder_calls_by_object"];
    // A limit stopped the run: every count below is what it reached so far.
    if (r.limit) jr["counts"] = "partial";
    ordered_json labels = ordered_json::object();
    for (size_t i = 0; i < r.labels.size(); ++i) {
      ordered_json lj = r.hooks_used ? hook_counters_json(r, r.labels[i].second, r.label_hooks[i].second, shown)
                                     : counters_json(r.labels[i].second, shown);
      // A hook scenario's list of finder objects as the step ended: what a
      // step's installs and removals left, without cutting the program.
      if (r.hooks_used) {
        if (const auto& ids = r.label_meta_path[i]) {
          ordered_json list = ordered_json::array();
          for (FinderId f : *ids) list.push_back(r.finder_id(f));
          lj["meta_path"] = std::move(list);
        } else {
          lj["meta_path"] = nullptr;
        }
      }
      json_append_unique(labels, r.labels[i].first, std::move(lj));
    }
    jr["labels"] = labels;
    ordered_json outcome;
    outcome["modules"] = r.outcome.modules;
    ordered_json marks = ordered_json::object();
    for (auto& [k, v] : r.outcome.marks) json_append_unique(marks, k, v);
    outcome["marks"] = marks;
    ordered_json results = ordered_json::object();
    for (auto& [k, v] : r.outcome.results) json_append_unique(results, k, results_json(v));
    outcome["results"] = results;
    outcome["proxy_copies"] = r.outcome.proxy_copies;
    outcome["error"] = error_json(r.outcome.error);
    if (r.hooks_used) outcome["meta_path"] = r.outcome.meta_path;
    if (!r.outcome.threads.empty()) {
      outcome["threads"] = thread_end_texts(r.outcome.threads);
      ordered_json hang = ordered_json::array();
      for (const HangWait& w : r.outcome.hang) hang.push_back(hang_wait_text(w));
      outcome["hang"] = std::move(hang);
    }
    jr["outcome"] = outcome;
    if (r.lazy)
      jr["lazy"] = {{"statements", r.lazy->statements},
                    {"resolutions", r.lazy->resolutions},
                    {"filter_calls", r.lazy->filter_calls},
                    {"lazy_modules", r.lazy->lazy_modules}};
    ordered_json ex = expectations_json(r);
    jr["expectations"] = ex;
    if (!r.verdict.empty()) jr["verdict"] = r.verdict;
    if (r.verdict_expected)
      jr["verdict_expectation"] = {
          {"expected", *r.verdict_expected}, {"actual", r.verdict}, {"ok", *r.verdict_expected == r.verdict}};
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
  // null: no compared sweep value differs, but a limit stopped a run
  // somewhere, so its outcome was not compared.
  if (run.equivalent && !run.all_compared())
    j["equivalent"] = nullptr;
  else
    j["equivalent"] = run.equivalent;
  if (run.equivalence_failure) j["equivalence_failure"] = *run.equivalence_failure;
  if (!run.unchecked.empty()) j["unchecked_expectations"] = unchecked_json(run);
  j["exit_status"] = run.exit_status();
  return j;
}

}  // namespace impsim
