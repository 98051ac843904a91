// Strings from strangers (a scenario's name, description, titles and
// labels, a file name, an argument) escaped for where they go
// (include/impsim/base/escape.h): each escaping function on its own, every
// finding of the "safe to run on a stranger's scenario" review through the
// binary, and a property test that puts seeded random hostile strings into
// every place the format lets through and checks every output format:
// no control character on a terminal, no line a GitHub runner reads as a
// command, JSON that parses back to the same strings, well-formed SVG, an
// explorer page whose two scripts stay two, Markdown with no heading, tag,
// link or table break of the scenario's making.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "impsim/report/compare.h"
#include "impsim/base/escape.h"
#include "impsim/report/report.h"
#include "impsim/report/sweep_chart.h"
#include "impsim/report/svg_chart.h"
#include "impsim/trace/trace_formats.h"
#include "impsim/base/unicode_names.h"
#include "test_util.h"

using impsim::test::kSource;
using impsim::test::kBin;

using namespace impsim;

namespace {

// ---------------------------------------------------------------------------
// Checks, written independently of sim/base/escape.cc.

// Decodes one UTF-8 character at s[i] (advancing i); false for a byte that
// does not start a well-formed one.
bool next_char(std::string_view s, size_t& i, char32_t& cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t n = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return false;
  cp = n == 1 ? c : n == 2 ? c & 0x1F : n == 3 ? c & 0x0F : c & 0x07;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return false;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  static const char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
  i += n;
  return true;
}

// What must never reach a terminal: controls but the newline, and the
// characters that reorder or hide text.
bool terminal_unsafe(char32_t c) {
  if (c == '\n') return false;
  return c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0xAD || c == 0x061C || c == 0x115F || c == 0x1160 ||
         c == 0x200B || c == 0x200E || c == 0x200F || (c >= 0x2028 && c <= 0x202E) || (c >= 0x2060 && c <= 0x2069) ||
         c == 0x3164 || c == 0xFEFF || c == 0xFFA0 || (c >= 0xE0000 && c <= 0xE007F);
}

// "" when `s` is fit for a terminal, else what is wrong and where.
std::string terminal_problem(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    size_t at = i;
    char32_t c = 0;
    if (!next_char(s, i, c)) return "a byte that is not UTF-8 at " + std::to_string(at);
    if (terminal_unsafe(c)) return "U+" + fmt::format("{:04X}", static_cast<unsigned>(c)) + " at " + std::to_string(at);
  }
  return "";
}

// The GitHub Actions runner's reading of a process's output, as
// actions/runner does it: lines as .NET's StreamReader.ReadLine splits them
// (LF, CR, CRLF; src/Runner.Sdk/ProcessInvoker.cs), each offered to
// ActionCommand.TryParseV2 (the line, leading white space trimmed, starts
// with "::" and has a second "::" after it; the command is the text up to
// the first space) and then to ActionCommand.TryParse (the legacy form:
// "##[" anywhere in the line, then a "]"); src/Runner.Common/ActionCommand.cs.
// The runner accepts registered command names only; this accepts any
// non-empty one, and drops the characters a culture-sensitive comparison
// may ignore (controls, format characters, variation selectors) before
// matching, so it finds at least every command the runner would.
struct RunnerCommand {
  std::string name, data, line;
};

bool ignorable(char32_t c) {
  return c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0xAD || c == 0x034F || c == 0x061C ||
         (c >= 0x180B && c <= 0x180F) || (c >= 0x200B && c <= 0x200F) || (c >= 0x202A && c <= 0x202E) ||
         (c >= 0x2060 && c <= 0x206F) || (c >= 0xFE00 && c <= 0xFE0F) || c == 0xFEFF || (c >= 0xE0000 && c <= 0xE0FFF) ||
         (c >= 0x0600 && c <= 0x0605) || c == 0x06DD || c == 0x070F || c == 0x0890 || c == 0x0891 || c == 0x08E2 ||
         c == 0x110BD || c == 0x110CD || (c >= 0x13430 && c <= 0x1343F) || c == 0x3164 || c == 0x115F || c == 0x1160 ||
         c == 0xFFA0;
}

bool dotnet_space(char32_t c) {
  return c == ' ' || (c >= 0x09 && c <= 0x0D) || c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
         c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::optional<RunnerCommand> parse_runner_line(const std::string& raw) {
  std::string line;  // ignorable characters dropped; bytes that are not UTF-8 read as U+FFFD
  bool leading = true;
  for (size_t i = 0; i < raw.size();) {
    char32_t c = 0;
    size_t at = i;
    if (!next_char(raw, i, c)) {
      ++i;
      line += "\xEF\xBF\xBD";
      leading = false;
      continue;
    }
    if (leading && dotnet_space(c)) continue;  // TrimStart
    if (ignorable(c)) continue;
    leading = false;
    line.append(raw, at, i - at);
  }
  auto name_of = [](const std::string& info) { return info.substr(0, info.find(' ')); };
  if (line.starts_with("::")) {
    size_t end = line.find("::", 2);
    if (end != std::string::npos) {
      std::string name = name_of(line.substr(2, end - 2));
      if (!name.empty()) return RunnerCommand{name, line.substr(end + 2), raw};
    }
  }
  size_t prefix = line.find("##[");
  if (prefix != std::string::npos) {
    size_t rb = line.find(']', prefix);
    if (rb != std::string::npos) {
      std::string name = name_of(line.substr(prefix + 3, rb - prefix - 3));
      if (!name.empty()) return RunnerCommand{name, line.substr(rb + 1), raw};
    }
  }
  return std::nullopt;
}

std::vector<std::string> runner_lines(const std::string& out) {
  std::vector<std::string> lines;
  std::string cur;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '\n' || out[i] == '\r') {
      lines.push_back(cur);
      cur.clear();
      if (out[i] == '\r' && i + 1 < out.size() && out[i + 1] == '\n') ++i;
    } else {
      cur += out[i];
    }
  }
  if (!cur.empty()) lines.push_back(cur);
  return lines;
}

std::vector<RunnerCommand> runner_commands(const std::string& out) {
  std::vector<RunnerCommand> found;
  for (const std::string& line : runner_lines(out))
    if (auto c = parse_runner_line(line)) found.push_back(*c);
  return found;
}

