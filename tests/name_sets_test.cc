#include <doctest/doctest.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <string>

#include "impsim/model/name_sets.h"
#include "test_util.h"

using namespace impsim;

TEST_CASE("interned sets: equal sets share an id - covers is the scope test") {
  NameTable t;
  SetTable s;
  NameId a = t.intern("a"), b = t.intern("b");
  SetId ab = s.intern({a, b});
  CHECK(s.intern({b, a, a}) == ab);
  CHECK(s.intern({}) == kEmptySet);
  CHECK(s.unite(s.intern({a}), s.intern({b})) == ab);
  CHECK(s.covers(t, ab, t.intern("a.x.y")));
  CHECK_FALSE(s.covers(t, ab, t.intern("c.a")));
  CHECK_FALSE(s.covers(t, kEmptySet, a));
}

TEST_CASE("a set the engine made is freed when its last holder lets go, and its id comes back with a new generation") {
  NameTable t;
  SetTable s;
  NameId a = t.intern("a"), b = t.intern("b"), c = t.intern("c");
  SetId scenario_set = s.intern({a});
  s.pin_all();
  SetId ab = s.unite(scenario_set, s.intern({b}));
  s.hold(ab);
  const uint64_t first = s.identity(ab);
  const size_t live = s.live();
  CHECK(s.release(ab));
  CHECK(s.live() == live - 1);
  SetId ac = s.intern({a, c});  // takes the freed id
  CHECK(ac == ab);
  CHECK(s.identity(ac) != first);
  CHECK(s.members(ac) == std::vector<NameId>{a, c});
  // the freed content is a new set now, not the old id
  SetId ab2 = s.intern({a, b});
  CHECK(ab2 != ac);
  // pinned sets are never freed
  s.hold(scenario_set);
  CHECK_FALSE(s.release(scenario_set));
  CHECK(s.members(scenario_set) == std::vector<NameId>{a});
  // nor released more often than held (the engine releases the empty set unheld)
  const size_t live_now = s.live();
  for (int i = 0; i < 1000; ++i) {
    CHECK_FALSE(s.release(kEmptySet));
    CHECK_FALSE(s.release(scenario_set));
  }
  CHECK(s.live() == live_now);
}

TEST_CASE("a chain of unions held one at a time stays as small as the last set") {
  NameTable t;
  SetTable s;
  s.pin_all();
  SetId held = kEmptySet;
  for (int i = 0; i < 5000; ++i) {
    SetId one = s.intern({t.intern("m" + std::to_string(i))});
    SetId next = s.unite(held, one);
    s.hold(next);
    if (held != kEmptySet) s.release(held);
    held = next;
  }
  CHECK(s.members(held).size() == 5000);
  // the last union and the 5,000 one-name sets (never held, never freed)
  CHECK(s.live() <= 5002);
}

namespace {
// Peak resident memory of one run of the impsim binary, in KiB (wait4).
long peak_kib_of_impsim(const std::vector<std::string>& args) {
  std::vector<std::string> argv{IMPSIM_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  REQUIRE(posix_spawn(&pid, IMPSIM_BINARY, &actions, nullptr, cargv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  struct rusage usage {};
  REQUIRE(wait4(pid, &status, 0, &usage) == pid);
  CHECK(WIFEXITED(status));
  return usage.ru_maxrss;
}

std::string distinct_enables(int n) {
  std::string program;
  for (int i = 0; i < n; ++i) program += (i ? "," : "") + std::string(R"({"enable": {"scope": ["m)") + std::to_string(i) + R"("]}})";
  return R"({"impsim": 1, "tree": {}, "program": [)" + program + "]}";
}
}  // namespace

TEST_CASE("enables with distinct scopes keep one scope alive, not every union (2.1 GB at 20,000 before)") {
  auto r = test::run_json(distinct_enables(3000), [] { RunOptions o; o.variants = {"before"}; return o; }());
  // the engine's own count: the scenario's 3,001 sets and the current scope
  Model model = compile_model(r->scenario, {});
  Engine e(model, Variant::Before);
  e.run();
  CHECK(e.live_sets() <= 3001 + 2);
  CHECK(e.copies() == 3000);
  // and the process: 20,000 enables took 2.7 GB of RSS when every union was kept
  std::string file = test::write_temp("distinct_enables.json", distinct_enables(20000));
  long kib = peak_kib_of_impsim({"run", file, "--variant", "before"});
  // Under AddressSanitizer the quarantine keeps freed sets: RSS says nothing there.
  if (test::kMemoryMeasurable) CHECK_MESSAGE(kib < 256 * 1024, "peak RSS " << kib << " KiB");
}
