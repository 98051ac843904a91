// Each finder design's one rule, and the verdict text of `impsim compare`.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "impsim/report/compare.h"
#include "impsim/engine/engine.h"
#include "test_util.h"

using namespace impsim;

namespace {

struct Bench {
  Scenario sc = parse_scenario(
      R"({"impsim": 1, "sys_modules": {"filler": 10, "torch": ["torch"]}, "tree": {"a": {}}, "program": []})", "bench.json");
  Model model = compile_model(sc, {});
  SetId a = model.sets.intern({model.names.find("a")});
  Engine engine;
  explicit Bench(Variant v) : engine(model, v) { engine.set_up(); }
};

}  // namespace

TEST_CASE("design table: names round-trip and each design has its rule") {
  for (Variant v : all_variants()) CHECK(parse_variant(variant_name(v)) == v);
  CHECK_FALSE(parse_variant("fixed").has_value());
  CHECK(design_of(Variant::After).resolving_fix);
  CHECK(design_of(Variant::IndexedWalk).resolving_fix);
  CHECK(design_of(Variant::IndexedWalk).indexed_walk);
  CHECK(design_of(Variant::AfterIdempotentEnable).resolving_fix);
  CHECK(design_of(Variant::AfterIdempotentEnable).idempotent_enable);
  CHECK_FALSE(design_of(Variant::IdempotentEnable).resolving_fix);
  CHECK_FALSE(design_of(Variant::DisableAll).resolving_fix);
}

TEST_CASE("idempotent-enable: a second enable walks and updates the scope but inserts nothing") {
  Bench t(Variant::IdempotentEnable);
  t.engine.enable(t.a);
  t.engine.enable(std::nullopt);
  CHECK(t.engine.copies() == 1);
  CHECK(t.engine.finder().globally_enabled);
  CHECK(t.engine.counters().toggles == 2);
  Bench released(Variant::Before);
  released.engine.enable(released.a);
  released.engine.enable(std::nullopt);
  CHECK(released.engine.copies() == 2);
}

TEST_CASE("disable-all: one disable removes every copy, as one toggle") {
  Bench t(Variant::DisableAll);
  t.engine.enable(t.a);
  t.engine.enable(t.a);
  t.engine.enable(t.a);
  t.engine.disable();
  CHECK(t.engine.copies() == 0);
  CHECK(t.engine.counters().toggles == 4);
}

TEST_CASE("indexed-walk: a toggle examines the torch names only") {
  Bench t(Variant::IndexedWalk);
  t.engine.enable(t.a);   // sys.modules: torch + 10 filler; examines 1 torch name, moves it to the cache
  t.engine.disable();     // no torch name left to examine; torch comes back
  CHECK(t.engine.counters().comparisons == 1);
  Bench released(Variant::After);
  released.engine.enable(released.a);
  released.engine.disable();
  CHECK(released.engine.counters().comparisons == 11 + 10);
}

TEST_CASE("compare: verdicts name the designs and the step that produced each difference") {
  auto r = test::run_json(R"({"impsim": 1,
    "tree": {"pkg": {"package": true}, "pkg.sub": {}, "other": {"package": true}},
    "program": [
      {"enable": {"scope": ["pkg"]}},
      {"guard": {"enable": true, "scope": ["other"]}, "body": [{"import": "other"}]},
      {"import": "pkg.sub"}
    ],
    "variants": ["before", "disable-all", "after"]})");
  Comparison c{&r->run, Variant::Before, {}};
  std::string text = compare_text(c, CompareFormat::Text);
  // A difference is wrapped at 80 columns: read it as one line.
  for (size_t nl; (nl = text.find("\n      ")) != std::string::npos;) text.replace(nl, 7, " ");
  CHECK(text.find("after: identical") != std::string::npos);
  CHECK(text.find("disable-all: differs") != std::string::npos);
  CHECK(text.find("pkg.sub is marked enabled in before and nothing in disable-all; before marks it during `import "
                  "pkg.sub` (/program/2)") != std::string::npos);
  CHECK(text.find("1 copy of the finder is left in sys.meta_path in before") != std::string::npos);
  std::string md = compare_text(c, CompareFormat::Markdown);
  CHECK(md.find("| counter | before | disable-all | after |") != std::string::npos);
  CHECK(md.find("- `disable-all`: differs") != std::string::npos);
  auto j = compare_json(c);
  CHECK(j["comparisons"][0]["verdicts"]["after"]["identical"] == true);
  CHECK(j["comparisons"][0]["verdicts"]["disable-all"]["identical"] == false);
}

TEST_CASE("ratio text") {
  CHECK(ratio_text(10, 10) == "x1");
  CHECK(ratio_text(0, 0) == "x1");
  CHECK(ratio_text(15, 10) == "x1.50");
  CHECK(ratio_text(5, 10) == "x1/2.00");
  CHECK(ratio_text(7, 13699) == "x1/1,957");
  CHECK(ratio_text(13699, 7) == "x1,957");
  CHECK(ratio_text(Count(uint64_t{3} << 60), 1) == "x3.46e18");
  CHECK(ratio_text(1, Count(uint64_t{3} << 60)) == "x1/3.46e18");
  CHECK(ratio_text(0, 10) == "x0");
  CHECK(ratio_text(3, 0) == "n/a");
}

TEST_CASE("expect_outcome pins each design's verdict against the first variant") {
  const char* json = R"({"impsim": 1,
    "tree": {"pkg": {"package": true}, "pkg.sub": {}, "other": {"package": true}},
    "program": [
      {"enable": {"scope": ["pkg"]}},
      {"guard": {"enable": true, "scope": ["other"]}, "body": [{"import": "other"}]},
      {"import": "pkg.sub"}
    ],
    "variants": ["before", "disable-all"],
    "expect_outcome": {"disable-all": "VERDICT"}})";
  std::string good = json, bad = json;
  good.replace(good.find("VERDICT"), 7, "differs");
  bad.replace(bad.find("VERDICT"), 7, "identical");
  CHECK(test::run_json(good)->run.exit_status() == 0);
  CHECK(test::run_json(bad)->run.exit_status() == 1);
}
