// One Python thread's state. CPython keeps some of it per thread (the frame
// stack, the exception in flight), the finders keep the rest in a
// threading.local (the fix's _resolving, a hook's thread_set guard), and
// impsim counts per thread what the thread did: the run's counters are the
// threads' summed, a label's are its own thread's difference, so one
// thread never counts another's work.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "impsim/base/count.h"
#include "impsim/engine/meta_path.h"
#include "impsim/engine/recursion.h"
#include "impsim/model/model.h"
#include "impsim/scenario/counters.h"
#include "impsim/scenario/hook_counters.h"
#include "impsim/scenario/names.h"

namespace impsim {

// A Python exception in flight through the simulated interpreter.
struct PyError {
  std::string type;                    // "ModuleNotFoundError", "KeyError", ...
  std::string message;                 // str(exc)
  std::vector<std::string> traceback;  // step pointers, outermost first
  // ImportCycleError (3.15, PEP 810) is an ImportError too.
  bool is_import_error() const {
    return type == "ImportError" || type == "ModuleNotFoundError" || type == "ImportCycleError";
  }
};

// What the step engine counts, in machine words: one add each where a
// Count would test for its big form first. Each is at most the events
// stepped (a uint64 too) except comparisons, which comparisons_wrapped()
// folds into PyThread::totals before it wraps.
struct StepCounts {
  // No walks: every toggle walks sys.modules once (TorchProxyMetaFinder::count_walk), so
  // counters() reads the walks off the toggles.
  uint64_t asks = 0, suppressed = 0, lookups = 0, toggles = 0, comparisons = 0;
};

// A labelled step running, with the finder objects called since it began
// and their count then. A step's serial is larger than any step's begun
// before it; region_mark (by FinderId) is the serial of the latest step
// that noted the object, so a step has noted object f exactly when
// region_mark[f] >= its serial.
struct HookRegion {
  uint64_t serial;
  std::vector<std::pair<FinderId, Count>> called;
};

struct PyThread {
  std::vector<ModuleId> frames;  // module bodies and calls on the Python stack
  // The innermost scenario step running (each step keeps its caller's on
  // the C++ stack): read at every toggle, so a pointer, not a stack.
  const CStep* step = nullptr;
  int body_depth = 0;              // frames, checked against --max-body-depth
  int guard_depth = 0;             // guards open (nest levels included)
  uint64_t depth = 0;              // current lookup nesting (_find_spec_for_specific_module)
  uint64_t high = 0;               // deepest lookup since the innermost region began
  uint64_t search_depth = 0;       // current _find_spec nesting (hook scenarios)
  uint64_t hook_call_depth = 0;    // current nesting of hook find_spec calls
  uint64_t label_search_high = 0;  // deepest _find_spec since the innermost label began
  uint64_t label_hook_high = 0;    // deepest hook find_spec call since the innermost label began
  // The Python frames CPython would have open (recursion.h): the program's
  // top level is 1; each open search keeps its caller's depth here.
  int64_t py_depth = 1;
  bool py_in_hook = false;                                // the innermost frame is a hook's find_spec
  SearchEntry next_entry = SearchEntry::ImportStatement;  // how the next search is entered
  std::vector<std::pair<int64_t, bool>> py_outer;         // py_depth, py_in_hook of each open search

  // threading.local state of the finders.
  std::vector<char> resolving;         // the fix's _resolving names, by NameId
  std::vector<NameId> resolving_list;  // the same names, in the order they were added
  std::vector<NameId> thread_finding;  // a hook's thread_set guard

  // What this thread did.
  StepCounts counts;
  Counters totals;             // replayed deltas and wrapped comparisons
  uint64_t peak_depth = 0;     // its deepest lookup
  HookCounters hook_counters;  // hook scenarios
  std::vector<HookRegion> hook_regions;
  std::vector<uint64_t> region_mark;  // by FinderId
  uint64_t next_region = 0;

  // CPython 3.14: the sys.meta_path each open _find_spec walks (a deque:
  // a nested search's push leaves the outer one's list where it is). Its
  // loop holds the list across scheduling points, so a switch's swap of the
  // thread's state (ThreadedImport::install_thread) moves the deque, never its
  // lists, and a parked thread is never copied (EngineContext::parked_).
  std::deque<MetaPath> meta_path_snapshots;

  std::optional<PyError> error;  // the exception that ended it
  // The module locks a _DeadlockError raised in this thread keeps alive:
  // its traceback holds the frames of _ModuleLockManager.__enter__ and
  // _ModuleLock.acquire, and with them the lock, until the exception is
  // discarded. Nothing the engine runs catches one (an optional import
  // catches ImportError), so that is the thread's end.
  std::vector<NameId> deadlock_refs;

  // totals plus what was stepped since.
  Counters counters() const {
    Counters c = totals;
    c.asks += counts.asks;
    c.suppressed += counts.suppressed;
    c.lookups += counts.lookups;
    c.toggles += counts.toggles;
    c.walks += counts.toggles;
    c.comparisons += counts.comparisons;
    c.max_depth = peak_depth;
    return c;
  }
};

}  // namespace impsim
