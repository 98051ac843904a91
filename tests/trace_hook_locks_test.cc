// A hook's own lock in the trace formats and the explorer: its acquire and
// release where the object takes and gives it back, a wait for it as a wait
// of its own kind, and the hang of a run without threads (virtualenv's two
// objects of one class, the main thread waiting for the Lock it holds)
// drawn as a threaded run's hang is.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "impsim/reader/read_scenario.h"
#include "impsim/trace/trace_formats.h"
#include "trace_test_util.h"

using namespace impsim;

namespace {

const std::string kVenv = impsim::test::kSource + "/scenarios/zoo/virtualenv_same_class.json";
const std::string kHookLock = impsim::test::kSource + "/tests/data/threads/hook_lock.json";
const char* kVenvHang = "thread main waits for the threading.Lock of class virtualenv, held by thread main";

std::string traced_path(const std::string& file, TraceFormat format, const std::string& schedule = "") {
  RunOptions options;
  options.schedule = schedule;
  TraceOptions topt;
  topt.format = format;
  std::ostringstream out;
  write_trace(out, parse_scenario_file(file), options, topt);
  return out.str();
}

// The page's data, parsed.
nlohmann::json page_data(const std::string& page) {
  const size_t at = page.find("const DATA = ");
  REQUIRE(at != std::string::npos);
  const size_t end = page.find(";\n</script>", at);
  return nlohmann::json::parse(page.substr(at + 13, end - at - 13));
}

}  // namespace

TEST_CASE("trace hook locks: chrome, a run without threads that hangs on a hook's Lock ends as a threaded hang does") {
  const auto j = nlohmann::json::parse(traced_path(kVenv, TraceFormat::Chrome));
  std::vector<std::string> acquires, slices, hangs;
  int open = 0;
  for (const auto& ev : j["traceEvents"]) {
    CHECK(ev["tid"] == 1);
    if (ev["ph"] == "B") ++open;
    if (ev["ph"] == "E") --open;
    if (ev.value("cat", "") != "lock") continue;
    if (ev["name"] == "acquire" || ev["name"] == "release")
      acquires.push_back(ev["name"].get<std::string>() + " " + ev["args"]["finder"].get<std::string>());
    else if (ev["ph"] == "B")
      slices.push_back(ev["args"]["lock"].get<std::string>() + " " + ev["args"]["held_by"].get<std::string>() + " " +
                       ev["args"]["hook_lock"].get<std::string>());
    else if (ev["name"] == "hang")
      hangs.push_back(ev["args"]["why"]);
  }
  CHECK(open == 0);  // every slice the hang left open ends
  // venv#1 takes the class's Lock, its re-entry asks venv, which takes it again.
  CHECK(acquires == std::vector<std::string>{"acquire venv#1", "acquire venv"});
  CHECK(slices == std::vector<std::string>{"hook main the threading.Lock of class virtualenv"});
  CHECK(hangs == std::vector<std::string>{
                     "main waits for the threading.Lock of class virtualenv, held by main: the process never ends"});
  const auto& summary = j["otherData"]["variants"]["as_is"];
  CHECK(summary["threads"] == nlohmann::json::array({"main: waiting"}));
  CHECK(summary["hang"] == nlohmann::json::array({kVenvHang}));
}

TEST_CASE("trace hook locks: a threaded wait for a hook lock is drawn as one, held by its owner") {
  // The schedule on which w puts f2 in front before main imports: main's
  // re-entry asks f1, which waits for the Lock main holds.
  const auto j = nlohmann::json::parse(traced_path(kHookLock, TraceFormat::Chrome, "1.1"));
  std::vector<std::string> waits;
  for (const auto& ev : j["traceEvents"])
    if (ev.value("cat", "") == "lock" && ev["ph"] == "B")
      waits.push_back(std::to_string(ev["tid"].get<int>()) + " " + ev["args"]["why"].get<std::string>());
  CHECK(waits == std::vector<std::string>{"1 waits for the threading.Lock of class locked, held by main"});
  const std::string dot = traced_path(kHookLock, TraceFormat::Dot, "1.1");
  CHECK(dot.find("hang: waits for the threading.Lock of class locked, held by main, forever") != std::string::npos);
  const std::string text = traced_path(kHookLock, TraceFormat::Text, "1.1");
  CHECK(text.find("main |         waits for the threading.Lock of class locked, held by main\n") != std::string::npos);
}

TEST_CASE("trace hook locks: dot lists the acquires in the asks and hangs the wait below venv's") {
  const std::string dot = traced_path(kVenv, TraceFormat::Dot);
  CHECK(dot.find("\\nvenv#1 acquires the threading.Lock of class virtualenv ('distutils.dist')") != std::string::npos);
  CHECK(dot.find("\\nvenv acquires the threading.Lock of class virtualenv ('distutils.dist')") != std::string::npos);
  CHECK(dot.find("label=\"hang: waits for the threading.Lock of class virtualenv, held by main, forever\"") !=
        std::string::npos);
  CHECK(dot.find(std::string("\\nthreads: main: waiting\\nhang: ") + kVenvHang) != std::string::npos);
  // The text trace ends as a threaded run's does: how main ended, then the hang.
  const std::string text = traced_path(kVenv, TraceFormat::Text);
  CHECK(text.find("  waits for the threading.Lock") == std::string::npos);
  CHECK(text.find(std::string("threads: main: waiting\nhang: ") + kVenvHang + "\n") != std::string::npos);
  CHECK(text.find("hangs: ") == std::string::npos);
}

