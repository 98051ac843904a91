// The fast engine's memory (--engine fast, docs/performance.md): an ask of
// the proxy finder is a function of the whole interpreter state, so an ask
// that left that state as it found it, and raised nothing, changed only the
// counters. Its key holds every part of the state an ask can read; when the
// same key comes again the ask is answered with the counter deltas it had.
// The engine builds keys and replays values (TorchProxyMetaFinder::proxy_find_spec, in
// sim/engine/memo.cc); this type only remembers.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "impsim/scenario/counters.h"
#include "impsim/scenario/names.h"
#include "impsim/engine/records.h"

namespace impsim {

struct MemoKey {
  NameId name;
  int64_t copies;        // occurrences of the finder in sys.meta_path
  uint64_t scope;        // SetTable::identity: ids of freed sets are reused
  int32_t scope_object;  // 04efefd: which set object (-1 under b52ce17)
  bool global;
  uint64_t blocked;
  uint64_t epoch;                 // Records, sys.modules and cache versions
  uint64_t frames;                // identity of the frame stack (Memo::enter_frame)
  std::vector<NameId> resolving;  // the fix's resolving names, sorted
  bool operator==(const MemoKey&) const = default;
};

struct MemoKeyHash {
  size_t operator()(const MemoKey& k) const;
};

// What an ask did, to be done again without stepping it.
struct MemoValue {
  Counters delta;       // the additive counters only
  Count events;         // events it stepped
  uint64_t rel_depth;   // deepest lookup nesting below the ask
  bool moved_copies;    // the number of copies changed (and came back) inside
  SpecId result;
};

class Memo {
 public:
  // The value remembered for `key`, or nullptr.
  const MemoValue* find(const MemoKey& key) const;
  void remember(MemoKey key, const MemoValue& value);
  void count_hit() { ++hits_; }
  uint64_t hits() const { return hits_; }
  size_t size() const { return map_.size(); }

  // An epoch never decreases, so an entry of an older one can never match
  // again: dropping those keeps the memo to one epoch's asks instead of
  // growing with the run (docs/performance.md, memory).
  void forget_older_than(uint64_t epoch);
  // Every remembered result (a replayed ask returns that SpecId, so the
  // record must stay alive: a root of EngineContext::collect).
  template <class F>
  void for_each_result(F&& f) const {
    for (const auto& [key, value] : map_) f(value.result);
  }

  // The frame stack's identity, part of every key: a body or call entered
  // gets a new one, which its exit gives back to the outer frame.
  uint64_t frames() const { return frames_; }
  uint64_t enter_frame() {
    const uint64_t outer = frames_;
    frames_ = ++next_frames_;
    return outer;
  }
  void leave_frame(uint64_t outer) { frames_ = outer; }

 private:
  std::unordered_map<MemoKey, MemoValue, MemoKeyHash> map_;
  uint64_t epoch_ = 0;  // the epoch every entry of map_ was made in
  uint64_t hits_ = 0;
  uint64_t frames_ = 0;
  uint64_t next_frames_ = 0;
};

}  // namespace impsim
