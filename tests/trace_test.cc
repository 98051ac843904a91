// `impsim trace`: golden text, chrome and importtime traces, the DOT output
// through Graphviz, the importtime lines through tuna's regex.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "impsim/reader/read_scenario.h"
#include "impsim/trace/trace_formats.h"
#include "test_util.h"
#include "trace_test_util.h"

using namespace impsim;

namespace {

const std::string kGolden = std::string(IMPSIM_SOURCE_DIR) + "/tests/golden/";

std::string trace(const std::string& scenario, TraceFormat format, Params set = {}, TraceOptions topt = {},
                  std::vector<std::string> variants = {}) {
  return test::traced(scenario, format, std::move(set), topt, std::move(variants));
}

std::string read(const std::string& path) { return test::read_file(path); }

// Compares with tests/golden/NAME, or rewrites it when IMPSIM_UPDATE_GOLDEN
// is set. A rewrite fails the check too: a run with the variable set has
// compared nothing, and must not pass as if it had (a CI job that exports
// it would otherwise bless every change to a trace).
void check_golden(const std::string& name, const std::string& actual) {
  std::string path = kGolden + name;
  if (std::getenv("IMPSIM_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << actual;
    FAIL_CHECK("rewrote " << path << " (IMPSIM_UPDATE_GOLDEN is set, so nothing was compared: review the diff, "
                          << "then run again without it)");
    return;
  }
  std::string expected = read(path);
  if (expected != actual) {
    std::string got = test::write_temp(name, actual);
    FAIL_CHECK("trace differs from " << path << "; the new one is in " << got << " (diff them; if the change is "
                                     << "meant, regenerate: IMPSIM_UPDATE_GOLDEN=1 impsim_tests -tc='golden*')");
  }
}

bool have(const std::string& tool) { return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0; }

}  // namespace

TEST_CASE("golden text trace: nested_guards at k=2, both variants") {
  check_golden("nested_guards_k2.txt", trace(kGolden + "nested_guards.json", TraceFormat::Text, {{"k", 2}}));
}

TEST_CASE("golden text trace: blocked_marks_differ (a blocked module - the variants end differently)") {
  check_golden("blocked_marks_differ.txt", trace(kGolden + "blocked_marks_differ.json", TraceFormat::Text));
}

TEST_CASE("golden chrome trace: nested_guards at k=1") {
  std::string text = trace(kGolden + "nested_guards.json", TraceFormat::Chrome, {{"k", 1}});
  check_golden("nested_guards_k1.chrome.json", text);
}

TEST_CASE("golden importtime: blocked_marks_differ") {
  check_golden("blocked_marks_differ.importtime",
               trace(kGolden + "blocked_marks_differ.json", TraceFormat::ImportTime));
}

TEST_CASE("text: the walk-through a newcomer reads") {
  std::string t = trace(kGolden + "nested_guards.json", TraceFormat::Text, {{"k", 2}});
  CHECK(t.find("ask i=1 [P *P | Builtin Frozen Path]: P (copy 2 of 2).find_spec('pkg.missing')") != std::string::npos);
  CHECK(t.find("lookup 'pkg.missing' (depth 2)") != std::string::npos);
  CHECK(t.find("enable: walk over 201 names of sys.modules; P inserted at 0 -> [P | Builtin Frozen Path]") !=
        std::string::npos);
  CHECK(t.find("body of pkg runs") != std::string::npos);
  // Only the asks the fix itself answers are marked suppressed: after, k=2,
  // 1 while importing pkg and 2 in the probe.
  std::string after = t.substr(t.find("== variant after"));
  size_t marked = 0;
  for (size_t at = after.find("suppressed:"); at != std::string::npos; at = after.find("suppressed:", at + 1)) ++marked;
  CHECK(marked == 3);
  CHECK(after.find("totals: 6 asks of P, 3 suppressed, 3 lookups") != std::string::npos);
  // Deterministic.
  CHECK(t == trace(kGolden + "nested_guards.json", TraceFormat::Text, {{"k", 2}}));
}

TEST_CASE("text: a long trace is cut at --max-lines and says what it left out") {
  TraceOptions o;
  o.max_lines = 20;
  std::string t = trace(kGolden + "nested_guards.json", TraceFormat::Text, {{"k", 4}}, o, {"before"});
  CHECK(t.find("... cut at --max-lines 20: ") != std::string::npos);
  CHECK(t.find(" lookups, ") != std::string::npos);
  CHECK(t.find("totals: 68 asks of P, 0 suppressed, 68 lookups (deepest 4)") != std::string::npos);
  size_t lines = 0;
  for (char c : t) lines += c == '\n';
  CHECK(lines < 20 + 12);
  o.max_lines = 0;
  std::string full = trace(kGolden + "nested_guards.json", TraceFormat::Text, {{"k", 4}}, o, {"before"});
  CHECK(full.find("cut at") == std::string::npos);
  CHECK(full.size() > t.size() * 5);
}

TEST_CASE("chrome: valid Trace Event JSON, balanced and monotonic per process, cut past --max-lines events") {
  for (uint64_t cap : {uint64_t{0}, uint64_t{50}}) {
    CAPTURE(cap);
    TraceOptions o;
    o.max_lines = cap;
    auto j = nlohmann::json::parse(trace(kGolden + "nested_guards.json", TraceFormat::Chrome, {{"k", 3}}, o));
    REQUIRE(j.contains("traceEvents"));
    std::map<int, std::vector<std::string>> open;
    std::map<int, uint64_t> last;
    size_t timed = 0;
    for (auto& e : j["traceEvents"]) {
      std::string ph = e["ph"];
      if (ph == "M") continue;
      ++timed;
      int pid = e["pid"];
      uint64_t ts = e["ts"];
      CHECK(ts >= last[pid]);
      last[pid] = ts;
      if (ph == "B")
        open[pid].push_back(e["name"]);
      else if (ph == "E") {
        REQUIRE(!open[pid].empty());
        open[pid].pop_back();
      } else if (ph == "i") {
        // A guard's entry or exit: an instant, what it did and why.
        CHECK(e["cat"] == "guard");
        CHECK(e["args"].contains("why"));
      } else {
        CHECK(ph == "X");
        CHECK(e.contains("dur"));
      }
    }
    for (auto& [pid, stack] : open) CHECK(stack.empty());
    uint64_t left = j["otherData"]["variants"]["before"]["events_left_out"];
    if (cap == 0)
      CHECK(left == 0);
    else {
      CHECK(left > 0);
      CHECK(timed <= 2 * (50 + 50));  // the cap per variant, plus the ends of what was open
    }
    // The clock: one tick per finder asked and per name a walk examines.
    CHECK(j["otherData"]["variants"]["after"]["ticks"] > j["otherData"]["variants"]["after"]["comparisons"]);
  }
}

TEST_CASE("importtime: every line parses with tuna's regex and nests as tuna reads it") {
  std::regex re(R"(import time:\s+(\d+) \|\s+(\d+) \|(\s+)(.*))");
  // A hook scenario's lines name the finder objects asked too (they have no k).
  const std::string zoo = std::string(IMPSIM_SOURCE_DIR) + "/scenarios/zoo/distutils_hack_nested.json";
  for (std::string file :
       {kGolden + "nested_guards.json", std::string(IMPSIM_SOURCE_DIR) + "/scenarios/import_chain.json", zoo}) {
    CAPTURE(file);
    std::string t = trace(file, TraceFormat::ImportTime, file == zoo ? Params{} : Params{{"k", 2}});
    std::istringstream in(t);
    std::string line;
    std::getline(in, line);
    CHECK(line == "import time: self [us] | cumulative | imported package");
    std::vector<std::pair<size_t, std::pair<uint64_t, uint64_t>>> entries;  // level, (self, cumulative)
    while (std::getline(in, line)) {
      std::smatch m;
      REQUIRE(std::regex_match(line, m, re));
      size_t spaces = m[3].str().size();
      CHECK(spaces % 2 == 1);  // "| " then two spaces per level
      entries.push_back({(spaces - 1) / 2, {std::stoull(m[1]), std::stoull(m[2])}});
    }
    REQUIRE(!entries.empty());
    // tuna reads the lines bottom-up: each must be at most one level below
    // the one before it, starting from level 0 (the variant's line).
    size_t prev = 0;
    bool first = true;
    for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
      if (first)
        CHECK(it->first == 0);
      else
        CHECK(it->first <= prev + 1);
      CHECK(it->second.first <= it->second.second);
      prev = it->first;
      first = false;
    }
  }
}

