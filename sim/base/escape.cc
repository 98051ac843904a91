#include "impsim/base/escape.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "impsim/base/unicode_names.h"

namespace impsim {

namespace {

// One UTF-8 character: its code point and length; length 0 when the byte
// at the start is not the start of a well-formed sequence (Unicode's table
// of well-formed byte sequences: no overlong form, no surrogate, nothing
// past U+10FFFF).
struct Char {
  char32_t cp = 0;
  size_t len = 0;
};

Char decode(std::string_view s, size_t i) {
  auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = at(i);
  if (b < 0x80) return {b, 1};
  auto cont = [&](size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
    return k < s.size() && at(k) >= lo && at(k) <= hi;
  };
  if (b >= 0xC2 && b <= 0xDF) {
    if (cont(i + 1)) return {static_cast<char32_t>(((b & 0x1F) << 6) | (at(i + 1) & 0x3F)), 2};
    return {};
  }
  if (b >= 0xE0 && b <= 0xEF) {
    const unsigned char lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
    if (cont(i + 1, lo, hi) && cont(i + 2))
      return {static_cast<char32_t>(((b & 0x0F) << 12) | ((at(i + 1) & 0x3F) << 6) | (at(i + 2) & 0x3F)), 3};
    return {};
  }
  if (b >= 0xF0 && b <= 0xF4) {
    const unsigned char lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
    if (cont(i + 1, lo, hi) && cont(i + 2) && cont(i + 3))
      return {static_cast<char32_t>(((b & 0x07) << 18) | ((at(i + 1) & 0x3F) << 12) | ((at(i + 2) & 0x3F) << 6) |
                                    (at(i + 3) & 0x3F)),
              4};
    return {};
  }
  return {};
}

// Characters a reader cannot see for what they are: controls (C0, DEL,
// C1), the bidi controls and marks that reorder a line (Trojan Source),
// U+2028/U+2029, and the default-ignorable characters that print as
// nothing (soft hyphen, zero-width space, word joiner, Hangul fillers,
// tags, ...), plus the noncharacters, which XML forbids. Zero-width
// (non-)joiners and variation selectors are kept: emoji and several
// scripts need them, and they hide nothing on their own.
bool hidden(char32_t c) {
  if (c < 0x20 || (c >= 0x7F && c <= 0x9F)) return true;
  if (c < 0xAD) return false;
  if (c == 0xAD || c == 0x034F || c == 0x061C || c == 0x115F || c == 0x1160 || c == 0x17B4 || c == 0x17B5 ||
      c == 0x180E || c == 0x200B || c == 0x200E || c == 0x200F || c == 0x3164 || c == 0xFEFF || c == 0xFFA0)
    return true;
  if ((c >= 0x2028 && c <= 0x202E) || (c >= 0x2060 && c <= 0x206F)) return true;
  if (c >= 0xFFF0 && c <= 0xFFFB) return true;  // unassigned specials, interlinear annotation
  if ((c >= 0xFDD0 && c <= 0xFDEF) || (c & 0xFFFE) == 0xFFFE) return true;  // noncharacters
  if ((c >= 0x1BCA0 && c <= 0x1BCA3) || (c >= 0x1D173 && c <= 0x1D17A)) return true;
  if (c >= 0xE0000 && c <= 0xE0FFF && !(c >= 0xE0100 && c <= 0xE01EF)) return true;  // tags
  return false;
}

// The default-ignorable and format characters hidden() keeps (joiners,
// variation selectors, the visible format marks of Arabic, Syriac, Kaithi
// and Egyptian). The runner matches `::` and `##[` with .NET's
// culture-sensitive StartsWith/IndexOf (ActionCommand.TryParseV2 and
// TryParse call them without a StringComparison), which may skip
// characters that collation ignores: between the characters of a command
// prefix they count as nothing.
bool transparent(char32_t c) {
  return c == 0x200C || c == 0x200D || (c >= 0xFE00 && c <= 0xFE0F) || (c >= 0x180B && c <= 0x180D) || c == 0x180F ||
         (c >= 0xE0100 && c <= 0xE01EF) || (c >= 0x0600 && c <= 0x0605) || c == 0x06DD || c == 0x070F ||
         c == 0x0890 || c == 0x0891 || c == 0x08E2 || c == 0x110BD || c == 0x110CD || (c >= 0x13430 && c <= 0x1343F);
}

void append_visible(std::string& out, char32_t c) {
  switch (c) {
    case '\t': out += "\\t"; return;
    case '\n': out += "\\n"; return;
    case '\r': out += "\\r"; return;
    default: break;
  }
  if (c < 0x80) out += fmt::format("\\x{:02x}", static_cast<unsigned>(c));
  else if (c <= 0xFFFF) out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
  else out += fmt::format("\\U{:08x}", static_cast<unsigned>(c));
}

std::optional<Console> g_console;

// How the GitHub Actions runner finds workflow commands (actions/runner):
// - src/Runner.Sdk/ProcessInvoker.cs reads standard output and standard
//   error alike with StreamReader.ReadLine: a line ends at LF, CR or CRLF.
// - src/Runner.Worker/ActionCommandManager.cs (TryProcessCommand) offers
//   every line to ActionCommand.TryParseV2, then to ActionCommand.TryParse;
//   after `::stop-commands::TOKEN` it processes nothing until `::TOKEN::`,
//   so one forged line silences every annotation after it.
// - src/Runner.Common/ActionCommand.cs: TryParseV2 trims the line's
//   leading white space, wants it to start with `::` and finds the next
//   `::`; the command name is the text between, up to the first space, and
//   must be registered (case-insensitive). TryParse (the legacy form) finds
//   `##[` ANYWHERE in the line, then the next `]`.
// So a string from a scenario must hold no `::` and no `##[`: CommandBreaker
// finds the second `:` of a `::` and the `[` of a `##[` (characters in
// transparent() skipped) for terminal() to escape. Inside one string that
// is enough: impsim's own text never puts a `:` or `##` right before a
// scenario's string, and the `:` it puts after one is followed by a space,
// which leaves a command name empty. Controls are escaped before, so no
// string can start a line of its own.
struct CommandBreaker {
  char32_t prev = 0, prev2 = 0;  // the last two characters that are not transparent
  bool breaks(char32_t c) {
    if (transparent(c)) return false;
    const bool b = (c == ':' && prev == ':') || (c == '[' && prev == '#' && prev2 == '#');
    prev2 = prev;
    // A broken character no longer pairs with the next one.
    prev = b ? 0 : c;
    return b;
  }
};

std::string terminal(std::string_view s, bool runner) {
  std::string out;
  out.reserve(s.size());
  CommandBreaker breaker;
  for (size_t i = 0; i < s.size();) {
    Char ch = decode(s, i);
    if (ch.len == 0) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i]));
      breaker.breaks(0xFFFD);
      ++i;
      continue;
    }
    if (hidden(ch.cp)) {
      append_visible(out, ch.cp);
      breaker.breaks('\\');
    } else if (runner && breaker.breaks(ch.cp)) {
      append_visible(out, ch.cp);  // below U+0080: \x3a, \x5b
    } else {
      out.append(s.substr(i, ch.len));
    }
    i += ch.len;
  }
  return out;
}

