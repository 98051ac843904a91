// search_schedules: every interleaving once, the preemption bound checked
// against a count made apart from the scheduler, outcomes grouped with a
// replayable representative, random and PCT searches, shards merged.
#include <doctest/doctest.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "impsim/engine/import_locks.h"
#include "impsim/engine/schedule_search.h"

using namespace impsim;

namespace {

// The programs here say what came of a run in words.
using WordsProgram = ScheduledProgramOf<std::string>;
using WordsSearch = ScheduleSearchOf<std::string>;
using WordsClass = OutcomeClassOf<std::string>;
using WordsReplay = ScheduleReplayOf<std::string>;

// Threads that each write their letter and reach a scheduling point
// points[t] times, then finish; the outcome is the letters in the order
// written, so each interleaving is an outcome of its own.
WordsProgram letters(std::vector<int> points) {
  return [points](Scheduler& s) {
    std::string log;
    for (size_t t = 0; t < points.size(); ++t)
      s.spawn([&s, &log, t, n = points[t]] {
        for (int i = 0; i < n; ++i) {
          log += static_cast<char>('a' + t);
          s.point();
        }
        log += static_cast<char>('a' + t);
      });
    s.run();
    return log;
  };
}

// The same count made without the scheduler: the words in which thread t
// appears points[t] + 1 times (one per stretch it runs), with a preemption
// wherever the thread changes while the one before has stretches left.
void count_words(std::vector<int>& left, int last, int preemptions, int bound, uint64_t& count) {
  if (std::accumulate(left.begin(), left.end(), 0) == 0) {
    ++count;
    return;
  }
  for (size_t t = 0; t < left.size(); ++t) {
    if (left[t] == 0) continue;
    const bool preempts = last >= 0 && static_cast<size_t>(last) != t && left[static_cast<size_t>(last)] > 0;
    if (preemptions + preempts > bound) continue;
    --left[t];
    count_words(left, static_cast<int>(t), preemptions + preempts, bound, count);
    ++left[t];
  }
}

uint64_t words(const std::vector<int>& points, int bound) {
  std::vector<int> left;
  for (int p : points) left.push_back(p + 1);
  uint64_t count = 0;
  count_words(left, -1, 0, bound, count);
  return count;
}

// Two threads taking two module locks in opposite orders; the outcome says
// what each got.
std::string crossing(Scheduler& s) {
  ImportLocks locks;
  std::string said[2];
  auto body = [&](int32_t mine, int32_t theirs) {
    return [&, mine, theirs] {
      const PyThreadId me = s.current();
      locks.module_lock_acquire(s, mine);
      const LockResult r = locks.module_lock_acquire(s, theirs);
      said[me] = r == LockResult::Deadlock ? "_DeadlockError" : "took both";
      if (r == LockResult::Acquired) locks.module_lock_release(s, theirs);
      locks.module_lock_release(s, mine);
    };
  };
  s.spawn(body(1, 2));
  s.spawn(body(2, 1));
  s.run();
  return "0: " + said[0] + "; 1: " + said[1];
}

// A thread holding the global import lock (inside find_spec) waits for a
// module lock whose holder waits for the global lock: a hang some
// schedules reach.
std::string global_cycle(Scheduler& s) {
  ImportLocks locks;
  s.spawn([&] {
    locks.imp_acquire_lock(s);
    locks.module_lock_acquire(s, 5);
    locks.module_lock_release(s, 5);
    locks.imp_release_lock(s);
  });
  s.spawn([&] {
    locks.module_lock_acquire(s, 5);
    locks.imp_acquire_lock(s);
    locks.imp_release_lock(s);
    locks.module_lock_release(s, 5);
  });
  const ScheduleOutcome o = s.run();
  std::string out = o.hang ? "hang:" : "both finished";
  for (const ScheduleOutcome::Waiting& w : o.waits)
    out += " " + std::to_string(w.thread) +
           (w.wait.kind == WaitKind::GlobalLock ? " waits for the global lock"
                                                : " waits for module lock " + std::to_string(w.wait.module)) +
           ", held by " + std::to_string(w.wait.on) + ";";
  return out;
}

std::set<std::string> outcome_texts(const WordsSearch& r) {
  std::set<std::string> out;
  for (const WordsClass& c : r.outcomes) out.insert(c.outcome);
  return out;
}

// Each representative replays to its outcome with the preemptions it states.
void check_representatives(const WordsProgram& program, const WordsSearch& r) {
  uint64_t total = 0;
  for (const WordsClass& c : r.outcomes) {
    CAPTURE(c.outcome);
    CAPTURE(c.schedule);
    const std::optional<WordsReplay> again = replay_schedule<std::string>(program, c.schedule);
    REQUIRE(again.has_value());
    CHECK(again->outcome == c.outcome);
    CHECK(again->preemptions == c.preemptions);
    total += c.schedules;
  }
  CHECK(total == r.schedules);
}

}  // namespace

