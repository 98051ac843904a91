// Every class of bad input in tests/bad/ (listed with its expected exit
// status and message in tests/bad/cases.json) through the real binary, plus
// the hostile inputs too large to keep as files: JSON a million levels deep,
// deep objects, a file past --max-file-bytes.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "test_util.h"

using namespace impsim;

namespace {

std::string bad_dir() { return std::string(IMPSIM_SOURCE_DIR) + "/tests/bad/"; }

nlohmann::json cases() {
  std::ifstream in(bad_dir() + "cases.json");
  REQUIRE(in);
  return nlohmann::json::parse(in)["cases"];
}

}  // namespace

TEST_CASE("every file in tests/bad/ exits with its status and message") {
  nlohmann::json all = cases();
  CHECK(all.size() >= 60);
  for (auto& c : all) {
    std::string file = c["file"];
    std::string path = bad_dir() + file;
    std::string args = c.value("args", "");
    CAPTURE(file);
    test::Command r = test::impsim("run " + path + " " + args);
    CAPTURE(r.out);
    CHECK(r.status == c["status"].get<int>());
    CHECK(r.out.find(c["message"].get<std::string>()) != std::string::npos);
    if (r.out.find(": stopped: limit ") != std::string::npos) {
      // A limit reached while running: the report, with the counters so far.
      CHECK(r.status == 3);
      CHECK(r.out.find("counters so far: ") != std::string::npos);
    } else {
      CHECK(r.out.find(path) != std::string::npos);  // every message names the file
      CHECK(r.out.starts_with("impsim: error: "));
      CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);  // one line, no report, no crash text
    }
    if (c.contains("position")) CHECK(r.out.find(path + c["position"].get<std::string>()) != std::string::npos);
    // validate checks the file the same way (it does not run it: run-time
    // limits are not its business).
    if (c["status"] == 2) CHECK(test::impsim("validate " + path).status == 2);
  }
}

// validate checks the model without building it (check_model), run
// compiles it (compile_model): on every file either refuses before running,
// the two must refuse it the same way, with the same words and status.
TEST_CASE("validate refuses every file run refuses before running, in the same words") {
  size_t compared = 0;
  size_t index = 0;
  for (auto& c : cases()) {
    if (index++ % test::kSanitizerStride != 0) continue;
    const std::string path = bad_dir() + c["file"].get<std::string>();
    const std::string args = c.value("args", "");
    if (!args.empty() && !args.starts_with("--max-")) continue;  // a flag of run's own
    CAPTURE(path);
    test::Command r = test::impsim("run " + path + " " + args);
    if (r.out.find(": stopped: limit ") != std::string::npos) continue;  // a run-time limit: not validate's
    test::Command v = test::impsim("validate " + path + " " + args);
    if (v.out.find("unknown flag") != std::string::npos) continue;  // a limit only the running commands take
    CHECK(v.status == r.status);
    CHECK(v.out == r.out);
    ++compared;
  }
  CHECK(compared >= 60 / test::kSanitizerStride);
}

TEST_CASE("every file in tests/bad/ is listed in cases.json") {
  std::set<std::string> listed;
  for (auto& c : cases()) listed.insert(c["file"].get<std::string>());
  for (auto& e : std::filesystem::directory_iterator(bad_dir())) {
    std::string name = e.path().filename().string();
    if (name == "cases.json") continue;
    CAPTURE(name);
    CHECK(listed.count(name) == 1);
  }
}

TEST_CASE("JSON a million levels deep: refused quickly, no stack overflow") {
  for (const char* open_close : {"[]", "{}"}) {
    std::string text = "{\"impsim\": 1, \"tree\": {}, \"program\": [], \"description\": ";
    const int depth = 1'000'000;
    text.reserve(text.size() + depth * 8);
    for (int i = 0; i < depth; ++i) text += open_close[0] == '[' ? "[" : "{\"a\":";
    text += "1";
    for (int i = 0; i < depth; ++i) text += open_close[1];
    text += "}";
    CAPTURE(open_close);
    std::string path =
        test::write_temp(std::string("million_deep_") + (open_close[0] == '[' ? "arrays" : "objects") + ".json", text);
    test::Command r = test::impsim("run " + path);
    CHECK(r.status == 3);
    CHECK(r.out.find("limit max-json-depth reached") != std::string::npos);
    CHECK(r.out.find("JSON nested deeper than 256 levels") != std::string::npos);
    // Without the closing brackets: the depth check still comes first.
    std::string unclosed = text.substr(0, text.size() / 2);
    path = test::write_temp("million_deep_unclosed.json", unclosed);
    r = test::impsim("run " + path);
    CHECK(r.status == 3);
    // And in-process through the reader, which throws instead of recursing.
    CHECK_THROWS_AS(parse_scenario(text, "deep.json"), InputLimitError);
  }
}

TEST_CASE("--max-json-depth is checked against a stack-safe maximum") {
  std::string path = bad_dir() + "json_too_deep.json";
  test::Command r = test::impsim("run " + path + " --max-json-depth 1000");
  CHECK(r.status == 2);  // the file's steps are arrays, which is then the error
  CHECK(r.out.find("expected a step (an object), found an array") != std::string::npos);
  CHECK(test::impsim("run " + path + " --max-json-depth 100000").status == 2);  // out of range: a command-line error
}

TEST_CASE("a file past the default --max-file-bytes (16 MiB) is refused before it is read") {
  std::string path =
      test::write_temp("huge.json", "{\"impsim\": 1, \"tree\": {}, \"program\": [], \"description\": \"" +
                                        std::string(17u << 20, 'x') + "\"}");
  test::Command r = test::impsim("run " + path);
  CHECK(r.status == 3);
  CHECK(r.out.find("limit max-file-bytes reached: the file is 17825") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("limits in-process: InputLimitError names the flag") {
  InputLimits small;
  small.max_tree_entries = 1;
  try {
    parse_scenario(R"({"impsim": 1, "tree": {"a": {}, "b": {}}, "program": []})", "t.json", small);
    FAIL("no error");
  } catch (const InputLimitError& e) {
    CHECK(e.limit == "max-tree-entries");
    CHECK(std::string(e.what()).find("t.json:1:23: at /tree: limit max-tree-entries reached") != std::string::npos);
  }
}

TEST_CASE("a limit reached while running reports the counters so far") {
  std::string path = bad_dir() + "events_limit.json";
  test::Command r = test::impsim("run " + path + " --max-events 10000 --json");
  CHECK(r.status == 3);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["exit_status"] == 3);
  auto& run = j["runs"][0];
  CHECK(run["limit"]["limit"] == "max-events");
  CHECK(run["limit"]["step"] == "/program/0/body/1");
  CHECK(run["counters"]["asks"].get<uint64_t>() > 0);
}
