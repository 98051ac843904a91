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
// The threads a choice can name: one bit each (a scenario has 16 at most).
constexpr PyThreadId kMaxSearchThreads = 32;

// One choice point of a run, in 8 bytes (a schedule search keeps a run's
// choices, and a long run has hundreds of thousands): who could run (a bit
// per thread), who reached it (kNoThread when it finished or waits), and
// the index picked among those who could run, by id.
struct Choice {
  uint32_t runnable = 0;
  int16_t reached = kNoThread;
  uint16_t pick = 0;

  size_t options() const { return static_cast<size_t>(__builtin_popcount(runnable)); }
  // The thread at `index` among those who could run.
  PyThreadId thread(size_t index) const {
    uint32_t bits = runnable;
    for (size_t i = 0; i < index; ++i) bits &= bits - 1;
    return static_cast<PyThreadId>(__builtin_ctz(bits));
  }
  PyThreadId picked() const { return thread(pick); }
  bool preempts_with(size_t index) const { return reached != kNoThread && thread(index) != reached; }
  bool preempts() const { return preempts_with(pick); }
};

template <class O>
struct Run {
  std::vector<Choice> choices;
  O outcome;
  std::string schedule;
  int preemptions = 0;
  bool diverged = false;  // a prefix choice the program no longer offers
};

// A program with more threads than a Choice can name.
struct TooManyThreads {};

// Runs the program once under `decide` (which returns an index into
// runnable, or nothing for run_until_blocked's pick), recording each choice.
using Decide = std::function<std::optional<size_t>(size_t at, const std::vector<PyThreadId>&, PyThreadId)>;

template <class O>
Run<O> run_program(const ScheduledProgramOf<O>& program, const Decide& decide) {
  Run<O> run;
  Scheduler s([&](const std::vector<PyThreadId>& runnable, PyThreadId reached) -> size_t {
    std::optional<size_t> pick = decide(run.choices.size(), runnable, reached);
    if (pick && *pick >= runnable.size()) {
      run.diverged = true;
      pick.reset();
    }
    Choice c;
    for (PyThreadId t : runnable) {
      if (t < 0 || t >= kMaxSearchThreads) throw TooManyThreads{};
      c.runnable |= uint32_t{1} << t;
    }
    c.reached = static_cast<int16_t>(reached);
    c.pick = static_cast<uint16_t>(pick.value_or(Scheduler::until_blocked_pick(runnable, reached)));
    run.preemptions += c.preempts() ? 1 : 0;
    run.schedule += fmt::format("{}{}", run.schedule.empty() ? "" : ".", runnable[c.pick]);
    run.choices.push_back(c);
    return c.pick;
  });
  run.outcome = program(s);
  return run;
}

// Follows `prefix` (indices), then run_until_blocked.
template <class O>
Run<O> run_prefix(const ScheduledProgramOf<O>& program, const std::vector<uint16_t>& prefix) {
  return run_program(program, [&](size_t at, const std::vector<PyThreadId>&, PyThreadId) -> std::optional<size_t> {
    if (at < prefix.size()) return prefix[at];
    return std::nullopt;
  });
}

// Follows `ids` (threads), then run_until_blocked. Where an id cannot run:
// `strict`, the run has diverged; else run_until_blocked's pick there.
template <class O>
Run<O> run_ids(const ScheduledProgramOf<O>& program, const std::vector<PyThreadId>& ids, bool strict) {
  return run_program(program,
                     [&](size_t at, const std::vector<PyThreadId>& runnable, PyThreadId) -> std::optional<size_t> {
                       if (at >= ids.size()) return std::nullopt;
                       const auto it = std::find(runnable.begin(), runnable.end(), ids[at]);
                       if (it != runnable.end()) return static_cast<size_t>(it - runnable.begin());
                       return strict ? std::optional<size_t>(runnable.size()) : std::nullopt;
                     });
}

template <class O>
std::vector<PyThreadId> picked_ids(const Run<O>& run) {
  std::vector<PyThreadId> ids;
  for (const Choice& c : run.choices) ids.push_back(c.picked());
  return ids;
}

}  // namespace