// The commands the runner acts on, in order, with ActionCommandManager's
// stop-commands rule (src/Runner.Worker/ActionCommandManager.cs): after
// `::stop-commands::TOKEN` nothing is processed until `::TOKEN::`.
std::vector<RunnerCommand> processed_commands(const std::string& out) {
  std::vector<RunnerCommand> done;
  std::optional<std::string> stopped;
  for (const RunnerCommand& c : runner_commands(out)) {
    if (stopped) {
      if (c.name == *stopped) stopped.reset();
      continue;
    }
    if (c.name == "stop-commands") stopped = c.data;
    else done.push_back(c);
  }
  return done;
}

// Well-formed XML 1.0 as svg_chart writes it: elements, double-quoted
// attributes, text, the predefined entities and character references,
// every character an XML Char. "" or what is wrong.
std::string xml_problem(const std::string& s) {
  auto xml_char = [](char32_t c) {
    return c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) ||
           (c >= 0x10000 && c <= 0x10FFFF);
  };
  for (size_t i = 0; i < s.size();) {
    char32_t c = 0;
    size_t at = i;
    if (!next_char(s, i, c)) return "not UTF-8 at " + std::to_string(at);
    if (!xml_char(c)) return fmt::format("U+{:04X} is not an XML character (at {})", static_cast<unsigned>(c), at);
  }
  std::vector<std::string> open;
  int roots = 0;
  size_t i = 0;
  auto name = [&]() {
    size_t start = i;
    while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '-' || s[i] == ':' || s[i] == '_'))
      ++i;
    return s.substr(start, i - start);
  };
  auto reference = [&]() -> bool {  // at '&'
    size_t semi = s.find(';', i);
    if (semi == std::string::npos) return false;
    std::string ref = s.substr(i + 1, semi - i - 1);
    i = semi + 1;
    if (ref == "amp" || ref == "lt" || ref == "gt" || ref == "quot" || ref == "apos") return true;
    if (ref.size() > 1 && ref[0] == '#') {
      unsigned long v = ref[1] == 'x' ? std::stoul(ref.substr(2), nullptr, 16) : std::stoul(ref.substr(1));
      return xml_char(static_cast<char32_t>(v));
    }
    return false;
  };
  auto space = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) ++i;
  };
  while (i < s.size()) {
    if (s[i] == '&') {
      if (!reference()) return "a bad reference at " + std::to_string(i);
      continue;
    }
    if (s[i] != '<') {
      ++i;
      continue;
    }
    ++i;
    if (i < s.size() && s[i] == '/') {
      ++i;
      std::string n = name();
      if (open.empty() || open.back() != n) return "</" + n + "> closes nothing open at " + std::to_string(i);
      open.pop_back();
      space();
      if (i >= s.size() || s[i] != '>') return "an end tag not closed at " + std::to_string(i);
      ++i;
      continue;
    }
    std::string n = name();
    if (n.empty()) return "a '<' that starts no tag at " + std::to_string(i);
    if (open.empty() && ++roots > 1) return "a second root element at " + std::to_string(i);
    while (true) {
      space();
      if (i >= s.size()) return "a tag not closed";
      if (s[i] == '>' || (s[i] == '/' && i + 1 < s.size() && s[i + 1] == '>')) break;
      if (name().empty()) return "a bad attribute name at " + std::to_string(i);
      if (i >= s.size() || s[i] != '=') return "an attribute without '=' at " + std::to_string(i);
      ++i;
      if (i >= s.size() || s[i] != '"') return "an unquoted attribute at " + std::to_string(i);
      ++i;
      while (i < s.size() && s[i] != '"') {
        if (s[i] == '<') return "'<' in an attribute value at " + std::to_string(i);
        if (s[i] == '&') {
          if (!reference()) return "a bad reference in an attribute at " + std::to_string(i);
        } else {
          ++i;
        }
      }
      if (i >= s.size()) return "an attribute value not closed";
      ++i;
    }
    if (s[i] == '/') i += 2;
    else {
      ++i;
      open.push_back(n);
    }
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  return roots == 1 ? "" : "no root element";
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// The explorer page: its data script and its viewer script stay two, the
// data holds no '<' (so nothing in it can end the element or enter the
// tokenizer's escaped states) and parses back. "" or what is wrong.
std::string explore_problem(const std::string& page, nlohmann::json* data) {
  const std::string l = lower(page);
  if (count_of(l, "<script") != 2 || count_of(l, "</script") != 2)
    return fmt::format("{} <script and {} </script", count_of(l, "<script"), count_of(l, "</script"));
  const std::string head = "<script>\nconst DATA = ";
  size_t a = page.find(head);
  if (a == std::string::npos) return "no data script";
  a += head.size();
  size_t end = l.find("</script", a);
  const std::string tail = ";\n";
  if (end < tail.size() || page.compare(end - tail.size(), tail.size(), tail) != 0) return "the data script ends early";
  std::string json = page.substr(a, end - tail.size() - a);
  if (json.find('<') != std::string::npos) return "a '<' in the data";
  if (json.find("\xE2\x80\xA8") != std::string::npos || json.find("\xE2\x80\xA9") != std::string::npos)
    return "U+2028/U+2029 in the data";
  try {
    *data = nlohmann::json::parse(json);
  } catch (const std::exception& e) {
    return std::string("the data is not JSON: ") + e.what();
  }
  return "";
}

// Removes code spans (`...`, ``...``) from a line of Markdown.
std::string without_code_spans(const std::string& line) {
  std::string out;
  for (size_t i = 0; i < line.size();) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      out += line.substr(i, 2);
      i += 2;
      continue;
    }
    if (line[i] != '`') {
      out += line[i++];
      continue;
    }
    size_t run = 0;
    while (i + run < line.size() && line[i + run] == '`') ++run;
    const std::string fence(run, '`');
    size_t close = i + run;
    while (true) {
      close = line.find(fence, close);
      if (close == std::string::npos || close + run >= line.size() || line[close + run] != '`') break;
      while (close < line.size() && line[close] == '`') ++close;
    }
    if (close == std::string::npos) {
      out += fence;
      i += run;
      continue;
    }
    out += "CODE";
    i = close + run;
  }
  return out;
}

// Whether line[at] is backslash-escaped.
bool escaped(const std::string& line, size_t at) {
  size_t n = 0;
  while (at > n && line[at - n - 1] == '\\') ++n;
  return n % 2 == 1;
}

