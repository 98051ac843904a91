// The trace formats and the explorer on threaded scenarios: each thread's
// events nested apart (a Chrome track, a DOT cluster, a call stack of the
// page's per thread), lock waits and a hang shown as who waits for what,
// held by whom, and `-X importtime` lines as CPython writes them when two
// threads import at once (measured on 3.9-3.13: docs/threads-verification.md).
#include <doctest/doctest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "impsim/reader/read_scenario.h"
#include "impsim/trace/trace_formats.h"
#include "trace_test_util.h"

using namespace impsim;

namespace {

const std::string kThreadData = impsim::test::kSource + "/tests/data/threads/";

std::string traced_threads(const Scenario& sc, TraceFormat format, const std::string& variant,
                           const std::string& schedule = "") {
  RunOptions options;
  options.variants = {variant};
  options.schedule = schedule;
  TraceOptions topt;
  topt.format = format;
  std::ostringstream out;
  write_trace(out, sc, options, topt);
  return out.str();
}

std::string traced_file(const std::string& file, TraceFormat format, const std::string& variant,
                        const std::string& schedule = "") {
  return traced_threads(parse_scenario_file(kThreadData + file), format, variant, schedule);
}

// Two threads, each importing a module whose body imports another: the
// program the real interpreters were measured on (a1 -> a2 in main, b1 ->
// b2 in w).
const char* kTwoChains = R"({"impsim": 1, "name": "two_chains",
  "tree": {"a1": {"body": [{"import": "a2"}]}, "a2": {}, "b1": {"body": [{"import": "b2"}]}, "b2": {}},
  "threads": {"w": [{"import": "b1"}]},
  "program": [{"start": "w"}, {"import": "a1"}, {"join": "w"}]})";

// A schedule of it that starts a1, b1, a2 and b2 in that order, and ends
// b2, b1, a2 and a1: the order of the measured run.
const char* kInterleaved = "0.0.0.0.0.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.0.0.0.1.1.0.0.0.0.0.0.0.0.0.0.1.1.1.1.1.1.1.1.1.1.1.1";

struct TimeLine {
  int64_t self, cum;
  size_t indent;
  std::string name;
};

std::vector<TimeLine> import_times(const std::string& text) {
  std::vector<TimeLine> out;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    const size_t bar1 = line.find('|'), bar2 = line.find('|', bar1 + 1);
    REQUIRE(bar2 != std::string::npos);
    const std::string rest = line.substr(bar2 + 2);
    const size_t indent = rest.find_first_not_of(' ');
    out.push_back({std::stoll(line.substr(12, bar1 - 12)), std::stoll(line.substr(bar1 + 1, bar2 - bar1 - 1)), indent,
                   rest.substr(indent)});
  }
  return out;
}

}  // namespace

TEST_CASE("trace threads: chrome gives each Python thread a track named after it, main first") {
  const auto j = nlohmann::json::parse(traced_file("join_in_body.json", TraceFormat::Chrome, "before"));
  std::map<int, std::string> names;
  std::map<int, std::vector<std::string>> open;  // by tid: the B events not yet ended
  std::vector<std::string> lock_slices, hangs;
  for (const auto& ev : j["traceEvents"]) {
    const int tid = ev["tid"];
    const std::string ph = ev["ph"];
    if (ph == "M" && ev["name"] == "thread_name") names[tid] = ev["args"]["name"];
    if (ph == "B") {
      open[tid].push_back(ev["name"]);
      if (ev["cat"] == "lock") lock_slices.push_back(std::to_string(tid) + " " + ev["args"]["why"].get<std::string>());
    }
    if (ph == "E") {
      REQUIRE(!open[tid].empty());  // every end closes an event of its own track
      open[tid].pop_back();
    }
    if (ph == "i" && ev["name"] == "hang")
      hangs.push_back(std::to_string(tid) + " " + ev["args"]["why"].get<std::string>());
  }
  CHECK(names == std::map<int, std::string>{{1, "main"}, {2, "w"}});
  for (auto& [tid, events] : open) CHECK(events.empty());
  CHECK(lock_slices ==
        std::vector<std::string>{"1 waits for w to finish (w.join())", "2 waits for _ModuleLock('a'), held by main"});
  CHECK(hangs == std::vector<std::string>{"1 main waits for w to finish (w.join()): the process never ends",
                                          "2 w waits for _ModuleLock('a'), held by main: the process never ends"});
  const auto& summary = j["otherData"]["variants"]["before"];
  CHECK(summary["threads"] == nlohmann::json::array({"main: waiting", "w: waiting"}));
  CHECK(summary["hang"].size() == 2);
}

