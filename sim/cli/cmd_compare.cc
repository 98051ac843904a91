// `impsim compare FILE`: every finder design side by side.
#include <fmt/format.h>

#include <iostream>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "impsim/compare.h"
#include "impsim/loader.h"
#include "impsim/report.h"

namespace impsim::cli {

Action add_compare(CLI::App& app) {
  struct State {
    std::string file;
    std::string variants;
    std::string revisions;
    std::string baseline = "before";
    std::string format = "text";
    JsonOptions json_options;
    RunFlags flags;
    InputLimits input;
  };
  auto st = std::make_shared<State>();
  auto* cmd = app.add_subcommand("compare", "Compare finder designs on one scenario: counters, ratios, outcome verdicts");
  cmd->add_option("file", st->file, "The scenario file (JSON, format v1)")->required();
  cmd->add_option("--variants", st->variants,
                  "Comma-separated designs (default: all of them): " + variant_list() +
                      "; for a scenario with hooks: " + hook_variant_list() + ", against as_is");
  cmd->add_option("--revisions", st->revisions,
                  "Comma-separated finder revisions (b52ce17, 04efefd): every design on each, side by side, "
                  "named DESIGN@REVISION");
  cmd->add_option("--baseline", st->baseline,
                  "The design the others are measured against (with --revisions: on the first revision)")
      ->capture_default_str();
  cmd->add_option("--format", st->format, "text, markdown (for a code review) or json")
      ->check(CLI::IsMember({"text", "markdown", "json"}))
      ->capture_default_str();
  st->flags.add(cmd, /*with_variant=*/false);
  cmd->add_flag("--json-big-as-strings", st->json_options.big_as_strings,
                "JSON: write counts past 2^53 as strings of digits (exact in jq and JavaScript, whose numbers are doubles)");
  add_input_limits(cmd, st->input);
  cmd->footer(
      "Examples:\n"
      "  impsim compare scenarios/seed_incident.json\n"
      "  impsim compare scenarios/seed_incident.json --variants before,after,idempotent-enable --format markdown\n"
      "  impsim compare scenarios/nested_guards.json --set k=6 --baseline after\n"
      "  impsim compare scenarios/revisions/guard_saves_scope_object.json --variants before,after --revisions "
      "b52ce17,04efefd\n");
  return [st, cmd]() -> int {
    if (!cmd->parsed()) return -1;
    return guarded(st->file, [&] {
      RunOptions options = st->flags.options();
      auto split = [](const std::string& list) {
        std::vector<std::string> out;
        size_t start = 0;
        while (start <= list.size()) {
          size_t comma = list.find(',', start);
          std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
          if (!name.empty()) out.push_back(name);
          if (comma == std::string::npos) break;
          start = comma + 1;
        }
        return out;
      };
      // A hook scenario's designs are the hook designs, measured against as_is.
      Scenario sc = load_scenario_file(st->file, st->input);
      std::vector<std::string> names = split(st->variants);
      if (names.empty())
        for (Variant v : sc.hooks.used ? all_hook_variants() : all_variants()) names.push_back(variant_name(v));
      std::string baseline_name = st->baseline;
      if (sc.hooks.used && cmd->get_option("--baseline")->count() == 0) baseline_name = "as_is";
      if (!st->revisions.empty()) {
        std::vector<std::string> on_each;
        std::vector<std::string> revisions = split(st->revisions);
        for (const std::string& r : revisions) {
          if (!parse_revision(r))
            throw UsageError("<command line>",
                             fmt::format("--revisions {}: unknown revision; expected one of: {}", r, revision_list()));
          for (const std::string& n : names) on_each.push_back(n + "@" + r);
        }
        names = on_each;
        if (baseline_name.find('@') == std::string::npos) baseline_name += "@" + revisions.front();
      }
      auto baseline = parse_variant(baseline_name);
      if (!baseline)
        throw UsageError("<command line>",
                         fmt::format("--baseline {}: unknown design; expected one of: {}", baseline_name, variant_list()));
      if (std::find(names.begin(), names.end(), baseline_name) == names.end()) names.insert(names.begin(), baseline_name);
      options.variants = names;
      ScenarioRun result = run_scenario(sc, options);
      Comparison c{&result, *baseline};
      if (st->format == "json") std::cout << dump_json(compare_json(c), st->json_options) << "\n";
      else std::cout << compare_text(c, st->format == "markdown" ? CompareFormat::Markdown : CompareFormat::Text);
      return result.limit_reached() ? kExitLimit : kExitOk;
    });
  };
}

}  // namespace impsim::cli
