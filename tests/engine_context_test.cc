// EngineContext, the bookkeeping every part of the engine does, seen
// through Engine's public functions: the event limit, the regions of
// lookup depth a labelled step opens, and the records collected.
#include <doctest/doctest.h>

#include <vector>

#include "engine_part_util.h"

using namespace impsim;
using namespace impsim::test;

namespace {

// k nested scoped guards around a probe for a missing submodule, then one
// registration and the same probe again.
const char* const kTwoProbes = R"({"impsim": 1, "params": {"k": 3},
  "tree": {"pkg": {"package": true}},
  "program": [
    {"import": "pkg"},
    {"nest": "$k", "guard": {"enable": true, "scope": ["pkg", "o{i}"]}, "body": [
      {"find_spec": "pkg.missing", "label": "deep"}]},
    {"enable": {"scope": ["pkg"]}},
    {"find_spec": "pkg.missing", "label": "shallow"}]})";

// records_live() as each top-level step begins (after the collection that
// may run there).
struct LiveAtSteps final : TraceSink {
  std::vector<size_t> live;
  void step_begin(const Engine& e, const CStep&) override { live.push_back(e.records_live()); }
};

}  // namespace

TEST_CASE("max_events stops the run one event past it, with a LimitReached named max-events") {
  EngineLimits limits;
  limits.max_events = 20;
  EngineBench b(kTwoProbes, Variant::Before, limits);
  Engine e(b.model(), Variant::Before, limits);
  e.run();
  REQUIRE(e.limit().has_value());
  CHECK(e.limit()->limit == "max-events");
  CHECK_FALSE(e.error().has_value());
  // An event is an ask or a toggle; the one that passes the limit is counted.
  CHECK(e.events() == 21);
  CHECK(e.counters().asks + e.counters().toggles == e.events());
  // Unbounded, the same program runs to its end.
  Engine unbounded(b.model(), Variant::Before);
  unbounded.run();
  CHECK_FALSE(unbounded.limit().has_value());
  CHECK(unbounded.events() > 21);
}

// A labelled step opens a region of lookup depth, so its max_depth is the
// deepest lookup inside it, not the run's deepest so far. With k nested
// copies the probe nests k lookups deep before the fix (docs/model.md's
// ground truth: max_depth before = k); with one copy, one.
TEST_CASE("a labelled step's deepest lookup is its own, not the run's") {
  EngineBench b(kTwoProbes);
  Engine e(b.model(), Variant::Before);
  e.run();
  REQUIRE_FALSE(e.limit().has_value());
  REQUIRE(e.labels().size() == 2);
  CHECK(e.counters().max_depth == 3);
  CHECK(e.labels()[0].counters.max_depth == 3);  // deep
  CHECK(e.labels()[1].counters.max_depth == 1);  // shallow
}

// disable deletes the proxy modules import torch.nn made from sys.modules;
// nothing refers to them, their specs or their loaders any more, and the
// collection at the start of the next step frees them.
TEST_CASE("records nothing reaches are freed at the next step's collection") {
  EngineBench b(R"({"impsim": 1, "tree": {"paddle": {"package": true}, "paddle.nn": {}},
    "program": [{"enable": {}}, {"import": "torch.nn"}, {"disable": {}}, {"find_spec": "paddle"}]})");
  auto live_at_steps = [&](bool eager) {
    Engine e(b.model(), Variant::Before);
    if (eager) e.set_collect_interval(0);
    LiveAtSteps sink;
    e.set_trace(&sink);
    e.run();
    e.set_trace(nullptr);
    REQUIRE_FALSE(e.error().has_value());
    REQUIRE(sink.live.size() == 4);
    return sink.live;
  };
  const std::vector<size_t> eager = live_at_steps(true);
  CHECK(eager[3] < eager[2]);
  // Without a collection between the two steps nothing is freed: the drop
  // is the collection's.
  const std::vector<size_t> lazy = live_at_steps(false);
  CHECK(lazy[3] == lazy[2]);
}
