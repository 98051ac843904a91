// The interpreter's objects the engine makes: modules, specs and loaders, and
// the version that changes with every one of them. The fast engine's memo
// (memo.h) keys each remembered ask on that version, so every write goes
// through this class, whose one `changed()` bumps it: outside it the records
// are read-only, and a write cannot forget the bump.
#pragma once

#include <cstdint>
#include <vector>

#include "impsim/base/arena.h"
#include "impsim/engine/sys_modules.h"
#include "impsim/scenario/names.h"

namespace impsim {

struct CStep;

enum Mark : uint8_t { kMarkEnabled = 1, kMarkDisabled = 2 };

// Where a package's __path__ points: a tree entry, an empty list, or no
// __path__ at all (not a package).
using PathRef = int32_t;
inline constexpr PathRef kNoPath = -2;
inline constexpr PathRef kEmptyPath = -1;

using SpecId = int32_t;
using LoaderId = int32_t;
inline constexpr SpecId kNoSpec = -1;

struct Module {
  NameId name;
  bool proxy;     // a ProxyModule made by the finder's TorchProxyLoader
  PathRef path;   // __path__
  uint8_t marks;  // __enable_torch_proxy__ / __disable_torch_proxy__ in its __dict__
  SpecId spec;    // __spec__
  // Provenance, for verdicts: the innermost step running when the module
  // was created and when its last mark was set (nullptr: before the program).
  const CStep* created_by = nullptr;
  const CStep* marked_by = nullptr;
};

enum class LoaderKind : uint8_t {
  Source,        // a tree file (SourceFileLoader): exec runs the entry's body
  Empty,         // a preloaded module's loader: exec does nothing
  Proxy,         // TorchProxyLoader over a paddle module
  Cached,        // CachedTorchModuleLoader (b52ce17): create_module returns the module captured with the spec
  CachedByName,  // CachedTorchModuleLoader (04efefd): create_module returns TORCH_MODULES_CACHE[name] then
  Specific,      // SpecificModuleLoader wrapping another loader
  HookServe,     // a hook's own loader (ref: Engine::hook_loaders_)
  HookWrapped,   // a hook's wrapper around the loader of the spec it returns (ref: Engine::hook_loaders_)
};

struct Loader {
  LoaderKind kind;
  bool exec_enable;  // Specific: the guard around exec enables the proxy
  uint8_t mark;      // Specific: the mark set after exec
  int32_t ref;       // Source: tree entry; Proxy, Cached: module; CachedByName: name; Specific: inner loader
};

struct Spec {
  NameId name;
  LoaderId loader;
  PathRef search;  // submodule_search_locations (kNoPath: None)
};

class Records {
 public:
  const Module& module(ModuleId m) const { return modules_[m]; }
  const Spec& spec(SpecId s) const { return specs_[s]; }
  const Loader& loader(LoaderId l) const { return loaders_[l]; }

  // The only ways to change a record; each is one version.
  Module& write_module(ModuleId m) {
    changed();
    return modules_[m];
  }
  Spec& write_spec(SpecId s) {
    changed();
    return specs_[s];
  }
  ModuleId new_module(const Module& m) {
    changed();
    ++made_;
    return modules_.alloc(m);
  }
  SpecId new_spec(const Spec& s) {
    changed();
    ++made_;
    return specs_.alloc(s);
  }
  LoaderId new_loader(const Loader& l) {
    changed();
    ++made_;
    return loaders_.alloc(l);
  }
  // Never decreases; equal versions mean no record was made or changed.
  uint64_t version() const { return version_; }

  // Reuse (sim/engine/collect.cc): mark what the roots reach, then free the rest.
  // Freeing changes nothing a live reference can read, so it is no version;
  // a reused slot is, through new_*.
  void mark_module(ModuleId m);
  void mark_spec(SpecId s);
  void sweep();

  size_t live() const { return modules_.live() + specs_.live() + loaders_.live(); }
  size_t slots() const { return modules_.slots() + specs_.slots() + loaders_.slots(); }
  // Records ever made (read before every proxy ask: one counter, not three).
  uint64_t made() const { return made_; }

 private:
  void changed() { ++version_; }
  void mark_loader(LoaderId l);

  Arena<Module> modules_;
  Arena<Spec> specs_;
  Arena<Loader> loaders_;
  uint64_t version_ = 0;
  uint64_t made_ = 0;
  std::vector<ModuleId> pending_;  // marked modules whose spec is still to mark
};

}  // namespace impsim
