// The loader through the real binary, beyond the one-file-per-error cases of
// tests/bad/ (bad_input_test.cc): a valid file, input no file can hold
// (nesting past the C++ stack, a missing file) and the command line's checks.
#include <doctest/doctest.h>

#include "test_util.h"

using namespace impsim;

namespace {

const char* kGood = R"({"impsim": 1, "tree": {"pkg": {"package": true}}, "program": [{"import": "pkg"}]})";

}  // namespace

TEST_CASE("a valid scenario validates and runs") {
  std::string path = test::write_temp("good.json", kGood);
  CHECK(test::impsim("validate " + path).status == 0);
  CHECK(test::impsim("run " + path).status == 0);
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
  CHECK(r.out == "impsim: error: /nonexistent/scenario.json: no such file\n");
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
