// What impsim keeps about a run that Python does not have: its bounds, the
// events counted against them, each label's totals, the trace sink and the
// fast engine's memo.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "impsim/base/count.h"
#include "impsim/engine/memo.h"
#include "impsim/engine/trace_sink.h"
#include "impsim/scenario/counters.h"
#include "impsim/scenario/hook_counters.h"
#include "impsim/scenario/results.h"

namespace impsim {

// No bound on simulated events.
inline constexpr uint64_t kNoEventLimit = UINT64_MAX;
inline constexpr uint64_t kDefaultMaxEvents = 500'000'000;

struct EngineLimits {
  // Simulated finder asks + toggles, replayed ones included: one meaning in
  // both engines, so the same flag stops both at the same event. Unset: 500
  // million for the step engine, no bound for the fast one (a replayed ask
  // costs nothing; max_work bounds what it does).
  std::optional<uint64_t> max_events;
  // Events actually stepped (not answered from memory): the work done.
  // Unset: no bound for the step engine (it steps every event, so
  // max_events bounds it), 500 million for the fast one.
  std::optional<uint64_t> max_work;
  // What an unset bound means (a field so tests can reach "the default was
  // hit" without stepping 500 million events).
  uint64_t default_bound = kDefaultMaxEvents;
  int max_lookup_depth = 200;       // nested _find_spec_for_specific_module
  int max_body_depth = 200;         // nested module bodies, calls and parent imports
  int max_guard_depth = 5000;       // guards open at once (nest levels included)
  uint64_t max_steps = 10'000'000;  // scenario steps run (repeats counted), events or not
  // Hook scenarios: finder objects a run has besides the interpreter's four
  // (those "finders" declares and those `new` steps make: each is a row of
  // every report), and the length of sys.meta_path (every insert moves the
  // list, every search walks it).
  uint64_t max_objects = 10'000;
  uint64_t max_meta_path = 10'000;
};

// A resource bound was reached: the run stops where it is (exit status 3).
struct LimitReached {
  std::string limit;  // "max-events", "lookup-depth", "body-depth"
  std::string detail;
  std::vector<std::string> traceback;
};

struct LabelTotals {
  Counters counters;
  Results results;
  HookCounters hooks;  // hook scenarios only
  // Hook scenarios: sys.meta_path as the step last ended (unset: it never has).
  std::optional<std::vector<FinderId>> meta_path;
};

struct Bookkeeping {
  EngineLimits limits;
  uint64_t max_events;  // limits.max_events resolved for this engine kind
  uint64_t max_work;
  // Events stepped, counted down: count_event is `--events_left < 0`, one
  // instruction and a branch at every ask and toggle (a count up compared
  // with the limit took five). One event past the limit leaves it at -1.
  int64_t events_left = 0;
  uint64_t events_base = 0;  // stepped_events() + events_left
  uint64_t stepped_events() const { return events_base - static_cast<uint64_t>(events_left); }
  Count replayed_events = 0;
  uint64_t steps_run = 0;
  uint64_t walk_peak = 0;  // the largest len(sys.modules) a walk examined
  uint64_t last_walk = 0;
  uint64_t copies_moves = 0;  // times the number of copies of P changed
  // The step that made the last move, as of `copies_moves_seen` moves: the
  // moves since were made by the step running now (EngineContext::copies_changed_by).
  // A toggle only counts its move; the step is written down when the step
  // running changes (EngineContext::enter_step), not at each of a lookup's toggles.
  const CStep* copies_changed_by = nullptr;
  uint64_t copies_moves_seen = 0;
  std::vector<LabelTotals> labels;
  std::optional<LimitReached> limit;
  TraceSink* trace = nullptr;
  TraceTally* tally = nullptr;  // trace->tally, where a TalliedRun counts (run_mode.h)
  Memo memo;
};

}  // namespace impsim