TEST_CASE("dot: Graphviz accepts the lookup tree, drawn in full or compressed") {
  if (!have("dot")) {
    MESSAGE("Graphviz `dot` is not installed: DOT output not checked (apt-get install graphviz)");
    return;
  }
  for (int64_t k : {2, 7}) {
    CAPTURE(k);
    std::string d = trace(kGolden + "nested_guards.json", TraceFormat::Dot, {{"k", k}});
    CHECK(d.find("suppressed ask") != std::string::npos);
    if (k == 7) {
      CHECK(d.find("drawn compressed") != std::string::npos);
      CHECK(d.find("x 7 identical siblings") != std::string::npos);
    } else {
      CHECK(d.find("drawn compressed") == std::string::npos);
    }
    std::string path = test::write_temp("k" + std::to_string(k) + ".dot", d);
    int rc = std::system(("dot -Tsvg " + path + " -o " + path + ".svg 2>" + path + ".err").c_str());
    CHECK(rc == 0);
    if (rc != 0) MESSAGE(read(path + ".err"));
    CHECK(read(path + ".svg").find("<svg") != std::string::npos);
  }
  // A hook scenario's search tree.
  std::string path = test::write_temp(
      "zoo.dot", trace(std::string(IMPSIM_SOURCE_DIR) + "/scenarios/zoo/distutils_hack_nested.json", TraceFormat::Dot));
  CHECK(std::system(("dot -Tsvg " + path + " -o " + path + ".svg 2>" + path + ".err").c_str()) == 0);
  CHECK(read(path + ".svg").find("dh.find_spec") != std::string::npos);
}

