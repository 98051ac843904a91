// The command line: each subcommand registers itself on the CLI11 app and
// returns the function that runs it. Exit statuses are ExitStatus's (errors.h).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "impsim/reader/read_scenario.h"
#include "impsim/run/run.h"
#include "output.h"

namespace impsim::cli {

// Flushes standard output; on a write error prints why and returns
// kExitOutput, else `status`. Every subcommand ends through it.
int finish_output(int status);

using Action = std::function<int()>;

// Options every command that runs a scenario shares: --set, --variant, the
// engine, the axes (--revision, --cpython), --stats and the limits. add() registers
// them (`variant_help`: a command's own wording of --variant, such as
// compare's other default); options() checks and returns them.
// --variant is repeatable and takes comma lists (--variants is the same
// flag); a parameter --set twice is an error, as a variant given twice is.
struct RunFlags {
  std::vector<std::string> sets;
  std::vector<std::string> variants;
  std::string engine = "step";
  std::string revision;  // empty: the scenario's
  std::string cpython;
  bool stats = false;  // --stats: print_stats after each file
  RunOptions run;
  void add(CLI::App* cmd, const std::string& variant_help = "");
  RunOptions options() const;  // throws InputError for a bad --set
};

// The reader's InputLimits as flags (--max-file-bytes, --max-json-depth,
// --max-tree-entries, --max-name-length); a command that loads a scenario
// registers them and passes `limits` to parse_scenario_file.
void add_input_limits(CLI::App* cmd, InputLimits& limits);

// An integer flag checked on its text against [min, max] before CLI11
// converts it (base/number.h): "-1" or 2^64 is refused with the range, not
// wrapped into "no limit" or read modulo 2^32.
CLI::Option* add_integer_option(CLI::App* cmd, const std::string& flag, uint64_t& value, int64_t min, uint64_t max,
                                const std::string& help);
CLI::Option* add_integer_option(CLI::App* cmd, const std::string& flag, int& value, int64_t min, uint64_t max,
                                const std::string& help);
CLI::Option* add_integer_option(CLI::App* cmd, const std::string& flag, std::optional<uint64_t>& value, int64_t min,
                                uint64_t max, const std::string& help);

// A repeatable option that also takes comma lists (--variants a,b), one
// value per occurrence, so that the files after it stay files.
CLI::Option* add_list_option(CLI::App* cmd, const std::string& names, std::vector<std::string>& values,
                             const std::string& help);

// --stats: a line per run on standard error, its engine time (wall and
// CPU), events (asks + toggles), events per second and lookups; with the
// fast engine, the asks answered from memory.
void print_stats(const std::vector<VariantRun>& runs, EngineKind engine);

// "impsim: error: MESSAGE" on standard error, the message escaped for the
// terminal (it quotes file names, keys and arguments).
void print_error(const std::string& message);

// Runs `body`, turning InputError into exit 2, InputLimitError,
// ModelLimitError, ResourceError and std::bad_alloc into 3, OutputError
// into 4; each told
// by tell_error (output.h). `text`, once the body has loaded the scenario,
// holds the file's text: a ModelLimitError is placed at its step's line.
int guarded(const std::string& file, const std::function<int()>& body, Sink* sink = nullptr,
            const std::shared_ptr<const std::string>* text = nullptr);

// "a,b" -> {"a", "b"}; empty items dropped.
std::vector<std::string> split_list(const std::string& list);

// A run's report in the sink's format, plus the GitHub Actions annotations
// and step summary (github.h); run and sweep print through it.
void emit_run_report(Sink& sink, const ScenarioRun& result, const std::string& file, const std::string& command = "run");

Action add_run(CLI::App& app);
Action add_validate(CLI::App& app);
Action add_compare(CLI::App& app);
Action add_trace(CLI::App& app);
Action add_sweep(CLI::App& app);
Action add_explore(CLI::App& app);
Action add_schedules(CLI::App& app);

}  // namespace impsim::cli
