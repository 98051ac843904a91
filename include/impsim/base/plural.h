// "1 walk", "146 walks": the noun after a printed count agrees with it, in
// every message and report ("1 copies of P" read as a bug).
#pragma once

namespace impsim {

// `one` when `n` is 1, else `many`; `n` is any count (size_t, uint64_t,
// Count).
template <class N>
const char* plural(const N& n, const char* one, const char* many) {
  return n == 1 ? one : many;
}

}  // namespace impsim