bool ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool ascii_alnum(char c) { return (c >= '0' && c <= '9') || ascii_letter(c); }
bool ascii_punct(char c) { return c > 0x20 && c < 0x7F && !ascii_alnum(c); }

// GFM's email autolink around the `@` at t[at]: a local part of
// alphanumerics and .-_+ before it, a domain of alphanumerics, - and _
// after it with at least one dot followed by more.
bool email_at(std::string_view t, size_t at) {
  auto local = [](char c) { return ascii_alnum(c) || c == '.' || c == '_' || c == '-' || c == '+'; };
  auto label = [](char c) { return ascii_alnum(c) || c == '-' || c == '_'; };
  if (at == 0 || !local(t[at - 1])) return false;
  size_t i = at + 1;
  if (i >= t.size() || !label(t[i])) return false;
  while (i < t.size() && label(t[i])) ++i;
  return i + 1 < t.size() && t[i] == '.' && label(t[i + 1]);
}

size_t longest_backtick_run(std::string_view s) {
  size_t best = 0, run = 0;
  for (char c : s) {
    run = c == '`' ? run + 1 : 0;
    best = std::max(best, run);
  }
  return best;
}

// At the start of a line (after up to three spaces), the character that
// would open a block: a heading, a quote, a list item, a thematic break or
// a fence; for an ordered list item, the `.` or `)` after its number. Its
// index, or npos.
size_t block_marker(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && i < 3 && s[i] == ' ') ++i;
  if (i == s.size()) return std::string_view::npos;
  const char c = s[i];
  const char next = i + 1 < s.size() ? s[i + 1] : ' ';
  if (c == '#' || c == '>') return i;
  if ((c == '-' || c == '+' || c == '*' || c == '_') && (next == ' ' || next == c)) return i;
  if ((c == '`' || c == '~') && s.substr(i, 3) == std::string(3, c)) return i;
  size_t d = i;
  while (d < s.size() && d - i < 9 && s[d] >= '0' && s[d] <= '9') ++d;
  if (d > i && d < s.size() && (s[d] == '.' || s[d] == ')') && (d + 1 == s.size() || s[d + 1] == ' ')) return d;
  return std::string_view::npos;
}

bool starts_with_lower(std::string_view s, size_t at, std::string_view word) {
  if (at + word.size() > s.size()) return false;
  for (size_t k = 0; k < word.size(); ++k) {
    char c = s[at + k];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != word[k]) return false;
  }
  return true;
}

}  // namespace

size_t first_invalid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    // ASCII runs first: a scenario is mostly ASCII.
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    Char ch = decode(s, i);
    if (ch.len == 0) return i;
    i += ch.len;
  }
  return std::string_view::npos;
}

