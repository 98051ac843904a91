// Every class of bad input: exit status 2 (3 for limits) and a message that
// names the file, line, column and JSON pointer, through the real binary.
#include <doctest/doctest.h>

#include "test_util.h"

using namespace impsim;

namespace {

struct Case {
  const char* what;
  const char* json;
  const char* expect_in_message;  // pointer and words
  const char* expect_position;    // "file:line:col" suffix, or nullptr
};

const char* kGood = R"({"impsim": 1, "tree": {"pkg": {"package": true}}, "program": [{"import": "pkg"}]})";

}  // namespace

TEST_CASE("a valid scenario validates and runs") {
  std::string path = test::write_temp("good.json", kGood);
  CHECK(test::impsim("validate " + path).status == 0);
  CHECK(test::impsim("run " + path).status == 0);
}

TEST_CASE("bad scenarios exit 2 with file:line:column, pointer and what was expected") {
  const Case cases[] = {
      {"JSON syntax", "{\"impsim\": 1,\n  \"tree\": {,}\n}", "invalid JSON", ":2:12:"},
      {"duplicate key", "{\"impsim\": 1,\n \"tree\": {},\n \"tree\": {}, \"program\": []}", "duplicate key \"tree\"", ":3:2:"},
      {"format version", R"({"impsim": 2, "tree": {}, "program": []})", "at /impsim: this impsim reads scenario format 1", ":1:12:"},
      {"missing program", R"({"impsim": 1, "tree": {}})", "missing \"program\"", ":1:1:"},
      {"unknown top-level key", R"({"impsim": 1, "tree": {}, "program": [], "progam": []})", "at /progam: unknown key \"progam\"", ":1:52:"},
      {"unknown step", "{\"impsim\": 1, \"tree\": {},\n \"program\": [{\"imprt\": \"x\"}]}", "at /program/0/imprt: unknown step \"imprt\"", ":2:24:"},
      {"two step kinds", R"({"impsim": 1, "tree": {}, "program": [{"import": "x", "find_spec": "y"}]})", "at /program/0: a step has exactly one of", nullptr},
      {"wrong type", R"({"impsim": 1, "tree": {}, "program": [{"guard": {"scope": "pkg"}, "body": []}]})", "at /program/0/guard/scope: expected a scope (a list of module names, or null for global) (an array), found a string", nullptr},
      {"bad module name", R"({"impsim": 1, "tree": {}, "program": [{"import": "a..b"}]})", "at /program/0/import: expected a module name (a Python dotted module name", nullptr},
      {"tree parent missing", R"({"impsim": 1, "tree": {"a.b": {}}, "program": []})", "at /tree/a.b: \"a.b\" needs its parent \"a\"", nullptr},
      {"tree parent not a package", R"({"impsim": 1, "tree": {"a": {}, "a.b": {}}, "program": []})", "which is not a package", nullptr},
      {"duplicate label", R"({"impsim": 1, "tree": {}, "program": [{"disable": {}, "label": "x"}, {"disable": {}, "label": "x"}]})", "at /program/1/label: label \"x\" is already used at /program/0", nullptr},
      {"undefined parameter", R"({"impsim": 1, "tree": {}, "program": [{"disable": {}, "repeat": "$n"}]})", "at /program/0/repeat: \"$n\" names a parameter", nullptr},
      {"unknown counter", R"({"impsim": 1, "tree": {}, "program": [], "expect": {"before": {"lookup": 1}}})", "at /expect/before/lookup: unknown counter \"lookup\"", nullptr},
      {"unknown label in expect", R"({"impsim": 1, "tree": {}, "program": [], "expect": {"before": {"probe.lookups": 1}}})", "names label \"probe\", which no step has", nullptr},
      {"sweep length", R"({"impsim": 1, "params": {"k": 1}, "sweep": {"param": "k", "values": [1, 2]}, "tree": {}, "program": [], "expect": {"before": {"lookups": [1]}}})", "expected 2 value(s), one per sweep value", nullptr},
      {"optional on the wrong step", R"({"impsim": 1, "tree": {}, "program": [{"disable": {}, "optional": true}]})", "\"optional\" only goes with import and find_spec", nullptr},
      {"{i} outside a nest", R"({"impsim": 1, "tree": {}, "program": [{"enable": {"scope": ["a{i}"]}}]})", "\"{i}\" is only allowed", nullptr},
      {"unknown variant", R"({"impsim": 1, "tree": {}, "program": [], "variants": ["fixed"]})", "unknown variant \"fixed\"", nullptr},
      {"negative count", R"({"impsim": 1, "tree": {}, "program": [{"disable": {}, "repeat": -1}]})", "at /program/0/repeat: expected \"repeat\" (an integer or \"$param\") >= 0, found -1", nullptr},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    std::string path = test::write_temp("bad.json", c.json);
    test::Command r = test::impsim("run " + path);
    CAPTURE(r.out);
    CHECK(r.status == 2);
    CHECK(r.out.find(c.expect_in_message) != std::string::npos);
    CHECK(r.out.find(path) != std::string::npos);
    if (c.expect_position) CHECK(r.out.find(path + c.expect_position) != std::string::npos);
    CHECK(test::impsim("validate " + path).status == 2);
  }
}

