// The look of --help: 80 columns, each option's value named once ("--max-events
// N", its range in the text), the limits last in a group of their own, and
// examples a reader can paste (comments after "#").
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "help.h"

namespace impsim::cli {

namespace {

constexpr size_t kWidth = 80;
constexpr size_t kDescColumn = 26;  // where an option's text starts
const char* const kLimitsGroup = "Limits (past one, impsim stops with exit status 3; docs/limits.md)";

// "-o, --output".
std::string flag_names_text(const CLI::Option* o) {
  std::string names;
  for (const std::string& s : o->get_snames()) names += (names.empty() ? "-" : ", -") + s;
  for (const std::string& l : o->get_lnames()) names += (names.empty() ? "--" : ", --") + l;
  return names.empty() ? o->get_name() : names;
}

}  // namespace

std::string wrap(const std::string& text, size_t indent, size_t width) {
  std::string out;
  size_t column = indent;
  size_t at = 0;
  while (at < text.size()) {
    if (text[at] == '\n') {
      out += "\n" + std::string(indent, ' ');
      column = indent;
      ++at;
      continue;
    }
    size_t end = std::min(text.find_first_of(" \n", at), text.size());
    const std::string word = text.substr(at, end - at);
    if (column > indent && column + 1 + word.size() > width) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    } else if (column > indent) {
      out += " ";
      ++column;
    }
    out += word;
    column += word.size();
    at = end;
    while (at < text.size() && text[at] == ' ') ++at;
  }
  return out;
}

std::string metavar(const CLI::Option* o) {
  if (o->get_positional()) {
    std::string name = o->get_name();
    const bool many = o->get_items_expected_max() > 1;
    if (many && name.ends_with('s')) name.pop_back();
    std::transform(name.begin(), name.end(), name.begin(), [](char c) { return static_cast<char>(std::toupper(c)); });
    return many ? name + "..." : name;
  }
  if (o->get_expected_max() == 0) return "";  // a flag
  static const std::map<std::string, std::string> named = {
      {"set", "NAME=N"},      {"variant", "VARIANT"},  {"revision", "REVISION"}, {"revisions", "REVISION"},
      {"cpython", "VERSION"}, {"engine", "ENGINE"},    {"format", "FORMAT"},     {"counter", "COUNTER"},
      {"baseline", "DESIGN"}, {"param", "NAME"},       {"values", "VALUES"},     {"output", "FILE"},
      {"svg", "FILE"},        {"completion", "SHELL"},
  };
  for (const std::string& l : o->get_lnames())
    if (auto it = named.find(l); it != named.end()) return it->second;
  // "UINT:0..18446744073709551615": the type, then a validator's own text.
  const std::string type = o->get_type_name();
  if (type.starts_with("INT") || type.starts_with("UINT")) return "N";
  return "VALUE";
}

bool is_limit(const CLI::Option* o) { return o->get_description().find("(exit 3)") != std::string::npos; }

std::string usage_of(const CLI::App* sub) {
  std::string usage = "impsim " + sub->get_name();
  std::string required;
  for (const CLI::Option* o : sub->get_options()) {
    if (o->get_positional()) {
      usage += " " + (o->get_required() ? metavar(o) : "[" + metavar(o) + "]");
    } else if (o->get_required()) {
      required += " " + o->get_name() + " " + metavar(o);
    }
  }
  return usage + required + " [OPTIONS]";
}

Footer parse_footer(const std::string& footer) {
  Footer f;
  size_t at = footer.find("Example");
  std::string notes = footer.substr(0, at);
  // Paragraphs: blank-line separated, their lines joined (wrap() breaks them anew).
  std::string paragraph;
  size_t start = 0;
  auto flush = [&] {
    if (!paragraph.empty()) f.notes.push_back(paragraph);
    paragraph.clear();
  };
  while (start < notes.size()) {
    size_t end = std::min(notes.find('\n', start), notes.size());
    std::string line = notes.substr(start, end - start);
    if (line.empty())
      flush();
    else
      paragraph += (paragraph.empty() ? "" : " ") + line;
    start = end + 1;
  }
  flush();
  if (at == std::string::npos) return f;
  start = std::min(footer.find('\n', at), footer.size()) + 1;
  while (start < footer.size()) {
    size_t end = std::min(footer.find('\n', start), footer.size());
    std::string line = footer.substr(start, end - start);
    start = end + 1;
    size_t first = line.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    line.erase(0, first);
    // "COMMAND   # COMMENT", or "COMMAND   COMMENT" (three spaces or more).
    Example e{line, ""};
    size_t gap = line.find("   ");
    if (gap != std::string::npos) {
      e.command = line.substr(0, gap);
      std::string comment = line.substr(line.find_first_not_of(' ', gap));
      if (comment.starts_with('#')) comment.erase(0, comment.find_first_not_of("# "));
      e.comment = comment;
    }
    f.examples.push_back(e);
  }
  return f;
}

