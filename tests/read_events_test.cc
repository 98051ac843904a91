// The event reader (sim/reader/read_events.cc) against the DOM reader: for
// every file the repository holds and for inputs made to sit on the edges
// of what the DOM reader checks, the event reader either gives up or reads
// the very Scenario the DOM reader reads. It must never take a file the DOM
// reader refuses: that would turn an error message into a run.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <vector>

#include "impsim/reader/read_scenario.h"
#include "scenario_dump.h"
#include "test_util.h"

using namespace impsim;

namespace {

struct Counts {
  int files = 0;
  int taken = 0;  // read by the event reader
};

// One input, both ways. The DOM reader's answer is the reference.
void agree(const std::string& text, const std::string& name, const InputLimits& limits, Counts& counts) {
  ++counts.files;
  std::string dom;
  bool dom_ok = false;
  try {
    dom = fuzz::scenario_dump(parse_scenario_dom(text, name, limits));
    dom_ok = true;
  } catch (const InputError& e) {
    dom = e.what();
  }
  std::optional<Scenario> events;
  CHECK_NOTHROW(events = parse_scenario_events(text, name, limits));
  if (events) {
    ++counts.taken;
    INFO("the event reader took ", name, ", which the DOM reader reads as: ", dom);
    REQUIRE(dom_ok);
    CHECK(fuzz::scenario_dump(*events) == dom);
  }
  // And parse_scenario, which is the two together, says what the DOM reader says.
  std::string both;
  try {
    both = fuzz::scenario_dump(parse_scenario(text, name, limits));
  } catch (const InputError& e) {
    both = e.what();
  }
  INFO(name);
  CHECK(both == dom);
}

// Limits low enough that the files of the repository reach them.
std::vector<InputLimits> limit_sets() {
  std::vector<InputLimits> out(1);
  for (int depth : {1, 2, 3, 4, 5, 6}) out.emplace_back().max_json_depth = depth;
  for (size_t entries : {0, 1, 2, 3}) out.emplace_back().max_tree_entries = entries;
  for (size_t length : {1, 3, 5}) out.emplace_back().max_name_length = length;
  out.emplace_back().max_file_bytes = 100;
  return out;
}

}  // namespace

TEST_CASE("the event reader agrees with the DOM reader on every file of the repository") {
  namespace fs = std::filesystem;
  Counts counts;
  const std::vector<InputLimits> limits = limit_sets();
  for (const char* dir : {"scenarios", "tests", "docs"}) {
    for (auto& f : fs::recursive_directory_iterator(fs::path(IMPSIM_SOURCE_DIR) / dir)) {
      if (!f.is_regular_file()) continue;
      const std::string path = f.path().string();
      const bool corpus = path.find("/tests/bad/") != std::string::npos || path.find("/tests/fuzz/") != std::string::npos;
      if (!corpus && f.path().extension() != ".json") continue;
      const std::string text = test::read_file(path);
      for (const InputLimits& l : limits) agree(text, path, l, counts);
    }
  }
  MESSAGE(counts.files, " readings, ", counts.taken, " taken by the event reader");
  CHECK(counts.files > 1000);
  CHECK(counts.taken > 100);
}

