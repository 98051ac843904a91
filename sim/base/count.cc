// The big half of Count: GMP integers for counts past 2^64 - 1. GMP rather
// than Boost.Multiprecision: a compiled library (no heavy headers in every
// file that counts), already a Debian package (libgmp-dev), and only the
// rare slow paths below ever call it.
#include "impsim/base/count.h"

#include <gmp.h>

#include <cmath>
#include <stdexcept>

namespace impsim {

struct BigCount {
  mpz_t v;
  BigCount() { mpz_init(v); }
  ~BigCount() { mpz_clear(v); }
  BigCount(const BigCount&) = delete;
  BigCount& operator=(const BigCount&) = delete;
};

void BigCountDeleter::operator()(BigCount* b) const { delete b; }

// An mpz holding a Count's value, whichever half holds it.
class Mpz {
 public:
  Mpz() { mpz_init(v_); }
  explicit Mpz(uint64_t n) : Mpz() { mpz_import(v_, 1, 1, sizeof n, 0, 0, &n); }
  ~Mpz() { mpz_clear(v_); }
  Mpz(const Mpz&) = delete;
  Mpz& operator=(const Mpz&) = delete;
  mpz_ptr get() { return v_; }

 private:
  mpz_t v_;
};

struct CountDetail {
  static mpz_srcptr view(const Count& c, Mpz& tmp) {
    if (c.big_) return c.big_->v;
    mpz_import(tmp.get(), 1, 1, sizeof c.small_, 0, 0, &c.small_);
    return tmp.get();
  }
  // Stores `z` into `c`, keeping the invariant (big_ only past 2^64 - 1).
  static void store(Count& c, mpz_srcptr z) {
    if (mpz_sizeinbase(z, 2) <= 64) {
      uint64_t n = 0;
      mpz_export(&n, nullptr, 1, sizeof n, 0, 0, z);
      c.small_ = n;
      c.big_.reset();
      return;
    }
    if (!c.big_) c.big_.reset(new BigCount);
    mpz_set(c.big_->v, z);
    c.small_ = 0;
  }
};

void Count::copy_big(const Count& o) {
  if (!big_) big_.reset(new BigCount);
  mpz_set(big_->v, o.big_->v);
}

// Added in place: the fast engine adds a big delta into a big total at
// every replayed ask, and building the sum in temporaries (then clearing,
// freeing and copying them) was most of its time at k = 200. A sum that
// needs this path is past 2^64 - 1 (a big operand, or a small sum that
// overflowed), so the result is always the big half.
void Count::add_slow(const Count& o) {
  static_assert(sizeof(unsigned long) == sizeof(uint64_t), "mpz_add_ui takes the small half whole");
  if (!big_) {
    big_.reset(new BigCount);
    mpz_set_ui(big_->v, small_);
    small_ = 0;
  }
  if (o.big_) mpz_add(big_->v, big_->v, o.big_->v);
  else mpz_add_ui(big_->v, big_->v, o.small_);
}

Count operator-(const Count& a, const Count& b) {
  if (!a.big_ && !b.big_) {
    if (a.small_ < b.small_) throw std::logic_error("Count: negative difference");
    return Count(a.small_ - b.small_);
  }
  Mpz ta, tb, d;
  mpz_sub(d.get(), CountDetail::view(a, ta), CountDetail::view(b, tb));
  if (mpz_sgn(d.get()) < 0) throw std::logic_error("Count: negative difference");
  Count out;
  CountDetail::store(out, d.get());
  return out;
}

Count operator*(const Count& a, const Count& b) {
  unsigned __int128 p = static_cast<unsigned __int128>(a.small_) * b.small_;
  if (!a.big_ && !b.big_ && p <= UINT64_MAX) return Count(static_cast<uint64_t>(p));
  Mpz ta, tb, r;
  mpz_mul(r.get(), CountDetail::view(a, ta), CountDetail::view(b, tb));
  Count out;
  CountDetail::store(out, r.get());
  return out;
}

int Count::compare(const Count& a, const Count& b) {
  if (!a.big_ && !b.big_) return a.small_ < b.small_ ? -1 : a.small_ > b.small_ ? 1 : 0;
  if (!a.big_) return -1;
  if (!b.big_) return 1;
  return mpz_cmp(a.big_->v, b.big_->v);
}

std::string Count::text() const {
  if (!big_) return std::to_string(small_);
  std::string s(mpz_sizeinbase(big_->v, 10) + 2, '\0');
  mpz_get_str(s.data(), 10, big_->v);
  s.resize(std::char_traits<char>::length(s.c_str()));
  return s;
}

std::optional<Count> Count::from_digits(std::string_view digits) {
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  if (digits.size() <= 19) {
    uint64_t n = 0;
    for (char c : digits) n = n * 10 + static_cast<uint64_t>(c - '0');
    return Count(n);
  }
  Mpz z;
  // GMP reads a C string: the digits were checked, so this cannot fail.
  mpz_set_str(z.get(), std::string(digits).c_str(), 10);
  Count out;
  CountDetail::store(out, z.get());
  return out;
}

double Count::to_double() const {
  if (!big_) return static_cast<double>(small_);
  Scientific s = ratio(*this, Count(uint64_t{1}));
  return s.mantissa * std::pow(10.0, static_cast<double>(s.exponent));
}

namespace {

// `c` as mantissa x 2^exponent, mantissa in [0.5, 1), at double precision.
std::pair<double, int64_t> binary_parts(const Count& c, Mpz& tmp) {
  long exp = 0;
  double m = mpz_get_d_2exp(&exp, CountDetail::view(c, tmp));
  return {m, static_cast<int64_t>(exp)};
}

}  // namespace

Count::Scientific Count::ratio(const Count& a, const Count& b) {
  if (a == uint64_t{0}) return {0.0, 0};
  Mpz ta, tb;
  auto [ma, ea] = binary_parts(a, ta);
  auto [mb, eb] = binary_parts(b, tb);
  // log10(a / b), split into a power of ten and a mantissa in [1, 10).
  double log10r = std::log10(ma / mb) + static_cast<double>(ea - eb) * std::log10(2.0);
  double e = std::floor(log10r);
  double m = std::pow(10.0, log10r - e);
  if (m >= 10.0) {
    m /= 10.0;
    e += 1;
  }
  return {m, static_cast<int64_t>(e)};
}

}  // namespace impsim