TEST_CASE("JSON nested thousands of levels deep is refused, not a stack overflow") {
  std::string deep = "{\"impsim\": 1, \"tree\": {}, \"program\": " + std::string(100000, '[') +
                     std::string(100000, ']') + "}";
  std::string path = test::write_temp("deep.json", deep);
  test::Command r = test::impsim("run " + path);
  CHECK(r.status == 3);  // a limit (--max-json-depth), docs/limits.md
  CHECK(r.out.find("limit max-json-depth reached") != std::string::npos);
  CHECK(r.out.find("nested deeper than") != std::string::npos);
}

TEST_CASE("a missing file exits 2") {
  test::Command r = test::impsim("run /nonexistent/scenario.json");
  CHECK(r.status == 2);
  CHECK(r.out.find("cannot open") != std::string::npos);
}

TEST_CASE("the command line: --set and --variant are checked") {
  std::string path = test::write_temp("good2.json", kGood);
  CHECK(test::impsim("run " + path + " --set k=1").out.find("no parameter \"k\"") != std::string::npos);
  CHECK(test::impsim("run " + path + " --set k=1").status == 2);
  CHECK(test::impsim("run " + path + " --set k").status == 2);
  CHECK(test::impsim("run " + path + " --variant fixed").status == 2);
  CHECK(test::impsim("frobnicate").status == 2);
  CHECK(test::impsim("--version").out.find("impsim ") == 0);
}

TEST_CASE("a parameter that expands past a limit exits 3 naming it") {
  std::string path = test::write_temp("nest.json", R"({"impsim": 1, "params": {"k": 1}, "tree": {},
    "program": [{"nest": "$k", "guard": {"enable": true}, "body": []}]})");
  test::Command r = test::impsim("run " + path + " --set k=100000");
  CHECK(r.status == 3);
  CHECK(r.out.find("limit nest reached") != std::string::npos);
  CHECK(r.out.find("/program/0/nest") != std::string::npos);
}

TEST_CASE("a runaway exits 3 naming the limit and the step") {
  std::string path = test::write_temp("runaway.json", R"({"impsim": 1, "params": {"k": 9}, "tree": {"pkg": {"package": true}},
    "program": [{"nest": "$k", "guard": {"enable": true, "scope": ["pkg", "o{i}"]}, "body": [
      {"import": "pkg"}, {"find_spec": "pkg.missing"}]}]})");
  test::Command r = test::impsim("run " + path + " --max-events 10000");
  CHECK(r.status == 3);
  CHECK(r.out.find("limit max-events reached at /program/0/body/1") != std::string::npos);
}
