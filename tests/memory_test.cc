// Memory does not grow with simulated events: records nothing refers to are
// reused (sim/engine/collect.cc), and reusing them changes no count and no outcome.
// Bounds on peak RSS (getrusage) are generous: they catch growth with the
// run (about 190 bytes per found probe before), not small changes.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "impsim/engine/engine.h"
#include "impsim/base/resources.h"
#include "impsim/report/report.h"
#include "test_util.h"

using namespace impsim;

namespace {

std::string source(const std::string& relative) { return std::string(IMPSIM_SOURCE_DIR) + "/" + relative; }

// Every count, label and outcome of one engine run, as text.
std::string fingerprint(const Engine& e) {
  std::string s = fmt::format("events {} ", count_text(e.events()));
  auto add = [&](const Counters& c) {
    for (const CounterInfo& info : kCounters) s += count_text(c.*info.field) + " ";
    s += "; ";
  };
  add(e.counters());
  for (auto& l : e.labels()) {
    add(l.counters);
    for (auto& r : l.results) s += fmt::format("{}x{},", r.result, r.times);
  }
  Outcome o = outcome_of(e);
  for (auto& m : o.modules) s += m + (o.marks.count(m) ? "=" + o.marks.at(m) : std::string()) + " ";
  s += fmt::format("copies {} ", o.proxy_copies);
  if (o.error) s += o.error->type + ": " + o.error->message;
  if (e.limit()) s += " limit " + e.limit()->limit;
  return s;
}

std::vector<std::string> scenario_files() {
  std::vector<std::string> files = test::shipped_scenarios();
  for (const char* dir : {"tests/data/crosscheck", "tests/fuzz/regressions", "bench/scenarios"})
    for (const std::string& f : test::json_files(dir, true)) files.push_back(f);
  std::sort(files.begin(), files.end());
  return files;
}

// Runs `sc` (at its defaults and at every sweep value) collecting at every
// chance, step and fast, against the step engine; returns the runs compared.
size_t compare_eager_collection(const Scenario& sc) {
  size_t compared = 0;
  {
    std::vector<Params> params{{}};
    if (sc.sweep)
      for (int64_t v : sc.sweep->values) params.push_back({{sc.sweep->param, v}});
    for (const Params& p : params) {
      std::optional<Model> model;
      try {
        model.emplace(compile_model(sc, p));
      } catch (...) {
        continue;
      }
      for (Variant v : {Variant::Before, Variant::After}) {
        Engine reference(*model, v);  // step engine, default collection
        reference.run();
        for (EngineKind kind : {EngineKind::Step, EngineKind::Fast}) {
          Engine eager(*model, v, {}, kind);
          eager.set_collect_interval(0);
          eager.run();
          CHECK(fingerprint(eager) == fingerprint(reference));
          ++compared;
        }
      }
    }
  }
  return compared;
}

}  // namespace

TEST_CASE("memory: reusing every record at the first chance changes no count, label or outcome, step and fast") {
  size_t compared = 0;
  for (const std::string& file : scenario_files()) {
    CAPTURE(file);
    try {
      Scenario sc = parse_scenario_file(file);
      compared += compare_eager_collection(sc);
    } catch (const InputError&) {
      // the fuzz regressions include invalid files
    }
  }
  CHECK(compared >= 40);
}

TEST_CASE("memory: a module whose function runs after it left sys.modules keeps its record (a frame is a root)") {
  // `call torch` runs in the proxy module torch; the disable in it drops
  // torch from sys.modules, and blk (marked disabled) is made next. Were
  // torch's record reused for blk, the last ask would see a frame marked
  // disabled and answer None instead of a proxy spec.
  Scenario sc = parse_scenario(R"({"impsim": 1,
    "tree": {"paddle": {"package": true}, "paddle.nn": {}, "blk": {}},
    "program": [
      {"enable": {}},
      {"import": "torch.nn"},
      {"call": "torch", "body": [
        {"disable": {}}, {"enable": {}}, {"block": ["blk"]}, {"import": "blk"},
        {"import": "torch.nn", "label": "again", "optional": true}]}]})",
                                   "frame.json");
  CHECK(compare_eager_collection(sc) == 4);
}

TEST_CASE("memory: records are reused, so a million found probes keep a few thousand alive, step and fast") {
  Scenario sc = parse_scenario_file(source("bench/scenarios/found_lookups.json"));
  // Under AddressSanitizer a fifth of them (25 s of the sanitizer pass
  // otherwise; tests/CMakeLists.txt lists it): without reuse 200,000
  // probes still take about a million slots, ten times the bound below.
#if defined(__SANITIZE_ADDRESS__)
  const int64_t probes = 200000;
#else
  const int64_t probes = 1000000;
#endif
  for (EngineKind kind : {EngineKind::Step, EngineKind::Fast}) {
    for (Variant v : {Variant::Before, Variant::After}) {
      Model model = compile_model(sc, {{"k", 4}, {"n", probes}});
      long rss0 = peak_rss_kb();
      Engine e(model, v, {}, kind);
      e.run();
      CAPTURE(v == Variant::Before);
      CAPTURE(kind == EngineKind::Fast);
      REQUIRE_FALSE(e.limit());
      REQUIRE_FALSE(e.error());
      CHECK(e.counters().lookups >= static_cast<uint64_t>(probes));
      // Before reuse: over 5 million slots (a spec and a loader per probe,
      // one more loader per wrapping, a module per proxy import).
      CHECK(e.record_slots() < 100000);
      // Before reuse the peak grew by about 95 MB per variant here. Not under
      // AddressSanitizer: it keeps freed memory in quarantine (256 MB by
      // default), and the fast engine frees its memo at every new epoch.
#if !defined(__SANITIZE_ADDRESS__)
      CHECK(peak_rss_kb() - rss0 < 24 * 1024);
#else
      (void)rss0;
#endif
    }
  }
}
