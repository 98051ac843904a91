// MetaPath (sys.meta_path with Paddle's copies at its head as a number)
// against a plain list doing what Python's list does, over random edits.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "impsim/engine/meta_path.h"

using namespace impsim;

namespace {

void check_same(const MetaPath& mp, const std::vector<FinderId>& list) {
  REQUIRE(mp.list() == list);
  REQUIRE(mp.size() == static_cast<int64_t>(list.size()));
  for (size_t i = 0; i < list.size(); ++i) CHECK(mp.at(static_cast<int64_t>(i)) == list[i]);
  CHECK(mp.proxy_copies() == std::count(list.begin(), list.end(), kProxyFinder));
  for (FinderId f = 0; f < 7; ++f) {
    auto it = std::find(list.begin(), list.end(), f);
    CHECK(mp.index(f) == (it == list.end() ? -1 : it - list.begin()));
  }
}

}  // namespace

TEST_CASE("MetaPath: insert, remove and remove_all as Python's list does them") {
  std::mt19937 rng(20261201);
  for (int round = 0; round < 200; ++round) {
    MetaPath mp;
    std::vector<FinderId> list = {kBuiltinImporter, kFrozenImporter, kPathFinder};
    mp.assign(list);
    for (int step = 0; step < 60; ++step) {
      // Paddle's finder most often, as its enables and disables are.
      const FinderId f = rng() % 2 ? kProxyFinder : static_cast<FinderId>(rng() % 7);
      switch (rng() % 5) {
        case 0:
        case 1: {
          const int64_t at = static_cast<int64_t>(rng() % (list.size() + 1));
          mp.insert(at, f);
          list.insert(list.begin() + at, f);
          break;
        }
        case 2:
          mp.insert_proxy_at_head();
          list.insert(list.begin(), kProxyFinder);
          break;
        case 3: {
          auto it = std::find(list.begin(), list.end(), f);
          CHECK(mp.remove(f) == (it != list.end()));
          if (it != list.end()) list.erase(it);
          break;
        }
        default:
          if (rng() % 4 == 0) {
            mp.remove_all(f);
            list.erase(std::remove(list.begin(), list.end(), f), list.end());
          }
      }
      check_same(mp, list);
      // same_as compares lists, not how each holds its copies of P: the
      // list assigned afresh holds its leading copies as a number.
      MetaPath fresh;
      fresh.assign(list);
      CHECK(mp.same_as(fresh));
      CHECK(fresh.same_as(mp));
      std::vector<FinderId> other = list;
      other.push_back(kPathFinder);
      MetaPath longer;
      longer.assign(other);
      CHECK_FALSE(mp.same_as(longer));
      if (!list.empty()) {
        other = list;
        other.back() = other.back() == kProxyFinder ? kPathFinder : kProxyFinder;
        MetaPath changed;
        changed.assign(other);
        CHECK_FALSE(mp.same_as(changed));
      }
    }
  }
}