TEST_CASE("impsim trace on the command line") {
  std::string f = kGolden + "nested_guards.json";
  auto r = test::impsim("trace " + f + " --set k=2");
  CHECK(r.status == 0);
  CHECK(r.out == trace(f, TraceFormat::Text, {{"k", 2}}));
  std::string out = test::write_temp("cli_trace.json", "");
  r = test::impsim("trace " + f + " --set k=1 --format chrome -o " + out);
  CHECK(r.status == 0);
  CHECK(read(out) == trace(f, TraceFormat::Chrome, {{"k", 1}}));
  CHECK(test::impsim("trace " + f + " --format svg").status == 2);
  CHECK(test::impsim("trace " + f + " --set q=1").status == 2);
  CHECK(test::impsim("trace " + f + " --variant sideways").status == 2);
  CHECK(test::impsim("trace " + f + " --set k=3 --max-lookup-depth 2").status == 3);
}

// Hook scenarios: every format names the finder object asked, an object
// twice in sys.meta_path twice. The counts compared are the scenario's
// pinned expectations (tools/check/crosscheck --zoo checks them against the real
// _distutils_hack): finder_calls:dh is 10 as released, so each format must
// show dh asked 10 times.
TEST_CASE("hook scenarios: text, chrome, dot and importtime name each finder object asked") {
  const std::string f = std::string(IMPSIM_SOURCE_DIR) + "/scenarios/zoo/distutils_hack_nested.json";
  auto count = [](const std::string& s, const std::string& what) {
    size_t n = 0;
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
  };
  TraceOptions all;
  all.max_lines = 0;
  std::string t = trace(f, TraceFormat::Text, {}, all, {"as_is"});
  // ensure_local_distutils' second copy: dh asked at i=0 and again at i=1.
  // _distutils_hack acts only where path is None: a submodule's search has a path.
  const std::string why =
      " [not claimed: the hook acts only on top-level searches (path is None), and this one has a "
      "path] -> None";
  CHECK(t.find("ask i=0 [*dh dh BuiltinImporter FrozenImporter PathFinder]: dh.find_spec('setuptools._distutils')" +
               why) != std::string::npos);
  CHECK(t.find("ask i=1 [dh *dh BuiltinImporter FrozenImporter PathFinder]: dh.find_spec('setuptools._distutils')" +
               why) != std::string::npos);
  CHECK(count(t, ": dh.find_spec('") == 10);
  CHECK(
      t.find("totals: 9 searches, 10 finder calls (dh 10), interpreter's finders: BuiltinImporter 7, FrozenImporter 7, "
             "PathFinder 7, deepest _find_spec nesting 3; clock") != std::string::npos);
  CHECK(t.find("end: sys.meta_path is [BuiltinImporter FrozenImporter PathFinder]") != std::string::npos);
  CHECK(t.find("P is the torch proxy finder") == std::string::npos);

  auto j = nlohmann::json::parse(trace(f, TraceFormat::Chrome, {}, {}, {"as_is"}));
  size_t dh = 0;
  for (auto& e : j["traceEvents"])
    if (e["ph"] == "B" && e["cat"] == "ask") {
      CHECK(e["args"]["meta_path"].get<std::string>().find("*" + e["args"]["finder"].get<std::string>()) !=
            std::string::npos);
      dh += e["args"]["finder"] == "dh";
    }
  CHECK(dh == 10);
  CHECK(j["otherData"]["variants"]["as_is"]["finder_calls_by_object"]["dh"] == 10);
  CHECK(j["otherData"]["variants"]["as_is"]["searches"] == 9);
  CHECK(j["otherData"]["variants"]["as_is"]["max_depth"] == 3);

  std::string it = trace(f, TraceFormat::ImportTime, {}, {}, {"as_is"});
  CHECK(count(it, "| dh.find_spec('") + count(it, " dh.find_spec('") == 10);
  // setuptools' __init__ runs inside dh.find_spec('distutils'): its line is below dh's.
  CHECK(std::regex_search(
      it, std::regex(R"(\|\s+setuptools\n(.*\n)*?import time:.*\| {5}dh\.find_spec\('distutils'\)\n)")));

  std::string d = trace(f, TraceFormat::Dot, {}, {}, {"as_is"});
  CHECK(count(d, "[label=\"dh.find_spec('") == 10);
  CHECK(d.find("9 searches, 10 finder calls, deepest _find_spec nesting 3") != std::string::npos);
  CHECK(d.find("search tree of distutils_hack_nested") != std::string::npos);
  CHECK(d.find("_find_spec nesting 3") != std::string::npos);
}

