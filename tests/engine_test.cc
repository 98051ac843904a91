// The engine's rules, one at a time, on tiny programs.
#include <doctest/doctest.h>

#include <algorithm>

#include "impsim/engine/engine.h"
#include "test_util.h"

using namespace impsim;

namespace {

// A model with names a and b, and an engine on it before the first line.
struct Bench {
  Scenario sc = parse_scenario(R"({"impsim": 1, "tree": {"a": {}, "b": {}}, "program": []})", "bench.json");
  Model model = compile_model(sc, {});
  SetId a = model.sets.intern({model.names.find("a")});
  SetId b = model.sets.intern({model.names.find("b")});
  SetId ab = model.sets.intern({model.names.find("a"), model.names.find("b")});
  Engine engine{model, Variant::Before};
  Bench() { engine.set_up(); }
  const FinderState& f() const { return engine.finder(); }
};

}  // namespace

TEST_CASE("scope update: P absent -> the given scope replaces it") {
  Bench t;
  t.engine._modify_scope(t.a);
  CHECK(t.f().scope == t.a);
  CHECK_FALSE(t.f().globally_enabled);
  t.engine._modify_scope(std::nullopt);
  CHECK(t.f().scope == kEmptySet);
  CHECK(t.f().globally_enabled);
}

TEST_CASE("scope update: P global -> the given scope replaces it, global off") {
  Bench t;
  t.engine.enable(std::nullopt);
  REQUIRE(t.f().globally_enabled);
  t.engine.enable(t.a);
  CHECK(t.f().scope == t.a);
  CHECK_FALSE(t.f().globally_enabled);
  CHECK(t.engine.copies() == 2);
}

TEST_CASE("scope update: P scoped -> None turns global, a set extends") {
  Bench t;
  t.engine.enable(t.a);
  t.engine.enable(t.b);
  CHECK(t.f().scope == t.ab);
  CHECK_FALSE(t.f().globally_enabled);
  t.engine.enable(std::nullopt);
  CHECK(t.f().globally_enabled);
  CHECK(t.f().scope == t.ab);
  CHECK(t.engine.copies() == 3);
}

TEST_CASE("enable always inserts - disable removes one copy, and nothing when absent") {
  Bench t;
  t.engine.enable(t.a);
  t.engine.enable(t.a);
  CHECK(t.engine.copies() == 2);
  t.engine.disable();
  CHECK(t.engine.copies() == 1);
  t.engine.disable();
  t.engine.disable();  // absent: only a warning
  CHECK(t.engine.copies() == 0);
  CHECK(t.engine.counters().toggles == 4);
  CHECK(t.engine.counters().walks == 4);
}

TEST_CASE("the finder starts absent, global, with an empty scope (TorchProxyMetaFinder() runs _set_scope(None))") {
  Bench t;
  CHECK(t.engine.copies() == 0);
  CHECK(t.f().globally_enabled);
  CHECK(t.f().scope == kEmptySet);
}

