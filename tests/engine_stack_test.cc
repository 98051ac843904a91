// The engine's stack (base/engine_stack.h): a job runs to the end on it,
// deeper than the caller's stack could go, and its exception comes back.
#include <doctest/doctest.h>
#include <sys/resource.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>

#include "impsim/base/engine_stack.h"
#include "stack_probe.h"

using namespace impsim;
using impsim::test::descend;
using impsim::test::here;

namespace {
// Enough for the 40,000 frames of 1 KiB below, in every build.
constexpr size_t kStack = size_t{60} << 20;
}  // namespace

TEST_CASE("a job runs on the engine's stack and returns what it computed") {
  const uintptr_t caller = here();
  uintptr_t job_at = 0;
  int result = 0;
  run_on_engine_stack(kStack, [&] {
    job_at = here();
    result = 42;
  });
  CHECK(result == 42);
  // Not the caller's stack: far from the caller's frame.
  const uintptr_t distance = job_at > caller ? job_at - caller : caller - job_at;
  CHECK(distance > (uintptr_t{1} << 20));
}

TEST_CASE("the engine's stack goes deeper than the caller's") {
  rlimit limit{};
  REQUIRE(getrlimit(RLIMIT_STACK, &limit) == 0);
  // 40,000 frames of 1 KiB: past the 8 MiB a main thread is usually given,
  // within the 63 MiB the sanitized build's stack keeps.
  const uint64_t levels = 40000;
  if (limit.rlim_cur != RLIM_INFINITY) CHECK(levels * 1024 > limit.rlim_cur);
  uint64_t sum = 0;
  run_on_engine_stack(kStack, [&] { sum = descend(levels); });
  CHECK(sum == levels + 1);
}

TEST_CASE("an exception thrown on the engine's stack is rethrown to the caller, and the stack serves again") {
  for (int round = 0; round < 3; ++round) {
    try {
      run_on_engine_stack(kStack, [&] { throw std::runtime_error("round " + std::to_string(round)); });
      FAIL("no exception");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()) == "round " + std::to_string(round));
    }
    int ran = 0;
    run_on_engine_stack(kStack, [&] { ran = 1; });
    CHECK(ran == 1);
  }
}

TEST_CASE("a job that runs a job runs it in place") {
  uintptr_t outer = 0, inner = 0;
  run_on_engine_stack(kStack, [&] {
    outer = here();
    run_on_engine_stack(kStack, [&] { inner = here(); });
  });
  const uintptr_t distance = outer > inner ? outer - inner : inner - outer;
  CHECK(distance < (uintptr_t{64} << 10));
  // An exception from the inner job passes through the outer one.
  CHECK_THROWS_AS(run_on_engine_stack(kStack, [] { run_on_engine_stack(kStack, [] { throw std::logic_error("inner"); }); }),
                  std::logic_error);
}

TEST_CASE("a job from another thread runs on the engine's stack too, not in place") {
  uintptr_t thread_at = 0, job_at = 0;
  std::thread other([&] {
    thread_at = here();
    run_on_engine_stack(kStack, [&] { job_at = here(); });
  });
  other.join();
  const uintptr_t distance = job_at > thread_at ? job_at - thread_at : thread_at - job_at;
  CHECK(distance > (uintptr_t{1} << 20));
}
