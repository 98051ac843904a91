// PEP 810's lazy imports in the engine, against what the real CPython
// 3.15.0rc1 does (docs/lazy-imports.md: each rule there is checked on the
// interpreter by tools/check/lazy_rules, and these programs, with hundreds
// of random ones, by tools/check/crosscheck --python .../python3.15).
#include <doctest/doctest.h>

#include <sstream>

#include "impsim/base/errors.h"
#include "impsim/report/report.h"
#include "impsim/trace/trace_formats.h"
#include "test_util.h"

using namespace impsim;
using namespace impsim::test;

namespace {

// A hook scenario: its counters say which names were searched, and when.
std::string scenario(const std::string& tree, const std::string& program) {
  return R"({"impsim": 1, "cpython": "3.15", "tree": )" + tree +
         R"(, "hooks": {"h": {"find_spec": [{"return": "none"}]}}, "finders": {"f": {"hook": "h"}},
         "program": [{"install": "f"}, )" +
         program + "]}";
}

// `impsim trace` of a scenario given as text.
std::string trace_text(const std::string& json) {
  const Scenario sc = parse_scenario(json, "lazy.json");
  TraceOptions topt;
  topt.format = TraceFormat::Text;
  std::ostringstream out;
  write_trace(out, sc, RunOptions{}, topt);
  return out.str();
}

// The results of a labelled step, one per run of it.
std::vector<std::string> results(const VariantRun& v, const std::string& label) {
  std::vector<std::string> out;
  for (const auto& [name, runs] : v.outcome.results)
    if (name == label)
      for (const ResultRun& r : runs) out.insert(out.end(), r.times, r.result);
  return out;
}

}  // namespace

TEST_CASE("lazy imports: the statement searches nothing, the first read searches, the second reads the module") {
  auto r = run_json(scenario(R"({"m": {}})", R"({"lazy_import": "m", "label": "statement"},
      {"use": "m", "label": "first"}, {"use": "m", "label": "second"})"));
  const VariantRun& v = r->run.runs[0];
  CHECK(counter_of(v, "statement.searches") == 0);
  CHECK(counter_of(v, "first.searches") == 1);
  CHECK(counter_of(v, "second.searches") == 0);
  REQUIRE(v.lazy.has_value());
  CHECK(v.lazy->statements == 1);
  CHECK(v.lazy->resolutions == 1);
  CHECK(v.lazy->lazy_modules.empty());  // m was loaded
  CHECK(report_text(r->run).find("lazy imports, as_is: 1 lazy statement, 1 resolution, 0 filter calls\n"
                                 "  sys.lazy_modules keeps: none of the scenario's names\n") != std::string::npos);
}

TEST_CASE("lazy imports: a finder installed between the statement and the read is asked at the read") {
  auto r = run_json(R"({"impsim": 1, "cpython": "3.15", "tree": {"m": {}},
    "hooks": {"h": {"find_spec": [{"return": "none"}]}}, "finders": {"f": {"hook": "h"}},
    "program": [{"lazy_import": "m"}, {"install": "f"}, {"use": "m", "label": "read"}]})");
  CHECK(counter_of(r->run.runs[0], "read.finder_calls:f") == 1);
}

TEST_CASE("lazy imports: lazy import a.b binds a, imported at its read, and a.b is imported at the read of a.b") {
  auto r = run_json(scenario(R"({"a": {"package": true}, "a.b": {}})",
                             R"({"lazy_import": "a.b"}, {"use": "a", "label": "a"}, {"use": "a.b", "label": "ab"})"));
  const VariantRun& v = r->run.runs[0];
  CHECK(counter_of(v, "a.searches") == 1);
  CHECK(counter_of(v, "ab.searches") == 1);
  CHECK(v.outcome.modules == std::vector<std::string>{"a", "a.b"});
  CHECK(v.lazy->resolutions == 1);  // a.b came by the attribute, no lazy object
}

