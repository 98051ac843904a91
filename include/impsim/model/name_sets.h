// Interned sets of module names: the finder's scope and blocked list, and the
// scopes a scenario's steps pass. Equal sets share one id, so a guard's "same
// scope" test is an id comparison. Sets the engine makes while running
// (scope unions) are held and released, and freed when nothing holds them:
// memory follows the live sets, not every union ever made.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "impsim/scenario/names.h"

namespace impsim {

using SetId = int32_t;
inline constexpr SetId kEmptySet = 0;

class SetTable {
 public:
  SetTable();
  SetId intern(std::vector<NameId> members);
  // a | b, sorted merge of the two (both are sorted already).
  SetId unite(SetId a, SetId b);
  const std::vector<NameId>& members(SetId id) const { return sets_[static_cast<size_t>(id)]; }
  bool contains(SetId id, NameId name) const;
  // True when `name` is, or is inside, a member: the finder's scope and
  // blocked tests.
  bool covers(const NameTable& names, SetId id, NameId name) const;

  // Every set made so far is kept for good (the scenario's own); later ones
  // live while held.
  void pin_all();
  // Inline: the engine holds and releases a set on every guard. A pinned
  // set's count starts far above any number of holds, so neither tests
  // whether the set is pinned (release_last re-arms one that gets to 0).
  void hold(SetId id) { ++holders_[static_cast<size_t>(id)]; }
  // One holder less; returns true when that freed the set (its id may be
  // handed out again, with a new generation).
  bool release(SetId id) {
    if (--holders_[static_cast<size_t>(id)] > 0) [[likely]]
      return false;
    return release_last(id);
  }
  // Id and generation together: unique over the table's life even when ids
  // are reused (the fast engine's memo keys hold it).
  uint64_t identity(SetId id) const {
    return static_cast<uint64_t>(static_cast<uint32_t>(id)) | (static_cast<uint64_t>(generation_[id]) << 32);
  }
  size_t live() const { return sets_.size() - free_.size(); }
  // Every id handed out so far is below this.
  size_t ids() const { return sets_.size(); }

 private:
  SetId add(std::vector<NameId> sorted, uint64_t hash);
  void free_set(SetId id);
  bool release_last(SetId id);
  // What a pinned set's count is set to, and set back to if it gets to 0
  // (releases of the pinned empty set are not matched by holds).
  static constexpr int32_t kPinnedHolds = int32_t{1} << 30;

  std::vector<std::vector<NameId>> sets_;
  std::vector<int32_t> holders_;
  std::vector<uint32_t> generation_;
  std::vector<SetId> free_;
  size_t pinned_ = 1;
  std::unordered_multimap<uint64_t, SetId> index_;  // by hash of the sorted members
};

}  // namespace impsim
