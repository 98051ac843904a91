#include "impsim/base/did_you_mean.h"

#include <algorithm>
#include <cctype>

namespace impsim {

namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// Optimal string alignment distance (Damerau-Levenshtein without repeated
// edits of one substring), letters compared without case.
size_t distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  auto same = [](char x, char y) { return lower(x) == lower(y); };
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = same(a[i - 1], b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::optional<std::string> did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  // A long word is no typo of a short one: nothing to compute.
  if (word.size() > 64) return std::nullopt;
  std::optional<std::string> best;
  size_t best_d = 3;
  for (const std::string& c : candidates) {
    if (c == word || c.size() > word.size() + 2 || word.size() > c.size() + 2) continue;
    size_t d = distance(word, c);
    if (d < best_d && d < std::max<size_t>(word.size(), 1)) {
      best = c;
      best_d = d;
    }
  }
  return best;
}

std::string did_you_mean_note(const std::string& word, const std::vector<std::string>& candidates, char quote) {
  auto near = did_you_mean(word, candidates);
  if (!near) return "";
  return std::string(" (did you mean ") + quote + *near + quote + "?)";
}

std::string name_list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace impsim
