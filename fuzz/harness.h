// One fuzz input through the reader and the engine, with every limit set
// low so that no input can run long: the libFuzzer target
// (fuzz/fuzz_scenario.cc) and the regression test over tests/fuzz/regressions/
// (tests/fuzz_regressions_test.cc) both call this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace impsim::fuzz {

// What became of one input (for the regression test's messages).
enum class Verdict {
  Invalid,       // the reader or the model refused it (exit 2 or 3 in the CLI)
  StepBudget,    // it runs more scenario steps than the fuzz budget allows
  Ran,           // run_scenario ran it and both reports were printed
};

Verdict run_input(const uint8_t* data, size_t size);

const char* verdict_name(Verdict v);

}  // namespace impsim::fuzz
