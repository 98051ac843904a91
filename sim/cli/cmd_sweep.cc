// `impsim sweep FILE... [--param NAME --values A..B]`: scenarios over the
// values of one parameter (the scenario's own sweep by default), as
// `impsim run`'s sweep table, and a chart.
#include <fmt/format.h>

#include <optional>

#include <nlohmann/json.hpp>

#include "scenario_command.h"
#include "impsim/base/file_write.h"
#include "impsim/reader/read_scenario.h"
#include "impsim/report/report.h"
#include "impsim/report/sweep_chart.h"

namespace impsim::cli {

Action add_sweep(CLI::App& app) {
  struct State : ScenarioCommand {
    using ScenarioCommand::ScenarioCommand;
    std::string param;
    std::string values;
    std::string svg;
  };
  auto st = std::make_shared<State>(app, "sweep",
                                    "Run scenarios over the values of one parameter; print the table, chart it");
  CLI::App* cmd = st->cmd;
  cmd->add_option("--param", st->param,
                  "The parameter to sweep (one of the scenario's params; default: the scenario's sweep's)");
  cmd->add_option("--values", st->values,
                  "Its values: A..B (inclusive) or A,B,C, or both: 1..4,8; each value once, at most "
                  "--max-sweep-values (10000) of them (default: the scenario's sweep's, when it sweeps --param)");
  cmd->add_option("--svg", st->svg,
                  "Also write an SVG line chart (log-scale y, one line per variant and counter) to this file (one "
                  "scenario only)");
  st->add_shared({.format_help = "text, json (the report of docs/scenario-format.md) or markdown",
                  .counters_default = "the scenario's report rows; the chart's lines too"});
  cmd->footer(
      "Without --param and --values, the scenario's own sweep runs (as `impsim run` runs it).\n"
      "The scenario's own expectations are checked at the values its sweep shares with these; the report lists "
      "those not checked.\n"
      "A value past --max-nest stops that value's runs (marked \"limit\" in the table, exit 3), not the sweep.\n\n"
      "Examples:\n"
      "  impsim sweep scenarios/nested_guards.json --svg lookups.svg            # its sweep, charted\n"
      "  impsim sweep scenarios/nested_guards.json --values 1..8\n"
      "  impsim sweep scenarios/import_chain.json --param k --values 1,2,4 --counters lookups,toggles\n");
  return action_of(st, [st](Sink& sink) -> int {
    // --svg is checked before any scenario is read, and written once the sweep has run.
    const CheckedOutput chart = check_output(sink, "--svg", st->svg, st->files, [&] {
      if (st->svg == st->output)
        throw UsageError("<command line>", "--svg and -o name the same file: give each its own");
    });
    if (chart.status) return chart.status;
    SweepOptions o;
    o.counters = st->counters;
    std::optional<std::vector<int64_t>> values;
    auto check = [&](const std::string&, const RunOptions& options) {
      if (!st->svg.empty() && st->files.size() > 1)
        throw UsageError("<command line>", "--svg charts one scenario: give one file");
      if (!st->values.empty()) values = parse_sweep_values(st->values, st->input.max_sweep_values);
      o.run = options;
    };
    return st->for_each_scenario(
        sink, check, [&](const std::string& file, Scenario& sc, const RunOptions&, Progress& progress) -> int {
          // The scenario's own sweep stands in for what is not given.
          const Sweep* own = sc.sweep ? &*sc.sweep : nullptr;
          o.param = !st->param.empty() ? st->param : own ? own->param : "";
          if (o.param.empty())
            throw UsageError(file, values ? "--values needs --param NAME: the scenario declares no sweep"
                                          : "the scenario declares no sweep: give --param NAME and --values A..B");
          if (values) o.values = *values;
          else if (own && own->param == o.param) o.values = own->values;
          else
            throw UsageError(file, own ? fmt::format("--param {}: give --values A..B; the scenario's own sweep "
                                                     "is of {}",
                                                     o.param, own->param)
                                       : fmt::format("--param {}: give --values A..B; the scenario declares no "
                                                     "sweep",
                                                     o.param));
          o.progress = [&](size_t i, size_t n, int64_t v) {
            progress.set(fmt::format("sweep {}: {}={} ({} of {})", file, o.param, v, i + 1, n));
          };
          SweepResult result = run_sweep(sc, o);
          if (chart.target) {
            std::string svg;
            try {
              svg = svg_line_chart(sweep_chart(result));
            } catch (const ChartTooBig& e) {
              return tell_error({"limit", file, e.what(), "", 0, 0, "", kExitLimit}, &sink);
            }
            write_file(*chart.target, svg);
          }
          emit_run_report(sink, result.run, file, "sweep");
          if (st->flags.stats) print_stats(result.run.runs, o.run.engine);
          return result.run.exit_status();
        });
  });
}

}  // namespace impsim::cli
