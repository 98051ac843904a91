// impsim's command line. Each subcommand lives in its own sim/cli/cmd_*.cc;
// what impsim says about itself, in help.h; about a wrong command line, in
// usage_errors.h.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <exception>
#include <cxxabi.h>
#include <new>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <string_view>

#include "cli.h"
#include "help.h"
#include "impsim/base/heap.h"
#include "impsim/base/version.h"
#include "subcommand_scan.h"
#include "usage_errors.h"

using namespace impsim;

int cli::finish_output(int status) {
  errno = 0;
  std::cout.flush();
  bool failed = !std::cout;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) failed = true;
  if (!failed) return status;
  const int err = errno;
  if (err == EPIPE) return kExitOutput;  // a closed pipe: quietly, as on_closed_pipe
  try {
    print_error(
        fmt::format("cannot write the report to standard output: {}", err != 0 ? std::strerror(err) : "write error"));
  } catch (const std::exception&) {
    // Standard error is unwritable too: the status alone says it.
  }
  return kExitOutput;
}

namespace {

// The reader of standard output has gone (`impsim trace ... | head -1`): the
// report cannot be written, which is exit status 4, and there is no one
// left to tell, so nothing is said (a message would only clutter the
// terminal of a pipeline that ended as its user meant). Stopping here also
// spares the rest of a run whose output nobody reads.
extern "C" void on_closed_pipe(int) { _exit(kExitOutput); }

// An allocation that fails where no exception may leave (a destructor: the
// JSON library frees a document with a vector of its own) ends in
// std::terminate, which would abort with a core and a message about no
// active exception. Every failed allocation is noted first; a terminate
// that follows one is said as what it is, out of memory, with exit status
// 3, and whatever standard output still holds is dropped, not flushed: no
// part of a report goes out as if it were whole. Nothing here allocates.
std::atomic<bool> allocation_failed{false};

void note_failed_allocation() {
  allocation_failed.store(true);
  throw std::bad_alloc();
}

[[noreturn]] void on_terminate() {
  if (!allocation_failed.load()) __gnu_cxx::__verbose_terminate_handler();  // a bug: the usual message and abort
  static const char kMessage[] =
      "impsim: error: out of memory: an allocation failed where it could not be handled; nothing of this run was "
      "reported (raise the memory limit, or lower --max-file-bytes or the limit the scenario reaches)\n";
  static const char kAnnotation[] =
      "::error title=impsim out of memory::out of memory: an allocation failed where it could not be handled; nothing "
      "of this run was reported\n";
  ssize_t ignored = write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  const char* actions = std::getenv("GITHUB_ACTIONS");
  if (actions && std::strcmp(actions, "true") == 0) ignored = write(STDERR_FILENO, kAnnotation, sizeof kAnnotation - 1);
  (void)ignored;
  _exit(kExitLimit);
}

// Before every other static initialiser (CLI11's validators allocate):
// under a cap small enough, even those fail.
[[gnu::constructor(101)]] void report_memory_failures() {
  std::set_new_handler(note_failed_allocation);
  std::set_terminate(on_terminate);
}

void exit_on_closed_pipe() {
  struct sigaction action {};
  action.sa_handler = on_closed_pipe;
  sigemptyset(&action.sa_mask);
  sigaction(SIGPIPE, &action, nullptr);
  // A parent may have blocked it; then writes would fail with EPIPE
  // (finish_output says 4 the same way).
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  sigprocmask(SIG_UNBLOCK, &pipe_signal, nullptr);
}

}  // namespace

