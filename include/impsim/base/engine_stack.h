// The stack every engine run executes on: one per process, as large as the
// deepest run asked of it so far (engine/stack_budget.h sizes a run's need
// from its depth limits; docs/limits.md, "The engine's stack"). Made on
// first use and reused, so a run pays neither for a fresh mapping nor for a
// thread each time.
#pragma once

#include <cstddef>
#include <functional>

namespace impsim {

// Runs `job` on the engine's stack, grown first to `bytes` if it is
// smaller, and returns when the job is done; an exception it throws is
// rethrown here. Jobs from several threads take turns; a job that runs a
// job runs it in place. Throws ResourceError when no stack of that size
// can be had (a memory cap): a run on a stack too small would overflow it.
// The sanitizer build and valgrind keep a stack of at most
// kCheckedEngineStackCeiling (below).
void run_on_engine_stack(size_t bytes, const std::function<void()>& job);

// The largest stack a sanitized or valgrind run gets: AddressSanitizer
// mishandles exceptions unwinding on stacks past 64 MiB
// (google/sanitizers#189), and valgrind shadows every byte of a thread's
// stack. Those builds check the engine, at the default limits; they do not
// promise every depth flag's maximum.
inline constexpr size_t kCheckedEngineStackCeiling = size_t{63} << 20;

// True in a build or a process (valgrind) whose stacks stop at
// kCheckedEngineStackCeiling.
bool checked_stack_build();

// How deep the engine's stack has been touched since the last
// engine_stack_forget_touched() (or since it was made), in bytes from its
// top: for measuring the engine's frames (tests/stack_budget_test.cc,
// impsim_bench --stack). 0 before the first job.
size_t engine_stack_touched();
// Gives the pages of the engine's stack back, but its top 64 KiB (where
// its own loop waits), so that the next engine_stack_touched() measures
// the next jobs alone.
void engine_stack_forget_touched();

}  // namespace impsim
