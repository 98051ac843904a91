// The scenario files a command line names: a folder stands for every .json
// file under it, so that `impsim run scenarios/` is every shipped scenario,
// subfolders included, in the same order on every machine (a shell's
// `scenarios/*.json` skips the subfolders).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace impsim::cli {

struct ScenarioFiles {
  // The arguments in their order, each folder replaced by its files.
  std::vector<std::string> files;
  // A folder kept in `files` because it names no file -> why (no .json file
  // under it, it cannot be read, it holds too many entries): told as that
  // file's error, in its place among the others.
  std::map<std::string, std::string> refused;
};

// Entries a folder's walk visits before it is refused: a scenario folder
// holds dozens; a home directory named by mistake is not walked to its end.
inline constexpr size_t kMaxFolderEntries = 100000;

// Each argument as given ("-" and paths that are not folders untouched),
// but a folder replaced by the regular files under it whose names end in
// ".json", found recursively, in byte order of their paths. Entries whose
// names start with "." (.git, an editor's files) are left out, and links
// to folders are not followed (a link can make a loop).
ScenarioFiles expand_folders(const std::vector<std::string>& args, size_t max_entries = kMaxFolderEntries);

}  // namespace impsim::cli
