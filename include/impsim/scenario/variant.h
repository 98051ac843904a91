// The finder variants impsim can run side by side: a design (the released
// finder plus a set of changes; docs/designs.md has the one-line change each
// makes), optionally on a given upstream revision of the finder
// ("before@04efefd"; docs/model.md, "Finder revisions").
#pragma once

#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "impsim/scenario/axes.h"

namespace impsim {

enum class DesignId {
  Before,                 // as released
  After,                  // the reentrancy fix (the reference PR)
  IdempotentEnable,       // enable inserts the finder only when it is absent
  DisableAll,             // disable removes every copy, not one
  IndexedWalk,            // the fix, plus toggles that visit only torch names
  AfterIdempotentEnable,  // the fix and idempotent enable together
  AfterGlobalSet,         // the fix with one _resolving set for every thread
  // Hook scenarios (hook_language.h): the hooks as declared, and generic
  // fixes of every hook class, or of the one named after ':'
  // (apply_hook_fix).
  AsIs,
  IdempotentInstall,
  RemoveAll,
  SkipSelf,
  CallNext,
  GuardGlobalSet,
  GuardObjectSet,
  GuardThreadSet,
  GuardFlag,
  GuardRemoveSelf,
  // The wrapped loader's after-exec work without the hook's lock (wrapt's
  // fix: the post-import hooks called outside _post_import_hooks_lock).
  UnlockAfterExec
};

// A design, on the run's revision (unset) or on a revision of its own.
struct Variant {
  DesignId design = DesignId::Before;
  std::optional<Revision> revision;
  // A hook design applied to one hook class only ("skip_self:wrapt"); empty: every hook.
  std::string hook_target;
  bool operator==(const Variant&) const = default;

  static const Variant Before, After, IdempotentEnable, DisableAll, IndexedWalk, AfterIdempotentEnable;
};
// constexpr where the compiler can make the std::string member in a
// constant expression (GCC); clang with libstdc++ 12 cannot, and the fuzz
// build uses clang (docs/fuzzing.md): there they are initialised before
// main, as every use of them runs after.
#if defined(__clang__)
#define IMPSIM_VARIANT_CONSTANT inline const
#else
#define IMPSIM_VARIANT_CONSTANT inline constexpr
#endif
IMPSIM_VARIANT_CONSTANT Variant Variant::Before{DesignId::Before, std::nullopt, {}};
IMPSIM_VARIANT_CONSTANT Variant Variant::After{DesignId::After, std::nullopt, {}};
IMPSIM_VARIANT_CONSTANT Variant Variant::IdempotentEnable{DesignId::IdempotentEnable, std::nullopt, {}};
IMPSIM_VARIANT_CONSTANT Variant Variant::DisableAll{DesignId::DisableAll, std::nullopt, {}};
IMPSIM_VARIANT_CONSTANT Variant Variant::IndexedWalk{DesignId::IndexedWalk, std::nullopt, {}};
IMPSIM_VARIANT_CONSTANT Variant Variant::AfterIdempotentEnable{DesignId::AfterIdempotentEnable, std::nullopt, {}};
#undef IMPSIM_VARIANT_CONSTANT

struct Design {
  bool resolving_fix = false;      // find_spec returns None for a name it is resolving
  bool resolving_global = false;   // ... in any thread: one set on the finder, not a threading.local
  bool idempotent_enable = false;  // sys.meta_path.insert only when P is absent
  bool disable_all = false;        // remove every occurrence of P
  bool indexed_walk = false;       // a walk examines only the torch names
  bool operator==(const Design&) const = default;
};

// Paddle's finder's designs, in the order the docs list them. In the
// header, and constant, so that the engine can be compiled once per design
// (engine/run_mode.h).
struct DesignEntry {
  DesignId id;
  const char* name;
  Design design;
};
inline constexpr DesignEntry kPaddleDesigns[] = {
    {DesignId::Before, "before", {}},
    {DesignId::After, "after", {.resolving_fix = true}},
    {DesignId::IdempotentEnable, "idempotent-enable", {.idempotent_enable = true}},
    {DesignId::DisableAll, "disable-all", {.disable_all = true}},
    {DesignId::IndexedWalk, "indexed-walk", {.resolving_fix = true, .indexed_walk = true}},
    {DesignId::AfterIdempotentEnable, "after+idempotent-enable", {.resolving_fix = true, .idempotent_enable = true}},
    // Last, and not among the plain runs (run_mode.h): in one thread it is
    // `after`, so it is a design for scenarios with threads.
    {DesignId::AfterGlobalSet, "after-global-set", {.resolving_fix = true, .resolving_global = true}},
};
// The designs before after-global-set: those a plain run is compiled for.
inline constexpr size_t kPlainDesignCount = std::size(kPaddleDesigns) - 1;

Design design_of(Variant v);
// "before", or "before@04efefd" for a design on a revision of its own,
// "skip_self:wrapt" for a hook design applied to one hook.
std::string variant_name(Variant v);
// Accepts "DESIGN", "DESIGN@REVISION" and, for hook designs, "DESIGN:HOOK".
std::optional<Variant> parse_variant(const std::string& s);
// The names of `vs`, in order: what "did you mean" offers when a name
// matches none of them.
std::vector<std::string> variant_names(const std::vector<Variant>& vs);
// Every design on the run's revision, in the order the docs list them.
const std::vector<Variant>& all_variants();
// "before, after, idempotent-enable, ..." for messages.
std::string variant_list();
// Whether the design is one of the hook designs (as_is and the fixes).
bool is_hook_design(DesignId d);
// The hook designs, applied to every hook, in the order the docs list them.
const std::vector<Variant>& all_hook_variants();
// "as_is, idempotent_install, ..." for messages.
std::string hook_variant_list();
// Every design's name, the hook designs' too: what --variant completes.
std::vector<std::string> design_names();
// The variant a misspelt `s` most likely means ("aftr" -> "after",
// "before@b52ce1" -> "before@b52ce17"), or nullopt.
std::optional<std::string> nearest_variant(const std::string& s);
// " (did you mean 'after'?)" for a misspelt variant, or "".
std::string nearest_variant_note(const std::string& s, char quote = '\'');

}  // namespace impsim
