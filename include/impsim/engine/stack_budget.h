// How much C++ stack a run can use: what the engine's stack and each
// simulated thread's stack are sized to, from the run's depth limits.
//
// The engine recurses once per nested module body or call
// (--max-body-depth), per nested lookup (--max-lookup-depth; where CPython's
// RecursionError is modelled, the interpreter's own recursion limit stops
// it first, at most kPythonFrames Python frames deep) and per open guard
// (--max-guard-depth). Each level costs a number of bytes of C++ frames
// that depends on the build (the sanitizer's frames are several times a
// release build's); the figures below are measured by
// tests/stack_budget_test.cc, which runs each kind of recursion at two
// depths in every build the suite makes and fails when a level costs more
// than its figure here. `impsim_bench --stack` prints the measured costs.
//
// A stack sized this way is reserved, not committed: only the pages a run
// reaches are touched. What the size buys is a reservation that fits under
// a memory cap (ulimit -v, a container's limit) with many threads, where a
// fixed 1 GiB per thread did not, and turned a failed reservation into a
// thread that silently never ran.
#pragma once

#include <cstddef>
#include <cstdint>

#include "impsim/engine/bookkeeping.h"

namespace impsim {

struct StackCosts {
  size_t base;          // the run's frames before any nesting, and a margin
  size_t body_level;    // one nested module body or call
  size_t lookup_level;  // one nested lookup
  size_t guard_level;   // one open guard (nest levels included)
};

// This build's measured costs, each rounded up with a margin.
StackCosts stack_costs();

// Python frames CPython 3.9-3.13 has room for at the default recursion
// limit: a lookup that CPython's RecursionError stops is at most this deep.
inline constexpr int64_t kPythonFrames = 1000;

// The stack a run under `limits` can reach, at most (in the sanitizer
// build and under valgrind, at most kCheckedEngineStackCeiling: those
// check the default limits, engine_stack.h).
size_t stack_budget(const EngineLimits& limits);

}  // namespace impsim