TEST_CASE("explore hook locks: k rows, the wait left open on main's stack, and the page's thread parts") {
  const std::string page = traced_path(kVenv, TraceFormat::Explore);
  const auto data = page_data(page);
  CHECK(data["threaded"] == true);
  const auto& v = data["variants"][0];
  CHECK(v["totals"]["thread_names"] == nlohmann::json::array({"main"}));
  CHECK(v["totals"]["threads"] == nlohmann::json::array({"main: waiting"}));
  CHECK(v["totals"]["hang"] == nlohmann::json::array({kVenvHang}));
  std::vector<std::string> locks;
  for (const auto& row : v["rows"]) {
    if (row[0] == "k")
      locks.push_back(row[1].get<std::string>() + (row[2] == 1 ? " acquires " : " releases ") +
                      row[4].get<std::string>());
    CHECK(row[0] != "T");  // one thread
  }
  CHECK(locks == std::vector<std::string>{"venv#1 acquires the threading.Lock of class virtualenv",
                                          "venv acquires the threading.Lock of class virtualenv"});
  const auto& last = v["rows"][v["rows"].size() - 1];
  CHECK(last[0] == "w");
  CHECK(last[1] == "hook");
  CHECK(last[3] == 0);
  CHECK(last[5] == "the threading.Lock of class virtualenv");
  CHECK(page.find("/*locks:*/") != std::string::npos);
  CHECK(page.find("const THREADS = !!D.threaded;") != std::string::npos);
  // Pages without hook locks leave the locks parts out: threaded, and not.
  const std::string threaded =
      traced_path(impsim::test::kSource + "/tests/data/threads/join_in_body.json", TraceFormat::Explore);
  CHECK(threaded.find("const THREADS = !!D.threaded;") != std::string::npos);
  CHECK(threaded.find("locks:*/") == std::string::npos);
  CHECK(threaded.find("\"hook\"") == std::string::npos);
  const std::string plain = impsim::test::traced(impsim::test::kNested, TraceFormat::Explore, {{"k", 2}});
  CHECK(plain.find("locks:*/") == std::string::npos);
}

// wrapt 1.14.1's lock: taken by the install step and by the wrapped
// loader once the wrapped exec_module returns, never in find_spec. Each
// format says where; a lock taken in find_spec keeps its words (above).
TEST_CASE("trace hook locks: a lock taken at install and after exec_module says where, in every format") {
  const std::string wrapt = impsim::test::kSource + "/scenarios/zoo/wrapt_notify_lock.json";
  // The hang class's schedule: main holds the RLock after target's body
  // while w, inside dep's body, registers.
  const std::string hang = "0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1";
  const std::string text = traced_path(wrapt, TraceFormat::Text, hang);
  CHECK(text.find("main |   wr acquires the threading.RLock of class wrapt (install)\n") != std::string::npos);
  CHECK(text.find("main |     wr acquires the threading.RLock of class wrapt (after exec_module('target'))\n") !=
        std::string::npos);
  CHECK(text.find("w |         wr acquires the threading.RLock of class wrapt (install)\n") != std::string::npos);
  CHECK(text.find("hang: thread w waits for the threading.RLock of class wrapt, held by thread main") !=
        std::string::npos);
  CHECK(text.find("acquires the threading.RLock of class wrapt ('") == std::string::npos);  // never in find_spec

  const auto j = nlohmann::json::parse(traced_path(wrapt, TraceFormat::Chrome, hang));
  std::vector<std::string> sites;
  for (const auto& ev : j["traceEvents"])
    if (ev.value("cat", "") == "lock" && ev["name"] == "acquire" && ev["pid"] == 1)  // as_is
      sites.push_back(ev["args"]["site"].get<std::string>() + " " + ev["args"]["name"].get<std::string>() + " " +
                      ev["args"]["why"].get<std::string>());
  CHECK(sites == std::vector<std::string>{
                     "install  wr acquires the threading.RLock of class wrapt (install)",
                     "after_exec target wr acquires the threading.RLock of class wrapt (after exec_module('target'))",
                     "install  wr acquires the threading.RLock of class wrapt (install)"});

  const auto d = page_data(traced_path(wrapt, TraceFormat::Explore, hang));
  std::vector<std::string> rows;
  for (const auto& r : d["variants"][0]["rows"])
    if (r[0] == "k" && r[2] == 1)
      rows.push_back(r[5].get<std::string>() + " " +
                     (r[3].get<int>() < 0 ? std::string("-") : d["names"][r[3].get<int>()].get<std::string>()));
  CHECK(rows == std::vector<std::string>{"install -", "after_exec target", "install -"});
}