// Total, so that merging shards picks what one search would.
bool better_representative(int preemptions, const std::string& schedule, int than_preemptions,
                           const std::string& than_schedule) {
  return std::make_tuple(preemptions, schedule.size(), std::string_view(schedule)) <
         std::make_tuple(than_preemptions, than_schedule.size(), std::string_view(than_schedule));
}

namespace {

template <class O>
class Tally {
 public:
  void add(const Run<O>& run) {
    add(OutcomeClassOf<O>{run.outcome, 1, run.schedule, run.preemptions});
    ++runs_;
  }
  void add(const OutcomeClassOf<O>& o) {
    auto [it, fresh] = classes_.try_emplace(o.outcome, o);
    if (fresh) return;
    OutcomeClassOf<O>& c = it->second;
    if (better_representative(o.preemptions, o.schedule, c)) {
      c.schedule = o.schedule;
      c.preemptions = o.preemptions;
    }
    c.schedules += o.schedules;
  }
  uint64_t runs() const { return runs_; }
  std::vector<OutcomeClassOf<O>> classes() const {
    std::vector<OutcomeClassOf<O>> out;
    for (const auto& [_, c] : classes_) out.push_back(c);
    return out;
  }
  std::map<O, OutcomeClassOf<O>>& by_outcome() { return classes_; }

 private:
  std::map<O, OutcomeClassOf<O>> classes_;
  uint64_t runs_ = 0;
};

std::string diverged_error(size_t prefix) {
  return fmt::format(
      "the program made other choices under the same schedule (prefix of {} choices): it is not deterministic, so "
      "no search of its schedules can be trusted",
      prefix);
}

// The exhaustive search's tree, kept in memory linear in a run's length.
//
// Each run is a node. Its schedule is its parent's up to one choice, then
// another pick there (`alt`), then the picks its own run made; a node keeps
// only those own choices, and a child's prefix is read back through its
// ancestors. Copying each child's whole prefix (as the search first did)
// made a run of L choices cost L^2 / 2 before it even ran a child: 3 GB for
// two threads of 20,000 imports.
//
// The search's stack holds, per node, where its next child is (a cursor),
// not its children: they are found one at a time, in the order a
// depth-first search of the whole list took them (the earliest choice
// first, then the lowest pick), so the schedules run, their order and the
// representatives chosen are what they were. A node's choices past its
// cursor are needed only when the search comes back to it; past a budget
// (kKeptRuns runs' worth of choices) the ones of the nodes nearest the root
// are dropped, keeping what their descendants' prefixes read, and got back
// by running the node's schedule again when the search returns to it.
struct Node {
  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  // A chain of ancestors let go one at a time, not by recursion: a search
  // of a contended program can be thousands of nodes deep.
  ~Node() {
    if (kept) *kept -= own.size();
    std::shared_ptr<Node> p = std::move(parent);
    while (p && p.use_count() == 1) {
      std::shared_ptr<Node> next = std::move(p->parent);
      p.reset();
      p = std::move(next);
    }
  }

  std::shared_ptr<Node> parent;
  uint32_t prefix = 0;         // the choices its run followed: its parent's before prefix - 1, then alt
  uint16_t alt = 0;            // the pick at choice prefix - 1 (no parent: none)
  int prefix_preemptions = 0;  // preemptions among the choices before `prefix`
  uint32_t length = 0;         // the choices its run made
  // The run's choices from `prefix` on: all of them, or (trimmed) those
  // before the child whose subtree the search is in.
  std::vector<Choice> own;
  size_t* kept = nullptr;  // the search's count of the choices its nodes keep
  bool whole() const { return own.size() == length - prefix; }
};

// A child still to run: of `node` (null: the root, the empty schedule), at
// choice `i`, picking `alt` there. `single`: a frontier's one child (the
// shards' shared top); else a cursor that moves on to the node's next child.
struct Pending {
  std::shared_ptr<Node> node;
  uint32_t i = 0;
  uint16_t alt = 0;
  int before = 0;  // the node's run's preemptions before choice i
  bool single = true;
};

// How many runs' choices a search keeps past the path it is on.
constexpr size_t kKeptRuns = 8;

template <class O>
class ExhaustiveSearch {
 public:
  ExhaustiveSearch(const ScheduledProgramOf<O>& program, const SearchOptions& o, ScheduleSearchOf<O>& out, Tally<O>& tally)
      : program_(program), o_(o), out_(out), tally_(tally) {}

