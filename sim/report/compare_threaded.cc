// compare on a threaded scenario (include/impsim/report/compare_threaded.h).
#include "impsim/report/compare_threaded.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "impsim/base/errors.h"
#include "impsim/base/escape.h"
#include "impsim/base/plural.h"
#include "impsim/base/text_layout.h"
#include "impsim/base/version.h"
#include "impsim/report/report.h"
#include "impsim/report/schedules_report.h"
#include "impsim/report/threaded_outcome_text.h"

namespace impsim {

using nlohmann::ordered_json;

namespace {

// The point as the report lists it: each design's outcome classes, and the
// ends, in the order of their lines.
EndsByDesign in_text_order(const EndsByDesign& point) {
  EndsByDesign out = point;
  std::vector<std::vector<size_t>> moved_to(point.searches.size());  // by design: old index -> new
  for (size_t v = 0; v < point.searches.size(); ++v) {
    const std::vector<OutcomeClass>& classes = point.searches[v].search.outcomes;
    const std::vector<size_t> order = classes_by_text(classes);
    moved_to[v].resize(order.size());
    for (size_t k = 0; k < order.size(); ++k) {
      out.searches[v].search.outcomes[k] = classes[order[k]];
      moved_to[v][order[k]] = k;
    }
  }
  std::vector<std::pair<std::string, size_t>> ends;
  for (size_t i = 0; i < out.ends.size(); ++i) {
    for (size_t v = 0; v < out.ends[i].designs.size(); ++v) {
      if (!out.ends[i].designs[v]) continue;
      DesignReach& d = *out.ends[i].designs[v];
      for (size_t& k : d.outcomes) k = moved_to[v][k];
      std::sort(d.outcomes.begin(), d.outcomes.end());
      d.representative = moved_to[v][d.representative];
    }
    // Ends reached by the same designs sit together (the text report
    // lists them under one line saying which): those every design
    // reaches first, then by the first design that does not.
    std::string unreached;
    for (const auto& d : out.ends[i].designs) unreached += d ? '0' : '1';
    ends.emplace_back(unreached + '\n' + outcome_end_text(out.ends[i].end), i);
  }
  std::sort(ends.begin(), ends.end());
  std::vector<ThreadedEnd> sorted;
  for (const auto& [_, i] : ends) sorted.push_back(std::move(out.ends[i]));
  out.ends = std::move(sorted);
  return out;
}

std::string preemptions_text(int n) {
  return fmt::format("{} {}", n, plural(static_cast<uint64_t>(n), "preemption", "preemptions"));
}

std::string schedules_text(uint64_t n) { return fmt::format("{} {}", n, plural(n, "schedule", "schedules")); }

// "1, 3 and 4", "1 to 14 and 16": ends by their number in the list (from
// 0 in `ends`, sorted), a run of three or more as its first and last.
std::string numbers_text(const std::vector<size_t>& ends) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < ends.size();) {
    size_t j = i;
    while (j + 1 < ends.size() && ends[j + 1] == ends[j] + 1) ++j;
    if (j - i >= 2) {
      parts.push_back(fmt::format("{} to {}", ends[i] + 1, ends[j] + 1));
    } else {
      for (size_t k = i; k <= j; ++k) parts.push_back(fmt::format("{}", ends[k] + 1));
    }
    i = j + 1;
  }
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return out;
}

