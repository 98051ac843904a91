// The state of Paddle's torch proxy finder (python/paddle/compat/proxy.py):
// the TORCH_PROXY_FINDER object and its module's globals. Its find_spec and
// guards are the engine part TorchProxyMetaFinder's
// (torch_proxy_meta_finder.h), since they call back into CPython's import
// system.
#pragma once

#include <cstdint>
#include <vector>

#include "impsim/engine/finders/covers_memo.h"
#include "impsim/engine/sys_modules.h"
#include "impsim/engine/trace_sink.h"
#include "impsim/model/name_sets.h"
#include "impsim/scenario/names.h"

namespace impsim {

// The torch proxy finder's state (TORCH_PROXY_FINDER and module globals).
struct FinderState {
  // Its copies in sys.meta_path: MetaPath::proxy_copies().
  SetId scope = kEmptySet;  // the value of _local_enabled_scope
  // TORCH_PROXY_FINDER = TorchProxyMetaFinder() runs _set_scope(None): the
  // finder starts global, with an empty scope.
  bool globally_enabled = true;
  // 04efefd: which set object _local_enabled_scope is. Its guard saves the
  // object, not a copy, so an in-place |= during the guard changes what the
  // guard restores (scope_objects below). Unused by b52ce17.
  int32_t scope_object = -1;
  SetId blocked = kEmptySet;

  // TORCH_PROXY_FINDER = TorchProxyMetaFinder() anew (ImportSystem::set_up): the
  // object's state above; the module's cache and set objects below stay.
  void reset_object() {
    scope = kEmptySet;
    globally_enabled = true;
    scope_object = -1;
    blocked = kEmptySet;
  }
  // The fix keeps its _resolving in a threading.local, each PyThread's
  // (py_thread.h). after-global-set keeps one set on the finder object
  // instead, shared by every thread: these, sized and emptied by set_up.
  std::vector<char> resolving;
  std::vector<NameId> resolving_list;

  // What the finder's module keeps besides: TORCH_MODULES_CACHE, and the
  // set objects its scopes are.
  TorchCache cache;
  SetTable sets;      // the model's, copied: scope unions intern new sets while running
  CoversMemo covers;  // SetTable::covers remembered
  // 04efefd's set objects (scope_object above); slots with no holder are reused.
  struct ScopeObject {
    SetId value;
    int32_t holders;  // the finder, and the open guards that saved it
  };
  std::vector<ScopeObject> scope_objects;
  std::vector<int32_t> free_scope_objects;
};

// What a guard remembered on entry, for its exit.
struct GuardEntry {
  bool noop;
  bool enable;
  SetId old_scope;           // b52ce17: set(_local_enabled_scope), a copy
  int32_t old_scope_object;  // 04efefd: _local_enabled_scope itself
  bool old_global;
  GuardSite site;      // for a trace only
  GuardAction action;  // for a trace only
};

}  // namespace impsim
