// Every input that once crashed the fuzzer (tests/fuzz/regressions/) goes
// through the same harness as fuzz/fuzz_scenario.cc, with the same low
// limits, in the normal build: no clang needed. The seed inputs (shipped
// scenarios, tests/bad/) go through it too.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness.h"

namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int replay(const std::string& dir) {
  int n = 0;
  for (auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().filename() == "README.md") continue;
    std::string data = read(e.path());
    CAPTURE(e.path().string());
    auto v = impsim::fuzz::run_input(reinterpret_cast<const uint8_t*>(data.data()), data.size());
    MESSAGE(e.path().filename().string() << ": " << impsim::fuzz::verdict_name(v));
    ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("every fuzz regression runs through loader and engine without crashing") {
  CHECK(replay(std::string(IMPSIM_SOURCE_DIR) + "/tests/fuzz/regressions") >= 2);
}

TEST_CASE("the fuzz seeds run through the harness") {
  CHECK(replay(std::string(IMPSIM_SOURCE_DIR) + "/scenarios") >= 6);
  CHECK(replay(std::string(IMPSIM_SOURCE_DIR) + "/tests/bad") >= 60);
}