// impsim's Markdown: outside its fenced blocks, no HTML tag or comment,
// no entity, no link, image or autolink, no heading but impsim's own, no
// quote; every table row with its header's number of cells; the fences
// closed. "" or what is wrong.
std::string markdown_problem(const std::string& md) {
  if (std::string t = terminal_problem(md); !t.empty()) return t;
  std::string fence;
  size_t cells = 0;
  std::istringstream in(md);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    auto fail = [&](const std::string& why) { return fmt::format("line {}: {}: {}", n, why, line); };
    size_t ticks = 0;
    while (ticks < line.size() && line[ticks] == '`') ++ticks;
    if (!fence.empty()) {
      if (ticks >= fence.size() && line.find_first_not_of(' ', ticks) == std::string::npos) fence.clear();
      continue;
    }
    if (ticks >= 3) {
      fence.assign(ticks, '`');
      continue;
    }
    std::string t = without_code_spans(line);
    // A block's first character, inside list items too ("- # x" is a heading).
    size_t lead = t.find_first_not_of(' ');
    while (lead != std::string::npos) {
      size_t m = lead;
      if (t[m] == '-' || t[m] == '+' || t[m] == '*') {
        ++m;
      } else {
        while (m < t.size() && std::isdigit(static_cast<unsigned char>(t[m]))) ++m;
        if (m == lead || m >= t.size() || (t[m] != '.' && t[m] != ')')) break;
        ++m;
      }
      if (m >= t.size() || t[m] != ' ') break;
      lead = t.find_first_not_of(' ', m);
    }
    if (lead != std::string::npos) {
      const char c = t[lead];
      if (c == '#' && !t.starts_with("### impsim ")) return fail("a heading");
      if (c == '>' || (c == '~' && t.compare(lead, 3, "~~~") == 0)) return fail("a block marker");
    }
    for (size_t i = 0; i < t.size(); ++i) {
      if (escaped(t, i)) continue;
      const char c = t[i], next = i + 1 < t.size() ? t[i + 1] : '\0';
      if (c == '<' && (std::isalpha(static_cast<unsigned char>(next)) || next == '/' || next == '!' || next == '?'))
        return fail("an HTML tag or comment");
      if (c == '&' && (std::isalpha(static_cast<unsigned char>(next)) || next == '#') && t.compare(i, 4, "&lt;") != 0 &&
          t.compare(i, 5, "&amp;") != 0)
        return fail("an entity");
      if (c == ']' && (next == '(' || next == '[' || next == ':')) return fail("a link");
      if (c == ':' && t.compare(i + 1, 2, "//") == 0) return fail("an autolink");
    }
    if (lower(t).find("www.") != std::string::npos) {
      size_t w = lower(t).find("www.");
      if (w == 0 || !std::isalnum(static_cast<unsigned char>(t[w - 1]))) return fail("a www autolink");
    }
    if (t.starts_with("|")) {
      size_t pipes = 0;
      for (size_t i = 0; i < t.size(); ++i) pipes += t[i] == '|' && !escaped(t, i);
      if (cells == 0) cells = pipes;
      else if (pipes != cells) return fail(fmt::format("{} cells where the header has {}", pipes - 1, cells - 1));
    } else {
      cells = 0;
    }
  }
  if (!fence.empty()) return "a code block never closed";
  return "";
}

// Graphviz: every line's double quotes pair up (a `\"` is no quote).
std::string dot_problem(const std::string& dot) {
  if (std::string t = terminal_problem(dot); !t.empty()) return t;
  std::istringstream in(dot);
  std::string line;
  while (std::getline(in, line)) {
    size_t quotes = 0;
    for (size_t i = 0; i < line.size(); ++i) quotes += line[i] == '"' && !escaped(line, i);
    if (quotes % 2) return "unpaired quotes: " + line;
  }
  return "";
}

// ---------------------------------------------------------------------------
// Hostile strings, seeded.

struct Rng {
  uint64_t state;
  uint64_t next() {  // splitmix64: the same numbers on every platform
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }
};

const std::vector<std::string> kTokens = {
    "::", ":", "::error file=README.md,line=1::forged", "::add-mask::secret", "::stop-commands::tok", "::tok::",
    "##[add-mask]x", "##[error]forged", "#", "##", "[", "]", "\n", "\r", "\r\n", "\t", "\x1b]52;c;aGVsbG8=\x07",
    "\x1b[2K\x1b[1A", "\x1b]0;title\x07", "\x07", "\x7f", "\xc2\x9b", "\xc2\x85", "\u202e", "\u2066", "\u200b",
    "\u200d", "\ufe0f", "\u2028", "\u2029", "\ufeff", "\u00ad", "\U000e0041", "\u3164", "<!--", "<script>",
    "</script>", "<SCRIPT", "</style>", "<img src=x onerror=alert(1)>", "<details>", "&lt;", "&#60;",
    "](http://evil.example)", "![x](http://e.example/x.png)", "[x]: http://evil.example", "http://evil.example",
    "www.evil.example", "a@evil.example", "# all budgets hold", "> quote", "- item", "1. item", "```", "~~~", "|",
    "\\|", "\\", "`", "*", "_", "**bold**", "\"", "'", "%", "%0A", ",", "=", "\\n", "\\u003c", std::string(1, '\0'),
    "caf\xc3\xa9", "\xe6\xa8\xa1\xe5\x9d\x97", "\xf0\x9f\x98\x80", "\x01", "{", "}", "$", "/", "~"};

void append_cp(std::string& s, char32_t c) {
  if (c >= 0xD800 && c <= 0xDFFF) c = 0xFFFD;
  append_utf8(s, c);
}

// Valid UTF-8 (a scenario's strings are: the reader refuses anything else).
std::string hostile(Rng& r, size_t pieces) {
  static const std::pair<char32_t, char32_t> kRanges[] = {
      {0x00, 0x20},     {0x20, 0x7F},     {0x7F, 0xA0},       {0xA0, 0x250},    {0x2000, 0x2070},
      {0xFE00, 0xFE10}, {0xFFF0, 0x10000}, {0xE0000, 0xE0080}, {0x4E00, 0x4F00}, {0x1F600, 0x1F650}};
  std::string s;
  for (size_t p = 0; p < pieces; ++p) {
    if (r.below(2) == 0) {
      s += kTokens[r.below(kTokens.size())];
    } else {
      auto [lo, hi] = kRanges[r.below(std::size(kRanges))];
      for (size_t k = 1 + r.below(3); k > 0; --k) append_cp(s, lo + static_cast<char32_t>(r.below(hi - lo)));
    }
  }
  return s;
}

// A file name: any bytes but '/' and NUL, so also bytes that are not UTF-8.
std::string hostile_file_name(Rng& r) {
  std::string s = hostile(r, 1 + r.below(3));
  for (size_t k = r.below(3); k > 0; --k) s += static_cast<char>(0x80 + r.below(0x80));
  std::string out;
  for (char c : s)
    if (c != '/' && c != '\0') out += c;
  if (out.empty() || out[0] == '-') out = "f" + out;
  return out + ".json";
}

