// `impsim trace FILE...`: watch a resolution unfold, as text, a Chrome trace,
// a Graphviz lookup tree or `python -X importtime` lines.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "scenario_command.h"
#include "impsim/escape.h"
#include "impsim/loader.h"
#include "impsim/trace_formats.h"

namespace impsim::cli {

Action add_trace(CLI::App& app) {
  struct State : ScenarioCommand {
    using ScenarioCommand::ScenarioCommand;
    std::optional<uint64_t> max_lines;
    uint64_t max_nodes = 300;
    std::string output;
  };
  auto st = std::make_shared<State>(app, "trace", "Run scenarios once per variant and show every step of the resolution");
  CLI::App* cmd = st->cmd;
  cmd->add_option("--max-lines", st->max_lines,
                  "Cut each variant's trace after N lines (text, default 2000) or N events (chrome, default 200000); "
                  "0: no limit");
  cmd->add_option("--max-nodes", st->max_nodes,
                  "dot: draw a variant's tree compressed (identical subtrees collapsed) past N nodes")
      ->capture_default_str();
  cmd->add_option("-o,--output", st->output, "Write to this file instead of standard output");
  st->add_shared({.format_help = "text: an indented log; json or chrome: Trace Event JSON for Perfetto or "
                                 "chrome://tracing; markdown: the text log for a code review; dot: the lookup tree "
                                 "for Graphviz; importtime: `python -X importtime` lines (for tuna)",
                  .extra_formats = {"chrome", "dot", "importtime"},
                  .big_as_strings = false});
  // The trace goes to the terminal as it runs: no progress line across it.
  st->progress = false;
  cmd->footer(
      "The scenario runs at its default parameters (its sweep is not run); --set picks others.\n"
      "chrome and importtime use a simulated clock: one tick per name a sys.modules walk examines\n"
      "and per finder find_spec call.\n\n"
      "Examples:\n"
      "  impsim trace scenarios/nested_guards.json --set k=2\n"
      "  impsim trace scenarios/nested_guards.json --set k=3 --format chrome -o k3.json   # open in ui.perfetto.dev\n"
      "  impsim trace scenarios/nested_guards.json --set k=4 --format dot | dot -Tsvg > tree.svg\n"
      "  impsim trace scenarios/import_chain.json --set k=2 --variant before --format importtime > it.log; tuna it.log\n");
  return action_of(st, [st](Sink& sink) -> int {
    const std::string format = st->out.name();
    std::ofstream file_out;
    if (!st->output.empty()) {
      file_out.open(st->output, std::ios::binary);
      if (!file_out) {
        std::string message = fmt::format("-o {}: cannot open for writing: {}", st->output, std::strerror(errno));
        print_error(message);
        if (sink.format == Format::Json)
          std::cout << dump_json(error_json({"output", "", message, "", 0, 0, "", kExitOutput})) << "\n";
        return kExitOutput;
      }
    }
    std::ostream& out = st->output.empty() ? std::cout : file_out;
    sink.out = &out;
    TraceOptions topt;
    topt.format = *parse_trace_format(format == "json" ? "chrome" : format == "markdown" ? "text" : format);
    topt.max_lines = st->max_lines;
    topt.max_nodes = st->max_nodes;
    int status = st->for_each_scenario(
        sink,
        // A trace shows every event, and the fast engine's point is not to
        // step them: it would trace only what it steps, and say nothing else.
        refuse_fast_engine("--engine fast: trace shows every event, so it always steps them (the fast engine "
                           "answers repeated asks from memory and would have nothing to show); use `impsim run "
                           "--engine fast` for the counts, or trace a smaller --set"),
        [&](const std::string&, Scenario& sc, const RunOptions& options, Progress&) {
          if (st->out.quiet) {
            std::ostringstream discard;
            return write_trace(discard, sc, options, topt).status;
          }
          // One JSON document for several files, or for an error: kept in the sink.
          if (sink.format == Format::Json && st->files.size() > 1) {
            std::ostringstream doc;
            int s = write_trace(doc, sc, options, topt).status;
            sink.json_text(doc.str());
            return s;
          }
          if (sink.format == Format::Markdown) {
            std::ostringstream doc;
            int s = write_trace(doc, sc, options, topt).status;
            out << fmt::format("### impsim trace: {}\n\n{}", markdown_text(sc.name), markdown_code_block(doc.str()));
            return s;
          }
          return write_trace(out, sc, options, topt).status;
        });
    if (!st->output.empty()) {
      file_out.close();
      if (!file_out) {
        print_error(fmt::format("-o {}: write failed: {}", st->output, std::strerror(errno)));
        return kExitOutput;
      }
    }
    return status;
  });
}

}  // namespace impsim::cli
