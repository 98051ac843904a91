// The fast engine (--engine fast): its memory of asks (Memo) and the ask that
// reads and fills it (TorchProxyMetaFinder::proxy_find_spec_memo). The step engine never
// runs this file's code; docs/performance.md describes what it saves.
#include "impsim/engine/memo.h"

#include <algorithm>

#include "impsim/engine/engine.h"
#include "impsim/engine/finders/proxy_hot_path.h"

namespace impsim {

size_t MemoKeyHash::operator()(const MemoKey& k) const {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t x) { h = (h ^ x) * 1099511628211ull; };
  mix(static_cast<uint64_t>(k.name));
  mix(static_cast<uint64_t>(k.copies));
  mix(static_cast<uint64_t>(k.scope));
  mix(static_cast<uint64_t>(k.scope_object));
  mix(k.global);
  mix(static_cast<uint64_t>(k.blocked));
  mix(k.epoch);
  mix(k.frames);
  for (NameId n : k.resolving) mix(static_cast<uint64_t>(n));
  return h;
}

const MemoValue* Memo::find(const MemoKey& key) const {
  auto it = map_.find(key);
  return it == map_.end() ? nullptr : &it->second;
}

void Memo::remember(MemoKey key, const MemoValue& value) { map_.emplace(std::move(key), value); }

void Memo::forget_older_than(uint64_t epoch) {
  if (epoch_ == epoch) return;
  if (!map_.empty()) map_ = {};
  epoch_ = epoch;
}

MemoKey TorchProxyMetaFinder::memo_key(NameId name) const {
  MemoKey k{name,
            copies(),
            finder_.sets.identity(finder_.scope),
            finder_.scope_object,
            finder_.globally_enabled,
            finder_.sets.identity(finder_.blocked),
            epoch(),
            book_.memo.frames(),
            resolving_names()};
  std::sort(k.resolving.begin(), k.resolving.end());
  return k;
}

// TorchProxyMetaFinder.find_spec, answered from memory when it can be. An
// ask is a function of the whole interpreter state: the key holds every part
// an ask can read (the finder's copies, scope, flag, blocked list and
// resolving set, the frame stack, and the versions of sys.modules, the cache
// and every module, spec and loader). An ask that left all of them as it
// found it, and raised nothing, changed only the counters; when the same key
// comes again it is answered with those deltas. Anything else (an import
// that ran a body, a torch module moved) changes a version and is stepped.
SpecId TorchProxyMetaFinder::proxy_find_spec_memo(NameId name) {
  book_.memo.forget_older_than(epoch());
  MemoKey key = memo_key(name);
  if (const MemoValue* v = book_.memo.find(key)) {
    // A replay that would cross a limit is stepped instead, so the run stops
    // at the very event the step engine stops at (docs/limits.md).
    if (py_thread_.depth + v->rel_depth <= static_cast<uint64_t>(book_.limits.max_lookup_depth) &&
        (book_.max_events == kNoEventLimit || events() + v->events <= Count(book_.max_events))) {
      book_.memo.count_hit();
      py_thread_.totals += v->delta;
      book_.replayed_events += v->events;
      update_step_limit();
      if (v->rel_depth > 0) reach_depth(py_thread_.depth + v->rel_depth);
      if (v->delta.walks > 0) {
        uint64_t n = design_.indexed_walk ? interp_.sys_modules.torch_count() : interp_.sys_modules.size();
        book_.walk_peak = std::max(book_.walk_peak, n);
      }
      if (v->moved_copies) {
        moved_copies();
      }
      return v->result;
    }
  }
  const Counters start = counters();
  const Count start_events = events();
  const uint64_t start_moves = book_.copies_moves;
  const uint64_t outer = open_region();
  SpecId result;
  try {
    result = proxy_find_spec_stepped(name);
  } catch (...) {  // an exception skips the memo; the region still closes
    close_region(outer);
    throw;
  }
  const uint64_t rel_depth = close_region(outer) - py_thread_.depth;
  if (memo_key(name) == key) {
    MemoValue v{};
    v.delta.add_delta(counters(), start);
    v.events = events() - start_events;
    v.rel_depth = rel_depth;
    v.moved_copies = book_.copies_moves != start_moves;
    v.result = result;
    book_.memo.remember(std::move(key), v);
  }
  return result;
}

}  // namespace impsim
