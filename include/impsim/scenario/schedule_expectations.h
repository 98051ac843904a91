// What a threaded scenario says a search of its schedules may find
// (`expect_schedules`): per design, whether a hang, a _DeadlockError or an
// uncaught exception is reachable or never, and bounds on the number of
// outcome classes. `impsim schedules` and `compare` fail a CI job on a
// finding the scenario does not accept (report/schedule_gate.h); a
// scenario that documents a known deadlock says so here, and its fixed
// design says "never".
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "impsim/scenario/expectations.h"
#include "impsim/scenario/variant.h"

namespace impsim {

// What a schedule search can find that a CI job may want to fail on.
enum class Finding : uint8_t {
  Hang,      // every thread left waits, none can go on (no exception)
  Deadlock,  // a thread raised _DeadlockError (CPython's own deadlock check)
  Uncaught,  // a thread raised any other exception
};
inline constexpr std::array kFindings = {Finding::Hang, Finding::Deadlock, Finding::Uncaught};

// "hang", "deadlock", "uncaught": the names --fail-on and expect_schedules use.
const char* finding_name(Finding f);
std::optional<Finding> parse_finding(std::string_view name);
// "a hang", "a _DeadlockError", "an uncaught exception": for sentences.
const char* finding_phrase(Finding f);

enum class ReachExpected : uint8_t { Reachable, Never };
// "reachable", "never": as expect_schedules writes them.
const char* reach_name(ReachExpected r);
std::optional<ReachExpected> parse_reach(std::string_view name);

struct ScheduleExpectation {
  Variant variant;
  std::string pointer;  // /expect_schedules/VARIANT
  // By Finding: what the scenario says of it, and where it says it.
  std::array<std::optional<ReachExpected>, kFindings.size()> findings;
  std::array<std::string, kFindings.size()> pointers;
  std::optional<Budget> classes;  // the number of outcome classes: {"<=": 3}, or an exact count as {"==": 3}
  std::string classes_pointer;
};

}  // namespace impsim