// Every decision of a hook object says why, in every format, as P's do: not
// claimed, a re-entry its guard turns away, or claimed; and each action that
// asks the import system again is a line of its own (ddtrace's watchdogs:
// a re-entry through importlib.util.find_spec, or call_next's direct calls,
// where the objects asked decide with no ask of sys.meta_path open).
TEST_CASE("hook scenarios: every decision has its reason, every re-entry and direct call its line") {
  const std::string f = std::string(IMPSIM_SOURCE_DIR) + "/scenarios/zoo/ddtrace_watchdog.json";
  TraceOptions all;
  all.max_lines = 0;
  const std::string object_set = trace(f, TraceFormat::Text, {}, all, {"guard_object_set"});
  CHECK(object_set.find("]: wd#6.find_spec('app') [claimed: the hook runs its actions]\n") != std::string::npos);
  CHECK(object_set.find("wd#6 re-enters the import system: importlib.util.find_spec('app')\n") != std::string::npos);
  CHECK(object_set.find("]: wd#6.find_spec('app') [a re-entry, turned away: the guard's set already holds this name] "
                        "-> None") != std::string::npos);
  // Every ask of a watchdog has its reason.
  size_t asks = 0, reasons = 0;
  for (size_t at = object_set.find("]: wd"); at != std::string::npos; at = object_set.find("]: wd", at + 1)) {
    ++asks;
    const size_t eol = object_set.find('\n', at);
    const std::string line = object_set.substr(at, eol - at);
    reasons +=
        line.find(" [claimed: ") != std::string::npos || line.find(" [a re-entry, turned away: ") != std::string::npos;
  }
  CHECK(asks > 100);
  CHECK(reasons == asks);

  const std::string call_next = trace(f, TraceFormat::Text, {}, all, {"call_next"});
  CHECK(call_next.find(
            "wd#6 asks each finder after it in sys.meta_path for 'app' (call_next), the first spec wins\n"
            "      wd#5.find_spec('app') [a re-entry, turned away: the guard's set already holds this name]\n") !=
        std::string::npos);

  // Chrome: the reason with the ask's end, a direct call's decision and each call an instant.
  auto j = nlohmann::json::parse(trace(f, TraceFormat::Chrome, {}, all, {"call_next"}));
  size_t ends = 0, with_reason = 0, decisions = 0, calls = 0;
  for (auto& e : j["traceEvents"]) {
    if (e["ph"] == "E" && e["args"].contains("answer") && e["args"].contains("reason")) ++with_reason;
    if (e["ph"] == "E" && e["args"].contains("answer")) ++ends;
    if (e["ph"] == "i" && e["name"] == "decision") {
      ++decisions;
      CHECK(e["args"]["reason"] == "guard-holds");
    }
    if (e["ph"] == "i" && e["name"] == "hook call") {
      ++calls;
      CHECK(e["args"]["call"] == "call-next");
    }
  }
  CHECK(with_reason > 0);
  // Three imports, each found through wd#6's call_next (wd#5 .. wd#1 turned
  // away: 5 each), then the probe of a missing name, where each watchdog in
  // turn asks those after it: 5 + 4 + 3 + 2 + 1 + 0.
  CHECK(calls == 3 + 6);
  CHECK(decisions == 3 * 5 + 15);

  // DOT: the reason and the call under the ask's label.
  const std::string dot = trace(f, TraceFormat::Dot, {}, {}, {"guard_object_set"});
  CHECK(dot.find("wd#6.find_spec('app')\\ni=0 of 9, _find_spec nesting 1\\n[claimed: the hook runs its actions]\\nwd#6 "
                 "re-enters the import system: importlib.util.find_spec('app')") != std::string::npos);
}

