// `impsim trace FILE...`: watch a resolution unfold, as text, a Chrome trace,
// a Graphviz lookup tree or `python -X importtime` lines.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "impsim/loader.h"
#include "impsim/trace_formats.h"

namespace impsim::cli {

Action add_trace(CLI::App& app) {
  struct State {
    std::vector<std::string> files;
    OutputFlags out;
    std::optional<uint64_t> max_lines;
    uint64_t max_nodes = 300;
    std::string output;
    RunFlags flags;
    InputLimits input;
  };
  auto st = std::make_shared<State>();
  auto* cmd = app.add_subcommand("trace", "Run scenarios once per variant and show every step of the resolution");
  cmd->add_option("files", st->files, "Scenario files (JSON, format v1); \"-\" reads standard input")->required();
  st->out.add(cmd,
              "text: an indented log; json or chrome: Trace Event JSON for Perfetto or chrome://tracing; markdown: "
              "the text log for a code review; dot: the lookup tree for Graphviz; importtime: `python -X importtime` "
              "lines (for tuna)",
              {"chrome", "dot", "importtime"}, /*big_as_strings=*/false);
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
    Sink sink = st->out.sink();
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
    int status = for_each_file(st->files, sink, [&](const std::string& file) {
      return guarded(
          file,
          [&] {
            RunOptions options = st->flags.options();
            // A trace shows every event, and the fast engine's point is not to
            // step them: it would trace only what it steps, and say nothing else.
            if (options.engine == EngineKind::Fast)
              throw UsageError("<command line>",
                               "--engine fast: trace shows every event, so it always steps them (the fast engine "
                               "answers repeated asks from memory and would have nothing to show); use `impsim run "
                               "--engine fast` for the counts, or trace a smaller --set");
            TraceOptions topt;
            topt.format = *parse_trace_format(format == "json" ? "chrome" : format == "markdown" ? "text" : format);
            topt.max_lines = st->max_lines;
            topt.max_nodes = st->max_nodes;
            Scenario sc = load_scenario_file(file, st->input);
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
              out << fmt::format("### impsim trace: {}\n\n```text\n{}```\n", sc.name, doc.str());
              return s;
            }
            return write_trace(out, sc, options, topt).status;
          },
          &sink);
    });
    if (!st->output.empty()) {
      file_out.close();
      if (!file_out) {
        print_error(fmt::format("-o {}: write failed: {}", st->output, std::strerror(errno)));
        return kExitOutput;
      }
    }
    return status;
  };
}

}  // namespace impsim::cli
