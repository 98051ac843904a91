#include "search_flags.h"

namespace impsim::cli {

void SearchFlags::add(CLI::App* cmd, const std::string& applies) {
  cmd->add_option("--search", search,
                  "exhaustive (every schedule within --preemption-bound), random (--seed) or pct (--seed, "
                  "--pct-depth)" +
                      applies)
      ->check(CLI::IsMember({"exhaustive", "random", "pct"}))
      ->capture_default_str();
  add_integer_option(cmd, "--preemption-bound", preemption_bound, 0, kMaxPreemptionBound,
                     "Exhaustive: switches away from a thread that could go on, at most, per schedule" + applies)
      ->capture_default_str();
  add_integer_option(cmd, "--seed", seed, 0, UINT64_MAX,
                     "Random and pct: the seed (the same schedules on every machine)" + applies)
      ->capture_default_str();
  add_integer_option(cmd, "--pct-depth", pct_depth, 1, kMaxPctDepth,
                     "Pct: the depth of the bug aimed at (priority changes + 1)" + applies)
      ->capture_default_str();
  add_integer_option(cmd, "--max-schedules", max_schedules, 1, kMaxSchedules,
                     "Runs of the search, at most (an exhaustive one cut short says so)" + applies)
      ->capture_default_str();
  cmd->add_option("--fail-on", fail_on,
                  "Exit 1 when a search reaches one of these and the scenario does not accept it (expect_schedules): "
                  "a comma-separated list of hang, deadlock (_DeadlockError) and uncaught (any other exception), or "
                  "all, or none" +
                      applies)
      ->check([](const std::string& v) {
        std::string why;
        return parse_fail_on(v, &why) ? std::string() : why;
      })
      ->capture_default_str();
}

FailOn SearchFlags::fail_on_kinds() const { return parse_fail_on(fail_on, nullptr).value_or(FailOn{}); }

SearchOptions SearchFlags::options() const {
  SearchOptions o;
  o.kind = search == "random" ? SearchKind::Random : search == "pct" ? SearchKind::Pct : SearchKind::Exhaustive;
  o.preemption_bound = preemption_bound;
  o.seed = seed;
  o.pct_depth = pct_depth;
  o.max_schedules = max_schedules;
  return o;
}

std::vector<std::string> SearchFlags::given(const CLI::App* cmd) const {
  std::vector<std::string> out;
  for (const char* flag : {"--search", "--preemption-bound", "--seed", "--pct-depth", "--max-schedules", "--fail-on"})
    if (cmd->get_option(flag)->count() > 0) out.emplace_back(flag);
  return out;
}

}  // namespace impsim::cli
