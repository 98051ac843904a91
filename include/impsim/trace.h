// What the engine reports while it runs, for `impsim trace` and anything
// else that wants to watch a resolution unfold. The engine calls these only
// when a sink is attached (Engine::set_trace), so an untraced run pays one
// untaken branch per event.
#pragma once

#include <cstdint>

#include "impsim/model.h"

namespace impsim {

class Engine;

enum class FinderKind : uint8_t { Proxy, Builtin, Frozen, Path, Hook };

// What one finder's find_spec answered.
enum class AskAnswer : uint8_t {
  None,        // None
  Suppressed,  // None, from the fix's resolving check
  Spec,        // a spec
};

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  // A scenario step begins / ends (result: "ok", "found", "none", or an exception name).
  virtual void step_begin(const Engine&, const CStep&) {}
  virtual void step_end(const Engine&, const CStep&, const char* /*result*/) {}
  // _find_and_load_unlocked of `name` begins / ends (ok: the module was loaded).
  virtual void import_begin(const Engine&, NameId /*name*/) {}
  virtual void import_end(const Engine&, NameId /*name*/, bool /*ok*/) {}
  // _find_spec's loop asks the finder at `index` of sys.meta_path; `copies`
  // is how many proxy copies lead the list at that moment.
  virtual void ask_begin(const Engine&, NameId /*name*/, FinderKind, int64_t /*index*/, int64_t /*copies*/) {}
  virtual void ask_end(const Engine&, NameId /*name*/, FinderKind, AskAnswer) {}
  // _find_spec_for_specific_module begins / ends at lookup depth `depth`.
  virtual void lookup_begin(const Engine&, NameId /*name*/, uint64_t /*depth*/, uint8_t /*mark*/) {}
  virtual void lookup_end(const Engine&, NameId /*name*/, uint64_t /*depth*/, bool /*found*/) {}
  // An enable or a disable that removed a copy; `walked` names examined,
  // `copies` left in sys.meta_path after it.
  virtual void toggle(const Engine&, bool /*enable*/, uint64_t /*walked*/, int64_t /*copies*/) {}
  // A module body (exec of a tree file) or a `call` function starts / ends.
  virtual void body_begin(const Engine&, NameId /*module*/, bool /*call*/) {}
  virtual void body_end(const Engine&, NameId /*module*/, bool /*call*/) {}
};

}  // namespace impsim
