// The step engine: a scenario's program replayed call by call through
// CPython's import system, Paddle's torch proxy finder and the hook
// finders. Engine is the whole, stacked from its parts
// (engine_context.h draws the stack); this top part runs the program's
// steps (program.cc: imports, probes, guards, toggles, nests, labels,
// sys.meta_path steps) and answers what a run came to: its counters,
// error, limit, labels and state, which run/, trace/ and the tests read.
#pragma once

#include "impsim/engine/threaded_import.h"

namespace impsim {

class Engine final : public ThreadedImport {
  // The parts below call up into this one through engine().
  friend class TorchProxyMetaFinder;
  friend class FinderObjects;
  friend class ImportSystem;
  friend class ThreadedImport;

 public:
  Engine(const Model& model, Variant variant, EngineLimits limits = {}, EngineKind kind = EngineKind::Step)
      : ThreadedImport(model, variant, limits, kind) {}

  // Runs the program. Returns normally, or with error/limit set. A
  // scenario with threads runs them under the default schedule (each
  // thread goes on until it blocks or ends).
  void run();
  const std::vector<LabelTotals>& labels() const { return book_.labels; }
  const std::optional<PyError>& error() const { return py_thread_.error; }
  const std::optional<LimitReached>& limit() const { return book_.limit; }
  const SysModules& sys_modules() const { return interp_.sys_modules; }
  const Module& module(ModuleId m) const { return interp_.records.module(m); }
  const Model& model() const { return model_; }
  // The largest len(sys.modules) a walk examined.
  uint64_t walk_peak() const { return book_.walk_peak; }
  // Collect once `n` new records were made since the last collection.
  // Tests set 0: collect at every chance, so every slot is reused at the
  // first chance, even when nothing new was made; at kMinCollect or
  // more the interval also grows with what is alive, so collecting costs
  // O(1) per record made.
  void set_collect_interval(uint64_t n) { interp_.collect_interval = n; }
  uint64_t lookup_depth() const { return py_thread_.depth; }
  const std::vector<ModuleId>& frames() const { return py_thread_.frames; }
  // The Python thread running now.
  const PyThread& thread() const { return py_thread_; }
  // Attaches an observer (not owned); nullptr detaches.
  void set_trace(TraceSink* sink) { book_.trace = sink; }
  // PEP 810's state: sys.lazy_modules, the modes, the counts.
  const LazyImports& lazy() const { return lazy_; }

 protected:
  void run_meta_path_step(const CStep& step);
  // Steps (program.cc).
  template <class M>
  void run_program();
  template <class M = AnyRun>
  void run_steps(const std::vector<CStep>& steps);
  template <class M>
  void run_step(const CStep& step);
  template <class M>
  void run_step_once(const CStep& step);
  template <class M>
  void run_guard_levels(const CStep& step, int64_t level);
  template <class M = AnyRun>
  void run_body(ModuleId frame, const std::vector<CStep>& body, bool is_call);

  // PEP 810's lazy imports (lazy_imports.cc), run as AnyRun: a run with
  // them is on CPython 3.15, never plain.
  ModuleId current_globals() const;  // the frame's globals: a module's, kNoModule for __main__
  void bind(ModuleId globals, const std::string& key, Binding b);
  bool filter_keeps_lazy(NameId name);       // sys.set_lazy_imports_filter's answer, at the statement
  void bind_eager_import(NameId name, NameId as, bool whole);
  void bind_lazy(NameId name, NameId as, bool whole);
  void lazy_import_step(const CStep& step);  // `lazy import a.b [as c]`
  void import_step(const CStep& step);       // `import a.b`, lazy under mode "all"
  void use_step(const CStep& step);          // the expression `a.b.c`
  void resolve_step(const CStep& step);      // `globals()['m'].resolve()`
  // The expression read in a function of `module`, hook object `finder`'s
  // find_spec for `searched`: against that module's globals.
  void use_in(FinderId finder, NameId searched, NameId module, const std::string& expression);
  void read_expression(ModuleId globals, const std::string& expression);
  // `read`: the expression read so far, for the trace.
  ModuleId resolve(LazyId id, const std::string& read);  // import.c's _PyImport_LoadLazyImportTstate
  ModuleId read_global(ModuleId globals, const std::string& key, Binding b, const std::string& read);  // LOAD_NAME
  ModuleId load_attr(ModuleId module, const std::string& attr, const std::string& read);  // a module's getattr
  void lazy_from_step(const CStep& step);    // `lazy from m import a, b as c`
  void add_lazy_module(NameId name);         // sys.lazy_modules.add(name)
  // `from parent import child`, the statement's two halves: __import__ with
  // a fromlist (_handle_fromlist for a package), then IMPORT_FROM.
  ModuleId import_fromlist(NameId parent, const std::vector<NameId>& names);
  ModuleId import_from_attr(ModuleId from, NameId name);
  ModuleId import_from(NameId parent, NameId name);  // both, for one name: a lazy from-import's resolution
  // _find_and_load_unlocked's end for a module just loaded (ImportSystem calls it).
  void module_loaded(NameId name, ModuleId module);
};

inline Engine& EngineContext::engine() { return static_cast<Engine&>(*this); }
inline const Engine& EngineContext::engine() const { return static_cast<const Engine&>(*this); }

}  // namespace impsim