std::string names_text(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

// Which designs reach an end: every one, or those that do and, each with
// what its search covered, those that never do (only within the search).
struct Reach {
  std::vector<std::string> by, never, unsearched;
  std::string text;     // each "never" with its search's coverage (JSON, Markdown)
  std::string heading;  // the same without it: the text report says each search's once, above
};

Reach reach_of(const EndsByDesign& point, const ThreadedEnd& e) {
  Reach r;
  std::vector<std::string> never_within;
  for (size_t v = 0; v < point.searches.size(); ++v) {
    const DesignSearch& t = point.searches[v];
    const std::string name = variant_name(t.variant);
    if (t.search.error)
      r.unsearched.push_back(name);
    else if (e.designs[v])
      r.by.push_back(name);
    else {
      r.never.push_back(name);
      never_within.push_back(fmt::format("{} ({})", name, search_coverage(t.search)));
    }
  }
  auto sentence = [&](const std::vector<std::string>& never) {
    if (r.never.empty() && r.unsearched.empty()) return std::string("reached by every design");
    std::string text = fmt::format("reached by {}{}", names_text(r.by), r.by.size() == 1 ? " only" : "");
    if (!never.empty()) text += "; never by " + names_text(never);
    if (!r.unsearched.empty()) text += "; not searched: " + names_text(r.unsearched);
    return text;
  };
  r.text = sentence(never_within);
  r.heading = sentence(r.never) + ":";
  return r;
}

// A design against the baseline: the same ends, or which differ.
struct DesignVerdict {
  std::optional<bool> identical;  // nullopt: not compared, a search meant nothing
  std::vector<size_t> only_this, only_baseline;
  std::string text;
};

DesignVerdict verdict_of(const EndsByDesign& point, size_t v) {
  DesignVerdict d;
  const std::string base = variant_name(point.searches[0].variant);
  for (size_t s : {size_t{0}, v})
    if (point.searches[s].search.error) {
      d.text = fmt::format("not compared: {}'s search means nothing", variant_name(point.searches[s].variant));
      return d;
    }
  for (size_t i = 0; i < point.ends.size(); ++i) {
    const ThreadedEnd& e = point.ends[i];
    if (e.designs[v] && !e.designs[0]) d.only_this.push_back(i);
    if (!e.designs[v] && e.designs[0]) d.only_baseline.push_back(i);
  }
  d.identical = d.only_this.empty() && d.only_baseline.empty();
  size_t reached = 0;
  for (const ThreadedEnd& e : point.ends) reached += e.designs[0] ? 1 : 0;
  if (*d.identical) {
    d.text = fmt::format("identical: the same {} {}", reached, plural(reached, "end", "ends"));
    return d;
  }
  std::vector<std::string> parts;
  if (!d.only_this.empty())
    parts.push_back(fmt::format("reaches {} {}, which {} never does", plural(d.only_this.size(), "end", "ends"),
                                numbers_text(d.only_this), base));
  if (!d.only_baseline.empty())
    parts.push_back(fmt::format("never reaches {} {}, which {} does", plural(d.only_baseline.size(), "end", "ends"),
                                numbers_text(d.only_baseline), base));
  d.text = "differs: " + parts.front() + (parts.size() > 1 ? "; " + parts.back() : "");
  return d;
}

std::string search_line(const DesignSearch& t) {
  std::string line = fmt::format("{}: {}", variant_name(t.variant), search_coverage(t.search));
  if (t.search.error) return line + "; " + *t.search.error;
  return line +
         fmt::format("; {} {}", t.search.outcomes.size(), plural(t.search.outcomes.size(), "outcome", "outcomes"));
}

// The text report's line for a design's search: how the designs were
// searched (the same flags for each) is said once, in the heading, and
// that each covered every schedule within the bound too, where each did.
std::string search_extent_line(const DesignSearch& t, bool all_complete) {
  std::string line = fmt::format("{}: {}", variant_name(t.variant),
                                 all_complete ? fmt::format("{} {}", t.search.schedules,
                                                            plural(t.search.schedules, "schedule", "schedules"))
                                              : search_extent(t.search));
  if (t.search.error) return line + "; " + *t.search.error;
  return line +
         fmt::format(", {} {}", t.search.outcomes.size(), plural(t.search.outcomes.size(), "outcome", "outcomes"));
}

// The lines under one end of the text report: the designs that reach it,
// those with the same count and schedule to replay on one line, then
// under it the counters, designs with the same ones together.
std::string end_designs_text(const EndsByDesign& point, const ThreadedEnd& e) {
  struct Group {
    std::vector<size_t> designs;
    uint64_t schedules = 0;
    std::string schedule;
    int preemptions = 0;
  };
  std::vector<Group> groups;
  for (size_t v = 0; v < point.searches.size(); ++v) {
    if (!e.designs[v]) continue;
    const DesignReach& d = *e.designs[v];
    const OutcomeClass& c = point.searches[v].search.outcomes[d.representative];
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.schedules == d.schedules && g.schedule == c.schedule && g.preemptions == c.preemptions;
    });
    if (it == groups.end()) groups.push_back({{v}, d.schedules, c.schedule, c.preemptions});
    else it->designs.push_back(v);
  }
  auto names_of = [&](const std::vector<size_t>& designs) {
    std::vector<std::string> names;
    for (size_t v : designs) names.push_back(variant_name(point.searches[v].variant));
    return names_text(names);
  };
  std::string out;
  for (const Group& g : groups) {
    // One line, the schedule last and whole: it is what gets copied.
    out += terminal_text(fmt::format("     {}: {}{}, replay ({}) with --schedule {}", names_of(g.designs),
                                     schedules_text(g.schedules), g.designs.size() == 1 ? "" : " each",
                                     preemptions_text(g.preemptions), g.schedule.empty() ? "''" : g.schedule)) +
           "\n";
    // The counters, which is where designs that end alike differ.
    std::vector<std::pair<std::string, std::vector<size_t>>> by_counters;
    for (size_t v : g.designs) {
      const DesignReach& d = *e.designs[v];
      const std::vector<OutcomeClass>& classes = point.searches[v].search.outcomes;
      std::string text;
      if (d.outcomes.size() == 1) {
        text = outcome_counters_text(classes[d.outcomes.front()].outcome.counters);
      } else {
        text = fmt::format("in {} outcomes by their counters: ", d.outcomes.size());
        for (size_t i = 0; i < d.outcomes.size(); ++i)
          text += fmt::format("{}{}: {}", i == 0 ? "" : "; ", schedules_text(classes[d.outcomes[i]].schedules),
                              outcome_counters_text(classes[d.outcomes[i]].outcome.counters));
      }
      auto it = std::find_if(by_counters.begin(), by_counters.end(), [&](const auto& c) { return c.first == text; });
      if (it == by_counters.end()) by_counters.push_back({text, {v}});
      else it->second.push_back(v);
    }
    // Under the line that names the designs: their names again only
    // where their counters differ.
    for (const auto& [text, designs] : by_counters)
      out += wrap_paragraph(terminal_text(by_counters.size() == 1 ? text : names_of(designs) + ": " + text), "       ",
                            "         ");
  }
  return out;
}

