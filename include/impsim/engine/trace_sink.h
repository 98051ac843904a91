// What the engine reports while it runs, for `impsim trace` and anything
// else that wants to watch a resolution unfold. The engine calls these only
// when a sink is attached (Engine::set_trace), so an untraced run pays one
// untaken branch per event.
#pragma once

#include <cstdint>
#include <vector>

#include "impsim/engine/scheduler.h"
#include "impsim/model/model.h"

namespace impsim {

class Engine;
class MetaPath;

// What one finder's find_spec answered.
enum class AskAnswer : uint8_t {
  None,        // None
  Suppressed,  // None, from the fix's resolving check
  Spec,        // a spec
  Raised,      // an exception passed through (the paddle twin's import failed)
};

// Why TorchProxyMetaFinder.find_spec answered as it did: its tests, in the
// order the finder makes them (both revisions share it); the first that
// holds decides. Suppressed is the reentrancy fix's early return, made
// before any of the finder's own tests.
enum class FindReason : uint8_t {
  Suppressed,            // the fix: the name is being resolved -> None
  Blocked,               // a blocked name -> the specific lookup, marked disabled
  InScope,               // in the local scope -> the specific lookup, marked enabled
  NotTorch,              // not torch or torch.* -> None
  CallerDisabled,        // a calling module is marked __disable_torch_proxy__, not cached -> None
  CallerDisabledCached,  // ... and the name is cached -> the cached module
  NotEnabled,            // not globally enabled, no caller marked __enable_torch_proxy__, not cached -> None
  NotEnabledCached,      // ... and the name is cached -> the cached module
  ProxiedGlobal,         // globally enabled -> the paddle twin imported and served as torch
  ProxiedCaller,         // not global, but a caller is marked __enable_torch_proxy__ -> the same
};

// Which use_torch_proxy_guard is entered: a `guard` step, the one
// _find_spec_for_specific_module opens around its lookup (enable=False), or
// the one SpecificModuleLoader.exec_module opens around a module body.
enum class GuardSite : uint8_t { Step, Lookup, Loader };

// What a guard's entry did, from its test `enable == already_has_torch_proxy
// and ((globally_enabled and scope is None) or local_scope == (scope or set()))`.
enum class GuardAction : uint8_t {
  NoopGlobal,     // did nothing: P is already in the state asked, globally enabled, no scope asked
  NoopSameScope,  // did nothing: P is already in the state asked, with the scope asked
  Enable,         // P is not in sys.meta_path: enable_torch_proxy(scope) now, disable on exit
  EnableRescope,  // P is there with another scope: one more copy, the scope extended, disable on exit
  EnableGlobal,   // P is there, scoped, and no scope is asked: one more copy, P switched to global, disable on exit
  Disable,        // P is in sys.meta_path: disable_torch_proxy() now, enable on exit
  DisableAbsent,  // P is absent but the saved scope is not the one asked: disable only warns, exit enables
};

// Why a hook object's find_spec answered as it did (hook_language.h): the
// claims test, then the guard's; a name past both runs the actions, which
// give the answer.
enum class HookReason : uint8_t {
  NotClaimed,   // a name the hook does not claim -> None
  NotTopLevel,  // the hook acts only where path is None, and this search has a path -> None
  InGuardSet,   // a re-entry: the guard's set holds the name already -> None
  GuardFlag,    // a re-entry: the guard's flag is up while the hook runs -> None
  Claimed,      // claimed and let through: the actions run
};

// What a hook's action asks of the import system from inside find_spec.
enum class HookCall : uint8_t {
  Reenter,   // importlib.util.find_spec(fullname): a search of sys.meta_path again
  Direct,    // OTHER.find_spec(fullname, path), never through sys.meta_path
  CallNext,  // each finder after this one in sys.meta_path, first spec wins
};

// What a thread of a threaded run waits for: the global import lock (taken
// around a finder's find_spec, in _get_module_lock or in a dead module
// lock's callback: `site`), a module's `_ModuleLock`, a thread it joins, or
// a hook's own threading.Lock / RLock (`lock`: FinderObjects::hook_lock_text). `on`
// is the thread holding the lock, or the thread joined (a PyThreadId). A run
// without threads reports one wait only: its main thread acquiring a hook's
// Lock it holds already, the hang that stops it. The kind is the
// scheduler's (Scheduler::Wait).
// Where a hook takes its own lock (HookLock): in find_spec, for the name
// asked; around the install step; or in the wrapped loader's exec_module,
// once the wrapped exec_module has run, for the module it loaded.
enum class HookLockSite : uint8_t { FindSpec, Install, AfterExec };
struct ThreadWait {
  WaitKind kind = WaitKind::GlobalLock;
  NameId module = kNoName;
  int32_t on = -1;
  const char* site = "";  // GlobalLock: "find_spec", "module_lock" or "lock_gc"
  int32_t lock = -1;      // HookLock: which hook lock
};

// What runs between body_begin and body_end.
enum class BodyKind : uint8_t { Module, Call, CreateModule };

// What a PEP 810 statement or read did (lazy_imports.cc).
enum class LazyEvent : uint8_t {
  Bound,      // the statement bound a lazy object: no search now
  Eager,      // the lazy-imports filter answered False: the statement imports now
  Resolve,    // a read found a lazy object: its import runs now
  Attribute,  // a missing attribute whose name is in sys.lazy_modules: that submodule is imported now
  Cycle,      // a read found a lazy object that is being resolved further out: ImportCycleError
};

// What a trace keeps of the events past its cut (`--max-lines`,
// `--max-bytes`): nothing more is written of them, so each is only
// counted, by what it would have been. Every format reads its counts off
// these: a text line per event that opens a frame or stands alone, plus
// one per close that does not come right after its open (an open closed
// with nothing in between is one line); a Chrome event per open and per
// standalone event; an explorer row per event of any kind; the simulated
// clock's ticks (an ask 1, a walk the names it examines).
//
// A writer points TraceSink::tally at its tally once it writes nothing more
// of the variant. In a run that is plain but for its trace (Paddle's
// finder, no threads, the live sys.meta_path walked: run_mode.h) every
// search and step begun from then on is a TalliedRun, which counts its
// finder asks, P's decisions, lookups, toggles and guards here itself,
// inline, as the writer would have, and still calls the sink for steps,
// imports and module bodies (rare, and importtime times each import); it
// opens and closes all it counts, so the frames the sink heard open are
// closed through the sink. The run past the cut then costs about what an
// untraced one does. Any other run calls the sink for every event, and the
// writer counts them here.
// (On cache lines of its own: the engine writes it at every event.)
struct alignas(64) TraceTally {
  enum Kind : uint8_t { Step, Import, Body, Ask, Lookup, Toggle, Guard, Wait, Decision, Call, Lock, Other, kKinds };
  // (The fields one event updates lie apart: next to each other, the
  // compiler adds them as one vector, which the next event's loads stall on.)
  uint64_t closed = 0;           // frames closed
  uint64_t opened[kKinds] = {};  // events that open a frame, by kind
  uint64_t merged = 0;           // closes right after their open, nothing in between
  uint64_t lines[kKinds] = {};   // events that stand alone, by kind (a guard's entry and exit each)
  uint64_t notes = 0;            // events that are neither (P's decision: an explorer row, no line)
  uint64_t ticks = 0;            // the simulated clock
  bool pending = false;          // the last event was an open
  Kind pending_kind = Other;

