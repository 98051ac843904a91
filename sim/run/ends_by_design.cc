// The ends of a threaded scenario and the designs that reach each
// (include/impsim/run/ends_by_design.h).
#include "impsim/run/ends_by_design.h"

#include <map>

namespace impsim {

std::vector<EndsByDesign> find_ends_by_design(const Scenario& sc, const RunOptions& options,
                                              const SearchOptions& search) {
  const std::vector<DesignSearch> found = search_scenario_schedules(sc, options, search);
  const RunPlan plan = plan_runs(sc, options);
  const size_t designs = plan.variants.size();
  std::vector<EndsByDesign> out;
  for (size_t p = 0; p < plan.params.size(); ++p) {
    EndsByDesign point;
    point.searches.assign(found.begin() + static_cast<ptrdiff_t>(p * designs),
                          found.begin() + static_cast<ptrdiff_t>((p + 1) * designs));
    point.params = point.searches.front().params;
    point.axes = point.searches.front().model->axes;
    std::map<OutcomeEnd, std::vector<std::optional<DesignReach>>> ends;
    for (size_t v = 0; v < designs; ++v) {
      const DesignSearch& t = point.searches[v];
      if (t.search.error) continue;  // a search that means nothing reaches nothing
      for (size_t i = 0; i < t.search.outcomes.size(); ++i) {
        const OutcomeClass& c = t.search.outcomes[i];
        auto& by_design = ends[c.outcome.end];
        by_design.resize(designs);
        std::optional<DesignReach>& reach = by_design[v];
        if (!reach) reach = DesignReach{{}, 0, i};
        const OutcomeClass& best = t.search.outcomes[reach->representative];
        if (better_representative(c.preemptions, c.schedule, best)) reach->representative = i;
        reach->outcomes.push_back(i);
        reach->schedules += c.schedules;
      }
    }
    for (auto& [end, by_design] : ends) point.ends.push_back(ThreadedEnd{end, std::move(by_design)});
    out.push_back(std::move(point));
  }
  return out;
}

}  // namespace impsim
