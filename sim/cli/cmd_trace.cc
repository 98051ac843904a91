// `impsim trace FILE...`: watch a resolution unfold, as text, a Chrome trace,
// a Graphviz lookup tree or `python -X importtime` lines.
#include <fmt/format.h>

#include <functional>
#include <iostream>
#include <optional>
#include <sstream>

#include "impsim/base/escape.h"
#include "impsim/base/file_write.h"
#include "impsim/reader/read_scenario.h"
#include "impsim/report/failures.h"
#include "impsim/trace/trace_formats.h"
#include "scenario_command.h"

namespace impsim::cli {

namespace {

// A stream buffer that calls `first` at the first byte written and passes
// every byte to the buffer it returns.
class StartOnFirstByte : public std::streambuf {
 public:
  explicit StartOnFirstByte(std::function<std::streambuf*()> first) : first_(std::move(first)) {}

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    return target()->sputc(traits_type::to_char_type(c));
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override { return target()->sputn(s, n); }
  int sync() override { return to_ ? to_->pubsync() : 0; }

 private:
  std::streambuf* target() {
    if (!to_) to_ = first_();
    return to_;
  }
  std::function<std::streambuf*()> first_;
  std::streambuf* to_ = nullptr;
};

}  // namespace

Action add_trace(CLI::App& app) {
  struct State : ScenarioCommand {
    using ScenarioCommand::ScenarioCommand;
    std::optional<uint64_t> max_lines;
    uint64_t max_nodes = 300;
    std::string schedule;
  };
  auto st =
      std::make_shared<State>(app, "trace", "Run scenarios once per variant and show every step of the resolution");
  CLI::App* cmd = st->cmd;
  add_integer_option(cmd, "--max-lines", st->max_lines, 0, UINT64_MAX,
                     "Cut each variant's trace after N lines (text, default 2000; importtime, default 200000) or N "
                     "events (chrome, default 200000; dot: the events its tree is drawn from, default 1000000); 0: "
                     "no limit");
  add_integer_option(cmd, "--max-nodes", st->max_nodes, 0, UINT64_MAX,
                     "dot: draw a variant's tree compressed (identical subtrees collapsed) past N nodes")
      ->capture_default_str();
  cmd->add_option("--schedule", st->schedule,
                  "A threaded scenario: follow this schedule (as `impsim schedules` prints it: the thread chosen at "
                  "each choice, joined by dots; default: the one `impsim run` follows); each thread's events nest "
                  "apart: a column of thread names (text), a track per thread (chrome), a cluster per thread (dot)");
  st->add_shared({.format_help = "text: an indented log; json or chrome: Trace Event JSON for Perfetto or "
                                 "chrome://tracing; markdown: the text log for a code review; dot: the lookup tree "
                                 "for Graphviz; importtime: `python -X importtime` lines (for tuna)",
                  .extra_formats = {"chrome", "dot", "importtime"},
                  .big_as_strings = false,
                  .output_what = "the trace",
                  .json_help = "The same as --format json: the trace as one JSON document, Chrome's Trace Event "
                               "JSON (an error: the JSON error object)"});
  // The trace goes to the terminal as it runs: no progress line across it;
  // and to -o's file as it runs (below), not through the sink.
  st->progress = false;
  st->sink_writes_output = false;
  cmd->footer(
      "The scenario runs at its default parameters (its sweep is not run); --set picks others.\n"
      "trace shows a run; it does not check the scenario's expectations (`impsim run` does): its exit status is 1 "
      "only when the program raised or hung where the scenario does not allow it, 3 at a limit.\n"
      "chrome and importtime use a simulated clock: one tick per name a sys.modules walk examines\n"
      "and per finder find_spec call.\n\n"
      "Examples:\n"
      "  impsim trace scenarios/nested_guards.json --set k=2\n"
      "  impsim trace scenarios/nested_guards.json --set k=3 --format chrome -o k3.json   # open in ui.perfetto.dev\n"
      "  impsim trace scenarios/nested_guards.json --set k=4 --format dot | dot -Tsvg > tree.svg\n"
      "  impsim trace scenarios/import_chain.json --set k=2 --variant before --format importtime > it.log; tuna "
      "it.log\n"
      "  impsim trace tests/data/threads/cross_import.json --schedule 0.0.0.0.0.0.0.0.0.0.0.0.0.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.0\n");
  return action_of(st, [st](Sink& sink) -> int {
    const std::string format = st->out.name();
    // -o is checked before any scenario is read, and replaced once the
    // traces are written.
    CheckedOutput output = check_output(sink, "-o", st->output, st->files);
    if (output.status) return output.status;
    std::optional<FileWriter> file;
    if (output.target) file.emplace(std::move(*output.target));
    // Nothing goes to the file before a trace writes its first byte: what
    // the sink says before then (an error, a blank line between files)
    // waits in `held`, and a scenario that fails before its trace starts (a
    // missing file, a limit) leaves the file as it was.
    std::ostringstream held;
    bool started = false;
    auto start = [&]() -> std::ostream& {
      if (!started) {
        started = true;
        file->stream() << held.str();
        sink.out = &file->stream();
      }
      return file->stream();
    };
    StartOnFirstByte relay([&] { return start().rdbuf(); });
    std::ostream relayed(&relay);
    std::ostream* out = file ? &relayed : &std::cout;
    sink.out = file ? static_cast<std::ostream*>(&held) : &std::cout;
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
        [&](const std::string&, Scenario& sc, const RunOptions& given, Progress&) {
          RunOptions options = given;
          use_schedule(sc, st->schedule, options);
          TraceResult traced;
          auto trace_to = [&](std::ostream& to) {
            traced = write_trace(to, sc, options, topt);
            sink.failures(sc.name, run_failures(ScenarioFacts::of(sc), traced.failed_runs()));
          };
          if (st->out.quiet) {
            std::ostringstream discard;
            trace_to(discard);
          } else if (sink.format == Format::Json && st->files.size() > 1) {
            // One JSON document for several files, or for an error: kept in the sink.
            std::ostringstream doc;
            trace_to(doc);
            if (file) start();  // the sink writes the document at the end
            sink.json_text(doc.str());
          } else if (sink.format == Format::Markdown) {
            std::ostringstream doc;
            trace_to(doc);
            *out << fmt::format("### impsim trace: {}\n\n{}", markdown_text(sc.name), markdown_code_block(doc.str()));
          } else {
            trace_to(*out);
          }
          if (st->flags.stats) print_stats(traced.runs, options.engine);
          return traced.status;
        });
    if (!file) return status;
    if (!started) {
      // No trace started (every input failed, or --quiet): the file is left
      // as it was, and a JSON error goes where errors go, to standard output.
      if (sink.format == Format::Json) std::cout << held.str();
      return status;
    }
    try {
      file->commit();
    } catch (const OutputError& e) {
      // The sink has finished: its JSON is written here.
      const ErrorInfo info{"output", "", e.what(), "", 0, 0, "", kExitOutput};
      tell_error(info, nullptr);
      if (sink.format == Format::Json && !sink.quiet) std::cout << dump_json(error_json(info)) << "\n";
      return kExitOutput;
    }
    return status;
  });
}

}  // namespace impsim::cli
