// `impsim sweep FILE --param NAME --values A..B`: a scenario over the
// values of one parameter, as `impsim run`'s sweep table, and a chart.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "impsim/loader.h"
#include "impsim/report.h"
#include "impsim/sweep.h"

namespace impsim::cli {

Action add_sweep(CLI::App& app) {
  struct State {
    std::string file;
    std::string param;
    std::string values;
    std::vector<std::string> counters;
    std::string svg;
    bool json = false;
    JsonOptions json_options;
    RunFlags flags;
    InputLimits input;
  };
  auto st = std::make_shared<State>();
  auto* cmd = app.add_subcommand("sweep", "Run a scenario over the values of one parameter; print the table, chart it");
  cmd->add_option("file", st->file, "The scenario file (JSON, format v1)")->required();
  cmd->add_option("--param", st->param, "The parameter to sweep (one of the scenario's params)")->required();
  cmd->add_option("--values", st->values, "Its values: A..B (inclusive) or A,B,C, or both: 1..4,8")->required();
  cmd->add_option("--counter", st->counters,
                  "A counter for the table and the chart, such as lookups or probe.lookups (repeatable; default: the "
                  "scenario's report rows)");
  cmd->add_option("--svg", st->svg, "Also write an SVG line chart (log-scale y, one line per variant) to this file");
  cmd->add_flag("--json", st->json, "Print the JSON report of docs/scenario-format.md instead of the table");
  cmd->add_flag("--json-big-as-strings", st->json_options.big_as_strings,
                "JSON: write counts past 2^53 as strings of digits (exact in jq and JavaScript, whose numbers are doubles)");
  st->flags.add(cmd);
  add_input_limits(cmd, st->input);
  cmd->footer(
      "The scenario's own expectations are checked at the values its sweep shares with these.\n\n"
      "Examples:\n"
      "  impsim sweep scenarios/nested_guards.json --param k --values 1..4        # the seed table\n"
      "  impsim sweep scenarios/nested_guards.json --param k --values 1..8 --svg lookups.svg\n"
      "  impsim sweep scenarios/import_chain.json --param k --values 1,2,4 --counter lookups --counter toggles\n");
  return [st, cmd]() -> int {
    if (!cmd->parsed()) return -1;
    return guarded(st->file, [&]() -> int {
      SweepOptions o;
      o.param = st->param;
      o.values = parse_sweep_values(st->values, st->input.max_sweep_values);
      o.counters = st->counters;
      o.run = st->flags.options();
      Scenario sc = load_scenario_file(st->file, st->input);
      const bool tty = isatty(STDERR_FILENO) != 0;
      if (tty)
        o.progress = [&](size_t i, size_t n, int64_t v) {
          fmt::print(stderr, "\r\033[Ksweep: {}={} ({} of {})", o.param, v, i + 1, n);
          std::fflush(stderr);
        };
      SweepResult result = run_sweep(sc, o);
      if (tty) fmt::print(stderr, "\r\033[K");
      if (!st->svg.empty()) {
        std::string svg;
        try {
          svg = svg_line_chart(sweep_chart(result));
        } catch (const ChartTooBig& e) {
          print_error(e.what());
          return kExitLimit;
        }
        std::ofstream out(st->svg, std::ios::binary);
        out << svg;
        out.close();
        if (!out) throw OutputError(fmt::format("--svg {}: cannot write: {}", st->svg, std::strerror(errno)));
      }
      if (st->json) std::cout << dump_json(report_json(result.run), st->json_options) << "\n";
      else std::cout << report_text(result.run);
      return result.run.exit_status();
    });
  };
}

}  // namespace impsim::cli
