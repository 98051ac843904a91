# impsim zoo harness: runs ONE run (one variant, one set of params) of a hook
# scenario (scenarios/zoo/*.json) inside a fresh CPython process, with the
# REAL hook package when the scenario's "real" key binds it, and prints the
# run's report as JSON (the fields of `impsim run FILE --json` that
# tools/check/crosscheck --zoo compares).
#
#   /usr/bin/python3 -S -I -B zoo_harness.py CONFIG.json
#
# CONFIG: {"scenario": {...}, "variant": NAME, "params": {...},
#          "tree_root": DIR (the tree's .py files already written),
#          "mode": "real" | "restated"}
#
# mode "real": every finder id the scenario's "real"."bind" names is the
# package's own object, installed and removed by the package's own
# functions (bind.install / bind.uninstall: Python statements); nothing of
# the package is edited.  mode "restated": every hook is a generic Python
# re-statement of the hook language (hook_runtime.py, which hooks_real.py
# runs too); this checks impsim's
# importlib against CPython's, not the hook against its package.
#
# Counting, from outside: importlib._bootstrap._find_spec and
# importlib.util._find_spec are wrapped (searches, max_depth); each finder
# object seen in sys.meta_path gets an instance attribute find_spec (or
# find_module, for a legacy finder) that counts and calls the original;
# BuiltinImporter, FrozenImporter and PathFinder's find_spec are wrapped at
# class level (predefined_calls, every call, direct ones included);
# _find_spec_legacy's ImportWarnings are counted (legacy_warnings).
# Objects are seen when a search starts and after each step.  Everything
# the harness and the bound packages' set-up need is imported before
# counting starts (real.setup, real.preimport).
#
# Must run on Python >= 3.9, standard library only.

import os as _os
import sys as _sys
import builtins as _builtins
import importlib as _importlib
import importlib._bootstrap as _bootstrap
import importlib.util as _util
import json as _json
import threading as _threading  # noqa: F401 (loaded before counting)
import warnings as _warnings
import functools as _functools  # noqa: F401

_HERE = __file__.rpartition("/")[0] or "."
_sys.path.insert(0, _HERE)  # for this import only: a scenario's names must not find this folder
import hook_runtime as _hooks  # noqa: E402
import harness_common as _common  # noqa: E402
del _sys.path[0]

_PREDEFINED = _hooks.PREDEFINED


