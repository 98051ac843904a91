// impsim's command line. Each subcommand lives in its own sim/cli/cmd_*.cc.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "cli.h"
#include "help.h"
#include "impsim/version.h"

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
    print_error(fmt::format("cannot write the report to standard output: {}",
                            err != 0 ? std::strerror(err) : "write error"));
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

int main(int argc, char** argv) {
  exit_on_closed_pipe();
  CLI::App app{"impsim: a deterministic simulator of Python import resolution (CPython 3.11) with the torch proxy\n"
               "finder as released (\"before\") and with its reentrancy fix (\"after\").",
               "impsim"};
  app.set_version_flag("--version", std::string("impsim ") + impsim_version());
  app.require_subcommand(1);
  std::string statuses;
  for (auto& [code, text] : cli::exit_statuses()) statuses += fmt::format("  {}  {}\n", code, text);
  app.footer(
      "Examples:\n"
      "  impsim run scenarios/nested_guards.json          the seed table, k = 1..4\n"
      "  impsim run scenarios/seed_incident.json --json   the incident as a JSON report\n"
      "  impsim run scenarios/nested_guards.json --set k=6 --variant after\n"
      "  impsim validate scenarios/*.json\n"
      "  impsim explore scenarios/seed_incident.json -o incident.html   step through it in a browser\n"
      "  impsim help run                                  the options of one subcommand\n\n"
      "Every subcommand takes --json (errors too are JSON then) and --quiet; all but explore (one file, an\n"
      "HTML page) take several files and --format text|json|markdown.\n\n"
      "Exit status:\n" +
      statuses);

  std::vector<cli::Action> actions = {
      cli::add_run(app),
      cli::add_validate(app),
      cli::add_compare(app),
      cli::add_trace(app), cli::add_sweep(app),
      cli::add_explore(app),
      cli::add_help(app),
  };

  if (auto status = cli::check_subcommand(app, argc, argv)) return *status;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0 && cli::json_requested(argc, argv)) {
      cli::print_error(e.what());
      std::cout << dump_json(cli::error_json({"usage", "", e.what(), "", 0, 0, "", kExitInvalid})) << "\n";
      return kExitInvalid;
    }
    int code = app.exit(e);
    return code == 0 ? 0 : kExitInvalid;
  }
  for (auto& action : actions)
    if (int status = action(); status >= 0) return cli::finish_output(status);
  return kExitInvalid;
}
