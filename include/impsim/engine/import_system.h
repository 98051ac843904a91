// CPython's import system as importlib._bootstrap writes it (3.11, with
// each version's differences from docs/model.md): the import statement,
// _find_and_load, _find_spec walking sys.meta_path, _load_unlocked with
// the loader protocol, importlib.util.find_spec and importlib.reload.
// Each function is named after the one it mirrors; read bootstrap.cc
// beside _bootstrap.py. In a run with threads, _find_and_load goes to its
// locked form (threaded_import.h).
#pragma once

#include "impsim/engine/finders/finder_objects.h"

namespace impsim {

class ImportSystem : public FinderObjects {
  // The parts below call up into this one through engine().
  friend class TorchProxyMetaFinder;
  friend class FinderObjects;

 public:
  using FinderObjects::FinderObjects;

  // The interpreter before the program's first line (run() starts with it;
  // tests call it to drive enable/disable/guard directly).
  void set_up();
  // The IMPORT_NAME opcode (`import a.b`): import a.b, then make sure `a` is there.
  // The functions of the hot path take the run's mode M (run_mode.h);
  // called from elsewhere, they run as AnyRun.
  template <class M = AnyRun>
  void import_statement(NameId name);
  // _gcd_import / importlib.import_module: _find_and_load.
  template <class M = AnyRun>
  ModuleId _find_and_load(NameId name);
  template <class M = AnyRun>
  ModuleId _find_and_load_unlocked(NameId name);
  // _find_spec(name, path): ask each finder of sys.meta_path.
  template <class M = AnyRun>
  SpecId _find_spec(NameId name, PathRef path);
  template <class M = AnyRun>
  ModuleId _load_unlocked(SpecId spec);
  ModuleId module_from_spec(SpecId spec);
  // importlib.util.find_spec(name).
  template <class M = AnyRun>
  SpecId find_spec(NameId name);
  // importlib.reload(sys.modules[name]).
  template <class M = AnyRun>
  void reload(NameId name);
  // _bootstrap._exec(spec, module): a reload's exec of the found loader on
  // the module it already has.
  template <class M = AnyRun>
  void _exec(SpecId spec, ModuleId module);

 protected:
  // Loader protocol.
  ModuleId create_module(LoaderId loader, SpecId spec);  // kNoModule: default creation
  template <class M = AnyRun>
  void exec_module(LoaderId loader, ModuleId module);
  // The proxy ask of _find_spec, with its trace events.
  template <class M>
  SpecId traced_proxy_find_spec(NameId name, int64_t index, const MetaPath& meta_path);
  const MetaPath& begin_search();
  void end_search();
};

// One proxy ask of _find_spec, as the trace sees it. Inline: it is the
// Paddle loop's every ask (out of line it cost the step engine 2%).
template <class M>
inline SpecId ImportSystem::traced_proxy_find_spec(NameId name, int64_t index, const MetaPath& meta_path) {
  maybe_collect();
  if (!traced<M>()) return proxy_find_spec<M>(name);
  if (TraceTally* t = tally<M>()) {
    // A TalliedRun: counted, and closed whether it raises or not.
    t->open(TraceTally::Ask);
    ++t->ticks;
    SpecId spec;
    try {
      spec = proxy_find_spec<M>(name);
    } catch (PyError&) {
      t->close();
      throw;
    }
    t->close();
    return spec;
  }
  book_.trace->ask_begin(engine(), name, FinderClass::Proxy, kProxyFinder, index, meta_path);
  // Only a trace reads these (machine words: copying them is free).
  const StepCounts before = py_thread_.counts;
  SpecId spec;
  try {
    spec = proxy_find_spec<M>(name);
  } catch (PyError&) {
    // An ask that raises (the paddle twin is missing) still ends, for the trace.
    book_.trace->ask_end(engine(), name, FinderClass::Proxy, AskAnswer::Raised);
    throw;
  }
  // Suppressed: this ask, and nothing nested in it, was answered by the fix.
  const bool suppressed =
      py_thread_.counts.asks == before.asks + 1 && py_thread_.counts.suppressed == before.suppressed + 1;
  book_.trace->ask_end(engine(), name, FinderClass::Proxy,
                       spec != kNoSpec ? AskAnswer::Spec
                       : suppressed    ? AskAnswer::Suppressed
                                       : AskAnswer::None);
  return spec;
}

}  // namespace impsim
