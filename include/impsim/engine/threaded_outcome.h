// What one threaded run came to, as data: how each thread ended, whether
// the run stopped at a limit or hung (and on what), the modules left in
// sys.modules, what the finders left behind, and the counters.
//
// A schedule search runs a threaded scenario once per schedule and groups
// the runs by this value: two runs are one outcome class exactly when
// their outcomes are equal. It used to travel as the line the reports
// print, which every reader then searched or cut apart again ("hang:" in
// it? the counters past the end's text?); a line is for people, and a
// consumer that wants to know whether a run hung asks hung() instead.
// report/threaded_outcome_text.h writes the line from it, the same line
// as before, and shard documents carry it as JSON beside the line.
//
// The order below (the defaulted comparison) only keeps classes apart in
// a search's tally; the reports list them by their text, as they always
// have, whatever order the search holds them in.
//
// The outcome is in two parts: the end (what the threads end with, which
// is what `impsim compare` sets the designs side by side by) and the
// counters (which differ between designs by design: the fix suppresses
// asks), so that grouping by end is comparing one member.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "impsim/base/count.h"

namespace impsim {

// How one thread of the run ended.
struct ThreadEnd {
  enum class How : uint8_t {
    Returned,      // its program ran to the end
    Raised,        // an exception escaped it: `type` and `message`
    Waiting,       // still waiting when the run hung (the hang's waits say for what)
    NeverStarted,  // declared, but no step started it
  };
  std::string thread;
  How how = How::Returned;
  std::string type;
  std::string message;

  friend auto operator<=>(const ThreadEnd&, const ThreadEnd&) = default;
};

// One thread's wait in a hang: who waits, for what, held by whom. The
// reports group and compare hangs by these fields; the sentence a person
// reads is run/outcome_words.h's.
struct HangWait {
  enum class Kind : uint8_t {
    GlobalLock,  // the global import lock, held by `on`
    ModuleLock,  // the `_ModuleLock` of module `lock`, held by `on`
    HookLock,    // a hook's own threading.Lock / RLock, named `lock`, held by `on`
    Join,        // the end of thread `on` (`on.join()`)
  };
  std::string thread;  // the waiting thread's name ("main", "w")
  Kind kind = Kind::GlobalLock;
  // ModuleLock: the module's name ("a"); HookLock: what the hook's lock is
  // called everywhere it appears ("the threading.Lock of class virtualenv").
  std::string lock;
  // The thread holding the lock (a lock's holder stays while it is waited
  // for), or the thread joined.
  std::string on;

  friend auto operator<=>(const HangWait&, const HangWait&) = default;
};

// What the threads end with: everything of the outcome but the counters.
struct OutcomeEnd {
  // The threads in the order they were started, main first, then those
  // never started in the scenario's order. A run that started no thread
  // lists main only when it hung (as the line always has).
  std::vector<ThreadEnd> threads;
  // The limit the run stopped at ("max-events"), if it did.
  std::optional<std::string> stopped_at;
  // A hang: one wait per waiting thread, in the order of their ids. Empty:
  // no hang.
  std::vector<HangWait> hang;
  std::vector<std::string> sys_modules;       // names, sorted
  std::map<std::string, std::string> marks;   // module -> enabled | disabled | enabled+disabled
  int64_t proxy_copies = 0;                   // copies of Paddle's finder left in sys.meta_path

  bool hung() const { return !hang.empty(); }
  // Whether a thread ended by an exception of `type` (e.g. "_DeadlockError").
  bool raised(std::string_view type) const {
    for (const ThreadEnd& t : threads)
      if (t.how == ThreadEnd::How::Raised && t.type == type) return true;
    return false;
  }

  friend auto operator<=>(const OutcomeEnd&, const OutcomeEnd&) = default;
};

// The run's counters, summed over its threads.
struct OutcomeCounters {
  Count asks = 0;
  Count lookups = 0;
  Count toggles = 0;
  std::optional<Count> searches;  // hook scenarios only

  friend auto operator<=>(const OutcomeCounters&, const OutcomeCounters&) = default;
};

struct ThreadedOutcome {
  OutcomeEnd end;
  OutcomeCounters counters;

  bool hung() const { return end.hung(); }
  bool raised(std::string_view type) const { return end.raised(type); }

  friend auto operator<=>(const ThreadedOutcome&, const ThreadedOutcome&) = default;
};

}  // namespace impsim
