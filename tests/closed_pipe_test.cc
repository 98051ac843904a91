// A reader that stops early (`impsim trace ... | head -1`): impsim ends
// with exit status 4, as its help promises, and says nothing: no
// SIGPIPE death (141 in a shell), no message for a reader that has gone.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "test_util.h"

using impsim::test::kNested;

using namespace impsim;

namespace {


struct Ended {
  int status;       // the exit status, or -signal when a signal killed it
  std::string err;  // what it wrote on standard error
};

// Runs impsim with standard output a pipe whose reading end is closed before
// impsim starts: its first write finds no reader, whatever the timing.
// `pipe_signal` is the SIGPIPE disposition impsim inherits (a shell leaves
// SIG_DFL; some parents, such as a Python subprocess, may leave SIG_IGN).
Ended with_reader_gone(const std::vector<std::string>& args, void (*pipe_signal)(int)) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  close(fds[0]);
  const std::string err_path = test::write_temp("closed_pipe_stderr.txt", "");
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[1]);
    int err = open(err_path.c_str(), O_WRONLY | O_TRUNC);
    dup2(err, STDERR_FILENO);
    signal(SIGPIPE, pipe_signal);
    std::vector<char*> argv{const_cast<char*>(IMPSIM_BINARY)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(IMPSIM_BINARY, argv.data());
    _exit(127);
  }
  close(fds[1]);
  int raw = 0;
  waitpid(pid, &raw, 0);
  std::ifstream in(err_path);
  std::stringstream err;
  err << in.rdbuf();
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -WTERMSIG(raw), err.str()};
}

}  // namespace

TEST_CASE("a closed pipe ends run and trace with exit status 4, quietly") {
  const std::vector<std::vector<std::string>> commands = {
      {"run", kNested},
      {"run", kNested, "--format", "json"},
      {"trace", kNested, "--set", "k=2"},
      {"compare", kNested},
      {"validate", kNested},
  };
  for (void (*disposition)(int) : {SIG_DFL, SIG_IGN}) {
    for (const auto& args : commands) {
      CAPTURE(args.front());
      CAPTURE(args.size());
      CAPTURE(disposition == SIG_IGN);
      Ended e = with_reader_gone(args, disposition);
      CHECK(e.status == 4);
      CHECK(e.err.empty());
    }
  }
}

TEST_CASE("impsim trace | head -1: the shell sees exit status 4 and no message") {
  // 2.3 MB of trace: far more than a pipe holds, so impsim is still writing
  // when head has read its line and gone.
  const std::string status = test::write_temp("head_status.txt", "");
  auto r = test::shell("{ " + std::string(IMPSIM_BINARY) + " trace " + kNested +
                       " --set k=6 --max-lines 0; echo $? > " + status + "; } | head -1");
  CHECK(r.out == "# impsim trace of nested_guards: k nested scoped guards, then one probe for a missing submodule\n");
  std::ifstream in(status);
  int code = -1;
  in >> code;
  CHECK(code == 4);
}