std::string point_text(const EndsByDesign& point, bool md) {
  std::string out;
  const std::string base = variant_name(point.searches[0].variant);
  if (md) {
    out += "Each design's schedules, searched as `impsim schedules --variant DESIGN` searches them:\n\n";
    for (const DesignSearch& t : point.searches) out += "- " + markdown_text(search_line(t)) + "\n";
    out += "\n";
    std::vector<std::vector<std::string>> table;
    std::vector<std::string> head{"the threads end with"};
    for (const DesignSearch& t : point.searches) head.push_back(variant_name(t.variant));
    head.emplace_back("verdict");
    table.push_back(head);
    for (size_t i = 0; i < point.ends.size(); ++i) {
      const ThreadedEnd& e = point.ends[i];
      std::vector<std::string> row{fmt::format("{}. {}", i + 1, outcome_end_text(e.end))};
      for (size_t v = 0; v < point.searches.size(); ++v) {
        const DesignSearch& t = point.searches[v];
        if (t.search.error)
          row.emplace_back("not searched");
        else if (!e.designs[v])
          row.emplace_back("never");
        else {
          const OutcomeClass& c = t.search.outcomes[e.designs[v]->representative];
          row.push_back(fmt::format("{}, --schedule {} ({})", schedules_text(e.designs[v]->schedules),
                                    c.schedule.empty() ? "''" : c.schedule, preemptions_text(c.preemptions)));
        }
      }
      const Reach r = reach_of(point, e);
      row.push_back(r.never.empty() && r.unsearched.empty() ? "every design"
                    : r.by.size() == 1                      ? "only " + r.by.front()
                                                            : names_text(r.by));
      table.push_back(row);
    }
    out += markdown_table(table) + "\n";
    out += "A \"never\" holds within the design's search, listed above.\n\n";
    out += "**Against `" + base + "`:**\n\n";
    for (size_t v = 1; v < point.searches.size(); ++v)
      out += fmt::format("- `{}`: {}\n", variant_name(point.searches[v].variant),
                         markdown_text(verdict_of(point, v).text));
    return out + "\n";
  }
  // The designs are searched with the same flags: the kind and bound are
  // said once, and "every one within the bound" too where every search
  // covered its bound.
  const std::string shared = search_how(point.searches.front().search.options);
  bool all_complete = true;
  for (const DesignSearch& t : point.searches)
    all_complete = all_complete && !t.search.error && t.search.complete && t.search.options.kind == SearchKind::Exhaustive;
  out += wrap_paragraph(terminal_text(fmt::format(
      "each design's schedules, as `impsim schedules --variant DESIGN` searches them ({}{}):", shared,
      all_complete ? ", every schedule within the bound" : "")));
  for (const DesignSearch& t : point.searches)
    out += "  " + terminal_text(search_extent_line(t, all_complete)) + "\n";
  out += "\n" + wrap_paragraph(fmt::format("{} {} of the threads, by the designs that reach them (a \"never\" holds "
                                          "within the design's search, above):",
                                          point.ends.size(), plural(point.ends.size(), "end", "ends")));
  std::string heading;
  for (size_t i = 0; i < point.ends.size(); ++i) {
    const ThreadedEnd& e = point.ends[i];
    if (std::string h = reach_of(point, e).heading; h != heading) {
      heading = h;
      out += wrap_paragraph(terminal_text(h));
    }
    out += wrap_paragraph(terminal_text(fmt::format("{}. {}", i + 1, outcome_end_text(e.end))), "  ", "     ");
    out += end_designs_text(point, e);
  }
  out += fmt::format("\nverdict against {}:\n", base);
  for (size_t v = 1; v < point.searches.size(); ++v)
    out += wrap_paragraph(
        terminal_text(fmt::format("{}: {}", variant_name(point.searches[v].variant), verdict_of(point, v).text)), "  ",
        "    ");
  return out + "\n";
}

