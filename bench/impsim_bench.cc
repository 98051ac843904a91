// The engine alone (no process start, no JSON parsing in the timed part) on
// the scenarios docs/performance.md records: lookups per second, ns per
// lookup, and peak memory. Timings are the median of several runs; this is a
// benchmark, not a test, and asserts nothing about speed.
// `impsim_bench ROOT memory`: peak RSS against simulated events instead.
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "impsim/base/engine_stack.h"
#include "impsim/base/fiber.h"
#include "impsim/base/resources.h"
#include "impsim/engine/engine.h"
#include "impsim/reader/read_scenario.h"
#include "impsim/report/report.h"
#include "impsim/run/schedules.h"
#include "replay_floor.h"

using namespace impsim;

namespace {

struct Result {
  double seconds;      // median engine time of one run (wall)
  double cpu_seconds;  // median CPU time of one run (the process: the switch to the engine's stack included)
  Count lookups;
  Count events;
};

// ROOT's scenarios are whatever that folder holds: each run has impsim's
// own default limits (EngineLimits{}, ModelLimits{} and the reader's
// InputLimits, as `impsim run` without flags), which every case measured
// here stays well within. One that reaches a limit stops the bench (exit 3).
struct LimitStop {
  std::string what;
};

void stop_at_limit(const Engine& e, const std::string& what) {
  if (e.limit())
    throw LimitStop{fmt::format("{}: limit {} reached: {} (the bench runs with impsim's default limits)", what,
                                e.limit()->limit, e.limit()->detail)};
}

// The middle value of a bench's repeated timings (the upper one of an even count).
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

Result time_engine(const Model& model, Variant v, EngineKind kind, int reps) {
  std::vector<double> times, cpu;
  Result r{};
  for (int i = 0; i < reps; ++i) {
    Engine e(model, v, EngineLimits{}, kind);
    auto t0 = std::chrono::steady_clock::now();
    double c0 = process_cpu_seconds();
    e.run();
    double c1 = process_cpu_seconds();
    auto t1 = std::chrono::steady_clock::now();
    stop_at_limit(e, fmt::format("{} ({})", variant_name(v), kind == EngineKind::Fast ? "fast" : "step"));
    times.push_back(std::chrono::duration<double>(t1 - t0).count());
    cpu.push_back(c1 - c0);
    r.lookups = e.counters().lookups;
    r.events = e.events();
  }
  r.seconds = median(times);
  r.cpu_seconds = median(cpu);
  return r;
}

void row(const std::string& name, const Result& r) {
  double lookups = r.lookups.to_double();
  fmt::print("{:<44} {:>12.6f} {:>10.6f} {:>26} {:>14.3g} {:>10.1f}\n", name, r.seconds * 1000, r.cpu_seconds * 1000,
             grouped(r.lookups), r.seconds > 0 ? lookups / r.seconds : 0.0,
             lookups > 0 ? r.seconds * 1e9 / lookups : 0.0);
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

// Peak RSS against simulated events on bench/scenarios/found_lookups.json:
// every probe finds a fresh spec and every proxy import makes a module, the
// records that used to pile up. Sizes go up, so each row's peak is that of
// the largest run so far.
int memory_mode(const std::string& root) {
  Scenario sc = parse_scenario_file(root + "/bench/scenarios/found_lookups.json");
  fmt::print("{:<34} {:>14} {:>12} {:>14} {:>14}\n", "found_lookups, k=4, before+after", "events", "engine ms",
             "record slots", "peak RSS KB");
  for (EngineKind kind : {EngineKind::Step, EngineKind::Fast}) {
    for (int n : {1000, 10000, 100000, 1000000}) {
      Model m = model_of(sc, {{"k", 4}, {"n", n}});
      Count events = 0;
      size_t slots = 0;
      auto t0 = std::chrono::steady_clock::now();
      for (Variant v : {Variant::Before, Variant::After}) {
        Engine e(m, v, EngineLimits{}, kind);
        e.run();
        stop_at_limit(e, fmt::format("found_lookups n={} {}", n, variant_name(v)));
        events += e.events();
        slots = std::max(slots, e.record_slots());
      }
      auto t1 = std::chrono::steady_clock::now();
      fmt::print("{:<34} {:>14} {:>12.1f} {:>14} {:>14}\n",
                 fmt::format("n={} ({})", n, kind == EngineKind::Fast ? "fast" : "step"), grouped(events),
                 std::chrono::duration<double>(t1 - t0).count() * 1000, grouped(slots), peak_rss_kb());
    }
  }
  return 0;
}

}  // namespace

// A tree of `n` modules under one package, half of them with a body: the
// size of a large real project, for timing the reader.
std::string big_tree(int n) {
  std::string tree = R"("pkg": {"package": true})";
  for (int i = 0; i < n; ++i)
    tree += fmt::format(R"(, "pkg.m{}": {})", i, i % 2 ? R"({"body": [{"import": "pkg"}]})" : "{}");
  return fmt::format(R"({{"impsim": 1, "tree": {{{}}}, "program": [{{"import": "pkg.m1"}}]}})", tree);
}

// Hook files of n entries that used to validate in quadratic time: a serve
// table whose keys the claims list (each key was checked by a scan of the
// claims), and n finder objects each named by a call action and an install
// step (each found by a scan of the objects). Doubling n should double the
// time (docs/limits.md).
std::string hook_table(int n) {
  std::string names, table;
  for (int i = 0; i < n; ++i) {
    names += fmt::format("{}\"m{}\"", i ? ", " : "", i);
    table += fmt::format("{}\"m{}\": \"t\"", i ? ", " : "", i);
  }
  return fmt::format(R"({{"impsim": 1, "tree": {{}}, "hooks": {{"h": {{"claims": {{"names": [{}]}},
    "find_spec": [{{"serve": true, "table": {{{}}}}}]}}}}, "finders": {{"f": {{"hook": "h"}}}},
    "program": [{{"install": "f"}}]}})",
                     names, table);
}

