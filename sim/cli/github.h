// Where people run CI: under GitHub Actions (GITHUB_ACTIONS=true) every
// failed expectation is also a `::error file=...,line=...::` annotation at
// the line of its `expect` entry, and when $GITHUB_STEP_SUMMARY names a
// file the Markdown report is appended to it.
//
// Those annotations are the only workflow commands impsim writes: every
// other line it prints under GitHub Actions escapes scenario text with
// terminal_text (escape.h), which breaks up anything the runner would read
// as a command, so a scenario cannot forge an annotation, mask a value or
// stop the runner from reading impsim's own annotations after it. The
// summary is report_markdown's, whose scenario text is markdown_text's.
#pragma once

#include <string>

#include "impsim/run.h"
#include "output.h"

namespace impsim::cli {

// The annotations go to standard output, where the runner reads workflow
// commands, except under --format json, whose standard output is one JSON
// object: there they go to standard error (which the runner reads too).
void github_annotations(const ScenarioRun& run, const std::string& file, Format format);

// Appends `markdown` to $GITHUB_STEP_SUMMARY when it is set.
void github_step_summary(const std::string& markdown);

}  // namespace impsim::cli
