// The engine's stack costs (include/impsim/engine/stack_budget.h).
#include "impsim/engine/stack_budget.h"

#include <algorithm>

#include "impsim/base/engine_stack.h"

namespace impsim {

// Measured (tests/stack_budget_test.cc, release build, g++ 12): a body
// level 1.0-1.4 KiB, a lookup level 0.6-1.6 KiB (a hook importing what it
// claims, on a thread's stack, is the largest), a guard level 65 bytes;
// a run's frames before any nesting well under 300 KiB. The figures
// leave room for a compiler that inlines differently: 2.5x and more.
StackCosts stack_costs() {
#if defined(__SANITIZE_ADDRESS__)
  return {size_t{4} << 20, 16 << 10, 16 << 10, 1 << 10};
#else
  return {size_t{1} << 20, 4 << 10, 4 << 10, 256};
#endif
}

size_t stack_budget(const EngineLimits& limits) {
  const StackCosts c = stack_costs();
  const auto lookups = static_cast<size_t>(std::max<int64_t>(limits.max_lookup_depth, kPythonFrames));
  const size_t bytes = c.base + c.body_level * static_cast<size_t>(limits.max_body_depth) + c.lookup_level * lookups +
         c.guard_level * static_cast<size_t>(limits.max_guard_depth);
  return checked_stack_build() ? std::min(bytes, kCheckedEngineStackCeiling) : bytes;
}

}  // namespace impsim
