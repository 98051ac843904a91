#include "impsim/report/compare.h"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "impsim/base/errors.h"
#include "impsim/base/escape.h"
#include "impsim/base/text_layout.h"
#include "impsim/report/report.h"

namespace impsim {

using nlohmann::ordered_json;

namespace {

struct Row {
  std::string counter;
  std::vector<Count> values;  // per variant
};

// One block per sweep value: the runs of every variant at it.
std::vector<std::vector<const VariantRun*>> blocks(const ScenarioRun& run) {
  std::vector<std::vector<const VariantRun*>> out;
  for (size_t p = 0; p < run.points(); ++p) {
    std::vector<const VariantRun*> b;
    for (size_t v = 0; v < run.variants.size(); ++v) b.push_back(&run.at(p, v));
    out.push_back(b);
  }
  return out;
}

// A ratio as a JSON number (a double: ratios are approximate by nature);
// past the largest double, its scientific text ("3.31e400") as a string.
ordered_json ratio_json(const Count& a, const Count& b) {
  Count::Scientific r = Count::ratio(a, b);
  if (r.exponent < 300) return a.to_double() / b.to_double();
  return fmt::format("{:.2f}e{}", r.mantissa, r.exponent);
}

// The counters every block shows: a hook scenario's are its own
// (report_counter_names, over every run), others the table's. Once per
// comparison, not per block.
std::vector<std::string> counter_names_of(const ScenarioRun& run) {
  std::vector<std::string> counter_names;
  if (!run.runs.empty() && run.runs.front().hooks_used) return report_counter_names(run.runs);
  for (const CounterInfo* info : run.shown_counters()) counter_names.emplace_back(info->name);
  return counter_names;
}

std::vector<Row> rows_of(const Comparison& c, const std::vector<std::string>& counter_names,
                         const std::vector<const VariantRun*>& block) {
  const ScenarioRun& run = *c.run;
  std::vector<Row> rows;
  std::vector<std::string> labels{""};
  for (auto& l : run.scenario.labels) labels.push_back(l);
  const std::set<std::string, std::less<>> chosen(c.counters.begin(), c.counters.end());
  for (size_t li = 0; li < labels.size(); ++li) {
    const std::string& label = labels[li];
    // r.labels lists the scenario's labels in its order: index li - 1.
    const size_t at = li == 0 ? SIZE_MAX : li - 1;
    for (const std::string& name : counter_names) {
      Row row{label.empty() ? name : label + "." + name, {}};
      for (auto* r : block) row.values.push_back(counter_at(*r, at, name));
      if (!c.counters.empty()) {
        // Chosen counters are shown as asked, zeros included.
        if (!chosen.count(row.counter)) continue;
        rows.push_back(std::move(row));
        continue;
      }
      bool all_zero = std::all_of(row.values.begin(), row.values.end(), [](Count x) { return x == 0; });
      if (!label.empty() && all_zero) continue;
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

size_t baseline_index(const Comparison& c) {
  auto& vs = c.run->variants;
  return static_cast<size_t>(std::find(vs.begin(), vs.end(), c.baseline) - vs.begin());
}

std::string problem(const VariantRun& r) {
  if (r.limit)
    return fmt::format("stopped by limit {} at {}", r.limit->limit,
                       r.limit->traceback.empty() ? "?" : r.limit->traceback.back());
  return "";
}

}  // namespace

int compare_exit_status(const ScenarioRun& run) {
  if (run.limit_reached()) return kExitLimit;
  return run.expectations_ok() ? kExitOk : kExitFailed;
}

std::string compare_heading(const std::string& name, const std::string& description, bool markdown) {
  if (markdown) {
    std::string out = fmt::format("### impsim compare: {}\n\n", markdown_text(name));
    if (!description.empty()) out += markdown_text(description, Markdown::Paragraph) + "\n\n";
    return out;
  }
  std::string head = terminal_text(name);
  if (!description.empty()) head += ": " + terminal_text(description);
  return wrap_paragraph(head) + "\n";
}

std::string compare_text(const Comparison& c, CompareFormat format) {
  const ScenarioRun& run = *c.run;
  const bool md = format == CompareFormat::Markdown;
  const size_t base = baseline_index(c);
  const std::vector<std::string> counter_names = counter_names_of(run);
  const ScenarioFacts& sc = run.scenario;
  std::string out = compare_heading(sc.name, sc.description, md);
  for (auto& block : blocks(run)) {
    if (!block[0]->params.empty())
      out += md ? fmt::format("Parameters: {}. Each cell: the count, then its ratio to `{}`.\n\n",
                              params_text(block[0]->params), variant_name(c.baseline))
                : fmt::format("at {} (ratio to {} in brackets)\n", params_text(block[0]->params),
                              variant_name(c.baseline));
    std::vector<std::vector<std::string>> table;
    std::vector<std::string> head{"counter"};
    bool stopped = false;
    for (size_t v = 0; v < block.size(); ++v) {
      head.push_back(std::string(variant_name(run.variants[v])) + (block[v]->limit ? " (stopped: partial)" : ""));
      stopped = stopped || block[v]->limit.has_value();
    }
    table.push_back(head);
    for (const Row& row : rows_of(c, counter_names, block)) {
      std::vector<std::string> line{md ? row.counter : terminal_text(row.counter)};
      for (size_t v = 0; v < row.values.size(); ++v) {
        std::string cell = grouped(row.values[v]);
        // Counts a limit cut short have no meaningful ratio.
        if (v != base) cell += fmt::format(" ({})", stopped ? "partial" : ratio_text(row.values[v], row.values[base]));
        line.push_back(cell);
      }
      table.push_back(line);
    }
    if (md) {
      out += markdown_table(table) + "\n";
    } else {
      // Wider than 80 columns (many designs): blocks of designs, each
      // repeating the counter column.
      out += text_table(table) + "\n";
    }
    out += md ? "**Outcome against `" + std::string(variant_name(c.baseline)) + "`:**\n\n"
              : fmt::format("outcome against {}:\n", variant_name(c.baseline));
    for (size_t v = 0; v < block.size(); ++v) {
      if (v == base) continue;
      std::string name = variant_name(run.variants[v]);
      std::string p = problem(*block[v]);
      if (p.empty() && block[base]->limit)
        p = "not compared: the baseline " + problem(*block[base]);
      else if (!p.empty())
        p = "not compared: " + p;
      // A stopped run's outcome (guards never exited) is not behaviour.
      std::vector<std::string> diffs;
      if (p.empty())
        diffs = describe_differences(block[base]->outcome, block[v]->outcome, variant_name(c.baseline), name);
      std::string verdict = !p.empty() ? p : diffs.empty() ? "identical" : "differs";
      out += md ? fmt::format("- `{}`: {}\n", name, markdown_text(verdict))
                : fmt::format("  {}: {}\n", name, terminal_text(verdict));
      for (auto& d : diffs)
        out += md ? "  - " + markdown_text(d, Markdown::Paragraph) + "\n"
                  : wrap_paragraph(terminal_text(d), "    - ", "      ");
    }
    out += "\n";
  }
  // compare honours the scenario's expectations as run does; they are
  // shown only when one fails or is not checked (so that a passing
  // comparison reads as before).
  if (!run.expectations_ok() || !run.unchecked.empty()) {
    std::string ex = expectations_text(run);
    out += md ? markdown_code_block(ex) : ex;
  }
  return out;
}

ordered_json compare_json(const Comparison& c) {
  const ScenarioRun& run = *c.run;
  const size_t base = baseline_index(c);
  const std::vector<std::string> counter_names = counter_names_of(run);
  ordered_json j;
  j["impsim"] = 1;
  add_producer(j, run);
  j["scenario"] = run.scenario.name;
  j["file"] = run.scenario.file;
  j["baseline"] = variant_name(c.baseline);
  ordered_json vs = ordered_json::array();
  for (Variant v : run.variants) vs.push_back(variant_name(v));
  j["variants"] = vs;
  ordered_json comparisons = ordered_json::array();
  for (auto& block : blocks(run)) {
    ordered_json b;
    ordered_json params = ordered_json::object();
    for (auto& [k, v] : block[0]->params) params[k] = v;
    b["params"] = params;
    ordered_json rows = ordered_json::array();
    const bool stopped = std::any_of(block.begin(), block.end(), [](auto* r) { return r->limit.has_value(); });
    // A limit stopped a run: its counts are what it reached, and no ratio is given.
    ordered_json partial = ordered_json::array();
    for (size_t v = 0; v < block.size(); ++v)
      if (block[v]->limit) partial.push_back(variant_name(run.variants[v]));
    if (stopped) b["partial"] = partial;
    for (const Row& row : rows_of(c, counter_names, block)) {
      ordered_json r;
      r["counter"] = row.counter;
      ordered_json values = ordered_json::object(), ratios = ordered_json::object();
      for (size_t v = 0; v < row.values.size(); ++v) {
        values[variant_name(run.variants[v])] = count_json(row.values[v]);
        ratios[variant_name(run.variants[v])] =
            row.values[base] == 0 || stopped ? ordered_json(nullptr) : ratio_json(row.values[v], row.values[base]);
      }
      r["values"] = values;
      r["ratios"] = ratios;
      rows.push_back(r);
    }
    b["rows"] = rows;
    ordered_json verdicts = ordered_json::object();
    for (size_t v = 0; v < block.size(); ++v) {
      if (v == base) continue;
      std::vector<std::string> diffs;
      if (!stopped)
        diffs = describe_differences(block[base]->outcome, block[v]->outcome, variant_name(c.baseline),
                                     variant_name(run.variants[v]));
      ordered_json verdict;
      // null: not compared, because a limit stopped this run or the baseline's.
      verdict["identical"] = stopped ? ordered_json(nullptr) : ordered_json(diffs.empty());
      verdict["differences"] = diffs;
      verdict["limit"] = block[v]->limit ? ordered_json(block[v]->limit->limit) : ordered_json(nullptr);
      verdicts[variant_name(run.variants[v])] = verdict;
    }
    b["verdicts"] = verdicts;
    comparisons.push_back(b);
  }
  j["comparisons"] = comparisons;
  // Every expectation checked, per run, as in run's report.
  ordered_json ex = ordered_json::array();
  for (const VariantRun& r : run.runs)
    for (const ordered_json& e : expectations_json(r)) {
      ordered_json entry;
      entry["variant"] = variant_name(r.variant);
      ordered_json params = ordered_json::object();
      for (auto& [k, v] : r.params) params[k] = v;
      entry["params"] = params;
      for (auto it = e.begin(); it != e.end(); ++it) entry[it.key()] = it.value();
      ex.push_back(entry);
    }
  j["expectations"] = ex;
  if (run.equivalence_failure) j["equivalence_failure"] = *run.equivalence_failure;
  if (!run.unchecked.empty()) j["unchecked_expectations"] = unchecked_json(run);
  j["exit_status"] = compare_exit_status(run);
  return j;
}

}  // namespace impsim