TEST_CASE("lazy imports: a failed resolution raises at the read and is tried again at the next") {
  auto r = run_json(scenario(R"({"m": {}})", R"({"lazy_import": "nowhere"},
      {"use": "nowhere", "optional": true, "label": "first"}, {"use": "nowhere", "optional": true, "label": "second"})"));
  const VariantRun& v = r->run.runs[0];
  CHECK(results(v, "first") == std::vector<std::string>{"ModuleNotFoundError"});
  CHECK(counter_of(v, "second.searches") == 1);
  CHECK(v.lazy->resolutions == 2);
  CHECK(v.lazy->lazy_modules == std::vector<std::string>{"nowhere"});
}

TEST_CASE("lazy imports: reading a lazy object while it resolves raises ImportCycleError") {
  auto r = run_json(scenario(R"({"x": {"body": [{"lazy_import": "y"}, {"use": "y"}]},
                                  "y": {"body": [{"import": "x"}, {"use": "x.y"}]}})",
                             R"({"import": "x", "optional": true, "label": "cycle"})"));
  CHECK(results(r->run.runs[0], "cycle") == std::vector<std::string>{"ImportCycleError"});
}

TEST_CASE("lazy imports: mode all makes module-level imports lazy, not optional ones, and the filter is asked") {
  auto r = run_json(scenario(R"({"m": {}, "n": {}, "o": {}})",
                             R"({"set_lazy_imports": "all"}, {"set_lazy_imports_filter": {"eager": ["n"]}},
      {"import": "m", "label": "m"}, {"import": "n", "label": "n"}, {"import": "o", "optional": true, "label": "o"})"));
  const VariantRun& v = r->run.runs[0];
  CHECK(counter_of(v, "m.searches") == 0);  // lazy
  CHECK(counter_of(v, "n.searches") == 1);  // the filter said False
  CHECK(counter_of(v, "o.searches") == 1);  // inside try/except: eager, not asked
  CHECK(v.lazy->filter_calls == 2);
  CHECK(v.lazy->statements == 1);
}

TEST_CASE("lazy imports: the reader refuses lazy where CPython 3.15 does, and runs refuse other versions") {
  auto refuses = [](const std::string& json, const std::string& says) {
    CAPTURE(json);
    CHECK_THROWS_WITH_AS(parse_scenario(json, "lazy.json"), doctest::Contains(says.c_str()), InputError);
  };
  refuses(R"({"impsim": 1, "tree": {"m": {}}, "program": [{"call": "m", "body": [{"lazy_import": "m"}]}]})",
          "lazy import not allowed inside functions");
  refuses(R"({"impsim": 1, "tree": {}, "threads": {"w": [{"lazy_import": "m"}]}, "program": []})",
          "the target function of thread");
  refuses(R"({"impsim": 1, "tree": {}, "program": [{"lazy_import": "m", "optional": true}]})",
          "inside try/except blocks");
  refuses(R"({"impsim": 1, "tree": {}, "program": [{"set_lazy_imports": "none"}]})", "\"none\" was removed");
  refuses(R"({"impsim": 1, "tree": {}, "program": [{"lazy_import": "m", "as": "a.b"}]})", "expected an identifier");
  const Scenario sc = parse_scenario(R"({"impsim": 1, "tree": {}, "program": [{"lazy_import": "m"}]})", "lazy.json");
  RunOptions options;
  options.cpython = parse_cpython("3.14");
  CHECK_THROWS_WITH_AS(plan_runs(sc, options), doctest::Contains("new in 3.15"), UsageError);
  options.cpython = parse_cpython("3.15.0rc1");
  options.engine = EngineKind::Fast;
  CHECK_THROWS_WITH_AS(plan_runs(sc, options), doctest::Contains("--engine fast does not model lazy"), UsageError);
}

TEST_CASE("lazy imports: lazy from binds each name apart, and a missing name of a package is searched three times") {
  auto r = run_json(scenario(R"({"pk": {"package": true}, "pk.sub": {}})",
                             R"({"lazy_from": "pk", "names": ["sub", "nope as n"], "label": "statement"},
      {"use": "sub", "label": "sub"}, {"use": "n", "optional": true, "label": "nope"})"));
  const VariantRun& v = r->run.runs[0];
  CHECK(counter_of(v, "statement.searches") == 0);
  CHECK(counter_of(v, "sub.searches") == 2);  // pk, then pk.sub (hasattr: sys.lazy_modules lists it)
  // hasattr's sys.lazy_modules fallback, _handle_fromlist's import, IMPORT_FROM's getattr.
  CHECK(counter_of(v, "nope.searches") == 3);
  CHECK(results(v, "nope") == std::vector<std::string>{"ImportError"});
  CHECK(v.lazy->statements == 1);
  CHECK(v.lazy->resolutions == 2);
  CHECK(v.lazy->lazy_modules == std::vector<std::string>{"pk.nope"});  // pk was loaded
}

TEST_CASE("lazy imports: lazy from a loaded module binds what it has now, and a plain module's missing name is not "
          "searched") {
  auto r = run_json(scenario(R"({"pk": {"package": true}, "pk.sub": {}, "plain": {}})",
                             R"({"import": "pk.sub"}, {"lazy_from": "pk", "names": ["sub"], "label": "loaded"},
      {"lazy_from": "plain", "names": ["nope"]}, {"use": "nope", "optional": true, "label": "nope"})"));
  const VariantRun& v = r->run.runs[0];
  CHECK(v.lazy->statements == 1);  // the second only: pk.sub was bound as the module
  CHECK(counter_of(v, "nope.searches") == 1);  // plain; plain.nope: not a package, no search
  CHECK(results(v, "nope") == std::vector<std::string>{"ImportError"});
}

TEST_CASE("lazy imports: __lazy_modules__ makes the listed full names lazy at module level, the filter asked") {
  auto r = run_json(scenario(R"({"a": {"package": true}, "a.b": {}, "m": {}, "n": {},
                                  "k": {"body": [{"__lazy_modules__": ["m"]}, {"import": "m", "label": "in_k"}]}})",
                             R"({"__lazy_modules__": ["a.b", "n"]}, {"set_lazy_imports_filter": {"eager": ["n"]}},
      {"import": "a.b", "label": "ab"}, {"import": "m", "label": "m"}, {"import": "n", "label": "n"},
      {"import": "k", "label": "k"})"));
  const VariantRun& v = r->run.runs[0];
  CHECK(counter_of(v, "ab.searches") == 0);  // listed: lazy
  CHECK(counter_of(v, "m.searches") == 1);   // not in the program's list
  CHECK(counter_of(v, "n.searches") == 1);   // listed, but the filter said False
  CHECK(counter_of(v, "in_k.searches") == 0);  // k's own list
  CHECK(v.lazy->filter_calls == 3);
  CHECK(v.lazy->statements == 2);
}

TEST_CASE("lazy imports: a hook's use action resolves its module's lazy global inside find_spec") {
  auto r = run_json(R"({"impsim": 1, "cpython": "3.15",
    "tree": {"lib": {"body": [{"import": "dep"}]}, "dep": {}, "t": {}},
    "hooks": {"h": {"claims": {"names": ["t"]}, "find_spec": [{"use": "dep", "module": "lib"}, {"return": "none"}]},
              "all": {"find_spec": [{"use": "dep", "module": "lib"}, {"return": "none"}]}},
    "finders": {"f": {"hook": "h"}, "g": {"hook": "all"}},
    "program": [{"set_lazy_imports": "all"}, {"import_module": "lib"}, {"install": "f"},
                {"import_module": "t", "label": "t"}, {"uninstall": "f"}, {"unload": ["t"]}, {"install": "g"},
                {"lazy_import": "dep", "as": "again"}, {"import_module": "t", "optional": true, "label": "cycle"}]})");
  const VariantRun& v = r->run.runs[0];
  CHECK(counter_of(v, "t.max_depth") == 2);  // dep's search runs inside f.find_spec('t')
  CHECK(results(v, "t") == std::vector<std::string>{"ok"});
  CHECK(results(v, "cycle") == std::vector<std::string>{"ok"});  // dep is loaded now: no search, no cycle
  std::string trace = trace_text(R"({"impsim": 1, "cpython": "3.15",
    "tree": {"lib": {"body": [{"import": "dep"}]}, "dep": {}, "t": {}},
    "hooks": {"all": {"find_spec": [{"use": "dep", "module": "lib"}, {"return": "none"}]}},
    "finders": {"g": {"hook": "all"}},
    "program": [{"set_lazy_imports": "all"}, {"import_module": "lib"}, {"install": "g"},
                {"import_module": "t", "optional": true, "label": "cycle"}]})");
  CHECK(trace.find("resolved here, at the first read of `dep`, inside g.find_spec('t')") != std::string::npos);
  CHECK(trace.find("step /program/3 -> ImportCycleError") != std::string::npos);
}

