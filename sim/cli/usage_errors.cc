#include "usage_errors.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "help.h"
#include "impsim/base/did_you_mean.h"

namespace impsim::cli {

namespace {

// Options are made once, at start-up, and live as long as the app.
std::map<const CLI::Option*, std::vector<std::string>>& value_table() {
  static std::map<const CLI::Option*, std::vector<std::string>> table;
  return table;
}

// The subcommand argv names (argv[1], once first_word_problem has passed
// it), or nullptr at the top level.
CLI::App* subcommand_of(CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return nullptr;
  for (CLI::App* sub : app.get_subcommands({}))
    if (sub->get_name() == argv[1]) return sub;
  return nullptr;
}

// "compare and sweep": the subcommands that do take `flag`.
std::string takers_of(CLI::App& app, const std::string& flag) {
  std::vector<std::string> takers;
  for (CLI::App* sub : app.get_subcommands({})) {
    std::vector<std::string> names = flag_names(sub);
    if (std::find(names.begin(), names.end(), flag) != names.end()) takers.push_back(sub->get_name());
  }
  std::string out;
  for (size_t i = 0; i < takers.size(); ++i) out += (i == 0 ? "" : i + 1 == takers.size() ? " and " : ", ") + takers[i];
  return out;
}

// CLI11 lists the unexpected arguments last first.
std::vector<std::string> extras_of(const CLI::ParseError& e) {
  std::string text = e.what();
  std::vector<std::string> out;
  size_t colon = text.find(": ");
  if (colon == std::string::npos) return out;
  for (size_t at = colon + 2; at <= text.size();) {
    size_t space = std::min(text.find(' ', at), text.size());
    if (space > at) out.push_back(text.substr(at, space - at));
    at = space + 1;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

// The flag nearest to `flag`, compared without their dashes: "-x" is no
// typo of "-h", "--quite" one of "--quiet".
std::string flag_note(const std::string& flag, const std::vector<std::string>& flags) {
  auto bare = [](const std::string& f) { return f.substr(std::min(f.find_first_not_of('-'), f.size())); };
  std::vector<std::string> names;
  for (const std::string& f : flags) names.push_back(bare(f));
  std::optional<std::string> near = did_you_mean(bare(flag), names);
  if (!near) return "";
  for (const std::string& f : flags)
    if (bare(f) == *near) return " (did you mean '" + f + "'?)";
  return "";
}

std::string unexpected(CLI::App& app, CLI::App* sub, const std::string& arg) {
  const std::string who = sub ? sub->get_name() : "impsim";
  if (arg.size() > 1 && arg[0] == '-') {
    const std::string flag = arg.substr(0, arg.find('='));
    std::string note = flag_note(flag, flag_names(sub ? sub : &app));
    if (note.empty())
      if (std::string takers = takers_of(app, flag); !takers.empty()) note = fmt::format(" (a flag of {})", takers);
    return fmt::format("unknown flag '{}' for {}{}", flag, who, note);
  }
  // One positional too many: explore's second file, help's second subcommand.
  if (sub)
    for (const CLI::Option* o : sub->get_options())
      if (o->get_positional() && o->get_items_expected_max() == 1)
        return fmt::format("{} takes one {}; '{}' is one too many", who, metavar(o), arg);
  return fmt::format("unexpected argument '{}' for {}", arg, who);
}

// "impsim sweep needs --param NAME", "impsim run needs FILE... (one or more
// scenario files)".
std::string required(CLI::App* sub, const std::string& name) {
  const std::string who = sub ? "impsim " + sub->get_name() : "impsim";
  const CLI::Option* o = sub ? sub->get_option_no_throw(name) : nullptr;
  if (!o) return name + " is required";
  if (o->get_positional())
    return fmt::format("{} needs {} ({})", who, metavar(o),
                       o->get_items_expected_max() == 1 ? "a scenario file" : "one or more scenario files");
  return fmt::format("{} needs {} {}", who, name, metavar(o));
}

}  // namespace

std::vector<std::string> flag_names(const CLI::App* app) {
  std::vector<std::string> out;
  for (const CLI::Option* o : app->get_options()) {
    for (const std::string& s : o->get_snames()) out.push_back("-" + s);
    for (const std::string& l : o->get_lnames()) out.push_back("--" + l);
  }
  return out;
}

CLI::Option* one_of(CLI::Option* opt, const std::string& what, std::vector<std::string> names,
                    std::function<bool(const std::string&)> also, std::string also_text) {
  const std::string flag = opt->get_name();
  const bool positional = opt->get_positional();
  opt->check(CLI::Validator(
      [flag, positional, what, names, also, also_text](std::string& value) -> std::string {
        if (std::find(names.begin(), names.end(), value) != names.end()) return "";
        if (also && also(value)) return "";
        const std::string tail = also_text.empty() ? "" : "; " + also_text;
        // Said whole: usage_error_message drops CLI11's "NAME: " before it.
        if (positional)
          return fmt::format("unknown {} '{}'{}; expected one of: {}{}", what, value, did_you_mean_note(value, names),
                             name_list(names), tail);
        return fmt::format("{} {}: unknown {}{}; expected one of: {}{}", flag, value, what,
                           did_you_mean_note(value, names), name_list(names), tail);
      },
      "", "one_of"));
  return complete_with(opt, std::move(names));
}

CLI::Option* complete_with(CLI::Option* opt, std::vector<std::string> names) {
  value_table()[opt] = std::move(names);
  return opt;
}

const std::vector<std::string>* values_of(const CLI::Option* opt) {
  auto it = value_table().find(opt);
  return it == value_table().end() ? nullptr : &it->second;
}

std::string usage_error_message(CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  CLI::App* sub = subcommand_of(app, argc, argv);
  const std::string see = sub ? "; see impsim help " + sub->get_name() : "; see impsim help";
  const std::string text = e.what();
  const size_t colon = text.find(": ");
  const std::string name = colon == std::string::npos ? "" : text.substr(0, colon);
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    std::vector<std::string> extras = extras_of(e);
    if (extras.empty()) return text + see;
    std::string message = unexpected(app, sub, extras.front());
    for (size_t i = 1; i < extras.size(); ++i) message += "; " + unexpected(app, sub, extras[i]);
    return message + see;
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e) && text.ends_with(" is required"))
    return required(sub, text.substr(0, text.size() - 12)) + see;
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) && text.ends_with(" missing") && sub) {
    if (const CLI::Option* o = sub->get_option_no_throw(name))
      return fmt::format("{} needs a value ({}){}", name, metavar(o), see);
  }
  if (dynamic_cast<const CLI::ConversionError*>(&e) && text.starts_with("Could not convert: ")) {
    // "Could not convert: --max-nodes = x"
    std::string rest = text.substr(19);
    size_t eq = rest.find(" = ");
    if (eq != std::string::npos)
      return fmt::format("{} {}: expected {}{}", rest.substr(0, eq), rest.substr(eq + 3),
                         sub && sub->get_option_no_throw(rest.substr(0, eq)) &&
                                 metavar(sub->get_option_no_throw(rest.substr(0, eq))) == "N"
                             ? "an integer"
                             : "another value",
                         see);
  }
  // one_of's messages say the flag and the value themselves.
  if (dynamic_cast<const CLI::ValidationError*>(&e) && colon != std::string::npos) {
    const std::string rest = text.substr(colon + 2);
    if (rest.starts_with(name + " ") || rest.starts_with("unknown ")) return rest + see;
  }
  return text + see;
}

std::optional<std::string> first_word_problem(CLI::App& app, const std::string& first) {
  std::vector<std::string> names;
  for (CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
  if (first.starts_with('-')) {
    std::vector<std::string> top = flag_names(&app);
    const std::string flag = first.substr(0, first.find('='));
    if (std::find(top.begin(), top.end(), flag) != top.end()) return std::nullopt;
    std::string note = flag_note(flag, top);
    if (note.empty() && !takers_of(app, flag).empty())
      note = fmt::format(" (flags go after the subcommand, as in: impsim {} {} ...)",
                         takers_of(app, flag).substr(0, takers_of(app, flag).find_first_of(" ,")), first);
    return fmt::format("unknown flag '{}' for impsim{}; see impsim help", flag, note);
  }
  if (std::find(names.begin(), names.end(), first) != names.end()) return std::nullopt;
  // A scenario file where the subcommand goes: say how to run it.
  std::string hint = first.ends_with(".json") ? fmt::format("; to run it: impsim run {}", first) : "";
  return fmt::format("unknown subcommand '{}'{}; expected one of: {}{} (see impsim help)", first,
                     did_you_mean_note(first, names), name_list(names), hint);
}

}  // namespace impsim::cli
