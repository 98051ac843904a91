// Fibers (base/fiber.h), each way of switching this machine has: control
// goes back and forth in order, each fiber keeps its own stack, registers
// and floating-point rounding, and exceptions stay on the stack they were
// thrown on.
#include <doctest/doctest.h>

#include <cfenv>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "impsim/base/fiber.h"
#include "stack_probe.h"

using namespace impsim;
using impsim::test::descend;
using impsim::test::here;

namespace {

std::vector<Fiber::Switch> switches() {
  std::vector<Fiber::Switch> all{Fiber::Switch::Ucontext};
  if (Fiber::fastest() != Fiber::Switch::Ucontext) all.push_back(Fiber::fastest());
  return all;
}

const char* name(Fiber::Switch how) { return how == Fiber::Switch::Registers ? "registers" : "ucontext"; }

// A fiber that appends to a log each time it runs, and the values of
// locals that must survive its switches.
struct Counter {
  Fiber fiber;
  std::vector<std::string>* log = nullptr;
  std::string tag;
  uintptr_t stack = 0;

  [[noreturn]] static void run(void* arg) {
    auto* self = static_cast<Counter*>(arg);
    self->stack = here();
    // Kept in registers or on this stack across every switch.
    uint64_t a = 1, b = 2, c = 3, d = 4, e = 5, f = 6;
    for (uint64_t round = 0;; ++round) {
      self->log->push_back(self->tag + std::to_string(round) + ":" + std::to_string(a + b + c + d + e + f));
      a += 1;
      b += 2;
      c += 3;
      d += 4;
      e += 5;
      f += 6;
      self->fiber.suspend();
    }
  }
};

}  // namespace

TEST_CASE("a fiber and its caller take turns, and the fiber's locals survive each switch") {
  for (Fiber::Switch how : switches()) {
    CAPTURE(name(how));
    std::vector<std::string> log;
    Counter counter;
    counter.log = &log;
    counter.tag = "x";
    REQUIRE(counter.fiber.start(size_t{1} << 20, &Counter::run, &counter, how));
    uint64_t caller_local = 77;
    for (int i = 0; i < 3; ++i) {
      log.push_back("caller" + std::to_string(i));
      counter.fiber.resume();
      caller_local += 1;
    }
    CHECK(caller_local == 80);
    CHECK(log == std::vector<std::string>{"caller0", "x0:21", "caller1", "x1:42", "caller2", "x2:63"});
    // Its own stack: far from the caller's frame.
    const uintptr_t caller = here();
    const uintptr_t distance = counter.stack > caller ? counter.stack - caller : caller - counter.stack;
    CHECK(distance > (uintptr_t{1} << 20));
  }
}

TEST_CASE("two fibers resumed in turn keep their own stacks and state") {
  for (Fiber::Switch how : switches()) {
    CAPTURE(name(how));
    std::vector<std::string> log;
    Counter a, b;
    a.log = b.log = &log;
    a.tag = "a";
    b.tag = "b";
    REQUIRE(a.fiber.start(size_t{1} << 20, &Counter::run, &a, how));
    REQUIRE(b.fiber.start(size_t{1} << 20, &Counter::run, &b, how));
    a.fiber.resume();
    b.fiber.resume();
    b.fiber.resume();
    a.fiber.resume();
    CHECK(log == std::vector<std::string>{"a0:21", "b0:21", "b1:42", "a1:42"});
    CHECK(a.stack != b.stack);
  }
}

namespace {
struct Deep {
  Fiber fiber;
  uint64_t levels = 0, sum = 0;
  [[noreturn]] static void run(void* arg) {
    auto* self = static_cast<Deep*>(arg);
    for (;;) {
      self->sum = descend(self->levels);
      self->fiber.suspend();
    }
  }
};
}  // namespace

TEST_CASE("a fiber's stack goes as deep as it was made for") {
  for (Fiber::Switch how : switches()) {
    CAPTURE(name(how));
    Deep deep;
    deep.levels = 20000;  // 20 MiB of 1 KiB frames, past a usual 8 MiB main stack
    REQUIRE(deep.fiber.start(size_t{32} << 20, &Deep::run, &deep, how));
    deep.fiber.resume();
    CHECK(deep.sum == deep.levels + 1);
    deep.levels = 10;
    deep.fiber.resume();
    CHECK(deep.sum == 11);
  }
}

namespace {
struct Rounding {
  Fiber fiber;
  int seen = 0;
  [[noreturn]] static void run(void* arg) {
    auto* self = static_cast<Rounding*>(arg);
    std::fesetround(FE_TOWARDZERO);
    for (;;) {
      self->fiber.suspend();
      self->seen = std::fegetround();
    }
  }
};

struct Thrower {
  Fiber fiber;
  std::string caught;
  [[noreturn]] static void run(void* arg) {
    auto* self = static_cast<Thrower*>(arg);
    for (int round = 0;; ++round) {
      try {
        throw std::runtime_error("round " + std::to_string(round));
      } catch (const std::runtime_error& e) {
        self->caught = e.what();
      }
      self->fiber.suspend();
    }
  }
};
}  // namespace

TEST_CASE("the floating-point rounding mode is each side's own") {
  for (Fiber::Switch how : switches()) {
    CAPTURE(name(how));
    REQUIRE(std::fegetround() == FE_TONEAREST);
    Rounding r;
    REQUIRE(r.fiber.start(size_t{1} << 20, &Rounding::run, &r, how));
    r.fiber.resume();
    CHECK(std::fegetround() == FE_TONEAREST);
    std::fesetround(FE_UPWARD);
    r.fiber.resume();
    CHECK(r.seen == FE_TOWARDZERO);
    CHECK(std::fegetround() == FE_UPWARD);
    std::fesetround(FE_TONEAREST);
  }
}

TEST_CASE("an exception thrown and caught on a fiber stays there, round after round") {
  for (Fiber::Switch how : switches()) {
    CAPTURE(name(how));
    Thrower t;
    REQUIRE(t.fiber.start(size_t{1} << 20, &Thrower::run, &t, how));
    for (int round = 0; round < 3; ++round) {
      t.fiber.resume();
      CHECK(t.caught == "round " + std::to_string(round));
    }
  }
}

namespace {
[[noreturn]] void never_entered(void*) { std::abort(); }
}  // namespace

TEST_CASE("a start that cannot be honoured is refused, not faked") {
  // A second start of one fiber: its stack is in use.
  for (Fiber::Switch how : switches()) {
    CAPTURE(name(how));
    Fiber f;
    REQUIRE(f.start(size_t{1} << 20, &never_entered, nullptr, how));
    CHECK_FALSE(f.start(size_t{1} << 20, &never_entered, nullptr, how));
  }
  // A switch this build lacks (only on machines without the register switch).
  if (Fiber::fastest() != Fiber::Switch::Registers) {
    Fiber f;
    CHECK_FALSE(f.start(size_t{1} << 20, &never_entered, nullptr, Fiber::Switch::Registers));
  }
}
