#include "impsim/engine/meta_path.h"

#include <algorithm>

namespace impsim {

void MetaPath::assign(const std::vector<FinderId>& list) {
  head_ = 0;
  rest_ = list;
  proxy_copies_ = std::count(list.begin(), list.end(), kProxyFinder);
  size_ = static_cast<int64_t>(list.size());
}

// An insert the head cannot take: another finder, or Paddle's past its
// head. Inside the head, the copies after `at` become entries of the rest.
void MetaPath::insert_into_rest(int64_t at, FinderId f) {
  if (at < head_) {
    rest_.insert(rest_.begin(), static_cast<size_t>(head_ - at), kProxyFinder);
    head_ = at;
  }
  rest_.insert(rest_.begin() + (at - head_), f);
  if (f == kProxyFinder) ++proxy_copies_;
  ++size_;
}

bool MetaPath::remove_from_rest(FinderId f) {
  auto it = std::find(rest_.begin(), rest_.end(), f);
  if (it == rest_.end()) return false;
  rest_.erase(it);
  if (f == kProxyFinder) --proxy_copies_;
  --size_;
  return true;
}

void MetaPath::remove_all(FinderId f) {
  if (f == kProxyFinder) {
    proxy_copies_ = 0;
    head_ = 0;
  }
  rest_.erase(std::remove(rest_.begin(), rest_.end(), f), rest_.end());
  size_ = head_ + static_cast<int64_t>(rest_.size());
}

int64_t MetaPath::index(FinderId f) const {
  if (f == kProxyFinder && head_ > 0) return 0;
  auto it = std::find(rest_.begin(), rest_.end(), f);
  return it == rest_.end() ? -1 : head_ + (it - rest_.begin());
}

std::vector<FinderId> MetaPath::list() const {
  std::vector<FinderId> out(static_cast<size_t>(head_), kProxyFinder);
  out.insert(out.end(), rest_.begin(), rest_.end());
  return out;
}

bool MetaPath::same_as(const MetaPath& other) const {
  if (size_ != other.size_ || proxy_copies_ != other.proxy_copies_) return false;
  if (head_ == other.head_) return rest_ == other.rest_;
  for (int64_t i = 0; i < size_; ++i)
    if (at(i) != other.at(i)) return false;
  return true;
}

}  // namespace impsim