std::string q(const std::string& s) { return nlohmann::json(s).dump(-1, ' ', true); }

struct Strings {
  std::string name, description, sweep_title, title1, title2, label1, label2;
};

Strings hostile_strings(Rng& r) {
  Strings s;
  s.name = hostile(r, 1 + r.below(5));
  s.description = hostile(r, 1 + r.below(6));
  s.sweep_title = hostile(r, 1 + r.below(4));
  s.title1 = hostile(r, 1 + r.below(4));
  s.title2 = hostile(r, 1 + r.below(4));
  // Labels: non-empty, no '.', unique; the hostile part first, so that it
  // starts the text table's lines.
  auto label = [&](int i) {
    std::string l;
    for (char c : hostile(r, 1 + r.below(3)))
      if (c != '.') l += c;
    return l + "~" + std::to_string(i);
  };
  s.label1 = label(1);
  s.label2 = label(2);
  return s;
}

// A sweep over k with both variants, a labelled probe and an expectation
// that fails at k=2 (so FAILED lines and annotations carry the label); and
// a module whose name, an identifier to Python, starts with a Hangul
// filler (U+3164, U+1160 once NFKC-normalised), which prints as nothing.
std::string hostile_scenario(const Strings& s, bool with_name = true) {
  return fmt::format(R"({{
  "impsim": 1,{}
  "description": {},
  "params": {{"k": 1}},
  "sweep": {{"param": "k", "values": [1, 2], "title": {}}},
  "sys_modules": {{"preloaded": ["numpy"], "filler": 20}},
  "tree": {{"pkg": {{"package": true}}, "\u3164mod": {{}}}},
  "program": [
    {{"import": "\u3164mod"}},
    {{"nest": "$k", "guard": {{"enable": true, "scope": ["pkg", "other{{i}}"]}}, "body": [
      {{"import": "pkg", "label": {}}},
      {{"find_spec": "pkg.missing", "label": {}}}
    ]}}
  ],
  "report": [{{"counter": {}, "title": {}}}, {{"counter": "lookups", "title": {}}}],
  "expect": {{
    "before": {{
      {}: [1, 5]
    }}
  }}
}}
)",
                     with_name ? "\n  \"name\": " + q(s.name) + "," : "", q(s.description), q(s.sweep_title),
                     q(s.label1), q(s.label2), q(s.label2 + ".lookups"), q(s.title1), q(s.title2),
                     q(s.label2 + ".lookups"));
}

// Every format impsim writes for one scenario, in process.
struct Outputs {
  std::map<std::string, std::string> terminal;  // text, Markdown: checked as terminal text
  std::map<std::string, std::string> markdown;
  std::map<std::string, std::string> json;
  std::string dot, svg, page;
};

Outputs all_outputs(const Scenario& sc) {
  Outputs o;
  ScenarioRun run = run_scenario(sc, {});
  o.terminal["run text"] = report_text(run);
  o.markdown["run markdown"] = report_markdown(run);
  o.json["run json"] = dump_json(report_json(run));
  Comparison c{&run, Variant::Before, {}};
  o.terminal["compare text"] = compare_text(c, CompareFormat::Text);
  o.markdown["compare markdown"] = compare_text(c, CompareFormat::Markdown);
  o.json["compare json"] = dump_json(compare_json(c));
  SweepOptions so;
  so.param = "k";
  so.values = {1, 2, 3};
  SweepResult sweep = run_sweep(sc, so);
  o.terminal["sweep text"] = report_text(sweep.run);
  o.markdown["sweep markdown"] = report_markdown(sweep.run, "sweep");
  o.svg = svg_line_chart(sweep_chart(sweep));
  auto trace = [&](TraceFormat f) {
    std::ostringstream out;
    TraceOptions t;
    t.format = f;
    write_trace(out, sc, {}, t);
    return out.str();
  };
  o.terminal["trace text"] = trace(TraceFormat::Text);
  o.terminal["trace importtime"] = trace(TraceFormat::ImportTime);
  o.markdown["trace markdown"] =
      "### impsim trace: " + markdown_text(sc.name) + "\n\n" + markdown_code_block(trace(TraceFormat::Text));
  o.json["trace chrome"] = trace(TraceFormat::Chrome);
  o.dot = trace(TraceFormat::Dot);
  o.page = trace(TraceFormat::Explore);
  return o;
}

bool utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    char32_t c = 0;
    if (!next_char(s, i, c)) return false;
  }
  return true;
}

// Checks one scenario's outputs; `runner`: the console is a GitHub runner.
void check_outputs(const Scenario& sc, const Strings& s, bool runner) {
  Outputs o = all_outputs(sc);
  std::map<std::string, std::string> stdout_like = o.terminal;
  for (auto& [k, v] : o.markdown) {
    CAPTURE(k);
    CAPTURE(v);
    CHECK(markdown_problem(v) == "");
    stdout_like[k] = v;
  }
  for (auto& [k, v] : o.terminal) {
    CAPTURE(k);
    CAPTURE(v);
    CHECK(terminal_problem(v) == "");
  }
  for (auto& [k, v] : o.json) {
    CAPTURE(k);
    CAPTURE(v);
    nlohmann::json j;
    REQUIRE_NOTHROW(j = nlohmann::json::parse(v));
    stdout_like[k] = v;
    // The strings come back as they were (a name that is not UTF-8, from
    // a file name, with U+FFFD for each bad byte).
    std::string name = k == "trace chrome" ? j["otherData"]["scenario"].get<std::string>() : j["scenario"].get<std::string>();
    if (utf8(sc.name)) CHECK(name == sc.name);
    else CHECK(name.find("\xEF\xBF\xBD") != std::string::npos);
  }
  CAPTURE(o.dot);
  CHECK(dot_problem(o.dot) == "");
  stdout_like["trace dot"] = o.dot;
  CAPTURE(o.svg);
  CHECK(xml_problem(o.svg) == "");
  nlohmann::json data;
  CHECK(explore_problem(o.page, &data) == "");
  if (data.is_object()) {
    if (utf8(sc.name)) CHECK(data["scenario"] == sc.name);
    CHECK(data["description"] == s.description);
    CHECK(data["labels"] == nlohmann::json({s.label1, s.label2}));
  }
  if (runner)
    for (auto& [k, v] : stdout_like) {
      CAPTURE(k);
      CAPTURE(v);
      std::vector<RunnerCommand> found = runner_commands(v);
      CHECK(found.empty());
      if (!found.empty()) CAPTURE(found.front().line);
    }
}

