#include "scenario_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace impsim::cli {

namespace fs = std::filesystem;

namespace {

bool ends_with_json(const std::string& name) {
  return name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0;
}

// The .json files under `folder` into `found`; why it cannot be walked, or
// empty.
std::string walk(const std::string& folder, size_t max_entries, std::vector<std::string>& found) {
  std::error_code ec;
  fs::recursive_directory_iterator it(folder, fs::directory_options::none, ec);
  if (ec) return fmt::format("cannot read the folder: {}", ec.message());
  size_t entries = 0;
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (++entries > max_entries)
      return fmt::format("a folder of more than {} entries; name its scenario files, or a smaller folder",
                         max_entries);
    const fs::directory_entry& entry = *it;
    const std::string name = entry.path().filename().string();
    if (!name.empty() && name.front() == '.') {
      it.disable_recursion_pending();  // a folder's: nothing under it either
      continue;
    }
    std::error_code kind;
    if (ends_with_json(name) && entry.is_regular_file(kind)) found.push_back(entry.path().string());
  }
  if (ec) return fmt::format("cannot read the folder: {}", ec.message());
  return {};
}

}  // namespace

ScenarioFiles expand_folders(const std::vector<std::string>& args, size_t max_entries) {
  ScenarioFiles out;
  for (const std::string& arg : args) {
    std::error_code ec;
    if (arg == "-" || !fs::is_directory(arg, ec)) {
      out.files.push_back(arg);
      continue;
    }
    std::vector<std::string> found;
    std::string why = walk(arg, max_entries, found);
    if (why.empty() && found.empty()) why = "a folder with no .json file under it";
    if (!why.empty()) {
      out.files.push_back(arg);
      out.refused[arg] = why;
      continue;
    }
    std::sort(found.begin(), found.end());
    out.files.insert(out.files.end(), found.begin(), found.end());
  }
  return out;
}

}  // namespace impsim::cli
