// Schedule searches over a threaded scenario (include/impsim/run/schedules.h).
#include "impsim/run/schedules.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "impsim/base/errors.h"
#include "impsim/base/plural.h"
#include "impsim/engine/engine.h"

namespace impsim {

ThreadedOutcome threaded_outcome(const Model& model, Variant variant, const RunOptions& options,
                                 Scheduler& scheduler) {
  Engine engine(model, variant, options.limits, EngineKind::Step);
  engine.run_threads(scheduler);
  ThreadedOutcome out = engine.threaded_outcome();
  // What the designs of the finder change: Paddle's finder's and a hook
  // loader's marks on the modules, and the copies of P in sys.meta_path.
  Outcome o = outcome_of(engine);
  out.end.marks = std::move(o.marks);
  out.end.proxy_copies = o.proxy_copies;
  return out;
}

const char* search_kind_name(SearchKind kind) {
  switch (kind) {
    case SearchKind::Exhaustive:
      return "exhaustive";
    case SearchKind::Random:
      return "random";
    case SearchKind::Pct:
      return "pct";
  }
  return "exhaustive";
}

std::string search_how(const SearchOptions& o) {
  return o.kind == SearchKind::Exhaustive
             ? fmt::format("exhaustive within {} {}", o.preemption_bound,
                           plural(static_cast<uint64_t>(o.preemption_bound), "preemption", "preemptions"))
         : o.kind == SearchKind::Random ? fmt::format("random, seed {}", o.seed)
                                        : fmt::format("PCT depth {}, seed {}", o.pct_depth, o.seed);
}

std::string search_extent(const ScheduleSearch& s) {
  const SearchOptions& o = s.options;
  std::string of = fmt::format("{} {}", s.schedules, plural(s.schedules, "schedule", "schedules"));
  if (o.kind == SearchKind::Exhaustive)
    of +=
        s.complete ? ", every one within the bound" : fmt::format(", cut short at --max-schedules {}", o.max_schedules);
  return of;
}

std::string search_coverage(const ScheduleSearch& s) { return search_how(s.options) + ": " + search_extent(s); }

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

namespace {

// A schedule as a message quotes it: a long one by its start and length.
std::string schedule_shown(const std::string& schedule) {
  return schedule.size() <= 48 ? schedule : fmt::format("{}... ({} characters)", schedule.substr(0, 40), schedule.size());
}

}  // namespace

std::optional<std::string> schedule_problem(const Scenario& sc, const RunOptions& options) {
  std::string why;
  const std::optional<std::vector<PyThreadId>> choices = Scheduler::parse_schedule(options.schedule, &why);
  if (!choices) return why;
  const RunPlan plan = plan_runs(sc, options, SweepMode::Ignore);
  Model model = compile_model(sc, plan.params[0], options.model_limits);
  apply_axes(model, options);
  for (Variant v : plan.variants) {
    // Where the run first parts from the schedule: the choice's number,
    // the threads that could run there, and the one asked for (kNoThread:
    // the schedule had no more choices).
    struct Parting {
      size_t choice = 0;
      std::vector<PyThreadId> runnable;
      PyThreadId asked = kNoThread;
    };
    std::optional<Parting> parted;
    size_t at = 0;
    Scheduler s([&](const std::vector<PyThreadId>& runnable, PyThreadId reached) -> size_t {
      if (!parted) {
        const PyThreadId asked = at < choices->size() ? (*choices)[at] : kNoThread;
        const auto it = std::find(runnable.begin(), runnable.end(), asked);
        if (it != runnable.end()) {
          ++at;
          return static_cast<size_t>(it - runnable.begin());
        }
        parted = Parting{at + 1, runnable, asked};
      }
      return Scheduler::until_blocked_pick(runnable, reached);
    });
    std::vector<std::string> names;
    {
      Engine engine(model, v, options.limits, EngineKind::Step);
      engine.run_threads(s);
      names = engine.thread_names();
    }
    auto thread = [&](PyThreadId t) {
      return t >= 0 && static_cast<size_t>(t) < names.size() ? fmt::format("{} ({})", names[static_cast<size_t>(t)], t)
                                                              : fmt::format("thread {}", t);
    };
    const std::string in = plan.variants.size() > 1 ? fmt::format(" (the {} run)", variant_name(v)) : "";
    const std::string schedule = schedule_shown(options.schedule);
    if (parted) {
      std::vector<std::string> could;
      for (PyThreadId t : parted->runnable) could.push_back(thread(t));
      const std::string there = fmt::format("{} can run", fmt::join(could, " or "));
      if (parted->asked == kNoThread)
        return fmt::format(
            "--schedule {}: the schedule has {} {}, and the run{} makes more: at choice {}, {}; give every choice, as "
            "`impsim schedules` prints them",
            schedule, choices->size(), plural(choices->size(), "choice", "choices"), in, parted->choice, there);
      return fmt::format("--schedule {}: choice {} is {}, which cannot run there{}: {}", schedule, parted->choice,
                         thread(parted->asked), in, there);
    }
    if (at < choices->size())
      return fmt::format(
          "--schedule {}: the schedule has {} choices, but the run{} makes only {}: choice {} has nothing to choose "
          "(after it, each thread runs until it ends or waits)",
          schedule, choices->size(), in, at, at + 1);
  }
  return std::nullopt;
}

std::vector<DesignSearch> search_scenario_schedules(const Scenario& sc, const RunOptions& options,
                                                    const SearchOptions& search) {
  if (sc.threads.empty())
    throw UsageError(sc.file,
                     "the scenario declares no threads: one schedule is all it has (run it with `impsim run`); "
                     "declare \"threads\" and start them with {\"start\": NAME} steps");
  if (options.engine == EngineKind::Fast)
    throw UsageError(sc.file, "--engine fast does not model threads; schedules run on the step engine (the default)");
  const RunPlan plan = plan_runs(sc, options);
  std::vector<DesignSearch> out;
  for (const Params& params : plan.params) {
    auto compiled = std::make_shared<Model>(compile_model(sc, params, options.model_limits));
    apply_axes(*compiled, options);
    const std::shared_ptr<const Model> model = std::move(compiled);
    for (Variant v : plan.variants) {
      ScheduledProgram program = [&](Scheduler& s) { return threaded_outcome(*model, v, options, s); };
      out.push_back(DesignSearch{v, model->params, search_schedules(program, search), model});
    }
  }
  return out;
}

}  // namespace impsim
