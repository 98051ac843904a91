// The same scenario and flags print the same bytes on every run, as text and
// as JSON: every shipped scenario, run twice by the real binary.
#include <doctest/doctest.h>

#include "test_util.h"

using namespace impsim;

TEST_CASE("every shipped scenario prints identical bytes twice, text and JSON") {
  int seen = 0;
  size_t index = 0;
  for (const std::string& path : test::shipped_scenarios()) {
    if (index++ % test::kSanitizerStride != 0) continue;
    ++seen;
    CAPTURE(path);
    for (const char* flags : {"", " --json"}) {
      CAPTURE(flags);
      test::Command a = test::impsim("run " + path + flags);
      test::Command b = test::impsim("run " + path + flags);
      CHECK(a.status == b.status);
      CHECK(!a.out.empty());
      CHECK(a.out == b.out);
    }
  }
  CHECK(seen >= 6);
}

TEST_CASE("the bad inputs' messages are deterministic too") {
  std::string dir = std::string(IMPSIM_SOURCE_DIR) + "/tests/bad/";
  for (const char* f : {"json_syntax.json", "duplicate_key.json", "unknown_step.json", "body_depth_limit.json"}) {
    CAPTURE(f);
    CHECK(test::impsim(std::string("run ") + dir + f).out == test::impsim(std::string("run ") + dir + f).out);
  }
}
