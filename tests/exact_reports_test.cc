// Never a wrong, hidden or runaway answer: counts exact at any
// size, limits with one meaning in both engines, stopped runs marked as
// such, every difference shown, JSON that is always JSON, output errors
// that are errors.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <array>
#include <string>

#include "impsim/report/report.h"
#include "test_util.h"

using impsim::test::kNested;

using namespace impsim;

namespace {


// Decimal arithmetic on strings, independent of Count and GMP: the oracle.
std::string times_small(const std::string& a, unsigned k) {
  std::string out;
  unsigned carry = 0;
  for (auto it = a.rbegin(); it != a.rend(); ++it) {
    unsigned d = static_cast<unsigned>(*it - '0') * k + carry;
    out.insert(out.begin(), static_cast<char>('0' + d % 10));
    carry = d / 10;
  }
  for (; carry; carry /= 10) out.insert(out.begin(), static_cast<char>('0' + carry % 10));
  size_t nz = out.find_first_not_of('0');
  return nz == std::string::npos ? "0" : out.substr(nz);
}

std::string plus_one(std::string a) {
  for (auto it = a.rbegin(); it != a.rend(); ++it) {
    if (*it != '9') {
      ++*it;
      return a;
    }
    *it = '0';
  }
  return "1" + a;
}

// lookups(k) = k * (lookups(k-1) + 1), lookups(0) = 0 (ground_truth_test.cc).
std::string lookups_of(unsigned k) {
  std::string v = "0";
  for (unsigned i = 1; i <= k; ++i) v = times_small(plus_one(v), i);
  return v;
}

std::string grouped_text(const std::string& digits) {
  std::string s = digits;
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

// After impsim's arguments: standard output on a full disk, standard error captured.
const std::string kToFullDisk = " 2>&1 >/dev/full";

}  // namespace

TEST_CASE("Count: exact past 2^64 and 2^128") {
  Count max64(UINT64_MAX);
  Count c = max64;
  ++c;
  CHECK(c.text() == "18446744073709551616");
  CHECK_FALSE(c.fits_u64());
  CHECK(c > max64);
  CHECK(c - Count(1) == max64);
  CHECK((c - Count(1)).fits_u64());
  Count sq = c * c;  // 2^128
  CHECK(sq.text() == "340282366920938463463374607431768211456");
  CHECK((sq + Count(5)) - sq == 5u);
  CHECK_THROWS(Count(1) - Count(2));
  CHECK(grouped(sq) == grouped_text(sq.text()));
}

TEST_CASE("nested_guards --engine fast at k = 34, 40, 100, 200: exact counts, checked against the recurrence") {
  for (unsigned k : {34u, 40u, 100u, 200u}) {
    CAPTURE(k);
    auto c = test::impsim("run " + kNested + " --engine fast --set k=" + std::to_string(k) + " --json");
    REQUIRE(c.status == 0);
    const std::string want = lookups_of(k);
    // The probe's lookups, as exact digits in valid JSON.
    CHECK(c.out.find("\"lookups\": " + want + ",") != std::string::npos);
    // Past about 1e308 nlohmann (like JavaScript) reads numbers as doubles
    // and gives up: --json-big-as-strings is the way to read them.
    auto strings = test::impsim("run " + kNested + " --engine fast --set k=" + std::to_string(k) +
                                " --json --json-big-as-strings");
    auto j = nlohmann::json::parse(strings.out);
    CHECK(j["exit_status"] == 0);
    CHECK(j["runs"][0]["labels"]["probe"]["lookups"] == want);
    auto text = test::impsim("run " + kNested + " --engine fast --set k=" + std::to_string(k));
    CHECK(text.status == 0);
    CHECK(text.out.find(grouped_text(want)) != std::string::npos);
  }
}

TEST_CASE("--json-big-as-strings: counts past 2^53 as strings of digits, smaller ones stay numbers") {
  auto c = test::impsim("run " + kNested + " --engine fast --set k=40 --json --json-big-as-strings");
  REQUIRE(c.status == 0);
  auto j = nlohmann::json::parse(c.out);
  auto& probe = j["runs"][0]["labels"]["probe"];
  CHECK(probe["lookups"] == lookups_of(40));
  CHECK(probe["max_depth"] == 40);
}

TEST_CASE("ratios print readably at any magnitude") {
  auto c = test::impsim(
      "run " + kNested + " --engine fast --set k=40");
  REQUIRE(c.status == 0);
  // The lookups ratio lookups(40) / 40 as xd.dde<exponent>, not 48 digits and ".00".
  std::string digits = lookups_of(40);
  std::string quotient;
  unsigned rem = 0;
  for (char ch : digits) {
    rem = rem * 10 + static_cast<unsigned>(ch - '0');
    if (!quotient.empty() || rem / 40) quotient += static_cast<char>('0' + rem / 40);
    rem %= 40;
  }
  unsigned first4 = static_cast<unsigned>(std::stoul(quotient.substr(0, 4)));
  unsigned three = (first4 + 5) / 10;  // rounded to three digits (no carry past 999 here)
  std::string want = "x" + std::to_string(three / 100) + "." + std::to_string(three % 100 / 10) + std::to_string(three % 10) +
                     "e" + std::to_string(quotient.size() - 1);
  CAPTURE(want);
  CHECK(c.out.find(want) != std::string::npos);
  CHECK(c.out.find("0000.00") == std::string::npos);
  auto cmp = test::impsim("compare " + kNested + " --engine fast --set k=40 --variants before,after");
  CHECK(cmp.status == 0);
  CHECK(cmp.out.find("(x1/") != std::string::npos);
  CHECK(cmp.out.find("e4") != std::string::npos);
}

TEST_CASE("--max-events: the step and fast engines stop at the same event with the same report") {
  auto step = test::impsim("run " + kNested + " --set k=6 --max-events 500 --json");
  auto fast = test::impsim("run " + kNested + " --set k=6 --max-events 500 --json --engine fast");
  CHECK(step.status == 3);
  CHECK(fast.status == 3);
  CHECK(step.out == fast.out);
  CHECK(step.out.find("limit max-events") == std::string::npos);  // JSON: the limit object
  CHECK(step.out.find("\"limit\": \"max-events\"") != std::string::npos);
}

TEST_CASE("compare: counts cut short by a limit are marked partial, and the outcome is not compared") {
  auto c = test::impsim_says("compare " + kNested + " --set k=9 --max-events 10000 --variants before,after", 3,
                             "before (stopped: partial)");
  CHECK(c.out.find("(partial)") != std::string::npos);
  CHECK(c.out.find("not compared") != std::string::npos);
  CHECK(c.out.find("differs") == std::string::npos);
  CHECK(c.out.find("is marked") == std::string::npos);  // a guard left open is not a behaviour difference
  auto j = test::impsim("compare " + kNested + " --set k=9 --max-events 10000 --variants before,after --format json");
  CHECK(j.status == 3);
  auto doc = nlohmann::json::parse(j.out);
  CHECK(doc["comparisons"][0]["partial"] == nlohmann::json::array({"before"}));
  CHECK(doc["comparisons"][0]["verdicts"]["after"]["identical"].is_null());
  CHECK(doc["comparisons"][0]["verdicts"]["after"]["differences"].empty());

  auto run = test::impsim("run " + kNested + " --set k=9 --max-events 10000 --json");
  CHECK(run.status == 3);
  auto rj = nlohmann::json::parse(run.out);
  CHECK(rj["runs"][0]["counts"] == "partial");
  CHECK(rj["runs"][1]["verdict"] == "not compared");
  CHECK(rj["equivalent"].is_null());
  auto rt = test::impsim("run " + kNested + " --set k=9 --max-events 10000");
  CHECK(rt.out.find("outcome: not compared: variant before stopped at a limit, short of the end of the program\n") !=
        std::string::npos);
  CHECK(rt.out.find("differ:") == std::string::npos);
}

TEST_CASE("run and sweep list every outcome difference that compare lists") {
  // tvm_ffi's body imports six modules: each ends marked differently.
  std::string path = test::write_temp("many_diffs.json", R"({
    "impsim": 1, "params": {"k": 2},
    "sys_modules": {"preloaded": ["numpy"], "filler": 5},
    "tree": {"pkg": {"package": true}, "pkg.a": {}, "pkg.b": {}, "pkg.c": {}, "pkg.d": {}, "pkg.e": {}, "pkg.f": {},
             "tvm_ffi": {"package": true, "body": [{"import": "pkg.a"}, {"import": "pkg.b"}, {"import": "pkg.c"},
                                                    {"import": "pkg.d"}, {"import": "pkg.e"}, {"import": "pkg.f"}]}},
    "program": [{"nest": "$k", "guard": {"enable": true, "scope": ["pkg", "other{i}"]}, "body": [
      {"import": "tvm_ffi", "label": "import_blocked"}]}]})");
  auto run = test::impsim("run " + path);
  auto cmp = test::impsim("compare " + path + " --variants before,after");
  auto count = [](const std::string& s, const std::string& what) {
    size_t n = 0;
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
  };
  size_t listed = count(cmp.out, "    - ");
  CHECK(listed > 5);
  CHECK(count(run.out, "  - ") == listed);
  auto sweep = test::impsim("sweep " + path + " --param k --values 2");
  CHECK(count(sweep.out, "  - ") == listed);
}

