// sys.meta_path: the finders _find_spec asks, in order, as one list for
// every scenario (Paddle's and hook scenarios alike).
//
// The list is held as the copies of Paddle's finder at its head, a number,
// then the rest as written. Every enable inserts the finder at 0, so in a
// Paddle scenario its copies always lead the list and can stand there
// thousands of times; its toggles and guards, which run on every lookup,
// add and remove them without moving the rest, and _find_spec's loop tells
// them from the rest with one comparison. A hook scenario may put the
// finder anywhere: a copy not at the head is an entry of the rest.
#pragma once

#include <cstdint>
#include <vector>

#include "impsim/scenario/hook_language.h"

namespace impsim {

class MetaPath {
 public:
  // sys.meta_path = list.
  void assign(const std::vector<FinderId>& list);
  int64_t size() const { return size_; }
  // sys.meta_path[i], 0 <= i < size().
  FinderId at(int64_t i) const { return i < head_ ? kProxyFinder : rest_[static_cast<size_t>(i - head_)]; }
  // at(i) == TORCH_PROXY_FINDER, with no select on the way: the head's
  // copies answer with one comparison.
  bool proxy_at(int64_t i) const { return i < head_ || rest_[static_cast<size_t>(i - head_)] == kProxyFinder; }
  // sys.meta_path.count(TORCH_PROXY_FINDER), kept as the list changes.
  int64_t proxy_copies() const { return proxy_copies_; }
  // sys.meta_path.insert(at, f), 0 <= at <= size().
  void insert(int64_t at, FinderId f) {
    if (f == kProxyFinder && at <= head_) [[likely]] {
      ++head_;
      ++proxy_copies_;
      ++size_;
      return;
    }
    insert_into_rest(at, f);
  }
  // sys.meta_path.insert(0, TORCH_PROXY_FINDER): what every enable does.
  void insert_proxy_at_head() {
    ++head_;
    ++proxy_copies_;
    ++size_;
  }
  // sys.meta_path.remove(f): the first occurrence; false if there is none.
  bool remove(FinderId f) {
    if (f == kProxyFinder && head_ > 0) [[likely]] {
      --head_;
      --proxy_copies_;
      --size_;
      return true;
    }
    return remove_from_rest(f);
  }
  // Every occurrence of f removed.
  void remove_all(FinderId f);
  // The index of f's first occurrence, or -1.
  int64_t index(FinderId f) const;
  bool contains(FinderId f) const { return index(f) >= 0; }
  // The list written out, for reports and traces.
  std::vector<FinderId> list() const;
  // The same entries in the same order (3.14's snapshot against the live list).
  bool same_as(const MetaPath& other) const;

 private:
  void insert_into_rest(int64_t at, FinderId f);
  bool remove_from_rest(FinderId f);

  int64_t head_ = 0;            // copies of Paddle's finder at index 0..head_-1
  std::vector<FinderId> rest_;  // what follows them
  int64_t proxy_copies_ = 0;    // head_ plus the copies in rest_
  // head_ plus rest_'s size, kept: _find_spec's loop reads it at every turn.
  int64_t size_ = 0;
};

}  // namespace impsim