TEST_CASE("the event reader agrees on inputs at the edges of what the DOM reader checks") {
  const std::string head = R"({"impsim": 1, "program": [{"import": "pkg"}], "tree": )";
  const std::vector<std::string> cases = {
      // taken: the common shapes
      R"({"impsim": 1, "tree": {"pkg": {"package": true}, "pkg.b": {}, "pkg.a": {"body": [{"import": "pkg.b"}]}}, "program": [{"import": "pkg.a", "optional": false}]})",
      "\xEF\xBB\xBF" R"({"impsim": 1, "tree": {}, "program": []})",
      " \r\n\t" R"({"impsim":1,"tree":{"pkg":{"package":false,"body":[]}},"program":[{"find_spec":"pkg","optional":true}]})" " \n",
      // labels: tree entries in key order, then the program, whatever the file's order
      R"({"impsim": 1, "program": [{"import": "b", "label": "p"}], "tree": {"b": {"body": [{"import": "a", "label": "y"}]}, "a": {"body": [{"import": "b", "label": "x"}]}}})",
      R"({"impsim": 1, "program": [{"guard": {}, "label": "g", "body": [{"import": "a", "label": "i"}]}], "tree": {"a": {}}})",
      // keys alike in their first 16 bytes and more, of every length
      head + R"({"pkg": {"package": true}, "pkg.aaaaaaaaaaaaaaab": {}, "pkg.aaaaaaaaaaaaaaaa": {}, "pkg.aaaaaaaaaaaa": {}, "pkg.aaaaaaaaaaaaaaaaa": {"body": [{"import": "pkg", "label": "l"}]}, "pkg.aaaaaaaaaaab": {}, "pkg.b": {}, "pkg.aaaaaaaaaaaaaaa": {"body": [{"import": "pkg", "label": "m"}]}, "pkg.Z": {}}})",
      // names normalised (NFKC) and not
      head + R"({"pkg": {"package": true}, "ｐｋｇ.x": {}}})",
      head + R"({"pkg": {"package": true}, "pkg.é": {}, "pkg.e\u0301": {}}})",
      head + R"({"pkg": {"package": true, "body": [{"import": "ｐｋｇ"}]}}})",
      head + R"({"pkg": {}, "pkg.x": {}}})",
      head + R"({"pkg.x": {}}})",
      // parents found by walking the keys in byte order: a missing or
      // non-package level, names that share a prefix but not a package,
      // a walk that climbs back up, non-ASCII names of either kind
      head + R"({"pkg": {"package": true}, "pkg.a.b": {}}})",
      head + R"({"pkg": {"package": true}, "pkg.a": {}, "pkg.a.b": {}}})",
      head + R"({"pkg": {"package": true}, "pkgx.a": {}}})",
      head + R"({"pkg": {"package": true}, "pkgx": {"package": true}, "pkgx.a": {}, "pkg.a": {}}})",
      head + R"({"pkg": {"package": true}, "pkg.a": {"package": true}, "pkg.a.b": {"package": true}, "pkg.a.b.c": {}, "pkg.ab": {}, "pkg.a.d": {}}})",
      head + R"({"pkg": {"package": true}, "pkg.a": {"package": true}, "pkg.a.b": {"package": true}, "pkg.c.d": {}}})",
      head + R"({"pkg": {"package": true}, "pkgé": {"package": true}, "pkg.b": {}, "pkgé.c": {}}})",
      head + R"({"pkg": {"package": true}, "pkg.x": {}, "pkg.x": {}}})",
      head + R"({"ｐｋｇ": {}, "pkg.x": {}}})",
      head + R"({"_impsim_filler_1": {}, "pkg": {}}})",
      head + R"({"pkg": {"package": 1}}})",
      head + R"({"if": {}, "pkg": {}}})",
      // duplicates, at every depth
      head + R"({"pkg": {}, "pkg": {}}})",
      head + R"({"pkg": {"package": true, "package": true}}})",
      head + R"({"pkg": {"body": [{"import": "pkg", "import": "pkg"}]}}})",
      head + R"({"pkg": {"body": [{"import": "pkg", "optional": true, "optional": true}]}}})",
      head + R"({"pkg": {}}, "impsim": 1})",
      head + R"({"pkg": {}}, "sys_modules": {"preloaded": [], "preloaded": []}})",
      head + R"({"pkg": {}}, "params": {"k": 1, "k": 2}})",
      head + R"({"pkg": {}}, "params": {"k": 1, "\u006b": 2}})",
      head + R"({"pkg": {"body": [{"guard": {"scope": null, "scope": null}, "body": []}]}}})",
      // escapes and strings that need them
      head + R"({"p\u006bg": {}}})",
      head + R"({"pkg": {"body": [{"imp\u006frt": "pkg"}]}}})",
      head + R"({"pkg": {}}, "description": "a\nb\t\"c\" \ud83d\ude00 \u00e9"})",
      head + R"({"pkg": {}}, "description": "\ud83d"})",
      head + R"({"pkg": {}}, "description": "\x"})",
      head + "{\"pkg\": {}}, \"description\": \"tab\there\"}",
      head + "{\"pkg\": {}}, \"name\": \"\xC3\x28\"}",
      head + "{\"pkg\": {}}, \"name\": \"\xED\xA0\x80\"}",
      head + "{\"pkg\": {}}, \"name\": \"a\xC3\"}",
      head + "{\"pkg\": {\"body\": [{\"import\": \"pkg\xE2\x82\"}]}}}",
      head + "{\"pk\xFFg\": {}}}",
      head + R"({"pkg": {"body": [{"import": "pkg\u0000"}]}}})",
      // numbers, all nlohmann's
      head + R"({"pkg": {}}, "params": {"k": 12345678901234567890}})",
      head + R"({"pkg": {}}, "params": {"k": 1E400}})",
      head + R"({"pkg": {}}, "params": {"k": -0, "j": 1.0, "i": 01}})",
      head + R"({"pkg": {}}, "params": {"k": 1}, "program": [{"import": "pkg", "repeat": "$k"}]})",
      R"({"impsim": 1.0, "tree": {}, "program": []})",
      R"({"impsim": 2, "tree": {}, "program": []})",
      // syntax
      head + R"({"pkg": {}},})",
      head + R"({"pkg": {},}})",
      head + R"({"pkg": {"body": [{"import": "pkg"},]}}})",
      head + R"({"pkg": {}}} x)",
      head + R"({"pkg": {}}} {})",
      head + R"({"pkg": {}}, "name": tru})",
      head + R"({"pkg": {}}, "name": nul})",
      head + R"({"pkg": {}} /* c */})",
      head + R"({"pkg": {}}, "description": "unterminated})",
      head + "{\"pkg\": {}}}\0",
      head,
      "",
      "[]",
      "{}",
      R"({"impsim": 1, "tree": [], "program": []})",
      R"({"impsim": 1, "tree": {}, "program": {}})",
      R"({"impsim": 1, "tree": {}, "program": [], "unknown": 1})",
      R"({"impsim": 1, "tree": {}, "program": [], "tree": {}})",
      R"({"impsim": 1, "tree": {}})",
      R"({"impsim": 1, "program": []})",
      // steps the event reader leaves to Reader::step, and steps that are wrong
      head + R"({"pkg": {"body": [{"import": "pkg", "repeat": 3}, {"block": ["a"]}, {"import": "nope.x"}]}}})",
      head + R"({"pkg": {"body": [{"import": "pkg", "nest": 2}]}}})",
      head + R"({"pkg": {"body": [{"import": 1}]}}})",
      head + R"({"pkg": {"body": [{"import": "1pkg"}]}}})",
      head + R"({"pkg": {"body": [{"import": "pkg", "optional": null}]}}})",
      head + R"({"pkg": {"body": [{}]}}})",
      head + R"({"pkg": {"body": [{"optional": true}]}}})",
      head + R"({"pkg": {"body": [{"import": "pkg", "label": "a"}, {"import": "pkg", "label": "a"}]}}})",
      head + R"({"pkg": {"body": {"import": "pkg"}}}})",
      head + R"({"pkg": {"body": ["import"]}}})",
      head + R"({"pkg": {"body": [{"install": "f"}]}}})",
  };
  Counts counts;
  const std::vector<InputLimits> limits = limit_sets();
  for (size_t i = 0; i < cases.size(); ++i) {
    INFO("case ", i, ": ", cases[i]);
    for (const InputLimits& l : limits) agree(cases[i], fmt::format("case{}.json", i), l, counts);
    // Every prefix of the case too: the shapes a file cut short has.
    for (size_t n = 0; n < cases[i].size(); ++n) agree(cases[i].substr(0, n), "cut.json", {}, counts);
  }
  MESSAGE(counts.files, " readings, ", counts.taken, " taken by the event reader");
  CHECK(counts.taken > 50);
}

TEST_CASE("the event reader takes a large plain tree, and reads it as the DOM reader does") {
  std::string tree = R"("pkg": {"package": true})";
  for (int i = 0; i < 2000; ++i)
    tree += fmt::format(R"(, "pkg.m{}": {})", i, i % 2 ? R"({"body": [{"import": "pkg"}]})" : "{}");
  const std::string text = fmt::format(R"({{"impsim": 1, "tree": {{{}}}, "program": [{{"import": "pkg.m1"}}]}})", tree);
  std::optional<Scenario> events = parse_scenario_events(text, "tree.json");
  REQUIRE(events);
  CHECK(fuzz::scenario_dump(*events) == fuzz::scenario_dump(parse_scenario_dom(text, "tree.json")));
  // Reaching a limit, it gives up: the limit's message is the DOM reader's.
  InputLimits small;
  small.max_tree_entries = 1000;
  CHECK_FALSE(parse_scenario_events(text, "tree.json", small));
  CHECK_THROWS_AS(parse_scenario(text, "tree.json", small), InputLimitError);
}
