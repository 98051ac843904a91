// Hostile input, the input side: what a scenario file or a flag can make impsim
// spend, and what it does with files that are not regular files. Memory
// bounds are peak RSS read with getrusage (wait4) around a forked child,
// with generous margins; no timing is asserted.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include "impsim/model/model.h"
#include "impsim/run/sweep.h"
#include "test_util.h"

using namespace impsim;

namespace {

std::string scenario_dir() { return std::string(IMPSIM_SOURCE_DIR) + "/scenarios/"; }

// Loads and compiles `text` (what `impsim validate` does) in a child.
test::ChildRun load_in_child(const std::string& text, InputLimits limits = {}) {
  return test::in_child([&] {
    try {
      Scenario sc = parse_scenario(text, "t.json", limits);
      compile_model(sc, {});
      return 0;
    } catch (const InputLimitError&) {
      return 3;
    } catch (const InputError&) {
      return 2;
    }
  });
}

// `count` find_spec steps, each a distinct 511-character name of 256 parts
// (about 520 bytes of JSON a step).
std::string long_dotted_names(int count) {
  std::string text = R"({"impsim": 1, "tree": {}, "program": [)";
  for (int i = 0; i < count; ++i) {
    std::string name = fmt::format("m{:04}", i);
    while (name.size() + 2 <= 511) name += ".a";
    text += fmt::format(R"({}{{"find_spec": "{}", "optional": true}})", i ? "," : "", name);
  }
  return text + "]}";
}

}  // namespace

TEST_CASE("positions cost nothing per value: deep long keys around many values stay small") {
  // 250 nested objects with 270-byte keys around 35,000 numbers: 140 KB.
  // A JSON pointer kept per value was 69 KB each, 2.6 GB in all.
  std::string key(270, 'k');
  std::string text = R"({"impsim": 1, "tree": {}, "program": [], "description": )";
  for (int i = 0; i < 250; ++i) text += "{\"" + key + "\":";
  text += "[0";
  for (int i = 1; i < 35000; ++i) text += ",0";
  text += "]";
  text += std::string(250, '}') + "}";
  test::ChildRun r = load_in_child(text);
  CHECK(r.status == 2);  // a description must be a string
  if (test::kMemoryMeasurable) CHECK(r.peak_rss_kb < 150 * 1024);
}

TEST_CASE("a byte-order mark switches nothing off: depth and duplicate keys are still checked") {
  std::string text = "\xEF\xBB\xBF{\"impsim\": 1, \"tree\": {}, \"program\": [], \"description\": ";
  text += std::string(220000, '[') + std::string(220000, ']') + "}";  // 440 KB, as the issue's crash
  std::string path = test::write_temp("bom_deep.json", text);
  for (const char* cmd : {"run ", "validate "}) {
    test::Command r = test::impsim(cmd + path);
    CHECK(r.status == 3);
    CHECK(r.out.find(path + ":1:312: at /description/0/0/") != std::string::npos);
    CHECK(r.out.find("limit max-json-depth reached") != std::string::npos);
  }
  CHECK_THROWS_AS(parse_scenario("\xEF\xBB\xBF{\"impsim\": 1, \"impsim\": 1}", "t.json"), InputError);
}

TEST_CASE("long dotted names are interned once, not once per ancestor") {
  // 2,000 find_spec steps, each a distinct 511-character name of 256 parts
  // (1 MB). Every ancestor as its own string took 130 KB a name (260 MB
  // here; 5.5 GB for a 16 MB file).
  test::ChildRun r = load_in_child(long_dotted_names(2000));
  CHECK(r.status == 0);
  if (test::kMemoryMeasurable) CHECK(r.peak_rss_kb < 150 * 1024);
}

