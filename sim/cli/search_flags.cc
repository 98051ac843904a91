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
}

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
  for (const char* flag : {"--search", "--preemption-bound", "--seed", "--pct-depth", "--max-schedules"})
    if (cmd->get_option(flag)->count() > 0) out.emplace_back(flag);
  return out;
}

}  // namespace impsim::cli