// Scenarios that the reader refuses, each message quoting a hostile
// string; the message as print_error writes it.
std::vector<std::string> hostile_errors(const std::string& h) {
  const std::string base = R"({"impsim": 1, "tree": {"pkg": {}}, "program": [)";
  std::vector<std::string> texts = {
      R"({"impsim": 1, "tree": {}, "program": [], )" + q(h) + ": 1}",
      base + R"({"import": "pkg", "label": )" + q(h + ".x") + "}]}",
      base + R"({"import": )" + q(h) + "}]}",
      R"({"impsim": 1, "tree": {}, "program": [], "variants": [)" + q(h) + "]}",
      R"({"impsim": 1, "tree": {}, "program": [], "report": [{"counter": )" + q(h) + "}]}",
      R"({"impsim": 1, "tree": {)" + q(h) + R"(: {}}, "program": []})",
  };
  std::vector<std::string> messages;
  for (const std::string& t : texts) {
    try {
      parse_scenario(t, "x.json");
      messages.push_back("");
    } catch (const InputError& e) {
      messages.push_back(std::string("impsim: error: ") + terminal_text(e.what()) + "\n");
    }
  }
  return messages;
}


using test::sh_word;
using test::Split;

// The binary with `args` (a shell command line's words) and `env`
// assignments; standard output and standard error apart.
Split impsim_split(const std::string& args, const std::string& env = "") {
  return test::shell_split(env + " " + kBin + " " + args);
}

// The hostile scenario of `s`, written as `name` in the folder `dir`;
// returns the file's path.
std::string hostile_file(const std::string& dir, const std::string& name, const Strings& s) {
  const std::string file = dir + "/" + name;
  std::ofstream(file) << hostile_scenario(s);
  return file;
}

// terminal_text on the console set: each text, and what it should show.
void check_terminal_text(const std::vector<std::pair<std::string, std::string>>& shown) {
  for (const auto& [text, want] : shown) {
    CAPTURE(text);
    CHECK(terminal_text(text) == want);
  }
}

}  // namespace

// ---------------------------------------------------------------------------

TEST_CASE("terminal_text shows controls, invisible characters and bytes that are not UTF-8") {
  set_console(Console::Terminal);
  check_terminal_text({
      {"plain text, ünïcödé, 模块, 😀", "plain text, ünïcödé, 模块, 😀"},
      {"a\nb\tc\rd", "a\\nb\\tc\\rd"},
      {"\x1b]52;c;aGk=\x07", "\\x1b]52;c;aGk=\\x07"},
      {"\x7f\xc2\x9b\xc2\x85", "\\x7f\\u009b\\u0085"},
      {"\u202eevil\u2066\u2069", "\\u202eevil\\u2066\\u2069"},
      {"a\u200bb\u00adc\ufeff\u2028\u3164", "a\\u200bb\\u00adc\\ufeff\\u2028\\u3164"},
      {"\U000e0041", "\\U000e0041"},
      {std::string("a\0b", 3), "a\\x00b"},
      // Joiners and variation selectors stay: emoji need them.
      {"\u2764\ufe0f \U0001f469\u200d\U0001f4bb", "\u2764\ufe0f \U0001f469\u200d\U0001f4bb"},
      // Bytes: a Latin-1 é, a lone continuation byte, a truncated sequence, an
      // overlong '/', a surrogate, past U+10FFFF.
      {"caf\xe9", "caf\\xe9"},
      {"\x80", "\\x80"},
      {"\xe2\x82", "\\xe2\\x82"},
      {"\xc0\xaf", "\\xc0\\xaf"},
      {"\xed\xa0\x80", "\\xed\\xa0\\x80"},
      {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},
      // A terminal shows `::` and `##[` as they are.
      {"::error::x ##[add-mask]y", "::error::x ##[add-mask]y"},
  });
  CHECK(visible_text("a\x1b") == "a\\x1b");
}

TEST_CASE("on a GitHub runner's console terminal_text breaks up every workflow command") {
  set_console(Console::GitHubRunner);
  check_terminal_text({
      {"::error file=README.md::forged", ":\\x3aerror file=README.md:\\x3aforged"},
      {"a ##[add-mask]b", "a ##\\x5badd-mask]b"},
      {":::", ":\\x3a:"},
      {"###[", "###\\x5b"},
      // Characters a culture-sensitive comparison may skip do not hide a prefix.
      {":\u200d:x", ":\u200d\\x3ax"},
      {"#\ufe0f#[", "#\ufe0f#\\x5b"},
      {":\u00ad:", ":\\u00ad:"},
      {"#\u0600#\U00013430[", "#\u0600#\U00013430\\x5b"},
      // Text with neither is unchanged.
      {"a: b [c] # d", "a: b [c] # d"},
  });
  // visible_text ignores the console.
  CHECK(visible_text("::x") == "::x");
  for (const std::string& t : kTokens) {
    CAPTURE(t);
    CHECK(runner_commands(terminal_text(t)).empty());
    CHECK(runner_commands("prefix " + terminal_text(t)).empty());
  }
  set_console(Console::Terminal);
}

