// `impsim schedules FILE...`: every outcome a threaded scenario's threads
// can reach, searched schedule by schedule.
#include <fmt/format.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "impsim/base/escape.h"
#include "impsim/base/plural.h"
#include "impsim/run/schedules.h"
#include "scenario_command.h"
#include "usage_errors.h"

namespace impsim::cli {

namespace {

const char* search_name(SearchKind k) {
  switch (k) {
    case SearchKind::Exhaustive:
      return "exhaustive";
    case SearchKind::Random:
      return "random";
    case SearchKind::Pct:
      return "pct";
  }
  return "exhaustive";
}

std::string params_text(const Params& params) {
  std::string out;
  for (const auto& [k, v] : params) out += fmt::format("{}{}={}", out.empty() ? "" : ", ", k, v);
  return out;
}

// What the search covered, said beside every outcome list: a search that
// found no deadlock says how far it looked.
std::string coverage(const ScheduleSearch& s) {
  const SearchOptions& o = s.options;
  std::string how = o.kind == SearchKind::Exhaustive
                        ? fmt::format("exhaustive within {} {}", o.preemption_bound,
                                      plural(static_cast<uint64_t>(o.preemption_bound), "preemption", "preemptions"))
                    : o.kind == SearchKind::Random ? fmt::format("random, seed {}", o.seed)
                                                   : fmt::format("PCT depth {}, seed {}", o.pct_depth, o.seed);
  std::string of = fmt::format("{} {}", s.schedules, plural(s.schedules, "schedule", "schedules"));
  if (o.kind == SearchKind::Exhaustive)
    of +=
        s.complete ? ", every one within the bound" : fmt::format(", cut short at --max-schedules {}", o.max_schedules);
  return how + ": " + of;
}

bool any_outcome_has(const ScheduleSearch& s, std::string_view what) {
  for (const OutcomeClass& c : s.outcomes)
    if (c.outcome.find(what) != std::string::npos) return true;
  return false;
}

std::string search_text(const Scenario& sc, const std::vector<ThreadSearch>& searches) {
  std::string out;
  for (const ThreadSearch& t : searches) {
    const ScheduleSearch& s = t.search;
    out += fmt::format("{}, {}{}: {}\n", terminal_text(sc.name), variant_name(t.variant),
                       t.params.empty() ? "" : " (" + params_text(t.params) + ")", coverage(s));
    if (s.error) {
      out += "  " + terminal_text(*s.error) + "\n";
      continue;
    }
    out += fmt::format("  {} {}\n", s.outcomes.size(), plural(s.outcomes.size(), "outcome", "outcomes"));
    for (size_t i = 0; i < s.outcomes.size(); ++i) {
      const OutcomeClass& c = s.outcomes[i];
      out += fmt::format("  {}. {} {}, replay with --schedule {} ({} {})\n     {}\n", i + 1, c.schedules,
                         plural(c.schedules, "schedule", "schedules"), c.schedule.empty() ? "''" : c.schedule,
                         c.preemptions, plural(static_cast<uint64_t>(c.preemptions), "preemption", "preemptions"),
                         terminal_text(c.outcome));
    }
    const std::string within = fmt::format(" ({})", coverage(s));
    if (!any_outcome_has(s, "hang:")) out += "  no hang found" + within + "\n";
    if (!any_outcome_has(s, "_DeadlockError")) out += "  no _DeadlockError found" + within + "\n";
  }
  return out;
}

nlohmann::ordered_json points_json(const std::vector<PointText>& points) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const PointText& p : points) {
    nlohmann::ordered_json e;
    e["thread"] = p.thread;
    e["point"] = p.point;
    if (!p.site.empty()) e["site"] = p.site;
    if (!p.module.empty()) e["module"] = p.module;
    if (!p.target.empty()) e["target"] = p.target;
    if (!p.pointer.empty()) e["pointer"] = p.pointer;
    out.push_back(std::move(e));
  }
  return out;
}

// `points`: each outcome's schedule written out point by point.
using PointsOf = std::function<std::vector<PointText>(const ThreadSearch&, const std::string& schedule)>;

