// FlatMap (base/flat_map.h) against std::map: the same look-ups after the
// same insertions, across the table's growth, and keys that share a home
// slot.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <string_view>

#include "impsim/base/flat_map.h"

using namespace impsim;

TEST_CASE("FlatMap finds what was added, and only that, as it grows") {
  FlatMap<uint64_t, int> m;
  std::map<uint64_t, int> want;
  CHECK(m.find(7) == nullptr);
  for (int i = 0; i < 5000; ++i) {
    // Keys alike in their low bits, as (parent << 32 | atom) keys are.
    const uint64_t key = (static_cast<uint64_t>(i % 37) << 32) | static_cast<uint64_t>(i / 37);
    auto [value, fresh] = m.try_emplace(key, i);
    auto [it, fresh_too] = want.try_emplace(key, i);
    CHECK(fresh == fresh_too);
    CHECK(*value == it->second);
  }
  CHECK(m.size() == want.size());
  for (auto& [k, v] : want) {
    REQUIRE(m.find(k) != nullptr);
    CHECK(*m.find(k) == v);
  }
  CHECK(m.find(uint64_t{1} << 40) == nullptr);
}

TEST_CASE("FlatMap keeps the first value of a key, and string keys by content") {
  FlatMap<std::string_view, int> m;
  m.reserve(3);
  const std::string a = "torch", b = "torch";
  CHECK(m.try_emplace(a, 1).second);
  auto [value, fresh] = m.try_emplace(b, 2);
  CHECK_FALSE(fresh);
  CHECK(*value == 1);
  CHECK(m.size() == 1);
  const FlatMap<std::string_view, int>& c = m;
  CHECK(c.find("torch") != nullptr);
  CHECK(c.find("paddle") == nullptr);
}
