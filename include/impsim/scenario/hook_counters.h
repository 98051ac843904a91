// The counters of hook scenarios (docs/scenario-format.md, "Hook counters"):
// meta_path walks, hook finder calls (in total and per object), and the
// deepest nesting of _find_spec. Kept apart from Counters so the Paddle
// engine copies and adds nothing more per ask.
#pragma once

#include <vector>

#include "impsim/base/count.h"

namespace impsim {

struct HookCounters {
  Count searches = 0;         // runs of _find_spec (every walk of sys.meta_path)
  Count finder_calls = 0;     // calls of a hook finder object's find_spec, suppressed ones included
  Count max_depth = 0;        // deepest nesting of _find_spec
  Count legacy_warnings = 0;  // ImportWarnings of _find_spec_legacy (3.10, 3.11)
  Count hook_depth = 0;       // deepest nesting of hook objects' find_spec calls
  Count hook_reentries = 0;   // searches begun while a hook object's find_spec runs (in its thread)
  // Calls per finder object, by FinderId: the hook objects (their sum is
  // finder_calls) and BuiltinImporter, FrozenImporter, PathFinder (not in
  // finder_calls, so a hook expectation keeps its meaning); P: 0 (asks).
  std::vector<Count> by_object;

  // Adds the additive totals of `end - start`, not by_object (max_depth and hook_depth are not additive).
  void add_totals_delta(const HookCounters& end, const HookCounters& start) {
    searches += end.searches - start.searches;
    finder_calls += end.finder_calls - start.finder_calls;
    legacy_warnings += end.legacy_warnings - start.legacy_warnings;
    hook_reentries += end.hook_reentries - start.hook_reentries;
  }
  // The same totals, without the per-object counts (a labelled step's start).
  HookCounters totals() const {
    return {searches, finder_calls, max_depth, legacy_warnings, hook_depth, hook_reentries, {}};
  }
  // Adds the additive counters of `end - start` (max_depth and hook_depth are not additive).
  void add_delta(const HookCounters& end, const HookCounters& start) {
    add_totals_delta(end, start);
    if (by_object.size() < end.by_object.size()) by_object.resize(end.by_object.size());
    for (size_t i = 0; i < end.by_object.size(); ++i)
      by_object[i] += end.by_object[i] - (i < start.by_object.size() ? start.by_object[i] : Count(0));
  }
};

}  // namespace impsim
