// The two ground-truth tables, measured on CPython 3.11.7 with the released
// finder (docs/model.md, "Ground truth"), as data (tests/data/crosscheck/gt_*.json run
// them against the interpreter).
#include <doctest/doctest.h>

#include "test_util.h"

using namespace impsim;

namespace {

const char* kChain = R"({
  "impsim": 1, "params": {"k": 1},
  "tree": {
    "pkg": {"package": true, "body": [{"import": "pkg.a"}, {"find_spec": "pkg.optional_dep"}]},
    "pkg.a": {"body": [{"import": "pkg.b"}, {"find_spec": "pkg.missing_in_a"}]},
    "pkg.b": {}
  },
  "program": [
    {"nest": "$k", "guard": {"enable": true, "scope": ["pkg", "other{i}"]}, "body": [{"import": "pkg"}]}
  ]
})";

struct ProbeRow {
  int k;
  uint64_t lookups_b, asks_b, toggles_b, depth_b, lookups_a, asks_a, suppressed_a, toggles_a, depth_a;
};

}  // namespace

TEST_CASE("ground truth table 1: one probe for a missing submodule under k copies") {
  const ProbeRow rows[] = {
      {1, 1, 1, 2, 1, 1, 1, 0, 2, 1},          {2, 4, 4, 8, 2, 2, 4, 2, 4, 1},
      {3, 15, 15, 30, 3, 3, 9, 6, 6, 1},       {4, 64, 64, 128, 4, 4, 16, 12, 8, 1},
      {5, 325, 325, 650, 5, 5, 25, 20, 10, 1}, {6, 1956, 1956, 3912, 6, 6, 36, 30, 12, 1},
  };
  for (const ProbeRow& row : rows) {
    CAPTURE(row.k);
    RunOptions o;
    o.overrides["k"] = row.k;
    auto r = test::run_json(test::kProbeScenario, o);
    const Counters& b = test::variant_run(r->run, Variant::Before).labels[0].second;
    const Counters& a = test::variant_run(r->run, Variant::After).labels[0].second;
    CHECK(b.lookups == row.lookups_b);
    CHECK(b.asks == row.asks_b);
    CHECK(b.toggles == row.toggles_b);
    CHECK(b.max_depth == row.depth_b);
    CHECK(a.lookups == row.lookups_a);
    CHECK(a.asks == row.asks_a);
    CHECK(a.suppressed == row.suppressed_a);
    CHECK(a.toggles == row.toggles_a);
    CHECK(a.max_depth == row.depth_a);
  }
}

TEST_CASE("ground truth: k = 7 gives 13,699 lookups and 27,398 walks before") {
  RunOptions o;
  o.overrides["k"] = 7;
  auto r = test::run_json(test::kProbeScenario, o);
  const Counters& b = test::variant_run(r->run, Variant::Before).labels[0].second;
  CHECK(b.lookups == 13699);
  CHECK(b.walks == 27398);
}

TEST_CASE("ground truth: lookups(k) = k x (lookups(k-1) + 1) before, k after") {
  uint64_t expected = 0;
  for (int k = 1; k <= 8; ++k) {
    expected = static_cast<uint64_t>(k) * (expected + 1);
    CAPTURE(k);
    RunOptions o;
    o.overrides["k"] = k;
    auto r = test::run_json(test::kProbeScenario, o);
    CHECK(test::variant_run(r->run, Variant::Before).labels[0].second.lookups == expected);
    CHECK(test::variant_run(r->run, Variant::After).labels[0].second.lookups == static_cast<uint64_t>(k));
  }
}

TEST_CASE("ground truth table 2: import pkg, whose modules import and probe, under k copies") {
  struct Row {
    int k;
    uint64_t lookups_b, toggles_b, depth_b, lookups_a, asks_a, suppressed_a, toggles_a;
  };
  const Row rows[] = {
      {1, 13, 30, 2, 7, 13, 6, 18},
      {2, 38, 82, 3, 9, 26, 17, 24},
      {3, 139, 286, 4, 11, 43, 32, 30},
      {4, 664, 1338, 5, 13, 64, 51, 36},
  };
  for (const Row& row : rows) {
    CAPTURE(row.k);
    RunOptions o;
    o.overrides["k"] = row.k;
    auto r = test::run_json(kChain, o);
    const VariantRun& b = test::variant_run(r->run, Variant::Before);
    const VariantRun& a = test::variant_run(r->run, Variant::After);
    CHECK(b.counters.lookups == row.lookups_b);
    CHECK(b.counters.toggles == row.toggles_b);
    CHECK(b.counters.max_depth == row.depth_b);
    CHECK(a.counters.lookups == row.lookups_a);
    CHECK(a.counters.asks == row.asks_a);
    CHECK(a.counters.suppressed == row.suppressed_a);
    CHECK(a.counters.toggles == row.toggles_a);
    // "pkg, pkg.a and pkg.b end marked enabled in both."
    for (const VariantRun* v : {&b, &a}) {
      CHECK(v->outcome.marks.at("pkg") == "enabled");
      CHECK(v->outcome.marks.at("pkg.a") == "enabled");
      CHECK(v->outcome.marks.at("pkg.b") == "enabled");
    }
  }
}