TEST_CASE("trace threads: a wait that ends is a slice from the park to the wake, on the waiter's track") {
  // cross_import's default schedule: main joins w, which runs to its end.
  const auto j = nlohmann::json::parse(traced_file("cross_import.json", TraceFormat::Chrome, "before"));
  int joins = 0;
  for (const auto& ev : j["traceEvents"]) {
    if (ev["ph"] == "B" && ev["cat"] == "lock") {
      CHECK(ev["tid"] == 1);
      CHECK(ev["args"]["joins"] == "w");
      ++joins;
    }
    if (ev["ph"] == "E" && ev["args"].contains("woken")) CHECK(ev["args"]["woken"] == "w has finished: join returns");
  }
  CHECK(joins == 1);
  CHECK(j["otherData"]["variants"]["before"]["hang"].empty());
}

TEST_CASE("trace threads: a scenario without threads keeps one track and no thread keys") {
  const std::string text = impsim::test::traced(impsim::test::kNested, TraceFormat::Chrome, {{"k", 2}});
  const auto j = nlohmann::json::parse(text);
  for (const auto& ev : j["traceEvents"]) CHECK(ev["tid"] == 1);
  CHECK(text.find("\"name\":\"import system\"") != std::string::npos);
  for (const auto& [variant, summary] : j["otherData"]["variants"].items()) {
    CHECK(!summary.contains("threads"));
    CHECK(!summary.contains("hang"));
  }
}

TEST_CASE("trace threads: importtime interleaves the threads' lines as CPython does") {
  const Scenario sc = parse_scenario(kTwoChains, "two_chains.json");
  const std::vector<TimeLine> lines = import_times(traced_threads(sc, TraceFormat::ImportTime, "before", kInterleaved));
  REQUIRE(lines.size() == 5);
  // As CPython 3.9-3.13 print them: b2, b1, a2, a1 as they finish, each one
  // level out from the one before (the level is the process's, not the
  // thread's); one level below the run's own line here.
  std::vector<std::string> order;
  for (const TimeLine& l : lines) order.push_back(l.name + "@" + std::to_string(l.indent));
  CHECK(order == std::vector<std::string>{"b2@8", "b1@6", "a2@4", "a1@2", "[before]@0"});
  // `accumulated` is the process's too: a2's self time takes off b1's
  // cumulative time, which finished below a2's level while a2 ran, and
  // goes negative as it does in CPython; a1's takes off a2's.
  CHECK(lines[2].self == lines[2].cum - lines[1].cum);
  CHECK(lines[2].self < 0);
  CHECK(lines[3].self == lines[3].cum - lines[2].cum);
  CHECK(lines[1].self == lines[1].cum - lines[0].cum);
}

TEST_CASE("trace threads: importtime writes no line for an import a hang leaves open") {
  const std::vector<TimeLine> lines = import_times(traced_file("join_in_body.json", TraceFormat::ImportTime, "before"));
  // main's import of a waits for w forever, and w's import of a for main's
  // lock: neither finishes, so the run's own line is the only one.
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].name == "[before]");
  CHECK(lines[0].indent == 0);
}

