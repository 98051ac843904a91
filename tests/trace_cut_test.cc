// Past its cut a trace only counts what it would have written, and a run
// plain but for its trace counts its frequent events itself (TraceTally,
// run_mode.h's TalliedRun): the counts a cut trace gives must be those of
// the same trace written in full, in every format, and a trace stopped by
// a limit must stop where `impsim run` does, with its message. No timing:
// bench/trace_limits measures how much later than run a trace stops.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <regex>
#include <sstream>

#include "impsim/base/text.h"
#include "impsim/trace/trace_formats.h"
#include "test_util.h"
#include "trace_test_util.h"

using namespace impsim;

// Named, not anonymous: the sanitizer build compiles the tests in batches
// (a unity build), where another file's helpers of the same name meet these.
namespace trace_cut_test {

const std::string kNested = std::string(IMPSIM_SOURCE_DIR) + "/scenarios/nested_guards.json";

std::string trace(TraceFormat format, int64_t k, TraceOptions o) {
  return test::traced(kNested, format, {{"k", k}}, o);
}

// The explorer's data, as its page holds it.
nlohmann::json page_data(const std::string& page) {
  const std::string start = "const DATA = ";
  size_t a = page.find(start);
  REQUIRE(a != std::string::npos);
  a += start.size();
  size_t b = page.find(";\n</script>", a);
  REQUIRE(b != std::string::npos);
  return nlohmann::json::parse(page.substr(a, b - a));
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// A text log's line, by the kind the cut's summary counts it as (""
// for a close written on its own line and the start line).
std::string kind_of(std::string line) {
  line.erase(0, line.find_first_not_of(' '));
  auto starts = [&](const char* p) { return line.rfind(p, 0) == 0; };
  if (starts("step ") && line.find(": ") != std::string::npos) return "step";
  if (starts("import ") && line.find(": not in sys.modules") != std::string::npos) return "import";
  if ((starts("body of ") || starts("a function of ")) && line.find(" runs") != std::string::npos) return "body";
  if (starts("ask i=")) return "ask";
  if (starts("lookup '") && line.find("): ") != std::string::npos) return "lookup";
  if (starts("enable: ") || starts("disable: ")) return "toggle";
  if (starts("guard")) return "guard";
  return "";
}

// Each variant's log lines (between its header and its totals) and the
// lines that follow them.
struct TextVariant {
  std::vector<std::string> log, after;
};
std::map<std::string, TextVariant> text_variants(const std::string& text) {
  std::map<std::string, TextVariant> out;
  std::string name;
  bool in_log = false;
  for (const std::string& line : lines_of(text)) {
    if (line.rfind("== variant ", 0) == 0) {
      name = line.substr(11, line.find(' ', 11) - 11);
      in_log = true;
    } else if (line.rfind("totals: ", 0) == 0 || line.rfind("... cut at", 0) == 0) {
      in_log = false;
      out[name].after.push_back(line);
    } else if (!name.empty()) {
      (in_log ? out[name].log : out[name].after).push_back(line);
    }
  }
  return out;
}


TEST_CASE("past --max-lines a text trace counts, by kind, the lines the full trace writes") {
  TraceOptions full_o;
  full_o.max_lines = 0;
  const auto full = text_variants(trace(TraceFormat::Text, 5, full_o));
  REQUIRE(full.size() == 2);
  for (uint64_t max : {uint64_t{1}, uint64_t{2}, uint64_t{7}, uint64_t{50}, uint64_t{333}}) {
    CAPTURE(max);
    TraceOptions o;
    o.max_lines = max;
    const auto cut = text_variants(trace(TraceFormat::Text, 5, o));
    for (const auto& [name, f] : full) {
      CAPTURE(name);
      const TextVariant& c = cut.at(name);
      if (f.log.size() <= max) {  // within the cut: the full trace
        CHECK(c.log == f.log);
        CHECK(c.after == f.after);
        continue;
      }
      CHECK(c.log.size() == max);
      std::map<std::string, uint64_t> left;
      for (size_t i = max; i < f.log.size(); ++i) ++left[kind_of(f.log[i])];
      std::string kinds;
      for (const char* k : {"step", "import", "body", "ask", "lookup", "toggle", "guard", "wait"})
        if (left[k] != 0) kinds += (kinds.empty() ? "" : ", ") + grouped(left[k]) + " " + k + (left[k] == 1 ? "" : "s");
      REQUIRE(!c.after.empty());
      CHECK(c.after[0] == "... cut at --max-lines " + std::to_string(max) + ": " + grouped(f.log.size() - max) +
                              " more lines left out (" + kinds + "); the totals below are the whole run's");
      // The totals (the clock's ticks included) and the end are the run's.
      CHECK(std::vector<std::string>(c.after.begin() + 1, c.after.end()) == f.after);
    }
  }
}

TEST_CASE("past --max-lines a chrome trace counts the events the full trace writes, and keeps the clock") {
  auto counted = [](const nlohmann::json& j) {
    std::map<int, uint64_t> n;  // by pid: B, i and X events (an E goes with its B)
    for (const auto& e : j["traceEvents"])
      if (e["ph"] == "B" || e["ph"] == "i" || e["ph"] == "X") ++n[e["pid"].get<int>()];
    return n;
  };
  TraceOptions full_o;
  full_o.max_lines = 0;
  const auto full = nlohmann::json::parse(trace(TraceFormat::Chrome, 5, full_o));
  const auto all = counted(full);
  for (uint64_t max : {uint64_t{1}, uint64_t{9}, uint64_t{300}}) {
    CAPTURE(max);
    TraceOptions o;
    o.max_lines = max;
    const auto cut = nlohmann::json::parse(trace(TraceFormat::Chrome, 5, o));
    const auto shown = counted(cut);
    int pid = 0;
    for (const char* v : {"before", "after"}) {
      ++pid;
      CAPTURE(v);
      const auto& c = cut["otherData"]["variants"][v];
      const auto& f = full["otherData"]["variants"][v];
      CHECK(c["events_left_out"].get<uint64_t>() == all.at(pid) - shown.at(pid));
      CHECK(c["ticks"] == f["ticks"]);
      CHECK(c["lookups"] == f["lookups"]);
    }
  }
}

TEST_CASE("past --max-bytes the explorer counts every event, and says how many it did not show") {
  TraceOptions full_o;
  full_o.max_bytes = 0;
  full_o.fold = false;
  const auto full = page_data(trace(TraceFormat::Explore, 5, full_o));
  TraceOptions o;
  o.max_bytes = 6000;
  o.fold = false;  // a row per event shown
  const auto cut = page_data(trace(TraceFormat::Explore, 5, o));
  for (size_t v = 0; v < 2; ++v) {
    CAPTURE(v);
    const auto& c = cut["variants"][v];
    const uint64_t events = full["variants"][v]["events"];
    CHECK(c["events"].get<uint64_t>() == events);
    const uint64_t rows = c["rows"].size();
    const std::string said = c["cut"];
    CHECK(said.find(" after " + grouped(rows) + " rows: " + grouped(events - rows) + " more events not shown") !=
          std::string::npos);
    CHECK(c["totals"] == full["variants"][v]["totals"]);
  }
}

TEST_CASE("dot: a tree past --max-lines events says how many lookups and suppressed asks came after") {
  // Drawn in full (no compression): every lookup and suppressed ask heard
  // before the cut is a node of its own.
  auto nodes = [](const std::string& cluster, const std::string& what) {
    size_t n = 0;
    for (size_t at = 0; (at = cluster.find(what, at)) != std::string::npos; ++at) ++n;
    return n;
  };
  TraceOptions o;
  o.max_nodes = 1'000'000;
  o.max_lines = 0;
  const std::string whole = trace(TraceFormat::Dot, 4, o);
  CHECK(whole.find("cut at --max-lines") == std::string::npos);
  CHECK(whole.find("(cut:") == std::string::npos);
  for (uint64_t max : {uint64_t{40}, uint64_t{400}}) {
    CAPTURE(max);
    o.max_lines = max;
    const std::string dot = trace(TraceFormat::Dot, 4, o);
    for (const char* v : {"before", "after"}) {
      CAPTURE(v);
      const size_t from = dot.find(std::string("subgraph \"cluster_") + v + "\"");
      REQUIRE(from != std::string::npos);
      const std::string cluster = dot.substr(from, dot.find("\n  }\n", from) - from);
      const std::string all = whole.substr(whole.find(std::string("subgraph \"cluster_") + v + "\""));
      // The variant's box: the run's totals, cut or not.
      std::smatch m;
      REQUIRE(std::regex_search(all, m, std::regex(R"(\\n([0-9,]+) lookups?, deepest \d+, ([0-9,]+) suppressed)")));
      const uint64_t lookups = std::stoull(std::regex_replace(m[1].str(), std::regex(","), ""));
      const uint64_t suppressed = std::stoull(std::regex_replace(m[2].str(), std::regex(","), ""));
      const uint64_t drawn = nodes(cluster, "\\ndepth "), drawn_suppressed = nodes(cluster, "suppressed ask (P copy");
      if (dot.find(std::string(v) + ": cut at") == std::string::npos) {  // fewer events than the cut
        CHECK(drawn == lookups);
        CHECK(drawn_suppressed == suppressed);
        continue;
      }
      const std::string said = std::string(v) + ": cut at --max-lines " + std::to_string(max) +
                               ": the tree is drawn from the run's first " + grouped(max) + " events; " +
                               grouped(lookups - drawn) + " more lookup" + (lookups - drawn == 1 ? "" : "s") + " and " +
                               grouped(suppressed - drawn_suppressed) + " more suppressed ask" +
                               (suppressed - drawn_suppressed == 1 ? "" : "s") + " came after them";
      CHECK(dot.find(said) != std::string::npos);
    }
    CHECK(dot.find("(cut: what came after is not drawn)") != std::string::npos);
  }
}

TEST_CASE("trace and explore stopped by a limit past their cut: exit 3 and run's message") {
  const std::string args = kNested + " --set k=12 --variant before --max-events 100000";
  const std::string said =
      "before: stopped: limit max-events reached at /program/0/body/1: 100000 simulated events (finder asks + "
      "toggles); raise it with --max-events";
  test::impsim_says("run " + args, 3, said);
  const std::string limit = said.substr(said.find("limit "));
  // The text log and markdown say it at the end, the other formats on stderr.
  for (const char* format : {"text", "markdown"}) {
    CAPTURE(format);
    test::impsim_says("trace " + args + " --format " + format, 3, "\nstopped: " + limit);
  }
  for (const char* format : {"json", "dot", "importtime"}) {
    CAPTURE(format);
    test::impsim_says("trace " + args + " --format " + format, 3, "nested_guards.json: " + said);
  }
  const std::string page = test::impsim("explore " + args).out;
  CHECK(page.find("\"limit\":\"max-events: 100000 simulated events (finder asks + toggles); raise it with "
                  "--max-events\"") != std::string::npos);
  CHECK(test::impsim("explore " + args + " > /dev/null").status == 3);
}

}  // namespace trace_cut_test