TEST_CASE("past any bound, the exhaustive search runs every interleaving exactly once") {
  for (const std::vector<int>& points :
       std::vector<std::vector<int>>{{3, 3}, {1, 1, 1}, {0, 4}, {2, 1, 0}, {0, 0, 0, 0}}) {
    CAPTURE(points.size());
    const WordsSearch r = search_schedules<std::string>(letters(points), {.preemption_bound = 100});
    REQUIRE_FALSE(r.error.has_value());
    CHECK(r.complete);
    CHECK(r.schedules == words(points, 100));
    CHECK(r.outcomes.size() == r.schedules);  // each interleaving writes its own word
    check_representatives(letters(points), r);
  }
  CHECK(words({3, 3}, 100) == 70);     // C(8, 4)
  CHECK(words({1, 1, 1}, 100) == 90);  // 6! / (2! 2! 2!)
}

TEST_CASE("the preemption bound keeps exactly the schedules with at most that many preemptions") {
  for (const std::vector<int>& points : std::vector<std::vector<int>>{{3, 3}, {2, 2, 2}, {4, 1}}) {
    for (int bound = 0; bound <= 4; ++bound) {
      CAPTURE(bound);
      const WordsSearch r = search_schedules<std::string>(letters(points), {.preemption_bound = bound});
      CHECK(r.complete);
      CHECK(r.schedules == words(points, bound));
      for (const WordsClass& c : r.outcomes) CHECK(c.preemptions <= bound);
    }
  }
  // Bound 0 is one schedule per choice of who starts and who goes on when a
  // thread finishes: 2 threads, 2 schedules.
  CHECK(words({3, 3}, 0) == 2);
}

TEST_CASE("crossing module locks: one preemption reaches _DeadlockError in either thread") {
  const WordsSearch none = search_schedules<std::string>(crossing, {.preemption_bound = 0});
  CHECK(outcome_texts(none) == std::set<std::string>{"0: took both; 1: took both"});
  const WordsSearch one = search_schedules<std::string>(crossing, {.preemption_bound = 1});
  CHECK(outcome_texts(one) == std::set<std::string>{"0: _DeadlockError; 1: took both",
                                                    "0: took both; 1: _DeadlockError", "0: took both; 1: took both"});
  for (const WordsClass& c : one.outcomes) CHECK(c.preemptions == (c.outcome.find("_Deadlock") != std::string::npos));
  check_representatives(crossing, one);
  const WordsSearch two = search_schedules<std::string>(crossing, {});
  CHECK(outcome_texts(two) == outcome_texts(one));
  CHECK(two.schedules > one.schedules);
  check_representatives(crossing, two);
}

TEST_CASE("a cycle through the global import lock: the hang and who waits, from one preemption") {
  const WordsSearch r = search_schedules<std::string>(global_cycle, {.preemption_bound = 2});
  CHECK(outcome_texts(r) == std::set<std::string>{"both finished",
                                                  "hang: 0 waits for module lock 5, held by 1; "
                                                  "1 waits for the global lock, held by 0;"});
  for (const WordsClass& c : r.outcomes) CHECK(c.preemptions == (c.outcome.starts_with("hang") ? 1 : 0));
  check_representatives(global_cycle, r);
}

