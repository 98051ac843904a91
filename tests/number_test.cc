// Integers read the one way (base/number.h) and SHA-256 (base/sha256.h).
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "impsim/base/number.h"
#include "impsim/base/sha256.h"

using namespace impsim;

TEST_CASE("an integer is read exactly within its range, and refused with the range outside it") {
  std::string why;
  CHECK(parse_integer_as<uint64_t>("18446744073709551615", 0, UINT64_MAX) == UINT64_MAX);
  CHECK(parse_integer_as<int64_t>("-9223372036854775808", INT64_MIN, INT64_MAX) == INT64_MIN);
  CHECK(parse_integer_as<int>("0", 0, 16) == 0);
  // The cases that used to wrap or slip through: -1 as 2^64 - 1, 2^32 + 2
  // as 2, 2^64 as 0.
  CHECK_FALSE(parse_integer_as<uint64_t>("-1", 0, UINT64_MAX, &why));
  CHECK(why == "-1 is out of range; expected an integer from 0 to 18446744073709551615");
  CHECK_FALSE(parse_integer_as<uint32_t>("4294967298", 1, 100000, &why));
  CHECK(why == "4294967298 is out of range; expected an integer from 1 to 100000");
  CHECK_FALSE(parse_integer_as<uint64_t>("18446744073709551616", 0, UINT64_MAX, &why));
  CHECK(why == "18446744073709551616 is out of range; expected an integer from 0 to 18446744073709551615");
  CHECK_FALSE(parse_integer_as<int64_t>("9223372036854775808", INT64_MIN, INT64_MAX, &why));
  // Far past 128 bits: still out of range, not wrapped.
  CHECK_FALSE(parse_integer("1" + std::string(200, '0'), 0, 10, &why));
  CHECK(why.find("is out of range") != std::string::npos);
  CHECK(why.find("(201 characters)") != std::string::npos);  // a long value is named, not printed
  for (const char* bad : {"", "-", "+1", " 1", "1 ", "0x10", "1e3", "1.0", "１"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_integer(bad, 0, 100, &why));
    CHECK(why.find("is not an integer; expected an integer from 0 to 100") != std::string::npos);
  }
}

TEST_CASE("a JSON integer is range-checked the same way, a float past 64 bits included") {
  std::string why;
  CHECK(json_integer(nlohmann::json::parse("18446744073709551615"), 0, UINT64_MAX) ==
        static_cast<__int128>(UINT64_MAX));
  CHECK(json_integer(nlohmann::json::parse("-5"), -10, 10) == -5);
  CHECK_FALSE(json_integer(nlohmann::json::parse("-5"), 0, 16, &why));
  CHECK(why == "-5 is out of range; expected an integer from 0 to 16");
  CHECK_FALSE(json_integer(nlohmann::json::parse("9223372036854775808"), INT64_MIN, INT64_MAX, &why));
  CHECK(why == "9223372036854775808 is out of range; expected an integer from -9223372036854775808 to "
               "9223372036854775807");
  // Digits past 2^64: the parser holds them as a double.
  CHECK_FALSE(json_integer(nlohmann::json::parse("18446744073709551616"), 0, UINT64_MAX, &why));
  CHECK(why.find("is out of range") != std::string::npos);
  for (const char* bad : {"2.5", "1e3", "\"7\"", "[1]", "null", "true"}) {
    CAPTURE(bad);
    CHECK_FALSE(json_integer(nlohmann::json::parse(bad), 0, 100000, &why));
    CHECK(why.find("is not an integer; expected an integer from 0 to 100000") != std::string::npos);
  }
}

TEST_CASE("SHA-256 gives FIPS 180-4's digests (and Python hashlib's)") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Added in pieces of every size across the 64-byte blocks: the same.
  std::string bytes;
  for (int r = 0; r < 3; ++r)
    for (int b = 0; b < 256; ++b) bytes += static_cast<char>(b);
  const std::string want = "f3a25aa93aa2fbba28d79260535bbd6a5eb0fc1c24a8b0f04e12b484c1dfe363";
  CHECK(sha256_hex(bytes) == want);
  for (size_t piece : {1u, 7u, 63u, 64u, 65u, 200u}) {
    Sha256 s;
    for (size_t at = 0; at < bytes.size(); at += piece) s.add(std::string_view(bytes).substr(at, piece));
    CHECK(s.hex() == want);
  }
}