TEST_CASE("trace threads: dot draws each thread's steps in a cluster, and a hang's waits in red") {
  const std::string dot = traced_file("join_in_find_spec.json", TraceFormat::Dot, "as_is");
  CHECK(dot.find("subgraph \"cluster_as_is_thread0\" {\n      label=\"thread main\";") != std::string::npos);
  CHECK(dot.find("subgraph \"cluster_as_is_thread1\" {\n      label=\"thread w\";") != std::string::npos);
  CHECK(dot.find("label=\"hang: waits for the global import lock (in _get_module_lock), held by main, forever\"") !=
        std::string::npos);
  CHECK(dot.find("label=\"hang: waits for w to finish (w.join()), forever\"") != std::string::npos);
  CHECK(dot.find("\\nhang: thread w waits for the global import lock, held by thread main") != std::string::npos);
  // The edges from the variant's box come after the clusters, so the box stays outside them.
  CHECK(dot.rfind("    n1 -> ") > dot.rfind("subgraph"));
}

TEST_CASE("trace threads: the text trace says when a thread waits, when it is woken, and the hang") {
  const std::string text = traced_file("join_in_body.json", TraceFormat::Text, "before");
  CHECK(text.find("  main |         waits for w to finish (w.join())\n") != std::string::npos);
  CHECK(text.find("     w |   waits for _ModuleLock('a'), held by main\n") != std::string::npos);
  CHECK(text.find("threads: main: waiting; w: waiting\nhang: thread main waits for thread w to finish (join)\n") !=
        std::string::npos);
  const std::string ended = traced_file("cross_import.json", TraceFormat::Text, "before");
  CHECK(ended.find("  main |   w has finished: join returns\n") != std::string::npos);
  CHECK(ended.find("threads: main: ok; w: ok\n") != std::string::npos);
}

// cross_import.json (a imports b, b imports a; main imports a, w imports
// b): a schedule where main's import of b finds the cycle and raises, and
// one where w's import statement finds it and swallows it.
const std::string kCrossRaised = "0.0.0.0.0.0.0.0.0.0.0.0.0.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.0";
std::string cross_swallowed() {
  std::string s;
  for (int i = 0; i < 3 + 5 + 40 + 20; ++i)
    s += (s.empty() ? "" : ".") + std::string(i < 3 || (i >= 8 && i < 48) ? "0" : "1");
  return s;
}

TEST_CASE("trace threads: a _DeadlockError is an event of its own, with its cycle, in every format") {
  const std::string cycle =
      "main would wait for _ModuleLock('b'), held by w; w waits for _ModuleLock('a'), held by main";
  const std::string raised = "_DeadlockError (deadlock detected by _ModuleLock('b')): " + cycle;
  const std::string text = traced_file("cross_import.json", TraceFormat::Text, "before", kCrossRaised);
  CHECK(text.find("  main |         " + raised + "\n  main |       step /tree/a/body/0 -> _DeadlockError\n") !=
        std::string::npos);
  const std::string swallowed = traced_file("cross_import.json", TraceFormat::Text, "before", cross_swallowed());
  CHECK(swallowed.find(
            "     w |         _DeadlockError for _ModuleLock('a'), swallowed by _lock_unlock_module: w goes on "
            "with 'a' as it is, partly initialised: w would wait for _ModuleLock('a'), held by main; main "
            "waits for _ModuleLock('b'), held by w\n") != std::string::npos);
  CHECK(swallowed.find("threads: main: ok; w: ok") != std::string::npos);

  const auto j = nlohmann::json::parse(traced_file("cross_import.json", TraceFormat::Chrome, "before", kCrossRaised));
  int found = 0;
  for (const auto& ev : j["traceEvents"])
    if (ev.value("name", "") == "_DeadlockError") {
      ++found;
      CHECK(ev["ph"] == "i");
      CHECK(ev["tid"] == 1);
      CHECK(ev["args"]["swallowed"] == false);
      CHECK(ev["args"]["why"] == raised);
      CHECK(ev["args"]["cycle"] == nlohmann::json::parse(R"([{"thread": "main", "module": "b", "held_by": "w"},
                                                             {"thread": "w", "module": "a", "held_by": "main"}])"));
    }
  CHECK(found == 1);

  const std::string dot = traced_file("cross_import.json", TraceFormat::Dot, "before", kCrossRaised);
  CHECK(dot.find("label=\"" + raised + "\"") != std::string::npos);

  for (const auto& [schedule, flag] :
       std::vector<std::pair<std::string, int>>{{kCrossRaised, 0}, {cross_swallowed(), 1}}) {
    const std::string page = traced_file("cross_import.json", TraceFormat::Explore, "before", schedule);
    const size_t at = page.find("const DATA = ");
    REQUIRE(at != std::string::npos);
    const auto data = nlohmann::json::parse(page.substr(at + 13, page.find(";\n</script>", at) - at - 13));
    int rows = 0;
    for (const auto& row : data["variants"][0]["rows"])
      if (row[0] == "D") {
        ++rows;
        CHECK(row[1] == flag);
        CHECK(row[3].get<std::string>().starts_with("_DeadlockError"));
      }
    CHECK(rows == 1);
  }
}

