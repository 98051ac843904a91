// `impsim run FILE`: the front door.
#include <fmt/format.h>

#include <iostream>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "impsim/loader.h"
#include "impsim/report.h"

namespace impsim::cli {

Action add_run(CLI::App& app) {
  struct State {
    std::string file;
    bool json = false;
    JsonOptions json_options;
    bool stats = false;
    RunFlags flags;
    InputLimits input;
  };
  auto st = std::make_shared<State>();
  auto* cmd = app.add_subcommand("run", "Run a scenario and print its counters, table and outcome");
  cmd->add_option("file", st->file, "The scenario file (JSON, format v1)")->required();
  cmd->add_flag("--json", st->json, "Print the JSON report of docs/scenario-format.md instead of text");
  cmd->add_flag("--json-big-as-strings", st->json_options.big_as_strings,
                "JSON: write counts past 2^53 as strings of digits (exact in jq and JavaScript, whose numbers are doubles)");
  st->flags.add(cmd);
  cmd->add_flag("--stats", st->stats, "Print engine time (wall and CPU), events and events per second to stderr");
  add_input_limits(cmd, st->input);
  cmd->footer(
      "Examples:\n"
      "  impsim run scenarios/nested_guards.json\n"
      "  impsim run scenarios/import_chain.json --set k=2 --json\n"
      "  impsim run scenarios/seed_incident.json --variant after\n"
      "  impsim run scenarios/nested_guards.json --set k=20 --engine fast --stats\n");
  return [st, cmd]() -> int {
    if (!cmd->parsed()) return -1;
    return guarded(st->file, [&] {
      RunOptions options = st->flags.options();
      Scenario sc = load_scenario_file(st->file, st->input);
      ScenarioRun result = run_scenario(sc, options);
      if (st->json) std::cout << dump_json(report_json(result), st->json_options) << "\n";
      else std::cout << report_text(result);
      if (st->stats) {
        for (const VariantRun& r : result.runs) {
          std::string params;
          for (auto& [k, v] : r.params) params += fmt::format(" {}={}", k, v);
          double eps = r.seconds > 0 ? r.events.to_double() / r.seconds : 0;
          fmt::print(stderr,
                     "stats: {}{}: engine {:.6f} s, cpu {:.6f} s, {} events (asks + toggles), {:.3g} events/s, {} "
                     "lookups{}\n",
                     variant_name(r.variant), params, r.seconds, r.cpu_seconds, grouped(r.events), eps,
                     grouped(r.counters.lookups),
                     options.engine == EngineKind::Fast ? fmt::format(", {} asks answered from memory", r.memo_hits) : "");
        }
      }
      return result.exit_status();
    });
  };
}

}  // namespace impsim::cli
