// The thread every engine run executes on: one per process, with a stack
// sized for the deepest nesting the depth limits allow (docs/limits.md, "The
// engine's stack"). Started on first use and reused, so a run does not pay
// for a thread and a fresh 1 GiB mapping each time.
#pragma once

#include <functional>

namespace impsim {

// Runs `job` on the engine thread and waits for it; an exception it throws
// is rethrown here. Jobs from several threads take turns; a job that runs a
// job runs it in place. With no engine thread to be had, runs `job` on the
// caller's stack.
void run_on_engine_stack(const std::function<void()>& job);

}  // namespace impsim
