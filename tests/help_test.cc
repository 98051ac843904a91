// What impsim says about itself, through the binary: `impsim help`, each
// subcommand's --help (80 columns, ranges once, limits last), the man page
// and the completions generated from the same definitions.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "test_util.h"

using impsim::test::kSource;

using namespace impsim;

namespace {

const std::vector<std::string> kSubcommands = {"run",   "validate", "compare",   "trace",
                                               "sweep", "explore",  "schedules", "help"};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string line; std::getline(s, line);) out.push_back(line);
  return out;
}

// What the bash completion offers for the words typed so far (the last one
// being completed), run in a directory that holds files, so that file
// names offered where none belong show.
std::string complete(const std::string& words) {
  const std::string script = test::write_temp("impsim.bash", test::impsim("help --completion bash").out);
  // A word being started is an empty one.
  const std::string typed = words.ends_with(' ') ? words + "\"\"" : words;
  auto r = test::shell("cd " + kSource + "/tests/bad && bash -c 'source " + script + "; COMP_WORDS=(" + typed +
                       "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _impsim; echo \"${COMPREPLY[*]}\"'");
  CAPTURE(words);
  CHECK(r.status == 0);
  return r.out.substr(0, r.out.find('\n'));
}

}  // namespace

TEST_CASE("impsim help lists the subcommands, one line each, with examples, as --help and a bare impsim do") {
  auto help = test::impsim("help");
  CHECK(help.status == 0);
  CAPTURE(help.out);
  CHECK(help.out == test::impsim("--help").out);
  // A bare impsim is a usage error: the same text, exit 2.
  auto bare = test::impsim("");
  CHECK(bare.status == 2);
  CHECK(bare.out == help.out);
  CHECK(help.out.find("Subcommands:\n  run        Run scenarios") != std::string::npos);
  for (const std::string& s : kSubcommands) CHECK(help.out.find("\n  " + s + " ") != std::string::npos);
  CHECK(help.out.find("\nExamples:\n  impsim run scenarios/nested_guards.json") != std::string::npos);
  CHECK(help.out.find("\nExit status:\n  0  ") != std::string::npos);
  CHECK(help.out.find("\nEnvironment:\n  GITHUB_ACTIONS") != std::string::npos);
  // Not the help of the subcommand `help`.
  CHECK(help.out != test::impsim("help --help").out);
  CHECK(test::impsim("help help").out == test::impsim("help --help").out);
  CHECK(test::impsim("help run").out == test::impsim("run --help").out);
}

TEST_CASE("every help fits in 80 columns, names each value once and lists the limits last") {
  for (const std::string& sub :
       std::vector<std::string>{"", "run", "validate", "compare", "trace", "sweep", "explore", "help"}) {
    auto r = test::impsim("help " + sub);
    CAPTURE(sub);
    CHECK(r.status == 0);
    for (const std::string& line : lines_of(r.out)) {
      CAPTURE(line);
      CHECK(line.size() <= 80);
    }
    // CLI11's "UINT:0..18446744073709551615" beside the text's own range.
    CHECK(r.out.find("INT:") == std::string::npos);
    CHECK(r.out.find("TEXT") == std::string::npos);
  }
  auto run = test::impsim("run --help");
  CAPTURE(run.out);
  CHECK(run.out.find("  --max-lookup-depth N    Stop (exit 3) past this lookup nesting (1..1000,\n"
                     "                          default 200)\n") != std::string::npos);
  // The limits come last, in their own group, after every other option.
  const size_t limits = run.out.find("\nLimits (past one, impsim stops with exit status 3; docs/limits.md):\n");
  REQUIRE(limits != std::string::npos);
  CHECK(run.out.find("\nOptions:\n") < limits);
  CHECK(run.out.find("--max-", run.out.find("\nOptions:\n")) > limits);
  const std::string limit_group = run.out.substr(limits, run.out.find("\n\n", limits + 1) - limits);
  CHECK(limit_group.find("--max-events N") != std::string::npos);
  CHECK(limit_group.find("--max-sweep-values N") != std::string::npos);
  CHECK(limit_group.find("--quiet") == std::string::npos);
  // trace's --max-lines cuts the output, exit 0: not a limit.
  auto trace = test::impsim("trace --help");
  CHECK(trace.out.find("--max-lines") < trace.out.find("\nLimits ("));
}

