#include "help.h"

#include <fmt/format.h>

#include <iostream>

#include "cli.h"
#include "impsim/base/did_you_mean.h"
#include "usage_errors.h"

namespace impsim::cli {

const std::vector<std::pair<int, std::string>>& exit_statuses() {
  static const std::vector<std::pair<int, std::string>> v = {
      {0, "ran and every expectation holds"},
      {1, "an expectation failed or the program raised"},
      {2, "invalid scenario or command line (file:line:column, the JSON pointer and what was expected)"},
      {3, "a limit was reached (the run's counts are marked partial)"},
      {4,
       "the report could not be written (a full disk, -o); a closed pipe (impsim trace ... | head) also "
       "ends impsim with 4, quietly: the reader has gone, so there is no one to tell"},
  };
  return v;
}

const std::vector<std::pair<std::string, std::string>>& environment_variables() {
  // Those sim/cli/github.cc reads, and the one sim/base/under_valgrind.cc
  // reads; impsim reads no other (the IMPSIM_* variables are tools/test's).
  static const std::vector<std::pair<std::string, std::string>> v = {
      {"GITHUB_ACTIONS",
       "\"true\": every failure (an expectation, an invalid scenario, a limit, an exception, an output "
       "error) is also written as an ::error annotation at its line of the file"},
      {"GITHUB_STEP_SUMMARY",
       "a file: run, compare and sweep append their report to it as Markdown, and every command the list "
       "of its failures"},
      {"LD_PRELOAD",
       "read only to tell whether impsim runs under valgrind (whose preload library it names): there the "
       "engine runs on a thread of its own and the heap is left as the C library lays it out; no output "
       "changes"},
  };
  return v;
}

namespace {

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::App* sub : app.get_subcommands({})) out.push_back(sub->get_name());
  return out;
}

}  // namespace

std::function<int()> add_help(CLI::App& app) {
  struct State {
    std::string sub;
    bool man = false;
    std::string completion;
  };
  auto st = std::make_shared<State>();
  auto* cmd = app.add_subcommand("help", "Print the subcommands, or the help of one");
  // Registered last: every subcommand is known by now.
  one_of(cmd->add_option("subcommand", st->sub, "The subcommand whose options to print"), "subcommand",
         subcommand_names(app));
  cmd->add_flag("--man", st->man, "Print the man page (roff), generated from the same definitions as --help");
  one_of(cmd->add_option("--completion", st->completion, "Print the completion script for this shell: bash or zsh"),
         "shell", {"bash", "zsh"});
  cmd->footer(
      "Examples:\n"
      "  impsim help                      # the subcommands\n"
      "  impsim help run                  # the options of run\n"
      "  impsim help --man > impsim.1\n"
      "  impsim help --completion bash > impsim.bash      # README: where to put it\n");
  return [st, cmd, &app]() -> int {
    if (!cmd->parsed()) return -1;
    if (st->man) {
      std::cout << man_page(app);
      return 0;
    }
    if (!st->completion.empty()) {
      std::cout << completion_script(app, st->completion);
      return 0;
    }
    // app.help() would print the help of `help`, the subcommand given.
    std::cout << (st->sub.empty() ? main_help(app) : app.get_subcommand(st->sub)->help());
    return 0;
  };
}

std::optional<int> check_subcommand(CLI::App& app, int argc, char** argv) {
  if (argc < 2) {
    std::cerr << main_help(app);
    return kExitInvalid;
  }
  std::optional<std::string> problem = first_word_problem(app, argv[1]);
  if (!problem) return std::nullopt;
  print_error(*problem);
  if (json_requested(argc, argv))
    std::cout << dump_json(error_json({"usage", "", *problem, "", 0, 0, "", kExitInvalid})) << "\n";
  return kExitInvalid;
}

}  // namespace impsim::cli
