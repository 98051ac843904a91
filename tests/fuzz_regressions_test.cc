// Every input that once crashed the fuzzer (tests/fuzz/regressions/) goes
// through the same harness as fuzz/fuzz_scenario.cc, with the same low
// limits, in the normal build: no clang needed. The seed inputs (shipped
// scenarios, tests/bad/) go through it too.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
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

TEST_CASE("every fuzz regression runs through reader and engine, to the verdict it has since its fix") {
  using impsim::fuzz::Verdict;
  // Each file of tests/fuzz/regressions/ (its README says what each broke):
  // a new one needs its line here.
  const std::map<std::string, Verdict> fixed = {
      {"number-overflow-float-exponent", Verdict::Invalid},  // "invalid JSON: number overflow ..."
      {"number-overflow-before-garbage", Verdict::Invalid},
  };
  const std::string dir = std::string(IMPSIM_SOURCE_DIR) + "/tests/fuzz/regressions";
  size_t seen = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name == "README.md") continue;
    CAPTURE(name);
    auto want = fixed.find(name);
    REQUIRE_MESSAGE(want != fixed.end(), "a regression without its verdict in this test");
    const std::string data = read(e.path());
    const Verdict got = impsim::fuzz::run_input(reinterpret_cast<const uint8_t*>(data.data()), data.size());
    CHECK(std::string(impsim::fuzz::verdict_name(got)) == impsim::fuzz::verdict_name(want->second));
    ++seen;
  }
  CHECK(seen == fixed.size());
}

TEST_CASE("the fuzz seeds run through the harness, the shipped scenarios past the reader") {
  using impsim::fuzz::Verdict;
  // The harness's limits are a fuzzer's, far below a real run's: a shipped
  // scenario may stop at one (counted as refused, as the CLI's exit 3 is),
  // but most small ones run to the end, and every one goes through.
  size_t ran = 0, seen = 0;
  for (auto& e : std::filesystem::recursive_directory_iterator(std::string(IMPSIM_SOURCE_DIR) + "/scenarios")) {
    if (!e.is_regular_file() || e.path().extension() != ".json") continue;
    const std::string data = read(e.path());
    const Verdict v = impsim::fuzz::run_input(reinterpret_cast<const uint8_t*>(data.data()), data.size());
    ran += v == Verdict::Ran;
    ++seen;
  }
  MESSAGE(ran << " of " << seen << " shipped scenarios ran within the fuzz limits");
  CHECK(seen >= 40);
  CHECK(ran >= 15);
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
