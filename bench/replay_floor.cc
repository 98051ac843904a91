// The replay floor: one program shape, stepped with nothing general.
//
// Every function below stands for the finder or importlib function named in
// its comment and makes the same asks, lookups and toggles, in the same
// order, as the step engine does for nested_guards and the seed incident;
// what it leaves out is everything that shape cannot reach. sys.meta_path
// is a count of Paddle's copies ahead of the three builtin finders; the
// scope is a bit set (bit 0 `pkg`, bit i+1 `other{i}`: only `pkg` covers
// the two names ever asked); sys.modules is its size and whether `pkg` is
// in it; a spec is how many SpecificModuleLoader wrappers its loader has
// (-1: None), since each nested lookup that returns it wraps it once more
// and each wrapper runs its own guard when the module executes.
#include "replay_floor.h"

#include <algorithm>

namespace impsim::floor {

namespace {

enum Name { kPkg, kMissing };
constexpr int kNone = -1;

struct Guard {
  bool noop, enable, old_global;
  uint64_t old_scope;
};

class Replay {
 public:
  Replay(uint64_t filler, bool fix) : sys_modules_(1 + filler), fix_(fix) {}

  Result run(int k) {
    nest(0, k);
    return {c_, probe_};
  }

 private:
  // A "nest" step: k use_torch_proxy_guard(enable=True, scope=[pkg, other{i}]).
  void nest(int i, int k) {
    if (i == k) {
      import_statement();
      probe();
      return;
    }
    Guard g = guard_enter(true, true, 1 | (uint64_t{1} << (i + 1)));
    nest(i + 1, k);
    guard_exit(g);
  }

  // {"find_spec": "pkg.missing", "label": "probe"}: the label's counters are
  // the step's difference; its max_depth the deepest lookup inside it.
  void probe() {
    const Counters before = c_;
    c_.max_depth = 0;
    const uint64_t run_max = before.max_depth;
    util_find_spec(kMissing);
    probe_ = {c_.asks - before.asks, c_.suppressed - before.suppressed, c_.lookups - before.lookups,
              c_.toggles - before.toggles, c_.walks - before.walks, c_.comparisons - before.comparisons, c_.max_depth};
    c_.max_depth = std::max(run_max, c_.max_depth);
  }

  void import_statement() {
    if (!pkg_loaded_) _find_and_load(kPkg);
  }

  // _find_and_load for `pkg`, a top-level package: _find_spec, then
  // _load_unlocked (sys.modules gains it before its loader runs).
  void _find_and_load(Name name) {
    if (pkg_loaded_) return;
    const int spec = _find_spec(name);
    ++sys_modules_;
    pkg_loaded_ = true;
    exec_module(spec);
  }

  // SpecificModuleLoader.exec_module, once per wrapper: the body under
  // use_torch_proxy_guard(enable=True), then the mark (which no ask of this
  // shape reads: neither name is a torch name).
  void exec_module(int wrappers) {
    if (wrappers <= 0) return;  // the source loader: pkg's body is empty
    Guard g = guard_enter(true, false, 0);
    exec_module(wrappers - 1);
    guard_exit(g);
  }

  // importlib.util.find_spec: sys.modules, the parent imported, _find_spec.
  int util_find_spec(Name name) {
    if (name == kPkg && pkg_loaded_) return 0;
    if (name == kMissing) _find_and_load(kPkg);
    return _find_spec(name);
  }

  // _find_spec over the live sys.meta_path: the copies at its head are
  // asked one by one (the count re-read each time, as the list's length
  // is), then PathFinder answers: pkg is in the tree, pkg.missing is not.
  int _find_spec(Name name) {
    int spec = kNone;
    for (int i = 0;; ++i) {
      if (i < copies_) {
        spec = find_spec(name);
        if (spec != kNone) break;
        continue;
      }
      spec = name == kPkg ? 0 : kNone;
      break;
    }
    return spec;
  }

  // TorchProxyMetaFinder.find_spec: the fix's resolving test, then the
  // scope (blocked covers neither name).
  int find_spec(Name name) {
    ++c_.asks;
    if (fix_ && resolving_[name]) {
      ++c_.suppressed;
      return kNone;
    }
    if (scope_ & 1) return _find_spec_for_specific_module(name);
    return kNone;  // not a torch name
  }

  // _find_spec_for_specific_module: the lookup under
  // use_torch_proxy_guard(enable=False), the spec's loader wrapped.
  int _find_spec_for_specific_module(Name name) {
    ++c_.lookups;
    if (++depth_ > c_.max_depth) c_.max_depth = depth_;
    Guard g = guard_enter(false, false, 0);
    if (fix_) resolving_[name] = true;
    int spec = util_find_spec(name);
    if (fix_) resolving_[name] = false;
    if (spec != kNone) ++spec;
    guard_exit(g);
    --depth_;
    return spec;
  }

  // use_torch_proxy_guard, entry (b52ce17 saves a copy of the scope).
  Guard guard_enter(bool enable_, bool has_scope, uint64_t scope) {
    Guard g{false, enable_, global_, scope_};
    const bool had = copies_ > 0;
    if (enable_ == had && ((global_ && !has_scope) || scope_ == (has_scope ? scope : 0))) {
      g.noop = true;
      return g;
    }
    if (enable_) enable(has_scope, scope);
    else disable();
    return g;
  }

  // use_torch_proxy_guard, exit.
  void guard_exit(const Guard& g) {
    if (g.noop) return;
    if (!g.enable) enable(false, 0);
    scope_ = g.old_scope;
    global_ = g.old_global;
    if (g.enable) disable();
  }

  // One pass over sys.modules (_swap_torch_modules_to_cache and its undo).
  void walk() {
    ++c_.toggles;
    ++c_.walks;
    c_.comparisons += sys_modules_;
  }

  // enable_torch_proxy: the walk, _modify_scope_of_torch_proxy, then
  // sys.meta_path.insert(0, finder) whether or not it is there.
  void enable(bool has_scope, uint64_t scope) {
    walk();
    if (copies_ == 0 || global_) {
      scope_ = has_scope ? scope : 0;
      global_ = !has_scope;
    } else if (!has_scope) {
      global_ = true;
    } else {
      scope_ |= scope;
    }
    ++copies_;
  }

  // disable_torch_proxy: removes one copy, then the walk.
  void disable() {
    if (copies_ == 0) return;
    --copies_;
    walk();
  }

  uint64_t sys_modules_;  // numpy and the filler, then pkg
  bool fix_;
  bool pkg_loaded_ = false;
  int copies_ = 0;
  uint64_t scope_ = 0;
  bool global_ = false;
  bool resolving_[2] = {false, false};
  uint64_t depth_ = 0;
  Counters c_, probe_;
};

}  // namespace

Result replay_nested_guards(int k, uint64_t filler, bool resolving_fix) {
  return Replay(filler, resolving_fix).run(k);
}

}  // namespace impsim::floor
