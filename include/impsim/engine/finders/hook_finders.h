// The hook finders declared as data (the hook language, hook_language.h):
// their classes with the variant's fix, each object's own state, the
// loaders they wrap and the process-wide guard set. Their find_spec is
// FinderObjects::hook_find_spec (finder_objects.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "impsim/engine/records.h"
#include "impsim/scenario/axes.h"
#include "impsim/scenario/hook_language.h"

namespace impsim {

struct HookFinders {
  std::vector<HookClass> classes;  // the model's, with the variant's fix
  struct ObjectState {
    std::vector<NameId> in_progress;  // object_set guard
    bool flag = false;                // flag and skip_self guards
    bool inserted = false;            // the latest install put the object in sys.meta_path
    int64_t participants = 0;         // installs not yet undone (a counted uninstall)
  };
  // state and the interpreter's objects grow when a `new` step runs, which
  // can happen inside any find_spec (a module body): no reference into
  // them is held across a call.
  std::vector<ObjectState> state;      // by FinderId
  std::vector<FinderId> newest;        // by declared FinderId: what the id names now
  std::vector<int32_t> made;           // by declared FinderId: objects `new` made for it
  // By FinderId: the object's class. The objects declared for a hook share
  // one (the hook's index); a `new` step's object has a class of its own
  // (a re-run module body defines the class again), or its predecessor's
  // with `same_class`. An install with presence "class" tests it.
  std::vector<int32_t> class_of;
  int32_t next_class = 0;
  std::vector<NameId> global_finding;  // global_set guard: one set for every hook and thread
  // The hooks' own locks (HookClass::lock). lock_of, by FinderId: the lock
  // the object takes, -1 for none. A run with threads keeps who holds each
  // in the scheduler; a run without holds them all in the main thread,
  // `count` times.
  struct Lock {
    std::string name;  // what a hang calls it: "the threading.Lock of class virtualenv"
    bool reentrant = false;
    int64_t count = 0;
  };
  std::vector<int32_t> lock_of;
  std::vector<Lock> locks;
  struct Loader {
    LoaderId inner;               // HookWrapped: the loader it wraps
    int32_t hook;                 // the hook class
    ModuleId module;              // HookServe: the module object served, or kNoModule
    NameId target;                // HookServe from a table: the module served (imported at create_module), or kNoName
    FinderId finder = kNoFinder;  // HookWrapped: the object whose find_spec wrapped it (whose lock it takes)
    // HookServe: the serve action, whose create_module imports run first
    // (into the model, which outlives the run)
    const HookAction* serve = nullptr;
  };
  std::vector<Loader> loaders;
  // Attributes set on a module by a hook's wrapped loader (outcome marks),
  // with how many times: a chain of wrappers, a reload or a module body
  // that patches again sets one again, and the count is what tells a
  // wrapper chain of k from a single wrapper.
  struct Attribute {
    std::string name;
    int64_t times = 0;
  };
  std::map<ModuleId, std::vector<Attribute>> attributes;
  LegacyFinders legacy_finders = LegacyFinders::ReachedWithWarning;  // the run's CPython's
};

}  // namespace impsim