TEST_CASE("random and PCT searches: the same from the same seed, shrunk to the fewest preemptions") {
  const WordsSearch all = search_schedules<std::string>(crossing, {.preemption_bound = 100});
  for (SearchKind kind : {SearchKind::Random, SearchKind::Pct}) {
    CAPTURE(static_cast<int>(kind));
    const SearchOptions o{.kind = kind, .seed = 7, .max_schedules = 300};
    const WordsSearch a = search_schedules<std::string>(crossing, o);
    const WordsSearch b = search_schedules<std::string>(crossing, o);
    REQUIRE_FALSE(a.error.has_value());
    CHECK_FALSE(a.complete);
    CHECK(a.schedules == 300);
    CHECK(outcome_texts(a) == outcome_texts(all));  // 300 samples of a small space find every outcome
    for (size_t i = 0; i < a.outcomes.size(); ++i) {
      CHECK(a.outcomes[i].schedules == b.outcomes[i].schedules);
      CHECK(a.outcomes[i].schedule == b.outcomes[i].schedule);
      // Shrinking finds what the exhaustive search knows is least.
      CHECK(a.outcomes[i].preemptions == all.outcomes[i].preemptions);
    }
    check_representatives(crossing, a);
    const WordsSearch other = search_schedules<std::string>(crossing, {.kind = kind, .seed = 8, .max_schedules = 300});
    bool differs = false;
    for (size_t i = 0; i < other.outcomes.size() && i < a.outcomes.size(); ++i)
      differs = differs || other.outcomes[i].schedules != a.outcomes[i].schedules;
    CHECK(differs);  // another seed, other samples
  }
}

TEST_CASE("shards merge into the search they split") {
  const WordsProgram program = letters({2, 2, 1});
  for (SearchKind kind : {SearchKind::Exhaustive, SearchKind::Random, SearchKind::Pct}) {
    // The exhaustive search whole (136 schedules); 200 samples of the others.
    const SearchOptions o{.kind = kind,
                          .preemption_bound = 2,
                          .seed = 3,
                          .max_schedules = kind == SearchKind::Exhaustive ? 10000u : 200u};
    const WordsSearch whole = search_schedules<std::string>(program, o);
    for (uint32_t n : {2u, 3u, 5u}) {
      CAPTURE(static_cast<int>(kind));
      CAPTURE(n);
      std::vector<WordsSearch> parts;
      for (uint32_t i = 0; i < n; ++i) {
        SearchOptions part = o;
        part.shard = i;
        part.shards = n;
        parts.push_back(search_schedules<std::string>(program, part));
        CHECK(parts.back().schedules < whole.schedules);  // each shard did a part
      }
      const WordsSearch merged = merge_shards<std::string>(parts);
      CHECK(merged.schedules == whole.schedules);
      CHECK(merged.complete == whole.complete);
      REQUIRE(merged.outcomes.size() == whole.outcomes.size());
      for (size_t i = 0; i < whole.outcomes.size(); ++i) {
        CHECK(merged.outcomes[i].outcome == whole.outcomes[i].outcome);
        CHECK(merged.outcomes[i].schedules == whole.outcomes[i].schedules);
        if (kind == SearchKind::Exhaustive) CHECK(merged.outcomes[i].schedule == whole.outcomes[i].schedule);
      }
    }
  }
}

TEST_CASE("a search cut short by max_schedules says it is not complete") {
  const WordsSearch r = search_schedules<std::string>(letters({3, 3}), {.preemption_bound = 100, .max_schedules = 10});
  CHECK(r.schedules == 10);
  CHECK_FALSE(r.complete);
}

TEST_CASE("a program that does not repeat itself under the same choices is refused, not searched") {
  int runs = 0;
  const WordsSearch r = search_schedules<std::string>(
      [&runs](Scheduler& s) {
        const int threads = ++runs % 2 ? 2 : 3;  // another run, other threads
        for (int t = 0; t < threads; ++t) s.spawn([&s] { s.point(); });
        s.run();
        return std::string("done");
      },
      {.preemption_bound = 3});
  REQUIRE(r.error.has_value());
  CHECK(r.error->find("not deterministic") != std::string::npos);
  const WordsSearch bad_shard = search_schedules<std::string>(letters({1, 1}), {.shard = 2, .shards = 2});
  REQUIRE(bad_shard.error.has_value());
}

