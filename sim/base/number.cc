// Integers read from text and JSON (include/impsim/base/number.h).
#include "impsim/base/number.h"

#include <fmt/format.h>

#include <algorithm>

namespace impsim {

namespace {

std::string wide_text(__int128 v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  unsigned __int128 u = negative ? static_cast<unsigned __int128>(-(v + 1)) + 1 : static_cast<unsigned __int128>(v);
  std::string digits;
  for (; u > 0; u /= 10) digits += static_cast<char>('0' + static_cast<int>(u % 10));
  if (negative) digits += '-';
  std::reverse(digits.begin(), digits.end());
  return digits;
}

// A value as a message quotes it: an argument of a million digits is
// named by its start and its length, not printed whole.
std::string shown(std::string_view text) {
  if (text.size() <= 40) return std::string(text);
  return fmt::format("{}... ({} characters)", text.substr(0, 24), text.size());
}

}  // namespace

std::string integer_range_text(__int128 min, __int128 max) {
  return fmt::format("an integer from {} to {}", wide_text(min), wide_text(max));
}

std::optional<__int128> parse_integer(std::string_view text, __int128 min, __int128 max, std::string* why) {
  const size_t first = text.starts_with('-') ? 1 : 0;
  const bool digits = first < text.size() && std::all_of(text.begin() + static_cast<ptrdiff_t>(first), text.end(),
                                                         [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) {
    if (why) *why = fmt::format("\"{}\" is not an integer; expected {}", shown(text), integer_range_text(min, max));
    return std::nullopt;
  }
  // Past 39 digits an __int128 would wrap: any such value is out of every
  // range this takes (64 bits at most).
  __int128 v = 0;
  bool huge = false;
  for (size_t i = first; i < text.size(); ++i) {
    if (v > (__int128{1} << 100)) huge = true;
    if (!huge) v = v * 10 + (text[i] - '0');
  }
  if (first == 1) v = -v;
  if (huge || v < min || v > max) {
    if (why) *why = fmt::format("{} is out of range; expected {}", shown(text), integer_range_text(min, max));
    return std::nullopt;
  }
  return v;
}

std::string json_integer_refusal(const std::string& text, bool out_of_range, __int128 min, __int128 max) {
  return fmt::format("{} is {}; expected {}", shown(text), out_of_range ? "out of range" : "not an integer",
                     integer_range_text(min, max));
}

}  // namespace impsim