// A threaded scenario's expectations are of the one schedule `impsim run`
// follows: said, not checked against every schedule.
std::string unchecked_expectations(const Scenario& sc) {
  if (sc.expect.empty() && sc.expect_outcome.empty() && !sc.expect_equivalent) return "";
  return "the scenario's expectations are of the schedule `impsim run` follows, which checks them; compare across "
         "schedules does not";
}

ordered_json classes_json(const std::vector<OutcomeClass>& classes) {
  ordered_json out = ordered_json::array();
  for (const OutcomeClass& c : classes)
    out.push_back(
        {{"outcome", threaded_outcome_text(c.outcome)}, {"threaded", threaded_json(c.outcome)}, {"schedules", c.schedules},
         {"schedule", c.schedule}, {"preemptions", c.preemptions}});
  return out;
}

}  // namespace

std::vector<const DesignSearch*> compared_searches(const std::vector<EndsByDesign>& points) {
  std::vector<const DesignSearch*> out;
  for (const EndsByDesign& p : points) {
    const std::vector<const DesignSearch*> of_point = search_pointers(p.searches);
    out.insert(out.end(), of_point.begin(), of_point.end());
  }
  return out;
}

int compare_threaded_exit_status(const ThreadedComparison& c) {
  const std::vector<const DesignSearch*> searches = compared_searches(c.points);
  if (c.gate) return schedules_exit_status(searches, *c.gate) == 0 ? kExitOk : kExitFailed;
  for (const DesignSearch* t : searches)
    if (t->search.error) return kExitFailed;
  return kExitOk;
}

std::string compare_threaded_text(const ThreadedComparison& c, CompareFormat format) {
  const Scenario& sc = *c.scenario;
  const bool md = format == CompareFormat::Markdown;
  std::string out = compare_heading(sc.name, sc.description, md);
  for (const EndsByDesign& unordered : c.points) {
    const EndsByDesign point = in_text_order(unordered);
    if (!point.params.empty())
      out += md ? fmt::format("Parameters: {}.\n\n", params_text(point.params))
                : fmt::format("at {}\n", params_text(point.params));
    out += point_text(point, md);
  }
  if (const std::string why = unchecked_expectations(sc); !why.empty())
    out += md ? "Not checked: " + markdown_text(why) + ".\n" : wrap_paragraph("not checked: " + why + ".") + "\n";
  if (c.gate) out += schedule_gate_text(*c.gate, md);
  return out;
}

