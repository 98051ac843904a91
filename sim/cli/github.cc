#include "github.h"

#include <fmt/format.h>

#include <cstdlib>
#include <iostream>

#include "impsim/errors.h"
#include "impsim/file_write.h"
#include "impsim/escape.h"
#include "impsim/json_scan.h"
#include "impsim/loader.h"
#include "impsim/report.h"

namespace impsim::cli {

namespace {

std::string params_text(const Params& p) {
  std::string s;
  for (auto& [k, v] : p) s += (s.empty() ? "" : ", ") + fmt::format("{}={}", k, v);
  return s;
}

}  // namespace

void github_annotations(const ScenarioRun& run, const std::string& file, Format format) {
  if (console() != Console::GitHubRunner) return;
  // The lines come from the text the scenario was loaded from, never from a
  // second read of the file (a FIFO would block); standard input has no
  // file to point into.
  std::optional<JsonSource> source;
  if (file != "-" && run.scenario.source) source.emplace(*run.scenario.source);
  std::ostream& out = format == Format::Json ? std::cerr : std::cout;
  auto annotate = [&](const std::string& pointer, const std::string& message) {
    // The file name as the runner needs it to find the file; only what it
    // cannot carry (controls, bytes that are not UTF-8) is escaped.
    std::string where = "file=" + workflow_command_property(visible_text(file));
    if (source) {
      SourcePos pos = source->position_of(pointer);
      where += fmt::format(",line={},col={}", pos.line, pos.column);
    }
    out << "::error " << where << ",title=impsim expectation::" << workflow_command_data(message) << "\n";
  };
  for (const VariantRun& r : run.runs) {
    for (const ExpectationResult& e : r.expectations) {
      if (e.ok) continue;
      std::string want = e.budget ? budget_text(*e.budget) : grouped(e.expected);
      annotate(e.pointer, fmt::format("{}: {} {} [{}]: expected {}, got {}", terminal_text(run.scenario.name),
                                      variant_name(r.variant), terminal_text(e.counter), params_text(r.params), want,
                                      grouped(e.actual)));
    }
    if (r.verdict_expected && *r.verdict_expected != r.verdict)
      annotate("/expect_outcome/" + pointer_token(variant_name(r.variant)),
               fmt::format("{}: {} outcome [{}]: expected {}, got {}", terminal_text(run.scenario.name),
                           variant_name(r.variant), params_text(r.params), *r.verdict_expected, r.verdict));
  }
  if (run.equivalence_failure)
    annotate("/expect_equivalent", terminal_text(run.scenario.name) + ": " + terminal_text(*run.equivalence_failure));
  out.flush();
}

void github_step_summary(const std::string& markdown) {
  const char* path = std::getenv("GITHUB_STEP_SUMMARY");
  if (!path || !*path) return;
  try {
    append_file(path, markdown + "\n");
  } catch (const OutputError&) {
    fmt::print(stderr, "impsim: warning: cannot append to $GITHUB_STEP_SUMMARY ({})\n", terminal_text(path));
  }
}

}  // namespace impsim::cli
