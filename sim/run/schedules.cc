// Schedule searches over a threaded scenario (include/impsim/run/schedules.h).
#include "impsim/run/schedules.h"

#include <fmt/format.h>

#include "impsim/base/errors.h"
#include "impsim/engine/engine.h"

namespace impsim {

std::string threaded_outcome(const Model& model, Variant variant, const RunOptions& options, Scheduler& scheduler) {
  Engine engine(model, variant, options.limits, EngineKind::Step);
  engine.run_threads(scheduler);
  std::string line = engine.outcome_line();
  const Counters c = engine.counters();
  line += fmt::format("; asks {}, lookups {}, toggles {}", c.asks.text(), c.lookups.text(), c.toggles.text());
  if (engine.hooks_used()) line += fmt::format(", searches {}", engine.hook_counters().searches.text());
  return line;
}

std::vector<PointText> schedule_points(const Model& model, Variant variant, const RunOptions& options,
                                       const std::string& schedule) {
  std::vector<SchedulePoint> points;
  std::vector<std::string> names;
  std::vector<PointText> out;
  {
    Scheduler scheduler = Scheduler::replay(schedule);
    Engine engine(model, variant, options.limits, EngineKind::Step);
    engine.record_points(&points);
    engine.run_threads(scheduler);
    names = engine.thread_names();
  }
  auto thread = [&](PyThreadId t) { return t == kNoThread ? std::string() : names[static_cast<size_t>(t)]; };
  for (const SchedulePoint& p : points)
    out.push_back(PointText{thread(p.thread), point_name(p.kind), lock_site_name(p.site),
                            p.module == kNoName ? std::string() : model.names.text(p.module),
                            p.target < 0 ? std::string() : model.threads[static_cast<size_t>(p.target)].name,
                            p.pointer ? *p.pointer : std::string()});
  return out;
}

std::vector<ThreadSearch> search_scenario_schedules(const Scenario& sc, const RunOptions& options,
                                                    const SearchOptions& search) {
  if (sc.threads.empty())
    throw UsageError(sc.file,
                     "the scenario declares no threads: one schedule is all it has (run it with `impsim run`); "
                     "declare \"threads\" and start them with {\"start\": NAME} steps");
  if (options.engine == EngineKind::Fast)
    throw UsageError(sc.file, "--engine fast does not model threads; schedules run on the step engine (the default)");
  const RunPlan plan = plan_runs(sc, options);
  std::vector<ThreadSearch> out;
  for (const Params& params : plan.params) {
    Model model = compile_model(sc, params, options.model_limits);
    apply_axes(model, options);
    for (Variant v : plan.variants) {
      ScheduledProgram program = [&](Scheduler& s) { return threaded_outcome(model, v, options, s); };
      out.push_back(ThreadSearch{v, model.params, search_schedules(program, search)});
    }
  }
  return out;
}

}  // namespace impsim
