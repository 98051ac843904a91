// `impsim trace FILE`: watch a resolution unfold, as text, a Chrome trace,
// a Graphviz lookup tree or `python -X importtime` lines.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include "cli.h"
#include "impsim/loader.h"
#include "impsim/trace_formats.h"

namespace impsim::cli {

Action add_trace(CLI::App& app) {
  struct State {
    std::string file;
    std::string format = "text";
    std::optional<uint64_t> max_lines;
    uint64_t max_nodes = 300;
    std::string output;
    RunFlags flags;
    InputLimits input;
  };
  auto st = std::make_shared<State>();
  auto* cmd = app.add_subcommand("trace", "Run a scenario once per variant and show every step of the resolution");
  cmd->add_option("file", st->file, "The scenario file (JSON, format v1)")->required();
  cmd->add_option("--format", st->format,
                  "text: an indented log; chrome: Trace Event JSON for Perfetto or chrome://tracing; dot: the lookup "
                  "tree for Graphviz; importtime: `python -X importtime` lines (for tuna)")
      ->check(CLI::IsMember({"text", "chrome", "dot", "importtime"}))
      ->capture_default_str();
  cmd->add_option("--max-lines", st->max_lines,
                  "Cut each variant's trace after N lines (text, default 2000) or N events (chrome, default 200000); "
                  "0: no limit");
  cmd->add_option("--max-nodes", st->max_nodes,
                  "dot: draw a variant's tree compressed (identical subtrees collapsed) past N nodes")
      ->capture_default_str();
  cmd->add_option("-o,--output", st->output, "Write to this file instead of standard output");
  st->flags.add(cmd);
  add_input_limits(cmd, st->input);
  cmd->footer(
      "The scenario runs at its default parameters (its sweep is not run); --set picks others.\n"
      "chrome and importtime use a simulated clock: one tick per name a sys.modules walk examines\n"
      "and per finder find_spec call.\n\n"
      "Examples:\n"
      "  impsim trace scenarios/nested_guards.json --set k=2\n"
      "  impsim trace scenarios/nested_guards.json --set k=3 --format chrome -o k3.json   # open in ui.perfetto.dev\n"
      "  impsim trace scenarios/nested_guards.json --set k=4 --format dot | dot -Tsvg > tree.svg\n"
      "  impsim trace scenarios/import_chain.json --set k=2 --variant before --format importtime > it.log; tuna it.log\n");
  return [st, cmd]() -> int {
    if (!cmd->parsed()) return -1;
    return guarded(st->file, [&] {
      RunOptions options = st->flags.options();
      // A trace shows every event, and the fast engine's point is not to
      // step them: it would trace only what it steps, and say nothing else.
      if (options.engine == EngineKind::Fast)
        throw UsageError("<command line>",
                         "--engine fast: trace shows every event, so it always steps them (the fast engine answers "
                         "repeated asks from memory and would have nothing to show); use `impsim run --engine fast` "
                         "for the counts, or trace a smaller --set");
      TraceOptions topt;
      topt.format = *parse_trace_format(st->format);
      topt.max_lines = st->max_lines;
      topt.max_nodes = st->max_nodes;
      Scenario sc = load_scenario_file(st->file, st->input);
      if (st->output.empty()) return write_trace(std::cout, sc, options, topt).status;
      std::ofstream out(st->output, std::ios::binary);
      if (!out) throw OutputError(fmt::format("-o {}: cannot open for writing: {}", st->output, std::strerror(errno)));
      int status = write_trace(out, sc, options, topt).status;
      out.close();
      if (!out) throw OutputError(fmt::format("-o {}: write failed: {}", st->output, std::strerror(errno)));
      return status;
    });
  };
}

}  // namespace impsim::cli
