// "did you mean 'run'?": the closest of a few known words to a misspelt
// one, for every name a user types (subcommands, flags, flag values,
// scenario keys, step kinds, variants, counters, labels, parameters).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace impsim {

// The candidate nearest to `word` by edit distance (insertions, deletions,
// substitutions, and swaps of two neighbours), if it is near enough to be
// a likely typo: at most 2 edits, and fewer than the word's length. A
// difference of case alone counts as no edit ("Run" is near "run").
std::optional<std::string> did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

// " (did you mean 'run'?)", quoted as the message quotes names (`quote`:
// '\'' for the command line, '"' for a JSON string), or "" when no
// candidate is near.
std::string did_you_mean_note(const std::string& word, const std::vector<std::string>& candidates, char quote = '\'');

// "a, b, c": the candidates an error lists as expected.
std::string name_list(const std::vector<std::string>& names);

}  // namespace impsim