// A scenario's sys.meta_path can be a thousand entries long, and each ask
// writes it: past 40 entries a line shows the first, those around the one
// asked and the last, and says how many it leaves out. importtime, one
// line per call, stops at --max-lines like text and says so on stderr.
TEST_CASE("a long sys.meta_path and a long importtime profile stay bounded") {
  const std::string file = test::write_temp("long_meta_path.json", R"({"impsim": 1, "tree": {},
    "program": [{"append": "PathFinder", "repeat": 200}, {"import": "missing", "optional": true, "repeat": 50}]})");
  test::Split t = test::shell_split(std::string(IMPSIM_BINARY) + " trace --max-lines 0 " + file);
  CHECK(t.status == 0);
  size_t longest = 0;
  std::istringstream lines(t.out);
  for (std::string line; std::getline(lines, line);) longest = std::max(longest, line.size());
  CHECK(longest < 1000);  // 203 entries would be 2,200 characters a line
  CHECK(t.out.find("ask i=100 [BuiltinImporter FrozenImporter PathFinder PathFinder") != std::string::npos);
  CHECK(t.out.find(
            " \u2026 (80 more) \u2026 PathFinder PathFinder PathFinder PathFinder *PathFinder PathFinder PathFinder "
            "PathFinder PathFinder \u2026 (90 more) \u2026 PathFinder") != std::string::npos);

  test::Split it = test::shell_split(std::string(IMPSIM_BINARY) + " trace --format importtime --max-lines 500 " + file);
  CHECK(it.status == 0);
  CHECK(std::count(it.out.begin(), it.out.end(), '\n') == 501);  // the header, then 500 lines
  CHECK(it.err.find("impsim: trace: the importtime profile of as_is is cut at --max-lines 500: 9,701 more lines left "
                    "out") != std::string::npos);
  test::Split whole = test::shell_split(std::string(IMPSIM_BINARY) + " trace --format importtime " + file);
  CHECK(std::count(whole.out.begin(), whole.out.end(), '\n') == 1 + 500 + 9701);  // under the default 200,000
  CHECK(whole.err.empty());
}

