// `impsim explore FILE [-o page.html]`: one self-contained HTML page
// (scripts and styles inline, nothing fetched) that steps through the run
// of each variant event by event, before and after side by side.
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "impsim/base/file_write.h"
#include "impsim/base/version.h"
#include "impsim/reader/read_scenario.h"
#include "impsim/report/failures.h"
#include "impsim/trace/trace_formats.h"
#include "scenario_command.h"

namespace impsim::cli {

Action add_explore(CLI::App& app) {
  struct State : ScenarioCommand {
    using ScenarioCommand::ScenarioCommand;
    uint64_t max_bytes = TraceOptions{}.max_bytes;
    bool no_fold = false;
    std::string schedule;
  };
  auto st =
      std::make_shared<State>(app, "explore", "Write an HTML page that steps through a run, event by event, with why",
                              /*one_file=*/true);
  CLI::App* cmd = st->cmd;
  add_integer_option(cmd, "--max-bytes", st->max_bytes, 0, UINT64_MAX,
                     "Cut a variant's events past N bytes of page data (repeated subtrees are folded first); 0: no "
                     "limit")
      ->capture_default_str();
  cmd->add_flag("--no-fold", st->no_fold, "Show every event, even in subtrees identical to one shown already");
  cmd->add_option("--schedule", st->schedule,
                  "A threaded scenario: follow this schedule (as `impsim schedules` prints it; default: the one "
                  "`impsim run` follows); each row says whose thread it is, with a call stack per thread");
  // The page is the output: no --format; --json says what was written.
  st->add_shared({.format_help = "",
                  .big_as_strings = false,
                  .output_what = "the page",
                  .json_help = "Print one JSON document on standard output: the result, naming the page written "
                               "(so the page needs -o), or the JSON error object"});
  st->sink_writes_output = false;
  cmd->footer(
      "The scenario runs at its default parameters (its sweep is not run); --set picks others.\n"
      "Without -o the page goes to standard output when that is a file or a pipe, never to a terminal.\n"
      "explore shows a run; it does not check the scenario's expectations (`impsim run` does): its exit status is "
      "1 only when the program raised or hung where the scenario does not allow it, 3 at a limit.\n"
      "The page opens from disk in any browser; keys: arrows step, Shift+arrows skip a subtree,\n"
      "PageUp/PageDown jump 100, n/p the next/previous labelled step, / searches a module name.\n\n"
      "Examples:\n"
      "  impsim explore scenarios/seed_incident.json -o incident.html\n"
      "  impsim explore scenarios/nested_guards.json --set k=2 --variant before --variant after -o k2.html\n"
      "  impsim explore scenarios/nested_guards.json --set k=2 > k2.html\n"
      "  impsim explore tests/data/threads/cross_import.json --schedule 0.0.0.0.0.0.0.0.0.0.0.0.0.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.0 -o cross.html\n");
  return action_of(st, [st](Sink& sink) -> int {
    // -o is checked before the scenario is read, and written once it has run.
    const CheckedOutput page = check_output(sink, "-o", st->output, {st->single_file});
    if (page.status) return page.status;
    if (int status = page.target
                         ? 0
                         : guarded(
                               "",
                               [&] {
                                 if (sink.format == Format::Json)
                                   throw UsageError(
                                       "<command line>",
                                       "--json prints the result on standard output, so the page needs a file: give -o "
                                       "FILE (such as -o page.html)");
                                 if (isatty(STDOUT_FILENO))
                                   throw UsageError(
                                       "<command line>",
                                       "explore writes an HTML page, not text for a terminal: give -o FILE (such as -o "
                                       "page.html), or redirect standard output to a file");
                                 return 0;
                               },
                               &sink)) {
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
        [&](const std::string&, Scenario& sc, const RunOptions& given, Progress&) {
          RunOptions options = given;
          use_schedule(sc, st->schedule, options);
          TraceResult traced;
          if (page.target) {
            FileWriter file(*page.target);
            traced = write_trace(file.stream(), sc, options, topt);
            file.commit();
          } else {
            traced = write_trace(std::cout, sc, options, topt);
          }
          sink.failures(sc.name, run_failures(ScenarioFacts::of(sc), traced.failed_runs()));
          if (st->flags.stats) print_stats(traced.runs, options.engine);
          nlohmann::ordered_json j;
          j["impsim"] = 1;
          j["version"] = impsim_version();
          j["scenario"] = sc.name;
          j["page"] = st->output;
          nlohmann::ordered_json variants = nlohmann::ordered_json::array();
          for (const VariantRun& r : traced.runs) variants.push_back(variant_name(r.variant));
          j["variants"] = variants;
          j["exit_status"] = traced.status;
          sink.json(j);  // printed under --json only
          return traced.status;
        });
  });
}

}  // namespace impsim::cli
