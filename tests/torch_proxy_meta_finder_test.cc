// TorchProxyMetaFinder, Paddle's finder as a part of the engine, driven
// through its functions (enable, disable, the guard, one ask) against what
// the model of the finder states (docs/model.md; the finder as released).
// The scope-update rules and the guard's truth table are engine_test.cc's;
// here: where a copy goes in the list and which one leaves, what a nested
// pair of guards leaves behind under each design, and what one ask costs.
#include <doctest/doctest.h>

#include "engine_part_util.h"
// proxy_find_spec is defined there, always inlined into its callers.
#include "impsim/engine/finders/proxy_hot_path.h"

using namespace impsim;
using namespace impsim::test;

namespace {

// A hook scenario only so that sys.meta_path is a list of objects the test
// can read entry by entry: `f` and `g` never claim a name.
const char* const kListed = R"({"impsim": 1, "tree": {"pkg": {"package": true}, "other": {}},
  "hooks": {"quiet": {"claims": {"names": []}, "find_spec": [{"return": "none"}]}},
  "finders": {"f": {"hook": "quiet"}, "g": {"hook": "quiet"}},
  "meta_path": ["f", "PathFinder"],
  "program": [{"enable": {"scope": ["pkg"]}}]})";

// The plain list (P's copies, then the interpreter's three), and names for
// each branch of P.find_spec.
const char* const kPlain = R"({"impsim": 1, "tree": {"pkg": {"package": true}, "other": {}},
  "program": [{"enable": {"scope": ["pkg"]}}, {"find_spec": "pkg.missing"}, {"find_spec": "torch.nn"}]})";

}  // namespace

TEST_CASE("enable inserts P at sys.meta_path[0] every time - disable removes the first copy, or every one") {
  for (Variant v : {Variant::Before, Variant::DisableAll}) {
    CAPTURE(variant_name(v));
    EngineBench b(kListed, v);
    const SetId pkg = b.set({"pkg"});
    Engine& e = b.engine();
    e.enable(pkg);
    CHECK(b.meta_path() == std::vector<std::string>{"P", "f", "PathFinder"});
    e.meta_path_insert(0, b.finder("g"));
    // `sys.meta_path.insert(0, TORCH_PROXY_FINDER)` whether or not P is there.
    e.enable(std::nullopt);
    CHECK(b.meta_path() == std::vector<std::string>{"P", "g", "P", "f", "PathFinder"});
    CHECK(e.copies() == 2);
    const Counters before = e.counters();
    e.disable();
    if (v == Variant::Before) {
      // list.remove: the first occurrence only.
      CHECK(b.meta_path() == std::vector<std::string>{"g", "P", "f", "PathFinder"});
      CHECK(e.copies() == 1);
    } else {
      CHECK(b.meta_path() == std::vector<std::string>{"g", "f", "PathFinder"});
      CHECK(e.copies() == 0);
    }
    // One disable is one toggle and one walk, however many copies it removed.
    CHECK(e.counters().toggles == before.toggles + 1);
    CHECK(e.counters().walks == before.walks + 1);
  }
}

TEST_CASE("disable with P absent changes nothing and is no toggle") {
  EngineBench b(kListed);
  Engine& e = b.engine();
  e.disable();
  CHECK(b.meta_path() == std::vector<std::string>{"f", "PathFinder"});
  CHECK(e.counters().toggles == 0);
  CHECK(e.counters().walks == 0);
}

// An enabling guard inside a scoped registration, a disabling one inside
// that (a lookup's `with use_torch_proxy_guard(enable=False)`).
TEST_CASE("nested guards: before restores the scope and the copies - disable-all loses the outer copy") {
  for (Variant v : {Variant::Before, Variant::DisableAll}) {
    CAPTURE(variant_name(v));
    EngineBench b(kListed, v);
    const SetId pkg = b.set({"pkg"});
    const SetId other = b.set({"other"});
    const SetId both = b.set({"pkg", "other"});
    Engine& e = b.engine();
    e.enable(pkg);
    const GuardEntry outer = e.guard_enter(true, other);
    CHECK(e.copies() == 2);
    CHECK(e.finder().scope == both);
    const GuardEntry inner = e.guard_enter(false, std::nullopt);
    CHECK(e.copies() == (v == Variant::Before ? 1 : 0));
    e.guard_exit(inner);
    // The disabling guard's exit: enable(None), then the scope and the
    // global flag it saw are put back.
    CHECK(e.copies() == (v == Variant::Before ? 2 : 1));
    CHECK(e.finder().scope == both);
    CHECK_FALSE(e.finder().globally_enabled);
    e.guard_exit(outer);
    CHECK(e.finder().scope == pkg);
    CHECK_FALSE(e.finder().globally_enabled);
    // The enabling guard's exit disables: one copy out, as many as it
    // entered with under before. Under disable-all every copy goes, the
    // registration made before the guard too (docs/designs.md,
    // disable_all_drops_outer.json).
    if (v == Variant::Before) {
      CHECK(b.meta_path() == std::vector<std::string>{"P", "f", "PathFinder"});
    } else {
      CHECK(b.meta_path() == std::vector<std::string>{"f", "PathFinder"});
    }
    // enable, then each guard's entry and exit: five toggles either way.
    CHECK(e.counters().toggles == 5);
  }
}

TEST_CASE("one ask: out of scope None without a lookup, in scope one lookup") {
  for (Variant v : {Variant::Before, Variant::After}) {
    CAPTURE(variant_name(v));
    EngineBench b(kPlain, v);
    const SetId pkg = b.set({"pkg"});
    Engine& e = b.engine();
    // Imported before P is there, so the ask below finds pkg in sys.modules.
    e._find_and_load(b.name("pkg"));
    e.enable(pkg);
    Counters start = e.counters();
    // Not a torch name, not in scope: step 4 of P.find_spec.
    CHECK(e.proxy_find_spec(b.name("other")) == kNoSpec);
    // A torch name while P is scoped, no frame marked enabled, nothing
    // cached: step 6, None, no lookup either.
    CHECK(e.proxy_find_spec(b.name("torch.nn")) == kNoSpec);
    CHECK(e.counters().asks == start.asks + 2);
    CHECK(e.counters().lookups == start.lookups);
    CHECK(e.counters().toggles == start.toggles);
    CHECK(e.counters().walks == start.walks);
    // In scope: one lookup. Its guard(enable=False) disables the only
    // copy (a toggle), util.find_spec walks a sys.meta_path without P (no
    // ask) and finds nothing, and the exit enables again (a toggle): the
    // k = 1 column of the ground truth measured on CPython 3.11.7
    // (docs/model.md): lookups 1, asks 1, toggles 2, max_depth 1, the same
    // before and after.
    start = e.counters();
    CHECK(e.proxy_find_spec(b.name("pkg.missing")) == kNoSpec);
    CHECK(e.counters().lookups == start.lookups + 1);
    CHECK(e.counters().asks == start.asks + 1);
    CHECK(e.counters().toggles == start.toggles + 2);
    CHECK(e.counters().suppressed == start.suppressed);
    CHECK(e.counters().max_depth == 1);
    CHECK(e.copies() == 1);
    CHECK(e.finder().scope == pkg);
    CHECK_FALSE(e.finder().globally_enabled);
  }
}