TEST_CASE("trace threads: chrome draws an arrow from each wait, and each _DeadlockError, to the thread it is about") {
  for (const std::string& schedule : {std::string(), kCrossRaised, cross_swallowed()}) {
    CAPTURE(schedule);
    const auto j = nlohmann::json::parse(traced_file("cross_import.json", TraceFormat::Chrome, "before", schedule));
    std::map<std::string, int> tid_of{{"main", 1}};
    for (const auto& ev : j["traceEvents"])
      if (ev["ph"] == "M" && ev["name"] == "thread_name") tid_of[ev["args"]["name"].get<std::string>()] = ev["tid"];
    // When each track's first event comes: a thread joined before it has
    // run has nothing an arrow could end on.
    std::map<int64_t, size_t> first_event;  // by tid: the index of its first slice
    for (size_t i = 0; i < j["traceEvents"].size(); ++i) {
      const auto& ev = j["traceEvents"][i];
      if (ev["ph"] == "B" && !first_event.count(ev["tid"].get<int64_t>())) first_event[ev["tid"]] = i;
    }
    std::map<int64_t, nlohmann::json> starts, finishes;
    for (const auto& ev : j["traceEvents"]) {
      if (ev["ph"] == "s") CHECK(starts.emplace(ev["id"].get<int64_t>(), ev).second);
      if (ev["ph"] == "f") CHECK(finishes.emplace(ev["id"].get<int64_t>(), ev).second);
    }
    CHECK(starts.size() == finishes.size());
    size_t waits = 0, arrows = 0;
    for (size_t i = 0; i < j["traceEvents"].size(); ++i) {
      const auto& ev = j["traceEvents"][i];
      const bool wait = ev["ph"] == "B" && ev["cat"] == "lock";
      const bool deadlock = ev.value("name", "") == "_DeadlockError";
      if (!wait && !deadlock) continue;
      ++waits;
      const std::string to = wait ? ev["args"].value("held_by", ev["args"].value("joins", ""))
                                  : ev["args"]["cycle"][0]["held_by"].get<std::string>();
      const int64_t to_tid = tid_of.at(to);
      const bool has_run = first_event.count(to_tid) && first_event[to_tid] < i;
      // The arrow leaves the waiting thread's track at the same tick and
      // ends on the track of the thread it names.
      bool arrow = false;
      for (const auto& [id, s] : starts)
        if (s["ts"] == ev["ts"] && s["tid"] == ev["tid"] && s["name"] == (wait ? "waits for" : "deadlock")) {
          REQUIRE(finishes.count(id) == 1);
          CHECK(finishes[id]["tid"] == to_tid);
          CHECK(finishes[id]["ts"] == ev["ts"]);
          CHECK(finishes[id]["bp"] == "e");
          arrow = true;
        }
      CHECK(arrow == has_run);
      arrows += arrow ? 1 : 0;
    }
    CHECK(waits >= 1);
    CHECK(starts.size() == arrows);
    if (!schedule.empty()) CHECK(arrows >= 2);
  }
}

