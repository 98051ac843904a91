#include "output.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <iostream>

#include "cli.h"
#include "github.h"
#include "impsim/base/escape.h"
#include "impsim/base/version.h"
#include "usage_errors.h"

namespace impsim::cli {

using nlohmann::ordered_json;

void Sink::text(const std::string& s) {
  if (quiet) return;
  if (holding_)
    held_ += s;
  else
    (out ? *out : std::cout) << s;
}

void Sink::hold() {
  holding_ = true;
  held_.clear();
  docs_before_hold_ = docs_.size();
}

void Sink::release() {
  holding_ = false;
  if (!held_.empty()) (out ? *out : std::cout) << held_;
  held_.clear();
  held_.shrink_to_fit();
}

void Sink::drop_held() {
  if (!holding_) return;
  holding_ = false;
  held_.clear();
  held_.shrink_to_fit();
  docs_.resize(std::min(docs_.size(), docs_before_hold_));
}

void Sink::json(const ordered_json& j) { json_text(dump_json(j, json_options)); }

void Sink::json_text(std::string dumped) {
  while (!dumped.empty() && dumped.back() == '\n') dumped.pop_back();
  docs_.push_back(std::move(dumped));
}

void Sink::error(const ordered_json& e) {
  if (format == Format::Json) json(e);
}

void Sink::failures(const std::string& scenario, const std::vector<Failure>& list) {
  for (const Failure& f : list) {
    const std::string line = failure_line(f);
    // Quiet silences success only: the report that would list the failure
    // is not printed, so its line goes to standard error.
    if (quiet) fmt::print(stderr, "{}\n", line);
    github_annotate(github_annotation(failure_title(f.kind), f.file, f.pos, terminal_text(scenario + ": " + f.text)));
    summary_line(line);
  }
  std::fflush(stderr);
}

void Sink::summary_line(std::string line) { summary_.push_back(std::move(line)); }

namespace {

// A document nested one level down: every line after the first indented,
// which is safe because a JSON string never holds a raw newline.
std::string indented(const std::string& doc, const std::string& pad) {
  std::string out;
  for (char c : doc) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

}  // namespace

void Sink::finish(int status) {
  if (!summary_.empty()) github_step_summary(failures_summary(command, summary_));
  summary_.clear();
  if (format != Format::Json || quiet) return;
  std::ostream& o = out ? *out : std::cout;
  if (files_ <= 1) {
    // One file: its document as it is (none when it was written as it ran).
    if (!docs_.empty()) o << docs_.front() << "\n";
    return;
  }
  // Several files: one object, each file's document in order.
  std::string doc = fmt::format("{{\n  \"impsim\": 1,\n  \"version\": \"{}\",\n  \"reports\": [", impsim_version());
  for (size_t i = 0; i < docs_.size(); ++i) doc += (i ? ",\n    " : "\n    ") + indented(docs_[i], "    ");
  doc += docs_.empty() ? "],\n" : "\n  ],\n";
  doc += fmt::format("  \"exit_status\": {}\n}}\n", status);
  o << doc;
}

void OutputFlags::add(CLI::App* cmd, const std::string& help, const std::vector<std::string>& extra,
                      bool big_as_strings) {
  if (help.empty()) {
    // No report of the command's own (explore writes a page): --json only
    // says how an error is told, as it does for every other command.
    cmd->add_flag("--json", json, "Write an error also as the JSON error object on standard output");
  } else {
    std::vector<std::string> formats{"text", "json", "markdown"};
    formats.insert(formats.end(), extra.begin(), extra.end());
    one_of(cmd->add_option("--format", format, help), "format", formats)->capture_default_str();
    cmd->add_flag("--json", json, "The same as --format json");
  }
  cmd->add_flag("-q,--quiet", quiet,
                "Print no report and no progress, only each failure: one line on standard error (FILE:LINE:COL: why)");
  if (big_as_strings)
    cmd->add_flag("--json-big-as-strings", json_options.big_as_strings,
                  "JSON: write counts past 2^53 as strings of digits (exact in jq and JavaScript, whose numbers are "
                  "doubles)");
}

Format OutputFlags::base() const {
  if (json || format == "json") return Format::Json;
  if (format == "markdown") return Format::Markdown;
  return Format::Text;
}

Sink OutputFlags::sink() const {
  Sink s;
  s.format = base();
  s.own_format = !json && format != "text" && format != "json" && format != "markdown";
  s.quiet = quiet;
  s.json_options = json_options;
  return s;
}

namespace {

// A file as reports name it: standard input is <stdin>.
std::string report_name(const std::string& file) { return file == "-" ? "<stdin>" : file; }

// Which file the report that follows is, when there are several: head's
// "==> FILE <==" in text, a heading above the report's own in Markdown.
// One file has none: its name is the one on the command line, and its
// report's first line stays what it has always been.
std::string file_header(const std::string& file, Format format) {
  if (format == Format::Markdown) return "## " + markdown_text(report_name(file)) + "\n\n";
  return "==> " + terminal_text(report_name(file)) + " <==\n";
}

// Under GitHub Actions each file's text report is a group of the job's log,
// folded under the command and the file. Only where the log is what reads
// standard output (a pipe, or a terminal): a report redirected into a file
// ($GITHUB_STEP_SUMMARY, an artifact) or written by -o gets no workflow
// commands, and Markdown, which is written for documents, none either.
bool grouped_in_log(const Sink& sink) {
  if (console() != Console::GitHubRunner || sink.quiet || sink.out || sink.format != Format::Text) return false;
  struct stat st {};
  return ::fstat(STDOUT_FILENO, &st) == 0 && !S_ISREG(st.st_mode);
}

// The name escaped as an annotation's message is (tell_error): controls and
// a `::` made visible, then what the runner unescapes.
std::string group_line(const std::string& command, const std::string& file) {
  return "::group::" + workflow_command_data(fmt::format("impsim {} {}", command, terminal_text(report_name(file)))) +
         "\n";
}

}  // namespace

int for_each_file(const std::vector<std::string>& files, Sink& sink, const std::function<int(const std::string&)>& body) {
  sink.files_ = files.size();
  int status = 0;
  // A list (validate) names the file on each line; a format of the
  // command's own (a DOT graph, importtime lines) has no room for a header.
  const bool reports = sink.format != Format::Json && !sink.one_list;
  const bool headed = files.size() > 1 && reports && !sink.own_format;
  const bool grouped = headed && grouped_in_log(sink);
  for (size_t i = 0; i < files.size(); ++i) {
    // Text reports of several files, one after another, a blank line apart
    // (not the lines of one list).
    if (i > 0 && reports) sink.text("\n");
    if (grouped) sink.text(group_line(sink.command, files[i]));
    if (headed) sink.text(file_header(files[i], sink.format));
    sink.hold();
    status = std::max(status, body(files[i]));
    sink.release();
    if (grouped) sink.text("::endgroup::\n");
  }
  sink.finish(status);
  return status;
}

ordered_json error_json(const ErrorInfo& e) {
  ordered_json j;
  j["impsim"] = 1;
  j["version"] = impsim_version();
  ordered_json err;
  err["kind"] = e.kind;
  err["file"] = e.file.empty() ? ordered_json(nullptr) : ordered_json(e.file);
  err["line"] = e.line > 0 ? ordered_json(e.line) : ordered_json(nullptr);
  err["column"] = e.column > 0 ? ordered_json(e.column) : ordered_json(nullptr);
  err["pointer"] = e.pointer.empty() && e.line == 0 ? ordered_json(nullptr) : ordered_json(e.pointer);
  err["limit"] = e.limit.empty() ? ordered_json(nullptr) : ordered_json(e.limit);
  err["message"] = e.message;
  j["error"] = err;
  j["exit_status"] = e.status;
  return j;
}

int tell_error(const ErrorInfo& info, Sink* sink) {
  print_error(info.message);
  std::optional<SourcePos> pos;
  if (info.line > 0) pos = SourcePos{info.line, info.column};
  // What only a GitHub runner or a JSON report shows is built only there:
  // the message holds what the file wrote (a key of millions of
  // characters, say), and each form of it is a copy.
  if (console() == Console::GitHubRunner)
    github_annotate(github_annotation(error_title(info.kind), info.file, pos, terminal_text(info.message)));
  const std::string line = terminal_text("impsim: error: " + info.message);
  if (sink) {
    sink->summary_line(line);
    if (sink->format == Format::Json) sink->error(error_json(info));
  } else {
    github_step_summary(failures_summary("", {line}));
  }
  return info.status;
}

bool json_requested(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json" || a == "--format=json") return true;
    if (a == "--format" && i + 1 < argc && std::strcmp(argv[i + 1], "json") == 0) return true;
    if (a == "--") break;
  }
  return false;
}

}  // namespace impsim::cli
