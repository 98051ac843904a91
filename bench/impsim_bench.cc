// The engine alone (no process start, no JSON parsing in the timed part) on
// the scenarios docs/performance.md records: lookups per second, ns per
// lookup, and peak memory. Timings are the median of several runs; this is a
// benchmark, not a test, and asserts nothing about speed.
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "impsim/engine.h"
#include "impsim/loader.h"
#include "impsim/report.h"

using namespace impsim;

namespace {

long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

struct Result {
  double seconds;  // median engine time of one run
  Count lookups;
  Count events;
};

Result time_engine(const Model& model, Variant v, EngineKind kind, int reps) {
  std::vector<double> times;
  Result r{};
  for (int i = 0; i < reps; ++i) {
    Engine e(model, v, EngineLimits{.max_events = kNoEventLimit, .max_work = kNoEventLimit}, kind);
    auto t0 = std::chrono::steady_clock::now();
    e.run();
    auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double>(t1 - t0).count());
    r.lookups = e.counters().lookups;
    r.events = e.events();
  }
  std::sort(times.begin(), times.end());
  r.seconds = times[times.size() / 2];
  return r;
}

void row(const std::string& name, const Result& r) {
  double lookups = r.lookups.to_double();
  fmt::print("{:<44} {:>12.6f} {:>26} {:>14.3g} {:>10.1f}\n", name, r.seconds * 1000, grouped(r.lookups),
             r.seconds > 0 ? lookups / r.seconds : 0.0, lookups > 0 ? r.seconds * 1e9 / lookups : 0.0);
}

Model model_of(const Scenario& sc, Params p) { return compile_model(sc, p); }

std::string many_modules(int n) {
  std::string preloaded;
  for (int i = 0; i < n; ++i) preloaded += fmt::format("{}\"mod{}\"", i ? ", " : "", i);
  return fmt::format(R"({{"impsim": 1, "params": {{"k": 5}},
    "sys_modules": {{"preloaded": [{}], "torch": ["torch"]}},
    "tree": {{"pkg": {{"package": true}}}},
    "program": [{{"nest": "$k", "guard": {{"enable": true, "scope": ["pkg", "o{{i}}"]}}, "body": [
      {{"import": "pkg"}}, {{"find_spec": "pkg.missing", "label": "probe"}}]}}]}})",
                     preloaded);
}

}  // namespace

int main(int argc, char** argv) {
  std::string root = argc > 1 ? argv[1] : ".";
  fmt::print("{:<44} {:>12} {:>26} {:>14} {:>10}\n", "case", "engine ms", "lookups", "lookups/s", "ns/lookup");
  Scenario incident = load_scenario_file(root + "/scenarios/seed_incident.json");
  Scenario nested = load_scenario_file(root + "/scenarios/nested_guards.json");
  Scenario chain = load_scenario_file(root + "/scenarios/import_chain.json");
  {
    Model m = model_of(incident, {});
    row("seed_incident, before (step)", time_engine(m, Variant::Before, EngineKind::Step, 21));
    row("seed_incident, after (step)", time_engine(m, Variant::After, EngineKind::Step, 21));
  }
  long rss_before = peak_rss_kb();
  for (int k : {8, 9, 10}) {
    Model m = model_of(nested, {{"k", k}});
    row(fmt::format("nested_guards k={}, before (step)", k), time_engine(m, Variant::Before, EngineKind::Step, k == 10 ? 5 : 9));
    fmt::print("{:<44} peak RSS {} KB\n", "", peak_rss_kb());
  }
  long rss_after = peak_rss_kb();
  {
    Model m = model_of(chain, {{"k", 4}});
    row("import_chain k=4, before (step)", time_engine(m, Variant::Before, EngineKind::Step, 21));
    row("import_chain k=4, after (step)", time_engine(m, Variant::After, EngineKind::Step, 21));
  }
  {
    long rss0 = peak_rss_kb();
    Scenario big = load_scenario_text(many_modules(100000), "100k_modules.json");
    Model m = model_of(big, {});
    row("100,000 named modules, k=5, before (step)", time_engine(m, Variant::Before, EngineKind::Step, 5));
    fmt::print("{:<44} peak RSS {} KB (was {} KB before loading it)\n", "", peak_rss_kb(), rss0);
  }
  for (int k : {12, 16, 20}) {
    Model m = model_of(nested, {{"k", k}});
    row(fmt::format("nested_guards k={}, before (fast)", k), time_engine(m, Variant::Before, EngineKind::Fast, 21));
  }
  fmt::print("\npeak RSS across nested_guards k=8..10 (0.1M to 9.9M lookups): {} KB -> {} KB\n", rss_before, rss_after);
  return 0;
}
