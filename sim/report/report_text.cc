#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "impsim/base/escape.h"
#include "impsim/base/plural.h"
#include "impsim/base/ratio.h"
#include "impsim/base/text_layout.h"
#include "impsim/report/failures.h"
#include "impsim/report/report.h"
#include "impsim/run/outcome_words.h"

namespace impsim {

namespace {

// Cells hold scenario text (titles, labels): each is escaped for the
// terminal before the widths are measured.
std::string table(std::vector<std::vector<std::string>> rows) {
  for (auto& row : rows)
    for (auto& cell : row) cell = terminal_text(cell);
  return text_table(rows);
}

}  // namespace

namespace {

std::string where(const std::vector<std::string>& traceback) { return traceback.empty() ? "?" : traceback.back(); }

// A line of run_problem: a failure's (`prefix`, its file, line and column)
// stays one line, to be grepped and copied whole; another wraps at 80
// columns.
std::string problem_line(const std::string& prefix, const std::string& text) {
  if (!prefix.empty()) return "  " + prefix + text + "\n";
  return wrap_paragraph(text, "  ", "      ");
}

// A limit that stopped a run, or an exception it raised. Each line that is
// a failure starts with the file, line and column of its step, as
// expectations_text's FAILED lines do; an exception the scenario allows is
// no failure, and its line reads as it always has.
std::string run_problem(const VariantRun& r, const FilePlaces& places, bool allow_error) {
  std::string out;
  if (r.limit) {
    const std::string step = r.limit->traceback.empty() ? "" : r.limit->traceback.back();
    out += problem_line(terminal_text(places.prefix(step)),
                        fmt::format("{}: stopped: limit {} reached at {}: {}", variant_name(r.variant), r.limit->limit,
                                    terminal_text(where(r.limit->traceback)), terminal_text(r.limit->detail)));
    const Counters& c = r.counters;
    // A hook scenario's own counters; Paddle's finder's where it was asked
    // (in a hook scenario without it they are all 0 and say nothing).
    std::string so_far;
    if (r.hooks_used)
      so_far = fmt::format("{} {}, {} {}", grouped(r.hooks.searches), plural(r.hooks.searches, "search", "searches"),
                           grouped(r.hooks.finder_calls), plural(r.hooks.finder_calls, "finder call", "finder calls"));
    if (!r.hooks_used || c.asks != 0)
      so_far += fmt::format("{}{} {}, {} {}, {} {}, {} {}", so_far.empty() ? "" : ", ", grouped(c.asks),
                            plural(c.asks, "ask", "asks"), grouped(c.lookups), plural(c.lookups, "lookup", "lookups"),
                            grouped(c.toggles), plural(c.toggles, "toggle", "toggles"), grouped(c.comparisons),
                            plural(c.comparisons, "comparison", "comparisons"));
    out += "    counters so far: " + so_far + "\n";
  }
  // A scenario without threads lists its main thread only when it hangs:
  // the hang's line says it all.
  if (r.outcome.threads.size() > 1) {
    out += fmt::format(
        "  {}: threads (one schedule: each runs until it blocks or ends; `impsim schedules` searches "
        "them all): {}\n",
        variant_name(r.variant), terminal_text(fmt::format("{}", fmt::join(thread_end_texts(r.outcome.threads), "; "))));
  }
  for (const HangWait& w : r.outcome.hang)
    out += problem_line(allow_error ? "" : terminal_text(places.prefix("")),
                        fmt::format("{}: hangs: {}", variant_name(r.variant), terminal_text(hang_wait_text(w))));
  if (r.outcome.error) {
    const PyError& e = *r.outcome.error;
    const std::string step = e.traceback.empty() ? "" : e.traceback.back();
    out += problem_line(
        allow_error ? "" : terminal_text(places.prefix(step)),
        fmt::format("{}: raised {}: {}", variant_name(r.variant), terminal_text(e.type), terminal_text(e.message)));
    out += "    traceback (outermost first):\n";
    for (auto& p : e.traceback) out += "      " + terminal_text(p) + "\n";
  }
  return out;
}

}  // namespace

namespace {

// The counters table: the sweep table, or every counter side by side.
std::vector<std::vector<std::string>> counter_table(const ScenarioRun& run) {
  const ScenarioFacts& sc = run.scenario;
  std::vector<std::vector<std::string>> t;
  const size_t nv = run.variants.size();
  const size_t nsweep = run.points();

  if (!run.sweep_values.empty()) {
    std::vector<ReportRow> rows = sc.rows;
    if (!sc.counters.empty()) {
      rows.clear();
      for (const std::string& c : sc.counters) rows.push_back({c, c});
    }
    std::vector<std::string> head{sc.sweep->title};
    for (int64_t v : run.sweep_values) head.push_back(std::to_string(v));
    t.push_back(head);
    for (auto& row : rows)
      for (size_t v = 0; v < nv; ++v) {
        std::vector<std::string> line{fmt::format("{}, {}", row.title, variant_name(run.variants[v]))};
        for (size_t s = 0; s < nsweep; ++s) {
          const VariantRun& r = run.at(s, v);
          line.push_back(r.limit ? "limit" : grouped(counter_of(r, row.counter)));
        }
        t.push_back(line);
      }
  } else {
    std::vector<std::string> head{"counter"};
    for (size_t v = 0; v < nv; ++v)
      head.push_back(std::string(variant_name(run.variants[v])) + (run.at(0, v).limit ? " (stopped: partial)" : ""));
    const bool any_stopped = std::any_of(run.runs.begin(), run.runs.end(), [](auto& r) { return r.limit.has_value(); });
    if (nv == 2) head.push_back(fmt::format("{}/{}", variant_name(run.variants[0]), variant_name(run.variants[1])));
    t.push_back(head);
    // A hook scenario's rows are its own (report_counter_names); others, the table's.
    std::vector<std::string> counter_names;
    if (run.runs.front().hooks_used)
      counter_names = report_counter_names(run.runs);
    else
      for (const CounterInfo* c : run.shown_counters()) counter_names.emplace_back(c->name);
    auto add_rows = [&](const std::string& prefix, auto get, bool chosen = false) {
      for (const std::string& name : counter_names) {
        std::vector<std::string> line{prefix + name};
        std::vector<Count> vals;
        for (size_t v = 0; v < nv; ++v) vals.push_back(get(run.at(0, v), name));
        // A labelled step's all-zero counters say nothing: leave them out
        // (chosen ones are shown as asked, zeros included).
        if (!chosen && !prefix.empty() && std::all_of(vals.begin(), vals.end(), [](Count x) { return x == 0; }))
          continue;
        for (Count x : vals) line.push_back(grouped(x));
        if (nv == 2) {
          line.push_back(any_stopped ? "partial" : ratio_text(vals[0], vals[1]));
        }
        t.push_back(line);
      }
    };
    if (!sc.counters.empty()) {
      counter_names = sc.counters;
      add_rows(
          "", [](const VariantRun& r, const std::string& c) { return counter_of(r, c); }, true);
      return t;
    }
    add_rows("", [](const VariantRun& r, const std::string& c) { return counter_of(r, c); });
    for (const std::string& label : sc.labels)
      add_rows(label + ".", [&](const VariantRun& r, const std::string& c) { return counter_of(r, label + "." + c); });
  }
  return t;
}

// What follows the table: expectations, the cost model, the outcome and
// what stopped or raised.
std::string report_tail(const ScenarioRun& run) {
  std::string out;
  const size_t nv = run.variants.size();
  const size_t nsweep = run.points();

  out += "\n" + expectations_text(run);

  // The cost model, at the last (largest) sweep value.
  for (size_t v = 0; v < nv; ++v) {
    const VariantRun& r = run.at(nsweep - 1, v);
    if (r.hooks_used && r.counters.walks == 0) continue;  // no proxy toggles: nothing to model
    // indexed-walk toggles examine the torch names only, not all of sys.modules.
    const bool indexed = design_of(r.variant).indexed_walk;
    // The count, then why it is what it is, a line each (80 columns).
    out += fmt::format(
        "cost model, {}{}{}: comparisons = {}\n  = sum over {} {} of {}\n  <= walks x max {} = {} x {} = {}\n",
        variant_name(r.variant), run.sweep_values.empty() ? "" : " at " + params_text(r.params),
        r.limit ? " (stopped by a limit: counts so far)" : "", grouped(r.counters.comparisons),
        grouped(r.counters.walks), plural(r.counters.walks, "walk", "walks"),
        indexed ? "the torch names in sys.modules" : "len(sys.modules)", indexed ? "torch names" : "modules",
        grouped(r.counters.walks), grouped(r.peak_modules), grouped(r.counters.walks * r.peak_modules));
  }

  // PEP 810: where the searches went, at the last sweep value.
  for (size_t v = 0; v < nv; ++v) {
    const VariantRun& r = run.at(nsweep - 1, v);
    if (!r.lazy) continue;
    std::string kept;
    for (const std::string& n : r.lazy->lazy_modules) kept += (kept.empty() ? "" : ", ") + terminal_text(n);
    out += fmt::format("lazy imports, {}{}: {} lazy {}, {} {}, {} filter {}\n  sys.lazy_modules keeps: {}\n",
                       variant_name(r.variant), run.sweep_values.empty() ? "" : " at " + params_text(r.params),
                       grouped(r.lazy->statements), plural(r.lazy->statements, "statement", "statements"),
                       grouped(r.lazy->resolutions), plural(r.lazy->resolutions, "resolution", "resolutions"),
                       grouped(r.lazy->filter_calls), plural(r.lazy->filter_calls, "call", "calls"),
                       kept.empty() ? "none of the scenario's names" : kept);
  }

  // Outcome verdict. A threaded scenario's run is one schedule: its
  // verdict says so, since `compare` searches them all and can find a
  // design that differs where this one schedule shows none.
  const bool one_schedule = std::any_of(run.runs.begin(), run.runs.end(),
                                        [](const VariantRun& r) { return r.outcome.threads.size() > 1; });
  const std::string on_schedule = one_schedule ? ", on this one schedule (`impsim compare` searches them all)" : "";
  if (nv > 1) {
    for (size_t s = 0; s < nsweep; ++s) {
      std::string at = run.sweep_values.empty() ? "" : " at " + params_text(run.at(s, 0).params);
      if (!run.compared_at[s]) {
        // "variant before stopped at a limit": a design named "before" made
        // "a limit stopped before before the end" of the former wording.
        std::vector<std::string> stopped;
        for (size_t v = 0; v < nv; ++v)
          if (run.at(s, v).limit) stopped.push_back(variant_name(run.variants[v]));
        std::string who;
        for (size_t i = 0; i < stopped.size(); ++i)
          who += (i == 0 ? "" : i + 1 == stopped.size() ? " and " : ", ") + stopped[i];
        out += fmt::format("outcome{}: not compared: {} {} stopped at a limit, short of the end of the program\n", at,
                           plural(stopped.size(), "variant", "variants"), who);
        continue;
      }
      if (run.equivalent_at[s]) {
        if (run.sweep_values.empty() || s == nsweep - 1)
          out += run.equivalent && run.all_compared()
                     ? fmt::format("outcome: identical in every variant{}{}\n",
                                   run.sweep_values.empty() ? "" : " at every sweep value", on_schedule)
                     : "";
        continue;
      }
      for (size_t v = 1; v < nv; ++v) {
        auto diffs = describe_differences(run.at(s, 0).outcome, run.at(s, v).outcome, variant_name(run.variants[0]),
                                          variant_name(run.variants[v]));
        if (diffs.empty()) continue;
        out += fmt::format("outcome{}: {} and {} differ{}:\n", at, variant_name(run.variants[0]),
                           variant_name(run.variants[v]), on_schedule);
        for (auto& d : diffs) out += wrap_paragraph(terminal_text(d), "  - ", "    ");
      }
    }
  }
  const FilePlaces places(run.scenario);
  for (const VariantRun& r : run.runs) {
    std::string p = run_problem(r, places, run.scenario.allow_error);
    if (!p.empty()) {
      if (!run.sweep_values.empty()) out += fmt::format("at {}:\n", params_text(r.params));
      out += p;
    }
  }
  return out;
}

}  // namespace

namespace {

// The points (parameter sets) in a list: "k=5, 6, 7" when they differ in
// one parameter only, else each in full, "; " apart.
std::string points_text(const std::vector<Params>& points) {
  if (points.size() > 1) {
    std::string varying;
    bool one = true;
    for (auto& [k, v] : points[0]) {
      bool varies = std::any_of(points.begin(), points.end(), [&](const Params& p) {
        auto it = p.find(k);
        return it == p.end() || it->second != v;
      });
      if (!varies) continue;
      one = one && varying.empty();
      varying = k;
    }
    if (one && !varying.empty() &&
        std::all_of(points.begin(), points.end(), [&](const Params& p) { return p.size() == points[0].size(); })) {
      std::string s = varying + "=";
      for (size_t i = 0; i < points.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", points[i].at(varying));
      return s;
    }
  }
  std::string s;
  for (const Params& p : points) s += (s.empty() ? "" : "; ") + params_text(p);
  return s;
}

// "  not checked: before probe.lookups, after probe.lookups [k=9]: written
// for k in [1, 2, 3, 4]": the unchecked expectations, a line per reason.
std::string unchecked_text(const ScenarioRun& run) {
  std::vector<std::string> reasons;
  for (const UncheckedExpectation& u : run.unchecked)
    if (std::string why = unchecked_reason(u); std::find(reasons.begin(), reasons.end(), why) == reasons.end())
      reasons.push_back(why);
  std::string out;
  for (const std::string& reason : reasons) {
    std::vector<std::string> names;
    std::vector<Params> points;
    for (const UncheckedExpectation& u : run.unchecked) {
      if (unchecked_reason(u) != reason) continue;
      std::string name = u.kind == "count"     ? variant_name(*u.variant) + " " + u.counter
                         : u.kind == "outcome" ? variant_name(*u.variant) + " outcome"
                                               : std::string("expect_equivalent");
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
      if (u.params && std::find(points.begin(), points.end(), *u.params) == points.end()) points.push_back(*u.params);
    }
    std::string line;
    for (const std::string& n : names) line += (line.empty() ? "" : ", ") + n;
    if (!points.empty()) line += " [" + points_text(points) + "]";
    out += wrap_paragraph(terminal_text(line + ": " + reason), "  not checked: ", "    ");
  }
  return out;
}

}  // namespace

std::string expectations_text(const ScenarioRun& run) {
  std::string out;
  size_t total = 0, held = 0;
  for (const VariantRun& r : run.runs) {
    for (auto& e : r.expectations) {
      ++total;
      held += e.ok;
    }
    if (r.verdict_expected) {
      ++total;
      held += *r.verdict_expected == r.verdict;
    }
  }
  // The FAILED lines, each naming its file, line and column (failures.h).
  std::string failures;
  for (const Failure& f : run_failures(run, false))
    if (f.kind == FailureKind::Expectation) failures += "  " + failure_line(f) + "\n";
  std::string counts = total > 0 ? fmt::format("{}/{} hold", held, total) : "";
  if (!run.unchecked.empty())
    counts += fmt::format("{}{} not checked", counts.empty() ? "" : ", ", run.unchecked.size());
  if (!counts.empty()) out += fmt::format("expectations: {}\n", counts);
  return out + failures + unchecked_text(run);
}

std::string report_text(const ScenarioRun& run) {
  const ScenarioFacts& sc = run.scenario;
  std::string head = terminal_text(sc.name);
  if (!sc.description.empty()) head += ": " + terminal_text(sc.description);
  return wrap_paragraph(head) + "\n" + table(counter_table(run)) + report_tail(run);
}

std::string report_markdown(const ScenarioRun& run, const std::string& command) {
  const ScenarioFacts& sc = run.scenario;
  std::string out = fmt::format("### impsim {}: {}\n\n", command, markdown_text(sc.name));
  if (!sc.description.empty()) out += markdown_text(sc.description, Markdown::Paragraph) + "\n\n";
  out += markdown_table(counter_table(run)) + "\n";
  std::string tail = report_tail(run);
  while (tail.starts_with('\n')) tail.erase(0, 1);
  if (!tail.empty()) out += markdown_code_block(tail);
  return out;
}

}  // namespace impsim
