// Reuse of module, spec and loader records (EngineContext::collect): without it
// every successful lookup leaves a spec and one loader per wrapping behind,
// and a long run grows by about 86 bytes per found spec (docs/performance.md).
//
// Python frees these objects by reference counting; impsim marks what is
// reachable instead, at points where no C++ frame of the engine holds a
// record that the interpreter state does not also reach. Those points are
// the start of a scenario step and the start of each proxy ask: between a
// spec's creation (PathFinder, the finder) and its attachment to a module
// (module_from_spec) or its drop (a find_spec step), no step runs and no
// proxy ask begins; a module whose body is running is on py_thread_.frames. Roots:
// sys.modules, the torch cache, the frame stack, and the fast engine's
// memoised results (a replayed ask returns that SpecId, so it must stay the
// same record). Freeing changes nothing an ask can read, so the memo's epoch
// is not bumped; reusing a slot goes through Records::new_*, which bumps it.
#include <algorithm>

#include "impsim/engine/engine.h"

namespace impsim {

void Records::mark_module(ModuleId m) {
  if (modules_.mark(m)) pending_.push_back(m);
}

void Records::mark_spec(SpecId s) {
  if (specs_.mark(s)) mark_loader(specs_[s].loader);
}

// A loader chain: Specific wrappers down to the loader they wrap, which may
// name a module (Proxy: the paddle module; Cached: the cached one).
void Records::mark_loader(LoaderId l) {
  while (loaders_.mark(l)) {
    const Loader& r = loaders_[l];
    if (r.kind == LoaderKind::Specific) {
      l = r.ref;
      continue;
    }
    if (r.kind == LoaderKind::Proxy || r.kind == LoaderKind::Cached) mark_module(r.ref);
    return;
  }
}

// Marks what the marked modules reach (their specs), then frees the rest.
void Records::sweep() {
  while (!pending_.empty()) {
    ModuleId m = pending_.back();
    pending_.pop_back();
    mark_spec(modules_[m].spec);
  }
  modules_.sweep();
  specs_.sweep();
  loaders_.sweep();
}

void EngineContext::collect() {
  // A thread switched out may hold a record in its C++ frames that nothing
  // else reaches (a spec found, not yet loaded): a threaded run keeps every
  // record; its threads' programs are small and its events bounded.
  // A lazy scenario's globals hold modules too; its programs are small.
  if (thread_run_.scheduler || lazy_.used) {
    interp_.next_collect = UINT64_MAX;
    return;
  }
  for (NameId n = 0; n < static_cast<NameId>(names_.size()); ++n) {
    if (interp_.sys_modules.contains(n)) interp_.records.mark_module(interp_.sys_modules.get(n));
    if (finder_.cache.contains(n)) interp_.records.mark_module(finder_.cache.get(n));
  }
  for (ModuleId m : py_thread_.frames) interp_.records.mark_module(m);
  book_.memo.forget_older_than(epoch());  // so the scan below sees each entry at most once
  book_.memo.for_each_result([&](SpecId s) { interp_.records.mark_spec(s); });
  interp_.records.sweep();
  // Amortised: the next collection waits for as many new records as are
  // alive now (and as names exist, which the roots scan visits).
  const uint64_t amortised = records_live() + names_.size();
  interp_.next_collect =
      records_made() + (interp_.collect_interval < kMinCollect ? interp_.collect_interval
                                                               : std::max(interp_.collect_interval, amortised));
}

}  // namespace impsim