ordered_json compare_threaded_json(const ThreadedComparison& c) {
  const Scenario& sc = *c.scenario;
  const EndsByDesign& first = c.points.front();
  ordered_json j;
  j["impsim"] = 1;
  j["version"] = impsim_version();
  j["axes"] = {{"revision", revision_name(first.axes.revision)}, {"cpython", cpython_name(first.axes.cpython)}};
  j["scenario"] = sc.name;
  j["file"] = sc.file;
  j["baseline"] = variant_name(first.searches.front().variant);
  ordered_json vs = ordered_json::array();
  for (const DesignSearch& t : first.searches) vs.push_back(variant_name(t.variant));
  j["variants"] = vs;
  const SearchOptions& o = first.searches.front().search.options;
  ordered_json search;
  search["search"] = search_kind_name(o.kind);
  if (o.kind == SearchKind::Exhaustive)
    search["preemption_bound"] = o.preemption_bound;
  else
    search["seed"] = o.seed;
  if (o.kind == SearchKind::Pct) search["pct_depth"] = o.pct_depth;
  search["max_schedules"] = o.max_schedules;
  j["search"] = search;
  ordered_json points = ordered_json::array();
  for (const EndsByDesign& unordered : c.points) {
    const EndsByDesign point = in_text_order(unordered);
    ordered_json p;
    ordered_json params = ordered_json::object();
    for (auto& [k, v] : point.params) params[k] = v;
    p["params"] = params;
    // Each design's search as `impsim schedules --format json` writes it.
    ordered_json searches = ordered_json::object();
    for (const DesignSearch& t : point.searches) {
      ordered_json s;
      s["schedules"] = t.search.schedules;
      s["complete"] = t.search.complete;
      s["shrink_runs"] = t.search.shrink_runs;
      s["coverage"] = search_coverage(t.search);
      if (t.search.error) s["error"] = *t.search.error;
      s["outcomes"] = classes_json(t.search.outcomes);
      searches[variant_name(t.variant)] = s;
    }
    p["searches"] = searches;
    ordered_json ends = ordered_json::array();
    for (const ThreadedEnd& e : point.ends) {
      const Reach r = reach_of(point, e);
      ordered_json je;
      je["end"] = outcome_end_text(e.end);
      je["reached_by"] = r.by;
      je["never"] = r.never;
      je["verdict"] = r.text;
      ordered_json designs = ordered_json::object();
      for (size_t v = 0; v < point.searches.size(); ++v) {
        if (!e.designs[v]) continue;
        const DesignReach& d = *e.designs[v];
        const OutcomeClass& best = point.searches[v].search.outcomes[d.representative];
        ordered_json jd;
        jd["schedules"] = d.schedules;
        jd["schedule"] = best.schedule;
        jd["preemptions"] = best.preemptions;
        ordered_json outcomes = ordered_json::array();
        for (size_t k : d.outcomes) outcomes.push_back(threaded_outcome_text(point.searches[v].search.outcomes[k].outcome));
        jd["outcomes"] = outcomes;
        designs[variant_name(point.searches[v].variant)] = jd;
      }
      je["designs"] = designs;
      ends.push_back(je);
    }
    p["ends"] = ends;
    ordered_json verdicts = ordered_json::object();
    for (size_t v = 1; v < point.searches.size(); ++v) {
      const DesignVerdict d = verdict_of(point, v);
      ordered_json jv;
      jv["identical"] = d.identical ? ordered_json(*d.identical) : ordered_json(nullptr);
      ordered_json only_this = ordered_json::array(), only_baseline = ordered_json::array();
      for (size_t i : d.only_this) only_this.push_back(i + 1);
      for (size_t i : d.only_baseline) only_baseline.push_back(i + 1);
      jv["ends_only_here"] = only_this;
      jv["ends_only_in_baseline"] = only_baseline;
      jv["text"] = d.text;
      verdicts[variant_name(point.searches[v].variant)] = jv;
    }
    p["verdicts"] = verdicts;
    points.push_back(p);
  }
  j["points"] = points;
  if (const std::string why = unchecked_expectations(sc); !why.empty()) j["expectations_not_checked"] = why;
  if (c.gate) j["gate"] = schedule_gate_json(*c.gate);
  j["exit_status"] = compare_threaded_exit_status(c);
  return j;
}

}  // namespace impsim