TEST_CASE("hook scenarios on 3.14: an ask shows the snapshot its loop walks, and the list as it is now") {
  // o's find_spec imports m, whose body uninstalls o: 3.14 goes on over
  // list(sys.meta_path) as it was, so it asks BuiltinImporter at i=1 where
  // 3.13's live list would give FrozenImporter.
  const char* kSelfRemoving = R"({"impsim": 1, "name": "self_removing", "cpython": "3.14",
    "tree": {"x": {}, "m": {"body": [{"uninstall": "o"}]}},
    "hooks": {"once": {"claims": {"names": ["x"]}, "find_spec": [{"import": "m"}], "guard": "none"}},
    "finders": {"o": {"hook": "once"}},
    "program": [{"install": "o"}, {"import": "x"}]})";
  const Scenario sc = parse_scenario(kSelfRemoving, "self_removing.json");
  auto traced = [&](TraceFormat format) {
    RunOptions options;
    TraceOptions topt;
    topt.format = format;
    std::ostringstream out;
    write_trace(out, sc, options, topt);
    return out.str();
  };
  const std::string t = traced(TraceFormat::Text);
  const std::string now = " (a snapshot: sys.meta_path is now [BuiltinImporter FrozenImporter PathFinder])";
  CHECK(t.find("    ask i=1 [o *BuiltinImporter FrozenImporter PathFinder]" + std::string(now) +
               ": BuiltinImporter.find_spec('x') -> None\n") != std::string::npos);
  CHECK(t.find("    ask i=3 [o BuiltinImporter FrozenImporter *PathFinder]" + std::string(now) +
               ": PathFinder.find_spec('x') -> spec\n") != std::string::npos);
  CHECK(t.find("?.find_spec") == std::string::npos);
  // Before the body runs the snapshot is the list: no note.
  CHECK(t.find("    ask i=0 [*o BuiltinImporter FrozenImporter PathFinder]: o.find_spec('x')") != std::string::npos);

  const std::string dot = traced(TraceFormat::Dot);
  CHECK(dot.find("BuiltinImporter.find_spec('x')\\ni=1 of 4") != std::string::npos);
  const std::string importtime = traced(TraceFormat::ImportTime);
  CHECK(importtime.find("?.") == std::string::npos);
  const auto chrome = nlohmann::json::parse(traced(TraceFormat::Chrome));
  std::vector<std::string> asked;
  for (const auto& ev : chrome["traceEvents"])
    if (ev["ph"] == "B" && ev["args"].contains("finder") && ev["args"]["name"] == "x")
      asked.push_back(ev["args"]["finder"].get<std::string>());
  CHECK(asked == std::vector<std::string>{"o", "BuiltinImporter", "FrozenImporter", "PathFinder"});
}
