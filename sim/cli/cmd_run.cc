// `impsim run FILE...`: the front door.
#include <fmt/format.h>

#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "scenario_command.h"
#include "github.h"
#include "impsim/report/bless.h"
#include "impsim/report/failures.h"
#include "impsim/base/file_write.h"
#include "impsim/base/escape.h"
#include "impsim/reader/read_scenario.h"
#include "impsim/base/plural.h"
#include "impsim/report/report.h"
#include "impsim/run/sweep.h"

namespace impsim::cli {

void emit_run_report(Sink& sink, const ScenarioRun& result, const std::string& /*file*/, const std::string& command) {
  switch (sink.format) {
    case Format::Json: sink.json(report_json(result)); break;
    case Format::Markdown: sink.text(report_markdown(result, command)); break;
    case Format::Text: sink.text(report_text(result)); break;
  }
  sink.failures(result.scenario.name, run_failures(result));
  if (github_step_summary_wanted()) github_step_summary(report_markdown(result, command));
}

Action add_run(CLI::App& app) {
  struct State : ScenarioCommand {
    using ScenarioCommand::ScenarioCommand;
    bool bless = false;
  };
  auto st = std::make_shared<State>(app, "run", "Run scenarios and print their counters, table and outcome");
  CLI::App* cmd = st->cmd;
  cmd->add_flag("--bless", st->bless,
                "Write the measured counts into each file's \"expect\" (exact values only; budgets are kept; a file "
                "without \"expect\" gets one). Refused when a run raised or stopped at a limit");
  st->add_shared({.format_help = "text, json (the report of docs/scenario-format.md) or markdown (for a code review)",
                  .counters_default = "every counter, a labelled step's when not all zero; with a sweep, the "
                                      "scenario's report rows"});
  cmd->footer(
      "Expectations are checked at the parameters they are written for: a --set off them, or a variant "
      "--variant leaves out, leaves them unchecked, and the report says which and why.\n\n"
      "Examples:\n"
      "  impsim run scenarios/nested_guards.json\n"
      "  impsim run scenarios/import_chain.json --set k=2 --format json\n"
      "  impsim run scenarios/seed_incident.json --variant after\n"
      "  impsim run scenarios/nested_guards.json --set k=20 --engine fast --stats\n"
      "  impsim run scenarios/seed_incident.json --counters lookups,probe.lookups -o incident.txt\n"
      "  impsim run scenarios/*.json --quiet                 # failures only, one line each\n"
      "  impsim run my_scenario.json --bless                 # record today's counts as the expectations\n");
  return action_of(st, [st](Sink& sink) -> int {
    const InputLimits& input = st->input;
    // The file --bless replaces, checked before the scenario is read.
    std::optional<WriteTarget> target;
    auto refuse_bless = [&](const std::string& file, const RunOptions& options) {
      target.reset();
      if (!st->bless) return;
      if (!options.overrides.empty() || !options.variants.empty() || options.revision || options.cpython)
        throw UsageError("<command line>",
                         "--bless records the scenario's own counts: it takes no --set, --variant, "
                         "--revision or --cpython");
      if (file == "-") throw UsageError("<command line>", "--bless rewrites a file: it cannot bless \"-\"");
      target = bless_target(file);
    };
    return st->for_each_scenario(
        sink, refuse_bless, [&](const std::string& file, Scenario& sc, const RunOptions& options, Progress&) {
          check_counter_flags(sc, st->counters, "--counter");
          ScenarioRun result = run_scenario(sc, options);
          result.scenario.counters = st->counters;
          if (st->bless && bless_refusal(result)) {
            // The report says what went wrong; the file is left alone.
            emit_run_report(sink, result, file);
            print_error("--bless: " + *bless_refusal(result));
            return result.exit_status();
          }
          if (st->bless) {
            // The text the scenario was loaded from: the file is read once.
            const std::string& source = *sc.source;
            Blessed b = bless(source, result);
            if (b.text != source) {
              // What is written must load: checked before the file is touched.
              Scenario blessed;
              try {
                blessed = parse_scenario(b.text, file, input);
              } catch (const InputError& e) {
                throw OutputError(fmt::format("--bless {}: not rewritten: the blessed text would not load: {}", file,
                                              e.what()));
              }
              if (!target) target = bless_target(file);
              if (!target) throw OutputError(fmt::format("--bless {}: not rewritten: the file is gone", file));
              write_file(*target, b.text);
              blessed.source = std::make_shared<const std::string>(std::move(b.text));
              // The report is of the blessed scenario, run again: it shows
              // the expectations now hold (or a budget that does not).
              sc = std::move(blessed);
              result = run_scenario(sc, options);
              result.scenario.counters = st->counters;
            }
            std::string where = target && target->through_link
                                    ? fmt::format(" (the link's target, {})", terminal_text(target->write_at))
                                    : "";
            // What still fails after blessing is what --bless does not
            // write: said, or the exit status 1 reads as a failed bless.
            size_t still = 0;
            for (const Failure& f : run_failures(result, true)) still += f.kind == FailureKind::Expectation ? 1 : 0;
            const std::string why =
                still == 0 ? ""
                           : fmt::format("; {} {} still {} (listed below): --bless writes exact counts and keeps "
                                         "every budget, expect_outcome and expect_equivalent as written; change {} "
                                         "by hand, or the design",
                                         still, plural(still, "expectation", "expectations"),
                                         still == 1 ? "fails" : "fail", still == 1 ? "it" : "them");
            fmt::print(stderr, "impsim: {}: blessed{}: {} {} rewritten, {} added{}\n", terminal_text(file), where,
                       b.changed, plural(b.changed, "value", "values"), b.added, why);
          }
          emit_run_report(sink, result, file);
          if (st->flags.stats) print_stats(result.runs, options.engine);
          return result.exit_status();
        });
  });
}

}  // namespace impsim::cli
