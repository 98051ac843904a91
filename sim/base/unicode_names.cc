#include "impsim/base/unicode_names.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <vector>

namespace impsim {

namespace {

struct CodeRange {
  char32_t lo, hi;
};
struct CombiningRange {
  char32_t lo, hi;
  uint8_t ccc;
};
struct Decomposition {
  char32_t cp;
  uint32_t offset, length;
};
struct Composition {
  char32_t first, second, composite;
};

#include "unicode_tables.inc"

// Hangul syllables decompose and compose by arithmetic (Unicode ch. 3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

template <size_t N>
bool in_ranges(const CodeRange (&ranges)[N], char32_t cp) {
  auto it = std::upper_bound(std::begin(ranges), std::end(ranges), cp,
                             [](char32_t c, const CodeRange& r) { return c < r.lo; });
  return it != std::begin(ranges) && cp <= std::prev(it)->hi;
}

uint8_t combining_class(char32_t cp) {
  if (cp < 0x300) return 0;
  auto it = std::upper_bound(std::begin(kCombining), std::end(kCombining), cp,
                             [](char32_t c, const CombiningRange& r) { return c < r.lo; });
  return it != std::begin(kCombining) && cp <= std::prev(it)->hi ? std::prev(it)->ccc : 0;
}

bool ascii_start(char32_t c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool ascii_continue(char32_t c) { return ascii_start(c) || (c >= '0' && c <= '9'); }

// Decodes strict UTF-8 (no overlongs, surrogates or values past U+10FFFF).
bool decode(std::string_view s, std::vector<char32_t>& out) {
  char32_t cp = 0;
  for (size_t i = 0; i < s.size();) {
    if (!next_utf8(s, i, cp)) return false;
    out.push_back(cp);
  }
  return true;
}

void decompose(char32_t cp, std::vector<char32_t>& out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    char32_t s = cp - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount) out.push_back(kTBase + s % kTCount);
    return;
  }
  auto it = std::lower_bound(std::begin(kDecomposition), std::end(kDecomposition), cp,
                             [](const Decomposition& d, char32_t c) { return d.cp < c; });
  if (it == std::end(kDecomposition) || it->cp != cp) {
    out.push_back(cp);
    return;
  }
  out.insert(out.end(), kDecompositionPool + it->offset, kDecompositionPool + it->offset + it->length);
}

// The primary composite of (a, b), or 0.
char32_t compose(char32_t a, char32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase && b < kTBase + kTCount)
    return a + (b - kTBase);
  auto it = std::lower_bound(std::begin(kComposition), std::end(kComposition), std::pair{a, b},
                             [](const Composition& c, std::pair<char32_t, char32_t> k) {
                               return std::pair{c.first, c.second} < k;
                             });
  return it != std::end(kComposition) && it->first == a && it->second == b ? it->composite : 0;
}

}  // namespace

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool is_unicode_identifier(std::string_view s) {
  std::vector<char32_t> cps;
  if (s.empty() || !decode(s, cps)) return false;
  auto start = [](char32_t c) { return c < 0x80 ? ascii_start(c) : in_ranges(kXidStart, c); };
  auto cont = [](char32_t c) { return c < 0x80 ? ascii_continue(c) : in_ranges(kXidContinue, c); };
  return start(cps[0]) && std::all_of(cps.begin() + 1, cps.end(), cont);
}

std::string nfkc_identifier(std::string_view s) {
  std::vector<char32_t> in, d;
  if (!decode(s, in)) return std::string(s);
  for (char32_t cp : in) decompose(cp, d);
  // Canonical ordering: a stable sort of each run of non-starters by class.
  for (size_t i = 0; i < d.size();) {
    if (combining_class(d[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < d.size() && combining_class(d[j]) != 0) ++j;
    std::stable_sort(d.begin() + static_cast<ptrdiff_t>(i), d.begin() + static_cast<ptrdiff_t>(j),
                     [](char32_t a, char32_t b) { return combining_class(a) < combining_class(b); });
    i = j;
  }
  // Canonical composition (UAX #15): a character joins the last starter
  // unless something of its class or a starter stands between them.
  std::string out;
  if (d.empty()) return out;
  size_t starter = 0, kept = 1;
  int last_class = combining_class(d[0]) == 0 ? 0 : 256;
  for (size_t i = 1; i < d.size(); ++i) {
    int cls = combining_class(d[i]);
    char32_t c = last_class == 256 ? 0 : compose(d[starter], d[i]);
    if (c && (last_class < cls || last_class == 0)) {
      d[starter] = c;
      continue;
    }
    if (cls == 0) starter = kept;
    last_class = cls;
    d[kept++] = d[i];
  }
  d.resize(kept);
  for (char32_t cp : d) append_utf8(out, cp);
  return out;
}

bool decode_utf8(std::string_view s, std::vector<char32_t>& out) { return decode(s, out); }

bool next_utf8(std::string_view s, size_t& i, char32_t& cp) {
  auto b = static_cast<unsigned char>(s[i]);
  int extra = b < 0x80 ? 0 : (b & 0xE0) == 0xC0 ? 1 : (b & 0xF0) == 0xE0 ? 2 : (b & 0xF8) == 0xF0 ? 3 : -1;
  if (extra < 0 || i + static_cast<size_t>(extra) >= s.size() + (extra == 0 ? 1 : 0)) return false;
  char32_t c32 = extra == 0 ? b : b & (0x3F >> extra);
  for (int k = 1; k <= extra; ++k) {
    auto c = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
    if ((c & 0xC0) != 0x80) return false;
    c32 = (c32 << 6) | (c & 0x3F);
  }
  static constexpr char32_t kMin[] = {0, 0x80, 0x800, 0x10000};
  if (c32 < kMin[extra] || c32 > 0x10FFFF || (c32 >= 0xD800 && c32 <= 0xDFFF)) return false;
  cp = c32;
  i += static_cast<size_t>(extra) + 1;
  return true;
}

}  // namespace impsim
