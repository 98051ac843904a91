// SysModules is an ordered dict written by hand (two threaded lists over
// NameIds); these tests hold it to Python's dict semantics, with a plain
// vector of (name, module) pairs as the reference.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "impsim/scenario/names.h"
#include "impsim/engine/sys_modules.h"

using namespace impsim;

namespace {
// dict semantics, the slow obvious way.
struct RefDict {
  std::vector<std::pair<NameId, ModuleId>> items;
  auto find(NameId n) {
    return std::find_if(items.begin(), items.end(), [&](auto& p) { return p.first == n; });
  }
  void set(NameId n, ModuleId m) {
    if (auto it = find(n); it != items.end()) it->second = m;
    else items.emplace_back(n, m);
  }
  void erase(NameId n) { items.erase(find(n)); }
  void move_to_end(NameId n) {
    auto it = find(n);
    auto p = *it;
    items.erase(it);
    items.push_back(p);
  }
};

void check_same(const SysModules& s, const RefDict& r, const NameTable& names, int64_t filler) {
  std::vector<NameId> order;
  uint64_t torch = 0;
  for (auto& [n, m] : r.items) {
    order.push_back(n);
    CHECK(s.contains(n));
    CHECK(s.get(n) == m);
    if (names.is_torch(n)) ++torch;
  }
  CHECK(s.names() == order);
  CHECK(s.size() == r.items.size() + static_cast<uint64_t>(filler));
  CHECK(s.torch_count() == torch);
}
}  // namespace

TEST_CASE("sys.modules keeps dict order: set replaces in place, pop + re-insert moves to the end") {
  NameTable names;
  NameId a = names.intern("a"), torch = names.intern("torch"), b = names.intern("b"), tnn = names.intern("torch.nn");
  SysModules s;
  s.reset(names, 5);
  CHECK(s.size() == 5);
  s.set(a, 1);
  s.set(torch, 2);
  s.set(b, 3);
  s.set(tnn, 4);
  s.set(torch, 7);  // replaced, stays second
  CHECK(s.names() == std::vector<NameId>{a, torch, b, tnn});
  CHECK(s.get(torch) == 7);
  s.move_to_end(a);
  CHECK(s.names() == std::vector<NameId>{torch, b, tnn, a});
  CHECK(s.torch_count() == 2);
  s.erase(torch);
  CHECK_FALSE(s.contains(torch));
  CHECK(s.torch_count() == 1);
  CHECK(s.size() == 5 + 3);
}

TEST_CASE("for_each_torch visits the torch names in dict order and may erase the one it is on") {
  NameTable names;
  std::vector<NameId> ids;
  for (const char* n : {"torch", "x", "torch.a", "torchvision", "torch.b", "y"}) ids.push_back(names.intern(n));
  SysModules s;
  s.reset(names, 0);
  for (size_t i = 0; i < ids.size(); ++i) s.set(ids[i], static_cast<ModuleId>(i));
  std::vector<NameId> seen;
  s.for_each_torch([&](NameId n) {
    seen.push_back(n);
    if (n != ids[2]) s.erase(n);
  });
  // torchvision is not a torch name: only torch and torch.*
  CHECK(seen == std::vector<NameId>{ids[0], ids[2], ids[4]});
  CHECK(s.names() == std::vector<NameId>{ids[1], ids[2], ids[3], ids[5]});
  CHECK(s.torch_count() == 1);
}

TEST_CASE("every change bumps the version - reading does not") {
  NameTable names;
  NameId a = names.intern("a"), b = names.intern("b");
  SysModules s;
  s.reset(names, 0);
  uint64_t v = s.version();
  s.set(a, 1);
  s.set(b, 2);
  CHECK(s.version() != v);
  v = s.version();
  (void)s.names();
  (void)s.contains(a);
  CHECK(s.version() == v);
  s.move_to_end(b);  // already last: the dict is unchanged, and so is its version
  CHECK(s.version() == v);
  s.move_to_end(a);
  CHECK(s.version() != v);
  v = s.version();
  s.erase(a);
  CHECK(s.version() != v);
}

TEST_CASE("5,000 random operations agree with a plain dict") {
  NameTable names;
  std::vector<NameId> pool;
  for (int i = 0; i < 12; ++i) {
    pool.push_back(names.intern("m" + std::to_string(i)));
    pool.push_back(names.intern(i == 0 ? std::string("torch") : "torch.t" + std::to_string(i)));
  }
  std::mt19937 rng(20261130);
  SysModules s;
  s.reset(names, 3);
  RefDict r;
  for (int step = 0; step < 5000; ++step) {
    NameId n = pool[rng() % pool.size()];
    const bool present = s.contains(n);
    switch (rng() % 4) {
      case 0:
      case 1:
        s.set(n, static_cast<ModuleId>(step));
        r.set(n, static_cast<ModuleId>(step));
        break;
      case 2:
        if (present) {
          s.erase(n);
          r.erase(n);
        }
        break;
      case 3:
        if (present) {
          s.move_to_end(n);
          r.move_to_end(n);
        }
        break;
    }
    if (step % 97 == 0) check_same(s, r, names, 3);
  }
  check_same(s, r, names, 3);
}
