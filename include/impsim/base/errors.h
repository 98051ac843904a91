// What can stop impsim short of a report, and the exit status each earns
// (docs/scenario-format.md, "Exit status"). Every command ends in one of
// these; every error is a std::exception whose what() is the message.
#pragma once

#include <stdexcept>
#include <string>

#include "impsim/base/json_scan.h"

namespace impsim {

// Unscoped so that a status is the int main returns.
enum ExitStatus : int {
  kExitOk = 0,
  kExitFailed = 1,   // an expectation not met, or an exception the scenario does not allow
  kExitInvalid = 2,  // InputError
  kExitLimit = 3,    // InputLimitError, ModelLimitError, ResourceError, a run stopped by a limit
  kExitOutput = 4,   // OutputError: the report could not be written (disk full, closed pipe, -o)
};

// A scenario or command line the user must fix (exit status 2). At
// kNoPosition (a file that could not be read) the message names the file
// alone, without a line and column.
inline constexpr SourcePos kNoPosition{0, 0};
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, SourcePos pos, std::string pointer, std::string message);
  const std::string file;
  const SourcePos pos;
  const std::string pointer;
  const std::string message;

 protected:
  struct NoPosition {};
  InputError(NoPosition, std::string file, std::string message);
};

// A flag the user must fix (--set, --variant, --values): no place in a
// file to point at, so none is made up. `source` is "<command line>" or
// the scenario the flag does not fit.
class UsageError : public InputError {
 public:
  UsageError(std::string source, std::string text) : InputError(NoPosition{}, std::move(source), std::move(text)) {}
};

// A scenario past one of the InputLimits (exit status 3): `limit` is the
// flag's name without dashes ("max-file-bytes", "max-json-depth",
// "max-tree-entries", "max-name-length", "max-sweep-values").
class InputLimitError : public InputError {
 public:
  InputLimitError(std::string limit, std::string file, SourcePos pos, std::string pointer, std::string message);
  const std::string limit;
};

// A parameter set that expands past one of the ModelLimits (model.h), exit
// status 3. `limit` is the limit's name ("repeat", "scope-names"), `pointer`
// the step that reached it; what() is "at POINTER: limit LIMIT reached:
// DETAIL", to be prefixed with the file's name.
class ModelLimitError : public std::runtime_error {
 public:
  ModelLimitError(std::string limit, std::string pointer, std::string detail);
  const std::string limit;
  const std::string pointer;
  const std::string detail;
};

// A resource a run needs could not be had: memory, a stack for the engine or
// for a simulated thread, a file descriptor (exit status 3). Whatever had
// run is discarded: a count, an outcome or a search total from a run that
// did not finish is never printed. `what()` says what ran out and where,
// and how to get it.
class ResourceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The report could not be written: exit status 4, never a silent 0.
struct OutputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace impsim