std::string hook_objects(int n) {
  std::string calls, finders, installs;
  for (int i = 0; i < n; ++i) {
    calls += fmt::format("{}{{\"call\": \"f{}\"}}", i ? ", " : "", i);
    finders += fmt::format("{}\"f{}\": {{\"hook\": \"h\"}}", i ? ", " : "", i);
    installs += fmt::format("{}{{\"install\": \"f{}\"}}", i ? ", " : "", i);
  }
  return fmt::format(
      R"({{"impsim": 1, "tree": {{}}, "hooks": {{"h": {{"claims": {{"names": ["x"]}}, "find_spec": [{}]}}}},
    "finders": {{{}}}, "program": [{}]}})",
      calls, finders, installs);
}

int bench_hook_files() {
  fmt::print("{:<44} {:>12} {:>12}\n", "hook file, load + compile (median of 5)", "KB", "ms");
  for (auto [what, make] : {std::pair{"serve table of n claimed names", &hook_table},
                            std::pair{"n finders, each called and installed", &hook_objects}}) {
    for (int n : {10000, 20000, 40000}) {
      const std::string text = make(n);
      std::vector<double> times;
      for (int i = 0; i < 5; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        InputLimits limits;
        limits.max_file_bytes = kMaxFileBytesCeiling;
        compile_model(parse_scenario(text, "hooks.json", limits), {});
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      fmt::print("{:<44} {:>12} {:>12.1f}\n", fmt::format("{}, n={}", what, n), text.size() / 1024,
                 median(times) * 1000);
    }
  }
  return 0;
}

// `impsim_bench --load`: what a user waits for before the engine starts.
int bench_load() {
  std::string text = big_tree(50000);
  fmt::print("{:<44} {:>12} {:>12}\n", "load case (median of 11)", "ms", "MB/s");
  auto time = [&](const std::string& name, auto body) {
    std::vector<double> times;
    for (int i = 0; i < 11; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      body();
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    const double t = median(times);
    fmt::print("{:<44} {:>12.3f} {:>12.1f}\n", name, t * 1000, static_cast<double>(text.size()) / t / 1e6);
  };
  time(fmt::format("50,000-module tree ({} KB): load", text.size() / 1024), [&] { parse_scenario(text, "tree.json"); });
  time("50,000-module tree: load + compile", [&] { compile_model(parse_scenario(text, "tree.json"), {}); });
  // What loading cost before the event reader, and costs still on a file
  // the event reader gives up: the DOM reader, and its two passes.
  time("  the DOM reader alone (the fallback)", [&] { parse_scenario_dom(text, "tree.json"); });
  time("    of which: JsonSource::scan (depth, duplicates)", [&] { JsonSource(text).scan(256); });
  time("    of which: nlohmann::json::parse", [&] {
    auto doc = nlohmann::json::parse(text);
    (void)doc;
  });
  fmt::print("{:<44} peak RSS {} KB\n\n", "", peak_rss_kb());
  return bench_hook_files();
}

int bench_engine(const std::string& root) {
  fmt::print("{:<44} {:>12} {:>10} {:>26} {:>14} {:>10}\n", "case", "engine ms", "cpu ms", "lookups", "lookups/s",
             "ns/lookup");
  Scenario incident = parse_scenario_file(root + "/scenarios/seed_incident.json");
  Scenario nested = parse_scenario_file(root + "/scenarios/nested_guards.json");
  Scenario chain = parse_scenario_file(root + "/scenarios/import_chain.json");
  {
    Model m = model_of(incident, {});
    row("seed_incident, before (step)", time_engine(m, Variant::Before, EngineKind::Step, 21));
    row("seed_incident, after (step)", time_engine(m, Variant::After, EngineKind::Step, 21));
  }
  long rss_before = peak_rss_kb();
  for (int k : {8, 9, 10}) {
    Model m = model_of(nested, {{"k", k}});
    row(fmt::format("nested_guards k={}, before (step)", k),
        time_engine(m, Variant::Before, EngineKind::Step, k == 10 ? 5 : 9));
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
    Scenario big = parse_scenario(many_modules(100000), "100k_modules.json");
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

// `impsim_bench --floor`: the step engine beside the bare replay floor
// (bench/replay_floor.cc) on the cases the floor can replay, interleaved
// run by run so both see the same machine. Every case first checks the
// floor's counters (the run's and the probe's) equal to the engine's: a
// floor that counted something else would make every ratio meaningless.
struct FloorCase {
  std::string name;
  const char* file;
  int k;
  uint64_t filler;
  Variant variant;
};

std::vector<FloorCase> floor_cases() {
  return {{"seed_incident, before", "scenarios/seed_incident.json", 7, 3298, Variant::Before},
          {"seed_incident, after", "scenarios/seed_incident.json", 7, 3298, Variant::After},
          {"nested_guards k=8, before", "scenarios/nested_guards.json", 8, 200, Variant::Before},
          {"nested_guards k=9, before", "scenarios/nested_guards.json", 9, 200, Variant::Before},
          {"nested_guards k=10, before", "scenarios/nested_guards.json", 10, 200, Variant::Before}};
}

Model floor_model(const std::string& root, const FloorCase& c) {
  return model_of(parse_scenario_file(root + "/" + c.file), {{"k", c.k}});
}

// The two measured sides, out of line so that callgrind can count each
// alone (--toggle-collect='*floor_side_*', see docs/performance.md).
[[gnu::noinline]] Engine floor_side_engine(const Model& m, Variant v) {
  Engine e(m, v, EngineLimits{}, EngineKind::Step);
  e.run();
  return e;
}

[[gnu::noinline]] floor::Result floor_side_replay(const FloorCase& c) {
  return floor::replay_nested_guards(c.k, c.filler, c.variant == Variant::After);
}

std::string floor_mismatch(const Counters& engine, const floor::Counters& replay) {
  std::string out;
  auto check = [&](const char* name, const Count& e, uint64_t r) {
    if (!(e == r)) out += fmt::format(" {}: engine {} floor {};", name, e.text(), r);
  };
  check("asks", engine.asks, replay.asks);
  check("suppressed", engine.suppressed, replay.suppressed);
  check("lookups", engine.lookups, replay.lookups);
  check("toggles", engine.toggles, replay.toggles);
  check("walks", engine.walks, replay.walks);
  check("comparisons", engine.comparisons, replay.comparisons);
  check("max_depth", engine.max_depth, replay.max_depth);
  return out;
}

struct FloorStop {
  std::string what;
};

void check_floor(const FloorCase& c, const Engine& e, const floor::Result& r) {
  stop_at_limit(e, c.name);
  std::string diff = floor_mismatch(e.counters(), r.total);
  if (e.labels().size() != 1)
    diff += " the engine has no single label;";
  else
    diff += floor_mismatch(e.labels()[0].counters, r.probe);
  if (!diff.empty()) throw FloorStop{fmt::format("{}: the floor's counters differ from the engine's:{}", c.name, diff)};
}

int bench_floor(const std::string& root) {
  fmt::print("{:<28} {:>12} {:>11} {:>11} {:>11} {:>11} {:>8}\n", "case (median, interleaved)", "lookups", "engine ms",
             "floor ms", "engine ns/l", "floor ns/l", "ratio");
  for (const FloorCase& c : floor_cases()) {
    const Model m = floor_model(root, c);
    const int reps = c.k >= 10 ? 5 : c.k == 9 ? 9 : 21;
    std::vector<double> engine_cpu, floor_cpu;
    Count lookups;
    for (int i = 0; i < reps; ++i) {
      double t0 = process_cpu_seconds();
      Engine e = floor_side_engine(m, c.variant);
      double t1 = process_cpu_seconds();
      floor::Result r = floor_side_replay(c);
      double t2 = process_cpu_seconds();
      check_floor(c, e, r);
      lookups = e.counters().lookups;
      engine_cpu.push_back(t1 - t0);
      floor_cpu.push_back(t2 - t1);
    }
    const double te = median(engine_cpu), tf = median(floor_cpu);
    const double n = lookups.to_double();
    // A replay too quick for the CPU clock has no ratio: "-", not a number.
    const std::string ratio = tf > 0 ? fmt::format("{:.2f}x", te / tf) : "-";
    fmt::print("{:<28} {:>12} {:>11.3f} {:>11.3f} {:>11.1f} {:>11.1f} {:>8}\n", c.name, grouped(lookups), te * 1000,
               tf * 1000, te * 1e9 / n, tf * 1e9 / n, ratio);
  }
  fmt::print(
      "\nCPU time per run (engine: Engine construction and run; floor: the replay), each the median of\n"
      "runs taken in turn; the counters of every run checked equal (the run's and the probe's).\n");
  return 0;
}

// `impsim_bench --floor-side engine|floor CASE`: one run of one side, for
// callgrind (the case's name as --floor prints it, e.g. "nested_guards k=9, before").
int bench_floor_side(const std::string& root, const std::string& side, const std::string& name) {
  for (const FloorCase& c : floor_cases()) {
    if (c.name != name) continue;
    const Model m = floor_model(root, c);
    if (side == "engine") {
      Engine e = floor_side_engine(m, c.variant);
      check_floor(c, e, floor_side_replay(c));
    } else {
      floor::Result r = floor_side_replay(c);
      check_floor(c, floor_side_engine(m, c.variant), r);
    }
    return 0;
  }
  std::string names;
  for (const FloorCase& c : floor_cases()) names += fmt::format("\n  {}", c.name);
  fmt::print(stderr, "impsim_bench: no floor case \"{}\"; the cases:{}\n", name, names);
  return kExitInvalid;
}

// `impsim_bench --switch`: what a switch between stacks costs, the thing a
// simulated program with several Python threads would do at every
// scheduling point, and what each engine run pays to reach its stack.
namespace switch_bench {
struct PingPong {
  Fiber fiber;
  [[noreturn]] static void run(void* arg) {
    auto* self = static_cast<PingPong*>(arg);
    for (;;) self->fiber.suspend();
  }
};

// CPU nanoseconds per call of `body`, the median of 7 rounds of n calls.
template <class F>
double cpu_ns_per_call(int n, F&& body) {
  std::vector<double> ns;
  for (int round = 0; round < 7; ++round) {
    const double c0 = process_cpu_seconds();
    for (int i = 0; i < n; ++i) body();
    ns.push_back((process_cpu_seconds() - c0) * 1e9 / n);
  }
  return median(ns);
}

void row(const char* what, const std::optional<double>& ns, const char* why_not) {
  if (ns)
    fmt::print("{:<41} {:10.1f}\n", what, *ns);
  else
    fmt::print("{:<41} {:>10}  ({})\n", what, "-", why_not);
}
}  // namespace switch_bench

int bench_switch() {
  using namespace switch_bench;
  fmt::print("{:<41} {}\n", "switch", "CPU ns per round trip (median of 7 rounds)");
  for (Fiber::Switch how : {Fiber::Switch::Registers, Fiber::Switch::Ucontext}) {
    const bool registers = how == Fiber::Switch::Registers;
    const char* what = registers ? "fiber, registers (resume + suspend)" : "fiber, ucontext (resume + suspend)";
    PingPong p;
    if (!p.fiber.start(size_t{1} << 20, &PingPong::run, &p, how)) {
      row(what, std::nullopt, registers ? "this build switches with ucontext only" : "no stack could be mapped");
      continue;
    }
    row(what, cpu_ns_per_call(registers ? 2'000'000 : 200'000, [&] { p.fiber.resume(); }), "");
  }
  int ran = 0;
  const std::function<void()> job = [&] { ++ran; };
  const double trip = cpu_ns_per_call(200'000, [&] { run_on_engine_stack(size_t{8} << 20, job); });
  row("run_on_engine_stack, an empty job", ran == 7 * 200'000 ? std::optional(trip) : std::nullopt,
      "the job did not run once per call");
  return 0;
}

// `impsim_bench --schedules`: schedules searched a second by the
// exhaustive search (bound 2) on the threaded scenarios (the zoo's too),
// each search run whole 3 times, the fastest kept (wall and CPU, and the
// kernel's share).
int bench_schedules(const std::string& root) {
  std::vector<std::string> files;
  for (const char* dir : {"tests/data/threads", "bench/threads", "scenarios/zoo"})
    for (const auto& e : std::filesystem::directory_iterator(root + "/" + dir))
      if (e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  fmt::print("{:<44} {:>10} {:>9} {:>12} {:>8}\n", "scenario (exhaustive, bound 2)", "schedules", "wall s",
             "schedules/s", "system");
  for (const std::string& f : files) {
    Scenario sc = parse_scenario_file(f);
    if (sc.threads.empty()) continue;  // the zoo's single-threaded scenarios
    RunOptions options;
    options.variants = {sc.hooks.used && !sc.hooks.proxy_used ? "as_is" : "before"};
    SearchOptions search;
    search.max_schedules = 1'000'000;
    double best = 1e300, best_cpu = 0, best_sys = 0;
    uint64_t schedules = 0;
    for (int round = 0; round < 3; ++round) {
      rusage r0{}, r1{};
      getrusage(RUSAGE_SELF, &r0);
      const auto t0 = std::chrono::steady_clock::now();
      const std::vector<DesignSearch> found = search_scenario_schedules(sc, options, search);
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      getrusage(RUSAGE_SELF, &r1);
      auto secs = [](const timeval& a, const timeval& b) {
        return (b.tv_sec - a.tv_sec) + (b.tv_usec - a.tv_usec) / 1e6;
      };
      schedules = found.at(0).search.schedules;
      if (wall < best) {
        best = wall;
        best_cpu = secs(r0.ru_utime, r1.ru_utime) + secs(r0.ru_stime, r1.ru_stime);
        best_sys = secs(r0.ru_stime, r1.ru_stime);
      }
    }
    fmt::print("{:<44} {:>10} {:>9.3f} {:>12.0f} {:>7.0f}%\n", std::filesystem::path(f).filename().string(), schedules,
               best, static_cast<double>(schedules) / best, best_cpu > 0 ? 100 * best_sys / best_cpu : 0);
  }
  return 0;
}

// `impsim_bench --schedule-memory`: what an exhaustive search keeps against
// the length of its runs (docs/limits.md, "Schedule searches"): two threads
// each repeating one step N times, from 1,000 to 100,000 steps a thread,
// searched to --max-schedules 5 (every run of a search is as long). Each
// case runs in a child of its own, so that its peak RSS is its own.
int bench_schedule_memory() {
  // bytes/choice: the peak RSS past the case's smallest run, per choice
  // point past it (what a longer run adds).
  fmt::print("{:<26} {:>8} {:>12} {:>12} {:>12} {:>13} {:>8}\n", "case (bound 2, 5 schedules)", "steps", "choices/run",
             "kept (max)", "peak RSS MB", "bytes/choice", "wall s");
  struct Case {
    const char* name;
    const char* step;
  };
  for (const Case& c : {Case{"imports of a cached module", R"({"import": "a"})"},
                        Case{"reloads", R"({"reload": "a"})"}}) {
    long first_rss = 0;
    uint64_t first_choices = 0;
    for (int steps : {1000, 3000, 10000, 30000, 100000}) {
      const std::string json = fmt::format(
          R"({{"impsim": 1, "tree": {{"a": {{}}}}, "threads": {{"w": [{{"import": "a"}}, {{"repeat": {}, "do": [{}]}}]}},
              "program": [{{"import": "a"}}, {{"start": "w"}}, {{"repeat": {}, "do": [{}]}}, {{"join": "w"}}]}})",
          steps, c.step, steps, c.step);
      int pipe_fd[2];
      if (pipe(pipe_fd) != 0) return 1;
      const auto t0 = std::chrono::steady_clock::now();
      const pid_t pid = fork();
      if (pid == 0) {
        close(pipe_fd[0]);
        const Scenario sc = parse_scenario(json, "memory.json");
        RunOptions options;
        options.variants = {sc.hooks.used ? "as_is" : "before"};
        options.limits.max_steps = 100'000'000;
        SearchOptions search;
        search.max_schedules = 5;
        const ScheduleSearch s = search_scenario_schedules(sc, options, search).at(0).search;
        const std::string line = fmt::format("{} {} {}", s.longest_run, s.peak_kept_choices, s.schedules);
        ssize_t ignored = write(pipe_fd[1], line.data(), line.size());
        (void)ignored;
        _exit(s.schedules == 5 ? 0 : 1);
      }
      close(pipe_fd[1]);
      char buf[128] = {};
      ssize_t n = read(pipe_fd[0], buf, sizeof buf - 1);
      close(pipe_fd[0]);
      int status = 0;
      rusage usage{};
      wait4(pid, &status, 0, &usage);
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      uint64_t longest = 0, kept = 0, schedules = 0;
      if (n <= 0 || std::sscanf(buf, "%lu %lu %lu", &longest, &kept, &schedules) != 3 || status != 0) {
        fmt::print(stderr, "impsim_bench: the search of {} x {} did not finish\n", steps, c.name);
        return 1;
      }
      const double mb = static_cast<double>(usage.ru_maxrss) / 1024;
      if (first_choices == 0) {
        first_rss = usage.ru_maxrss;
        first_choices = longest;
        fmt::print("{:<26} {:>8} {:>12} {:>12} {:>12.1f} {:>13} {:>8.2f}\n", c.name, steps, longest, kept, mb, "",
                   wall);
      } else {
        fmt::print("{:<26} {:>8} {:>12} {:>12} {:>12.1f} {:>13.1f} {:>8.2f}\n", c.name, steps, longest, kept, mb,
                   static_cast<double>(usage.ru_maxrss - first_rss) * 1024 / static_cast<double>(longest - first_choices),
                   wall);
      }
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  const char* usage =
      "usage: impsim_bench [--load | --memory | --floor | --floor-side engine|floor CASE | --switch | --schedules | "
      "--schedule-memory] "
      "[ROOT]\n"
      "  Times the engine alone on the scenarios docs/performance.md records (ROOT: the repository, default .).\n"
      "  --load: times loading (and compiling) a generated 50,000-module tree instead.\n"
      "  --memory (or ROOT memory): peak memory against events on bench/scenarios/found_lookups.json.\n"
      "  --floor: the step engine beside the bare replay floor (bench/replay_floor.cc), counters checked equal.\n"
      "  --floor-side engine|floor CASE: one run of one side of one --floor case, for callgrind.\n"
      "  --switch: what a switch between stacks costs (base/fiber.h), and a run's trip to the engine's stack.\n"
      "  --schedule-memory: an exhaustive search's memory against its runs' length, 1,000 to 100,000 steps a thread.\n"
      "  --schedules: schedules searched a second on the threaded scenarios (tests/data/threads, bench/threads,\n"
      "               the zoo's).\n"
      "  ROOT's files are run with impsim's default limits (those of `impsim run` without flags): a run that\n"
      "  reaches one stops the bench with exit status 3.\n";
  std::string root = ".";
  bool load = false, memory = false, floor_table = false, schedules = false;
  std::string side, side_case;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      fmt::print("{}", usage);
      return 0;
    }
    if (a == "--switch") return bench_switch();
    if (a == "--schedule-memory") return bench_schedule_memory();
    if (a == "--load")
      load = true;
    else if (a == "--schedules")
      schedules = true;
    else if (a == "--floor")
      floor_table = true;
    else if (a == "--floor-side") {
      if (i + 2 >= argc) {
        fmt::print(stderr, "impsim_bench: --floor-side needs a side (engine or floor) and a case\n{}", usage);
        return kExitInvalid;
      }
      side = argv[++i];
      side_case = argv[++i];
      if (side != "engine" && side != "floor") {
        fmt::print(stderr, "impsim_bench: --floor-side takes engine or floor, not \"{}\"\n{}", side, usage);
        return kExitInvalid;
      }
    } else if (a == "--memory" || (a == "memory" && i > 1))
      memory = true;
    else if (a.starts_with("-")) {
      fmt::print(stderr, "impsim_bench: unknown option {}\n{}", a, usage);
      return kExitInvalid;
    } else
      root = a;
  }
  try {
    if (load) return bench_load();
    fmt::print(stderr, "impsim_bench: {}'s scenarios run with impsim's default limits\n", root);
    if (memory) return memory_mode(root);
    if (floor_table) return bench_floor(root);
    if (schedules) return bench_schedules(root);
    if (!side.empty()) return bench_floor_side(root, side, side_case);
    if (argc < 2 && !std::filesystem::exists(root + "/scenarios/seed_incident.json")) {
      fmt::print(
          stderr,
          "impsim_bench: no scenarios/seed_incident.json here; run it from the repository root, or give the root\n{}",
          usage);
      return kExitInvalid;
    }
    return bench_engine(root);
  } catch (const InputError& e) {
    fmt::print(stderr, "impsim_bench: {}\n", e.what());
    return dynamic_cast<const InputLimitError*>(&e) ? kExitLimit : kExitInvalid;
  } catch (const ModelLimitError& e) {
    fmt::print(stderr, "impsim_bench: limit {} reached at {}: {}\n", e.limit, e.pointer, e.detail);
    return kExitLimit;
  } catch (const LimitStop& e) {
    fmt::print(stderr, "impsim_bench: {}\n", e.what);
    return kExitLimit;
  } catch (const FloorStop& e) {
    fmt::print(stderr, "impsim_bench: {}\n", e.what);
    return 1;
  }
}
