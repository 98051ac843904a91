#include "subcommand_scan.h"

namespace impsim::cli {

CommandLineScan scan_command_line(int argc, const char* const* argv, std::span<const std::string_view> names) {
  if (argc < 2 || argv[1] == nullptr) return {};
  const std::string_view first = argv[1];
  // Only alone: what CLI11 makes of the words after it may depend on the
  // subcommands there are.
  if (first == "--version" && argc == 2) return {CommandLineScan::Needs::TopLevel, 0};
  for (size_t i = 0; i < names.size(); ++i)
    if (first == names[i]) return {CommandLineScan::Needs::OneSubcommand, i};
  return {};
}

}  // namespace impsim::cli