TEST_CASE("guard truth table") {
  SUBCASE("absent, enable=True, scope None: enable on entry, restore then disable on exit") {
    Bench t;
    GuardEntry g = t.engine.guard_enter(true, std::nullopt);
    CHECK_FALSE(g.noop);
    CHECK(t.engine.copies() == 1);
    CHECK(t.f().globally_enabled);
    t.engine.guard_exit(g);
    CHECK(t.engine.copies() == 0);
    // Restored to the starting flag: TorchProxyMetaFinder() ran _set_scope(None).
    CHECK(t.f().globally_enabled);
  }
  SUBCASE("present and global, enable=True, scope None: nothing") {
    Bench t;
    t.engine.enable(std::nullopt);
    GuardEntry g = t.engine.guard_enter(true, std::nullopt);
    CHECK(g.noop);
    t.engine.guard_exit(g);
    CHECK(t.engine.copies() == 1);
    CHECK(t.engine.counters().toggles == 1);
  }
  SUBCASE("present with the same scope: nothing") {
    Bench t;
    t.engine.enable(t.a);
    GuardEntry g = t.engine.guard_enter(true, t.a);
    CHECK(g.noop);
    CHECK(t.engine.copies() == 1);
  }
  SUBCASE("present with another scope: a second copy, the union inside, restored after") {
    Bench t;
    t.engine.enable(t.a);
    GuardEntry g = t.engine.guard_enter(true, t.b);
    CHECK(t.engine.copies() == 2);
    CHECK(t.f().scope == t.ab);
    t.engine.guard_exit(g);
    CHECK(t.engine.copies() == 1);
    CHECK(t.f().scope == t.a);
  }
  SUBCASE("present and global, enable=True with a scope: global is turned off inside") {
    Bench t;
    t.engine.enable(std::nullopt);
    GuardEntry g = t.engine.guard_enter(true, t.a);
    CHECK_FALSE(g.noop);
    CHECK_FALSE(t.f().globally_enabled);
    CHECK(t.f().scope == t.a);
    t.engine.guard_exit(g);
    CHECK(t.f().globally_enabled);
    CHECK(t.engine.copies() == 1);
  }
  SUBCASE("absent with an empty scope, enable=False: nothing") {
    Bench t;
    GuardEntry g = t.engine.guard_enter(false, std::nullopt);
    CHECK(g.noop);
    t.engine.guard_exit(g);
    CHECK(t.engine.copies() == 0);
  }
  // enable=False on a P scoped to {a}: the copies inside the guard and after
  // it; the exit enables again, keeping the scope {a}.
  auto check_disabling_guard = [](Bench& t, int inside, int after) {
    GuardEntry g = t.engine.guard_enter(false, std::nullopt);
    CHECK_FALSE(g.noop);
    CHECK(t.engine.copies() == inside);
    t.engine.guard_exit(g);
    CHECK(t.engine.copies() == after);
    CHECK(t.f().scope == t.a);
    CHECK_FALSE(t.f().globally_enabled);
  };
  SUBCASE("absent but scoped, enable=False: the exit leaves a registration behind") {
    Bench t;
    t.engine.enable(t.a);
    t.engine.disable();
    REQUIRE(t.engine.copies() == 0);
    REQUIRE(t.f().scope == t.a);
    check_disabling_guard(t, 0, 1);
  }
  SUBCASE("present, enable=False: one copy out on entry, back at index 0 on exit") {
    Bench t;
    t.engine.enable(t.a);
    t.engine.enable(t.a);
    check_disabling_guard(t, 1, 2);
  }
}

TEST_CASE("walks count every name in sys.modules, filler included") {
  auto r = test::run_json(R"({"impsim": 1,
    "sys_modules": {"preloaded": ["numpy", "six"], "filler": 1000, "torch": ["torch"]},
    "tree": {}, "program": [{"enable": {}}, {"disable": {}}], "variants": ["before"]})");
  const VariantRun& v = r->run.runs[0];
  // enable sees 1003 names and moves torch to the cache; disable sees 1002.
  CHECK(v.counters.walks == 2);
  CHECK(v.counters.comparisons == 1003 + 1002);
  CHECK(v.outcome.modules == std::vector<std::string>{"numpy", "six", "torch"});
}

TEST_CASE("enable moves real torch modules into the cache - disable puts them back") {
  auto r = test::run_json(R"({"impsim": 1,
    "sys_modules": {"torch": ["torch", "torch.cuda"]},
    "tree": {}, "program": [{"enable": {}, "label": "on"}], "variants": ["before"]})");
  const VariantRun& v = r->run.runs[0];
  CHECK(v.outcome.modules.empty());
  CHECK(v.outcome.proxy_copies == 1);
}

TEST_CASE("a global proxy serves torch from the paddle tree, and disable clears it") {
  const char* json = R"({"impsim": 1,
    "tree": {"paddle": {"package": true}, "paddle.nn": {}},
    "program": [
      {"enable": {}},
      {"import": "torch.nn", "label": "in"},
      {"disable": {}},
      {"import": "torch", "optional": true, "label": "out"}
    ], "variants": ["before"]})";
  auto r = test::run_json(json);
  const VariantRun& v = r->run.runs[0];
  CHECK(v.outcome.results[0].second == Results{{"ok", 1}});
  CHECK(v.outcome.results[1].second == Results{{"ModuleNotFoundError", 1}});
  // The proxies are gone, their paddle sources stay.
  CHECK(v.outcome.modules == std::vector<std::string>{"paddle", "paddle.nn"});
  CHECK_FALSE(v.outcome.error.has_value());
}

TEST_CASE("circular imports take the partly executed module - bodies finish innermost first") {
  auto r = test::run_json(R"({"impsim": 1,
    "tree": {"a": {"body": [{"import": "b"}]}, "b": {"body": [{"import": "a"}]}},
    "program": [{"import": "a"}], "variants": ["before"]})");
  const VariantRun& v = r->run.runs[0];
  CHECK_FALSE(v.outcome.error.has_value());
  // _load_unlocked moves each module to the end when its body finishes.
  CHECK(v.outcome.modules == std::vector<std::string>{"b", "a"});
}

