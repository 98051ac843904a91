// The engine's stack costs (engine/stack_budget.h), measured: each way the
// engine recurses runs at two depths, on the engine's stack and on a
// simulated thread's, and what one level more touches must stay within the
// cost stack_budget sizes a stack by. A new frame on a recursive path (or a
// larger one) fails here before it can overflow a thread's stack at the
// depth limits.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <functional>
#include <sstream>
#include <string>

#include "impsim/base/engine_stack.h"
#include "impsim/engine/engine.h"
#include "impsim/engine/stack_budget.h"
#include "impsim/model/model.h"
#include "impsim/reader/read_scenario.h"
#include "impsim/run/run.h"
#include "impsim/trace/trace_formats.h"

using namespace impsim;

// Named, not anonymous: the sanitizer build compiles the tests in batches
// (a unity build), where another file's helpers of the same name meet these.
namespace stack_budget_test {

// What a scenario needs to go `depth` levels deep, as its JSON and its flags.
struct Deep {
  std::string json;
  std::string cpython = "3.11";
  std::string variant = "before";
  bool fast = false;  // --engine fast
};

// A chain of `depth` modules, each importing the next.
Deep body_chain(int depth) {
  std::string tree;
  for (int i = 1; i <= depth; ++i)
    tree += fmt::format("{}\"m{}\": {{\"body\": [{}]}}", i > 1 ? ", " : "", i,
                        i < depth ? fmt::format("{{\"import\": \"m{}\"}}", i + 1) : "");
  return {fmt::format(R"({{"impsim": 1, "tree": {{{}}}, "program": [{{"import": "m1"}}]}})", tree)};
}

// One import of a name `depth` parts deep: each parent is imported first,
// one nesting a part (counted by --max-body-depth).
Deep dotted_name(int depth) {
  std::string name = "p1";
  for (int i = 2; i <= depth; ++i) name += fmt::format(".p{}", i);
  return {fmt::format(R"({{"impsim": 1, "tree": {{}}, "program": [{{"import": "{}", "optional": true}}]}})", name)};
}

// `depth` calls nested in one another, each a Python frame.
Deep call_chain(int depth) {
  std::string body = R"({"import": "x"})";
  for (int i = 0; i < depth; ++i) body = fmt::format(R"({{"call": "m", "body": [{}]}})", body);
  return {fmt::format(R"({{"impsim": 1, "tree": {{"m": {{}}, "x": {{}}}}, "program": [{{"import": "m"}}, {}]}})", body)};
}

// `depth` guards open at once: guard steps of at most 1,000 nest levels
// (--max-nest), each in the body of the one before.
Deep guards(int depth) {
  std::string body = R"({"import": "x"})";
  for (int left = depth; left > 0; left -= 1000)
    body = fmt::format(R"({{"nest": {}, "guard": {{"enable": true}}, "body": [{}]}})", std::min(left, 1000), body);
  return {fmt::format(R"({{"impsim": 1, "tree": {{"x": {{}}}}, "program": [{}]}})", body)};
}

// Paddle's finder registered `depth` times, re-entering itself once per
// copy: the fast engine answers the repeated asks from memory, so it goes
// as deep as the copies (the step engine steps 4^depth lookups, and its
// --max-events stops it a few dozen levels deep).
Deep proxy_nesting(int depth) {
  return {fmt::format(R"({{"impsim": 1, "sys_modules": {{"preloaded": ["numpy"], "torch": []}},
      "tree": {{"pkg": {{"package": true, "body": []}}}}, "blocked": ["tvm_ffi"],
      "program": [{{"nest": {}, "guard": {{"enable": true, "scope": ["pkg", "other{{i}}"]}}, "body": [
        {{"import": "pkg"}}, {{"find_spec": "pkg.missing"}}]}}]}})",
                      depth),
          "3.11", "before", true};
}