class _Runtime(_hooks.Runtime):
    """The hook runtime, with the finder ids the scenario's "real"."bind"
    names bound to the package's own objects (mode real)."""

    def __init__(self, config):
        scenario = config["scenario"]
        super().__init__(scenario, config["variant"], config["params"])
        self.mode = config["mode"]
        real = scenario.get("real", {}) if self.mode == "real" else {}
        bind = real.get("bind", {})
        over = bind.get("variants", {}).get(self.variant, {})
        self.bind_finders = dict(bind.get("finders", {}))
        self.bind_install = dict(bind.get("install", {}))
        self.bind_install.update(over.get("install", {}))
        self.bind_uninstall = dict(bind.get("uninstall", {}))
        self.bind_uninstall.update(over.get("uninstall", {}))
        self.tree_root = config["tree_root"]
        self.external = list(real.get("external", [])) + list(real.get("copy", {})) \
            + list(real.get("generate", {}))
        self.mark_exprs = dict(real.get("marks", {}))
        self.class_seen = {}       # class name -> objects seen, in order
        self.ns = {"sys": _sys}
        # config "record": the run's import graph (tools/gen/zoo_import_graph)
        self.graph = [] if config.get("record") else None

    def start_counting(self):
        stop = super().start_counting()
        if self.graph is None:
            return stop
        return _record_import_graph(self.graph, stop)

    def on_search(self):
        self.observe()

    def after_step(self):
        self.observe()

    def observe(self):
        """Name and wrap every finder object in sys.meta_path not seen yet."""
        for obj in list(_sys.meta_path):
            if id(obj) in self.ids:
                continue
            fid = None
            for candidate, spec in self.bind_finders.items():
                if candidate in self.objects and not spec.endswith("#*"):
                    continue
                if spec.startswith("class:"):
                    # "class:Name#k": the k-th object of a class of that name
                    # seen; "class:Name#*": every one of them.
                    cls_name, _, nth = spec[6:].partition("#")
                    if type(obj).__name__ != cls_name:
                        continue
                    seen = self.class_seen.setdefault(cls_name, [])
                    if nth == "*" and candidate.endswith("#*"):
                        # "ID#*": the objects a `new` step of ID stands for,
                        # ID#1, ID#2, ... in the order they are seen
                        fid = "%s#%d" % (candidate[:-2], len(seen) + 1)
                        break
                    if nth == "*" or int(nth or 0) == len(seen):
                        fid = candidate
                        break
                else:
                    try:
                        if eval(spec, {"sys": _sys}) is obj:
                            fid = candidate
                            break
                    except Exception:
                        pass
            self.class_seen.setdefault(type(obj).__name__, []).append(obj)
            if fid is None:
                fid = "?%s#%d" % (type(obj).__name__,
                                  len(self.class_seen[type(obj).__name__]) - 1)
            self.name_object(fid, obj)

    def object(self, fid):
        self.observe()
        spec = self.bind_finders.get(fid, "")
        if fid not in self.objects and spec and not spec.startswith("class:"):
            try:  # not in sys.meta_path yet: a raw insert/append of it
                self.name_object(fid, eval(spec, {"sys": _sys}))
            except Exception:
                pass
        if fid not in self.objects:
            raise RuntimeError("zoo harness: finder %r not seen in sys.meta_path "
                               "yet (bind it by expression)" % fid)
        return self.objects[fid]

    def new(self, fid, same_class=False):
        if fid + "#*" in self.bind_finders:
            # The package's own call (an install) makes the object, which is
            # named ID#k when it is seen.
            self.made[fid] = self.made.get(fid, 0) + 1
            return
        if fid in self.bind_finders and same_class:
            # `type(obj)()`: the package's class, already defined, called again
            k = self.made[fid] = self.made.get(fid, 0) + 1
            self.name_object("%s#%d" % (fid, k), type(self.object(fid))())
            return
        if fid in self.bind_finders:
            raise RuntimeError("zoo harness: a new step for %r, which the package's own "
                               "code makes (bind its objects as %r#k)" % (fid, fid))
        super().new(fid, same_class)

    def lock_wait(self, frame):
        """A bound object of a hook declaring "lock" waiting on a line of its
        own that takes a lock (virtualenv's `with self.lock[0]:`), named as
        impsim names the declared lock."""
        found = super().lock_wait(frame)
        obj = frame.f_locals.get("self")
        fid = self.ids.get(id(obj))
        if found is not None or fid is None or fid in _PREDEFINED:
            return found
        spec = self.hook_of(fid).get("lock")
        try:
            with open(frame.f_code.co_filename, encoding="utf-8") as f:
                line = f.read().splitlines()[frame.f_lineno - 1]
        except (OSError, IndexError):
            return None
        if spec is None or "lock" not in line:
            return None
        kind = "threading.RLock" if spec["type"] == "RLock" else "threading.Lock"
        if spec.get("per", "class") == "object":
            return "the %s of %s" % (kind, fid), None
        first = [f for f in self.order if type(self.objects[f]) is type(obj)][0]
        if "#" in first:
            return "the %s of %s's class" % (kind, first), None
        return "the %s of class %s" % (kind, self.finders[first]["hook"]), None

    def install(self, fid, claim=None):
        if fid in self.bind_install:
            # "{claim}" in the binding: the name the step claims
            # (register_post_import_hook(hook, '{claim}'))
            exec(self.bind_install[fid].replace("{claim}", claim or ""), self.ns)
            if claim is not None:
                self.claim(fid, claim)  # the modules the report owns
            self.observe()
            return
        super().install(fid, claim)

    def uninstall(self, fid):
        if fid in self.bind_uninstall:
            exec(self.bind_uninstall[fid], self.ns)
            return
        super().uninstall(fid)


def _found_by(spec):
    """Which finder made a spec, in the words of the scenario format."""
    if spec is None:
        return None
    loader = spec.loader
    if loader is _bootstrap.BuiltinImporter:
        return "builtin"
    if loader is _bootstrap.FrozenImporter:
        return "frozen"
    if type(loader).__module__ in ("_frozen_importlib_external", "importlib._bootstrap_external"):
        return "path"
    return "hook"


def _record_import_graph(graph, stop_counting):
    """Wraps the counting _find_spec and _load_unlocked, so that each search
    is logged with the module whose loading it happened in (None: a step of
    the program), and each load with its outcome.  Returns the stop."""
    counting, load = _bootstrap._find_spec, _bootstrap._load_unlocked
    loading = [None]

    def _find_spec(name, path, target=None):
        spec = counting(name, path, target)
        graph.append({"search": name, "in": loading[-1], "found_by": _found_by(spec),
                      "package": spec is not None and spec.submodule_search_locations is not None})
        return spec

    def _load_unlocked(spec):
        graph.append({"load": spec.name, "in": loading[-1]})
        loading.append(spec.name)
        try:
            return load(spec)
        except BaseException as exc:
            graph.append({"load_failed": spec.name, "error": type(exc).__name__})
            raise
        finally:
            loading.pop()

    _bootstrap._find_spec = _util._find_spec = _find_spec
    _bootstrap._load_unlocked = _load_unlocked

    def stop():
        _bootstrap._load_unlocked = load
        stop_counting()
    return stop


