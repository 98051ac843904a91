// `impsim explore FILE -o page.html`: one self-contained HTML page (scripts
// and styles inline, nothing fetched) that steps through the run of each
// variant event by event, before and after side by side.
#include <fmt/format.h>

#include <optional>

#include "scenario_command.h"
#include "impsim/file_write.h"
#include "impsim/loader.h"
#include "impsim/trace_formats.h"

namespace impsim::cli {

Action add_explore(CLI::App& app) {
  struct State : ScenarioCommand {
    using ScenarioCommand::ScenarioCommand;
    std::string output;
    uint64_t max_bytes = TraceOptions{}.max_bytes;
    bool no_fold = false;
  };
  auto st = std::make_shared<State>(app, "explore",
                                    "Write an HTML page that steps through a run, event by event, with why",
                                    /*one_file=*/true);
  CLI::App* cmd = st->cmd;
  cmd->add_option("-o,--output", st->output, "The page to write")->required();
  cmd->add_option("--max-bytes", st->max_bytes,
                  "Cut a variant's events past N bytes of page data (repeated subtrees are folded first); 0: no limit")
      ->capture_default_str();
  cmd->add_flag("--no-fold", st->no_fold, "Show every event, even in subtrees identical to one shown already");
  // The page is the report: no --format, but an error is told as everywhere.
  st->add_shared({.format_help = "", .big_as_strings = false});
  cmd->footer(
      "The scenario runs at its default parameters (its sweep is not run); --set picks others.\n"
      "The page opens from disk in any browser; keys: arrows step, Shift+arrows skip a subtree,\n"
      "PageUp/PageDown jump 100, n/p the next/previous labelled step, / searches a module name.\n\n"
      "Examples:\n"
      "  impsim explore scenarios/seed_incident.json -o incident.html\n"
      "  impsim explore scenarios/nested_guards.json --set k=2 --variant before --variant after -o k2.html\n");
  return action_of(st, [st](Sink& sink) -> int {
    // -o is checked before the scenario is read, and written once it has run.
    std::optional<WriteTarget> target;
    if (int status = guarded("", [&] {
          refuse_output_over_inputs("-o", st->output, {st->single_file});
          target = output_target("-o", st->output);
          return 0;
        }, &sink)) {
      sink.finish(status);
      return status;
    }
    TraceOptions topt;
    topt.format = TraceFormat::Explore;
    topt.max_bytes = st->max_bytes;
    topt.fold = !st->no_fold;
    return st->for_each_scenario(
        sink,
        refuse_fast_engine("--engine fast: explore shows every event, so it always steps them; use `impsim run "
                           "--engine fast` for the counts"),
        [&](const std::string&, Scenario& sc, const RunOptions& options, Progress&) {
          FileWriter page(*target);
          TraceResult t = write_trace(page.stream(), sc, options, topt);
          page.commit();
          sink.failures(sc.name, t.failures);
          return t.status;
        });
  });
}

}  // namespace impsim::cli
