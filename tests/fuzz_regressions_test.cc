// Every input that once crashed the fuzzer (tests/fuzz/regressions/) goes
// through the same harness as fuzz/fuzz_scenario.cc, with the same low
// limits, in the normal build: no clang needed. The seed inputs (shipped
// scenarios, tests/bad/) go through it too.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness.h"
#include "shards_harness.h"

namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

using Harness = impsim::fuzz::Verdict (*)(const uint8_t*, size_t);

int replay(const std::string& dir, Harness harness = &impsim::fuzz::run_input) {
  int n = 0;
  for (auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().filename() == "README.md") continue;
    std::string data = read(e.path());
    CAPTURE(e.path().string());
    auto v = harness(reinterpret_cast<const uint8_t*>(data.data()), data.size());
    MESSAGE(e.path().filename().string() << ": " << std::string(impsim::fuzz::verdict_name(v)));
    ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("every fuzz regression runs through reader and engine without crashing") {
  CHECK(replay(std::string(IMPSIM_SOURCE_DIR) + "/tests/fuzz/regressions") >= 2);
}

TEST_CASE("the fuzz seeds run through the harness") {
  CHECK(replay(std::string(IMPSIM_SOURCE_DIR) + "/scenarios") >= 6);
  CHECK(replay(std::string(IMPSIM_SOURCE_DIR) + "/tests/bad") >= 60);
}

TEST_CASE("the shard documents and --schedule strings of the fuzz seeds run through their harnesses") {
  using impsim::fuzz::Verdict;
  CHECK(replay(std::string(IMPSIM_SOURCE_DIR) + "/tests/fuzz/shards", &impsim::fuzz::run_shards_input) >= 5);
  CHECK(replay(std::string(IMPSIM_SOURCE_DIR) + "/tests/fuzz/schedules", &impsim::fuzz::run_schedule_input) >= 5);
  // What each seed is: a merge that adds up, or a refusal.
  auto verdict = [](const std::string& file, Harness harness) {
    const std::string data = read(std::string(IMPSIM_SOURCE_DIR) + "/tests/fuzz/" + file);
    return harness(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  };
  const Harness shards = &impsim::fuzz::run_shards_input, schedule = &impsim::fuzz::run_schedule_input;
  CHECK(verdict("shards/cross_import_both.jsonl", shards) == Verdict::Ran);
  CHECK(verdict("shards/hook_lock_points.json", shards) == Verdict::Ran);
  CHECK(verdict("shards/cross_import_1of2.json", shards) == Verdict::Invalid);  // shard 2/2 missing
  CHECK(verdict("shards/two_waiters_pct.json", shards) == Verdict::Invalid);
  CHECK(verdict("shards/empty_list.json", shards) == Verdict::Invalid);
  CHECK(verdict("schedules/cross_deadlock", schedule) == Verdict::Ran);
  CHECK(verdict("schedules/hook_lock_hang", schedule) == Verdict::Ran);
  for (const char* refused : {"not_runnable", "too_few", "too_many", "empty_choice", "huge"})
    CHECK(verdict(std::string("schedules/") + refused, schedule) == Verdict::Invalid);
}
