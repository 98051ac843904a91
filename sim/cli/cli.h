// The command line: each subcommand registers itself on the CLI11 app and
// returns the function that runs it. Exit statuses are ExitStatus's (errors.h).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "impsim/loader.h"
#include "impsim/run.h"

namespace impsim::cli {

// Flushes standard output; on a write error prints why and returns
// kExitOutput, else `status`. Every subcommand ends through it.
int finish_output(int status);

using Action = std::function<int()>;

// Options every command that runs a scenario shares: --set, --variant and
// the limits. add() registers them; options() checks and returns them.
struct RunFlags {
  std::vector<std::string> sets;
  std::vector<std::string> variants;
  std::string engine = "step";
  std::string revision;  // empty: the scenario's
  std::string cpython;
  RunOptions run;
  void add(CLI::App* cmd, bool with_variant = true);
  RunOptions options() const;  // throws InputError for a bad --set
};

// The loader's InputLimits as flags (--max-file-bytes, --max-json-depth,
// --max-tree-entries, --max-name-length); a command that loads a scenario
// registers them and passes `limits` to load_scenario_file.
void add_input_limits(CLI::App* cmd, InputLimits& limits);

void print_error(const std::string& message);

// Runs `body`, turning InputError into exit 2, InputLimitError,
// ModelLimitError and std::bad_alloc into 3.
int guarded(const std::string& file, const std::function<int()>& body);

Action add_run(CLI::App& app);
Action add_validate(CLI::App& app);
Action add_compare(CLI::App& app);
Action add_trace(CLI::App& app);  // sim/cmd_trace.cc
Action add_sweep(CLI::App& app);  // sim/cmd_sweep.cc
Action add_explore(CLI::App& app);  // sim/cli/cmd_explore.cc

}  // namespace impsim::cli
