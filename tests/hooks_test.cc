// Finder objects and hook finders (hook_language.h): the engine against counts
// measured on REAL CPython, the list representation against the Paddle
// engine's copies, CPython 3.14's snapshot, and the reader's errors.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

using namespace impsim;
using namespace impsim::test;

namespace {

std::vector<std::string> hook_scenarios() { return json_files("tests/data/hooks"); }

std::string load_error(const std::string& json) {
  try {
    parse_scenario(json, "inline.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// A small hook scenario; `extra` is spliced in at the top level.
std::string with(const std::string& extra, const std::string& program = R"([{"import": "a"}])") {
  return R"({"impsim": 1, "tree": {"a": {}},
    "hooks": {"h": {"claims": {"all": true}, "find_spec": [{"reenter": "find_spec"}], "guard": "global_set"}},
    "finders": {"f": {"hook": "h"}}, )" +
         extra + R"("program": )" + program + "}";
}

}  // namespace

// The expectations in tests/data/hooks/*.json (every count, every verdict)
// were measured by tools/lib/crosscheck/hooks_real.py on Debian's CPython
// 3.11: the real importlib running hook classes generated from each
// declaration (tools/check/crosscheck --hooks re-measures them, on 3.9 to 3.13 too).
TEST_CASE("hook scenarios: counts and verdicts as measured on real CPython") {
  const auto files = hook_scenarios();
  REQUIRE(files.size() >= 7);
  for (const std::string& f : files) {
    CAPTURE(f);
    Scenario sc = parse_scenario_file(f);
    ScenarioRun run = run_scenario(sc, {});
    size_t checked = 0;
    for (auto& r : run.runs) checked += r.expectations.size();
    CHECK(checked > 0);
    CHECK(run.expectations_ok());
    CHECK(run.exit_status() == kExitOk);
  }
}

// The list of finder objects and the Paddle engine's "k copies of P first"
// must agree on every shipped Paddle scenario, every design, on both the
// live list (3.11) and the snapshot (3.14): the copies engine is the one
// tools/check/crosscheck checks against the real finder.
TEST_CASE("finder objects: every shipped Paddle scenario counts the same as with the copies representation") {
  for (const std::string& f : shipped_paddle_scenarios()) {
    // A lazy scenario runs on 3.15 only: there, with both representations.
    const bool lazy = parse_scenario_file(f).lazy;
    for (CPython cp : {CPython::V3_11, CPython::V3_14, CPython::V3_15}) {
      if (lazy != (cp == CPython::V3_15)) continue;
      CAPTURE(f);
      Scenario plain = parse_scenario_file(f);
      Scenario listed = parse_scenario_file(f);
      listed.hooks.used = true;
      RunOptions o;
      o.cpython = cp;
      ScenarioRun a = run_scenario(plain, o);
      ScenarioRun b = run_scenario(listed, o);
      REQUIRE(a.runs.size() == b.runs.size());
      for (size_t i = 0; i < a.runs.size(); ++i) {
        const VariantRun& x = a.runs[i];
        const VariantRun& y = b.runs[i];
        CAPTURE(variant_name(x.variant));
        for (const CounterInfo& c : kCounters) CHECK(x.counters.*c.field == y.counters.*c.field);
        Outcome yo = y.outcome;
        CHECK(yo.meta_path.size() == static_cast<size_t>(yo.proxy_copies) + 3);
        yo.meta_path.clear();
        CHECK(x.outcome == yo);
        CHECK(x.limit.has_value() == y.limit.has_value());
      }
    }
  }
}

// live_insert.json under CPython 3.14, derived by hand: _find_spec walks
// list(sys.meta_path) = [f, B, F, PathFinder]. f imports `side`, whose body
// puts `late` in front twice, but the outer walk's snapshot never sees it:
// PathFinder finds x. Searches: import x, and side's import inside f: 2;
// f is called by both; late by none. (On 3.11 the live walk reaches late
// at index 1: 3 searches, late called 3 times, as real 3.11 measured.)
TEST_CASE("CPython 3.14 snapshot: finders inserted during a walk are not asked by it") {
  Scenario sc = parse_scenario_file(std::string(IMPSIM_SOURCE_DIR) + "/tests/data/hooks/live_insert.json");
  RunOptions o;
  o.cpython = CPython::V3_14;
  o.variants = {"as_is"};
  ScenarioRun run = run_scenario(sc, o);
  const VariantRun& r = run.runs[0];
  CHECK(counter_of(r, "searches") == 2);
  CHECK(counter_of(r, "finder_calls:f") == 2);
  CHECK(counter_of(r, "finder_calls:late") == 0);
  CHECK(counter_of(r, "max_depth") == 2);
  CHECK(r.outcome.meta_path ==
        std::vector<std::string>{"late", "f", "BuiltinImporter", "FrozenImporter", "PathFinder"});
}

TEST_CASE("the reader gives variants typed: a design, its revision, its hook, in variants, expect and ratio_to") {
  const Scenario sc = parse_scenario(with(R"("variants": ["as_is", "skip_self:h@04efefd"],
    "expect": {"skip_self:h@04efefd": {"searches": {"ratio_to": "as_is", "<=": 2}}, "as_is": {"searches": 1}},
    "expect_outcome": {"skip_self:h@04efefd": "identical"},)"),
                                     "inline.json");
  const Variant as_is{DesignId::AsIs, std::nullopt, {}};
  const Variant fix{DesignId::SkipSelf, Revision::R04efefd, "h"};
  CHECK(sc.variants == std::vector<Variant>{as_is, fix});
  REQUIRE(sc.expect.size() == 2);
  // `expect` is an object: its keys come in order.
  CHECK(sc.expect[0].variant == as_is);
  CHECK(sc.expect[1].variant == fix);
  REQUIRE(sc.expect[1].budget_at(0) != nullptr);
  CHECK(sc.expect[1].budget_at(0)->ratio_to == as_is);
  CHECK_FALSE(sc.expect[0].budget_at(0));
  REQUIRE(sc.expect_outcome.size() == 1);
  CHECK(sc.expect_outcome[0].variant == fix);
  // Written back as they were spelt.
  CHECK(budget_text(*sc.expect[1].budget_at(0)) == "<= x2.00 of as_is");
  CHECK(budget_json(*sc.expect[1].budget_at(0)) == nlohmann::ordered_json::parse(R"({"ratio_to": "as_is", "<=": 2})"));
}

TEST_CASE("hook scenarios refuse the fast engine with a usage error") {
  Scenario sc = parse_scenario(with(""), "inline.json");
  RunOptions o;
  o.engine = EngineKind::Fast;
  CHECK_THROWS_AS(run_scenario(sc, o), UsageError);
}

TEST_CASE("hook designs: as_is is the default, a fix may name one hook, Paddle scenarios refuse them") {
  Scenario sc = parse_scenario(with(""), "inline.json");
  CHECK(sc.variants == std::vector<Variant>{Variant{DesignId::AsIs, std::nullopt, {}}});
  auto v = parse_variant("skip_self:h");
  REQUIRE(v.has_value());
  CHECK(variant_name(*v) == "skip_self:h");
  CHECK_FALSE(hook_variant_problem(sc, *v).has_value());
  CHECK(hook_variant_problem(sc, *parse_variant("skip_self:nope")).has_value());
  Scenario paddle = parse_scenario(kProbeScenario, "inline.json");
  CHECK(hook_variant_problem(paddle, *parse_variant("as_is")).has_value());
  // Paddle's designs change only P: refused where P takes no part, run where it does.
  const std::optional<std::string> why = hook_variant_problem(sc, Variant::Before);
  REQUIRE(why.has_value());
  CHECK(why->find("\"before\" is a design of Paddle's proxy finder P, which takes no part") != std::string::npos);
  CHECK(why->find("use a hook design: as_is, idempotent_install") != std::string::npos);
  Scenario with_p = parse_scenario(with("", R"([{"enable": {}}, {"import": "a"}])"), "inline.json");
  CHECK_FALSE(hook_variant_problem(with_p, Variant::After).has_value());
  Scenario p_listed = parse_scenario(with(R"("meta_path": ["P", "PathFinder"],)"), "inline.json");
  CHECK_FALSE(hook_variant_problem(p_listed, Variant::After).has_value());
  CHECK(load_error(R"({"impsim": 1, "tree": {}, "program": [], "variants": ["as_is"]})").find("/variants/0") !=
        std::string::npos);
}

TEST_CASE("hook reader errors name the pointer and what was expected") {
  CHECK(load_error(with("", R"([{"install": "nobody"}])"))
            .find("at /program/0/install: unknown finder object \"nobody\"") != std::string::npos);
  CHECK(load_error(with("", R"([{"install": "PathFinder"}])")).find("install takes a hook finder object") !=
        std::string::npos);
  CHECK(load_error(with("", R"([{"insert": "f"}])")).find("needs \"at\"") != std::string::npos);
  CHECK(load_error(with(R"("meta_path": ["PathFinder", "zz"],)")).find("at /meta_path/1: unknown finder object") !=
        std::string::npos);
  CHECK(load_error(R"({"impsim": 1, "tree": {}, "program": [], "hooks": {}, "finders": {"f": {"hook": "h"}}})")
            .find("at /finders/f/hook: unknown hook \"h\"") != std::string::npos);
  CHECK(load_error(R"({"impsim": 1, "tree": {}, "program": [], "hooks": {"h": {"guard": "mutex"}}})")
            .find("at /hooks/h/guard: unknown guard \"mutex\"") != std::string::npos);
  CHECK(load_error(R"({"impsim": 1, "tree": {}, "program": [], "hooks": {"h": {"install": "push"}}})")
            .find("at /hooks/h/install: unknown install policy \"push\"") != std::string::npos);
  CHECK(load_error(R"({"impsim": 1, "tree": {}, "program": [], "hooks": {"h": {"find_spec": [{"call": "X"}]}}})")
            .find("at /hooks/h/find_spec/0/call: unknown finder object \"X\"") != std::string::npos);
  CHECK(load_error(
            R"({"impsim": 1, "tree": {}, "program": [], "hooks": {"h": {"claims": {"all": true, "top_level": true}}}})")
            .find("exactly one of") != std::string::npos);
  CHECK(load_error(R"({"impsim": 1, "tree": {}, "program": [], "hooks": {"h": {"api": "find_loader"}}})")
            .find("at /hooks/h/api: unknown finder API \"find_loader\"") != std::string::npos);
  CHECK(load_error(with(R"("expect": {"as_is": {"finder_calls:g": 1}},)")).find("unknown counter") !=
        std::string::npos);
  // The message lists what a hook scenario may name, not only Paddle's counters.
  const std::string listed = load_error(with(R"("expect": {"as_is": {"finder_calls:g#1": 1}},)"));
  CHECK(listed.find("legacy_warnings") != std::string::npos);
  CHECK(listed.find("PathFinder; ID#k") != std::string::npos);
  CHECK(load_error(with(R"("expect": {"as_is": {"finder_calls:f": 1, "searches": 2}},)")).empty());
  CHECK(load_error(R"({"impsim": 1, "tree": {}, "program": [], "hooks": {"h": {}}, "finders": {"P": {"hook": "h"}}})")
            .find("at /finders/P: \"P\" is a predefined finder object") != std::string::npos);
}

TEST_CASE("an unknown finder id: the nearest id and the list of those the scenario has, P only where it takes part") {
  // P never enters this scenario's sys.meta_path: offering it would mislead.
  CHECK(load_error(with("", R"([{"install": "g"}])"))
            .find("unknown finder object \"g\"; expected one of: BuiltinImporter, FrozenImporter, PathFinder, f") !=
        std::string::npos);
  CHECK(load_error(with("", R"([{"install": "ff"}])")).find("unknown finder object \"ff\" (did you mean \"f\"?)") !=
        std::string::npos);
  CHECK(load_error(with("", R"([{"install": "PathFinder"}])")).find("finders and P") == std::string::npos);
  // With an enable step, or P in the list, P is one of the scenario's objects.
  CHECK(load_error(with("", R"([{"enable": {}}, {"install": "g"}])"))
            .find("expected one of: BuiltinImporter, FrozenImporter, P, PathFinder, f") != std::string::npos);
  CHECK(load_error(with(R"("meta_path": ["P", "PathFinder"],)", R"([{"install": "g"}])"))
            .find("expected one of: BuiltinImporter, FrozenImporter, P, PathFinder, f") != std::string::npos);
  CHECK(load_error(with("", R"([{"enable": {}}, {"install": "PathFinder"}])")).find("finders and P") !=
        std::string::npos);
}

TEST_CASE("remove of an absent finder raises ValueError unless optional") {
  auto r = run_json(with(R"("allow_error": true,)", R"([{"remove": "f"}])"));
  REQUIRE(r->run.runs[0].outcome.error.has_value());
  CHECK(r->run.runs[0].outcome.error->type == "ValueError");
  auto ok = run_json(with("", R"([{"remove": "f", "optional": true}, {"remove": "f", "copies": "all"}])"));
  CHECK_FALSE(ok->run.runs[0].outcome.error.has_value());
}

TEST_CASE("Paddle's proxy finder is the object P in a hook scenario") {
  // enable inserts P at 0, disable removes the first P: both through the list.
  auto r = run_json(R"({"impsim": 1, "tree": {"a": {}}, "meta_path": ["PathFinder"],
    "program": [{"enable": {}}, {"enable": {}}, {"import": "a"}, {"disable": {}}]})");
  const VariantRun& v = r->run.runs[0];
  CHECK(v.outcome.meta_path == std::vector<std::string>{"P", "PathFinder"});
  CHECK(v.outcome.proxy_copies == 1);
  CHECK(v.counters.asks == 2);
  CHECK(counter_of(v, "searches") == 1);
}

TEST_CASE("the command line on a hook scenario: trace names finder objects, fast engine exits 2") {
  const std::string f = std::string(IMPSIM_SOURCE_DIR) + "/tests/data/hooks/distutils_shim.json";
  Command t = test::impsim("trace " + f);
  CHECK(t.status == 0);
  CHECK(t.out.find("ask i=0 [*shim shim BuiltinImporter FrozenImporter PathFinder]: shim.find_spec('dist')") !=
        std::string::npos);
  for (const char* format : {"chrome", "dot", "importtime"})
    CHECK(test::impsim(std::string("trace --format ") + format + " " + f).status == 0);
  Command fast = test::impsim("run --engine fast " + f);
  CHECK(fast.status == 2);
  CHECK(fast.out.find("--engine fast does not model finder objects") != std::string::npos);
  Command cmp = test::impsim("compare " + f);
  CHECK(cmp.status == 0);
  CHECK(cmp.out.find("guard_remove_self") != std::string::npos);
  // Paddle's designs on a scenario without P: a usage error, whichever subcommand asks.
  const std::string swept = std::string(IMPSIM_SOURCE_DIR) + "/tests/data/hooks/sweep_not_params.json";
  for (const std::string& args : {"run --variant before " + f, "compare --variants as_is,after " + f,
                                  "trace --variant before " + f, "sweep --variant before " + swept}) {
    CAPTURE(args);
    Command paddle = test::impsim(args);
    CHECK(paddle.status == 2);
    CHECK(paddle.out.find("is a design of Paddle's proxy finder P, which takes no part in this scenario") !=
          std::string::npos);
  }
  Command j = test::impsim("run --json " + f);
  CHECK(j.out.find("\"meta_path\": [") != std::string::npos);
  CHECK(j.out.find("\"finder_calls_by_object\"") != std::string::npos);
}

// Measured by tools/check/recursion_depth (a minimal hook, the step at the
// program's top level): where the real interpreter raises RecursionError,
// the searches open, the hook's calls and the message (3.14 and 3.15 on
// their WebAssembly builds). 3.13.16 is not measured: the run stops at
// --max-lookup-depth, never a crash.
TEST_CASE("unbounded hook recursion raises RecursionError where CPython does") {
  struct Case {
    const char* action;
    const char* cpython;
    int64_t max_depth, calls;
    const char* message;  // empty: the run stops at a limit
  };
  const Case cases[] = {
      {R"({"reenter": "find_spec"})", "3.11", 333, 332,
       "maximum recursion depth exceeded while calling a Python object"},
      {R"({"reenter": "find_spec"})", "3.12", 333, 332, "maximum recursion depth exceeded"},
      {R"({"import": "a"})", "3.11", 249, 249, "maximum recursion depth exceeded while calling a Python object"},
      {R"({"import": "a"})", "3.13", 249, 249, "maximum recursion depth exceeded"},
      {R"({"call": "f"})", "3.10", 1, 996, "maximum recursion depth exceeded in comparison"},
      {R"({"call": "f"})", "3.12", 1, 996, "maximum recursion depth exceeded"},
      {R"({"reenter": "find_spec"})", "3.14", 333, 332, "maximum recursion depth exceeded"},
      {R"({"call": "f"})", "3.15", 1, 996, "maximum recursion depth exceeded"},
      {R"({"reenter": "find_spec"})", "3.13.16", 201, 200, ""},
      {R"({"call": "f"})", "3.13", 1, 201, ""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.action);
    CAPTURE(c.cpython);
    auto r = run_json(std::string(R"({"impsim": 1, "cpython": ")") + c.cpython +
                      R"(", "tree": {"a": {}}, "hooks": {"h": {"claims": {"names": ["a"]}, "find_spec": [)" + c.action +
                      R"(]}}, "finders": {"f": {"hook": "h"}}, "program": [{"install": "f"}, {"import": "a"}]})");
    const VariantRun& v = r->run.runs[0];
    CHECK(counter_of(v, "max_depth") == c.max_depth);
    CHECK(counter_of(v, "finder_calls:f") == c.calls);
    if (*c.message == 0) {
      REQUIRE(v.limit.has_value());
      CHECK(v.limit->limit == "lookup-depth");
      CHECK(r->run.exit_status() == kExitLimit);
      continue;
    }
    REQUIRE(v.outcome.error.has_value());
    CHECK(v.outcome.error->type == "RecursionError");
    CHECK(v.outcome.error->message == c.message);
  }
  // Not an ImportError: an optional step does not swallow it.
  auto r = run_json(R"({"impsim": 1, "tree": {"a": {}}, "hooks": {"h": {"find_spec": [{"reenter": "find_spec"}]}},
    "finders": {"f": {"hook": "h"}}, "program": [{"install": "f"}, {"import": "a", "optional": true}]})");
  REQUIRE(r->run.runs[0].outcome.error.has_value());
  CHECK(r->run.runs[0].outcome.error->type == "RecursionError");
}

// A served loader's create_module runs before the module exists: a module
// it imports whose body calls a function of the served module finds it
// missing (KeyError, as CPython's sys.modules[name]); the second import of
// the served name finds it and runs nothing.
TEST_CASE("a served loader's create_module imports before the module is in sys.modules") {
  auto r = run_json(R"({"impsim": 1, "tree": {"probe": {"body": [{"call": "built", "body": []}]}, "dep": {}},
    "hooks": {"h": {"claims": {"names": ["built"]}, "find_spec": [{"serve": true,
      "create_module": [{"import": "dep"}, {"import": "nowhere", "optional": true}, {"import": "probe"}]}]}},
    "finders": {"f": {"hook": "h"}}, "program": [{"install": "f"}, {"import": "built"}]})");
  const VariantRun& v = r->run.runs[0];
  REQUIRE(v.outcome.error.has_value());
  CHECK(v.outcome.error->type == "KeyError");
  CHECK(counter_of(v, "searches") == 4);  // built, dep, nowhere (caught), probe
  auto ok = run_json(R"({"impsim": 1, "tree": {"dep": {}},
    "hooks": {"h": {"claims": {"names": ["built"]}, "find_spec": [{"serve": true,
      "create_module": [{"import": "dep"}, {"import": "nowhere", "optional": true}]}]}},
    "finders": {"f": {"hook": "h"}}, "program": [{"install": "f"}, {"import": "built"}, {"import": "built"}]})");
  const VariantRun& w = ok->run.runs[0];
  CHECK_FALSE(w.outcome.error.has_value());
  CHECK(counter_of(w, "searches") == 3);
  CHECK(counter_of(w, "finder_calls:f") == 3);
}

// A loader that imports the name it creates recurses, one level per
// create_module, until CPython's RecursionError: 199 levels on each
// version measured (tools/check/recursion_depth, kind create_module); on
// 3.13.16, not measured, --max-body-depth stops it. Never the C stack.
TEST_CASE("a create_module that imports its own name ends in RecursionError, not a crash") {
  for (const char* cpython : {"3.9", "3.11", "3.12", "3.13", "3.14", "3.15", "3.13.16"}) {
    CAPTURE(cpython);
    auto r = run_json(std::string(R"({"impsim": 1, "cpython": ")") + cpython + R"(", "tree": {"a": {}},
      "hooks": {"h": {"claims": {"names": ["app"]}, "find_spec": [{"serve": true, "create_module": [{"import": "app"}]}]}},
      "finders": {"f": {"hook": "h"}}, "program": [{"install": "f"}, {"import": "app", "optional": true}]})");
    const VariantRun& v = r->run.runs[0];
    if (std::string(cpython) == "3.13.16") {
      REQUIRE(v.limit.has_value());
      CHECK(v.limit->limit == "body-depth");
      continue;
    }
    REQUIRE(v.outcome.error.has_value());
    CHECK(v.outcome.error->type == "RecursionError");
    CHECK(counter_of(v, "finder_calls:f") == 199);
  }
}

// Measured by tools/lib/crosscheck/hooks_real.py on Debian's 3.11.2 and
// pyenv's 3.12.1 (the same figures): a hook at 0 that calls PathFinder
// directly, as pytest's rewriting hook does. `import a`: f, then its direct
// call finds a (PathFinder 1, BuiltinImporter and FrozenImporter never
// asked); the miss: f's direct call, then B, F and PathFinder itself.
TEST_CASE("the interpreter's finders are counted per object, direct calls included, outside finder_calls") {
  auto r = run_json(R"({"impsim": 1, "tree": {"a": {}}, "hooks": {"h": {"find_spec": [{"call": "PathFinder"}]}},
    "finders": {"f": {"hook": "h"}}, "program": [{"install": "f"}, {"import": "a"},
    {"find_spec": "zz", "label": "miss"}]})");
  const VariantRun& v = r->run.runs[0];
  CHECK(counter_of(v, "finder_calls") == 2);
  CHECK(counter_of(v, "finder_calls:f") == 2);
  CHECK(counter_of(v, "finder_calls:PathFinder") == 3);
  CHECK(counter_of(v, "finder_calls:BuiltinImporter") == 1);
  CHECK(counter_of(v, "finder_calls:FrozenImporter") == 1);
  CHECK(counter_of(v, "miss.finder_calls:PathFinder") == 2);
  // P is counted by the proxy's counters, not per object.
  CHECK(load_error(with(R"("expect": {"as_is": {"finder_calls:P": 1}},)")).find("unknown counter") !=
        std::string::npos);
  CHECK(load_error(with(R"("expect": {"as_is": {"finder_calls:PathFinder": 1, "legacy_warnings": 0}},)")).empty());
}

// legacy_finder.json on each version, as hooks_real.py measured it on
// pyenv's 3.9.18 (no warning) and 3.12.1 (_find_spec_legacy is gone: both
// legacy finders skipped, plugins not found); 3.11 is pinned in the file.
TEST_CASE("legacy find_module finders: reached silently on 3.9, skipped from 3.12") {
  Scenario sc = parse_scenario_file(std::string(IMPSIM_SOURCE_DIR) + "/tests/data/hooks/legacy_finder.json");
  RunOptions o;
  o.variants = {"as_is"};
  o.cpython = CPython::V3_9;
  const VariantRun old = run_scenario(sc, o).runs[0];
  CHECK(counter_of(old, "searches") == 5);
  CHECK(counter_of(old, "finder_calls:leg") == 5);
  CHECK(counter_of(old, "legacy_warnings") == 0);
  for (CPython cp : {CPython::V3_12, CPython::V3_13, CPython::V3_14}) {
    o.cpython = cp;
    const VariantRun r = run_scenario(sc, o).runs[0];
    CHECK(counter_of(r, "searches") == 3);
    CHECK(counter_of(r, "finder_calls") == 0);
    CHECK(counter_of(r, "max_depth") == 1);
    REQUIRE(r.outcome.results[1].second.size() == 1);
    CHECK(r.outcome.results[1].second[0].result == "ModuleNotFoundError");
  }
}

TEST_CASE("legacy find_module finders: what cannot be modelled exactly is refused, call_next meets AttributeError") {
  const std::string legacy = R"({"impsim": 1, "tree": {}, "program": [], "hooks": {"h": {"api": "find_module", )";
  CHECK(load_error(legacy + R"("find_spec": [{"import": "x"}, {"reenter": "find_spec"}]}}})")
            .find("at /hooks/h/find_spec/1: a legacy hook") != std::string::npos);
  CHECK(load_error(legacy + R"("loader": {"wrap": "set_attribute", "attribute": "x"}}}})")
            .find("at /hooks/h/loader: a legacy hook") != std::string::npos);
  CHECK(load_error(R"({"impsim": 1, "tree": {}, "program": [], "hooks": {"old": {"api": "find_module"},
    "h": {"find_spec": [{"call": "o"}]}}, "finders": {"o": {"hook": "old"}}})")
            .find("at /hooks/h/find_spec/0/call: \"o\" is a legacy finder") != std::string::npos);
  // Measured by hooks_real.py on 3.11.2 and 3.12.1: f's loop calls
  // o.find_spec, an AttributeError, before PathFinder is asked.
  auto r = run_json(R"({"impsim": 1, "tree": {"a": {}}, "allow_error": true,
    "hooks": {"h": {"find_spec": [{"call_next": true}]}, "old": {"api": "find_module"}},
    "finders": {"f": {"hook": "h"}, "o": {"hook": "old"}}, "meta_path": ["f", "o", "PathFinder"],
    "program": [{"import": "a"}]})");
  const VariantRun& v = r->run.runs[0];
  REQUIRE(v.outcome.error.has_value());
  CHECK(v.outcome.error->type == "AttributeError");
  CHECK(counter_of(v, "finder_calls:o") == 0);
  CHECK(counter_of(v, "finder_calls:PathFinder") == 0);
}

