// What every subcommand that reads scenario files shares: its positional
// files, the output switch (output.h) and -o, the run flags (--counters
// where a command prints a table) and the reader's input limits,
// registered in one order after the command's own options, and the loop
// that loads each file and runs the command's body on it. Each flag means
// the same in every command that takes it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli.h"
#include "impsim/base/file_write.h"
#include "impsim/reader/read_scenario.h"
#include "output.h"
#include "progress.h"

namespace impsim::cli {

// What the shared flags say in one command's --help, and which it takes.
struct SharedFlags {
  // --format's help; empty: the command writes no report of its own (explore
  // writes a page), so it takes only --json (an error as JSON) and --quiet.
  std::string format_help = {};
  std::vector<std::string> extra_formats = {};  // trace: chrome, dot, importtime
  bool big_as_strings = true;              // --json-big-as-strings
  bool takes_run_flags = true;             // --set, --variant, --engine, the axes, --stats, the limits (not validate)
  std::string variant_help = {};           // empty: RunFlags's (compare: its own default)
  // -o: what the command writes (the report; trace: the trace; explore: the page).
  std::string output_what = "the report";
  // --json's help where the command's JSON is not a report (trace, explore).
  std::string json_help = {};
  // --counters (run, compare, sweep: the commands that print a table of
  // counters): its default in that command, for the help; empty: no --counters.
  std::string counters_default = {};
};

struct ScenarioCommand {
  CLI::App* cmd = nullptr;
  // The files named, a folder's replaced by those under it (scenario_files.h).
  std::vector<std::string> files;
  // A folder among `files` that names no file -> why: that file's error.
  std::map<std::string, std::string> refused_folders;
  std::string single_file;  // the one file of a command that takes one (explore)
  bool takes_one_file = false;
  OutputFlags out;
  std::string output;                 // -o FILE; empty: standard output
  std::vector<std::string> counters;  // --counters
  RunFlags flags;
  InputLimits input;
  // -o is written from what the sink printed (action_of), unless the
  // command writes it itself as it runs (trace, explore).
  bool sink_writes_output = true;
  // Files whose body ran to its end (a report printed), in the last
  // for_each_scenario: with none, -o is left as it was.
  mutable size_t reports = 0;
  // A progress line while a file runs; off for trace, which streams its
  // output to the terminal as it runs.
  bool progress = true;
  // --skip-non-scenarios: a pre-commit hook is handed every JSON file of a
  // repository (package.json, tsconfig.json, ...), and only scenarios are
  // impsim's to check.
  bool skip_non_scenarios = false;

  // Adds the subcommand with its positional files; `one_file` (explore):
  // a single "file".
  ScenarioCommand(CLI::App& app, const std::string& name, const std::string& description, bool one_file = false);
  // CLI11 holds the addresses of the members: the object stays where it is
  // made (a command's state derives from it, made by std::make_shared).
  ScenarioCommand(const ScenarioCommand&) = delete;
  ScenarioCommand& operator=(const ScenarioCommand&) = delete;
  // Registers the shared flags; called after the command's own options so
  // that every --help lists them in the same place.
  void add_shared(const SharedFlags& shared);

  // The command's refusals of its flags for one file, before it is loaded
  // (a UsageError); may be empty.
  using Check = std::function<void(const std::string& file, const RunOptions& options)>;
  // `progress` names the file; sweep names its values there too.
  using Body = std::function<int(const std::string& file, Scenario& sc, const RunOptions& options, Progress& progress)>;
  // For each file, under guarded() (errors become statuses, and JSON error
  // objects in `sink`): the run options from the flags, `check`, the
  // scenario loaded, then `body`. Returns the worst file's status, the sink
  // finished (for_each_file).
  int for_each_scenario(Sink& sink, const Check& check, const Body& body) const;
};

// The scenario files of the command line ("-": standard input).
std::vector<std::string> inputs_of(const ScenarioCommand& command);

// An output flag's file, checked: a status of 0 and the file to write
// (none when the flag was not given), or the exit status of the refusal.
struct CheckedOutput {
  int status = 0;
  std::optional<WriteTarget> target;
};

// An output flag's file (-o, --svg), checked before any scenario is read:
// `first` (a refusal of the command's own, may be empty), then
// refuse_output_over_inputs and output_target, under guarded(); a refusal
// is reported through `sink` and the sink finished. An empty `path` (the
// flag not given) is no file and nothing to check.
CheckedOutput check_output(Sink& sink, const std::string& flag, const std::string& path,
                           const std::vector<std::string>& inputs, const std::function<void()>& first = nullptr);

// The command's Action: -1 when it was not given, else `run` with a sink of
// its output flags. With -o (sink_writes_output): FILE is checked before
// any scenario is read, the output kept, and FILE replaced by it once every
// file has run (file_write.h); when no file ran to a report (every one
// failed to load, or --quiet) FILE is left as it was, and a JSON error
// goes to standard output, where errors go.
Action action_of(std::shared_ptr<const ScenarioCommand> command, std::function<int(Sink& sink)> run);

// A Check for the commands that show every event (trace, explore): they
// step every one, so --engine fast is refused with `message`.
ScenarioCommand::Check refuse_fast_engine(std::string message);

// --schedule of the commands that show one run (trace, explore): a
// threaded scenario follows `schedule` (empty: the one `impsim run`
// follows); a scenario without threads, or a string that is not a
// schedule, is a UsageError.
void use_schedule(const Scenario& sc, const std::string& schedule, RunOptions& options);

}  // namespace impsim::cli
