#include "impsim/run/sweep.h"


#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "impsim/scenario/counters.h"
#include "impsim/base/did_you_mean.h"
#include "impsim/base/number.h"

namespace impsim {

namespace {

UsageError bad(const std::string& message) { return UsageError("<command line>", message); }

int64_t parse_int(const std::string& s, const std::string& whole) {
  std::string why;
  if (const std::optional<int64_t> v = parse_integer_as<int64_t>(s, INT64_MIN, INT64_MAX, &why)) return *v;
  throw bad(fmt::format("--values {}: {} (the values are A..B or A,B,C, such as 1..8)", whole, why));
}

[[noreturn]] void too_many(const std::string& text, size_t max_values) {
  throw InputLimitError("max-sweep-values", "<command line>", {}, "",
                        fmt::format("--values {}: more than {} values (--max-sweep-values)", text, max_values));
}

}  // namespace

std::vector<int64_t> parse_sweep_values(const std::string& text, size_t max_values) {
  std::vector<int64_t> out;
  size_t start = 0;
  if (text.empty()) throw bad("--values: empty; expected A..B or A,B,C, such as 1..8");
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (auto dots = item.find(".."); dots != std::string::npos) {
      int64_t a = parse_int(item.substr(0, dots), text), b = parse_int(item.substr(dots + 2), text);
      if (b < a) throw bad(fmt::format("--values {}: the range {} goes down; write it as {}..{}", text, item, b, a));
      // b - a overflows int64 for a range such as INT64_MIN..INT64_MAX, and
      // `v <= b; ++v` never ends when b is INT64_MAX: count in uint64 instead.
      const uint64_t span = static_cast<uint64_t>(b) - static_cast<uint64_t>(a);
      if (span >= max_values || out.size() + span >= max_values) too_many(text, max_values);
      for (uint64_t k = 0; k <= span; ++k) out.push_back(static_cast<int64_t>(static_cast<uint64_t>(a) + k));
    } else {
      out.push_back(parse_int(item, text));
    }
    if (out.size() > max_values) too_many(text, max_values);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  // A value twice would run twice and make two columns of one: a mistake.
  std::vector<int64_t> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  if (auto dup = std::adjacent_find(sorted.begin(), sorted.end()); dup != sorted.end())
    throw bad(fmt::format("--values {}: {} is given twice", text, *dup));
  return out;
}

std::string sweep_values_text(const std::vector<int64_t>& values) {
  std::vector<std::string> items;
  for (size_t i = 0; i < values.size();) {
    size_t j = i;
    while (j + 1 < values.size() && values[j] != INT64_MAX && values[j + 1] == values[j] + 1) ++j;
    // Two in a row read better as "1,2" than as "1..2".
    if (j >= i + 2) items.push_back(fmt::format("{}..{}", values[i], values[j]));
    else
      for (size_t k = i; k <= j; ++k) items.push_back(std::to_string(values[k]));
    i = j + 1;
  }
  if (items.size() > 12) {
    std::string last = items.back();
    items.resize(10);
    items.push_back("...");
    items.push_back(last);
    return fmt::format("{} ({} values)", fmt::join(items, ","), values.size());
  }
  return fmt::format("{}", fmt::join(items, ","));
}

void check_counter_flags(const Scenario& sc, const std::vector<std::string>& counters, const std::string& flag) {
  for (auto& c : counters) {
    const std::string counter = c.substr(c.find('.') == std::string::npos ? 0 : c.find('.') + 1);
    if (!is_counter_name(counter) && !is_hook_counter_name(sc, counter))
      throw bad(fmt::format("{} {}: unknown counter{}; expected {}, optionally after \"LABEL.\"", flag, c,
                            did_you_mean_note(counter, counter_names(sc)), counter_list(sc)));
    if (auto dot = c.find('.'); dot != std::string::npos &&
                                std::find(sc.labels.begin(), sc.labels.end(), c.substr(0, dot)) == sc.labels.end())
      throw bad(fmt::format("{} {}: the scenario has no step labelled \"{}\"{}", flag, c, c.substr(0, dot),
                            did_you_mean_note(c.substr(0, dot), sc.labels)));
  }
}

SweepResult run_sweep(const Scenario& sc, const SweepOptions& options) {
  if (!sc.params.count(options.param)) {
    std::string known;
    for (auto& p : sc.param_order) known += (known.empty() ? "" : ", ") + p;
    throw bad(fmt::format("--param {}: the scenario has no parameter \"{}\"{}; {}", options.param, options.param,
                          did_you_mean_note(options.param, sc.param_order),
                          known.empty() ? "it has none" : "it has: " + known));
  }
  if (options.run.overrides.count(options.param))
    throw bad(fmt::format("--set {}=...: {} is the swept parameter; give its values with --values", options.param,
                          options.param));
  if (options.values.empty()) throw bad("--values: no values");
  check_counter_flags(sc, options.counters, "--counter");

  SweepResult out;
  Scenario s = sc;
  std::string title = options.param;
  if (sc.sweep && sc.sweep->param == options.param) title = sc.sweep->title;
  s.sweep = Sweep{options.param, options.values, title};
  if (!options.counters.empty()) {
    s.report.clear();
    for (auto& c : options.counters) s.report.push_back({c, c});
  }

  // Re-align the expectations: each one keeps the values it states for the
  // parameter values run again, and is not checked at the others, which the
  // report says (`gaps`: the values of entry j left without one).
  const std::string written_for =
      sc.sweep && sc.sweep->param == options.param
          ? fmt::format("written for the scenario's sweep, {}={}", options.param, sweep_values_text(sc.sweep->values))
      : sc.sweep ? fmt::format("written for the scenario's sweep of {}, not of {}", sc.sweep->param, options.param)
                 : fmt::format("written for {}={}", options.param, sc.params.at(options.param));
  std::vector<Expectation> kept;
  std::vector<std::vector<size_t>> gaps;
  for (const Expectation& e : sc.expect) {
    Expectation n = e;
    n.values.assign(options.values.size(), std::nullopt);
    n.budgets.assign(options.values.size(), std::nullopt);
    n.listed = false;  // its indices are not the file's: annotations point at the entry
    std::vector<size_t> gap;
    for (size_t i = 0; i < options.values.size(); ++i) {
      std::optional<size_t> at;
      if (sc.sweep && sc.sweep->param == options.param) {
        auto it = std::find(sc.sweep->values.begin(), sc.sweep->values.end(), options.values[i]);
        if (it != sc.sweep->values.end()) at = e.values.size() == 1 ? 0 : static_cast<size_t>(it - sc.sweep->values.begin());
      } else if (!sc.sweep && options.values[i] == sc.params.at(options.param)) {
        at = 0;
      }
      if (!at) gap.push_back(i);
      if (at && *at < e.values.size() && e.values[*at]) n.values[i] = e.values[*at];
      if (at && e.budget_at(*at)) n.budgets[i] = *e.budget_at(*at);
    }
    // An entry the scenario checks nowhere (every value null) has no gap.
    if (std::none_of(e.values.begin(), e.values.end(), [](auto& x) { return x.has_value(); }) &&
        std::none_of(e.budgets.begin(), e.budgets.end(), [](auto& b) { return b.has_value(); }))
      gap.clear();
    kept.push_back(std::move(n));
    gaps.push_back(std::move(gap));
  }
  s.expect = std::move(kept);

  // What runs is `s` but for its verdict lists: one is aligned with the
  // scenario's own sweep, not with these values, so only verdicts that hold
  // for every value carry over. The report still shows `s`.
  Scenario one = s;
  std::vector<UncheckedExpectation> dropped;
  for (const Scenario::OutcomeExpectation& e : one.expect_outcome)
    if (e.verdicts.size() != 1)
      dropped.push_back({"outcome", e.variant, "", std::nullopt, e.pointer,
                         "a verdict list written for the scenario's own sweep"});
  std::erase_if(one.expect_outcome, [](const Scenario::OutcomeExpectation& e) { return e.verdicts.size() != 1; });
  RunOptions run = options.run;
  run.progress = options.progress;
  out.run = run_scenario(one, run);
  out.run.scenario = ScenarioFacts::of(s);
  out.run.equivalence_failure = equivalence_failure(s, out.run);
  // The values this sweep adds: where the scenario's expectations say nothing.
  std::vector<UncheckedExpectation>& unchecked = out.run.unchecked;
  for (size_t j = 0; j < sc.expect.size(); ++j) {
    const Expectation& e = sc.expect[j];
    auto v = std::find(out.run.variants.begin(), out.run.variants.end(), e.variant);
    auto add = [&](UncheckedExpectation u) {
      const bool listed = std::any_of(unchecked.begin(), unchecked.end(), [&](const UncheckedExpectation& x) {
        return x.kind == "count" && x.variant == e.variant && x.counter == e.counter && x.params == u.params;
      });
      if (!listed) unchecked.push_back(std::move(u));
    };
    if (v == out.run.variants.end()) {
      if (!gaps[j].empty())
        add({"count", e.variant, e.counter, std::nullopt, e.pointer, "", UncheckedWhy::NotRun, e.variant});
      continue;
    }
    for (size_t i : gaps[j])
      add({"count", e.variant, e.counter, out.run.at(i, static_cast<size_t>(v - out.run.variants.begin())).params,
           e.pointer, written_for});
  }
  unchecked.insert(unchecked.end(), dropped.begin(), dropped.end());
  return out;
}


}  // namespace impsim