namespace {
// Two objects of one hook class holding `lock` across a re-entry, behind a
// flag on the object (virtualenv's _Finder); the second made by `new_step`.
std::string two_objects(const std::string& lock, const std::string& new_step, bool allow_error = true) {
  return std::string(R"({"impsim": 1, "tree": {"a": {}},)") + (allow_error ? R"("allow_error": true,)" : "") +
         R"("hooks": {"h": {"claims": {"names": ["a"]}, "find_spec": [{"reenter": "find_spec"}], "guard": "flag",
                      "lock": )" +
         lock + R"(}}, "finders": {"f": {"hook": "h"}},
    "program": [{"install": "f"}, )" +
         new_step + R"(, {"install": "f"}, {"import": "a", "label": "imp"}]})";
}

const VariantRun& only_run(const ScenarioRun& run) {
  REQUIRE(run.runs.size() == 1);
  return run.runs[0];
}
}  // namespace

// Counts measured on the real importlib by tools/lib/crosscheck/hooks_real.py
// (tests/data/hooks/lock_same_class.json, extra = 1): the third call waits
// for the lock its own thread holds, and the run stops there.
TEST_CASE("hook locks: a Lock of one class hangs its own thread, an RLock, a lock per object or a new class does not") {
  const std::string same = R"({"new": "f", "same_class": true})";
  ScenarioRun hung = run_scenario(parse_scenario(two_objects(R"({"type": "Lock"})", same), "inline.json"), {});
  const VariantRun& r = only_run(hung);
  CHECK(r.outcome.hang ==
        std::vector<HangWait>{{"main", HangWait::Kind::HookLock, "the threading.Lock of class h", "main"}});
  REQUIRE(r.outcome.threads.size() == 1);
  CHECK(r.outcome.threads[0].thread == "main");
  CHECK(r.outcome.threads[0].how == ThreadEnd::How::Waiting);
  CHECK(r.hooks.finder_calls == 3);
  CHECK(r.outcome.modules.empty());
  CHECK(hung.exit_status() == kExitOk);  // allow_error: the hang is the expected end
  ScenarioRun failed = run_scenario(parse_scenario(two_objects(R"({"type": "Lock"})", same, false), "inline.json"), {});
  CHECK(failed.exit_status() == kExitFailed);
  for (const auto& [lock, step] : std::vector<std::pair<std::string, std::string>>{
           {R"({"type": "RLock"})", same},
           {R"({"type": "Lock", "per": "object"})", same},
           {R"({"type": "Lock"})", R"({"new": "f"})"}}) {  // a re-run module body: a new class, a new lock
    CAPTURE(lock);
    CAPTURE(step);
    const ScenarioRun run = run_scenario(parse_scenario(two_objects(lock, step), "inline.json"), {});
    const VariantRun& ok = only_run(run);
    CHECK(ok.outcome.hang.empty());
    CHECK(ok.outcome.threads.empty());
    CHECK(ok.outcome.modules == std::vector<std::string>{"a"});
  }
}

