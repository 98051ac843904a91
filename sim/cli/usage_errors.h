// What impsim says when a command line is wrong: CLI11's refusals
// rewritten with impsim's one prefix, the word that was wrong, the nearest
// right one ("unknown flag '--quite' for run (did you mean '--quiet'?)")
// and where to read more; and the flags whose value is one of a fixed list,
// which refuse a typo the same way and tell the shell completion (help.h)
// what to offer.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace impsim::cli {

// Makes `opt` take one of `names` ("--engine fats: unknown engine (did you
// mean 'fast'?); expected one of: step, fast"); `what` names the value
// ("engine"). Returns `opt`. `also`, when given, accepts values beyond the
// names (a CPython release "3.13.5" beside the lines' names), and `also_text`
// says what they are at the end of the error.
CLI::Option* one_of(CLI::Option* opt, const std::string& what, std::vector<std::string> names,
                    std::function<bool(const std::string&)> also = nullptr, std::string also_text = "");

// Values the completion offers for `opt` without the flag refusing others
// (--variant: a design, checked against the scenario when it runs).
CLI::Option* complete_with(CLI::Option* opt, std::vector<std::string> names);

// What completion offers for `opt`: one_of's or complete_with's names, or
// nullptr for a flag with no fixed values.
const std::vector<std::string>* values_of(const CLI::Option* opt);

// Every flag `app` takes, as typed: "-o", "--output", ...
std::vector<std::string> flag_names(const CLI::App* app);

// The message (without "impsim: error: ") for CLI11's refusal `e` of the
// command line `argv`.
std::string usage_error_message(CLI::App& app, const CLI::ParseError& e, int argc, char** argv);

// A first word that is no subcommand, or a flag before the subcommand: the
// message, or nullopt when CLI11 is to parse the command line.
std::optional<std::string> first_word_problem(CLI::App& app, const std::string& first);

}  // namespace impsim::cli
