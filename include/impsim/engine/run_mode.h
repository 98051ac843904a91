// What a run fixes, known to the compiler where it can be.
//
// Most of what the engine's hot path tests is fixed for a whole run: the
// design (does find_spec check _resolving? does enable insert a copy that
// is already there?), the finder revision's rules, whether a trace is
// listening, whether hooks share sys.meta_path, whether CPython walks a
// snapshot of it, whether asks are answered from memory. Read from the
// engine, each is a load and a branch at every ask, lookup or toggle.
//
// So the functions of the hot path take the run's mode as a template
// parameter and read every such fact through it. A plain run (stepped,
// untraced, Paddle's finder alone, CPython iterating the live list: what
// every `impsim run` of a Paddle scenario is) gets a copy of the hot path
// per design and revision, with each of those facts a constant, and the
// tests it makes are folded away. Every other run takes AnyRun, whose facts
// are the engine's members, read as before. Engine::run picks the mode once,
// before the first step; the statements keep their order and their
// _bootstrap names in every copy.
//
// A traced run that is plain but for its trace (`impsim trace` or `explore`
// of a Paddle scenario) starts as AnyRun, every event heard. Once its sink
// has written all it will (TraceSink::tally, trace_sink.h), each search and
// each step begun from then on runs as the TalliedRun of its design and
// revision: a plain run that counts its events in the sink's tally, the
// steps, imports and module bodies still heard (EngineContext::tallied_).
#pragma once

#include <cstddef>
#include <iterator>

#include "impsim/scenario/axes.h"
#include "impsim/scenario/variant.h"

namespace impsim {

// Any run: every fixed fact read from the engine.
struct AnyRun {
  static constexpr bool plain = false;
  static constexpr bool tallied = false;
};

inline constexpr size_t kRevisionCount = std::size(kRevisions);
inline constexpr size_t kPlainRunCount = kPlainDesignCount * kRevisionCount;

// A plain run of design I / kRevisionCount on revision I % kRevisionCount;
// Tallied: traced, past its sink's cut (TalliedRun).
template <size_t I, bool Tallied = false>
struct PlainRun {
  static constexpr bool plain = true;
  static constexpr bool tallied = Tallied;
  static constexpr Design design = kPaddleDesigns[I / kRevisionCount].design;
  static constexpr RevisionRules rules = kRevisions[I % kRevisionCount].rules;
  using TalliedMode = PlainRun<I, true>;
};
template <size_t I>
using TalliedRun = PlainRun<I, true>;

// Every mode, for the explicit instantiations at the end of each file of
// the hot path (X is called once per mode type).
#define IMPSIM_EACH_RUN_MODE(X)                                                                            \
  X(AnyRun)                                                                                                \
  X(PlainRun<0>) X(PlainRun<1>) X(PlainRun<2>) X(PlainRun<3>) X(PlainRun<4>) X(PlainRun<5>)                \
  X(PlainRun<6>) X(PlainRun<7>) X(PlainRun<8>) X(PlainRun<9>) X(PlainRun<10>) X(PlainRun<11>)              \
  X(TalliedRun<0>) X(TalliedRun<1>) X(TalliedRun<2>) X(TalliedRun<3>) X(TalliedRun<4>) X(TalliedRun<5>)    \
  X(TalliedRun<6>) X(TalliedRun<7>) X(TalliedRun<8>) X(TalliedRun<9>) X(TalliedRun<10>) X(TalliedRun<11>)
static_assert(kPlainRunCount == 12,
              "a design or revision was added: list its PlainRun and TalliedRun in IMPSIM_EACH_RUN_MODE");

// Calls `f.template operator()<M>()` with the PlainRun of (design, rules),
// or AnyRun if no plain run has them.
template <size_t I = 0, class F>
void with_plain_run(const Design& design, const RevisionRules& rules, F&& f) {
  if constexpr (I == kPlainRunCount) {
    f.template operator()<AnyRun>();
  } else {
    if (design == PlainRun<I>::design && rules == PlainRun<I>::rules) f.template operator()<PlainRun<I>>();
    else with_plain_run<I + 1>(design, rules, f);
  }
}

}  // namespace impsim
