// Searching the schedules of a threaded program for every outcome it can
// have, the way model checkers of other runtimes do it (CHESS, Coyote,
// loom, shuttle): run the program once per schedule, each run fully
// deterministic (scheduler.h), and group the runs by what came of them.
//
// Three searches:
//
// - Exhaustive within a preemption bound (CHESS's iterative context
//   bounding). A preemption is a choice, at a scheduling point, of another
//   thread than the one that reached it while that one could go on; a
//   switch because a thread finished or waits is free. Most concurrency
//   bugs need few preemptions, and the number of schedules with at most c
//   of them grows polynomially in the program's length where all of them
//   grow exponentially. The search is stateless and depth first: a run
//   follows a prefix of choices and then lets the running thread go on
//   (run_until_blocked); every choice point past the prefix spawns, for
//   each other thread it could have picked, the prefix up to there plus
//   that pick, kept when its preemptions stay within the bound. Each
//   schedule is run exactly once: it is the child of the run that follows
//   its choices up to its last one that run_until_blocked would not make.
// - Random: each choice uniform among the runnable threads, from a seed.
// - PCT (Burckhardt et al., "A randomized scheduler with probabilistic
//   guarantees of finding bugs", ASPLOS 2010): threads get random
//   priorities, the highest runnable one runs, and at d - 1 random choice
//   points the running thread drops below every other; finds a bug of
//   depth d with probability at least 1 / (n k^(d-1)) a run (n threads, k
//   choice points).
//
// Every distinct outcome is listed with how many schedules reached it and
// the one of them with the fewest preemptions (then the shortest, then
// the first by text), which Scheduler::replay runs again. The random
// searches shrink that one further toward fewer preemptions: a preemption
// is taken back where the outcome stays the same.
//
// The exhaustive search keeps its tree in memory linear in a run's length
// (sim/engine/schedule_search.cc, "The exhaustive search's tree").
//
// A search can be split in shards (a CI matrix, a cluster's array jobs)
// and the shards' results merged: counts add up to the unsplit search's,
// and an exhaustive search's merged representatives are its own.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "impsim/engine/scheduler.h"
#include "impsim/engine/threaded_outcome.h"

namespace impsim {

enum class SearchKind : uint8_t { Exhaustive, Random, Pct };

// The ranges of a search's options (--preemption-bound, --pct-depth,
// --max-schedules, --shard): the flags take these, and a shard document
// holding anything else is refused.
inline constexpr int kMaxPreemptionBound = 16;
inline constexpr int kMaxPctDepth = 64;
inline constexpr uint64_t kMaxSchedules = 100'000'000;
inline constexpr uint32_t kMaxShards = 100'000;

struct SearchOptions {
  SearchKind kind = SearchKind::Exhaustive;
  int preemption_bound = 2;  // exhaustive
  uint64_t seed = 0;         // random, pct
  int pct_depth = 3;         // pct: the bug depth d aimed at
  // Runs of the whole search, at most: each shard makes its share (an
  // exhaustive shard also the runs of the tree's top it shares with the
  // others).
  uint64_t max_schedules = 10000;
  uint32_t shard = 0;  // this shard, of `shards`
  uint32_t shards = 1;
  // Exhaustive: the choices of earlier runs the search keeps beyond the path
  // it is on, at most (0: eight runs' worth); past it they are dropped and
  // got back by running again. Changes no result; the tests make it small.
  uint64_t keep_choices = 0;
};

// One class of runs: those that came to the same outcome.
template <class Outcome>
struct OutcomeClassOf {
  Outcome outcome;         // what the program said of the run
  uint64_t schedules = 0;  // how many runs reached it
  std::string schedule;    // one of them, replayable
  int preemptions = 0;     // that one's
};

// Whether a schedule with `preemptions` is preferred to `than`'s as an
// outcome's representative: fewer preemptions, then shorter, then first
// by text.
bool better_representative(int preemptions, const std::string& schedule, int than_preemptions,
                           const std::string& than_schedule);
template <class Outcome>
bool better_representative(int preemptions, const std::string& schedule, const OutcomeClassOf<Outcome>& than) {
  return better_representative(preemptions, schedule, than.preemptions, than.schedule);
}

template <class Outcome>
struct ScheduleSearchOf {
  SearchOptions options;
  // By Outcome's order, which only keeps them apart: a report lists them
  // in an order of its own (report/threaded_outcome_text.h).
  std::vector<OutcomeClassOf<Outcome>> outcomes;
  uint64_t schedules = 0;  // runs counted in `outcomes`
  // Exhaustive: every schedule within the bound was run (not cut short by
  // max_schedules). Random and PCT: never, they sample.
  bool complete = false;
  uint64_t shrink_runs = 0;  // runs spent shrinking representatives, not counted above
  // Exhaustive, what its memory grew with (not reported; the tests and the
  // benchmark read them): the most choice points one run made, the most
  // the search kept at once, and the runs made again to get back choices
  // it had dropped.
  uint64_t longest_run = 0;
  uint64_t peak_kept_choices = 0;
  uint64_t rerun_runs = 0;
  // The program did not do the same thing twice under the same choices: a
  // search of it means nothing.
  std::optional<std::string> error;
};

// One run of the program: spawns its threads on the scheduler, calls
// run(), and says what came of it (results per thread, errors, a hang and
// its waits), an equal Outcome for the same outcome. A threaded scenario's
// runs say a ThreadedOutcome; the tests' small programs say words.
template <class Outcome>
using ScheduledProgramOf = std::function<Outcome(Scheduler&)>;

template <class Outcome>
ScheduleSearchOf<Outcome> search_schedules(const ScheduledProgramOf<Outcome>& program, const SearchOptions& options);

// The shards of one search (the same options but `shard`), as one.
template <class Outcome>
ScheduleSearchOf<Outcome> merge_shards(const std::vector<ScheduleSearchOf<Outcome>>& shards);

template <class Outcome>
struct ScheduleReplayOf {
  Outcome outcome;
  int preemptions = 0;
};
// One run of `program` under `schedule` (as OutcomeClass::schedule writes
// it): what came of it and how many preemptions the schedule makes;
// nullopt when the string is not a schedule or a choice in it cannot be
// followed.
template <class Outcome>
std::optional<ScheduleReplayOf<Outcome>> replay_schedule(const ScheduledProgramOf<Outcome>& program,
                                                         const std::string& schedule);

using OutcomeClass = OutcomeClassOf<ThreadedOutcome>;
using ScheduleSearch = ScheduleSearchOf<ThreadedOutcome>;
using ScheduledProgram = ScheduledProgramOf<ThreadedOutcome>;
using ScheduleReplay = ScheduleReplayOf<ThreadedOutcome>;

}  // namespace impsim
