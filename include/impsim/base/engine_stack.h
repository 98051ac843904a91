// The stack every engine run executes on: one per process, sized for the
// deepest nesting the depth limits allow (docs/limits.md, "The engine's
// stack"). Made on first use and reused, so a run pays neither for a fresh
// 1 GiB mapping nor for a thread each time.
#pragma once

#include <functional>

namespace impsim {

// Runs `job` on the engine's stack and returns when it is done; an exception
// it throws is rethrown here. Jobs from several threads take turns; a job
// that runs a job runs it in place. With no engine stack to be had, runs
// `job` on the caller's stack.
void run_on_engine_stack(const std::function<void()>& job);

}  // namespace impsim