TEST_CASE("hook locks: the trace shows each acquire and release, and ends with the hang") {
  const std::string f = std::string(IMPSIM_SOURCE_DIR) + "/tests/data/hooks/lock_same_class.json";
  Command t = test::impsim("trace " + f);
  CHECK(t.status == 0);
  CHECK(t.out.find("f#1 acquires the threading.Lock of class locked ('a')") != std::string::npos);
  CHECK(t.out.find("f acquires the threading.Lock of class locked ('a')") != std::string::npos);
  CHECK(t.out.find("releases") == std::string::npos);  // the hang comes first
  CHECK(t.out.find("hang: thread main waits for the threading.Lock of class locked, held by thread main\n") !=
        std::string::npos);
  Command ok = test::impsim("trace " + f + " --set extra=0");
  CHECK(ok.out.find("f releases the threading.Lock of class locked ('a')") != std::string::npos);
  CHECK(ok.out.find("hang:") == std::string::npos);
}

TEST_CASE("hook locks: the reader's errors") {
  auto hook = [](const std::string& lock) {
    return R"({"impsim": 1, "tree": {"a": {}}, "hooks": {"h": {"lock": )" + lock +
           R"(}}, "finders": {"f": {"hook": "h"}}, "program": []})";
  };
  CHECK(load_error(hook(R"({"type": "Lock", "per": "module"})"))
            .find("at /hooks/h/lock/per: unknown lock owner \"module\"") != std::string::npos);
  CHECK(load_error(hook(R"({"type": "Lock", "taken": "never"})"))
            .find("at /hooks/h/lock/taken: unknown place the lock is taken \"never\"") != std::string::npos);
  CHECK(load_error(hook(R"({"type": "Lock", "timeout": 1})")).find("at /hooks/h/lock/timeout: unknown key") !=
        std::string::npos);
  CHECK(load_error(hook(R"("Lock")")).find("at /hooks/h/lock: expected the hook's own lock") != std::string::npos);
}