namespace {

// The subcommands a command line may name first, in the order the help
// lists them; help comes after them, since it lists them. A name here that
// its add_ function did not register would only cost time: the lean app's
// parse would refuse the command line, and the whole app parse it again.
struct Subcommand {
  std::string_view name;
  cli::Action (*add)(CLI::App& app);
};
constexpr Subcommand kSubcommands[] = {
    {"run", cli::add_run},     {"validate", cli::add_validate}, {"compare", cli::add_compare},
    {"trace", cli::add_trace}, {"sweep", cli::add_sweep},       {"explore", cli::add_explore},
    {"schedules", cli::add_schedules},
};
constexpr auto kSubcommandNames = [] {
  std::array<std::string_view, std::size(kSubcommands)> names{};
  for (size_t i = 0; i < names.size(); ++i) names[i] = kSubcommands[i].name;
  return names;
}();

std::unique_ptr<CLI::App> make_app() {
  auto app = std::make_unique<CLI::App>(
      "impsim: a deterministic simulator of Python import resolution (CPython 3.11) with the torch proxy "
      "finder as released (\"before\") and with its reentrancy fix (\"after\").",
      "impsim");
  app->set_version_flag("--version", std::string("impsim ") + impsim_version(), "Print the version and exit");
  app->require_subcommand(1);
  return app;
}

// The subcommands `scan` needs, then the top level's footer and the help's
// look (help.h).
std::vector<cli::Action> set_up(CLI::App& app, const cli::CommandLineScan& scan) {
  std::vector<cli::Action> actions;
  switch (scan.needs) {
    case cli::CommandLineScan::Needs::Everything:
      for (const Subcommand& sub : kSubcommands) actions.push_back(sub.add(app));
      actions.push_back(cli::add_help(app));
      break;
    case cli::CommandLineScan::Needs::OneSubcommand:
      actions.push_back(kSubcommands[scan.index].add(app));
      break;
    case cli::CommandLineScan::Needs::TopLevel:
      break;
  }
  // After the subcommands: a subcommand made before it would inherit it.
  app.footer(
      "Every flag means the same in every subcommand that takes it. --json (--format json): the output is one "
      "JSON document (an error too: the JSON error object); -o FILE: written to FILE instead of standard output; "
      "--quiet: no report, the exit status says it; --counters: the table's rows; --stats: each run's time on "
      "standard error. All but explore (one file, an HTML page) take several files and --format. run, compare "
      "and sweep check the scenario's expectations and list those they could not; trace and explore show a run "
      "and check none. Shell completion: impsim help --completion bash (or zsh); the README says where to put "
      "it.\n\n"
      "Examples:\n"
      "  impsim run scenarios/nested_guards.json          # the seed table, k = 1..4\n"
      "  impsim run scenarios/seed_incident.json --json   # the incident, as JSON\n"
      "  impsim run scenarios/nested_guards.json --set k=6 --variant after\n"
      "  impsim validate scenarios/*.json\n"
      "  impsim explore scenarios/seed_incident.json -o incident.html   # step through it in a browser\n"
      "  impsim help run                                  # the options of run\n");
  cli::configure_help(app);
  return actions;
}

// The status of the action of the subcommand parsed, or -1 when none was.
int run_parsed(std::vector<cli::Action>& actions) {
  for (auto& action : actions)
    if (int status = action(); status >= 0) return cli::finish_output(status);
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  prefer_large_pages();
  exit_on_closed_pipe();
  const cli::CommandLineScan scan = cli::scan_command_line(argc, argv, kSubcommandNames);
  // Kept to the end: one_of's table (usage_errors.cc) holds the addresses
  // of its options.
  std::unique_ptr<CLI::App> lean;
  if (scan.needs != cli::CommandLineScan::Needs::Everything) {
    lean = make_app();
    std::vector<cli::Action> actions = set_up(*lean, scan);
    bool parsed = false;
    try {
      lean->parse(argc, argv);
      parsed = true;
    } catch (const CLI::ParseError& e) {
      // --help and --version print what the part set up says.
      if (e.get_exit_code() == 0) return cli::finish_output(lean->exit(e));
      // A refusal may name another subcommand's flag, or the nearest
      // subcommand: the whole app parses the command line again below.
    }
    if (parsed)
      if (int status = run_parsed(actions); status >= 0) return status;
  }

  std::unique_ptr<CLI::App> app = make_app();
  std::vector<cli::Action> actions = set_up(*app, {});
  if (auto status = cli::check_subcommand(*app, argc, argv)) return *status;
  try {
    app->parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return cli::finish_output(app->exit(e));  // --help, --version
    const cli::ErrorInfo info{"usage", "", cli::usage_error_message(*app, e, argc, argv), "", 0, 0, "", kExitInvalid};
    cli::tell_error(info, nullptr);
    if (cli::json_requested(argc, argv)) std::cout << dump_json(cli::error_json(info)) << "\n";
    return cli::finish_output(kExitInvalid);
  }
  if (int status = run_parsed(actions); status >= 0) return status;
  return kExitInvalid;
}
