// The reader through the real binary, beyond the one-file-per-error cases of
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

TEST_CASE("an expected count is exact at any size, read from the text's digits") {
  auto with = [](const std::string& value) {
    return std::string(R"({"impsim": 1, "tree": {"pkg": {"package": true}}, "program": [{"import": "pkg"}],)") +
           "\n \"expect\": {\"after\": {\"lookups\": " + value + "}}}";
  };
  // Past 2^64 nlohmann holds a double; the reader takes the digits.
  const std::string big = "2217887688014775253706633418653155893774469751201";
  Scenario sc = parse_scenario(with(big), "big.json");
  REQUIRE(sc.expect.size() == 1);
  CHECK(sc.expect[0].values[0]->text() == big);
  CHECK(*sc.expect[0].values[0] != *Count::from_digits("2217887688014775253706633418653155893774469751200"));
  // 2^64 - 1 (once refused as past 2^63 - 1) and 2^64.
  CHECK(parse_scenario(with("18446744073709551615"), "u64.json").expect[0].values[0]->text() == "18446744073709551615");
  CHECK(parse_scenario(with("18446744073709551616"), "u64.json").expect[0].values[0]->text() == "18446744073709551616");
  // In a sweep's list too.
  std::string listed = R"({"impsim": 1, "params": {"k": 1}, "sweep": {"param": "k", "values": [1, 2]},
    "tree": {"pkg": {"package": true}}, "program": [{"import": "pkg"}],
    "expect": {"after": {"lookups": [null, 100000000000000000000000]}}})";
  CHECK(parse_scenario(listed, "list.json").expect[0].values[1]->text() == "100000000000000000000000");
  // What is not a count stays refused, with its position.
  auto refused = [&](const std::string& value, const std::string& message) {
    CAPTURE(value);
    try {
      parse_scenario(with(value), "bad.json");
      FAIL("loaded");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find(message) != std::string::npos);
      CHECK(e.pos.line == 2);
    }
  };
  refused("-100000000000000000000000", "expected an expected count >= 0, found -100000000000000000000000");
  refused("-1", "expected an expected count >= 0, found -1");
  refused("1.5", "found a number 1.5");
  refused("1e30", "found a number 1e+30");
  refused("100000000000000000000000.0", "(an integer), found a number");
}

TEST_CASE("Count::from_digits reads digits of any length and nothing else") {
  CHECK(Count::from_digits("0")->text() == "0");
  CHECK(Count::from_digits("0012")->text() == "12");
  CHECK(Count::from_digits("340282366920938463463374607431768211456")->text() ==
        "340282366920938463463374607431768211456");
  CHECK(*Count::from_digits("18446744073709551616") == Count(UINT64_MAX) + Count(1));
  CHECK_FALSE(Count::from_digits(""));
  CHECK_FALSE(Count::from_digits("-1"));
  CHECK_FALSE(Count::from_digits("1e5"));
  CHECK_FALSE(Count::from_digits(" 1"));
}
