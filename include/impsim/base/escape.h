// One escaping function per place a stranger's string goes. A scenario's
// name, description, titles and labels, a file name and a command-line
// argument are hostile until escaped for where they are written: a
// terminal (and the GitHub Actions runner that reads the same lines), JSON,
// the explorer page's inline script, XML (SVG), Graphviz DOT, Markdown, a
// workflow command. Each function leaves text that needs no escaping byte
// for byte as it was, so reports of ordinary scenarios do not change.
// docs/security.md says what is escaped where; tests/escape_test.cc checks
// every output format against random hostile strings.
#pragma once

#include <string>
#include <string_view>

namespace impsim {

// Who reads impsim's terminal text besides a person. Under GitHub Actions
// (GITHUB_ACTIONS=true) the runner reads every line of standard output and
// standard error for workflow commands (`::error ...::`, `##[add-mask]`).
enum class Console { Terminal, GitHubRunner };

// The process's console: GitHubRunner when GITHUB_ACTIONS is "true" when
// first asked. set_console() overrides it (the tests use both).
Console console();
void set_console(Console c);

// For a terminal: text reports, traces, Markdown on standard output, error
// messages, the progress line. Controls (C0, DEL, C1) and invisible
// characters that reorder or hide text (bidi controls, zero-width and
// other default-ignorable characters, U+2028/U+2029, noncharacters) are
// shown as \n, \x1b, \u202e, \U000e0001; a byte that is not UTF-8 as \xe9.
// On the GitHubRunner console, text that the runner would read as a
// command is broken up visibly too (a `::` becomes `:\x3a`, `##[` becomes
// `##\x5b`), wherever it sits in a line.
std::string terminal_text(std::string_view s);

// terminal_text's escaping of controls and invisible characters alone, the
// same on every console: for files no runner reads (SVG) and for the
// properties of impsim's own workflow commands.
std::string visible_text(std::string_view s);

// The inside of a JSON string literal (no quotes). As nlohmann writes it
// (`"`, `\`, controls as \n or \u0001), plus: DEL, C1 and the characters
// terminal_text hides escaped as \uXXXX (the same string to a parser, safe
// in a terminal); a byte that is not UTF-8 replaced by U+FFFD (JSON text
// is UTF-8: the output never aborts); `##[` written `##\u005b`, so that no
// JSON line on a runner's standard output is a legacy workflow command.
std::string json_text(std::string_view s);
// json_text in quotes.
std::string json_quoted(std::string_view s);

// A JSON document embedded in an HTML <script> element (the explorer
// page): every `<` written \u003c, so that no `</script`, `<!--` or
// `<script` in a string can end the element or change how it is parsed.
// `json` must be JSON text (a `<` can only be inside a string there).
std::string script_json(std::string_view json);

// XML 1.0 character data and double-quoted attribute values (SVG):
// visible_text (XML forbids most controls even as character references),
// then & < > " as entities.
std::string xml_text(std::string_view s);

// The inside of a Graphviz DOT double-quoted string: terminal_text (a DOT
// graph is printed on standard output by default), then `"` and `\`
// escaped so that Graphviz shows them as written.
std::string dot_text(std::string_view s);

// Where Markdown text sits, which decides what could become markup.
enum class Markdown {
  Inline,     // inside a line: a heading's text, a list item after "- "
  Paragraph,  // at the start of a line: a paragraph of its own
  Cell,       // a table cell: `|` too
  CodeCell,   // a table cell in code font: the whole cell as a code span
};

// Markdown (GitHub-flavoured) for standard output and $GITHUB_STEP_SUMMARY:
// terminal_text first (no control, no newline: a string stays one line),
// then what would start an HTML tag or comment (`<` before a letter, `/`,
// `!` or `?`), an entity (`&` before a letter or `#`), a link or image
// (`]` before `(`, `[` or `:`), an autolink (`://`, `www.`, `x@y`) or, at
// a line's start, a heading, quote, list or fence is backslash-escaped or
// written as an entity. Emphasis (`*`, `_`) is let through: it adds no
// structure, link or HTML, and escaping it would change ordinary names
// such as `_find_spec`. A CodeCell is a code span whose backtick fence
// is longer than any run of backticks inside it.
std::string markdown_text(std::string_view s, Markdown where = Markdown::Inline);

// `body` (lines of terminal text) as a fenced code block whose fence is
// longer than any run of backticks in it: "```text\n" + body + "```\n".
std::string markdown_code_block(std::string_view body, std::string_view info = "text");

// The offset of the first byte of `s` that is not part of well-formed
// UTF-8 (Unicode's table: no overlong form, no surrogate, nothing past
// U+10FFFF), or std::string_view::npos. The reader refuses such a file.
size_t first_invalid_utf8(std::string_view s);

// A GitHub workflow command's message and property values, as the runner
// reads them back (actions/runner, src/Runner.Common/ActionCommand.cs,
// UnescapeData/UnescapeProperty): `%` -> %25, CR -> %0D, LF -> %0A; in a
// property also `:` -> %3A and `,` -> %2C.
std::string workflow_command_data(std::string_view s);
std::string workflow_command_property(std::string_view s);

}  // namespace impsim