namespace {

// The exhaustive search as it was first written: each run's children are
// copies of its whole prefix plus one other pick, kept on a stack (memory
// quadratic in a run's length). The search now keeps its tree in linear
// memory; it must run the same schedules in the same order, so that every
// count, cut and representative stays what it was.
struct ReferenceRun {
  std::vector<std::vector<PyThreadId>> runnable;
  std::vector<PyThreadId> reached;
  std::vector<size_t> pick;
  std::string outcome, schedule;
  int preemptions = 0;
};

ReferenceRun reference_run(const WordsProgram& program, const std::vector<size_t>& prefix) {
  ReferenceRun run;
  Scheduler s([&](const std::vector<PyThreadId>& runnable, PyThreadId reached) -> size_t {
    const size_t at = run.pick.size();
    const size_t pick = at < prefix.size() ? prefix[at] : Scheduler::until_blocked_pick(runnable, reached);
    run.runnable.push_back(runnable);
    run.reached.push_back(reached);
    run.pick.push_back(pick);
    run.preemptions += reached != kNoThread && runnable[pick] != reached;
    run.schedule += (run.schedule.empty() ? "" : ".") + std::to_string(runnable[pick]);
    return pick;
  });
  run.outcome = program(s);
  return run;
}

std::vector<std::vector<size_t>> reference_children(const ReferenceRun& run, size_t from, int bound) {
  std::vector<std::vector<size_t>> out;
  int before = 0;
  for (size_t i = 0; i < run.pick.size(); ++i) {
    for (size_t alt = 0; i >= from && alt < run.runnable[i].size(); ++alt) {
      if (alt == run.pick[i]) continue;
      const bool preempts = run.reached[i] != kNoThread && run.runnable[i][alt] != run.reached[i];
      if (before + preempts > bound) continue;
      std::vector<size_t> child(run.pick.begin(), run.pick.begin() + static_cast<long>(i));
      child.push_back(alt);
      out.push_back(std::move(child));
    }
    before += run.reached[i] != kNoThread && run.runnable[i][run.pick[i]] != run.reached[i];
  }
  std::reverse(out.begin(), out.end());
  return out;
}

WordsSearch reference_search(const WordsProgram& program, const SearchOptions& o) {
  WordsSearch out;
  std::map<std::string, WordsClass> classes;
  uint64_t runs = 0;
  const uint64_t max_runs = o.max_schedules / o.shards + (o.max_schedules % o.shards != 0);
  auto tally = [&](const ReferenceRun& r) {
    auto [it, fresh] = classes.try_emplace(r.outcome, WordsClass{r.outcome, 1, r.schedule, r.preemptions});
    if (!fresh) {
      if (better_representative(r.preemptions, r.schedule, it->second)) {
        it->second.schedule = r.schedule;
        it->second.preemptions = r.preemptions;
      }
      ++it->second.schedules;
    }
    ++out.schedules;
  };
  auto finish = [&] {
    for (auto& [_, c] : classes) out.outcomes.push_back(c);
    return out;
  };
  std::deque<std::vector<size_t>> frontier{{}};
  uint64_t shared = 0;
  while (o.shards > 1 && !frontier.empty() && frontier.size() < 4 * size_t{o.shards}) {
    if (runs >= max_runs) return finish();
    std::vector<size_t> prefix = std::move(frontier.front());
    frontier.pop_front();
    const ReferenceRun r = reference_run(program, prefix);
    ++runs;
    if (shared++ % o.shards == o.shard) tally(r);
    for (auto& child : reference_children(r, prefix.size(), o.preemption_bound)) frontier.push_back(std::move(child));
  }
  std::vector<std::vector<size_t>> stack;
  for (size_t i = 0; i < frontier.size(); ++i)
    if (o.shards == 1 || i % o.shards == o.shard) stack.push_back(std::move(frontier[i]));
  std::reverse(stack.begin(), stack.end());
  while (!stack.empty()) {
    if (runs >= max_runs) return finish();
    std::vector<size_t> prefix = std::move(stack.back());
    stack.pop_back();
    const ReferenceRun r = reference_run(program, prefix);
    ++runs;
    tally(r);
    for (auto& child : reference_children(r, prefix.size(), o.preemption_bound)) stack.push_back(std::move(child));
  }
  out.complete = true;
  return finish();
}

// Threads that take a lock of their own in turn, `rounds` times each: every
// wait is a choice where the thread that reached it cannot go on (no
// preemption), so the tree is deep as well as wide.
WordsProgram contended(int threads, int rounds) {
  return [threads, rounds](Scheduler& s) {
    std::string log;
    ImportLocks locks;
    for (int t = 0; t < threads; ++t)
      s.spawn([&s, &log, &locks, t, rounds] {
        for (int i = 0; i < rounds; ++i) {
          locks.hook_lock_acquire(s, 0, false);
          log += static_cast<char>('a' + t);
          s.point();
          locks.hook_lock_release(s, 0);
        }
      });
    s.run();
    return log;
  };
}

void check_same(const WordsSearch& got, const WordsSearch& want) {
  REQUIRE_FALSE(got.error.has_value());
  CHECK(got.schedules == want.schedules);
  CHECK(got.complete == want.complete);
  REQUIRE(got.outcomes.size() == want.outcomes.size());
  for (size_t i = 0; i < want.outcomes.size(); ++i) {
    CAPTURE(i);
    CHECK(got.outcomes[i].outcome == want.outcomes[i].outcome);
    CHECK(got.outcomes[i].schedules == want.outcomes[i].schedules);
    CHECK(got.outcomes[i].schedule == want.outcomes[i].schedule);
    CHECK(got.outcomes[i].preemptions == want.outcomes[i].preemptions);
  }
}

}  // namespace