TEST_CASE("sweep values are bounded: the scenario's (in the reader) and --values") {
  std::string values = "1";
  for (int i = 2; i <= 1'000'000; ++i) values += fmt::format(",{}", i);
  std::string text = R"({"impsim": 1, "params": {"k": 1}, "sweep": {"param": "k", "values": [)" + values +
                     R"(]}, "tree": {}, "program": []})";
  std::string path = test::write_temp("million_sweep.json", text);
  test::Command r = test::impsim("run " + path);
  CHECK(r.status == 3);
  CHECK(r.out.find("at /sweep/values: limit max-sweep-values reached: the sweep has 1000000 values; the limit is "
                   "10000 (--max-sweep-values)") != std::string::npos);
  test::ChildRun c = load_in_child(text);
  CHECK(c.status == 3);
  if (test::kMemoryMeasurable) CHECK(c.peak_rss_kb < 400 * 1024);  // the parsed document of a 6.9 MB file, not a million runs
  std::remove(path.c_str());
  r = test::impsim("sweep " + scenario_dir() + "nested_guards.json --param k --values 1..10001");
  CHECK(r.status == 3);
  CHECK(r.out.find("limit max-sweep-values reached: --values 1..10001: more than 10000 values") != std::string::npos);
}

TEST_CASE("scopes expanded per nest level are bounded (--max-scope-names)") {
  // 20,000 scope names under nest 1000 (229 KB) interned 20 million names:
  // 3.75 GB and 98 s. Now exit 3 before interning any.
  std::string scope;
  for (int i = 0; i < 20000; ++i) scope += fmt::format("{}\"s{}{{i}}\"", i ? "," : "", i);
  std::string text = R"({"impsim": 1, "tree": {}, "program": [{"nest": 1000, "guard": {"enable": true, "scope": [)" +
                     scope + R"(]}, "body": []}]})";
  std::string path = test::write_temp("wide_scope.json", text);
  for (const char* cmd : {"validate ", "run "}) {
    test::Command r = test::impsim(cmd + path);
    CHECK(r.status == 3);
    CHECK(r.out.find("at /program/0: limit scope-names reached: the scopes of the guards and enables so far expand "
                     "to 20000000 names") != std::string::npos);
  }
  test::ChildRun c = load_in_child(text);
  CHECK(c.status == 99);  // ModelLimitError is not an InputError: the child's catch-all
  if (test::kMemoryMeasurable) CHECK(c.peak_rss_kb < 150 * 1024);
}

TEST_CASE("out of memory is exit 3 with a message, not an abort") {
  if (!test::kMemoryMeasurable) return;  // ASan reserves terabytes of address space: ulimit -v cannot apply
  std::string path = test::write_temp("needs_memory.json", long_dotted_names(4000));
  // 2 MB of 256-part names need about 80 MB; 60 MB of address space is not enough.
  test::Command r = test::shell("ulimit -v 60000; " + std::string(IMPSIM_BINARY) + " validate " + path);
  CHECK(r.status == 3);
  CHECK(r.out.find(path + ": out of memory: the scenario and the limits ask for more memory than is available") !=
        std::string::npos);
}

TEST_CASE("a sweep range at the ends of int64 ends: no overflow, no endless loop") {
  std::string nested = scenario_dir() + "nested_guards.json";
  test::Command r = test::impsim("sweep " + nested + " --param k --values 9223372036854775807..9223372036854775807");
  CHECK(r.status == 3);  // one value, far past --max-nest
  CHECK(r.out.find("limit nest reached: nest is 9223372036854775807") != std::string::npos);
  r = test::impsim("sweep " + nested + " --param k --values -9223372036854775808..9223372036854775807");
  CHECK(r.status == 3);
  CHECK(r.out.find("limit max-sweep-values reached") != std::string::npos);
  CHECK(parse_sweep_values("9223372036854775806..9223372036854775807") ==
        std::vector<int64_t>{INT64_MAX - 1, INT64_MAX});
}