// A mark a hook's loader sets names the step that set it, as P's marks do
// (it used to read "during ?").
TEST_CASE("hook verdicts: a wrapper's mark names the step that set it") {
  const auto r = test::impsim("run " + kSource + "/scenarios/zoo/wrapt_post_import.json");
  CHECK(r.out.find("guard_global_set marks it during `import target`") != std::string::npos);
  CHECK(r.out.find("during ?") == std::string::npos);
}

// A mark counts the times its wrapper ran on the module: two copies that
// each wrap what the other found, and a reload, are no longer read as one.
TEST_CASE("hook marks: a chain of wrappers and a reload count, one wrapper reads as before") {
  auto marks_of = [](const std::string& file, const std::string& variant) {
    const auto r = test::impsim("run " + kSource + "/" + file + " --json --variant " + variant);
    return nlohmann::json::parse(r.out)["runs"][0]["outcome"]["marks"];
  };
  const auto chain = marks_of("tests/data/hooks/wrapt_object_set.json", "as_is");
  CHECK(chain["pk.a"] == "hooked*2");
  CHECK(marks_of("tests/data/hooks/wrapt_object_set.json", "guard_global_set")["pk.a"] == "hooked");
  CHECK(marks_of("scenarios/zoo/virtualenv_reimport.json", "as_is")["distutils.dist"] == "virtualenv*2");
  // An import and two reloads run the body three times; as_is the hook
  // re-enters and wraps what its own inner call wrapped, call_next does not.
  CHECK(marks_of("tests/data/hooks/reload.json", "as_is")["pkg.a"] == "watched*6");
  CHECK(marks_of("tests/data/hooks/reload.json", "call_next")["pkg.a"] == "watched*3");
}