  void open(Kind k) {
    ++opened[k];
    pending = true;
    pending_kind = k;
  }
  void close() {
    ++closed;
    merged += pending ? 1 : 0;
    pending = false;
  }
  void line(Kind k) {
    ++lines[k];
    pending = false;
  }
  void note() { ++notes; }
  void flush() { pending = false; }  // a threaded run's switch: the open line is written then
  uint64_t all_opened() const {
    uint64_t n = 0;
    for (uint64_t x : opened) n += x;
    return n;
  }
  uint64_t all_lines() const {
    uint64_t n = 0;
    for (uint64_t x : lines) n += x;
    return n;
  }
  // Every event counted (an explorer row each).
  uint64_t events() const { return all_opened() + all_lines() + closed + notes; }
};

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  // Set once the sink writes nothing more of this run (TraceTally):
  // frequent events may then be counted there instead of heard.
  TraceTally* tally = nullptr;
  // A scenario step begins / ends (result: "ok", "found", "none", or an exception name).
  virtual void step_begin(const Engine&, const CStep&) {}
  virtual void step_end(const Engine&, const CStep&, const char* /*result*/) {}
  // _find_and_load_unlocked of `name` begins / ends (ok: the module was loaded).
  virtual void import_begin(const Engine&, NameId /*name*/) {}
  virtual void import_end(const Engine&, NameId /*name*/, bool /*ok*/) {}
  // _find_spec's loop asks `finder`, which it read at `index` of `walked`:
  // sys.meta_path, or the snapshot CPython 3.14 walks. The two are not
  // always the same list, and a thread reads the finder before it takes the
  // global import lock, so `walked` may hold another object at `index` by
  // the time of the ask (trace_detail::ask_stands), or be shorter than it.
  virtual void ask_begin(const Engine&, NameId /*name*/, FinderClass, FinderId /*finder*/, int64_t /*index*/,
                         const MetaPath& /*walked*/) {}
  virtual void ask_end(const Engine&, NameId /*name*/, FinderClass, AskAnswer) {}
  // Inside a proxy ask, before its branch runs: why it answers as it will.
  virtual void decide(const Engine&, NameId /*name*/, FindReason) {}
  // Once a hook object's find_spec has decided, why: inside its ask, or
  // inside a direct call (HookCall::Direct, CallNext) where no ask is open.
  virtual void hook_decide(const Engine&, FinderId /*finder*/, NameId /*name*/, HookReason) {}
  // `caller`'s action is about to ask the import system again (`called`:
  // the object a Direct call asks).
  virtual void hook_call(const Engine&, FinderId /*caller*/, NameId /*name*/, HookCall, FinderId /*called*/) {}
  // A hook object is about to acquire (or release) its own lock
  // (HookClass::lock) at `site`: around the actions for `name`, around its
  // install (`name` is kNoName), or after exec_module of `name`.
  virtual void hook_lock(const Engine&, FinderId /*finder*/, NameId /*name*/, bool /*acquire*/, HookLockSite) {}
  // _find_spec_for_specific_module begins / ends at lookup depth `depth`.
  virtual void lookup_begin(const Engine&, NameId /*name*/, uint64_t /*depth*/, uint8_t /*mark*/) {}
  virtual void lookup_end(const Engine&, NameId /*name*/, uint64_t /*depth*/, bool /*found*/) {}
  // An enable or a disable that removed a copy; `walked` names examined,
  // `copies` left in sys.meta_path after it.
  // toggle_begin comes before the walk (sys.modules and the cache as they were).
  virtual void toggle_begin(const Engine&, bool /*enable*/) {}
  virtual void toggle(const Engine&, bool /*enable*/, uint64_t /*walked*/, int64_t /*copies*/) {}
  // A use_torch_proxy_guard opens (before any toggle of its entry) and
  // closes (after its exit's toggles and restores).
  virtual void guard_begin(const Engine&, GuardSite, bool /*enable*/, GuardAction) {}
  virtual void guard_end(const Engine&, GuardSite, GuardAction) {}
  // A module body (exec of a tree file), a `call` function, or a served
  // loader's create_module (the module it creates is not in sys.modules
  // yet) starts / ends.
  virtual void body_begin(const Engine&, NameId /*module*/, BodyKind) {}
  virtual void body_end(const Engine&, NameId /*module*/, BodyKind) {}
  // A lazy statement or read (`name`: the module it is about, for Resolve
  // the one imported now; `read`: the expression read, for Resolve and
  // Attribute; for Bound, the name bound).
  virtual void lazy(const Engine&, LazyEvent, NameId /*name*/, const std::string& /*read*/) {}
  // The import an Eager, Resolve or Attribute event began is over, whether
  // it returned or raised, so that a trace can nest that import's events
  // under the statement or read that caused it (a limit, which runs no
  // `finally`, leaves it open as it leaves every frame).
  virtual void lazy_end(const Engine&, LazyEvent) {}
  // The running thread starts to wait / is woken and goes on (a lock's
  // acquire then tries again, as `_ModuleLock.acquire` loops). A wait that
  // never ends is part of a hang (ThreadedImport::hang_waits). Threaded runs, and a
  // run without threads whose main thread hangs on a hook's Lock (its
  // wait_begin only).
  virtual void wait_begin(const Engine&, const ThreadWait&) {}
  virtual void wait_end(const Engine&, const ThreadWait&) {}
  // _ModuleLock.acquire found a cycle (has_deadlock) instead of waiting.
  // `cycle[0]` is the wait the running thread did not begin (for
  // `cycle[0].module`, held by `cycle[0].on`); each next one is what the
  // previous holder waits for, round to a lock the running thread holds.
  // Raised as _DeadlockError, or `swallowed` by _lock_unlock_module, which
  // goes on with the module as it is.
  virtual void deadlock(const Engine&, const std::vector<ThreadWait>& /*cycle*/, bool /*swallowed*/) {}
  // Threaded runs only: `_find_and_load` of a module missing from
  // sys.modules, its lock waits included, where import.c's
  // import_find_and_load times it for `python -X importtime` (import_begin
  // comes once the module's lock is held, and only if the module is still
  // missing then).
  virtual void find_and_load_begin(const Engine&, NameId /*name*/) {}
  virtual void find_and_load_end(const Engine&, NameId /*name*/, bool /*ok*/) {}
};

}  // namespace impsim
