// libFuzzer entry point: a string given to --schedule
// (fuzz/shards_harness.h). Built only with -DIMPSIM_FUZZ=ON and clang.
#include <cstddef>
#include <cstdint>

#include "shards_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  impsim::fuzz::run_schedule_input(data, size);
  return 0;
}