TEST_CASE("trace threads: chrome's left-out count covers the arrows a --max-lines cut leaves out") {
  Scenario sc = parse_scenario_file(kThreadData + "cross_import.json");
  auto events = [&](uint64_t cap) {
    RunOptions options;
    options.variants = {"before"};
    options.schedule = kCrossRaised;
    TraceOptions topt;
    topt.format = TraceFormat::Chrome;
    topt.max_lines = cap;
    std::ostringstream out;
    write_trace(out, sc, options, topt);
    const auto j = nlohmann::json::parse(out.str());
    uint64_t written = 0;
    // A slice counts once, by its B (an E is never counted, written or not).
    for (const auto& ev : j["traceEvents"]) written += ev["ph"] != "M" && ev["ph"] != "E" ? 1 : 0;
    return std::pair{written, j["otherData"]["variants"]["before"]["events_left_out"].get<uint64_t>()};
  };
  const auto [all, none_left] = events(0);
  CHECK(none_left == 0);
  for (uint64_t cap = 1; cap < all; ++cap) {
    CAPTURE(cap);
    const auto [written, left] = events(cap);
    CHECK(written + left == all);
  }
}

TEST_CASE("explore threads: rows say which thread runs, waits are rows, the totals say how threads ended") {
  const std::string page = traced_file("join_in_body.json", TraceFormat::Explore, "before");
  const size_t at = page.find("const DATA = ");
  REQUIRE(at != std::string::npos);
  const size_t end = page.find(";\n</script>", at);
  const auto data = nlohmann::json::parse(page.substr(at + 13, end - at - 13));
  CHECK(data["threaded"] == true);
  const auto& v = data["variants"][0];
  CHECK(v["totals"]["thread_names"] == nlohmann::json::array({"main", "w"}));
  CHECK(v["totals"]["hang"].size() == 2);
  int switches = 0, waits = 0, woken = 0;
  for (const auto& row : v["rows"]) {
    if (row[0] == "T") ++switches;
    if (row[0] == "w") ++waits;
    if (row[0] == "W") ++woken;
    CHECK(row[0] != "F");  // no folding: a subtree's rows may interleave with another thread's
  }
  CHECK(switches >= 1);
  CHECK(waits == 2);
  CHECK(woken == 0);  // the hang: both waits stay open
  CHECK(page.find("const THREADS = !!D.threaded;") != std::string::npos);
  // A page without threads is the template without its threads parts.
  const std::string plain = impsim::test::traced(impsim::test::kNested, TraceFormat::Explore, {{"k", 2}});
  CHECK(plain.find("threads:*/") == std::string::npos);
  CHECK(plain.find("THREADS") == std::string::npos);
}

TEST_CASE("trace threads on the command line: every format and explore follow --schedule") {
  using impsim::test::impsim;
  const std::string schedule = "0.0.0.0.0.0.0.0.0.0.0.0.0.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.0";
  for (const char* format : {"chrome", "json", "dot", "importtime"}) {
    CAPTURE(format);
    auto r = impsim("trace " + kThreadData + "cross_import.json --variant before --format " + format + " --schedule " +
                    schedule);
    CHECK(r.status == 1);  // main raised _DeadlockError
  }
  const std::string page = impsim::test::scratch_dir() + "/threads.html";
  auto ok =
      impsim("explore " + kThreadData + "cross_import.json --variant before --schedule " + schedule + " -o " + page);
  CHECK(ok.status == 1);
  CHECK(impsim::test::read_file(page).find("_DeadlockError: deadlock detected by _ModuleLock('b')") !=
        std::string::npos);
  auto bad = impsim("explore " + kThreadData + "cross_import.json --schedule 5 -o " + page);
  CHECK(bad.status == 2);
  CHECK(bad.out.find("--schedule 5: choice 1 is thread 5, which cannot run there") != std::string::npos);
  auto none = impsim("explore " + impsim::test::kNested + " --schedule 0 -o " + page);
  CHECK(none.status == 2);
  CHECK(none.out.find("declares no threads") != std::string::npos);
}

