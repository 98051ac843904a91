// What made a run fail, each failure tied to the place in the scenario file
// it is about: an expectation's entry, the step a limit stopped at, the step
// where the program raised. The text report, --quiet's lines on standard
// error, the GitHub annotations and the step summary all say a failure
// from here, so it reads the same wherever it is told, and every line of
// it names its file (a report of several files, copied or grepped, still
// says which file failed).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "impsim/base/json_scan.h"
#include "impsim/run/run.h"

namespace impsim {

enum class FailureKind {
  Expectation,  // an `expect`, `expect_outcome` or `expect_equivalent` entry not met (exit 1)
  Limit,        // a limit stopped a run short of the end of the program (exit 3)
  Raised,       // the program raised an exception the scenario does not allow (exit 1)
  Hang,         // the one schedule run, trace or explore follows hangs where the scenario does not allow it (exit 1)
  Reachable,    // a schedule search reached a hang, _DeadlockError or exception nothing accepts (exit 1)
};

struct Failure {
  FailureKind kind = FailureKind::Expectation;
  std::string file;              // as messages name it (<stdin> for standard input); empty: none
  std::string pointer;           // the JSON pointer of the entry or step in the file; empty: none
  std::optional<SourcePos> pos;  // the pointer's line and column, when the file's text is known
  // What failed, in impsim's words around the scenario's own text (not
  // escaped): "after probe.lookups [k=4]: expected 64, got 65".
  std::string text;
};

// Line and column of JSON pointers in a run's scenario file, found in the
// text it was loaded from (never a second read of the file: a FIFO or
// standard input has nothing to give twice). The text is scanned once.
class FilePlaces {
 public:
  explicit FilePlaces(const ScenarioFacts& sc);
  FilePlaces(std::string file, const std::shared_ptr<const std::string>& source);
  std::optional<SourcePos> position(const std::string& pointer) const;
  // "FILE:LINE:COLUMN: ", "FILE: " when the position is not known, "" for
  // a run of no file. Not escaped.
  std::string prefix(const std::string& pointer) const;

 private:
  std::string file_;
  std::optional<JsonSource> source_;
};

// A run's failures, in the text report's order: the expectations as
// expectations_text lists them, then each run's limit or exception.
// `raised`: whether an exception the scenario does not allow is a failure
// (compare's exit status leaves it out).
std::vector<Failure> run_failures(const ScenarioRun& run, bool raised = true);
// The failures of runs that check no expectation (trace, explore): limits,
// and exceptions the scenario does not allow.
std::vector<Failure> run_failures(const ScenarioFacts& sc, const std::vector<VariantRun>& runs);

// "FILE:LINE:COLUMN: FAILED TEXT" for an expectation, "FILE:LINE:COLUMN:
// TEXT" for the others: one line (no newline), escaped for the terminal.
std::string failure_line(const Failure& f);

}  // namespace impsim
