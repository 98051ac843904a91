#include "scenario_command.h"

#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "impsim/base/file_write.h"
#include "impsim/engine/scheduler.h"
#include "impsim/run/schedules.h"
#include "scenario_files.h"

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
    cmd->add_option_function<std::vector<std::string>>(
           "files",
           [this](const std::vector<std::string>& args) {
             ScenarioFiles named = expand_folders(args);
             files = std::move(named.files);
             refused_folders = std::move(named.refused);
           },
           "Scenario files (JSON, format v1), or folders: every .json file under one, subfolders included, in "
           "order of their paths; \"-\" reads standard input")
        ->required();
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
  if (shared.takes_run_flags) flags.add(cmd, shared.variant_help);
  add_input_limits(cmd, input);
  // Not explore's: a page of nothing would look like a page written.
  if (!takes_one_file)
    cmd->add_flag("--skip-non-scenarios", skip_non_scenarios,
                  "Skip a JSON file that is not a scenario (its top level is not an object with an \"impsim\" key, "
                  "such as package.json; for pre-commit hooks), saying so on standard error, even under --quiet; a "
                  "file that is not JSON is still an error");
}

std::vector<std::string> inputs_of(const ScenarioCommand& command) {
  return command.single_file.empty() ? command.files : std::vector<std::string>{command.single_file};
}

CheckedOutput check_output(Sink& sink, const std::string& flag, const std::string& path,
                           const std::vector<std::string>& inputs, const std::function<void()>& first) {
  CheckedOutput out;
  if (path.empty()) return out;
  out.status = guarded("", [&] {
    if (first) first();
    refuse_output_over_inputs(flag, path, inputs);
    out.target = output_target(flag, path);
    return 0;
  }, &sink);
  if (out.status) sink.finish(out.status);
  return out;
}

int ScenarioCommand::for_each_scenario(Sink& sink, const Check& check, const Body& body) const {
  Progress shown(progress && !out.quiet);
  reports = 0;
  std::vector<std::string> list = inputs_of(*this);
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
          if (auto refused = refused_folders.find(file); refused != refused_folders.end())
            throw InputError(file, kNoPosition, "", refused->second);
          RunOptions options = flags.options();
          if (check) check(file, options);
          shown.set(file);
          Scenario sc = parse_scenario_file(file, input);
          text = sc.source;
          int status = body(file, sc, options, shown);
          ++reports;
          return status;
        },
        &sink, &text);
  });
}

namespace {

// `run` with the sink's output kept, then written to -o's file.
int run_to_file(const ScenarioCommand& command, Sink& sink, const std::function<int(Sink& sink)>& run) {
  const CheckedOutput output = check_output(sink, "-o", command.output, inputs_of(command));
  if (output.status) return output.status;
  std::ostringstream kept;
  sink.out = &kept;
  const int status = run(sink);
  if (command.reports == 0 || sink.quiet) {
    if (sink.format == Format::Json) std::cout << kept.str();
    return status;
  }
  try {
    write_file(*output.target, kept.str());
  } catch (const OutputError& e) {
    // The sink has finished: its JSON is written here, as trace -o does.
    const ErrorInfo info{"output", "", e.what(), "", 0, 0, "", kExitOutput};
    tell_error(info, nullptr);
    if (sink.format == Format::Json) std::cout << dump_json(error_json(info)) << "\n";
    return kExitOutput;
  }
  return status;
}

}  // namespace

Action action_of(std::shared_ptr<const ScenarioCommand> command, std::function<int(Sink& sink)> run) {
  return [command = std::move(command), run = std::move(run)]() -> int {
    if (!command->cmd->parsed()) return -1;
    Sink sink = command->out.sink();
    sink.command = command->cmd->get_name();
    if (command->output.empty() || !command->sink_writes_output) return run(sink);
    return run_to_file(*command, sink, run);
  };
}

ScenarioCommand::Check refuse_fast_engine(std::string message) {
  return [message = std::move(message)](const std::string&, const RunOptions& options) {
    if (options.engine == EngineKind::Fast) throw UsageError("<command line>", message);
  };
}

void use_schedule(const Scenario& sc, const std::string& schedule, RunOptions& options) {
  if (schedule.empty()) return;
  if (sc.threads.empty())
    throw UsageError(sc.file, "--schedule: the scenario declares no threads, so it has one schedule only");
  std::string why;
  if (!Scheduler::parse_schedule(schedule, &why))
    throw UsageError("<command line>", fmt::format("--schedule {}: {}", schedule, why));
  options.schedule = schedule;
  // Checked in full on a run of its own before anything is shown: a trace
  // prints as it runs, and used to print a whole run of some other
  // schedule before it found a choice it could not follow.
  if (std::optional<std::string> problem = schedule_problem(sc, options)) throw UsageError(sc.file, *problem);
}

}  // namespace impsim::cli
