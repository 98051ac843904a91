// `impsim help [SUBCOMMAND]`, the usage a bare `impsim` prints, "unknown
// subcommand 'runn' (did you mean 'run'?)", and the man page, generated
// from the same CLI11 definitions as --help so that the two cannot drift
// (`impsim help --man` > docs/impsim.1; the man_page_matches_help test).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace impsim::cli {

// The exit statuses, one per line: the --help footer and the man page's EXIT STATUS.
const std::vector<std::pair<int, std::string>>& exit_statuses();

// Registers `help [SUBCOMMAND] [--man]`; its action prints and returns 0
// (2 for an unknown subcommand), or -1 when `help` was not given.
std::function<int()> add_help(CLI::App& app);

// Before CLI11 parses: a bare `impsim` (usage, exit 2) or a first word that
// is no subcommand (the error with a suggestion, exit 2). nullopt: parse.
std::optional<int> check_subcommand(CLI::App& app, int argc, char** argv);

// The man page (roff) of `app`.
std::string man_page(CLI::App& app);

// The bash or zsh completion script of `app` (docs/completion/, installed
// by `cmake --install`).
std::string completion_script(CLI::App& app, const std::string& shell);

}  // namespace impsim::cli
