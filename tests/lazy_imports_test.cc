// PEP 810's lazy imports in the engine, against what the real CPython
// 3.15.0rc1 does (docs/lazy-imports.md: each rule there is checked on the
// interpreter by tools/check/lazy_rules, and these programs, with hundreds
// of random ones, by tools/check/crosscheck --python .../python3.15).
#include <doctest/doctest.h>

#include "impsim/base/errors.h"
#include "impsim/report/report.h"
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
