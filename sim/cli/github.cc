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

void github_annotate(const std::string& annotation, bool on_stderr) {
  if (console() != Console::GitHubRunner) return;
  std::ostream& out = on_stderr ? std::cerr : std::cout;
  out << annotation;
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

std::string failures_summary(const std::string& command, const std::vector<std::string>& lines) {
  std::string body;
  for (const std::string& line : lines) body += line + "\n";
  return fmt::format("### impsim{}: {} {}\n\n", command.empty() ? "" : " " + command, lines.size(),
                     plural(lines.size(), "failure", "failures")) +
         markdown_code_block(body);
}

}  // namespace impsim::cli