TEST_CASE("lazy imports: the reader checks lazy_from and __lazy_modules__ as CPython's compiler does") {
  auto refuses = [](const std::string& json, const std::string& says) {
    CAPTURE(json);
    CHECK_THROWS_WITH_AS(parse_scenario(json, "lazy.json"), doctest::Contains(says.c_str()), InputError);
  };
  refuses(R"({"impsim": 1, "tree": {}, "program": [{"lazy_from": "m", "names": ["*"]}]})",
          "lazy from ... import * is not allowed");
  refuses(R"({"impsim": 1, "tree": {}, "program": [{"lazy_from": "__future__", "names": ["annotations"]}]})",
          "lazy from __future__ import is not allowed");
  refuses(R"({"impsim": 1, "tree": {}, "program": [{"lazy_from": "m"}]})", "needs \"names\"");
  refuses(R"({"impsim": 1, "tree": {}, "program": [{"lazy_from": "m", "names": []}]})", "at least one name");
  refuses(R"({"impsim": 1, "tree": {}, "program": [{"lazy_from": "m", "names": ["a as b.c"]}]})",
          "expected an identifier");
  refuses(R"({"impsim": 1, "tree": {"m": {}}, "program": [{"call": "m", "body": [{"lazy_from": "m", "names": ["a"]}]}]})",
          "lazy import not allowed inside functions");
  refuses(R"({"impsim": 1, "tree": {"m": {}}, "program": [{"call": "m", "body": [{"__lazy_modules__": ["m"]}]}]})",
          "binds a local");
  refuses(R"({"impsim": 1, "tree": {}, "hooks": {"h": {"find_spec": [{"use": "x"}]}}, "program": []})",
          "needs \"module\"");
  const Scenario sc = parse_scenario(
      R"({"impsim": 1, "tree": {}, "hooks": {"h": {"find_spec": [{"use": "x", "module": "m"}]}}, "program": []})",
      "lazy.json");
  CHECK(sc.lazy);  // a hook's read of a global runs on 3.15 only
}

