// PEP 810's explicit lazy imports as CPython 3.15.0rc1 does them
// (docs/lazy-imports.md lists each rule and the check on the real
// interpreter that found it): the interpreter's state for them, which
// Engine's lazy steps (sim/engine/lazy_imports.cc) read and write.
//
// `lazy import a.b` does no search: it binds `a` in the module's globals to
// a lazy object and adds "a.b" to sys.lazy_modules. The first read of the
// name resolves the object: the import runs then, against sys.meta_path as
// it is at that moment, and the name is rebound to the module. So a model
// of imports needs what the eager statement never did: the globals of each
// module (which names are bound, to what), since a read of them is where
// the search happens.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "impsim/engine/sys_modules.h"
#include "impsim/scenario/hook_language.h"
#include "impsim/model/name_sets.h"
#include "impsim/scenario/names.h"

namespace impsim {

using LazyId = int32_t;

// What a global holds, as far as imports can tell: a module, or a lazy
// object not resolved yet.
struct Binding {
  enum class Kind : uint8_t { Module, Lazy } kind = Kind::Module;
  int32_t id = -1;  // ModuleId, or LazyId
};

// A `lazy_import` object. Resolving `lazy import a.b` imports `a` only and
// gives module a (its `.b` is searched at the first read of the
// attribute); `lazy import a.b as c` imports all of a.b and gives module
// a.b, as `lazy from a import b` does.
struct LazyObject {
  NameId target = kNoName;  // the module name of the statement
  bool whole = false;       // resolves to `target` itself, not its top package
};

struct LazyImports {
  bool used = false;      // the scenario has PEP 810 steps (Model::lazy)
  bool mode_all = false;  // sys.set_lazy_imports("all")
  // sys.set_lazy_imports_filter: set, and the names it answers False for.
  bool has_filter = false;
  SetId filter_eager = kEmptySet;
  std::vector<LazyObject> objects;
  // Being resolved now: a read of one of them raises ImportCycleError.
  std::vector<LazyId> resolving;
  // sys.lazy_modules, the names the scenario's statements added (the
  // standard library's own are not the scenario's), in no order.
  std::vector<NameId> lazy_modules;
  // Each module's globals (kNoModule: __main__'s), by name.
  std::map<ModuleId, std::map<std::string, Binding>> globals;
  // Each module's __lazy_modules__, where its body (or the program) set one.
  std::map<ModuleId, SetId> dunder;
  // The hook object whose find_spec (for `searched`) reads globals now (a
  // "use" action), for the trace's why: kNoFinder outside one.
  FinderId reader = kNoFinder;
  NameId searched = kNoName;
  size_t reader_frames = 0;  // the Python frames open when it read: deeper ones are bodies it caused
  // Whether each frame on the Python stack is a function's (a call) rather
  // than a module body's: mode "all" leaves a function's imports eager.
  std::vector<bool> frame_is_call;
  // The counters a lazy scenario reports.
  uint64_t statements = 0;   // statements that bound a lazy object
  uint64_t resolutions = 0;  // reads that resolved one (each attempt)
  uint64_t filter_calls = 0;
};

}  // namespace impsim