// Example lines as help and the man page print them: a comment after the
// command when both fit in the width, else on the line before; a command
// too long for one line continued with "\".
std::vector<std::string> example_lines(const std::vector<Example>& examples, size_t indent) {
  const size_t room = kWidth - indent;
  size_t column = 0;
  for (const Example& e : examples)
    if (!e.comment.empty() && e.command.size() + 3 + 2 + e.comment.size() <= room)
      column = std::max(column, e.command.size() + 3);
  std::vector<std::string> out;
  for (const Example& e : examples) {
    // At the common column, or else right after the command, when it fits.
    size_t at = std::max(column, e.command.size() + 3);
    if (at + 2 + e.comment.size() > room) at = e.command.size() + 3;
    if (!e.comment.empty() && at + 2 + e.comment.size() <= room) {
      out.push_back(e.command + std::string(at - e.command.size(), ' ') + "# " + e.comment);
      continue;
    }
    if (!e.comment.empty()) out.push_back("# " + e.comment);
    // Continued at a space; the next part indented by 4.
    std::string rest = e.command;
    std::string pad;
    while (pad.size() + rest.size() > room) {
      size_t cut = rest.rfind(' ', room - pad.size() - 2);
      if (cut == std::string::npos || cut == 0) break;
      out.push_back(pad + rest.substr(0, cut) + " \\");
      rest = rest.substr(cut + 1);
      pad = "    ";
    }
    out.push_back(pad + rest);
  }
  return out;
}

// An option's text and its default, once: "(1..1000)" becomes
// "(1..1000, default 200)"; a text that speaks of its default keeps it.
std::string describe(const CLI::Option* o) {
  if (o->get_name() == "--help") return "Print this help and exit";
  std::string text = o->get_description();
  const std::string def = o->get_expected_max() == 0 ? "" : o->get_default_str();
  if (def.empty() || text.find("default") != std::string::npos) return text;
  if (text.ends_with(")")) {
    size_t open = text.rfind('(');
    std::string inner = text.substr(open + 1, text.size() - open - 2);
    if (inner.find("..") != std::string::npos && inner.find_first_not_of("0123456789.-") == std::string::npos)
      return text.substr(0, text.size() - 1) + ", default " + def + ")";
  }
  return text + " (default: " + def + ")";
}

std::string option_entry(const CLI::Option* o, bool positional) {
  std::string left = "  " + (positional ? metavar(o) : flag_names_text(o));
  if (!positional && !metavar(o).empty()) left += " " + metavar(o);
  std::string text = describe(o);
  if (left.size() + 2 > kDescColumn)
    return left + "\n" + std::string(kDescColumn, ' ') + wrap(text, kDescColumn) + "\n";
  return left + std::string(kDescColumn - left.size(), ' ') + wrap(text, kDescColumn) + "\n";
}

namespace {

class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_help(const CLI::App* app, std::string, CLI::AppFormatMode) const override {
    if (!app->get_parent()) return main_help(*app);
    std::string out = wrap(app->get_description(), 0) + "\n\nUsage: " + usage_of(app) + "\n";
    std::vector<const CLI::Option*> positionals, options, limits;
    for (const CLI::Option* o : app->get_options())
      (o->get_positional() ? positionals : is_limit(o) ? limits : options).push_back(o);
    auto group = [&](const std::string& title, const std::vector<const CLI::Option*>& list) {
      if (list.empty()) return;
      out += "\n" + wrap(title, 0) + ":\n";
      for (const CLI::Option* o : list) out += option_entry(o, o->get_positional());
    };
    group("Arguments", positionals);
    group("Options", options);
    group(kLimitsGroup, limits);
    Footer footer = parse_footer(app->get_footer());
    for (const std::string& note : footer.notes) out += "\n" + wrap(note, 0) + "\n";
    if (!footer.examples.empty()) {
      out += footer.examples.size() == 1 ? "\nExample:\n" : "\nExamples:\n";
      for (const std::string& line : example_lines(footer.examples, 2)) out += "  " + line + "\n";
    }
    return out;
  }
};

}  // namespace

void configure_help(CLI::App& app) {
  auto formatter = std::make_shared<HelpFormatter>();
  app.formatter(formatter);
  for (CLI::App* sub : app.get_subcommands({})) {
    sub->formatter(formatter);
    for (CLI::Option* o : sub->get_options({}))
      if (is_limit(o)) o->group(kLimitsGroup);
  }
}

std::string main_help(const CLI::App& app) {
  std::string out = wrap(app.get_description(), 0) + "\n\n";
  out += "Usage: impsim SUBCOMMAND FILE... [OPTIONS]\n       impsim help [SUBCOMMAND]\n\nSubcommands:\n";
  size_t width = 0;
  for (const CLI::App* sub : app.get_subcommands({})) width = std::max(width, sub->get_name().size());
  for (const CLI::App* sub : app.get_subcommands({}))
    out += "  " + sub->get_name() + std::string(width + 2 - sub->get_name().size(), ' ') +
           wrap(sub->get_description(), width + 4) + "\n";
  out += "\nOptions:\n";
  for (const CLI::Option* o : app.get_options()) out += option_entry(o, false);
  Footer footer = parse_footer(app.get_footer());
  if (!footer.examples.empty()) {
    out += "\nExamples:\n";
    for (const std::string& line : example_lines(footer.examples, 2)) out += "  " + line + "\n";
  }
  for (const std::string& note : footer.notes) out += "\n" + wrap(note, 0) + "\n";
  out += "\nExit status:\n";
  for (auto& [code, text] : exit_statuses()) out += fmt::format("  {}  {}\n", code, wrap(text, 5));
  out += "\nEnvironment:\n";
  for (auto& [name, text] : environment_variables())
    out += "  " + name + std::string(22 - name.size(), ' ') + wrap(text, 24) + "\n";
  return out;
}

}  // namespace impsim::cli
