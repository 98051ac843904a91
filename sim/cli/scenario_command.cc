#include "scenario_command.h"

#include <iostream>
#include <sstream>

#include "impsim/file_write.h"

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
  if (!shared.counters_default.empty())
    add_list_option(cmd, "--counter,--counters", counters,
                    "Show only these counters, in this order, as the table's rows (repeatable, or comma-separated), "
                    "such as lookups or probe.lookups; default: " +
                        shared.counters_default);
  cmd->add_option("-o,--output", output,
                  "Write " + shared.output_what +
                      " to FILE instead of standard output: replaced whole once written, left as it was when no "
                      "scenario runs");
  out.add(cmd, shared.format_help, shared.extra_formats, shared.big_as_strings);
  if (!shared.json_help.empty()) cmd->get_option("--json")->description(shared.json_help);
  if (shared.run) flags.add(cmd, shared.variant_help);
  add_input_limits(cmd, input);
}

std::vector<std::string> inputs_of(const ScenarioCommand& command) {
  return command.single_file.empty() ? command.files : std::vector<std::string>{command.single_file};
}

int ScenarioCommand::for_each_scenario(Sink& sink, const Check& check, const Body& body) const {
  Progress shown(progress && !out.quiet);
  reports = 0;
  return for_each_file(inputs_of(*this), sink, [&](const std::string& file) {
    return guarded(
        file,
        [&] {
          RunOptions options = flags.options();
          if (check) check(file, options);
          shown.set(file);
          Scenario sc = load_scenario_file(file, input);
          int status = body(file, sc, options, shown);
          ++reports;
          return status;
        },
        &sink);
  });
}

namespace {

// `run` with the sink's output kept, then written to -o's file.
int run_to_file(const ScenarioCommand& command, Sink& sink, const std::function<int(Sink& sink)>& run) {
  std::optional<WriteTarget> target;
  if (int status = guarded("", [&] {
        refuse_output_over_inputs("-o", command.output, inputs_of(command));
        target = output_target("-o", command.output);
        return 0;
      }, &sink)) {
    sink.finish(status);
    return status;
  }
  std::ostringstream kept;
  sink.out = &kept;
  const int status = run(sink);
  if (command.reports == 0 || sink.quiet) {
    if (sink.format == Format::Json) std::cout << kept.str();
    return status;
  }
  try {
    write_file(*target, kept.str());
  } catch (const OutputError& e) {
    print_error(e.what());
    if (sink.format == Format::Json)
      std::cout << dump_json(error_json({"output", "", e.what(), "", 0, 0, "", kExitOutput})) << "\n";
    return kExitOutput;
  }
  return status;
}

}  // namespace

Action action_of(std::shared_ptr<const ScenarioCommand> command, std::function<int(Sink& sink)> run) {
  return [command = std::move(command), run = std::move(run)]() -> int {
    if (!command->cmd->parsed()) return -1;
    Sink sink = command->out.sink();
    if (command->output.empty() || !command->sink_writes_output) return run(sink);
    return run_to_file(*command, sink, run);
  };
}

ScenarioCommand::Check refuse_fast_engine(std::string message) {
  return [message = std::move(message)](const std::string&, const RunOptions& options) {
    if (options.engine == EngineKind::Fast) throw UsageError("<command line>", message);
  };
}

}  // namespace impsim::cli
