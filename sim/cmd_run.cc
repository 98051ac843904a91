// `impsim run FILE`: the front door.
#include <iostream>

#include "impsim/cli.h"
#include "impsim/loader.h"
#include "impsim/report.h"

namespace impsim::cli {

Action add_run(CLI::App& app) {
  struct State {
    std::string file;
    bool json = false;
    RunFlags flags;
  };
  auto st = std::make_shared<State>();
  auto* cmd = app.add_subcommand("run", "Run a scenario and print its counters, table and outcome");
  cmd->add_option("file", st->file, "The scenario file (JSON, format v1)")->required();
  cmd->add_flag("--json", st->json, "Print the JSON report of docs/scenario-format.md instead of text");
  st->flags.add(cmd);
  cmd->footer(
      "Examples:\n"
      "  impsim run scenarios/nested_guards.json\n"
      "  impsim run scenarios/import_chain.json --set k=2 --json\n"
      "  impsim run scenarios/seed_incident.json --variant after\n");
  return [st, cmd]() -> int {
    if (!cmd->parsed()) return -1;
    return guarded(st->file, [&] {
      RunOptions options = st->flags.options();
      Scenario sc = load_scenario_file(st->file);
      ScenarioRun result = run_scenario(sc, options);
      if (st->json) std::cout << report_json(result).dump(2) << "\n";
      else std::cout << report_text(result);
      return result.exit_status();
    });
  };
}

}  // namespace impsim::cli
