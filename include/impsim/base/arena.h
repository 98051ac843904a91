// The engine's record arenas (modules, specs, loaders): records named by
// int32 ids, whose slots are reused once nothing refers to them any more.
// EngineContext::collect (sim/engine/collect.cc) decides what is still referred to; the
// arena only keeps the marks and the free list, so a run's memory is bounded
// by what is alive at once, not by how many records it ever made.
#pragma once

#include <cstdint>
#include <vector>

namespace impsim {

template <class T>
class Arena {
 public:
  T& operator[](int32_t id) { return items_[static_cast<size_t>(id)]; }
  const T& operator[](int32_t id) const { return items_[static_cast<size_t>(id)]; }

  // A freed slot if there is one (the most recently freed), else a new one.
  int32_t alloc(const T& v) {
    ++allocated_;
    if (!free_.empty()) {
      int32_t id = free_.back();
      free_.pop_back();
      items_[static_cast<size_t>(id)] = v;
      state_[static_cast<size_t>(id)] = kLive;
      return id;
    }
    items_.push_back(v);
    state_.push_back(kLive);
    return static_cast<int32_t>(items_.size() - 1);
  }

  // Marks a live record; false if it was marked already (or is no record).
  bool mark(int32_t id) {
    if (id < 0) return false;
    uint8_t& s = state_[static_cast<size_t>(id)];
    if (s != kLive) return false;
    s = kMarked;
    return true;
  }

  // Frees every live record left unmarked, unmarks the rest.
  void sweep() {
    for (size_t i = state_.size(); i-- > 0;) {
      if (state_[i] == kMarked) state_[i] = kLive;
      else if (state_[i] == kLive) {
        state_[i] = kFree;
        free_.push_back(static_cast<int32_t>(i));
      }
    }
  }

  size_t slots() const { return items_.size(); }
  size_t live() const { return items_.size() - free_.size(); }
  uint64_t allocated() const { return allocated_; }  // records ever made

 private:
  enum : uint8_t { kFree, kLive, kMarked };
  std::vector<T> items_;
  std::vector<uint8_t> state_;
  std::vector<int32_t> free_;
  uint64_t allocated_ = 0;
};

}  // namespace impsim
