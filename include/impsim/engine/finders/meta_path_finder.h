// importlib.abc.MetaPathFinder: what _find_spec, and a hook's `call` or
// `call_next`, ask of an entry of sys.meta_path. Each class of finder the
// engine knows is one implementation, as lld's targets are behind
// TargetInfo: the interpreter's BuiltinImporter, FrozenImporter and
// PathFinder, Paddle's TorchProxyMetaFinder, and the hook finder that runs
// whatever class a scenario declares in the hook language. A finder object
// (FinderObject) names its class; meta_path_finder(cls) is the
// implementation that answers for every object of it, handed the object.
//
// A new kind of finder is a new implementation here and a FinderClass
// value; nothing that walks sys.meta_path changes. The implementations
// hold no state: an object's state lives with the engine (HookFinders,
// FinderState), because a find_spec reenters the import system, which may
// ask the same object again before the first ask returns.
//
// The plain run does not come through here: its list is Paddle's copies
// and the interpreter's three, and _find_spec asks them directly, inline
// (import_system.h). Every other run asks each entry through this
// interface.
#pragma once

#include "impsim/engine/records.h"
#include "impsim/model/model.h"

namespace impsim {

class Engine;

class MetaPathFinder {
 public:
  virtual ~MetaPathFinder() = default;
  // finder.find_spec(name, path) of object `self`, which is of this class.
  virtual SpecId find_spec(Engine& e, FinderId self, NameId name, PathRef path) const = 0;
  // Whether `self` has no find_spec, only the find_module that CPython up
  // to 3.11 falls back to (_find_spec_legacy).
  virtual bool legacy(const Engine& /*e*/, FinderId /*self*/) const { return false; }
};

// The implementation of a class of finder.
const MetaPathFinder& meta_path_finder(FinderClass cls);

}  // namespace impsim
