// The process's peak resident memory so far, as getrusage reports it: what
// bench/ prints and what the memory tests bound (tests/memory_test.cc).
#pragma once

#include <sys/resource.h>

namespace impsim {

inline long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

}  // namespace impsim
