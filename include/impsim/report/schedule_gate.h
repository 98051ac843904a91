// Whether the schedule searches of a threaded scenario pass a CI job: the
// verdict `impsim schedules` and `compare` exit with.
//
// A search finds, per design, the outcome classes that hang, that raise
// CPython's _DeadlockError and that raise any other exception. Each of
// those kinds the command fails on (--fail-on, all three unless told) fails
// the job when it is reachable, unless the scenario accepts it: its
// `expect_schedules` says "reachable" for that design (a scenario that
// documents a known deadlock), or, for an uncaught exception, its
// `allow_error`. What `expect_schedules` says is checked as `run` checks
// `expect`: "never" fails on any schedule that reaches it, "reachable"
// fails when the search found none, and "classes" bounds the number of
// outcome classes. A "never" that held holds only within the search
// (its coverage says how far it looked); the report says so.
//
// Each failure is a Failure (failures.h), tied to the scenario's line: the
// expectation's entry, or "threads" for a finding nothing accepts. So it
// reads the same in the report, under --quiet, in a GitHub annotation and
// in the step summary.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "impsim/report/failures.h"
#include "impsim/run/schedules.h"
#include "impsim/scenario/schedule_expectations.h"

namespace impsim {

// The kinds a job fails on (--fail-on): by Finding.
struct FailOn {
  std::array<bool, kFindings.size()> kinds{true, true, true};
  bool operator==(const FailOn&) const = default;
};
// "hang,deadlock", "all" or "none"; nullopt and `why` for anything else.
std::optional<FailOn> parse_fail_on(const std::string& text, std::string* why);
// "hang,deadlock,uncaught", "none": as --fail-on takes it.
std::string fail_on_text(const FailOn& f);

// What the scenario gates on, beside the searches: its file (and text, for
// line and column), `allow_error` and `expect_schedules`.
struct GateScenario {
  std::string file;
  std::shared_ptr<const std::string> source;  // null: positions unknown (a merge of shards)
  bool allow_error = false;
  std::vector<ScheduleExpectation> expect;
  // Without a source: the line and column of the pointers a failure names,
  // as a shard document carries them for --merge.
  std::map<std::string, SourcePos> places;
};
GateScenario gate_scenario(const Scenario& sc);
// The pointers a gate failure can name ("/threads", each expect_schedules
// entry's) with their line and column in the scenario's text.
std::map<std::string, SourcePos> gate_places(const GateScenario& sc);

// One kind's share of a search: the outcome classes that reach it, their
// schedules, and the one whose representative has the fewest preemptions.
struct FindingTally {
  uint64_t classes = 0;
  uint64_t schedules = 0;
  std::optional<size_t> example;  // index into the search's outcomes
};

struct SearchGate {
  std::array<FindingTally, kFindings.size()> found;
  const ScheduleExpectation* expect = nullptr;  // the scenario's for this design, if any
  std::array<bool, kFindings.size()> accepted{};  // reachable, and the scenario accepts it
  std::array<bool, kFindings.size()> fails{};     // reachable, failed on, and not accepted
  std::optional<bool> classes_ok;                 // when expect_schedules bounds the classes
};

struct ScheduleGate {
  FailOn fail_on;
  std::vector<SearchGate> searches;  // by the searches' index
  std::vector<Failure> failures;     // in the searches' order
  // The failures as the report lists them: designs that reach the same
  // finding in the same classes and schedules (the same tally) on one
  // line, which names them all. Annotations, --quiet and the JSON keep one
  // failure a design.
  std::vector<Failure> report_lines;
  // Searches that did not cover every schedule (cut at --max-schedules, or
  // sampled): a "passed" holds only within what they ran.
  uint64_t incomplete = 0;
  int exit_status() const { return failures.empty() ? 0 : 1; }
};

// Whether `o` reaches finding `f`.
bool reaches(const ThreadedOutcome& o, Finding f);

ScheduleGate gate_schedules(const GateScenario& sc, const std::vector<const DesignSearch*>& searches,
                            const FailOn& fail_on);

// The searches in order, as gate_schedules takes them.
std::vector<const DesignSearch*> search_pointers(const std::vector<DesignSearch>& searches);

// What `schedules` exits with: 1 when a search is in error (its program did
// not repeat itself under the same choices) or the gate failed.
int schedules_exit_status(const std::vector<const DesignSearch*>& searches, const ScheduleGate& gate);

// The report's gate block: one line when it passed, else the failures, each
// on a line of its own (failure_line); in Markdown each failure a list item.
std::string schedule_gate_text(const ScheduleGate& gate, bool markdown = false);
// {"fail_on": [...], "passed": bool, "failures": [{kind, pointer, line, column, message}]}.
nlohmann::ordered_json schedule_gate_json(const ScheduleGate& gate);
// An expect_schedules entry as the scenario writes it: {"hang": "reachable",
// "classes": {"<=": 3}}.
nlohmann::ordered_json expect_schedules_json(const ScheduleExpectation& e);
// A search's "findings": per kind {"classes", "schedules", "expected", "accepted", "fails"}.
nlohmann::ordered_json search_findings_json(const SearchGate& g);

}  // namespace impsim
