# The real side of a threaded crosscheck for a scenario of Paddle's torch
# proxy finder: threads_real.py's runtime (real threads forced through a
# point log's schedule) with the REAL proxy.py, loaded unmodified from its
# path by real_finder.py as harness.py loads it (tools/check/crosscheck
# --finder-source), driving the scenario's enable, disable, guard and block
# steps.  Loaded by threads_real.py, by path, when its OPTIONS have
# "finder_source"; OPTIONS "variant": "before" or "after" (the fix: the
# finder's `_resolving` names in a threading.local, as the reference PR
# keeps them), optionally "@REVISION" (harness.py's designs).
#
# The tree stays in memory, as threads_real.py's, with one addition the
# proxy needs: each package's __path__ is a location of its own
# ("<impsim tree>/paddle/nn"), and a search given a path looks the last part
# of the name up under the package that location belongs to, as PathFinder
# looks it up in a folder.  A proxy for torch.nn carries paddle.nn's
# __path__, so `import torch.nn.functional` finds paddle/nn/functional and
# runs its body again under the torch name, as on disk.
#
# Standard library only, Python >= 3.9.

import importlib.machinery as _machinery
import importlib.util as _util
import sys as _sys
import types as _types

_ROOT = "<impsim tree>"


def _location(name):
    return _ROOT + "/" + name.replace(".", "/")


class _TreePathFinder:
    """PathFinder's place in sys.meta_path: the scenario's tree, found by
    location (a top-level name with no path, a submodule under its
    parent's __path__); `loader` runs a tree entry's body under the name
    it was found as (threads_real.py's)."""

    def __init__(self, rt, loader):
        self.rt, self.loader = rt, loader
        self.by_location = {_location(n): n for n in rt.tree}

    def __repr__(self):
        return "PathFinder"

    def find_spec(self, fullname, path=None, target=None):
        last = fullname.rpartition(".")[2]
        if path is None:
            names = [fullname] if "." not in fullname else []
        else:
            names = [self.by_location[p] + "." + last for p in path if p in self.by_location]
        for name in names:
            entry = self.rt.tree.get(name)
            if entry is None:
                continue
            package = bool(entry.get("package", False))
            spec = _util.spec_from_loader(fullname, self.loader(self.rt, name), is_package=package)
            if package:
                spec.submodule_search_locations = [_location(name)]
            return spec
        return None


def _load(here, name):
    spec = _util.spec_from_file_location("_impsim_" + name, here + "/" + name + ".py")
    module = _util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def runtime(base, tree_loader, scenario, log, options):
    """threads_real.py's runtime `base` for a Paddle scenario, its finder
    the real one at options["finder_source"]; `tree_loader`: threads_real.py's."""
    here = __file__.rpartition("/")[0] or "."
    harness = _load(here, "harness")
    real_finder = _load(here, "real_finder")

    class PaddleSteps(base.__bases__[0]):
        """The finder's steps, between threads_real.py's (each step a
        point; start, join) and hook_runtime.py's (import, call ...)."""

        def action(self, step, ptr, g):
            if "enable" in step or "disable" in step or "block" in step:
                return self.paddle.action(step, ptr, g)  # harness.py's, on the real finder
            if "guard" in step:  # its body run here, by this runtime's thread
                guard = step["guard"]
                levels = self.paddle.num(step["nest"]) if "nest" in step else 0
                self.guards(1, levels, guard.get("enable", True), guard.get("scope"), step.get("body", []), ptr, g)
                return "ok"
            return super().action(step, ptr, g)

        def guards(self, level, levels, enable, scope, body, ptr, g):
            """One guard, or `nest` of them (harness.py's nest: level 1
            outermost, "{i}" in the scope is the level), around the body."""
            if levels and level > levels:
                self.block(body, ptr + "/body", g)
                return
            given = None
            if scope is not None:
                given = set(s.replace("{i}", str(level)) for s in scope) if levels else set(scope)
            with self.paddle.backend.guard(enable, given):
                if levels:
                    self.guards(level + 1, levels, enable, scope, body, ptr, g)
                else:
                    self.block(body, ptr + "/body", g)

    class PaddleThreads(base, PaddleSteps):
        def __init__(self):
            super().__init__(scenario, log, options)
            # harness.py's runtime holds what the real finder counts through
            # and what the re-statement would keep; its backend is the real
            # proxy.py, and its steps run here, on this runtime's threads.
            self.paddle = harness._Runtime({"scenario": scenario, "variant": options.get("variant", "before"),
                                            "params": scenario.get("params", {})})
            self.paddle.backend = real_finder.RealFinder(self.paddle, options["finder_source"])
            self.paddle.take_foreign()  # what the walks count past: the interpreter's modules
            self.objects["PathFinder"] = _TreePathFinder(self, tree_loader)
            self.ids[id(self.objects["PathFinder"])] = "PathFinder"
            self.reported = frozenset(scenario.get("sys_modules", {}).get("torch", []))

        def preload(self):
            """The scenario's real torch modules and its fillers, as
            harness.py puts them in sys.modules (the single-threaded
            crosscheck's), before the program runs: a walk of the finder
            examines them all, and moves the torch ones to its cache."""
            sysmods = scenario.get("sys_modules", {})
            for name in sysmods.get("torch", []):
                if name not in _sys.modules:
                    spec = _machinery.ModuleSpec(name, harness._BodilessLoader(), is_package=True)
                    _sys.modules[name] = _util.module_from_spec(spec)
            for name in sorted(self.paddle.fillers):
                _sys.modules[name] = _types.ModuleType(name)

    return PaddleThreads()