nlohmann::ordered_json search_json(const Scenario& sc, const std::vector<ThreadSearch>& searches,
                                   const PointsOf& points) {
  nlohmann::ordered_json j;
  j["scenario"] = json_text(sc.name);
  j["file"] = json_text(sc.file);
  j["searches"] = nlohmann::ordered_json::array();
  for (const ThreadSearch& t : searches) {
    const ScheduleSearch& s = t.search;
    nlohmann::ordered_json e;
    e["variant"] = variant_name(t.variant);
    e["params"] = nlohmann::ordered_json::object();
    for (const auto& [k, v] : t.params) e["params"][k] = v;
    e["search"] = search_name(s.options.kind);
    if (s.options.kind == SearchKind::Exhaustive)
      e["preemption_bound"] = s.options.preemption_bound;
    else
      e["seed"] = s.options.seed;
    if (s.options.kind == SearchKind::Pct) e["pct_depth"] = s.options.pct_depth;
    e["max_schedules"] = s.options.max_schedules;
    e["schedules"] = s.schedules;
    e["complete"] = s.complete;
    e["shrink_runs"] = s.shrink_runs;
    if (s.error) e["error"] = *s.error;
    e["outcomes"] = nlohmann::ordered_json::array();
    for (const OutcomeClass& c : s.outcomes) {
      nlohmann::ordered_json o = {
          {"outcome", c.outcome}, {"schedules", c.schedules}, {"schedule", c.schedule}, {"preemptions", c.preemptions}};
      if (points) o["points"] = points_json(points(t, c.schedule));
      e["outcomes"].push_back(std::move(o));
    }
    j["searches"].push_back(std::move(e));
  }
  return j;
}

}  // namespace

Action add_schedules(CLI::App& app) {
  struct State : ScenarioCommand {
    using ScenarioCommand::ScenarioCommand;
    std::string search = "exhaustive";
    int preemption_bound = 2;
    uint64_t seed = 0;
    int pct_depth = 3;
    uint64_t max_schedules = 10000;
    bool points = false;
  };
  auto st = std::make_shared<State>(
      app, "schedules",
      "Search a threaded scenario's schedules: every outcome its threads reach under CPython's import locks");
  CLI::App* cmd = st->cmd;
  cmd->add_option("--search", st->search,
                  "exhaustive (every schedule within --preemption-bound), random (--seed) or pct (--seed, "
                  "--pct-depth)")
      ->check(CLI::IsMember({"exhaustive", "random", "pct"}))
      ->capture_default_str();
  cmd->add_option("--preemption-bound", st->preemption_bound,
                  "Exhaustive: switches away from a thread that could go on, at most, per schedule")
      ->check(CLI::Range(0, 16))
      ->capture_default_str();
  cmd->add_option("--seed", st->seed, "Random and pct: the seed (the same schedules on every machine)")
      ->capture_default_str();
  cmd->add_option("--pct-depth", st->pct_depth, "Pct: the depth of the bug aimed at (priority changes + 1)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--max-schedules", st->max_schedules,
                  "Runs of the search, at most (an exhaustive one cut short "
                  "says so)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{100'000'000}))
      ->capture_default_str();
  cmd->add_flag("--points", st->points,
                "With --format json: each outcome's schedule written out point by point (thread, point, module), "
                "as tools/check/crosscheck --threads forces it on real threads");
  st->add_shared({.format_help = "text or json"});
  cmd->footer(
      "Each outcome is listed with how many schedules reached it and one schedule, with the fewest preemptions, "
      "that reaches it again. A search that finds no hang or _DeadlockError says how far it looked.\n\n"
      "Examples:\n"
      "  impsim schedules tests/data/threads/cross_import.json\n"
      "  impsim schedules tests/data/threads/cross_import.json --preemption-bound 3 --cpython 3.9\n"
      "  impsim schedules tests/data/threads/cross_import.json --search pct --seed 7 --max-schedules 500\n");
  return action_of(st, [st](Sink& sink) -> int {
    return st->for_each_scenario(
        sink, nullptr, [&](const std::string&, Scenario& sc, const RunOptions& options, Progress&) {
          SearchOptions search;
          search.kind = st->search == "random" ? SearchKind::Random
                        : st->search == "pct"  ? SearchKind::Pct
                                               : SearchKind::Exhaustive;
          search.preemption_bound = st->preemption_bound;
          search.seed = st->seed;
          search.pct_depth = st->pct_depth;
          search.max_schedules = st->max_schedules;
          const std::vector<ThreadSearch> found = search_scenario_schedules(sc, options, search);
          PointsOf points;
          if (st->points)
            points = [&](const ThreadSearch& t, const std::string& schedule) {
              Model model = compile_model(sc, t.params, options.model_limits);
              apply_axes(model, options);
              return schedule_points(model, t.variant, options, schedule);
            };
          if (sink.format == Format::Json)
            sink.json(search_json(sc, found, points));
          else
            sink.text(search_text(sc, found));
          for (const ThreadSearch& t : found)
            if (t.search.error) return 1;
          return 0;
        });
  });
}

}  // namespace impsim::cli
