#include "github.h"

#include <fmt/format.h>

#include <cstdlib>
#include <iostream>

#include "impsim/base/errors.h"
#include "impsim/base/escape.h"
#include "impsim/base/file_write.h"
#include "impsim/base/plural.h"

namespace impsim::cli {

std::string failure_title(FailureKind kind) {
  switch (kind) {
    case FailureKind::Expectation:
      return "impsim expectation";
    case FailureKind::Limit:
      return "impsim limit";
    case FailureKind::Raised:
      return "impsim exception";
    case FailureKind::Hang:
      return "impsim hang";
    case FailureKind::Reachable:
      return "impsim schedule search";
  }
  return "impsim";
}

std::string error_title(const std::string& kind) {
  if (kind == "invalid") return "impsim invalid scenario";
  if (kind == "usage") return "impsim usage error";
  if (kind == "limit") return "impsim limit";
  if (kind == "output") return "impsim output error";
  if (kind == "memory") return "impsim out of memory";
  return "impsim error";
}

std::string github_annotation(const std::string& title, const std::string& file, std::optional<SourcePos> pos,
                              const std::string& message, const char* command) {
  std::string props;
  // Standard input and the command line are no file in the repository.
  if (!file.empty() && file != "<stdin>" && file != "-" && file != "<command line>") {
    // The file name as the runner needs it to find the file; only what it
    // cannot carry (controls, bytes that are not UTF-8) is escaped.
    props = "file=" + workflow_command_property(visible_text(file));
    if (pos) props += fmt::format(",line={},col={}", pos->line, pos->column);
    props += ",";
  }
  props += "title=" + workflow_command_property(title);
  return fmt::format("::{} ", command) + props + "::" + workflow_command_data(message) + "\n";
}

void github_annotate(const std::string& annotation) {
  if (console() != Console::GitHubRunner) return;
  // Whatever standard output holds goes first, so that in a log that
  // shows both streams an annotation still follows what it annotates.
  std::cout.flush();
  std::cerr << annotation;
  std::cerr.flush();
}

bool github_step_summary_wanted() {
  const char* path = std::getenv("GITHUB_STEP_SUMMARY");
  return path && *path;
}

void github_step_summary(const std::string& markdown) {
  const char* path = std::getenv("GITHUB_STEP_SUMMARY");
  if (!path || !*path) return;
  try {
    append_file(path, markdown + "\n");
  } catch (const OutputError& e) {
    // A warning: the report itself is written, and the run's status stands.
    fmt::print(stderr, "impsim: warning: $GITHUB_STEP_SUMMARY: {}; the step summary is left out\n",
               terminal_text(e.what()));
  }
}

std::string failures_summary(const std::string& command, const std::vector<std::string>& lines) {
  std::string body;
  for (const std::string& line : lines) body += line + "\n";
  return fmt::format("### impsim{}: {} {}\n\n", command.empty() ? "" : " " + command, lines.size(),
                     plural(lines.size(), "failure", "failures")) +
         markdown_code_block(body);
}

}  // namespace impsim::cli