TEST_CASE("--variant's help names the hook designs, and says where Paddle's designs apply") {
  for (const std::string& sub : std::vector<std::string>{"run", "sweep", "trace", "explore"}) {
    CAPTURE(sub);
    std::string help;
    for (const std::string& line : lines_of(test::impsim("help " + sub).out)) {
      const size_t text = line.find_first_not_of(' ');
      help += (help.empty() ? "" : " ") + (text == std::string::npos ? "" : line.substr(text));
    }
    CHECK(help.find("these are the designs of Paddle's finder P, which a scenario with hooks runs only where P takes "
                    "part; the hook designs: as_is, idempotent_install, remove_all") != std::string::npos);
    CHECK(help.find("(default: the scenario's; with hooks, as_is)") != std::string::npos);
  }
}

TEST_CASE(
    "the man page: the synopsis as each subcommand takes its files, examples that are commands, the environment") {
  auto man = test::impsim("help --man");
  CHECK(man.status == 0);
  const std::string& m = man.out;
  CHECK(m.find("impsim explore FILE [OPTIONS]\n") != std::string::npos);
  CHECK(m.find("impsim run FILE... [OPTIONS]\n") != std::string::npos);
  CHECK(m.find("impsim help [SUBCOMMAND] [OPTIONS]\n") != std::string::npos);
  // The examples are commands: no footer text (exit statuses, notes) among them.
  const std::string examples = m.substr(m.find(".SH EXAMPLES"), m.find(".SH SEE ALSO") - m.find(".SH EXAMPLES"));
  for (const std::string& line : lines_of(examples)) {
    if (line.starts_with(".") || line.starts_with("#")) continue;
    CAPTURE(line);
    CHECK((line.starts_with("impsim ") || line.starts_with("    ")));
  }
  CHECK(examples.find("Exit status") == std::string::npos);
  // ENVIRONMENT names every variable impsim's own code reads.
  const size_t env = m.find(".SH ENVIRONMENT\n");
  REQUIRE(env != std::string::npos);
  const std::string environment = m.substr(env, m.find(".SH FILES") - env);
  std::set<std::string> read_vars;
  const std::regex getenv_call(R"(getenv\("([A-Z_]+)\"\))");
  for (auto& e : std::filesystem::recursive_directory_iterator(kSource + "/sim")) {
    if (!e.is_regular_file()) continue;
    const std::string text = impsim::test::read_file(e.path().string());
    for (std::sregex_iterator it(text.begin(), text.end(), getenv_call), end; it != end; ++it)
      read_vars.insert((*it)[1]);
  }
  CHECK(read_vars == std::set<std::string>{"GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "LD_PRELOAD"});
  for (const std::string& v : read_vars) {
    CAPTURE(v);
    CHECK(environment.find(".B " + v + "\n") != std::string::npos);
  }
  // The closed pipe's exit status is said where the statuses are.
  CHECK(m.find("a closed pipe") != std::string::npos);
}

TEST_CASE("bash completion offers subcommands, flags and the values of flags with fixed ones, files only for files") {
  for (const auto& [typed, offered] : std::vector<std::pair<std::string, std::string>>{
           {"impsim ru", "run"},
           {"impsim help ", "run validate compare trace sweep explore schedules help"},
           {"impsim help co", "compare"},
           {"impsim run x.json --qu", "--quiet"},
           {"impsim run x.json --variant af", "after after+idempotent-enable after-global-set"},
           {"impsim run x.json --variants before,af",
            "before,after before,after+idempotent-enable before,after-global-set"},
           {"impsim compare x.json --baseline idem", "idempotent-enable idempotent_install"},
           {"impsim run x.json --revision ", "b52ce17 04efefd"},
           {"impsim run x.json --cpython 3.1", "3.10 3.11 3.12 3.13 3.13.13 3.13.16 3.14 3.14.4 3.15"},
           {"impsim run x.json --engine ", "step fast"},
           {"impsim trace x.json --format ", "text json markdown chrome dot importtime"},
           {"impsim run x.json --format m", "markdown"},
           {"impsim help --completion ", "bash zsh"},
           // A name or a number: nothing to offer, not the directory's files.
           {"impsim run x.json --set ", ""},
           {"impsim sweep x.json --param ", ""},
           {"impsim run x.json --max-events ", ""},
           // Where files go: the scenario files (tests/bad/ holds some).
           {"impsim run json_syn", "json_syntax.json"},
           {"impsim trace x.json -o json_syn", "json_syntax.json"},
       })
    CHECK(complete(typed) == offered);
}
