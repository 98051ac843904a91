// Two more fuzz inputs (docs/fuzzing.md): a file given to
// `schedules --merge` (shard documents, from other machines), and a string
// given to `--schedule`. Each must be refused with an InputError or
// accepted and then be what it claims; anything else aborts. The libFuzzer
// targets (fuzz/fuzz_shards.cc, fuzz/fuzz_schedule.cc) and the regression
// test over tests/fuzz/shards/ and tests/fuzz/schedules/
// (tests/fuzz_regressions_test.cc) call these.
#pragma once

#include <cstddef>
#include <cstdint>

#include "harness.h"

namespace impsim::fuzz {

// The input as a shard file, merged: a merge it accepts must add up (each
// search's outcomes to its total) and its reports must be escaped.
Verdict run_shards_input(const uint8_t* data, size_t size);

// The input as a --schedule for two threaded scenarios (two threads that
// cross imports; three that take a hook's lock): a schedule the check
// accepts must replay with exactly its choices, and one it refuses must
// not.
Verdict run_schedule_input(const uint8_t* data, size_t size);

}  // namespace impsim::fuzz
