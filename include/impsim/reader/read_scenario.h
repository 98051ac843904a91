// Reads a scenario file (format v1) into a Scenario, refusing anything the
// format does not allow with a message that names file:line:column, the JSON
// pointer and what was expected. Nothing runs before a scenario is valid.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "impsim/base/errors.h"
#include "impsim/base/json_scan.h"
#include "impsim/scenario/scenario.h"

namespace impsim {

// Hard bounds on what a scenario may ask for, so that no input can make the
// engine allocate without limit or overflow the C++ stack.
// Each has a command-line flag of the same name (--max-file-bytes, ...).
struct InputLimits {
  size_t max_file_bytes = 16u << 20;
  int max_json_depth = 256;
  size_t max_tree_entries = 100000;
  size_t max_name_length = 512;
  size_t max_sweep_values = 10'000;  // the scenario's sweep.values, and `impsim sweep --values`
};

// The largest value each InputLimits flag accepts: past these a limit would
// no longer bound memory (docs/limits.md gives the bound per limit).
inline constexpr size_t kMaxFileBytesCeiling = size_t{1} << 30;
inline constexpr size_t kMaxSweepValuesCeiling = 1'000'000;

Scenario parse_scenario(const std::string& text, const std::string& file,
                            const InputLimits& limits = {});
// The two ways parse_scenario reads, apart, for the tests that check they
// agree. parse_scenario_dom reads nlohmann's DOM of the whole text and
// makes every message. parse_scenario_events reads straight from the text
// and gives up (nullopt) on anything it does not take on itself, a
// problem above all: it never refuses a file, and never takes one that
// parse_scenario_dom refuses.
Scenario parse_scenario_dom(const std::string& text, const std::string& file, const InputLimits& limits = {});
std::optional<Scenario> parse_scenario_events(const std::string& text, const std::string& file,
                                              const InputLimits& limits = {});
// `path` "-" is standard input. A regular file larger than the limit is
// refused before it is read; a pipe, standard input or a device is read as
// a stream and refused once it passes the limit. A directory is an
// InputError (exit 2), as is a file that cannot be opened or read (with
// the system's reason). The scenario keeps the text (Scenario::source):
// nothing reads the file a second time.
Scenario parse_scenario_file(const std::string& path, const InputLimits& limits = {});
// The bytes of a scenario file, as parse_scenario_file reads them.
std::string read_scenario_file(const std::string& path, const InputLimits& limits = {});


}  // namespace impsim
