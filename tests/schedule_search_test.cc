// search_schedules: every interleaving once, the preemption bound checked
// against a count made apart from the scheduler, outcomes grouped with a
// replayable representative, random and PCT searches, shards merged.
#include <doctest/doctest.h>

#include <functional>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "impsim/engine/schedule_search.h"

using namespace impsim;

namespace {

// Threads that each write their letter and reach a scheduling point
// points[t] times, then finish; the outcome is the letters in the order
// written, so each interleaving is an outcome of its own.
ScheduledProgram letters(std::vector<int> points) {
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
  std::string said[2];
  auto body = [&](int32_t mine, int32_t theirs) {
    return [&, mine, theirs] {
      const PyThreadId me = s.current();
      s.acquire_module(mine);
      const LockResult r = s.acquire_module(theirs);
      said[me] = r == LockResult::Deadlock ? "_DeadlockError" : "took both";
      if (r == LockResult::Acquired) s.release_module(theirs);
      s.release_module(mine);
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
  s.spawn([&] {
    s.acquire_global();
    s.acquire_module(5);
    s.release_module(5);
    s.release_global();
  });
  s.spawn([&] {
    s.acquire_module(5);
    s.acquire_global();
    s.release_global();
    s.release_module(5);
  });
  const ScheduleOutcome o = s.run();
  std::string out = o.hang ? "hang:" : "both finished";
  for (const std::string& w : o.waits) out += " " + w + ";";
  return out;
}

std::set<std::string> outcome_texts(const ScheduleSearch& r) {
  std::set<std::string> out;
  for (const OutcomeClass& c : r.outcomes) out.insert(c.outcome);
  return out;
}

// Each representative replays to its outcome with the preemptions it states.
void check_representatives(const ScheduledProgram& program, const ScheduleSearch& r) {
  uint64_t total = 0;
  for (const OutcomeClass& c : r.outcomes) {
    CAPTURE(c.outcome);
    CAPTURE(c.schedule);
    const std::optional<ScheduleReplay> again = replay_schedule(program, c.schedule);
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
    const ScheduleSearch r = search_schedules(letters(points), {.preemption_bound = 100});
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
      const ScheduleSearch r = search_schedules(letters(points), {.preemption_bound = bound});
      CHECK(r.complete);
      CHECK(r.schedules == words(points, bound));
      for (const OutcomeClass& c : r.outcomes) CHECK(c.preemptions <= bound);
    }
  }
  // Bound 0 is one schedule per choice of who starts and who goes on when a
  // thread finishes: 2 threads, 2 schedules.
  CHECK(words({3, 3}, 0) == 2);
}

TEST_CASE("crossing module locks: one preemption reaches _DeadlockError in either thread") {
  const ScheduleSearch none = search_schedules(crossing, {.preemption_bound = 0});
  CHECK(outcome_texts(none) == std::set<std::string>{"0: took both; 1: took both"});
  const ScheduleSearch one = search_schedules(crossing, {.preemption_bound = 1});
  CHECK(outcome_texts(one) == std::set<std::string>{"0: _DeadlockError; 1: took both",
                                                    "0: took both; 1: _DeadlockError", "0: took both; 1: took both"});
  for (const OutcomeClass& c : one.outcomes) CHECK(c.preemptions == (c.outcome.find("_Deadlock") != std::string::npos));
  check_representatives(crossing, one);
  const ScheduleSearch two = search_schedules(crossing, {});
  CHECK(outcome_texts(two) == outcome_texts(one));
  CHECK(two.schedules > one.schedules);
  check_representatives(crossing, two);
}

TEST_CASE("a cycle through the global import lock: the hang and who waits, from one preemption") {
  const ScheduleSearch r = search_schedules(global_cycle, {.preemption_bound = 2});
  CHECK(outcome_texts(r) == std::set<std::string>{"both finished",
                                                  "hang: thread 0 waits for the module lock of 5, held by thread 1; "
                                                  "thread 1 waits for the global import lock, held by thread 0;"});
  for (const OutcomeClass& c : r.outcomes) CHECK(c.preemptions == (c.outcome.starts_with("hang") ? 1 : 0));
  check_representatives(global_cycle, r);
}

TEST_CASE("random and PCT searches: the same from the same seed, shrunk to the fewest preemptions") {
  const ScheduleSearch all = search_schedules(crossing, {.preemption_bound = 100});
  for (SearchKind kind : {SearchKind::Random, SearchKind::Pct}) {
    CAPTURE(static_cast<int>(kind));
    const SearchOptions o{.kind = kind, .seed = 7, .max_schedules = 300};
    const ScheduleSearch a = search_schedules(crossing, o);
    const ScheduleSearch b = search_schedules(crossing, o);
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
    const ScheduleSearch other = search_schedules(crossing, {.kind = kind, .seed = 8, .max_schedules = 300});
    bool differs = false;
    for (size_t i = 0; i < other.outcomes.size() && i < a.outcomes.size(); ++i)
      differs = differs || other.outcomes[i].schedules != a.outcomes[i].schedules;
    CHECK(differs);  // another seed, other samples
  }
}

TEST_CASE("shards merge into the search they split") {
  const ScheduledProgram program = letters({2, 2, 1});
  for (SearchKind kind : {SearchKind::Exhaustive, SearchKind::Random, SearchKind::Pct}) {
    // The exhaustive search whole (136 schedules); 200 samples of the others.
    const SearchOptions o{.kind = kind,
                          .preemption_bound = 2,
                          .seed = 3,
                          .max_schedules = kind == SearchKind::Exhaustive ? 10000u : 200u};
    const ScheduleSearch whole = search_schedules(program, o);
    for (uint32_t n : {2u, 3u, 5u}) {
      CAPTURE(static_cast<int>(kind));
      CAPTURE(n);
      std::vector<ScheduleSearch> parts;
      for (uint32_t i = 0; i < n; ++i) {
        SearchOptions part = o;
        part.shard = i;
        part.shards = n;
        parts.push_back(search_schedules(program, part));
        CHECK(parts.back().schedules < whole.schedules);  // each shard did a part
      }
      const ScheduleSearch merged = merge_shards(parts);
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
  const ScheduleSearch r = search_schedules(letters({3, 3}), {.preemption_bound = 100, .max_schedules = 10});
  CHECK(r.schedules == 10);
  CHECK_FALSE(r.complete);
}

TEST_CASE("a program that does not repeat itself under the same choices is refused, not searched") {
  int runs = 0;
  const ScheduleSearch r = search_schedules(
      [&runs](Scheduler& s) {
        const int threads = ++runs % 2 ? 2 : 3;  // another run, other threads
        for (int t = 0; t < threads; ++t) s.spawn([&s] { s.point(); });
        s.run();
        return std::string("done");
      },
      {.preemption_bound = 3});
  REQUIRE(r.error.has_value());
  CHECK(r.error->find("not deterministic") != std::string::npos);
  const ScheduleSearch bad_shard = search_schedules(letters({1, 1}), {.shard = 2, .shards = 2});
  REQUIRE(bad_shard.error.has_value());
}
