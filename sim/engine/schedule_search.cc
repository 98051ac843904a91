// The schedule searches of include/impsim/engine/schedule_search.h.
#include "impsim/engine/schedule_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <tuple>
#include <utility>

namespace impsim {

namespace {

// Shrinking stops after this many runs of one search, whatever is left.
constexpr uint64_t kMaxShrinkRuns = 10000;

// One choice point of a run: who could run, who reached it (kNoThread when
// it finished or waits), and the index picked.
struct Choice {
  std::vector<PyThreadId> runnable;
  PyThreadId reached = kNoThread;
  size_t pick = 0;
  bool preempts() const { return reached != kNoThread && runnable[pick] != reached; }
};

struct Run {
  std::vector<Choice> choices;
  std::string outcome;
  std::string schedule;
  int preemptions = 0;
  bool diverged = false;  // a prefix choice the program no longer offers
};

// Runs the program once under `decide` (which returns an index into
// runnable, or nothing for run_until_blocked's pick), recording each choice.
using Decide = std::function<std::optional<size_t>(size_t at, const std::vector<PyThreadId>&, PyThreadId)>;

Run run_program(const ScheduledProgram& program, const Decide& decide) {
  Run run;
  Scheduler s([&](const std::vector<PyThreadId>& runnable, PyThreadId reached) -> size_t {
    std::optional<size_t> pick = decide(run.choices.size(), runnable, reached);
    if (pick && *pick >= runnable.size()) {
      run.diverged = true;
      pick.reset();
    }
    Choice c{runnable, reached, pick.value_or(Scheduler::until_blocked_pick(runnable, reached))};
    run.preemptions += c.preempts() ? 1 : 0;
    run.schedule += fmt::format("{}{}", run.schedule.empty() ? "" : ".", runnable[c.pick]);
    run.choices.push_back(std::move(c));
    return run.choices.back().pick;
  });
  run.outcome = program(s);
  return run;
}

// Follows `prefix` (indices), then run_until_blocked.
Run run_prefix(const ScheduledProgram& program, const std::vector<size_t>& prefix) {
  return run_program(program, [&](size_t at, const std::vector<PyThreadId>&, PyThreadId) -> std::optional<size_t> {
    if (at < prefix.size()) return prefix[at];
    return std::nullopt;
  });
}

// Follows `ids` (threads), then run_until_blocked. Where an id cannot run:
// `strict`, the run has diverged; else run_until_blocked's pick there.
Run run_ids(const ScheduledProgram& program, const std::vector<PyThreadId>& ids, bool strict) {
  return run_program(program,
                     [&](size_t at, const std::vector<PyThreadId>& runnable, PyThreadId) -> std::optional<size_t> {
                       if (at >= ids.size()) return std::nullopt;
                       const auto it = std::find(runnable.begin(), runnable.end(), ids[at]);
                       if (it != runnable.end()) return static_cast<size_t>(it - runnable.begin());
                       return strict ? std::optional<size_t>(runnable.size()) : std::nullopt;
                     });
}

std::vector<PyThreadId> picked_ids(const Run& run) {
  std::vector<PyThreadId> ids;
  for (const Choice& c : run.choices) ids.push_back(c.runnable[c.pick]);
  return ids;
}

}  // namespace

// Total, so that merging shards picks what one search would.
bool better_representative(int preemptions, const std::string& schedule, const OutcomeClass& than) {
  return std::make_tuple(preemptions, schedule.size(), std::string_view(schedule)) <
         std::make_tuple(than.preemptions, than.schedule.size(), std::string_view(than.schedule));
}

namespace {

class Tally {
 public:
  void add(const Run& run) {
    add(OutcomeClass{run.outcome, 1, run.schedule, run.preemptions});
    ++runs_;
  }
  void add(const OutcomeClass& o) {
    auto [it, fresh] = classes_.try_emplace(o.outcome, o);
    if (fresh) return;
    OutcomeClass& c = it->second;
    if (better_representative(o.preemptions, o.schedule, c)) {
      c.schedule = o.schedule;
      c.preemptions = o.preemptions;
    }
    c.schedules += o.schedules;
  }
  uint64_t runs() const { return runs_; }
  std::vector<OutcomeClass> classes() const {
    std::vector<OutcomeClass> out;
    for (const auto& [_, c] : classes_) out.push_back(c);
    return out;
  }
  std::map<std::string, OutcomeClass>& by_outcome() { return classes_; }

