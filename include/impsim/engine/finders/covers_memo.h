// SetTable::covers remembered per (set, name): Paddle's finder tests the
// blocked list and the scope on every ask, against a handful of distinct
// sets, and an interned set never changes while it lives.
//
// Every set id the finder can hold has a row: a row nothing was learned for
// points at one shared row of "unknown", so an ask's test is two loads and
// a sign test, with no bound or emptiness check on the way (the cost of
// the vector-of-vectors this replaced, about a tenth of a lookup's
// instructions). The empty set's row is known from the start (it covers
// nothing), so a test needs no emptiness check either, though a global
// finder's scope is the empty set. The engine widens the memo whenever the
// set table can have handed out a new id (TorchProxyMetaFinder::unite_sets).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "impsim/model/name_sets.h"
#include "impsim/scenario/names.h"

namespace impsim {

class CoversMemo {
 public:
  // Forgets everything; rows for set ids below `sets`, columns for `names` names.
  void reset(size_t sets, size_t names);
  // Room for set ids below `sets` (their rows unknown).
  void widen(size_t sets) {
    if (sets > rows_.size()) rows_.resize(sets, unknown_.get());
  }
  // -1 unknown, else 0 or 1. `set` is below what reset/widen made room for.
  int8_t get(SetId set, NameId name) const { return rows_[static_cast<size_t>(set)][static_cast<size_t>(name)]; }
  void learn(SetId set, NameId name, bool covers);
  // The set's id was freed (it may come back as another set).
  void forget(SetId set);
  // Every row back to unknown.
  void clear();

 private:
  size_t names_ = 0;
  std::unique_ptr<int8_t[]> unknown_;             // names_ x -1, shared
  std::unique_ptr<int8_t[]> none_;                // names_ x 0: the empty set's row
  std::vector<int8_t*> rows_;                     // by SetId: unknown_ or owned_[set]
  std::vector<std::unique_ptr<int8_t[]>> owned_;  // by SetId, the rows learned into
};

}  // namespace impsim