// A hook that re-enters the import system for the name it claims, without
// a guard: on 3.13.16 (RecursionError not modelled) --max-lookup-depth stops it.
Deep hook_loop(const std::string& action, const std::string& cpython) {
  return {fmt::format(R"({{"impsim": 1, "tree": {{"app": {{}}}},
      "hooks": {{"loop": {{"claims": {{"names": ["app"]}}, "find_spec": [{}], "guard": "none"}}}},
      "finders": {{"h": {{"hook": "loop"}}}},
      "program": [{{"install": "h"}}, {{"import": "app", "optional": true}}]}})",
                      action),
          cpython, "as_is"};
}

RunOptions options_for(const Deep& d, int depth) {
  RunOptions o;
  o.variants = {d.variant};
  o.cpython = parse_cpython(d.cpython);
  o.limits.max_body_depth = std::max(depth + 10, 200);
  o.limits.max_lookup_depth = std::min(depth, 1000);
  o.limits.max_guard_depth = std::max(depth + 10, 5000);
  o.model_limits.max_nest = 1000;
  o.engine = d.fast ? EngineKind::Fast : EngineKind::Step;
  return o;
}

Scenario read(const Deep& d) {
  InputLimits in;
  in.max_json_depth = 1000;
  in.max_name_length = 100'000;  // a name a thousand parts deep
  return parse_scenario(d.json, "stack.json", in);
}

// The bytes of the engine's stack one run touches.
size_t on_engine_stack(const Deep& d, int depth) {
  const Scenario sc = read(d);
  const RunOptions o = options_for(d, depth);
  run_on_engine_stack(stack_budget(o.limits), [] {});
  engine_stack_forget_touched();
  run_scenario(sc, o);
  return engine_stack_touched();
}

// The same run traced (every format but one, a cut or none): a trace's
// sink and its tallied runs past the cut have frames of their own.
size_t traced_on_engine_stack(const Deep& d, int depth, TraceFormat format, uint64_t max_lines) {
  const Scenario sc = read(d);
  const RunOptions o = options_for(d, depth);
  TraceOptions topt;
  topt.format = format;
  topt.max_lines = max_lines;
  run_on_engine_stack(stack_budget(o.limits), [] {});
  engine_stack_forget_touched();
  std::ostringstream out;
  write_trace(out, sc, o, topt);
  return engine_stack_touched();
}

// The same program in a simulated thread `w` that main starts and joins:
// the bytes of the deepest thread's stack.
size_t on_thread_stack(const Deep& d, int depth) {
  nlohmann::json j = nlohmann::json::parse(d.json);
  nlohmann::json program = j["program"];
  j["threads"] = {{"w", program}};
  j["program"] = nlohmann::json::array({{{"start", "w"}}, {{"join", "w"}}});
  const Deep threaded{j.dump(), d.cpython, d.variant, false};
  const Scenario sc = read(threaded);
  const RunOptions o = options_for(threaded, depth);
  Model model = compile_model(sc, {});
  apply_axes(model, o);
  Engine e(model, *parse_variant(d.variant), o.limits);
  Scheduler s;
  s.measure_stacks(true);
  e.run_threads(s);
  return s.deepest_stack();
}

struct Kind {
  const char* name;
  std::function<Deep(int)> make;
  size_t StackCosts::*cost;
};

// Each kind at two depths within the default limits' reach and past them,
// on both stacks: the bytes a level costs, against the budget's figure.
void check(const Kind& k, int low, int high, bool threads = true) {
  for (bool threaded : {false, true}) {
    if (threaded && !threads) continue;
    const auto measure = threaded ? &on_thread_stack : &on_engine_stack;
    const size_t a = measure(k.make(low), low), b = measure(k.make(high), high);
    const size_t per_level = b > a ? (b - a) / static_cast<size_t>(high - low) : 0;
    const size_t budget = stack_costs().*k.cost;
    MESSAGE(fmt::format("{} ({}): {} bytes a level ({} at {}, {} at {}); the budget says {}", k.name,
                        threaded ? "a thread's stack" : "the engine's stack", per_level, a, low, b, high, budget));
    // Measured at all: the deeper run touched more.
    CHECK(b > a);
    CHECK(per_level <= budget);
    // The whole run fits the stack it is given at its depth.
    CHECK(b <= stack_budget(options_for(k.make(high), high).limits));
  }
}


