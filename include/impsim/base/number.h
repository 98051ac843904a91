// Integers, read the one way impsim reads them: every flag (the limits,
// --seed, --preemption-bound, --max-lines, --set, --shard, sweep
// --values...), every field of a shard document and every choice of a
// schedule goes through here. Decimal digits with an optional minus, no
// plus, no spaces, no leading "0x"; a value outside the range is refused,
// never wrapped modulo 2^64, clamped, or read as its last digits, and the
// refusal says the range:
//   "-1 is out of range; expected an integer from 0 to 18446744073709551615"
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace impsim {

// "an integer from MIN to MAX"
std::string integer_range_text(__int128 min, __int128 max);

// `text` as an integer within [min, max], or nullopt with `why` (when
// given) saying what was wrong and the range.
std::optional<__int128> parse_integer(std::string_view text, __int128 min, __int128 max, std::string* why = nullptr);

template <class T>
std::optional<T> parse_integer_as(std::string_view text, T min, T max, std::string* why = nullptr) {
  const std::optional<__int128> v = parse_integer(text, min, max, why);
  return v ? std::optional<T>(static_cast<T>(*v)) : std::nullopt;
}

// json_integer's message: "TEXT is out of range; expected ..." (a value
// too large or too small) or "TEXT is not an integer; expected ...".
std::string json_integer_refusal(const std::string& text, bool out_of_range, __int128 min, __int128 max);

// A JSON value as an integer within [min, max]. A number the JSON parser
// read as floating point is refused: past 2^63 in size (digits beyond
// what 64 bits hold), as out of range; else (a fraction, an exponent) as
// not an integer. Anything else (a string, a list) is not an integer.
template <class Json>
std::optional<__int128> json_integer(const Json& v, __int128 min, __int128 max, std::string* why = nullptr) {
  __int128 x = 0;
  if (v.is_number_unsigned()) {
    x = v.template get<uint64_t>();
  } else if (v.is_number_integer()) {
    x = v.template get<int64_t>();
  } else {
    const bool huge = v.is_number_float() && !(v.template get<double>() < 9.2e18 && v.template get<double>() > -9.2e18);
    if (why) *why = json_integer_refusal(v.dump(), huge, min, max);
    return std::nullopt;
  }
  if (x < min || x > max) {
    if (why) *why = json_integer_refusal(v.dump(), true, min, max);
    return std::nullopt;
  }
  return x;
}

}  // namespace impsim
