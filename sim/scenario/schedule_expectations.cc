#include "impsim/scenario/schedule_expectations.h"

namespace impsim {

const char* finding_name(Finding f) {
  switch (f) {
    case Finding::Hang:
      return "hang";
    case Finding::Deadlock:
      return "deadlock";
    case Finding::Uncaught:
      return "uncaught";
  }
  return "?";
}

std::optional<Finding> parse_finding(std::string_view name) {
  for (Finding f : kFindings)
    if (name == finding_name(f)) return f;
  return std::nullopt;
}

const char* finding_phrase(Finding f) {
  switch (f) {
    case Finding::Hang:
      return "a hang";
    case Finding::Deadlock:
      return "a _DeadlockError";
    case Finding::Uncaught:
      return "an uncaught exception";
  }
  return "?";
}

const char* reach_name(ReachExpected r) { return r == ReachExpected::Reachable ? "reachable" : "never"; }

std::optional<ReachExpected> parse_reach(std::string_view name) {
  for (ReachExpected r : {ReachExpected::Reachable, ReachExpected::Never})
    if (name == reach_name(r)) return r;
  return std::nullopt;
}

}  // namespace impsim