TEST_CASE("the exhaustive search runs the schedules the first search ran, in its order, cut where it was cut") {
  struct Program {
    const char* name;
    WordsProgram run;
  };
  const std::vector<Program> programs{{"letters 3 3", letters({3, 3})},
                                      {"letters 2 2 1", letters({2, 2, 1})},
                                      {"letters 1 0 2 1", letters({1, 0, 2, 1})},
                                      {"crossing locks", crossing},
                                      {"global cycle", global_cycle},
                                      {"contended 2 x 3", contended(2, 3)},
                                      {"contended 3 x 2", contended(3, 2)}};
  for (const Program& p : programs)
    for (int bound : {0, 1, 2, 3})
      for (uint64_t max : {uint64_t{1}, uint64_t{7}, uint64_t{60}, uint64_t{10000}})
        for (uint32_t shards : {1u, 2u, 5u})
          for (uint32_t shard = 0; shard < shards; ++shard)
            // keep_choices 1: every node but the one searched drops its
            // choices and gets them back by running again.
            for (uint64_t keep : {uint64_t{0}, uint64_t{1}}) {
              CAPTURE(p.name);
              CAPTURE(bound);
              CAPTURE(max);
              CAPTURE(shard);
              CAPTURE(shards);
              CAPTURE(keep);
              const SearchOptions o{.preemption_bound = bound,
                                    .max_schedules = max,
                                    .shard = shard,
                                    .shards = shards,
                                    .keep_choices = keep};
              check_same(search_schedules<std::string>(p.run, o), reference_search(p.run, o));
            }
}

TEST_CASE("the exhaustive search keeps memory linear in a run's length") {
  // Two threads of 3,000 points each: the first search copied every
  // child's prefix, about 9 million choices for the first run alone.
  for (int points : {300, 3000}) {
    CAPTURE(points);
    const WordsSearch r = search_schedules<std::string>(letters({points, points}), {.preemption_bound = 2, .max_schedules = 5});
    REQUIRE_FALSE(r.error.has_value());
    CHECK(r.longest_run > static_cast<uint64_t>(points));
    // The default budget: eight runs' worth past the path, plus the path
    // and the node searched.
    CHECK(r.peak_kept_choices <= 10 * r.longest_run + 4096);
  }
  // A deep tree under a small budget: the choices dropped are got back by
  // running again, and what is kept stays within the budget and the path.
  const WordsSearch deep = search_schedules<std::string>(contended(3, 4), {.preemption_bound = 1, .keep_choices = 64});
  REQUIRE_FALSE(deep.error.has_value());
  CHECK(deep.complete);
  CHECK(deep.rerun_runs > 0);
  CHECK(deep.peak_kept_choices <= 64 + 3 * deep.longest_run);
  check_same(deep, reference_search(contended(3, 4), {.preemption_bound = 1}));
}
