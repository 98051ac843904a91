#include "scenario_command.h"

#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

namespace impsim::cli {

namespace {

// Why `file` is not a scenario, or empty when it is one or may be one: a
// file that cannot be read or is not JSON stays in the list, so that its
// error is reported as without the flag, and so does standard input, which
// can be read only once.
std::string not_a_scenario(const std::string& file, const InputLimits& limits) {
  if (file == "-") return {};
  std::string text;
  try {
    text = read_scenario_file(file, limits);
  } catch (const InputError&) {
    return {};
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return {};
  if (!j.is_object()) return fmt::format("its top level is a JSON {}, not an object", j.type_name());
  if (!j.contains("impsim")) return "its top-level object has no \"impsim\" key";
  return {};
}

}  // namespace

ScenarioCommand::ScenarioCommand(CLI::App& app, const std::string& name, const std::string& description,
                                 bool one_file)
    : cmd(app.add_subcommand(name, description)), takes_one_file(one_file) {
  if (one_file)
    cmd->add_option("file", single_file, "The scenario file (JSON, format v1); \"-\" reads standard input")
        ->required();
  else
    cmd->add_option("files", files, "Scenario files (JSON, format v1); \"-\" reads standard input")->required();
}

void ScenarioCommand::add_shared(const SharedFlags& shared) {
  out.add(cmd, shared.format_help, shared.extra_formats, shared.big_as_strings);
  if (shared.run) flags.add(cmd, shared.variant_help);
  add_input_limits(cmd, input);
  // Not explore's: a page of nothing would look like a page written.
  if (!takes_one_file)
    cmd->add_flag("--skip-non-scenarios", skip_non_scenarios,
                  "Skip a JSON file that is not a scenario (its top level is not an object with an \"impsim\" key, "
                  "such as package.json; for pre-commit hooks), saying so on standard error, even under --quiet; a "
                  "file that is not JSON is still an error");
}

int ScenarioCommand::for_each_scenario(Sink& sink, const Check& check, const Body& body) const {
  Progress shown(progress && !out.quiet);
  std::vector<std::string> list = single_file.empty() ? files : std::vector<std::string>{single_file};
  if (skip_non_scenarios) {
    std::erase_if(list, [&](const std::string& file) {
      std::string why = not_a_scenario(file, input);
      if (!why.empty()) std::cerr << fmt::format("impsim: skipped {}: not a scenario: {}\n", file, why);
      return !why.empty();
    });
  }
  return for_each_file(list, sink, [&](const std::string& file) {
    std::shared_ptr<const std::string> text;  // once loaded: guarded() places a model limit in it
    return guarded(
        file,
        [&] {
          RunOptions options = flags.options();
          if (check) check(file, options);
          shown.set(file);
          Scenario sc = load_scenario_file(file, input);
          text = sc.source;
          return body(file, sc, options, shown);
        },
        &sink, &text);
  });
}

Action action_of(std::shared_ptr<const ScenarioCommand> command, std::function<int(Sink& sink)> run) {
  return [command = std::move(command), run = std::move(run)]() -> int {
    if (!command->cmd->parsed()) return -1;
    Sink sink = command->out.sink();
    sink.command = command->cmd->get_name();
    return run(sink);
  };
}

ScenarioCommand::Check refuse_fast_engine(std::string message) {
  return [message = std::move(message)](const std::string&, const RunOptions& options) {
    if (options.engine == EngineKind::Fast) throw UsageError("<command line>", message);
  };
}

}  // namespace impsim::cli
