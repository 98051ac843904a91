#include "impsim/report/schedule_gate.h"

#include <fmt/format.h>

#include <algorithm>

#include "impsim/base/escape.h"
#include "impsim/base/plural.h"
#include "impsim/base/text.h"

namespace impsim {

using nlohmann::ordered_json;

std::optional<FailOn> parse_fail_on(const std::string& text, std::string* why) {
  FailOn out;
  if (text == "all") return out;
  out.kinds = {};
  if (text == "none") return out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string name = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::optional<Finding> f = parse_finding(name);
    if (!f) {
      if (why)
        *why = fmt::format("\"{}\" is not a finding; expected a comma-separated list of hang, deadlock and uncaught, "
                           "or all, or none",
                           name);
      return std::nullopt;
    }
    out.kinds[static_cast<size_t>(*f)] = true;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string fail_on_text(const FailOn& f) {
  std::string out;
  for (Finding k : kFindings)
    if (f.kinds[static_cast<size_t>(k)]) out += (out.empty() ? "" : ",") + std::string(finding_name(k));
  return out.empty() ? "none" : out;
}

GateScenario gate_scenario(const Scenario& sc) {
  return {sc.file, sc.source, sc.allow_error, sc.expect_schedules, {}};
}

std::map<std::string, SourcePos> gate_places(const GateScenario& sc) {
  std::map<std::string, SourcePos> out;
  const FilePlaces places(sc.file, sc.source);
  auto add = [&](const std::string& pointer) {
    if (pointer.empty()) return;
    if (std::optional<SourcePos> pos = places.position(pointer)) out[pointer] = *pos;
    else if (auto it = sc.places.find(pointer); it != sc.places.end()) out[pointer] = it->second;
  };
  add("/threads");
  for (const ScheduleExpectation& e : sc.expect) {
    for (const std::string& p : e.pointers) add(p);
    add(e.classes_pointer);
  }
  return out;
}

bool reaches(const ThreadedOutcome& o, Finding f) {
  switch (f) {
    case Finding::Hang:
      return o.hung();
    case Finding::Deadlock:
      return o.raised("_DeadlockError");
    case Finding::Uncaught:
      for (const ThreadEnd& t : o.end.threads)
        if (t.how == ThreadEnd::How::Raised && t.type != "_DeadlockError") return true;
      return false;
  }
  return false;
}

namespace {

// "as_is" or "as_is [k=4]": which search a failure is about.
std::string search_name(const DesignSearch& t) {
  return variant_name(t.variant) + (t.params.empty() ? "" : " [" + params_text(t.params) + "]");
}

// "hang", "_DeadlockError", "uncaught exception": after "no".
const char* finding_noun(Finding f) {
  switch (f) {
    case Finding::Hang:
      return "hang";
    case Finding::Deadlock:
      return "_DeadlockError";
    case Finding::Uncaught:
      return "uncaught exception";
  }
  return "?";
}

std::string tally_text(const FindingTally& t, const ScheduleSearch& s) {
  std::string out = fmt::format("{} of {} outcome {}, {} of {} schedules", t.classes, s.outcomes.size(),
                                plural(s.outcomes.size(), "class", "classes"), grouped(t.schedules),
                                grouped(s.schedules));
  if (t.example) {
    const std::string& schedule = s.outcomes[*t.example].schedule;
    out += fmt::format("; replay one with --schedule {}", schedule.empty() ? "''" : schedule);
  }
  return out;
}

}  // namespace

ScheduleGate gate_schedules(const GateScenario& sc, const std::vector<const DesignSearch*>& searches,
                            const FailOn& fail_on) {
  ScheduleGate gate;
  gate.fail_on = fail_on;
  const FilePlaces places(sc.file, sc.source);
  // Per failure, for the report's folded lines: a finding nothing accepts
  // has its kind and tally (the key designs fold on), its design and
  // search's name; an expectation's failure has none.
  struct FoldKey {
    std::string key, who, design, phrase, tally, kind;
  };
  std::vector<std::optional<FoldKey>> fold_keys;
  auto fail = [&](FailureKind kind, const std::string& pointer, std::string text) {
    Failure f{kind, sc.file, pointer, std::nullopt, std::move(text)};
    f.pos = places.position(pointer);
    if (auto it = sc.places.find(pointer); !f.pos && it != sc.places.end()) f.pos = it->second;
    gate.failures.push_back(std::move(f));
    fold_keys.emplace_back();
  };
  for (const DesignSearch* t : searches) {
    const ScheduleSearch& s = t->search;
    gate.incomplete += !s.complete;
    SearchGate g;
    for (const ScheduleExpectation& e : sc.expect)
      if (e.variant == t->variant) g.expect = &e;
    for (size_t i = 0; i < s.outcomes.size(); ++i) {
      const OutcomeClass& c = s.outcomes[i];
      for (Finding f : kFindings) {
        if (!reaches(c.outcome, f)) continue;
        FindingTally& tally = g.found[static_cast<size_t>(f)];
        ++tally.classes;
        tally.schedules += c.schedules;
        if (!tally.example || better_representative(c.preemptions, c.schedule, s.outcomes[*tally.example]))
          tally.example = i;
      }
    }
    const std::string who = search_name(*t);
    for (Finding f : kFindings) {
      const size_t k = static_cast<size_t>(f);
      const FindingTally& tally = g.found[k];
      const std::optional<ReachExpected> said = g.expect ? g.expect->findings[k] : std::nullopt;
      if (said == ReachExpected::Never && tally.classes > 0) {
        fail(FailureKind::Expectation, g.expect->pointers[k],
             fmt::format("{}: expected no {} in any schedule; {} reached: {}", who, finding_noun(f), finding_phrase(f),
                         tally_text(tally, s)));
        continue;
      }
      if (said == ReachExpected::Reachable && tally.classes == 0) {
        fail(FailureKind::Expectation, g.expect->pointers[k],
             fmt::format("{}: expected {} to be reachable; the search found none ({})", who, finding_phrase(f),
                         search_coverage(s)));
        continue;
      }
      if (tally.classes == 0) continue;
      g.accepted[k] = said == ReachExpected::Reachable || (f == Finding::Uncaught && sc.allow_error);
      if (g.accepted[k] || !fail_on.kinds[k]) continue;
      g.fails[k] = true;
      fail(FailureKind::Reachable, "/threads",
           fmt::format("{}: {} is reachable: {}. A scenario that documents it accepts it with \"expect_schedules\": "
                       "{{\"{}\": {{\"{}\": \"reachable\"}}}}{}",
                       who, finding_phrase(f), tally_text(tally, s), variant_name(t->variant), finding_name(f),
                       f == Finding::Uncaught ? " (or \"allow_error\": true)" : ""));
      fold_keys.back() = FoldKey{std::string(finding_name(f)) + "\n" + tally_text(tally, s), who,
                                 variant_name(t->variant), finding_phrase(f), tally_text(tally, s),
                                 finding_name(f)};
    }
    if (g.expect && g.expect->classes) {
      g.classes_ok = budget_holds(*g.expect->classes, Count(s.outcomes.size()), std::nullopt);
      if (!*g.classes_ok)
        fail(FailureKind::Expectation, g.expect->classes_pointer,
             fmt::format("{}: expected outcome classes {}, found {} ({})", who, budget_text(*g.expect->classes),
                         s.outcomes.size(), search_coverage(s)));
    }
    gate.searches.push_back(g);
  }
  // The report's lines: the designs that reach a finding alike, on one.
  std::vector<bool> folded(gate.failures.size());
  for (size_t i = 0; i < gate.failures.size(); ++i) {
    if (folded[i]) continue;
    const std::optional<FoldKey>& k = fold_keys[i];
    std::vector<size_t> same{i};
    for (size_t j = i + 1; k && j < gate.failures.size(); ++j)
      if (fold_keys[j] && fold_keys[j]->key == k->key) same.push_back(j);
    if (same.size() == 1) {
      gate.report_lines.push_back(gate.failures[i]);
      continue;
    }
    std::string who, accepts;
    for (size_t n = 0; n < same.size(); ++n) {
      folded[same[n]] = true;
      const FoldKey& x = *fold_keys[same[n]];
      who += (n == 0 ? "" : n + 1 == same.size() ? " and " : ", ") + x.who;
      accepts += fmt::format("{}\"{}\": {{\"{}\": \"reachable\"}}", n == 0 ? "" : ", ", x.design, x.kind);
    }
    Failure line = gate.failures[i];
    line.text = fmt::format(
        "{}: {} is reachable in each: {}. A scenario that documents it accepts it with \"expect_schedules\": {{{}}}{}",
        who, k->phrase, k->tally, accepts, k->kind == finding_name(Finding::Uncaught) ? " (or \"allow_error\": true)" : "");
    gate.report_lines.push_back(std::move(line));
  }
  return gate;
}

std::vector<const DesignSearch*> search_pointers(const std::vector<DesignSearch>& searches) {
  std::vector<const DesignSearch*> out;
  for (const DesignSearch& t : searches) out.push_back(&t);
  return out;
}

int schedules_exit_status(const std::vector<const DesignSearch*>& searches, const ScheduleGate& gate) {
  for (const DesignSearch* t : searches)
    if (t->search.error) return 1;
  return gate.exit_status();
}

std::string schedule_gate_text(const ScheduleGate& gate, bool markdown) {
  const std::string head = fmt::format("gate (--fail-on {}): ", fail_on_text(gate.fail_on));
  if (gate.failures.empty()) {
    std::vector<std::string> accepted;
    for (const SearchGate& g : gate.searches)
      for (Finding f : kFindings)
        if (g.accepted[static_cast<size_t>(f)]) accepted.emplace_back(finding_name(f));
    const std::string within =
        gate.incomplete == 0
            ? ""
            : fmt::format(" (within what {} of {} {} ran: each says its coverage)", gate.incomplete,
                          gate.searches.size(), plural(gate.searches.size(), "search", "searches"));
    const auto line = [&](const std::string& s) {
      return markdown ? "\n" + markdown_text(s + within, Markdown::Paragraph) + "\n" : s + within + "\n";
    };
    if (accepted.empty()) return line(head + "passed");
    std::sort(accepted.begin(), accepted.end());
    accepted.erase(std::unique(accepted.begin(), accepted.end()), accepted.end());
    std::string list;
    for (const std::string& a : accepted) list += (list.empty() ? "" : ", ") + a;
    return line(head + "passed; reachable and accepted by the scenario: " + list);
  }
  std::string out = head + fmt::format("{} {}\n", gate.failures.size(), plural(gate.failures.size(), "failure", "failures"));
  // Markdown: each line escaped on its own (a file's name is not to end the
  // list or open a fence).
  if (markdown) out = "\n" + markdown_text(out.substr(0, out.size() - 1), Markdown::Paragraph) + "\n";
  for (const Failure& f : gate.report_lines)
    out += markdown ? "- " + markdown_text(failure_line(f), Markdown::Inline) + "\n" : "  " + failure_line(f) + "\n";
  return out;
}

ordered_json schedule_gate_json(const ScheduleGate& gate) {
  ordered_json kinds = ordered_json::array();
  for (Finding f : kFindings)
    if (gate.fail_on.kinds[static_cast<size_t>(f)]) kinds.push_back(finding_name(f));
  ordered_json failures = ordered_json::array();
  for (const Failure& f : gate.failures) {
    ordered_json e = {{"kind", f.kind == FailureKind::Expectation ? "expectation" : "reachable"},
                      {"pointer", f.pointer}};
    e["line"] = f.pos ? ordered_json(f.pos->line) : ordered_json();
    e["column"] = f.pos ? ordered_json(f.pos->column) : ordered_json();
    e["message"] = f.text;
    failures.push_back(std::move(e));
  }
  return {{"fail_on", std::move(kinds)},
          {"passed", gate.failures.empty()},
          {"incomplete_searches", gate.incomplete},
          {"failures", std::move(failures)}};
}

ordered_json expect_schedules_json(const ScheduleExpectation& e) {
  ordered_json out = ordered_json::object();
  for (Finding f : kFindings)
    if (const std::optional<ReachExpected> said = e.findings[static_cast<size_t>(f)])
      out[finding_name(f)] = reach_name(*said);
  if (e.classes) out["classes"] = budget_json(*e.classes);
  return out;
}

ordered_json search_findings_json(const SearchGate& g) {
  ordered_json out = ordered_json::object();
  for (Finding f : kFindings) {
    const size_t k = static_cast<size_t>(f);
    ordered_json expected;  // null: the scenario says nothing of it
    if (g.expect && g.expect->findings[k])
      expected = reach_name(*g.expect->findings[k]);
    out[finding_name(f)] = {{"classes", g.found[k].classes},
                            {"schedules", g.found[k].schedules},
                            {"expected", std::move(expected)},
                            {"accepted", g.accepted[k]},
                            {"fails", g.fails[k]}};
  }
  if (g.expect && g.expect->classes)
    out["classes"] = {{"expected", budget_json(*g.expect->classes)}, {"ok", *g.classes_ok}};
  return out;
}

}  // namespace impsim
