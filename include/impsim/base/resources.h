// What the process has spent so far: peak resident memory (getrusage) and
// CPU time over all its threads. `impsim run --stats` and bench/ print them;
// the memory tests bound the first (tests/memory_test.cc).
#pragma once

#include <sys/resource.h>
#include <time.h>

namespace impsim {

inline long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// The engine may run on a thread of its own (under a sanitizer or valgrind,
// base/engine_stack.h), so a run's CPU time is taken over the whole process:
// that thread plus what handing it the run costs.
inline double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace impsim
