// CPython's process-wide state: sys.modules, sys.meta_path, the module,
// spec and loader objects and the import locks, shared by every Python
// thread.
#pragma once

#include <cstdint>
#include <vector>

#include "impsim/engine/import_locks.h"
#include "impsim/engine/meta_path.h"
#include "impsim/engine/records.h"
#include "impsim/engine/sys_modules.h"
#include "impsim/model/model.h"
#include "impsim/scenario/hook_language.h"

namespace impsim {

struct Interpreter {
  SysModules sys_modules;
  MetaPath meta_path;
  // Every finder object, by FinderId: the interpreter's, the scenario's,
  // then those `new` steps made.
  std::vector<FinderObject> objects;
  // Records nothing refers to any more are reused (EngineContext::collect).
  Records records;
  uint64_t next_collect = 0;      // records made (ever) at which collect runs next
  uint64_t collect_interval = 0;  // Engine::set_collect_interval
  // By NameId: the path PathFinder last searched in vain for the name (the
  // tree never changes, so a search there would miss again).
  std::vector<PathRef> path_miss;
  // importlib's _RELOADING: the modules a reload is running for (a reload
  // of one of them returns it as it is).
  std::vector<NameId> reloading;
  // The global import lock, the module locks with `_blocking_on`, and the
  // hooks' own locks: taken by a threaded run's threads (ThreadedImport::run_threads
  // makes them new), which the scheduler blocks while another holds one.
  ImportLocks locks;
};

}  // namespace impsim
