// A hash map kept in one array (open addressing, linear probing), for the
// tables a scenario's names fill once and then only look up: the name
// table's parts and children, the package tree's children. std::unordered_map
// allocates a node per entry, and for a 50,000-module tree allocating and
// freeing those nodes cost more than everything else interning did.
//
// Entries are never erased, so a probe ends at the first empty slot; the
// table doubles before it is four fifths full (the stored hash makes most
// of a longer probe's mismatches one compare in memory already read; at
// half full, 50,000 names took 128 Ki slots a table instead of 64 Ki).
// The hash is mixed (multiplied by 2^64 / phi, its high half taken) before
// it is masked, as std::hash of an integer is the integer itself and keys
// such as (parent << 32 | atom) differ in their high bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace impsim {

template <class Key, class Value, class Hash = std::hash<Key>>
class FlatMap {
 public:
  // The hash find and try_emplace use: a caller that looks a key up and
  // then adds it hashes it once.
  uint64_t hash(const Key& key) const { return static_cast<uint64_t>(Hash{}(key)) * 0x9E3779B97F4A7C15ull; }

  Value* find(const Key& key) { return find(key, hash(key)); }
  Value* find(const Key& key, uint64_t h) {
    if (slots_.empty()) return nullptr;
    h |= kUsed;
    for (size_t at = home(h);; at = (at + 1) & mask()) {
      Slot& s = slots_[at];
      if (s.hash == kEmpty) return nullptr;
      if (s.hash == h && s.key == key) return &s.value;
    }
  }
  const Value* find(const Key& key) const { return const_cast<FlatMap*>(this)->find(key); }

  // The value of `key`, and true when it was added (with `value`) just now.
  std::pair<Value*, bool> try_emplace(const Key& key, Value value) { return try_emplace(key, std::move(value), hash(key)); }
  std::pair<Value*, bool> try_emplace(const Key& key, Value value, uint64_t h) {
    if (5 * (size_ + 1) > 4 * slots_.size()) grow(slots_.empty() ? 16 : 2 * slots_.size());
    h |= kUsed;
    for (size_t at = home(h);; at = (at + 1) & mask()) {
      Slot& s = slots_[at];
      if (s.hash == h && s.key == key) return {&s.value, false};
      if (s.hash == kEmpty) {
        s = Slot{key, std::move(value), h};
        ++size_;
        return {&s.value, true};
      }
    }
  }

  // Room for `n` entries without growing.
  void reserve(size_t n) {
    size_t want = 16;
    while (4 * want < 5 * n) want *= 2;
    if (want > slots_.size()) grow(want);
  }

  size_t size() const { return size_; }

 private:
  // A used slot's hash has its lowest bit set, so 0 marks an empty slot and
  // no flag of its own pads each slot by 8 bytes (a 50,000-name table's
  // index took 5.2 MB, 40 bytes a slot). The home slot comes from the high
  // half of the hash, which the bit leaves alone.
  static constexpr uint64_t kUsed = 1, kEmpty = 0;
  struct Slot {
    Key key{};
    Value value{};
    uint64_t hash = kEmpty;  // kept: growing does not hash the keys again, and most mismatches end here
  };

  size_t mask() const { return slots_.size() - 1; }
  size_t home(uint64_t h) const { return static_cast<size_t>(h >> 32) & mask(); }
  void grow(size_t capacity) {
    std::vector<Slot> old(capacity);
    old.swap(slots_);
    for (Slot& s : old) {
      if (s.hash == kEmpty) continue;
      size_t at = home(s.hash);
      while (slots_[at].hash != kEmpty) at = (at + 1) & mask();
      slots_[at] = std::move(s);
    }
  }

  std::vector<Slot> slots_;  // a power of two in size, or empty
  size_t size_ = 0;
};

}  // namespace impsim