Console console() {
  if (!g_console) {
    const char* v = std::getenv("GITHUB_ACTIONS");
    g_console = v && std::string_view(v) == "true" ? Console::GitHubRunner : Console::Terminal;
  }
  return *g_console;
}

void set_console(Console c) { g_console = c; }

std::string terminal_text(std::string_view s) { return terminal(s, console() == Console::GitHubRunner); }

std::string visible_text(std::string_view s) { return terminal(s, false); }

std::string json_text(std::string_view s) {
  // Printable ASCII with nothing to escape (module names, most of a
  // trace's text) is itself: a trace writes one per event.
  if (std::all_of(s.begin(), s.end(),
                  [](char c) { return c >= 0x20 && c < 0x7F && c != '"' && c != '\\' && c != '#'; }))
    return std::string(s);
  std::string out;
  out.reserve(s.size());
  char32_t prev = 0, prev2 = 0;  // for `##[`, transparent characters skipped
  for (size_t i = 0; i < s.size();) {
    Char ch = decode(s, i);
    if (ch.len == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      prev2 = prev;
      prev = 0xFFFD;
      ++i;
      continue;
    }
    const char32_t c = ch.cp;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (hidden(c)) {
          if (c <= 0xFFFF) {
            out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
          } else {
            const char32_t v = c - 0x10000;
            out += fmt::format("\\u{:04x}\\u{:04x}", static_cast<unsigned>(0xD800 + (v >> 10)),
                               static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
          }
        } else if (c == '[' && prev == '#' && prev2 == '#') {
          out += "\\u005b";
        } else {
          out.append(s.substr(i, ch.len));
        }
    }
    if (!transparent(c)) {
      prev2 = prev;
      prev = hidden(c) ? 0 : c;
    }
    i += ch.len;
  }
  return out;
}

std::string json_quoted(std::string_view s) { return "\"" + json_text(s) + "\""; }

std::string script_json(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

std::string xml_text(std::string_view s) {
  std::string v = visible_text(s), out;
  out.reserve(v.size());
  for (char c : v) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string dot_text(std::string_view s) {
  std::string v = terminal_text(s), out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string markdown_text(std::string_view s, Markdown where) {
  const std::string t = terminal_text(s);
  std::string out;
  out.reserve(t.size());
  if (where == Markdown::CodeCell) {
    // A code span: backslashes are literal inside it, so only its fence
    // and the table's `|` (which GitHub splits cells on even here) matter.
    std::string body;
    for (char c : t) body += c == '|' ? std::string("\\|") : std::string(1, c);
    const std::string fence(longest_backtick_run(body) + 1, '`');
    const bool pad = !body.empty() && (body.front() == '`' || body.back() == '`');
    return fence + (pad ? " " : "") + body + (pad ? " " : "") + fence;
  }
  const size_t marker = where == Markdown::Paragraph ? block_marker(t) : std::string_view::npos;
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    const char next = i + 1 < t.size() ? t[i + 1] : '\0';
    if (i == marker) {
      out += '\\';
      out += c;
      continue;
    }
    switch (c) {
      case '\\':
        // A backslash before punctuation would escape it: keep it literal.
        out += ascii_punct(next) ? "\\\\" : "\\";
        break;
      case '<':
        out += ascii_letter(next) || next == '/' || next == '!' || next == '?' ? "&lt;" : "<";
        break;
      case '&':
        out += ascii_letter(next) || next == '#' ? "&amp;" : "&";
        break;
      case ']':
        out += next == '(' || next == '[' || next == ':' ? "\\]" : "]";
        break;
      case '|':
        out += where == Markdown::Cell ? "\\|" : "|";
        break;
      case ':':
        // http://, https://, ftp:// and friends: GitHub links them bare.
        out += t.substr(i + 1, 2) == "//" ? "\\:" : ":";
        break;
      case '.':
        // www.example.com: an extended autolink.
        out += i >= 3 && starts_with_lower(t, i - 3, "www") && (i == 3 || !ascii_alnum(t[i - 4])) ? "\\." : ".";
        break;
      case '@':
        // user@example.com: an email autolink (before@04efefd, with no dot
        // after the @, is not one).
        out += email_at(t, i) ? "\\@" : "@";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string markdown_code_block(std::string_view body, std::string_view info) {
  const std::string fence(std::max<size_t>(3, longest_backtick_run(body) + 1), '`');
  std::string out = fence + std::string(info) + "\n" + std::string(body);
  if (!body.empty() && body.back() != '\n') out += "\n";
  return out + fence + "\n";
}

namespace {

std::string percent_escaped(std::string_view s, bool property) {
  std::string out;
  for (char c : s) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else if (property && c == ':') out += "%3A";
    else if (property && c == ',') out += "%2C";
    else out += c;
  }
  return out;
}

}  // namespace

std::string workflow_command_data(std::string_view s) { return percent_escaped(s, false); }
std::string workflow_command_property(std::string_view s) { return percent_escaped(s, true); }

}  // namespace impsim
