// `impsim validate FILE...`: check scenarios without running them.
#include <fmt/format.h>

#include <utility>

#include "impsim/base/escape.h"
#include "impsim/base/plural.h"
#include "impsim/base/version.h"
#include "impsim/reader/read_scenario.h"
#include "scenario_command.h"

namespace impsim::cli {

namespace {

// The last file's scenario, never freed: the process ends right after the
// last file, and freeing a 50,000-module tree's scenario block by block was
// millions of instructions for nothing. Held from here, it stays reachable,
// so a leak checker has nothing to report; an earlier file's is freed when
// the next one is kept.
Scenario* last_validated = nullptr;

}  // namespace

Action add_validate(CLI::App& app) {
  auto st = std::make_shared<ScenarioCommand>(
      app, "validate", "Check scenario files without running them (exit 0; 2 invalid; 3 past a limit)");
  CLI::App* cmd = st->cmd;
  st->add_shared({.format_help = "text, json or markdown", .big_as_strings = false, .run = false});
  cmd->footer("Example:\n  impsim validate scenarios/*.json\n");
  return action_of(st, [st](Sink& sink) -> int {
    sink.one_list = true;
    return st->for_each_scenario(sink, nullptr, [&](const std::string&, Scenario& sc, const RunOptions&, Progress&) {
      check_model(sc, {});
      if (sink.format == Format::Json) {
        nlohmann::ordered_json j;
        j["impsim"] = 1;
        j["version"] = impsim_version();
        j["file"] = sc.file;  // "<stdin>" for "-", as run's reports and every error say
        j["ok"] = true;
        j["tree_entries"] = sc.tree.size();
        j["steps"] = sc.program.size();
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
