// Count: an exact non-negative integer of any size, for the counters.
//
// The step engine counts one event at a time and never leaves 64 bits; the
// fast engine replays remembered deltas and passes 2^128 at k = 34 nested
// guards. A Count is a uint64 while it fits (the step engine's hot path: one
// add and one predictable branch) and spills into a GMP integer past 2^64.
#pragma once

#include <fmt/format.h>

#include <compare>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace impsim {

struct BigCount;  // a GMP mpz_t, in sim/base/count.cc
struct BigCountDeleter {
  void operator()(BigCount* b) const;
};

class Count {
 public:
  Count() = default;
  Count(uint64_t n) : small_(n) {}  // NOLINT: counts mix freely with uint64 figures
  Count(const Count& o) : small_(o.small_) {
    if (o.big_) copy_big(o);
  }
  Count(Count&&) noexcept = default;
  Count& operator=(const Count& o) {
    if (this == &o) return *this;
    small_ = o.small_;
    if (o.big_) copy_big(o);
    else big_.reset();
    return *this;
  }
  Count& operator=(Count&&) noexcept = default;

  Count& operator++() {
    if (!big_ && small_ != UINT64_MAX) [[likely]]
      ++small_;
    else
      add_slow(Count(uint64_t{1}));
    return *this;
  }
  Count& operator+=(uint64_t n) {
    uint64_t sum;
    if (!big_ && !__builtin_add_overflow(small_, n, &sum)) [[likely]]
      small_ = sum;
    else
      add_slow(Count(n));
    return *this;
  }
  Count& operator+=(const Count& o) {
    if (!o.big_) return *this += o.small_;
    add_slow(o);
    return *this;
  }
  friend Count operator+(Count a, const Count& b) { return a += b; }
  // a - b for a >= b (counters only grow); throws std::logic_error otherwise.
  friend Count operator-(const Count& a, const Count& b);
  friend Count operator*(const Count& a, const Count& b);

  friend bool operator==(const Count& a, const Count& b) { return compare(a, b) == 0; }
  friend std::strong_ordering operator<=>(const Count& a, const Count& b) { return compare(a, b) <=> 0; }
  friend bool operator==(const Count& a, uint64_t b) { return !a.big_ && a.small_ == b; }
  friend std::strong_ordering operator<=>(const Count& a, uint64_t b) {
    return a.big_ ? std::strong_ordering::greater : a.small_ <=> b;
  }

  bool fits_u64() const { return !big_; }
  uint64_t u64() const { return small_; }  // only when fits_u64()
  // Decimal digits ("13699").
  std::string text() const;
  // The count whose decimal digits are `digits` (any number of them), or
  // nullopt when it is empty or holds anything but 0-9.
  static std::optional<Count> from_digits(std::string_view digits);
  // a / b as a readable ratio at any magnitude: mantissa in [1, 10) and a
  // power of ten, exact to double precision (b > 0).
  struct Scientific {
    double mantissa;
    int64_t exponent;
  };
  static Scientific ratio(const Count& a, const Count& b);
  // A double close to the count (inf past about 1.8e308).
  double to_double() const;

 private:
  friend struct CountDetail;  // sim/base/count.cc
  static int compare(const Count& a, const Count& b);
  void add_slow(const Count& o);
  void copy_big(const Count& o);
  // Invariant: big_ is set exactly when the value is past 2^64 - 1, so a
  // small Count compares with a uint64 without touching GMP.
  uint64_t small_ = 0;                             // the value, while big_ is null
  std::unique_ptr<BigCount, BigCountDeleter> big_;  // the value, once past 2^64 - 1
};

// Decimal digits of a Count ("13699").
inline std::string count_text(const Count& n) { return n.text(); }

}  // namespace impsim

// fmt::format("{}", count): its decimal digits.
template <>
struct fmt::formatter<impsim::Count> : fmt::formatter<std::string> {
  auto format(const impsim::Count& c, fmt::format_context& ctx) const {
    return fmt::formatter<std::string>::format(c.text(), ctx);
  }
};
