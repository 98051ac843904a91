// ImportSystem, the engine's importlib._bootstrap, driven through its
// functions as _bootstrap names them, without a program. Each expectation
// is what CPython 3.11's Lib/importlib/_bootstrap.py (and importlib/util.py,
// importlib/__init__.py for find_spec and reload) does on the same state.
#include <doctest/doctest.h>

#include <algorithm>

#include "engine_part_util.h"

using namespace impsim;
using namespace impsim::test;

namespace {

// A package and its submodule, two plain modules, and names no finder finds.
const char* const kTree = R"("tree": {"pkg": {"package": true}, "pkg.sub": {}, "plain": {}, "other": {}},
  "program": [{"find_spec": "missing"}, {"find_spec": "plain.x"}])";

// sys.meta_path = [quiet, server, PathFinder]: `quiet` answers None to every
// name, `server` a spec for "plain" alone, each call counted per object.
const std::string kCounted = std::string(R"({"impsim": 1, )") + kTree + R"(,
  "hooks": {"quiet": {"claims": {"all": true}, "find_spec": [{"return": "none"}]},
            "server": {"claims": {"names": ["plain"]}, "find_spec": [{"serve": true}]}},
  "finders": {"q": {"hook": "quiet"}, "s": {"hook": "server"}},
  "meta_path": ["q", "s", "PathFinder"]})";

}  // namespace

TEST_CASE("_find_and_load of a submodule imports the parent first, then puts the child after it in sys.modules") {
  EngineBench b(std::string(R"({"impsim": 1, )") + kTree + "}");
  EventLog log;
  b.engine().set_trace(&log);
  const ModuleId sub = b.engine()._find_and_load(b.name("pkg.sub"));
  b.engine().set_trace(nullptr);
  CHECK(b.modules() == std::vector<std::string>{"pkg", "pkg.sub"});
  CHECK(sub == b.engine().sys_modules().get(b.name("pkg.sub")));
  // _find_and_load("pkg.sub") begins first, and its _find_and_load_unlocked
  // imports the parent (`_call_with_frames_removed(import_, parent)`)
  // before it searches for the child with the parent's __path__.
  CHECK(log.events == std::vector<std::string>{
                          "import pkg.sub", "import pkg",
                          "ask BuiltinImporter pkg", "ask FrozenImporter pkg", "ask PathFinder pkg",
                          "body pkg", "loaded pkg",
                          "ask BuiltinImporter pkg.sub", "ask FrozenImporter pkg.sub", "ask PathFinder pkg.sub",
                          "body pkg.sub", "loaded pkg.sub"});
  // Now both are in sys.modules: nothing is searched, nothing runs again.
  log.events.clear();
  b.engine().set_trace(&log);
  CHECK(b.engine()._find_and_load(b.name("pkg.sub")) == sub);
  b.engine().set_trace(nullptr);
  CHECK(log.events.empty());
}

TEST_CASE("_find_spec asks sys.meta_path in order and stops at the first spec") {
  EngineBench b(kCounted);
  EventLog log;
  b.engine().set_trace(&log);
  CHECK(b.engine()._find_spec(b.name("plain"), kNoPath) != kNoSpec);
  CHECK(log.only("ask ") == std::vector<std::string>{"ask q plain", "ask s plain"});
  CHECK(b.calls("q") == 1);
  CHECK(b.calls("s") == 1);
  CHECK(b.calls("PathFinder") == 0);  // it would have found "plain" in the tree
  // A name only PathFinder finds is asked of all three, in order.
  log.events.clear();
  CHECK(b.engine()._find_spec(b.name("other"), kNoPath) != kNoSpec);
  CHECK(log.only("ask ") == std::vector<std::string>{"ask q other", "ask s other", "ask PathFinder other"});
  // No finder finds it: None after every finder was asked once.
  CHECK(b.engine()._find_spec(b.name("missing"), kNoPath) == kNoSpec);
  b.engine().set_trace(nullptr);
  CHECK(b.calls("q") == 3);
  CHECK(b.calls("PathFinder") == 2);
  // _find_spec finds; it loads nothing.
  CHECK(b.modules().empty());
  CHECK(b.engine().hook_counters().searches == 3);
}

TEST_CASE("importlib.util.find_spec: a module in sys.modules answers its own spec, no finder asked") {
  EngineBench b(kCounted);
  const ModuleId other = b.engine()._find_and_load(b.name("other"));
  const uint64_t searches = b.engine().hook_counters().searches.u64();
  const uint64_t path_calls = b.calls("PathFinder");
  // util.find_spec: `if fullname not in sys.modules: ... else: return
  // sys.modules[fullname].__spec__`.
  CHECK(b.engine().find_spec(b.name("other")) == b.engine().module(other).spec);
  CHECK(b.engine().hook_counters().searches == searches);
  CHECK(b.calls("q") == 1);
  CHECK(b.calls("PathFinder") == path_calls);
  // Not in sys.modules: the parent is imported (`__import__(parent_name,
  // fromlist=['__path__'])`), the name itself is only searched for.
  CHECK(b.engine().find_spec(b.name("pkg.sub")) != kNoSpec);
  CHECK(b.modules() == std::vector<std::string>{"other", "pkg"});
  CHECK(b.engine().hook_counters().searches == searches + 2);
}

// The same as tests/data/hooks/reload.json, whose counts were measured on the
// real importlib (tools/lib/crosscheck/hooks_real.py): importlib.reload runs
// `_bootstrap._find_spec(name, pkgpath, target)` again and `_exec(spec,
// module)` on the module it has.
TEST_CASE("reload searches sys.meta_path again and runs the body again on the same module") {
  EngineBench b(kCounted);
  const ModuleId other = b.engine()._find_and_load(b.name("other"));
  b.engine()._find_and_load(b.name("pkg"));
  const SpecId first = b.engine().module(other).spec;
  REQUIRE(b.calls("PathFinder") == 2);
  EventLog log;
  b.engine().set_trace(&log);
  b.engine().reload(b.name("other"));
  b.engine().set_trace(nullptr);
  CHECK(log.only("ask ") == std::vector<std::string>{"ask q other", "ask s other", "ask PathFinder other"});
  CHECK(log.only("body ") == std::vector<std::string>{"body other"});
  // No new module: `_exec` runs the found loader on the one in sys.modules,
  // with `module.__spec__ = spec` the spec just found.
  CHECK(b.engine().sys_modules().get(b.name("other")) == other);
  CHECK(b.engine().module(other).spec != first);
  // _exec's `finally: module = sys.modules.pop(name); sys.modules[name] = module`.
  CHECK(b.modules() == std::vector<std::string>{"pkg", "other"});
}

TEST_CASE("a name no finder finds raises ModuleNotFoundError with CPython's message") {
  EngineBench b(kCounted);
  // _ERR_MSG = 'No module named {!r}'.
  std::optional<PyError> e = raised_by([&] { b.engine()._find_and_load(b.name("missing")); });
  REQUIRE(e.has_value());
  CHECK(e->type == "ModuleNotFoundError");
  CHECK(e->message == "No module named 'missing'");
  CHECK(b.modules().empty());
  // A parent without __path__: `(_ERR_MSG + '; {!r} is not a package')`,
  // raised after the parent was imported, which stays.
  e = raised_by([&] { b.engine()._find_and_load(b.name("plain.x")); });
  REQUIRE(e.has_value());
  CHECK(e->type == "ModuleNotFoundError");
  CHECK(e->message == "No module named 'plain.x'; 'plain' is not a package");
  CHECK(b.modules() == std::vector<std::string>{"plain"});
}