TEST_CASE("each nested module body costs at most the budget's bytes of stack") {
  if (checked_stack_build()) return;  // the sanitizer's frames: not what the budget is for (engine_stack.h)
  check({"a module body importing the next", &body_chain, &StackCosts::body_level}, 400, 1000);
  check({"a module body importing the next, on 3.13.16", [](int n) {
           Deep d = body_chain(n);
           d.cpython = "3.13.16";
           return d;
         },
         &StackCosts::body_level},
        400, 1000);
  check({"an import of a dotted name, its parents imported first", &dotted_name, &StackCosts::body_level}, 400, 1000);
  // Two levels of JSON a call: --max-json-depth's 1,000 allows 499.
  check({"a call nested in a call", &call_chain, &StackCosts::body_level}, 200, 490);
}

TEST_CASE("each nested lookup costs at most the budget's bytes of stack") {
  if (checked_stack_build()) return;
  check({"a hook's find_spec re-entering find_spec", [](int) { return hook_loop(R"({"reenter": "find_spec"})", "3.13.16"); },
         &StackCosts::lookup_level},
        400, 1000);
  check({"a hook's find_spec importing what it claims", [](int) { return hook_loop(R"({"import": "app"})", "3.13.16"); },
         &StackCosts::lookup_level},
        400, 1000);
  check({"a hook calling itself", [](int) { return hook_loop(R"({"call": "h"})", "3.13"); }, &StackCosts::lookup_level},
        400, 1000);
  // The fast engine runs no threads: its own frames, on the engine's stack.
  check({"Paddle's finder re-entering itself (the fast engine)", &proxy_nesting, &StackCosts::lookup_level}, 400,
        1000, false);
  check({"a loader's create_module importing what it creates",
         [](int) { return hook_loop(R"({"serve": true, "create_module": [{"import": "app"}]})", "3.13.16"); },
         &StackCosts::lookup_level},
        400, 1000);
}

TEST_CASE("each open guard costs at most the budget's bytes of stack") {
  if (checked_stack_build()) return;
  check({"nested guard levels", &guards, &StackCosts::guard_level}, 2000, 10000);
}

TEST_CASE("a traced run costs at most the budget's bytes a level too, before its cut and past it") {
  if (checked_stack_build()) return;
  struct Traced {
    const char* name;
    TraceFormat format;
    uint64_t max_lines;
  };
  for (const Traced& t : {Traced{"text, whole", TraceFormat::Text, 0}, Traced{"text, cut at 10 lines", TraceFormat::Text, 10},
                          Traced{"chrome, whole", TraceFormat::Chrome, 0}, Traced{"dot, whole", TraceFormat::Dot, 0},
                          Traced{"importtime, cut", TraceFormat::ImportTime, 10}}) {
    for (const Kind& k : {Kind{"a module body importing the next", &body_chain, &StackCosts::body_level},
                          Kind{"a hook importing what it claims", [](int) { return hook_loop(R"({"import": "app"})", "3.13.16"); },
                               &StackCosts::lookup_level}}) {
      const size_t a = traced_on_engine_stack(k.make(400), 400, t.format, t.max_lines);
      const size_t b = traced_on_engine_stack(k.make(1000), 1000, t.format, t.max_lines);
      const size_t per_level = b > a ? (b - a) / 600 : 0;
      MESSAGE(fmt::format("traced ({}): {}: {} bytes a level ({} at 400, {} at 1000)", t.name, k.name, per_level, a, b));
      CHECK(b > a);
      CHECK(per_level <= stack_costs().*k.cost);
      CHECK(b <= stack_budget(options_for(k.make(1000), 1000).limits));
    }
  }
}

TEST_CASE("the budget grows with each depth limit, and the maxima fit a 64-bit address space") {
  EngineLimits deflt, deep;
  deep.max_body_depth = 1000;
  deep.max_lookup_depth = 1000;
  deep.max_guard_depth = 10000;
  CHECK(stack_budget(deep) > stack_budget(deflt));
  if (!checked_stack_build()) CHECK(stack_budget(deep) < (size_t{1} << 30));
}

}  // namespace stack_budget_test
