// FinderObjects and the MetaPathFinder implementations behind it, driven
// through their functions: which implementation answers for each class of
// finder, what a call of one object costs and answers, the legacy
// (find_module-only) hooks, and sys.meta_path's list operations.
#include <doctest/doctest.h>

#include <set>

#include "engine_part_util.h"
#include "impsim/engine/finders/meta_path_finder.h"

using namespace impsim;
using namespace impsim::test;

namespace {

// `_sre` is a builtin name (BuiltinImporter finds it), `a` is in the tree
// (PathFinder finds it); `f` answers None to every name; `Old` has only
// find_module.
const char* const kObjects = R"({"impsim": 1, "tree": {"a": {}}, "builtin": ["_sre"],
  "hooks": {"quiet": {"claims": {"all": true}, "find_spec": [{"return": "none"}]},
            "Old": {"api": "find_module", "claims": {"all": true}, "find_spec": [{"return": "none"}]}},
  "finders": {"f": {"hook": "quiet"}, "g": {"hook": "quiet"}, "o": {"hook": "Old"}},
  "meta_path": ["f", "PathFinder"],
  "program": [{"import": "a"}]})";

}  // namespace

TEST_CASE("meta_path_finder(cls): one implementation per class, each answering as its finder does") {
  EngineBench b(kObjects);
  Engine& e = b.engine();
  std::set<const MetaPathFinder*> distinct;
  for (FinderClass c : {FinderClass::Builtin, FinderClass::Frozen, FinderClass::Path, FinderClass::Proxy,
                        FinderClass::Hook})
    distinct.insert(&meta_path_finder(c));
  CHECK(distinct.size() == 5);
  const NameId sre = b.name("_sre");
  const NameId a = b.name("a");
  const MetaPathFinder& builtin = meta_path_finder(FinderClass::Builtin);
  CHECK(builtin.find_spec(e, kBuiltinImporter, sre, kNoPath) != kNoSpec);
  CHECK(builtin.find_spec(e, kBuiltinImporter, a, kNoPath) == kNoSpec);
  // FrozenImporter finds nothing a scenario has.
  CHECK(meta_path_finder(FinderClass::Frozen).find_spec(e, kFrozenImporter, sre, kNoPath) == kNoSpec);
  const MetaPathFinder& path = meta_path_finder(FinderClass::Path);
  CHECK(path.find_spec(e, kPathFinder, a, kNoPath) != kNoSpec);
  CHECK(path.find_spec(e, kPathFinder, sre, kNoPath) == kNoSpec);
  // Each call of the interpreter's finders is counted on its object.
  CHECK(b.calls("BuiltinImporter") == 2);
  CHECK(b.calls("FrozenImporter") == 1);
  CHECK(b.calls("PathFinder") == 2);
  // P's ask is counted by the proxy's counters, never per object.
  const Count asks = e.counters().asks;
  CHECK(meta_path_finder(FinderClass::Proxy).find_spec(e, kProxyFinder, a, kNoPath) == kNoSpec);
  CHECK(e.counters().asks == asks + 1);
  CHECK(b.calls("P") == 0);
  const MetaPathFinder& hook = meta_path_finder(FinderClass::Hook);
  CHECK(hook.find_spec(e, b.finder("f"), a, kNoPath) == kNoSpec);
  CHECK(b.calls("f") == 1);
  CHECK(hook.legacy(e, b.finder("o")));
  CHECK_FALSE(hook.legacy(e, b.finder("f")));
  CHECK_FALSE(builtin.legacy(e, kBuiltinImporter));
}

// BuiltinImporter.find_spec in 3.11's _bootstrap: `if _imp.is_builtin(fullname):
// return spec_from_loader(...)` else None, whatever the path.
TEST_CASE("finder_find_spec on BuiltinImporter: a call counted, a spec for a declared builtin name only") {
  EngineBench b(kObjects);
  Engine& e = b.engine();
  CHECK(e.finder_find_spec(kBuiltinImporter, b.name("_sre"), kNoPath) != kNoSpec);
  CHECK(e.finder_find_spec(kBuiltinImporter, b.name("a"), kNoPath) == kNoSpec);
  CHECK(b.calls("BuiltinImporter") == 2);
  CHECK(b.calls("PathFinder") == 0);
  CHECK(e.hook_counters().finder_calls == 0);  // the hook objects' total leaves the interpreter's out
}

// A finder class with find_module alone: `finder.find_spec` is an
// AttributeError (what _find_spec up to 3.11 catches to fall back to
// _find_spec_legacy; a direct call is not caught). The message is
// CPython's for a missing attribute of an instance of class Old; measured
// on the real importlib for tests/data/hooks/legacy_finder.json.
TEST_CASE("a legacy hook: is_legacy_finder, and finder_find_spec raises AttributeError uncounted") {
  EngineBench b(kObjects);
  Engine& e = b.engine();
  CHECK(e.is_legacy_finder(b.finder("o")));
  CHECK_FALSE(e.is_legacy_finder(b.finder("f")));
  CHECK_FALSE(e.is_legacy_finder(kPathFinder));
  const std::optional<PyError> err = raised_by([&] { e.finder_find_spec(b.finder("o"), b.name("a"), kNoPath); });
  REQUIRE(err.has_value());
  CHECK(err->type == "AttributeError");
  CHECK(err->message == "'Old' object has no attribute 'find_spec'");
  CHECK(b.calls("o") == 0);
}

// list.insert(i, x): i += len when negative, then clamped to [0, len];
// list.remove(x): the first occurrence, ValueError (false) when absent.
TEST_CASE("meta_path_insert, append and remove behave as Python's list") {
  EngineBench b(kObjects);
  Engine& e = b.engine();
  const FinderId f = b.finder("f"), g = b.finder("g"), o = b.finder("o");
  using L = std::vector<std::string>;
  e.meta_path_insert(-1, g);  // before the last
  CHECK(b.meta_path() == L{"f", "g", "PathFinder"});
  e.meta_path_insert(-100, o);  // clamped to 0
  CHECK(b.meta_path() == L{"o", "f", "g", "PathFinder"});
  e.meta_path_insert(100, f);  // clamped to len: an append
  CHECK(b.meta_path() == L{"o", "f", "g", "PathFinder", "f"});
  e.meta_path_append(kBuiltinImporter);
  CHECK(b.meta_path() == L{"o", "f", "g", "PathFinder", "f", "BuiltinImporter"});
  CHECK(e.meta_path_remove(f));
  CHECK(b.meta_path() == L{"o", "g", "PathFinder", "f", "BuiltinImporter"});
  CHECK_FALSE(e.meta_path_remove(kFrozenImporter));
  CHECK(b.meta_path() == L{"o", "g", "PathFinder", "f", "BuiltinImporter"});
  // P through the list: its copies are counted as it comes and goes.
  e.meta_path_insert(2, kProxyFinder);
  CHECK(e.copies() == 1);
  CHECK(b.meta_path() == L{"o", "g", "P", "PathFinder", "f", "BuiltinImporter"});
  CHECK(e.meta_path_remove(kProxyFinder));
  CHECK(e.copies() == 0);
}