 private:
  std::map<std::string, OutcomeClass> classes_;
  uint64_t runs_ = 0;
};

// The prefixes a run spawns: at each of its choices past its own prefix,
// each other pick whose preemptions stay within the bound. In the order a
// depth-first search pops them: the last choice's first.
std::vector<std::vector<size_t>> children(const Run& run, size_t prefix_size, int bound) {
  std::vector<std::vector<size_t>> out;
  int before = 0;  // preemptions of the choices before i
  std::vector<int> preemptions_before(run.choices.size());
  for (size_t i = 0; i < run.choices.size(); ++i) {
    preemptions_before[i] = before;
    before += run.choices[i].preempts() ? 1 : 0;
  }
  for (size_t i = prefix_size; i < run.choices.size(); ++i) {
    const Choice& c = run.choices[i];
    for (size_t alt = 0; alt < c.runnable.size(); ++alt) {
      if (alt == c.pick) continue;
      const bool preempts = c.reached != kNoThread && c.runnable[alt] != c.reached;
      if (preemptions_before[i] + (preempts ? 1 : 0) > bound) continue;
      std::vector<size_t> child;
      for (size_t j = 0; j < i; ++j) child.push_back(run.choices[j].pick);
      child.push_back(alt);
      out.push_back(std::move(child));
    }
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::string diverged_error(const std::vector<size_t>& prefix) {
  return fmt::format(
      "the program made other choices under the same schedule (prefix of {} choices): it is not deterministic, so "
      "no search of its schedules can be trusted",
      prefix.size());
}

void search_exhaustive(const ScheduledProgram& program, const SearchOptions& o, ScheduleSearch& out, Tally& tally) {
  uint64_t runs = 0;
  const uint64_t max_runs = o.max_schedules / o.shards + (o.max_schedules % o.shards != 0);
  auto run_node = [&](const std::vector<size_t>& prefix) -> std::optional<Run> {
    Run run = run_prefix(program, prefix);
    ++runs;
    if (run.diverged) {
      out.error = diverged_error(prefix);
      return std::nullopt;
    }
    return run;
  };
  // Shards share the top of the tree: each runs it breadth first until the
  // frontier has a few nodes a shard, counts the runs whose number falls
  // to it, then searches depth first the frontier's nodes that fall to it.
  std::deque<std::vector<size_t>> frontier{{}};
  uint64_t shared = 0;
  while (o.shards > 1 && !frontier.empty() && frontier.size() < 4 * size_t{o.shards}) {
    if (runs >= max_runs) return;
    std::vector<size_t> prefix = std::move(frontier.front());
    frontier.pop_front();
    std::optional<Run> run = run_node(prefix);
    if (!run) return;
    if (shared++ % o.shards == o.shard) tally.add(*run);
    for (auto& child : children(*run, prefix.size(), o.preemption_bound)) frontier.push_back(std::move(child));
  }
  std::vector<std::vector<size_t>> stack;
  for (size_t i = 0; i < frontier.size(); ++i)
    if (o.shards == 1 || i % o.shards == o.shard) stack.push_back(std::move(frontier[i]));
  std::reverse(stack.begin(), stack.end());
  while (!stack.empty()) {
    if (runs >= max_runs) return;
    std::vector<size_t> prefix = std::move(stack.back());
    stack.pop_back();
    std::optional<Run> run = run_node(prefix);
    if (!run) return;
    tally.add(*run);
    for (auto& child : children(*run, prefix.size(), o.preemption_bound)) stack.push_back(std::move(child));
  }
  out.complete = true;
}

// SplitMix64: the same numbers from the same seed on every machine, as a
// replayable search needs (std's distributions differ between libraries).
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next() { return mix(state_++); }
  // Uniform in [0, n), n > 0 (the bias of a modulo of 2^64 is below 2^-40
  // for the counts here).
  uint64_t below(uint64_t n) { return next() % n; }

 private:
  uint64_t state_;
};

Run run_random(const ScheduledProgram& program, uint64_t seed) {
  Random rng(seed);
  return run_program(program, [&](size_t, const std::vector<PyThreadId>& runnable, PyThreadId) {
    return std::optional<size_t>(rng.below(runnable.size()));
  });
}

Run run_pct(const ScheduledProgram& program, uint64_t seed, int depth, size_t points) {
  Random rng(seed);
  std::vector<size_t> change_at;  // choice numbers, from 0
  for (int j = 1; j < depth; ++j) change_at.push_back(rng.below(std::max<size_t>(points, 1)));
  std::map<PyThreadId, int64_t> priority;
  auto priority_of = [&](PyThreadId t) -> int64_t& {
    auto [it, fresh] = priority.try_emplace(t, 0);
    if (fresh) it->second = depth + static_cast<int64_t>(rng.below(1u << 30));
    return it->second;
  };
  return run_program(program, [&](size_t at, const std::vector<PyThreadId>& runnable, PyThreadId reached) {
    for (size_t j = 0; j < change_at.size(); ++j)
      if (change_at[j] == at)
        priority_of(reached != kNoThread ? reached : runnable[0]) = depth - 1 - static_cast<int64_t>(j);
    size_t best = 0;
    for (size_t i = 1; i < runnable.size(); ++i)
      if (priority_of(runnable[i]) > priority_of(runnable[best])) best = i;
    return std::optional<size_t>(best);
  });
}

// Takes back the representative's preemptions one at a time where the
// outcome stays the same, until none can go.
void shrink(const ScheduledProgram& program, OutcomeClass& c, uint64_t& runs) {
  std::optional<std::vector<PyThreadId>> ids = Scheduler::parse_schedule(c.schedule);
  if (!ids) return;
  Run best = run_ids(program, *ids, false);
  ++runs;
  for (bool progress = true; progress && runs < kMaxShrinkRuns;) {
    progress = false;
    for (size_t i = 0; i < best.choices.size() && !progress; ++i) {
      const Choice& ch = best.choices[i];
      if (!ch.preempts()) continue;
      std::vector<PyThreadId> candidate = picked_ids(best);
      candidate[i] = ch.reached;
      Run run = run_ids(program, candidate, false);
      ++runs;
      if (run.outcome == c.outcome && run.preemptions < best.preemptions) {
        best = std::move(run);
        progress = true;
      }
    }
  }
  if (best.outcome == c.outcome && better_representative(best.preemptions, best.schedule, c)) {
    c.schedule = best.schedule;
    c.preemptions = best.preemptions;
  }
}

void search_sampled(const ScheduledProgram& program, const SearchOptions& o, ScheduleSearch& out, Tally& tally) {
  // PCT's k: the choice points of a run that lets each thread go on.
  const size_t points = o.kind == SearchKind::Pct ? run_prefix(program, {}).choices.size() : 0;
  for (uint64_t r = o.shard; r < o.max_schedules; r += o.shards) {
    const uint64_t seed = mix(o.seed ^ mix(r));
    tally.add(o.kind == SearchKind::Pct ? run_pct(program, seed, o.pct_depth, points) : run_random(program, seed));
  }
  for (auto& [_, c] : tally.by_outcome()) shrink(program, c, out.shrink_runs);
}

}  // namespace

ScheduleSearch search_schedules(const ScheduledProgram& program, const SearchOptions& options) {
  ScheduleSearch out;
  out.options = options;
  if (options.shards == 0 || options.shard >= options.shards) {
    out.error =
        fmt::format("shard {} of {}: a shard is a number from 0 to the count less one", options.shard, options.shards);
    return out;
  }
  Tally tally;
  if (options.kind == SearchKind::Exhaustive)
    search_exhaustive(program, options, out, tally);
  else
    search_sampled(program, options, out, tally);
  out.outcomes = tally.classes();
  out.schedules = tally.runs();
  return out;
}

ScheduleSearch merge_shards(const std::vector<ScheduleSearch>& shards) {
  ScheduleSearch out;
  if (shards.empty()) return out;
  out.options = shards.front().options;
  out.options.shard = 0;
  out.options.shards = 1;
  out.complete = true;
  Tally tally;
  for (const ScheduleSearch& s : shards) {
    for (const OutcomeClass& c : s.outcomes) tally.add(c);
    out.schedules += s.schedules;
    out.shrink_runs += s.shrink_runs;
    out.complete = out.complete && s.complete;
    if (s.error && !out.error) out.error = s.error;
  }
  out.outcomes = tally.classes();
  return out;
}

std::optional<ScheduleReplay> replay_schedule(const ScheduledProgram& program, const std::string& schedule) {
  std::optional<std::vector<PyThreadId>> ids = Scheduler::parse_schedule(schedule);
  if (!ids) return std::nullopt;
  Run run = run_ids(program, *ids, true);
  if (run.diverged) return std::nullopt;
  return ScheduleReplay{run.outcome, run.preemptions};
}

}  // namespace impsim
