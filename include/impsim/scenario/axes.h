// The model's two axes besides the finder design (variant.h): which upstream
// revision of paddle/compat/proxy.py the finder is, and which CPython's
// importlib runs it. docs/model.md lists what each value changes.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace impsim {

// PaddlePaddle/Paddle python/paddle/compat/proxy.py at two commits.
enum class Revision {
  B52ce17,  // b52ce176e538: the guard saves a copy of the scope, enable takes blocked_modules
  R04efefd  // 04efefd5130d: the guard saves the scope object itself
};

// Behaviour of the finder revision (docs/model.md, "Finder revisions").
struct RevisionRules {
  bool guard_saves_copy;       // use_torch_proxy_guard: set(scope) (else the same set object)
  bool swap_drops_proxies;     // _swap_torch_modules_to_cache also deletes ProxyModules
  bool cached_spec_is_package; // _find_spec_for_cached_torch_module: is_package=True
  bool enable_takes_blocked;   // enable_torch_proxy(blocked_modules=...)
  bool operator==(const RevisionRules&) const = default;
};

// Each revision and its rules. In the header, and constant, so that the
// engine can be compiled once per revision (engine/run_mode.h).
struct RevisionEntry {
  Revision key;
  const char* name;
  RevisionRules rules;
};
inline constexpr RevisionEntry kRevisions[] = {
    {Revision::B52ce17, "b52ce17",
     {.guard_saves_copy = true, .swap_drops_proxies = true, .cached_spec_is_package = true, .enable_takes_blocked = true}},
    {Revision::R04efefd, "04efefd",
     {.guard_saves_copy = false,
      .swap_drops_proxies = false,
      .cached_spec_is_package = false,
      .enable_takes_blocked = false}},
};

RevisionRules rules_of(Revision r);
const char* revision_name(Revision r);
std::optional<Revision> parse_revision(const std::string& s);
std::vector<std::string> revision_names();  // in the order the docs list them
std::string revision_list();               // "b52ce17, 04efefd"

// The CPython releases impsim models: each line is a run of releases whose
// importlib behaves alike for what a scenario can observe (docs/model.md,
// "CPython versions", lists each line's first and last patch level and
// what moves between them). A line is named by its first release, or by its
// minor version where it starts at X.Y.0: "3.13" is 3.13.0 to 3.13.12.
enum class CPython { V3_9, V3_10, V3_11, V3_12, V3_13, V3_13_13, V3_13_16, V3_14, V3_14_4, V3_15 };

// importlib._bootstrap._find_spec iterates a snapshot, list(sys.meta_path),
// instead of the live list, and _find_and_load_unlocked imports a parent
// still being initialised again, which waits for the thread initialising it
// (gh-130094: 3.14, backported to 3.13.16).
bool find_spec_iterates_snapshot(CPython v);
bool reimports_initialising_parent(CPython v);
// import.c's import statement checks, after waiting for a module another
// thread was initialising, that sys.modules still holds it, and imports the
// name again when it does not (gh-143650: 3.13.13, 3.14.4, 3.15).
bool rechecks_module_after_wait(CPython v);
// Whether the threads of a scenario are modelled on this line: 3.15's
// _find_and_load takes the locks of a dotted name's parents in order
// (_HierarchicalLockManager), which is not.
bool threads_modelled(CPython v);
// What _find_spec does with a finder that has no find_spec: calls
// _find_spec_legacy (3.9), the same after an ImportWarning (3.10, 3.11),
// or skips it (3.12 removed _find_spec_legacy).
enum class LegacyFinders { Reached, ReachedWithWarning, Skipped };
LegacyFinders legacy_finders(CPython v);
const char* cpython_name(CPython v);
// The minor version of a line: "3.13" for 3.13.16.
const char* cpython_minor(CPython v);
// A line's name, its minor version ("3.13": its first line), or a release
// "X.Y.P" with an optional pre-release tag ("3.15.0rc1"): the line holding it.
std::optional<CPython> parse_cpython(const std::string& s);
std::vector<std::string> cpython_names();
std::string cpython_list();  // "3.9, 3.10, ..."

// What one run of the engine simulates, besides the design.
struct Axes {
  Revision revision = Revision::B52ce17;
  CPython cpython = CPython::V3_11;
};

}  // namespace impsim
