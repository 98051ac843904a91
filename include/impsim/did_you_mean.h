// "did you mean 'run'?": the closest of a few known words to a misspelt
// one (an unknown subcommand, an unknown scenario key).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace impsim {

// The candidate nearest to `word` by edit distance (insertions, deletions,
// substitutions, and swaps of two neighbours), if it is near enough to be
// a likely typo: at most 2 edits, and fewer than the word's length.
std::optional<std::string> did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace impsim