  void search() {
    const uint64_t max_runs = o_.max_schedules / o_.shards + (o_.max_schedules % o_.shards != 0);
    // Shards share the top of the tree: each runs it breadth first until the
    // frontier has a few nodes a shard, counts the runs whose number falls
    // to it, then searches depth first the frontier's nodes that fall to it.
    std::deque<Pending> frontier{Pending{}};
    uint64_t shared = 0;
    while (o_.shards > 1 && !frontier.empty() && frontier.size() < 4 * size_t{o_.shards}) {
      if (runs_ >= max_runs) return;
      Pending p = std::move(frontier.front());
      frontier.pop_front();
      std::shared_ptr<Node> node = run_child(p, shared++ % o_.shards == o_.shard);
      if (!node) return;
      // In the order the breadth-first search queued them: the last
      // choice's last pick first.
      std::vector<Pending> kids;
      for (Pending c = first_child(node); seek(c); ++c.alt) kids.push_back(c);
      for (auto it = kids.rbegin(); it != kids.rend(); ++it) frontier.push_back(std::move(*it));
    }
    std::vector<Pending> stack;
    for (size_t i = 0; i < frontier.size(); ++i)
      if (o_.shards == 1 || i % o_.shards == o_.shard) stack.push_back(std::move(frontier[i]));
    frontier.clear();
    std::reverse(stack.begin(), stack.end());
    while (!stack.empty()) {
      if (runs_ >= max_runs) return;
      Pending taken = stack.back();
      Pending& top = stack.back();
      if (top.single) {
        stack.pop_back();
      } else {
        ++top.alt;
        if (!seek(top)) {
          // Its last child: the node keeps what that child's prefix reads.
          trim(*top.node, taken.i);
          stack.pop_back();
        }
      }
      if (out_.error) return;  // a node's choices could not be had again
      std::shared_ptr<Node> node = run_child(taken, true);
      if (!node) return;
      Pending c = first_child(node);
      if (!seek(c)) continue;
      c.single = false;
      stack.push_back(std::move(c));
      keep_within_budget(stack);
    }
    out_.complete = true;
  }

 private:
  // The prefix (picks by index) of a child of `node` at choice `i`.
  std::vector<uint16_t> prefix_of(const Node* node, uint32_t i, uint16_t alt) const {
    std::vector<uint16_t> prefix(node ? size_t{i} + 1 : 0);
    if (!node) return prefix;
    prefix[i] = alt;
    for (uint32_t upto = i; node; node = node->parent.get()) {
      for (uint32_t j = node->prefix; j < upto; ++j) prefix[j] = node->own[j - node->prefix].pick;
      if (node->prefix == 0) break;
      prefix[node->prefix - 1] = node->alt;
      upto = node->prefix - 1;
    }
    return prefix;
  }

  // Runs the child `p` stands for; tallies it when `counted`. Null when
  // the program diverged (out_.error says so).
  std::shared_ptr<Node> run_child(const Pending& p, bool counted) {
    Run<O> run = run_prefix(program_, prefix_of(p.node.get(), p.i, p.alt));
    ++runs_;
    const uint32_t prefix = p.node ? p.i + 1 : 0;
    if (run.diverged || run.choices.size() < prefix) {
      out_.error = diverged_error(prefix);
      return nullptr;
    }
    if (counted) tally_.add(run);
    longest_ = std::max(longest_, run.choices.size());
    auto node = std::make_shared<Node>();
    node->parent = p.node;
    node->prefix = prefix;
    node->alt = p.alt;
    for (uint32_t j = 0; j < prefix; ++j) node->prefix_preemptions += run.choices[j].preempts() ? 1 : 0;
    node->length = static_cast<uint32_t>(run.choices.size());
    node->own.assign(run.choices.begin() + prefix, run.choices.end());
    node->kept = &kept_;
    kept_ += node->own.size();
    out_.peak_kept_choices = std::max<uint64_t>(out_.peak_kept_choices, kept_);
    out_.longest_run = longest_;
    return node;
  }

  static Pending first_child(const std::shared_ptr<Node>& node) {
    return Pending{node, node->prefix, 0, node->prefix_preemptions, true};
  }