TEST_CASE("json_text: nlohmann's escaping, hidden characters as \\u, U+FFFD for bytes that are not UTF-8") {
  CHECK(json_quoted("plain ünïcödé") == "\"plain ünïcödé\"");
  CHECK(json_quoted("q\"b\\n\n\t\b\f\r\x01") == R"("q\"b\\n\n\t\b\f\r\u0001")");
  CHECK(json_quoted("\x7f\xc2\x85\u202e\u2028\U000e0041") == R"("\u007f\u0085\u202e\u2028\udb40\udc41")");
  CHECK(json_quoted("caf\xe9") == "\"caf\xEF\xBF\xBD\"");
  CHECK(json_quoted("##[add-mask]x") == R"("##\u005badd-mask]x")");
  // What nlohmann writes for the same valid string, byte for byte.
  for (const std::string& s : {std::string("name: k=1, [x] #y"), std::string("\x01\x1f tab\t"), std::string("模块 😀")})
    CHECK(json_quoted(s) == nlohmann::json(s).dump());
  // Every escaped string parses back to itself.
  for (const std::string& t : kTokens) {
    CAPTURE(t);
    CHECK(nlohmann::json::parse(json_quoted(t)).get<std::string>() == t);
  }
  CHECK(dump_json(nlohmann::ordered_json{{"f\xff", "v\xfe"}}) == "{\n  \"f\xEF\xBF\xBD\": \"v\xEF\xBF\xBD\"\n}");
  CHECK(script_json(R"({"a":"</script><!--<script>"})") == R"({"a":"\u003c/script>\u003c!--\u003cscript>"})");
}

TEST_CASE("xml_text, dot_text, workflow command escaping") {
  set_console(Console::Terminal);
  CHECK(xml_text("a<b>&\"c\x01\u0085") == "a&lt;b&gt;&amp;&quot;c\\x01\\u0085");
  CHECK(xml_problem("<svg a=\"" + xml_text("\x01\"<&") + "\"><t>" + xml_text("\x0b\xef\xbf\xbe]]>") + "</t></svg>") == "");
  CHECK(xml_problem("<svg><t>\x01</t></svg>") != "");  // the checker can fail
  CHECK(dot_text("say \"hi\" \\N\n") == "say \\\"hi\\\" \\\\N\\\\n");
  CHECK(workflow_command_data("50% a\r\nb: c, d") == "50%25 a%0D%0Ab: c, d");
  CHECK(workflow_command_property("50% a\r\nb: c, d") == "50%25 a%0D%0Ab%3A c%2C d");
}

TEST_CASE("markdown_text: no tag, entity, link, autolink or block from a string, ordinary text unchanged") {
  set_console(Console::Terminal);
  using M = Markdown;
  // Text that needs nothing keeps its bytes (the shipped descriptions).
  for (const std::string& s : {std::string("setuptools' _distutils_hack (a |= b; search locations [], issue #15)"),
                               std::string("before@04efefd, `x` and __editable___*_finder.py, k < 3 & more")})
    CHECK(markdown_text(s, M::Paragraph) == s);
  CHECK(markdown_text("<img src=x> </b> <!-- <?x") == "&lt;img src=x> &lt;/b> &lt;!-- &lt;?x");
  CHECK(markdown_text("&lt; &#60;") == "&amp;lt; &amp;#60;");
  CHECK(markdown_text("[a](http://e.x) ![i][r] [d]: u") == "[a\\](http\\://e.x) ![i\\][r] [d\\]: u");
  CHECK(markdown_text("www.e.com a@b.co") == "www\\.e.com a\\@b.co");
  CHECK(markdown_text("\\](x)") == "\\\\\\](x)");
  CHECK(markdown_text("# h", M::Paragraph) == "\\# h");
  CHECK(markdown_text("   > q", M::Paragraph) == "   \\> q");
  CHECK(markdown_text("- i", M::Paragraph) == "\\- i");
  CHECK(markdown_text("12. i", M::Paragraph) == "12\\. i");
  CHECK(markdown_text("```x", M::Paragraph) == "\\```x");
  CHECK(markdown_text("# h") == "# h");  // inside a line a '#' is text
  CHECK(markdown_text("a|b", M::Cell) == "a\\|b");
  CHECK(markdown_text("a|b") == "a|b");
  CHECK(markdown_text("probe.lookups", M::CodeCell) == "`probe.lookups`");
  CHECK(markdown_text("a`b|c", M::CodeCell) == "``a`b\\|c``");
  CHECK(markdown_text("`x", M::CodeCell) == "`` `x ``");
  CHECK(markdown_text("a\n# h") == "a\\n# h");
  CHECK(markdown_code_block("a\n") == "```text\na\n```\n");
  CHECK(markdown_code_block("x ```` y\n") == "`````text\nx ```` y\n`````\n");
  for (const std::string& t : kTokens) {
    CAPTURE(t);
    CHECK(markdown_problem("x " + markdown_text(t) + "\n") == "");
    CHECK(markdown_problem(markdown_text(t, M::Paragraph) + "\n") == "");
    CHECK(markdown_problem("- " + markdown_text(t, M::Paragraph) + "\n") == "");
  }
  CHECK(markdown_problem("- # x\n") != "");
  CHECK(markdown_problem("<b>x</b>\n") != "");  // the checker can fail
}

TEST_CASE("the reader refuses a file that is not UTF-8 at its first bad byte") {
  std::string text = "{\n  \"impsim\": 1, \"name\": \"ok\",\n  \"description\": \"caf\xe9\",\n  \"tree\": {}, \"program\": []\n}\n";
  try {
    parse_scenario(text, "x.json");
    FAIL("loaded");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("x.json:3:22: the file is not UTF-8: byte 0xE9") == 0);
  }
  // Overlong forms and surrogates are not UTF-8 either; the UTF-8 of U+FFFF is.
  for (const std::string& bad : {std::string("\xc0\xa2"), std::string("\xed\xa0\x80"), std::string("\xf8\x88\x80\x80\x80")})
    CHECK_THROWS_AS(parse_scenario("{\"impsim\": 1, \"name\": \"" + bad + "\", \"tree\": {}, \"program\": []}", "x.json"),
                    InputError);
  CHECK(parse_scenario("{\"impsim\": 1, \"name\": \"\xef\xbf\xbf\", \"tree\": {}, \"program\": []}", "x.json").name ==
        "\xef\xbf\xbf");
  CHECK(first_invalid_utf8("abc\xe9") == 3);
  CHECK(first_invalid_utf8("ab\u00e9\U0001f600") == std::string_view::npos);
}

// ---------------------------------------------------------------------------
// The findings, through the binary.

