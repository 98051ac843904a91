// The first look at a command line (sim/cli/subcommand_scan.h): a command
// line that starts with a subcommand gets that one set up alone, and every
// other (the help, the man page, the completions, a flag before the
// subcommand, a misspelt one) gets all of them, which its answer lists or
// compares.
#include <doctest/doctest.h>

#include <array>
#include <string>
#include <vector>

#include "subcommand_scan.h"

using impsim::cli::CommandLineScan;
using Needs = impsim::cli::CommandLineScan::Needs;

namespace {

constexpr std::array<std::string_view, 3> kNames = {"run", "validate", "explore"};

CommandLineScan scan(std::vector<std::string> words) {
  std::vector<const char*> argv = {"impsim"};
  for (const std::string& w : words) argv.push_back(w.c_str());
  return impsim::cli::scan_command_line(static_cast<int>(argv.size()), argv.data(), kNames);
}

}  // namespace

TEST_CASE("a subcommand first: that one alone, whatever follows it") {
  CHECK(scan({"run", "x.json"}).needs == Needs::OneSubcommand);
  CHECK(scan({"run", "x.json"}).index == 0);
  CHECK(scan({"validate"}).index == 1);
  CHECK(scan({"explore", "x.json", "-o", "x.html"}).index == 2);
  // Its own help, a flag of another subcommand, `--`: the parse of the one
  // says it, or hands the command line on to the whole app.
  CHECK(scan({"run", "--help"}).needs == Needs::OneSubcommand);
  CHECK(scan({"run", "--svg", "x.svg", "x.json"}).needs == Needs::OneSubcommand);
  CHECK(scan({"run", "--", "-x.json"}).needs == Needs::OneSubcommand);
  CHECK(scan({"run", "validate"}).index == 0);
}

TEST_CASE("--version alone: no subcommand") {
  CHECK(scan({"--version"}).needs == Needs::TopLevel);
  CHECK(scan({"--version", "run"}).needs == Needs::Everything);
  CHECK(scan({"--version=1"}).needs == Needs::Everything);
}

TEST_CASE("what lists or compares the subcommands: all of them") {
  CHECK(scan({}).needs == Needs::Everything);  // a bare impsim prints the help
  CHECK(scan({"help"}).needs == Needs::Everything);
  CHECK(scan({"help", "run"}).needs == Needs::Everything);
  CHECK(scan({"help", "--man"}).needs == Needs::Everything);
  CHECK(scan({"help", "--completion", "bash"}).needs == Needs::Everything);
  CHECK(scan({"--help"}).needs == Needs::Everything);
  CHECK(scan({"-h", "run"}).needs == Needs::Everything);
  // A flag before the subcommand, `--` first, a misspelt or unknown word:
  // the error names the subcommands that take the flag, or the nearest one.
  CHECK(scan({"--json", "run", "x.json"}).needs == Needs::Everything);
  CHECK(scan({"--", "run", "x.json"}).needs == Needs::Everything);
  CHECK(scan({"rnu", "x.json"}).needs == Needs::Everything);
  CHECK(scan({"x.json"}).needs == Needs::Everything);
  CHECK(scan({"RUN"}).needs == Needs::Everything);
  CHECK(scan({"runs"}).needs == Needs::Everything);
  CHECK(scan({""}).needs == Needs::Everything);
}
