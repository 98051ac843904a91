#include "scenario_command.h"

namespace impsim::cli {

ScenarioCommand::ScenarioCommand(CLI::App& app, const std::string& name, const std::string& description,
                                 bool one_file)
    : cmd(app.add_subcommand(name, description)) {
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
}

int ScenarioCommand::for_each_scenario(Sink& sink, const Check& check, const Body& body) const {
  Progress shown(progress && !out.quiet);
  const std::vector<std::string> list = single_file.empty() ? files : std::vector<std::string>{single_file};
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
