// One output switch for every subcommand (--format text|json|markdown, with
// --json as its alias, --quiet), several files per command, errors that
// are one JSON object on standard output under --format json, and every
// failure told where it is looked for: the report, standard error under
// --quiet, and under GitHub Actions an annotation and the step summary.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <ostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "impsim/report/failures.h"
#include "impsim/report/report.h"

namespace impsim::cli {

enum class Format { Text, Json, Markdown };

// What a command prints for one file: text (or Markdown) goes straight to
// standard output; a JSON document is kept, so that several files make one
// object ({"reports": [...]}) and one file its report unchanged.
class Sink {
 public:
  Format format = Format::Text;
  bool quiet = false;
  JsonOptions json_options;
  std::ostream* out = nullptr;  // standard output unless set (trace -o)
  bool one_list = false;        // validate: a line a file, no blank line between files
  bool own_format = false;      // a format of the command's own (trace: chrome, dot, importtime)
  std::string command;          // the subcommand, which the step summary's list names

  void text(const std::string& s);           // ignored under --quiet
  // What one file's command prints is held from hold() until release()
  // writes it; drop_held() (an error stopped the file: out of memory, a
  // limit, a bad input found late) forgets it, JSON documents included. So
  // a report goes out whole or not at all: an allocation that fails after
  // half a report was printed used to leave that half on standard output.
  void hold();
  void release();
  void drop_held();
  void json(const nlohmann::ordered_json& j);
  void json_text(std::string dumped);        // an already written JSON document
  void error(const nlohmann::ordered_json& error_object);

  // A file's failures (failures.h), which its report lists: under --quiet,
  // where no report is printed, one line each on standard error instead;
  // under GitHub Actions also an annotation each (github.h) and a line each
  // in the step summary's list of the command's failures. `scenario` is
  // the scenario's name, which the annotations start with.
  void failures(const std::string& scenario, const std::vector<Failure>& list);
  // A line for that list (an error's, tell_error).
  void summary_line(std::string line);

  // Writes what was kept: the one document, or every file's under
  // "reports"; and the step summary's list of failures.
  void finish(int status);

 private:
  std::vector<std::string> docs_;
  std::vector<std::string> summary_;
  bool holding_ = false;
  std::string held_;
  size_t docs_before_hold_ = 0;
  size_t files_ = 0;
  friend int for_each_file(const std::vector<std::string>&, Sink&, const std::function<int(const std::string&)>&);
};

// --format, --json and --quiet on `cmd`. `extra` adds formats of the
// command's own (trace: chrome, dot, importtime); an empty `help`: no
// --format, the command writes no report (explore).
struct OutputFlags {
  std::string format = "text";
  bool json = false;
  bool quiet = false;
  JsonOptions json_options;
  void add(CLI::App* cmd, const std::string& help, const std::vector<std::string>& extra = {},
           bool big_as_strings = true);
  // text, json or markdown; a format of the command's own is Text here.
  Format base() const;
  std::string name() const { return json ? "json" : format; }
  Sink sink() const;
};

// Runs `body` on every file (errors turned into statuses and, under
// --format json, into JSON objects by guarded()), then writes the JSON.
// The status is the worst file's (the highest).
int for_each_file(const std::vector<std::string>& files, Sink& sink, const std::function<int(const std::string&)>& body);

// What stopped a file short of a report, for the JSON error object.
struct ErrorInfo {
  std::string kind;     // "invalid", "usage", "limit", "output", "memory"
  std::string file;
  std::string message;  // as on standard error, without "impsim: error: "
  std::string pointer;  // JSON pointer into the file, when there is one
  int line = 0, column = 0;  // 0: no position
  std::string limit;    // the limit's flag without dashes, for "limit"
  int status = 0;
};
// {"impsim": 1, "version": ..., "error": {...}, "exit_status": N}
nlohmann::ordered_json error_json(const ErrorInfo& e);

// An error that stopped a file (or the command line) short of its report:
// "impsim: error: MESSAGE" on standard error, under --quiet too; under
// GitHub Actions an annotation and a line in the step summary's list;
// under --format json the error object in `sink`. Without a sink (the
// command line, or an error after the sink finished) the summary's list is
// written at once, and the caller writes any JSON. Returns info.status.
int tell_error(const ErrorInfo& info, Sink* sink);

// Under --format json (or --json) in argv, a command-line error is written
// as error_json too: true when it was.
bool json_requested(int argc, char** argv);

}  // namespace impsim::cli
