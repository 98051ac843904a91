// Where people run CI (issue 13): under GitHub Actions (GITHUB_ACTIONS=true)
// every failed expectation is also a `::error file=...,line=...::`
// annotation at the line of its `expect` entry, and when
// $GITHUB_STEP_SUMMARY names a file the Markdown report is appended to it.
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

// `%`, CR and LF escaped as a workflow command's message needs; with
// `property`, `:` and `,` too.
std::string github_escape(const std::string& s, bool property);

}  // namespace impsim::cli
