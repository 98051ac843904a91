#include "impsim/engine/finders/covers_memo.h"

#include <algorithm>

namespace impsim {

void CoversMemo::reset(size_t sets, size_t names) {
  names_ = names;
  unknown_ = std::make_unique<int8_t[]>(std::max<size_t>(names, 1));
  std::fill_n(unknown_.get(), std::max<size_t>(names, 1), int8_t{-1});
  none_ = std::make_unique<int8_t[]>(std::max<size_t>(names, 1));  // zeros
  rows_.assign(std::max<size_t>(sets, 1), unknown_.get());
  rows_[kEmptySet] = none_.get();
  owned_.clear();
}

void CoversMemo::learn(SetId set, NameId name, bool covers) {
  const auto s = static_cast<size_t>(set);
  if (rows_[s] == unknown_.get()) {
    if (owned_.size() <= s) owned_.resize(s + 1);
    if (!owned_[s]) owned_[s] = std::make_unique<int8_t[]>(names_);
    std::fill_n(owned_[s].get(), names_, int8_t{-1});
    rows_[s] = owned_[s].get();
  }
  rows_[s][static_cast<size_t>(name)] = covers ? 1 : 0;
}

void CoversMemo::forget(SetId set) {
  if (set == kEmptySet) return;  // pinned: never freed, its row never unknown
  const auto s = static_cast<size_t>(set);
  if (s < rows_.size()) rows_[s] = unknown_.get();
  if (s < owned_.size()) owned_[s].reset();
}

void CoversMemo::clear() {
  std::fill(rows_.begin(), rows_.end(), unknown_.get());
  rows_[kEmptySet] = none_.get();
  owned_.clear();
}

}  // namespace impsim
