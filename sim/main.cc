// impsim's command line: `impsim run`, `impsim validate`.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fmt/format.h>
#include <iostream>

#include "impsim/loader.h"
#include "impsim/report.h"
#include "impsim/run.h"

using namespace impsim;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitInvalid = 2;
constexpr int kExitLimit = 3;

// "k=4" -> {"k", 4}
std::pair<std::string, int64_t> parse_set(const std::string& s) {
  auto eq = s.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("<command line>", {}, "", fmt::format("--set {}: expected NAME=N, such as --set k=4", s));
  std::string name = s.substr(0, eq), value = s.substr(eq + 1);
  try {
    size_t used = 0;
    long long v = std::stoll(value, &used);
    if (used != value.size()) throw std::invalid_argument(value);
    return {name, v};
  } catch (const std::exception&) {
    throw InputError("<command line>", {}, "", fmt::format("--set {}: \"{}\" is not an integer", s, value));
  }
}

void print_error(const std::string& message) { fmt::print(stderr, "impsim: error: {}\n", message); }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"impsim: a deterministic simulator of Python import resolution (CPython 3.11) with the torch proxy\n"
               "finder as released (\"before\") and with its reentrancy fix (\"after\").",
               "impsim"};
  app.set_version_flag("--version", std::string("impsim ") + IMPSIM_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  impsim run scenarios/nested_guards.json          the seed table, k = 1..4\n"
      "  impsim run scenarios/seed_incident.json --json   the incident as a JSON report\n"
      "  impsim run scenarios/nested_guards.json --set k=6 --variant after\n"
      "  impsim validate scenarios/*.json\n\n"
      "Exit status: 0 ran and every expectation holds; 1 an expectation failed or the program raised;\n"
      "2 invalid scenario or command line; 3 a limit was reached.\n");

  std::string file;
  bool json = false;
  std::vector<std::string> sets, variants;
  RunOptions options;
  auto* run = app.add_subcommand("run", "Run a scenario and print its counters, table and outcome");
  run->add_option("file", file, "The scenario file (JSON, format v1)")->required();
  run->add_flag("--json", json, "Print the JSON report of docs/scenario-format.md instead of text");
  run->add_option("--set", sets, "Override a parameter, NAME=N (repeatable); setting the swept one runs that value only");
  run->add_option("--variant", variants, "Run this variant (repeatable): before, after (default: the scenario's)");
  run->add_option("--max-events", options.limits.max_events,
                  "Stop (exit 3) after this many simulated finder asks + toggles")
      ->capture_default_str();
  run->add_option("--max-lookup-depth", options.limits.max_lookup_depth, "Stop (exit 3) past this lookup nesting")
      ->capture_default_str();
  run->add_option("--max-body-depth", options.limits.max_body_depth,
                  "Stop (exit 3) past this nesting of module bodies and calls")
      ->capture_default_str();
  run->footer(
      "Examples:\n"
      "  impsim run scenarios/nested_guards.json\n"
      "  impsim run scenarios/import_chain.json --set k=2 --json\n"
      "  impsim run scenarios/seed_incident.json --variant after\n");

  std::vector<std::string> files;
  auto* validate = app.add_subcommand("validate", "Check scenario files without running them (exit 0 or 2)");
  validate->add_option("files", files, "Scenario files")->required();
  validate->footer("Example:\n  impsim validate scenarios/*.json\n");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : kExitInvalid;
  }

  if (*validate) {
    int status = kExitOk;
    for (auto& f : files) {
      try {
        Scenario sc = load_scenario_file(f);
        compile_model(sc, {});
        fmt::print("{}: ok ({} tree entries, {} top-level steps)\n", f, sc.tree.size(), sc.program.size());
      } catch (const InputError& e) {
        print_error(e.what());
        status = kExitInvalid;
      } catch (const ModelLimitError& e) {
        print_error(fmt::format("{}: at {}: limit {} reached: {}", f, e.pointer, e.limit, e.detail));
        status = kExitInvalid;
      }
    }
    return status;
  }

  try {
    for (auto& s : sets) {
      auto [k, v] = parse_set(s);
      options.overrides[k] = v;
    }
    options.variants = variants;
    Scenario sc = load_scenario_file(file);
    ScenarioRun result = run_scenario(sc, options);
    if (json) std::cout << report_json(result).dump(2) << "\n";
    else std::cout << report_text(result);
    return result.exit_status();
  } catch (const InputError& e) {
    print_error(e.what());
    return kExitInvalid;
  } catch (const ModelLimitError& e) {
    print_error(fmt::format("{}: at {}: limit {} reached: {}", file, e.pointer, e.limit, e.detail));
    return kExitLimit;
  }
}
