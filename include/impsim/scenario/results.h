// A labelled step's results (`found`, `none`, `ok`, an exception's name),
// every time it ran, in order, run-length encoded: a result repeated n times
// in a row is stored once with its count, so a step repeated a million
// times costs one entry when it keeps giving the same answer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace impsim {

struct ResultRun {
  std::string result;
  uint64_t times = 1;
  bool operator==(const ResultRun&) const = default;
};

// Always merged (no two neighbours hold the same result), so two lists of
// the same results in the same order compare equal.
using Results = std::vector<ResultRun>;

inline void append_result(Results& r, std::string result) {
  if (!r.empty() && r.back().result == result) ++r.back().times;
  else r.push_back({std::move(result), 1});
}

// "[none, ok]", "[none x1000000, ok]".
inline std::string results_text(const Results& r) {
  std::string s;
  for (const ResultRun& x : r)
    s += (s.empty() ? "" : ", ") + x.result + (x.times > 1 ? " x" + std::to_string(x.times) : std::string());
  return "[" + s + "]";
}

}  // namespace impsim
