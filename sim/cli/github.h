// Where people run CI: under GitHub Actions (GITHUB_ACTIONS=true) every
// failure is also an `::error file=...,line=...,col=...,title=...::`
// annotation: a failed expectation at the line of its entry, a run
// stopped by a limit or an exception at the line of its step, an invalid
// scenario at the line the error message names, an output error on its
// file; validate's warnings are `::warning` annotations at their lines.
// When $GITHUB_STEP_SUMMARY names a file, the Markdown report is appended
// to it, and at the end of the command a list of its failures.
//
// Those annotations are the only workflow commands impsim writes: every
// other line it prints under GitHub Actions escapes scenario text with
// terminal_text (escape.h), which breaks up anything the runner would read
// as a command, so a scenario cannot forge an annotation, mask a value or
// stop the runner from reading impsim's own annotations after it. The
// summary is report_markdown's, whose scenario text is markdown_text's.
#pragma once

#include <optional>
#include <string>

#include "impsim/report/failures.h"
#include "output.h"

namespace impsim::cli {

// What the annotation's title says a failure is.
std::string failure_title(FailureKind kind);
// The same for an error (ErrorInfo::kind: invalid, usage, limit, output, memory).
std::string error_title(const std::string& kind);

// `::error file=FILE,line=L,col=C,title=TITLE::MESSAGE` and a newline (or
// `::warning`, for what a valid scenario likely did not mean), each
// value escaped as the runner reads it back (workflow_command_property,
// workflow_command_data). No file for standard input or the command line
// (there is none to point into), no line and column when `pos` is unset.
// `message` is terminal text already.
std::string github_annotation(const std::string& title, const std::string& file, std::optional<SourcePos> pos,
                              const std::string& message, const char* command = "error");

// Writes an annotation, when impsim runs under GitHub Actions, on standard
// error: the runner reads workflow commands on both streams, and standard
// output holds only the document asked for (a report, a trace, JSON), so
// `impsim trace --format chrome > t.json` stays one JSON document in CI.
void github_annotate(const std::string& annotation);

// Appends `markdown` to $GITHUB_STEP_SUMMARY when it is set (and impsim
// runs under GitHub Actions or the variable is set by hand).
void github_step_summary(const std::string& markdown);
// Whether there is a step summary to write: the Markdown is made only then.
bool github_step_summary_wanted();

// The step summary's list of a command's failures: a heading, then the
// lines (terminal text, as standard error has them) in a code block.
std::string failures_summary(const std::string& command, const std::vector<std::string>& lines);

}  // namespace impsim::cli