  // Moves `p` to its node's next child at or after (i, alt) whose
  // preemptions stay within the bound; false when there is none.
  bool seek(Pending& p) {
    Node& n = *p.node;
    while (p.i < n.length) {
      if (!n.whole() && !restore(n)) return false;
      const Choice& c = n.own[p.i - n.prefix];
      for (; p.alt < c.options(); ++p.alt)
        if (p.alt != c.pick && p.before + (c.preempts_with(p.alt) ? 1 : 0) <= o_.preemption_bound) return true;
      p.before += c.preempts() ? 1 : 0;
      ++p.i;
      p.alt = 0;
    }
    return false;
  }

  // The node's choices before `i`: what its descendants' prefixes read.
  void trim(Node& n, uint32_t i) {
    const size_t keep = i - n.prefix;
    if (n.own.size() <= keep) return;
    kept_ -= n.own.size() - keep;
    n.own.resize(keep);
    n.own.shrink_to_fit();
  }

  // A trimmed node's choices, back from a run of its schedule (not a
  // schedule of the search: counted nowhere).
  bool restore(Node& n) {
    Run<O> run = run_prefix(program_, n.prefix == 0 ? std::vector<uint16_t>{} : prefix_of(n.parent.get(), n.prefix - 1, n.alt));
    bool same = !run.diverged && run.choices.size() == n.length;
    for (size_t j = 0; same && j < n.own.size(); ++j) same = run.choices[n.prefix + j].pick == n.own[j].pick;
    if (!same) {
      out_.error = diverged_error(n.prefix);
      return false;
    }
    kept_ += n.length - n.prefix - n.own.size();
    n.own.assign(run.choices.begin() + n.prefix, run.choices.end());
    ++out_.rerun_runs;
    out_.peak_kept_choices = std::max<uint64_t>(out_.peak_kept_choices, kept_);
    return true;
  }

  // Past the budget, the stack's nodes nearest the root keep only what
  // their descendants read (the top node keeps all: it is searched next).
  void keep_within_budget(std::vector<Pending>& stack) {
    const size_t budget = o_.keep_choices ? o_.keep_choices : kKeptRuns * longest_ + 4096;
    for (size_t k = 0; kept_ > budget && k + 1 < stack.size(); ++k) {
      Pending& p = stack[k];
      if (p.single || !p.node->whole()) continue;
      // The child being searched under it is the one before its cursor.
      trim(*p.node, p.i);
    }
  }