def _wrapper_modules(func):
    """The __module__ of each function in a chain of wrappers, each holding
    the one it wraps in a closure cell (virtualenv's patch_dist)."""
    found = []
    while callable(func) and len(found) < 100:
        found.append(getattr(func, "__module__", None))
        inner = None
        for cell in getattr(func, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:
                continue
            if callable(value) and not isinstance(value, type):
                inner = value
        func = inner
    return found


def _report(rt, error):
    c = rt.counts
    counters = {"searches": c.searches, "finder_calls": c.finder_calls,
                "max_depth": c.max_depth, "hook_depth": c.max_hook_depth,
                "hook_reentries": c.hook_reentries}
    by_object = dict(c.by_object)
    predefined = dict(c.predefined)
    meta_path = rt.meta_path_ids()
    # The scenario's modules: the names of its tree, of its preloaded and
    # builtin lists and of what its hooks claim by name (served modules), and every module
    # loaded from a tree file under any name (distutils.core from the tree's
    # setuptools/_distutils/core.py); not what the real set-up imported.
    owned = set(rt.tree) | set(rt.external) \
        | set(rt.scenario.get("sys_modules", {}).get("preloaded", [])) \
        | set(rt.scenario.get("builtin", []))
    for hook in rt.hooks.values():
        owned.update(hook.get("claims", {}).get("names", ()))
    root = rt.tree_root + "/"
    modules = sorted(n for n, m in list(_sys.modules.items())
                     if n in owned or (getattr(m, "__file__", None) or "").startswith(root))
    marks = {}
    for name in modules:
        module = _sys.modules[name]
        d = getattr(module, "__dict__", {})
        # mark -> times set: the re-statement's wrappers count in the
        # attribute; an expression gives a count or a truth (once).
        found = {k[len("__impsim_mark_"):-2]: int(v) for k, v in d.items()
                 if k.startswith("__impsim_mark_")}
        for mark, expr in rt.mark_exprs.items():
            try:
                value = eval(expr, {"m": module, "sys": _sys,
                                    "wrapper_modules": _wrapper_modules})
            except Exception:
                continue
            if value:
                times = value if type(value) is int else 1
                found[mark] = max(found.get(mark, 0), times)
        if found:
            marks[name] = "+".join(m if k == 1 else "%s*%d" % (m, k)
                                   for m, k in sorted(found.items()) if k)
    labels = {}
    for label, sums in rt.labels.items():
        labels[label] = {k: sums[k] for k in ("searches", "finder_calls", "max_depth", "hook_depth",
                                              "hook_reentries", "meta_path")}
    return {
        "counters": counters,
        "finder_calls_by_object": by_object,
        "predefined_calls": predefined,
        "labels": labels,
        "outcome": {"modules": modules, "marks": marks, "results": rt.results,
                    "meta_path": meta_path, "error": error, "hang": rt.hang},
    }


def _main(argv):
    with open(argv[1]) as f:
        config = _json.load(f)
    scenario = config["scenario"]
    real = scenario.get("real", {}) if config["mode"] == "real" else {}
    if len(_sys.meta_path) != 3:
        raise SystemExit("zoo harness: unexpected sys.meta_path %r" % (_sys.meta_path,))
    _sys.path.insert(0, config["tree_root"])
    if real:
        _sys.path.append(real.get("site", "/usr/lib/python3/dist-packages"))
    rt = _Runtime(config)
    _builtins.__impsim__ = rt
    # Before the set-up: a package that keeps PathFinder.find_spec (pytest's
    # _find_spec) keeps the counting one.
    _hooks.count_predefined(rt.counts.predefined)
    # What the scenario takes as already imported, and the set-up the real
    # package needs, before counting starts.
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")
        for name in real.get("preimport", []):
            _importlib.import_module(name)
        if "setup" in real:
            exec(real["setup"], rt.ns)
    _hooks.preload(scenario)
    rt.make_hooks(skip=set(rt.bind_finders) | {f[:-2] for f in rt.bind_finders if f.endswith("#*")})
    rt.counts.predefined.clear()  # the set-up's own calls
    rt.observe()
    # The scenario's initial list: what the real set-up left (packages that
    # install finders when imported), else built from the re-stated objects.
    initial = scenario.get("meta_path", list(_PREDEFINED))
    now = [rt.ids.get(id(f)) for f in _sys.meta_path]
    if now != initial:
        if now != list(_PREDEFINED):
            raise SystemExit("zoo harness: the real set-up left sys.meta_path as "
                             "%r, the scenario starts from %r" % (now, initial))
        _sys.meta_path[:] = [rt.object(fid) for fid in initial]
    error = rt.run_program(_sys.modules["__main__"].__dict__)
    report = _report(rt, error)
    report["counters"]["legacy_warnings"] = rt.legacy_warnings
    report["python"] = "%d.%d.%d" % _sys.version_info[:3]
    if rt.graph is not None:
        report["import_graph"] = rt.graph
    _sys.stdout.write(_json.dumps(report) + "\n")
    _sys.stdout.flush()
    if rt.hang:
        _os._exit(0)  # the hung program holds the import lock: no shutdown


if __name__ == "__main__":
    if _sys.argv[1:] == ["--serve"]:  # runs in forks of this process (harness_common.serve)
        _common.serve(_main)
    else:
        _main(_sys.argv)