// Each label's sys.meta_path as its step ended (measured on the real
// pytest by crosscheck --zoo): the leak is read step by step; a step a
// hang stopped has none, and counts what it did until the hang.
TEST_CASE("hook reports: each label's sys.meta_path as the step ended, null where it never ended") {
  using L = std::vector<std::string>;
  auto labels_at = [](int n) {
    const auto r = test::impsim(
        "run " + kSource + "/scenarios/zoo/pytest_rewrite.json --json --variant as_is --set N=" + std::to_string(n));
    return nlohmann::json::parse(r.out)["runs"][0]["labels"];
  };
  const auto one = labels_at(1), three = labels_at(3);
  CHECK(one["installs"]["meta_path"].get<L>() == L{"h#1", "BuiltinImporter", "FrozenImporter", "PathFinder"});
  CHECK(one["cleanups"]["meta_path"].get<L>() == L{"BuiltinImporter", "FrozenImporter", "PathFinder"});
  CHECK(three["installs"]["meta_path"].get<L>() ==
        L{"h#3", "h#2", "h#1", "BuiltinImporter", "FrozenImporter", "PathFinder"});
  CHECK(three["cleanups"]["meta_path"].get<L>() == L{"h#2", "h#1", "BuiltinImporter", "FrozenImporter", "PathFinder"});
  const auto hang = nlohmann::json::parse(
      test::impsim("run " + kSource + "/scenarios/zoo/virtualenv_same_class.json --json --set extra=1").out);
  const auto& hl = hang["runs"][0]["labels"];
  CHECK(hl["pth"]["meta_path"].is_array());
  CHECK(hl["import_dist"]["meta_path"].is_null());  // the hang stopped it
  // ...having made three searches and five finder calls first, as the real
  // virtualenv does (crosscheck --zoo); they used to read 0.
  CHECK(hl["import_dist"]["searches"] == 3);
  CHECK(hl["import_dist"]["finder_calls"] == 5);
  CHECK(hl["import_app"]["meta_path"].is_null());   // never ran
}
