// `impsim validate FILE...`: check scenarios without running them.
#include <fmt/format.h>

#include <utility>

#include "github.h"
#include "impsim/base/escape.h"
#include "impsim/base/plural.h"
#include "impsim/base/version.h"
#include "impsim/reader/read_scenario.h"
#include "impsim/report/failures.h"
#include "impsim/scenario/warnings.h"
#include "scenario_command.h"

namespace impsim::cli {

namespace {

// The last file's scenario, never freed: the process ends right after the
// last file, and freeing a 50,000-module tree's scenario block by block was
// millions of instructions for nothing. Held from here, it stays reachable,
// so a leak checker has nothing to report; an earlier file's is freed when
// the next one is kept.
Scenario* last_validated = nullptr;

struct PlacedWarning {
  ScenarioWarning warning;
  std::optional<SourcePos> pos;
};

// Each warning on standard error as "impsim: warning: FILE:LINE:COLUMN: at
// POINTER: ...", the way an invalid scenario's error is told, and under
// GitHub Actions as a ::warning annotation at its line. The report itself
// (standard output) says ok: the scenario is valid and runs as written.
std::vector<PlacedWarning> tell_warnings(const Scenario& sc) {
  std::vector<PlacedWarning> out;
  std::vector<ScenarioWarning> found = scenario_warnings(sc);
  if (found.empty()) return out;
  const FilePlaces places(sc.file, sc.source);
  for (ScenarioWarning& w : found) {
    const std::optional<SourcePos> pos = places.position(w.pointer);
    PlacedWarning p{std::move(w), pos};
    const std::string message =
        terminal_text(places.prefix(p.warning.pointer) + "at " + p.warning.pointer + ": " + p.warning.message);
    fmt::print(stderr, "impsim: warning: {}\n", message);
    github_annotate(github_annotation("impsim warning", sc.file, p.pos, message, "warning"));
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

Action add_validate(CLI::App& app) {
  auto st = std::make_shared<ScenarioCommand>(
      app, "validate", "Check scenario files without running them (exit 0; 2 invalid; 3 past a limit)");
  CLI::App* cmd = st->cmd;
  st->add_shared({.format_help = "text, json or markdown", .big_as_strings = false, .takes_run_flags = false});
  cmd->footer("Example:\n  impsim validate scenarios/*.json\n");
  return action_of(st, [st](Sink& sink) -> int {
    sink.one_list = true;
    return st->for_each_scenario(sink, nullptr, [&](const std::string&, Scenario& sc, const RunOptions&, Progress&) {
      check_model(sc, {});
      const std::vector<PlacedWarning> warnings = tell_warnings(sc);
      if (sink.format == Format::Json) {
        nlohmann::ordered_json j;
        j["impsim"] = 1;
        j["version"] = impsim_version();
        j["file"] = sc.file;  // "<stdin>" for "-", as run's reports and every error say
        j["ok"] = true;
        j["tree_entries"] = sc.tree.size();
        j["steps"] = sc.program.size();
        if (!warnings.empty()) {
          nlohmann::ordered_json list = nlohmann::ordered_json::array();
          for (const PlacedWarning& w : warnings) {
            nlohmann::ordered_json one;
            one["pointer"] = w.warning.pointer;
            one["line"] = w.pos ? nlohmann::ordered_json(w.pos->line) : nlohmann::ordered_json(nullptr);
            one["column"] = w.pos ? nlohmann::ordered_json(w.pos->column) : nlohmann::ordered_json(nullptr);
            one["message"] = w.warning.message;
            list.push_back(std::move(one));
          }
          j["warnings"] = std::move(list);
        }
        j["exit_status"] = 0;
        sink.json(j);
      } else {
        const bool md = sink.format == Format::Markdown;
        sink.text(fmt::format("{}{}: ok ({} tree {}, {} top-level {})\n", md ? "- " : "",
                              md ? markdown_text(sc.file, Markdown::Paragraph) : terminal_text(sc.file), sc.tree.size(),
                              plural(sc.tree.size(), "entry", "entries"), sc.program.size(),
                              plural(sc.program.size(), "step", "steps")));
      }
      delete std::exchange(last_validated, new Scenario(std::move(sc)));
      return kExitOk;
    });
  });
}

}  // namespace impsim::cli
