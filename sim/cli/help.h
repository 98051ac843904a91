// What impsim says about itself: `impsim help [SUBCOMMAND]`, --help, the
// usage a bare `impsim` prints, the man page and the shell completions,
// all generated from the same CLI11 definitions so that they cannot drift
// (`impsim help --man` > docs/impsim.1, `impsim help --completion bash|zsh`
// > docs/completion/; the man_page_matches_help test keeps them equal).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace impsim::cli {

// The exit statuses, one per line: the help's "Exit status" and the man
// page's EXIT STATUS.
const std::vector<std::pair<int, std::string>>& exit_statuses();

// The environment variables impsim reads, with what each does: the help
// and the man page's ENVIRONMENT.
const std::vector<std::pair<std::string, std::string>>& environment_variables();

// Once every subcommand is registered (and the top level's footer set
// after them, so that none inherits it): the help's look on every command
// (80 columns; the limits in a group of their own, listed last).
void configure_help(CLI::App& app);

// Registers `help [SUBCOMMAND] [--man] [--completion SHELL]`; its action
// prints and returns 0 (2 for an unknown subcommand), or -1 when `help`
// was not given.
std::function<int()> add_help(CLI::App& app);

// Before CLI11 parses: a bare `impsim` (the help, exit 2), a first word
// that is no subcommand or an unknown flag before one (the error with a
// suggestion, exit 2). nullopt: parse.
std::optional<int> check_subcommand(CLI::App& app, int argc, char** argv);

// The help of impsim itself: what it is, the subcommands with one line
// each, examples, exit statuses and environment.
std::string main_help(const CLI::App& app);

// What help calls an option's value ("N", "FILE", "NAME=N") or a
// positional ("FILE...").
std::string metavar(const CLI::Option* o);

// Whether `o` is one of the limits (the "Limits" group): past one, impsim
// stops with exit status 3.
bool is_limit(const CLI::Option* o);

// "impsim run [OPTIONS] FILE...": the usage line of a subcommand.
std::string usage_of(const CLI::App* sub);

// `text` wrapped at `width` columns, every line after the first indented
// by `indent`; its own line breaks kept.
std::string wrap(const std::string& text, size_t indent, size_t width = 80);

// A subcommand's footer: paragraphs of notes, then "Examples:" and one
// example a line, "COMMAND   # COMMENT" or "COMMAND   COMMENT".
struct Example {
  std::string command;
  std::string comment;
};
struct Footer {
  std::vector<std::string> notes;
  std::vector<Example> examples;
};
Footer parse_footer(const std::string& footer);
// The examples as help and the man page print them, each line to be
// indented by `indent` (a comment after its command when both fit in 80
// columns, else on the line before; a long command continued with "\").
std::vector<std::string> example_lines(const std::vector<Example>& examples, size_t indent);

// An option's text with its default, said once.
std::string describe(const CLI::Option* o);

// The man page (roff) of `app`.
std::string man_page(const CLI::App& app);

// The bash or zsh completion script of `app` (docs/completion/, installed
// by `cmake --install`).
std::string completion_script(const CLI::App& app, const std::string& shell);

}  // namespace impsim::cli