  const ScheduledProgramOf<O>& program_;
  const SearchOptions& o_;
  ScheduleSearchOf<O>& out_;
  Tally<O>& tally_;
  uint64_t runs_ = 0;
  size_t longest_ = 0;  // choices of the longest run so far
  size_t kept_ = 0;     // choices the stack's nodes keep
};

template <class O>
void search_exhaustive(const ScheduledProgramOf<O>& program, const SearchOptions& o, ScheduleSearchOf<O>& out, Tally<O>& tally) {
  ExhaustiveSearch<O>(program, o, out, tally).search();
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

template <class O>
Run<O> run_random(const ScheduledProgramOf<O>& program, uint64_t seed) {
  Random rng(seed);
  return run_program(program, [&](size_t, const std::vector<PyThreadId>& runnable, PyThreadId) {
    return std::optional<size_t>(rng.below(runnable.size()));
  });
}

template <class O>
Run<O> run_pct(const ScheduledProgramOf<O>& program, uint64_t seed, int depth, size_t points) {
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
template <class O>
void shrink(const ScheduledProgramOf<O>& program, OutcomeClassOf<O>& c, uint64_t& runs) {
  std::optional<std::vector<PyThreadId>> ids = Scheduler::parse_schedule(c.schedule);
  if (!ids) return;
  Run<O> best = run_ids(program, *ids, false);
  ++runs;
  for (bool progress = true; progress && runs < kMaxShrinkRuns;) {
    progress = false;
    for (size_t i = 0; i < best.choices.size() && !progress; ++i) {
      const Choice& ch = best.choices[i];
      if (!ch.preempts()) continue;
      std::vector<PyThreadId> candidate = picked_ids(best);
      candidate[i] = ch.reached;
      Run<O> run = run_ids(program, candidate, false);
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

template <class O>
void search_sampled(const ScheduledProgramOf<O>& program, const SearchOptions& o, ScheduleSearchOf<O>& out, Tally<O>& tally) {
  // PCT's k: the choice points of a run that lets each thread go on.
  const size_t points = o.kind == SearchKind::Pct ? run_prefix(program, {}).choices.size() : 0;
  for (uint64_t r = o.shard; r < o.max_schedules; r += o.shards) {
    const uint64_t seed = mix(o.seed ^ mix(r));
    tally.add(o.kind == SearchKind::Pct ? run_pct(program, seed, o.pct_depth, points) : run_random(program, seed));
  }
  for (auto& [_, c] : tally.by_outcome()) shrink(program, c, out.shrink_runs);
}

}  // namespace

template <class O>
ScheduleSearchOf<O> search_schedules(const ScheduledProgramOf<O>& program, const SearchOptions& options) {
  ScheduleSearchOf<O> out;
  out.options = options;
  if (options.shards == 0 || options.shard >= options.shards) {
    out.error =
        fmt::format("shard {} of {}: a shard is a number from 0 to the count less one", options.shard, options.shards);
    return out;
  }
  Tally<O> tally;
  try {
    if (options.kind == SearchKind::Exhaustive)
      search_exhaustive(program, options, out, tally);
    else
      search_sampled(program, options, out, tally);
  } catch (const TooManyThreads&) {
    out.error = fmt::format("a thread numbered {} or more: a schedule search names {} threads at most",
                            kMaxSearchThreads, kMaxSearchThreads);
    out.complete = false;
  }
  out.outcomes = tally.classes();
  out.schedules = tally.runs();
  return out;
}

template <class O>
ScheduleSearchOf<O> merge_shards(const std::vector<ScheduleSearchOf<O>>& shards) {
  ScheduleSearchOf<O> out;
  if (shards.empty()) return out;
  out.options = shards.front().options;
  out.options.shard = 0;
  out.options.shards = 1;
  out.complete = true;
  Tally<O> tally;
  for (const ScheduleSearchOf<O>& s : shards) {
    for (const OutcomeClassOf<O>& c : s.outcomes) tally.add(c);
    // Shards from files are checked before they get here; a sum that
    // would wrap is still refused, never printed.
    if (__builtin_add_overflow(out.schedules, s.schedules, &out.schedules) ||
        __builtin_add_overflow(out.shrink_runs, s.shrink_runs, &out.shrink_runs)) {
      out.error = "the shards' counts add up past 2^64 - 1: they are not shards of one search";
      out.complete = false;
    }
    out.complete = out.complete && s.complete;
    if (s.error && !out.error) out.error = s.error;
  }
  out.outcomes = tally.classes();
  return out;
}

template <class O>
std::optional<ScheduleReplayOf<O>> replay_schedule(const ScheduledProgramOf<O>& program, const std::string& schedule) {
  std::optional<std::vector<PyThreadId>> ids = Scheduler::parse_schedule(schedule);
  if (!ids) return std::nullopt;
  try {
    Run<O> run = run_ids(program, *ids, true);
    if (run.diverged) return std::nullopt;
    return ScheduleReplayOf<O>{run.outcome, run.preemptions};
  } catch (const TooManyThreads&) {
    return std::nullopt;
  }
}

// The outcomes searched: a threaded run's, and the words of the tests'
// small programs.
template ScheduleSearchOf<ThreadedOutcome> search_schedules(const ScheduledProgramOf<ThreadedOutcome>&,
                                                            const SearchOptions&);
template ScheduleSearchOf<ThreadedOutcome> merge_shards(const std::vector<ScheduleSearchOf<ThreadedOutcome>>&);
template std::optional<ScheduleReplayOf<ThreadedOutcome>> replay_schedule(const ScheduledProgramOf<ThreadedOutcome>&,
                                                                          const std::string&);
template ScheduleSearchOf<std::string> search_schedules(const ScheduledProgramOf<std::string>&, const SearchOptions&);
template ScheduleSearchOf<std::string> merge_shards(const std::vector<ScheduleSearchOf<std::string>>&);
template std::optional<ScheduleReplayOf<std::string>> replay_schedule(const ScheduledProgramOf<std::string>&,
                                                                      const std::string&);

}  // namespace impsim