TEST_CASE("a body that raises is removed from sys.modules - optional catches ImportError") {
  auto r = test::run_json(R"({"impsim": 1,
    "tree": {"a": {"body": [{"import": "nowhere"}]}},
    "program": [{"import": "a", "optional": true, "label": "try_a"}], "variants": ["before"]})");
  const VariantRun& v = r->run.runs[0];
  CHECK_FALSE(v.outcome.error.has_value());
  CHECK(v.outcome.modules.empty());
  CHECK(v.outcome.results[0].second == Results{{"ModuleNotFoundError", 1}});
}

TEST_CASE("an uncaught exception ends the run with its traceback of steps") {
  auto r = test::run_json(R"({"impsim": 1,
    "tree": {"a": {"package": true, "body": [{"find_spec": "a"}, {"import": "b.c"}]}, "b": {}},
    "program": [{"guard": {"enable": true}, "body": [{"import": "a"}]}], "variants": ["before"]})");
  const VariantRun& v = r->run.runs[0];
  REQUIRE(v.outcome.error.has_value());
  CHECK(v.outcome.error->type == "ModuleNotFoundError");
  CHECK(v.outcome.error->message == "No module named 'b.c'; 'b' is not a package");
  CHECK(v.outcome.error->traceback ==
        std::vector<std::string>{"/program/0", "/program/0/body/0", "/tree/a/body/1"});
  // The guard's exit still ran: no copy is left.
  CHECK(v.outcome.proxy_copies == 0);
  CHECK(r->run.exit_status() == 1);
}

TEST_CASE("call: frames of a module marked disabled stop the proxy") {
  const char* json = R"({"impsim": 1,
    "tree": {"paddle": {"package": true}, "blk": {}},
    "blocked": ["blk"],
    "program": [
      {"enable": {}},
      {"import": "blk"},
      {"call": "blk", "body": [{"import": "torch", "optional": true, "label": "inside"}]},
      {"import": "torch", "label": "outside"}
    ], "variants": ["before"]})";
  auto r = test::run_json(json);
  const VariantRun& v = r->run.runs[0];
  CHECK(v.outcome.marks.at("blk") == "disabled");
  CHECK(v.outcome.results[0].second == Results{{"ModuleNotFoundError", 1}});
  CHECK(v.outcome.results[1].second == Results{{"ok", 1}});
}

TEST_CASE("labels sum every run of a step, with one result per run") {
  auto r = test::run_json(R"({"impsim": 1,
    "tree": {"pkg": {"package": true}},
    "program": [
      {"enable": {"scope": ["pkg"]}},
      {"find_spec": "pkg.missing", "repeat": 3, "label": "probe"}
    ], "variants": ["before"]})");
  const VariantRun& v = r->run.runs[0];
  // The first probe imports pkg (one lookup) then probes (one lookup).
  CHECK(v.labels[0].second.lookups == 4);
  CHECK(v.labels[0].second.max_depth == 1);
  CHECK(v.outcome.results[0].second == Results{{"none", 3}});
}

TEST_CASE("the fix suppresses the name being resolved, and only that name") {
  auto r = test::run_json(R"({"impsim": 1,
    "tree": {"pkg": {"package": true}},
    "program": [
      {"enable": {"scope": ["pkg"]}}, {"enable": {"scope": ["pkg"]}}, {"enable": {"scope": ["pkg"]}},
      {"import": "pkg"},
      {"find_spec": "pkg.missing", "label": "probe"}
    ]})");
  const Counters& after = test::variant_run(r->run, Variant::After).labels[0].second;
  CHECK(after.lookups == 3);
  CHECK(after.asks == 9);
  CHECK(after.suppressed == 6);
}

TEST_CASE("the event limit stops a runaway with exit status 3 and the counters so far") {
  RunOptions o;
  o.limits.max_events = 1000;
  o.overrides["k"] = 9;
  auto r = test::run_json(R"({"impsim": 1, "params": {"k": 1},
    "tree": {"pkg": {"package": true}},
    "program": [{"nest": "$k", "guard": {"enable": true, "scope": ["pkg", "o{i}"]}, "body": [
      {"import": "pkg"}, {"find_spec": "pkg.missing", "label": "probe"}]}],
    "variants": ["before"]})", o);
  const VariantRun& v = r->run.runs[0];
  REQUIRE(v.limit.has_value());
  CHECK(v.limit->limit == "max-events");
  CHECK(v.limit->traceback.back() == "/program/0/body/1");
  CHECK(v.events == 1001);
  CHECK(r->run.exit_status() == 3);
}
