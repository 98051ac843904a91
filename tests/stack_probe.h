// For the tests of stacks (engine_stack_test.cc, fiber_test.cc): where the
// caller is on its stack, and a recursion of known depth whose frames the
// compiler cannot fold away.
#pragma once

#include <cstdint>

namespace impsim::test {

inline uintptr_t here() {
  volatile char local = 0;
  return reinterpret_cast<uintptr_t>(&local);
}

// `levels` + 1 frames of about 1 KiB each; returns levels + 1.
[[gnu::noinline]] inline uint64_t descend(uint64_t levels) {
  volatile char frame[1024];
  frame[0] = static_cast<char>(levels);
  frame[sizeof frame - 1] = 1;
  if (levels == 0) return static_cast<uint64_t>(frame[0]) + frame[sizeof frame - 1];
  return descend(levels - 1) + frame[sizeof frame - 1];
}

}  // namespace impsim::test
