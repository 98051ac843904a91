// The first look at a command line, before CLI11 sees it: registering every
// subcommand's options costs more than a small command's whole run, so
// impsim sets up only what the command line can reach. What lists or
// compares the subcommands (the help, a wrong first word, the man page, the
// completions) needs every one of them.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace impsim::cli {

struct CommandLineScan {
  enum class Needs {
    Everything,     // every subcommand, then help
    OneSubcommand,  // names[index] alone
    TopLevel,       // no subcommand: `impsim --version`
  };
  Needs needs = Needs::Everything;
  size_t index = 0;
};

// `names`: the subcommands that can be set up alone (help lists the others,
// so it is not one of them). A first word that is one of them needs that
// one; `impsim --version` and nothing else needs none; anything else (no
// word, help, --help, a flag before the subcommand, `--`, a word that is
// no subcommand) needs everything.
CommandLineScan scan_command_line(int argc, const char* const* argv, std::span<const std::string_view> names);

}  // namespace impsim::cli
