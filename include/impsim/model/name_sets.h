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
  void pin_all() { pinned_ = sets_.size(); }
  // Inline: the engine holds and releases a set on every guard.
  void hold(SetId id) {
    if (static_cast<size_t>(id) >= pinned_) ++holders_[static_cast<size_t>(id)];
  }
  // One holder less; returns true when that freed the set (its id may be
  // handed out again, with a new generation).
  bool release(SetId id) {
    auto i = static_cast<size_t>(id);
    if (i < pinned_ || --holders_[i] > 0) return false;
    free_set(id);
    return true;
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

  std::vector<std::vector<NameId>> sets_;
  std::vector<int32_t> holders_;
  std::vector<uint32_t> generation_;
  std::vector<SetId> free_;
  size_t pinned_ = 1;
  std::unordered_multimap<uint64_t, SetId> index_;  // by hash of the sorted members
};

}  // namespace impsim
