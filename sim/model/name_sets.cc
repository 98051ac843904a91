#include "impsim/model/name_sets.h"

#include <algorithm>
#include <iterator>

namespace impsim {

namespace {
uint64_t hash_of(const std::vector<NameId>& sorted) {
  uint64_t h = 1469598103934665603ull;
  for (NameId n : sorted) h = (h ^ static_cast<uint64_t>(static_cast<uint32_t>(n))) * 1099511628211ull;
  return h ^ sorted.size();
}
}  // namespace

SetTable::SetTable() {
  sets_.emplace_back();
  holders_.push_back(kPinnedHolds);
  generation_.push_back(0);
  index_.emplace(hash_of({}), kEmptySet);
}

SetId SetTable::add(std::vector<NameId> sorted, uint64_t hash) {
  auto [first, last] = index_.equal_range(hash);
  for (auto it = first; it != last; ++it)
    if (sets_[static_cast<size_t>(it->second)] == sorted) return it->second;
  SetId id;
  if (free_.empty()) {
    id = static_cast<SetId>(sets_.size());
    sets_.push_back(std::move(sorted));
    holders_.push_back(0);
    generation_.push_back(0);
  } else {
    id = free_.back();
    free_.pop_back();
    sets_[static_cast<size_t>(id)] = std::move(sorted);
  }
  index_.emplace(hash, id);
  return id;
}

SetId SetTable::intern(std::vector<NameId> members) {
  std::sort(members.begin(), members.end());
  members.erase(std::unique(members.begin(), members.end()), members.end());
  uint64_t h = hash_of(members);
  return add(std::move(members), h);
}

SetId SetTable::unite(SetId a, SetId b) {
  if (a == b || b == kEmptySet) return a;
  if (a == kEmptySet) return b;
  const auto& x = members(a);
  const auto& y = members(b);
  std::vector<NameId> all;
  all.reserve(x.size() + y.size());
  std::set_union(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(all));
  if (all.size() == x.size()) return a;
  uint64_t h = hash_of(all);
  return add(std::move(all), h);
}

void SetTable::pin_all() {
  pinned_ = sets_.size();
  std::fill(holders_.begin(), holders_.end(), kPinnedHolds);
}

bool SetTable::release_last(SetId id) {
  if (static_cast<size_t>(id) < pinned_) {
    holders_[static_cast<size_t>(id)] = kPinnedHolds;
    return false;
  }
  free_set(id);
  return true;
}

void SetTable::free_set(SetId id) {
  auto i = static_cast<size_t>(id);
  auto [first, last] = index_.equal_range(hash_of(sets_[i]));
  for (auto it = first; it != last; ++it)
    if (it->second == id) {
      index_.erase(it);
      break;
    }
  std::vector<NameId>().swap(sets_[i]);
  ++generation_[i];
  free_.push_back(id);
}

bool SetTable::contains(SetId id, NameId name) const {
  const auto& m = members(id);
  return std::binary_search(m.begin(), m.end(), name);
}

bool SetTable::covers(const NameTable& names, SetId id, NameId name) const {
  if (members(id).empty()) return false;
  for (NameId n = name; n != kNoName; n = names.parent(n))
    if (contains(id, n)) return true;
  return false;
}

}  // namespace impsim
