// libFuzzer entry point: a scenario file through the reader and the engine
// (fuzz/harness.cc). Built only with -DIMPSIM_FUZZ=ON and clang; see
// docs/fuzzing.md for how to run it.
#include <cstddef>
#include <cstdint>

#include "harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  impsim::fuzz::run_input(data, size);
  return 0;
}