TEST_CASE("--json stays valid JSON whatever a name or label holds") {
  std::string path = test::write_temp("marker_name.json", R"({"impsim":1,"name":"\u0001count:12","tree":{},
    "program":[{"find_spec":"x","label":"\u0001count:99"}]})");
  auto c = test::impsim("run " + path + " --json");
  CHECK(c.status == 0);
  auto j = nlohmann::json::parse(c.out);
  CHECK(j["scenario"] == "\u0001count:12");
  CHECK(j["runs"][0]["labels"].contains("\u0001count:99"));
  auto cmp = test::impsim("compare " + path + " --format json");
  CHECK(nlohmann::json::parse(cmp.out)["scenario"] == "\u0001count:12");
}

TEST_CASE("a report that cannot be written is an error (exit 4), on every output path") {
  const std::string to_stdout = "cannot write the report to standard output";
  for (const auto& [args, says] : std::vector<std::pair<std::string, std::string>>{
           {"run " + kNested, to_stdout},
           {"run " + kNested + " --json", to_stdout},
           {"compare " + kNested, to_stdout},
           {"sweep " + kNested + " --param k --values 1..2", to_stdout},
           {"validate " + kNested, to_stdout},
           {"trace " + kNested + " --set k=1", to_stdout},
           {"trace " + kNested + " --set k=1 -o /dev/full", "-o /dev/full: write failed"},
           {"sweep " + kNested + " --param k --values 1..2 --svg /dev/full", "--svg /dev/full: write failed"},
       })
    test::impsim_says(args + kToFullDisk, 4, says);
}

TEST_CASE("trace --engine fast is refused, saying why and what to use") {
  auto c = test::impsim_says("trace " + kNested + " --set k=2 --engine fast", 2, "trace shows every event");
  CHECK(c.out.find("impsim run --engine fast") != std::string::npos);
}

TEST_CASE("a labelled step repeated a million times is one run-length entry, in order") {
  auto one = test::run_json(R"({"impsim": 1, "tree": {}, "program": [
    {"guard": {"enable": false}, "repeat": 2, "body": [{"disable": {}, "label": "x", "repeat": 1000000}]}]})");
  const VariantRun& v = test::variant_run(one->run, Variant::Before);
  REQUIRE(v.outcome.results.size() == 1);
  CHECK(v.outcome.results[0].second == Results{{"ok", 2000000}});
  auto j = report_json(one->run);
  CHECK(j["runs"][0]["outcome"]["results"]["x"] == nlohmann::ordered_json::parse(R"([{"result": "ok", "times": 2000000}])"));
}