TEST_CASE("finding: under GitHub Actions a scenario cannot forge, mask or stop workflow commands") {
  const Strings s{.name = "n\n::add-mask::secret\n::error file=README.md,line=1::forged",
                  .description = "\n::stop-commands::tok\n ##[add-mask]abc",
                  .sweep_title = "##[error]t",
                  .title1 = "::warning::t1",
                  .title2 = "\r::notice::t2",
                  .label1 = "::group::g~1",
                  .label2 = "::endgroup::##[x]~2"};
  const std::string dir = test::scratch_subdir("gha");
  const std::string file = hostile_file(dir, "forged.json", s);
  std::string summary = dir + "/summary.md";
  std::string env = "GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=" + sh_word(summary);
  for (const std::string& args : {"run " + file, "run " + file + " --json", "run " + file + " --format markdown",
                                  "compare " + file, "sweep " + file + " --param k --values 1,2",
                                  "trace " + file, "trace " + file + " --format dot", "run " + file + " --quiet"}) {
    CAPTURE(args);
    Split r = impsim_split(args, env);
    CHECK(r.status == (args.starts_with("trace") ? 0 : 1));  // the expectation fails at k=2; trace checks none
    CAPTURE(r.out);
    CAPTURE(r.err);
    // The runner reads both streams; only impsim's own annotations are
    // commands, and it processes every one of them (no stop-commands).
    std::vector<RunnerCommand> all = runner_commands(r.out + "\n" + r.err);
    std::vector<RunnerCommand> done = processed_commands(r.out + "\n" + r.err);
    CHECK(all.size() == done.size());
    for (const RunnerCommand& c : all) {
      CHECK(c.name == "error");
      CHECK(c.line.starts_with("::error file=" + file + ",line="));
    }
    const bool annotates = args.starts_with("run") || args.starts_with("compare") || args.starts_with("sweep");
    if (annotates) {
      REQUIRE(done.size() == 1);
      CHECK(done.front().data.starts_with("n\\n:\\x3aadd-mask:\\x3asecret\\n:\\x3aerror file=README.md,line=1:\\x3aforged: "
                                          "before :\\x3aendgroup:\\x3a##\\x5bx]~2.lookups [k=2]: expected 5, got 4"));
    }
  }
  // The same scenario on a bare terminal prints the texts as they are, escaped for the terminal only.
  Split plain = impsim_split("run " + file, "GITHUB_ACTIONS=");
  CHECK(plain.out.find("n\\n::add-mask::secret") != std::string::npos);
  // The step summary: no heading, tag, link or table break of the scenario's.
  std::string md = impsim::test::read_file(summary);
  CAPTURE(md);
  CHECK(md.starts_with("### impsim run: "));
  CHECK(markdown_problem(md) == "");
  // The old injection: the raw name at the start of standard output.
  CHECK(runner_commands(s.name).size() == 2);
}

TEST_CASE("finding: error messages on standard error under --quiet carry no command but impsim's own annotation, and no control") {
  std::string dir = test::scratch_subdir("quiet");
  std::string file = dir + "/bad.json";
  std::ofstream(file) << R"({"impsim": 1, "tree": {}, "program": [], "\n::error file=README.md::forged\u001b[2K": 1})";
  // Under GitHub Actions an error is annotated: that annotation
  // is the one command on standard error, and the runner processes it.
  auto only_own_annotation = [](const std::string& err, const std::string& props) {
    std::vector<RunnerCommand> all = runner_commands(err);
    REQUIRE(all.size() == 1);
    CHECK(processed_commands(err).size() == 1);
    CHECK(all.front().name == "error");
    CHECK(all.front().line.starts_with("::error " + props));
  };
  Split r = impsim_split("run --quiet " + file, "GITHUB_ACTIONS=true");
  CAPTURE(r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("unknown key") != std::string::npos);
  only_own_annotation(r.err, "file=" + file + ",line=1,col=42,title=impsim invalid scenario::");
  CHECK(terminal_problem(r.err) == "");
  // A refused argument, quoted back by CLI11 and by impsim.
  for (const std::string& args : {"run " + file + " --engine " + sh_word("::error::x\x1b[2J"),
                                  "run scenarios/nested_guards.json --variant " + sh_word("\n::error::x\x1b[2J")}) {
    Split a = impsim_split(args, "cd " + kSource + " && GITHUB_ACTIONS=true");
    CAPTURE(a.err);
    CHECK(a.status == 2);
    only_own_annotation(a.err, args.find("--engine") != std::string::npos
                                   ? "title=impsim usage error::"
                                   : "file=scenarios/nested_guards.json,title=impsim usage error::");
    CHECK(terminal_problem(a.err) == "");
  }
}

TEST_CASE("finding: escape sequences from a scenario never reach the terminal") {
  const Strings s{.name = "t\x1b]52;c;aGVsbG8=\x07\x1b]0;title\x07",
                  .description = "\x1b[1A\x1b[2K\x1b[1A\x1b[2Kexpectations: 1/1 hold\u202e",
                  .sweep_title = "\x1b[31mk",
                  .title1 = "a\x1b[2K",
                  .title2 = "b\x07",
                  .label1 = "l\x1b[1A~1",
                  .label2 = "p\x1b[2K~2"};
  const std::string file = hostile_file(test::scratch_subdir("esc"), "esc.json", s);
  for (const std::string& args : {"run " + file, "run " + file + " --format markdown", "compare " + file,
                                  "trace " + file, "trace " + file + " --format importtime",
                                  "sweep " + file + " --param k --values 1,2", "validate " + file}) {
    CAPTURE(args);
    Split r = impsim_split(args);
    CAPTURE(r.out);
    CHECK(terminal_problem(r.out) == "");
    CHECK(terminal_problem(r.err) == "");
  }
  Split r = impsim_split("run " + file);
  CHECK(r.status == 1);
  CHECK(r.out.find("FAILED before p\\x1b[2K~2.lookups [k=2]: expected 5, got 4") != std::string::npos);
  CHECK(r.out.find("\\x1b[1A\\x1b[2K\\x1b[1A\\x1b[2Kexpectations: 1/1 hold\\u202e") != std::string::npos);
}

TEST_CASE("finding: --json never aborts on bytes that are not UTF-8, in any subcommand") {
  std::string dir = test::scratch_subdir("utf8");
  // A Latin-1 byte in the file, a Latin-1 file name, an argument.
  std::string latin1_content = dir + "/content.json";
  std::ofstream(latin1_content) << "{\"impsim\": 1, \"description\": \"caf\xe9\", \"tree\": {}, \"program\": []}";
  std::string latin1_name = dir + "/caf\xe9.json";  // no "name": the report names it after the file
  nlohmann::ordered_json unnamed = nlohmann::ordered_json::parse(impsim::test::read_file(kSource + "/scenarios/nested_guards.json"));
  unnamed.erase("name");
  std::ofstream(latin1_name) << unnamed.dump(2);
  // An argument that is not UTF-8, which the error message quotes.
  auto bad_arg = [](const std::string& cmd) {
    return cmd == "validate" ? "--format " + sh_word("js\xffon") : "--variant " + sh_word("bef\xffore");
  };
  const std::vector<std::string> commands = {"run", "validate", "compare", "trace", "sweep --param k --values 1,2",
                                             "explore -o " + dir + "/page.html"};
  for (const std::string& cmd : commands) {
    struct Case {
      std::string args;
      int status;
      bool replaced;  // the error message quotes the byte (as U+FFFD)
    };
    std::vector<Case> cases = {{cmd + " " + sh_word(latin1_content) + " --json", 2, false},
                               {cmd + " " + sh_word(latin1_name) + " --json", 0, false},
                               {cmd + " " + sh_word(latin1_name) + " " + bad_arg(cmd) + " --json", 2, true}};
    for (const Case& c : cases) {
      CAPTURE(c.args);
      Split r = impsim_split(c.args);
      CAPTURE(r.out);
      CAPTURE(r.err);
      CHECK(r.status == c.status);
      CHECK(terminal_problem(r.err) == "");
      if (cmd.starts_with("explore") && c.status == 0) {
        nlohmann::json data;
        CHECK(explore_problem(impsim::test::read_file(dir + "/page.html"), &data) == "");
        CHECK(data["scenario"] == "caf\xEF\xBF\xBD");
        continue;
      }
      nlohmann::json j;
      REQUIRE_NOTHROW(j = nlohmann::json::parse(r.out));
      if (c.replaced) CHECK(j["error"]["message"].get<std::string>().find("\xEF\xBF\xBD") != std::string::npos);
    }
  }
  Split r = impsim_split("run " + latin1_content);
  CHECK(r.err.find(":1:34: the file is not UTF-8: byte 0xE9") != std::string::npos);
  // A file name in a text report and an error message: \xNN.
  Split v = impsim_split("validate " + sh_word(latin1_name));
  CHECK(v.out.find("caf\\xe9.json: ok") != std::string::npos);
}

TEST_CASE("finding: a name holding <!--<script> leaves the explorer page's two scripts apart") {
  std::string dir = test::scratch_subdir("explore");
  std::string file = dir + "/page.json";
  std::ofstream(file) << R"({"impsim": 1, "name": "<!--<script>", "description": "</script><script>alert(1)</script>",
    "tree": {"pkg": {}}, "program": [{"import": "pkg", "label": "<!--\u2028<SCRIPT>"}]})";
  Split r = impsim_split("explore " + file + " -o " + dir + "/page.html");
  CHECK(r.status == 0);
  nlohmann::json data;
  CHECK(explore_problem(impsim::test::read_file(dir + "/page.html"), &data) == "");
  CHECK(data["scenario"] == "<!--<script>");
  CHECK(data["description"] == "</script><script>alert(1)</script>");
  CHECK(data["labels"][0] == "<!--\u2028<SCRIPT>");
  // The old escaping (only "</") fails the same check.
  CHECK(explore_problem("<script>\nconst DATA = {\"scenario\":\"<!--<script>\"};\n</script>\n<script>x</script>", &data) !=
        "");
}