// guard_sets.json, as_is: main's loader has `server` out of sys.meta_path
// while a's body runs; w reads BuiltinImporter at index 2 and waits for the
// global import lock; by the time it holds the lock `server` is back at
// index 2. w asks what it read (tests/data/threads/logs/guard_sets.json,
// forced on CPython 3.9-3.13), and every format must name that finder.
const char* kReadBeforeLock =
    "0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.1.1.1.1.1.1.1.1.1.0.0.0.0.0."
    "0.0";

TEST_CASE("trace threads: an ask names the finder the thread read, though another thread moved the list since") {
  const std::string text = traced_file("guard_sets.json", TraceFormat::Text, "as_is", kReadBeforeLock);
  const std::string note =
      "BuiltinImporter was read at i=2 before this thread held the global import lock; another thread has changed "
      "sys.meta_path since";
  // The list as it is at the ask, nothing starred: server stands at 2 again.
  CHECK(text.find("     w |     ask i=2 [wd1 wd2 server BuiltinImporter FrozenImporter PathFinder] (" + note +
                  "): BuiltinImporter.find_spec('x') -> None\n") != std::string::npos);
  // server is never asked for x in this schedule: w gets ModuleNotFoundError.
  CHECK(text.find("server.find_spec('x') -> None") == std::string::npos);
  CHECK(text.find("     w | step /threads/w/0 -> ModuleNotFoundError") != std::string::npos);

  const auto chrome =
      nlohmann::json::parse(traced_file("guard_sets.json", TraceFormat::Chrome, "as_is", kReadBeforeLock));
  int noted = 0;
  for (const auto& ev : chrome["traceEvents"]) {
    if (!ev.contains("args") || !ev["args"].contains("note")) continue;
    ++noted;
    CHECK(ev["name"] == "ask BuiltinImporter x");
    CHECK(ev["args"]["finder"] == "BuiltinImporter");
    CHECK(ev["args"]["meta_path"] == "[wd1 wd2 server BuiltinImporter FrozenImporter PathFinder]");
    CHECK(ev["args"]["note"] == note);
  }
  CHECK(noted == 1);

  const std::string dot = traced_file("guard_sets.json", TraceFormat::Dot, "as_is", kReadBeforeLock);
  CHECK(dot.find("BuiltinImporter.find_spec('x')\\ni=2 of 6, _find_spec nesting 1\\n" + note) != std::string::npos);
  CHECK(dot.find("server.find_spec('x')\\ni=2") == std::string::npos);

  const std::string page = traced_file("guard_sets.json", TraceFormat::Explore, "as_is", kReadBeforeLock);
  const size_t at = page.find("const DATA = ");
  REQUIRE(at != std::string::npos);
  const size_t end = page.find(";\n</script>", at);
  const auto data = nlohmann::json::parse(page.substr(at + 13, end - at - 13));
  int noted_rows = 0;
  for (const auto& row : data["variants"][0]["rows"]) {
    if (row[0] != "a" || row.size() != 7) continue;  // with a note: name, finder, index, length, note, state
    ++noted_rows;
    CHECK(row[2] == "BuiltinImporter");
    CHECK(row[3] == 2);
    CHECK(row[5] == note);
  }
  CHECK(noted_rows == 1);
}

TEST_CASE("trace threads: a global-lock wait is labelled with its own thread's site, not the holder's") {
  // main holds the global import lock around Builtin.find_spec('app'); w,
  // in _find_and_load of app.b, waits for it in _get_module_lock. The site
  // was one field for all threads, and main had set it last: w's wait read
  // "to call a finder's find_spec".
  const auto r = impsim::test::impsim(
      "trace " + impsim::test::kSource + "/tests/data/threads/proxy_resolving_shared.json --variant after --schedule "
      "1.0.0.0.0.1.0.1.0.0.1.1.0.1.0.0.1.1.0.1.0.0.1.0");
  CAPTURE(r.out);
  CHECK(r.out.find("     w |   import app.b: not in sys.modules; _find_and_load asks sys.meta_path\n"
                   "     w |     waits for the global import lock (in _get_module_lock), held by main\n") !=
        std::string::npos);
  CHECK(r.out.find("w |     waits for the global import lock (to call a finder's find_spec)") == std::string::npos);
}
