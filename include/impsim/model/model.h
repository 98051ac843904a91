// The scenario compiled for one parameter set: names interned, the package
// tree indexed for PathFinder, `$param`, `repeat`, `nest` and `{i}` resolved.
// This is what the engine reads; it never looks at text again.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "impsim/base/errors.h"
#include "impsim/base/flat_map.h"
#include "impsim/model/name_sets.h"
#include "impsim/scenario/axes.h"
#include "impsim/scenario/hook_language.h"
#include "impsim/scenario/names.h"
#include "impsim/scenario/scenario.h"

namespace impsim {

using TreeId = int32_t;
using Params = std::map<std::string, int64_t>;

// Bounds on what one parameter set may expand to (exit status 3 past them).
struct ModelLimits {
  int64_t max_repeat = 1'000'000;
  int64_t max_nest = 1'000;
  int64_t max_filler = 100'000'000;
  // Names interned for guard and enable scopes, summed over every step:
  // each nest level interns its own copy of the scope, so a 229 KB scope of
  // 20,000 "s{i}" names under nest 1000 took 3.75 GB and 98 s.
  int64_t max_scope_names = 1'000'000;
};

// Ordered by size, so that no field pads the next: 160 bytes a step when
// the vectors and the 8-byte fields sat among the bools, 128 now (a 50,000-
// module tree compiles 25,000 of them, and every byte is memory the kernel
// zeroes first).
struct CStep {
  std::vector<SetId> scopes;  // guard: one per nesting level (level 1 first); enable: one
  std::vector<CStep> body;
  // unload: the names; lazy_from: each name imported (m.X) followed by the name it binds
  std::vector<NameId> unload;
  const std::string* pointer = nullptr;  // into the Scenario, which outlives the model
  int64_t repeat = 1;
  int64_t nest = -1;  // guard: number of nested levels; -1 when not nested; do with "{i}": its iterations
  // insert: the index; start, join: the thread's index in Model::threads;
  // do with "{i}": the iteration this step is (1 to nest), 0 otherwise
  int64_t at = 0;
  NameId target = kNoName;
  NameId bind = kNoName;    // lazy_import: the name it binds ("as", else the target's first part)
  // block; enable: blocked_modules; set_lazy_imports_filter: the names kept eager; __lazy_modules__
  SetId block = kEmptySet;
  int label = -1;
  FinderId finder = kNoFinder;  // install, uninstall, insert, append, remove
  int32_t instance = 0;         // the same: "ID#k"'s k (0: the newest object of the id)
  StepKind kind = StepKind::Import;
  bool optional = false;
  bool guard_enable = true;
  bool has_scope = false;    // false: scope None (global)
  bool has_blocked = false;  // enable: blocked_modules was passed (None or a set)
  bool all_copies = false;   // remove
  bool submodules = false;   // unload
  bool same_class = false;   // new: another object of the class the id names now
  bool lazy_all = false;     // set_lazy_imports: "all"
  bool bind_as = false;      // lazy_import: "as" given: binds the module itself, not its top package
};

struct CTree {
  NameId name = kNoName;
  bool package = false;
  std::vector<CStep> body;
};

// A thread the scenario declares (its index in Model::threads is what
// start and join steps name; the program is thread "main").
struct CThread {
  std::string name;
  std::vector<CStep> program;
};

struct Model {
  NameTable names;
  SetTable sets;
  std::vector<CTree> tree;
  std::vector<TreeId> tree_of_top;       // by NameId: the top-level tree entry of that name, or -1
  FlatMap<uint64_t, TreeId> tree_child;  // (parent tree entry, last atom) -> entry
  std::vector<NameId> paddle_of;         // by NameId: torch name -> its paddle name, else kNoName
  std::vector<NameId> preloaded;
  std::vector<NameId> torch_modules;
  int64_t filler = 0;
  SetId blocked = kEmptySet;
  std::vector<CStep> program;
  std::vector<CThread> threads;
  std::vector<std::string> labels;
  Params params;
  Axes axes;        // finder revision and CPython version
  bool lazy = false;  // PEP 810 steps are used (Scenario::lazy)
  HookModel hooks;  // finder objects; hooks.used: sys.meta_path is a list of them

  TreeId find_child(TreeId parent, NameId name) const;
  TreeId find_tree(NameId name) const;  // by full name, for preloaded modules
};

// "`import pkg.a` (/tree/pkg/body/0)": a step as a reader of the scenario knows it.
std::string describe_step(const CStep& step, const Model& model);
// The Python of a PEP 810 step ("lazy import a.b as c", "a.b.c",
// "sys.set_lazy_imports('all')"); empty for any other step.
std::string lazy_step_text(const CStep& step, const Model& model);

// The Python statement of an install/uninstall/insert/append/remove/unload step.
std::string describe_meta_path_step(const CStep& step, const Model& model);

// Resolves `params` (scenario defaults, then overrides) and compiles.
// Throws InputError for a bad value (a negative `repeat`), ModelLimitError
// past a limit.
Model compile_model(const Scenario& sc, const Params& params, const ModelLimits& limits = {});
// What compile_model would refuse, with the same error, without building
// the model: a tree's names are not interned nor indexed (none of that can
// refuse anything), and compiled bodies are dropped as soon as checked.
void check_model(const Scenario& sc, const Params& params, const ModelLimits& limits = {});

}  // namespace impsim