TEST_CASE("finding: a control character in a name leaves the SVG chart well-formed") {
  const Strings s{.name = "a\x01\x0b\x1b[31m\xef\xbf\xbe",
                  .description = "d\x02 <x> & \"y\"",
                  .sweep_title = "k\x03",
                  .title1 = "t\x04",
                  .title2 = "u\x05",
                  .label1 = "l~1",
                  .label2 = "p\x06~2"};
  const std::string dir = test::scratch_subdir("svg");
  const std::string file = hostile_file(dir, "c.json", s);
  Split r = impsim_split("sweep " + file + " --param k --values 1,2,3 --svg " + dir + "/c.svg");
  CHECK(r.status == 1);
  std::string svg = impsim::test::read_file(dir + "/c.svg");
  CAPTURE(svg);
  CHECK(xml_problem(svg) == "");
  CHECK(svg.find("<title>a\\x01\\x0b\\x1b[31m\\ufffe</title>") != std::string::npos);
}

// ---------------------------------------------------------------------------

TEST_CASE("property: random hostile strings in every string a scenario lets through, every output format") {
  // Seeded: the same cases on every run. Per case, both consoles.
  Rng rng{20};
  const int kCases = 150;
  int checked = 0;
  for (int i = 0; i < kCases; ++i) {
    Strings s = hostile_strings(rng);
    const bool named = rng.below(4) != 0;  // else the report names it after a hostile file name
    std::string file = hostile_file_name(rng);
    CAPTURE(i);
    CAPTURE(q(s.name));
    CAPTURE(q(s.description));
    CAPTURE(q(s.label2));
    Scenario sc;
    REQUIRE_NOTHROW(sc = parse_scenario(hostile_scenario(s, named), file));
    for (Console c : {Console::Terminal, Console::GitHubRunner}) {
      set_console(c);
      check_outputs(sc, s, c == Console::GitHubRunner);
      for (const std::string& m : hostile_errors(s.name)) {
        CAPTURE(m);
        CHECK(terminal_problem(m) == "");
        if (c == Console::GitHubRunner) CHECK(runner_commands(m).empty());
      }
    }
    ++checked;
  }
  set_console(Console::Terminal);
  CHECK(checked == kCases);
}

TEST_CASE("property: hostile scenarios and file names through the binary under GitHub Actions") {
  Rng rng{21};
  std::string dir = test::scratch_subdir("binary");
  const int kCases = 12;
  for (int i = 0; i < kCases; ++i) {
    Strings s = hostile_strings(rng);
    std::string file = dir + "/" + hostile_file_name(rng);
    std::ofstream(file) << hostile_scenario(s, rng.below(2) == 0);
    std::string summary = dir + "/summary" + std::to_string(i) + ".md";
    CAPTURE(i);
    CAPTURE(file);
    for (const std::string& args :
         {"run " + sh_word(file), "run " + sh_word(file) + " --format markdown", "run " + sh_word(file) + " --json",
          "compare " + sh_word(file), "validate " + sh_word(file), "trace " + sh_word(file),
          "run " + sh_word(file) + " --variant " + sh_word(s.label1)}) {
      CAPTURE(args);
      Split r = impsim_split(args, "GITHUB_ACTIONS=true GITHUB_STEP_SUMMARY=" + sh_word(summary));
      CAPTURE(r.out);
      CAPTURE(r.err);
      CHECK(r.status != 134);
      CHECK(terminal_problem(r.err) == "");
      if (args.find("--json") != std::string::npos) CHECK_NOTHROW(nlohmann::json::parse(r.out));
      else CHECK(terminal_problem(r.out) == "");
      // Only impsim's own annotations, every one processed.
      std::vector<RunnerCommand> all = runner_commands(r.out + "\n" + r.err);
      CHECK(all.size() == processed_commands(r.out + "\n" + r.err).size());
      for (const RunnerCommand& c : all) CHECK(c.line.starts_with("::error file="));
    }
    CHECK(markdown_problem(impsim::test::read_file(summary)) == "");
  }
}
