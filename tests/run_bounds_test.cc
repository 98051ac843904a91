// Every surface stops at a stated bound (docs/limits.md): the hook
// language's objects and sys.meta_path, trace and explore at run's limits,
// explore's page at --max-bytes, impsim_bench on a folder it does not know;
// and the engine keeps no reference into a table a `new` step grows. Each
// bound is tested by the limit reached (exit 3 and its message), never by
// time.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

using impsim::test::kSource;

using namespace impsim;

namespace {


std::string write(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
  return path;
}

// `new` under `repeat`, with one labelled import: `n` objects.
std::string new_objects(int64_t n) {
  return R"({"impsim": 1, "tree": {"a": {}}, "hooks": {"h": {"claims": {"names": ["x"]}}},
    "finders": {"w": {"hook": "h"}},
    "program": [{"new": "w", "repeat": )" +
         std::to_string(n) + R"(}, {"install": "w"}, {"import": "a", "label": "l"}]})";
}

}  // namespace

TEST_CASE("an object_set guard whose find_spec makes a new object: the second import is served, as on CPython") {
  // tests/data/hooks/object_set_new_in_find_spec.json: its counts and
  // verdicts are checked with the other hook scenarios (hooks_test.cc);
  // here, what the freed reference used to change.
  test::Command r = test::impsim("run --json " + kSource + "/tests/data/hooks/object_set_new_in_find_spec.json");
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  for (const auto& run : j["runs"]) {
    CAPTURE(run["variant"].get<std::string>());
    CHECK(run["outcome"]["results"]["second"] == nlohmann::json::array({"ok"}));
    CHECK(run["outcome"]["error"].is_null());
  }
}

TEST_CASE("repeat x new stops at --max-objects in every command that runs it") {
  const std::string dir = test::scratch_subdir("bounds_objects");
  const std::string f = write(dir, "new.json", new_objects(1000000));
  for (const std::string cmd : {"run", "run --json", "compare", "compare --json", "trace", "trace --format json"})
    test::impsim_says(cmd + " " + f, 3, "max-objects");
  for (const std::string format : {"dot", "importtime"})
    test::impsim_says("trace --format " + format + " " + f, 3,
                      "as_is: stopped: limit max-objects reached at /program/0");
  test::Command page = test::impsim("explore " + f + " -o " + dir + "/page.html");
  CHECK(page.status == 3);
  // The bound is a count: w and the 5 it makes run at 6, stop at 5.
  const std::string at = write(dir, "at.json", new_objects(5));
  CHECK(test::impsim("run " + at + " --max-objects 6").status == 0);
  test::impsim_says("run " + at + " --max-objects 5", 3, "limit max-objects reached at /program/0: 5 finder objects");
  // Declared objects count too, before the program's first line.
  test::impsim_says("run " + kSource + "/tests/data/hooks/wrapt_object_set.json --max-objects 1", 3,
                    "\"finders\" declares 2 finder objects; the limit is 1");
  CHECK(test::impsim("run --max-objects -1 " + at).status == 2);
}

TEST_CASE("sys.meta_path stops at --max-meta-path, and PathFinder's calls are events") {
  const std::string bad = kSource + "/tests/bad/";
  test::impsim_says("run " + bad + "meta_path_growth.json --max-meta-path 100", 3,
                    "limit max-meta-path reached at /program/0: sys.meta_path holds 100 finders");
  // 999 appended + the interpreter's three: 1,002 calls per import of a
  // missing name, so 100 imports are 100,200 events.
  test::impsim_says("run " + bad + "pathfinder_walks.json --max-events 100200", 3,
                    "limit max-events reached at /program/1");
  test::impsim_says("trace " + bad + "pathfinder_walks.json --max-events 100200", 3,
                    "stopped: limit max-events reached at /program/1");
}

TEST_CASE("trace and explore stop at run's limits, at the same step") {
  const std::string f = kSource + "/tests/bad/unbounded_steps.json";
  test::Command run = test::impsim("run " + f + " --max-steps 100000");
  REQUIRE(run.status == 3);
  REQUIRE(run.out.find("limit max-steps reached at /program/0/body/0/body/0") != std::string::npos);
  for (const std::string format : {"text", "json", "dot", "importtime", "markdown"}) {
    CAPTURE(format);
    test::Command r = test::impsim("trace " + f + " --max-steps 100000 --format " + format);
    CHECK(r.status == 3);
  }
  const std::string dir = test::scratch_subdir("bounds_steps");
  test::Command page = test::impsim("explore " + f + " --max-steps 100000 -o " + dir + "/page.html");
  CHECK(page.status == 3);
  CHECK(test::read_file(dir + "/page.html").find("max-steps: 100000 scenario steps run") != std::string::npos);
}

TEST_CASE("explore: --max-bytes bounds all of the page's data") {
  const std::string dir = test::scratch_subdir("bounds_bytes");
  // A repetitive run folds into few rows, but every event it steps in
  // detail counts: 10 million events stop being detailed past the bound.
  test::Command folded = test::impsim("explore " + kSource + "/scenarios/nested_guards.json --set k=7 --variant before "
                                      "--max-bytes 100000 -o " + dir + "/k7.html");
  CHECK(folded.status == 0);
  const std::string html = test::read_file(dir + "/k7.html");
  CHECK(html.find("cut at --max-bytes 100,000 after ") != std::string::npos);
  CHECK(html.size() < 200000 + 100000);  // the page (about 30 KB) and its data
  // What cannot be cut (the finder objects, each variant's totals listing
  // them) past the bound: no page, exit 3.
  const std::string f = write(dir, "new.json", new_objects(2000));
  test::impsim_says("explore " + f + " --max-bytes 10000 -o " + dir + "/objects.html", 3,
                    "limit max-bytes reached: the page's data that is never cut (its 2005 finder objects");
  CHECK(test::impsim("explore " + f + " -o " + dir + "/objects.html").status == 0);
}

TEST_CASE("compare --revisions on a hook scenario: every hook design on each revision") {
  test::Command r =
      test::impsim("compare " + kSource + "/tests/data/hooks/watchdogs_global_set.json --revisions b52ce17,04efefd");
  CHECK(r.status == 0);
  CHECK(r.out.find("--baseline") == std::string::npos);
  CHECK(r.out.find("guard_flag@04efefd") != std::string::npos);
  CHECK(r.out.find("outcome against as_is@b52ce17") != std::string::npos);
}

TEST_CASE("impsim_bench runs a folder it does not know with impsim's default limits") {
  const std::string dir = test::scratch_subdir("bounds_bench");
  // A 251-module chain where seed_incident.json should be: body-depth
  // stops the first run, and the bench with it.
  write(dir, "scenarios/seed_incident.json", test::read_file(kSource + "/tests/bad/body_depth_limit.json"));
  for (const std::string f : {"nested_guards.json", "import_chain.json"})
    write(dir, "scenarios/" + f, test::read_file(kSource + "/scenarios/" + f));
  test::Command r = test::shell(std::string(IMPSIM_BENCH_BINARY) + " " + dir);
  CHECK(r.status == 3);
  CHECK(r.out.find("with impsim's default limits") != std::string::npos);
  CHECK(r.out.find("limit body-depth reached") != std::string::npos);
}