TEST_CASE("limit flags refuse values out of their range, naming the flag and the range") {
  std::string nested = scenario_dir() + "nested_guards.json";
  struct Case {
    const char* args;
    const char* message;
  };
  const Case cases[] = {
      {"--max-steps -1", "--max-steps: -1 is out of range; expected an integer from 0 to 18446744073709551615"},
      {"--max-events -1", "--max-events: -1 is out of range; expected an integer from 0 to 18446744073709551615"},
      {"--max-file-bytes -5", "--max-file-bytes: -5 is out of range; expected an integer from 1 to 1073741824"},
      {"--max-file-bytes 1073741825", "--max-file-bytes: 1073741825 is out of range"},
      {"--max-name-length -1", "--max-name-length: -1 is out of range; expected an integer from 1 to 1073741824"},
      {"--max-tree-entries 2147483648", "--max-tree-entries: 2147483648 is out of range"},
      {"--max-repeat -1", "--max-repeat: -1 is out of range; expected an integer from 0 to 9223372036854775807"},
      {"--max-filler 1e9", "--max-filler: \"1e9\" is not an integer"},
      {"--max-lookup-depth 1001", "--max-lookup-depth: 1001 is out of range; expected an integer from 1 to 1000"},
      {"--max-sweep-values 1000001", "--max-sweep-values: 1000001 is out of range"},
      // Past 2^64 it is out of range too, not wrapped and not "not an integer".
      {"--max-steps 99999999999999999999999", "--max-steps: 99999999999999999999999 is out of range"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    test::Command r = test::impsim("run " + nested + " " + c.args);
    CHECK(r.status == 2);
    CHECK(r.out.find(c.message) != std::string::npos);
  }
  CHECK(test::impsim("run " + nested + " --max-steps 18446744073709551615 --max-name-length 1073741824").status == 0);
}

TEST_CASE("standard input, pipes and directories") {
  std::string nested = scenario_dir() + "nested_guards.json";
  test::Command direct = test::impsim("run " + nested);
  for (const char* how : {"run -", "run /dev/stdin"}) {
    CAPTURE(how);
    test::Command r = test::impsim(std::string(how) + " < " + nested);
    CHECK(r.status == 0);
    CHECK(r.out == direct.out);
    r = test::impsim("validate " + std::string(how + 4) + " < " + nested);
    CHECK(r.status == 0);
  }
  // A device (not a regular file): read as a stream.
  test::Command r = test::impsim("run /dev/stdin < /dev/null");
  CHECK(r.status == 2);
  CHECK(r.out.find("/dev/stdin:1:1: invalid JSON") != std::string::npos);
  r = test::shell("cat " + nested + " | " + IMPSIM_BINARY + " run -");
  CHECK(r.status == 0);
  CHECK(r.out == direct.out);
  // A pipe longer than the limit: refused once it passes it, whatever the limit.
  for (const char* limit : {"", " --max-file-bytes 1073741824"}) {
    CAPTURE(limit);
    r = test::shell(std::string("head -c 20000000 /dev/zero | ") + IMPSIM_BINARY + " run -" + limit);
    if (*limit) {
      CHECK(r.status == 2);  // read whole, then refused as JSON
      CHECK(r.out.find("<stdin>:1:1: invalid JSON") != std::string::npos);
    } else {
      CHECK(r.status == 3);
      CHECK(r.out.find("<stdin>:1:1: limit max-file-bytes reached: the file is more than 16777216 bytes") !=
            std::string::npos);
    }
  }
  r = test::impsim("explore " + scenario_dir());
  CHECK(r.status == 2);
  CHECK(r.out == "impsim: error: " + scenario_dir() + ": is a directory, not a scenario file\n");
  r = test::impsim("run /nonexistent/x.json");
  CHECK(r.status == 2);
  CHECK(r.out == "impsim: error: /nonexistent/x.json: no such file\n");
}

TEST_CASE("impsim_bench: --help, a bad path and a run outside the repository exit cleanly") {
  std::string bench = std::string(IMPSIM_BENCH_BINARY);
  test::Command r = test::shell(bench + " --help");
  CHECK(r.status == 0);
  CHECK(r.out.find("usage: impsim_bench") != std::string::npos);
  r = test::shell(bench + " /nonexistent");
  CHECK(r.status == 2);
  CHECK(r.out.find("/nonexistent/scenarios/seed_incident.json: no such file") != std::string::npos);
  r = test::shell("cd / && " + bench);
  CHECK(r.status == 2);
  CHECK(r.out.find("run it from the repository root, or give the root") != std::string::npos);
  r = test::shell(bench + " --bogus");
  CHECK(r.status == 2);
}