TEST_CASE("lazy imports: a from-import's resolution takes its module from sys.modules, without its top package") {
  // bpkg failed and left bpkg.b behind: `from bpkg.b import c` uses bpkg.b
  // as it is (the fromlist form of __import__), where `import bpkg.b` would
  // run bpkg's body again.
  auto r = run_json(scenario(R"({"bpkg": {"package": true, "body": [{"import": "bpkg.b"}, {"import": "nothere"}]},
                                  "bpkg.b": {"package": true}, "bpkg.b.c": {}})",
                             R"({"lazy_from": "bpkg.b", "names": ["c"]}, {"import": "bpkg", "optional": true},
      {"use": "c", "label": "read"})"));
  const VariantRun& v = r->run.runs[0];
  CHECK(results(v, "read") == std::vector<std::string>{"ok"});
  CHECK(counter_of(v, "read.searches") == 1);  // bpkg.b.c only
  CHECK(v.outcome.modules == std::vector<std::string>{"bpkg.b", "bpkg.b.c"});
}

TEST_CASE("lazy imports: globals()['m'].resolve() imports m and leaves the global lazy") {
  auto r = run_json(scenario(R"({"m": {}})", R"({"lazy_import": "m"}, {"resolve": "m", "label": "resolve"},
      {"use": "m", "label": "read"}, {"resolve": "m", "label": "again"})"));
  const VariantRun& v = r->run.runs[0];
  CHECK(counter_of(v, "resolve.searches") == 1);
  CHECK(counter_of(v, "read.searches") == 0);  // still lazy, resolved again: m is in sys.modules
  CHECK(v.lazy->resolutions == 2);
  // The read rebound m to the module, which has no resolve().
  CHECK(results(v, "again") == std::vector<std::string>{"AttributeError"});
  CHECK(trace_text(R"({"impsim": 1, "cpython": "3.15", "tree": {"m": {}},
      "program": [{"lazy_import": "m"}, {"resolve": "m"}]})")
            .find("resolved here, by `globals()['m'].resolve()`") != std::string::npos);
}
