// `impsim compare FILE...`: every finder design side by side.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "github.h"
#include "impsim/base/did_you_mean.h"
#include "impsim/reader/read_scenario.h"
#include "impsim/report/compare.h"
#include "impsim/report/compare_threaded.h"
#include "impsim/report/report.h"
#include "impsim/run/sweep.h"
#include "scenario_command.h"
#include "search_flags.h"
#include "usage_errors.h"

namespace impsim::cli {

Action add_compare(CLI::App& app) {
  struct State : ScenarioCommand {
    using ScenarioCommand::ScenarioCommand;
    std::vector<std::string> revisions;
    std::string baseline = "before";
    SearchFlags search;
  };
  auto st = std::make_shared<State>(app, "compare",
                                    "Compare finder designs on scenarios: counters, ratios, outcome verdicts");
  CLI::App* cmd = st->cmd;
  complete_with(add_list_option(cmd, "--revisions", st->revisions,
                                "Finder revisions (b52ce17, 04efefd; repeatable, or comma-separated): every design on "
                                "each, side by side, named DESIGN@REVISION"),
                revision_names());
  complete_with(cmd->add_option("--baseline", st->baseline,
                                "The design the others are measured against (with --revisions: on the first revision; "
                                "default: before, or as_is for a scenario with hooks)"),
                design_names())
      ->capture_default_str();
  st->search.add(cmd, "; only for a scenario with threads");
  st->add_shared({.format_help = "text, markdown (for a code review) or json",
                  .variant_help =
                      "Designs to compare (repeatable, or comma-separated; default: all of them, after-global-set only "
                      "with threads, unlock_after_exec only where a hook's lock is taken after_exec): " +
                      variant_list() + "; for a scenario with hooks: " + hook_variant_list() + ", against as_is",
                  .counters_default = "every counter, a labelled step's when not all zero"});
  cmd->footer(
      "The scenario's expectations are checked as `impsim run` checks them (exit 1 when one fails); those not "
      "checked (a --set off their parameters, a design left out) are listed with why.\n"
      "A table wider than 80 columns is printed in blocks of designs, each with the counter column.\n"
      "A scenario with threads: its expectations are of one schedule (`impsim run` checks them), and each design's "
      "schedules are searched as `impsim schedules --variant DESIGN` "
      "searches them (--search and its flags), and every end its threads reach is listed with the designs that "
      "reach it, how many schedules did and one that replays it, and the designs that never do within their search; "
      "a design is identical to the baseline when it reaches the same ends. Each design's search is made whole: "
      "--shard and --merge are schedules' own.\n\n"
      "Examples:\n"
      "  impsim compare scenarios/seed_incident.json\n"
      "  impsim compare scenarios/seed_incident.json --variants before,after,idempotent-enable --format markdown\n"
      "  impsim compare scenarios/nested_guards.json --set k=6 --baseline after\n"
      "  impsim compare scenarios/nested_guards.json --counters lookups,probe.lookups\n"
      "  impsim compare scenarios/revisions/guard_saves_scope_object.json --variants before,after --revisions "
      "b52ce17,04efefd\n"
      "  impsim compare tests/data/threads/proxy_guards.json --variants before,after\n");
  // The search flags mean a search of a threaded scenario's schedules, and
  // --counters the rows of an unthreaded one's table: each is refused
  // where it would mean nothing, never ignored.
  auto refuse_flags_of_the_other_kind = [st, cmd](const Scenario& sc) {
    if (sc.threads.empty()) {
      if (const std::vector<std::string> given = st->search.given(cmd); !given.empty())
        throw UsageError(sc.file, fmt::format("{} searches a threaded scenario's schedules, and this one declares no "
                                              "threads: it has one schedule, which compare runs without the flag",
                                              given.front()));
    } else if (!st->counters.empty()) {
      throw UsageError(sc.file,
                       "--counters picks rows of the counters table, which compare of a threaded scenario does not "
                       "print: each outcome lists its own counters");
    }
  };
  // Each design's schedules searched as `impsim schedules --variant` searches
  // them, and the designs compared end by end.
  auto compare_threaded = [st](Sink& sink, const Scenario& sc, const RunOptions& options) {
    ThreadedComparison c{&sc, find_ends_by_design(sc, options, st->search.options())};
    const ScheduleGate gate = gate_schedules(gate_scenario(sc), compared_searches(c.points), st->search.fail_on_kinds());
    c.gate = &gate;
    if (sink.format == Format::Json)
      sink.json(compare_threaded_json(c));
    else
      sink.text(
          compare_threaded_text(c, sink.format == Format::Markdown ? CompareFormat::Markdown : CompareFormat::Text));
    sink.failures(sc.name, gate.failures);
    if (github_step_summary_wanted()) github_step_summary(compare_threaded_text(c, CompareFormat::Markdown));
    return compare_threaded_exit_status(c);
  };
  return action_of(st, [st, cmd, refuse_flags_of_the_other_kind, compare_threaded](Sink& sink) -> int {
    return st->for_each_scenario(
        sink, nullptr, [&](const std::string&, Scenario& sc, const RunOptions& given, Progress&) {
          refuse_flags_of_the_other_kind(sc);
          check_counter_flags(sc, st->counters, "--counters");
          // A hook scenario's designs are the hook designs, measured against as_is.
          std::vector<std::string> names = given.variants;
          // after-global-set differs from after only across threads;
          // unlock_after_exec from as_is only where a lock is taken there.
          const bool locks_after_exec = std::any_of(sc.hooks.hooks.begin(), sc.hooks.hooks.end(),
                                                    [](const HookText& h) { return h.lock.after_exec; });
          if (names.empty())
            for (Variant v : sc.hooks.used ? all_hook_variants() : all_variants())
              if ((!design_of(v).resolving_global || !sc.threads.empty()) &&
                  (v.design != DesignId::UnlockAfterExec || locks_after_exec))
                names.push_back(variant_name(v));
          std::string baseline_name = st->baseline;
          if (sc.hooks.used && cmd->get_option("--baseline")->count() == 0) baseline_name = "as_is";
          if (!st->revisions.empty()) {
            std::vector<std::string> on_each;
            for (const std::string& r : st->revisions) {
              if (!parse_revision(r))
                throw UsageError("<command line>",
                                 fmt::format("--revisions {}: unknown revision{}; expected one of: {}", r,
                                             did_you_mean_note(r, revision_names()), revision_list()));
              for (const std::string& n : names) on_each.push_back(n + "@" + r);
            }
            names = on_each;
            if (baseline_name.find('@') == std::string::npos) baseline_name += "@" + st->revisions.front();
          }
          auto baseline = parse_variant(baseline_name);
          if (!baseline)
            throw UsageError("<command line>",
                             fmt::format("--baseline {}: unknown design{}; expected one of: {}", baseline_name,
                                         nearest_variant_note(baseline_name), variant_list()));
          if (std::find(names.begin(), names.end(), baseline_name) == names.end())
            names.insert(names.begin(), baseline_name);
          RunOptions options = given;
          options.variants = names;
          if (!sc.threads.empty()) {
            // Schedules are compared against the first design.
            std::stable_partition(options.variants.begin(), options.variants.end(),
                                  [&](const std::string& n) { return n == baseline_name; });
            return compare_threaded(sink, sc, options);
          }
          ScenarioRun result = run_scenario(sc, options);
          Comparison c{&result, *baseline, st->counters};
          if (sink.format == Format::Json)
            sink.json(compare_json(c));
          else
            sink.text(compare_text(c, sink.format == Format::Markdown ? CompareFormat::Markdown : CompareFormat::Text));
          sink.failures(result.scenario.name, run_failures(result, /*raised=*/false));
          if (github_step_summary_wanted()) github_step_summary(compare_text(c, CompareFormat::Markdown));
          if (st->flags.stats) print_stats(result.runs, options.engine);
          return compare_exit_status(result);
        });
  });
}

}  // namespace impsim::cli
