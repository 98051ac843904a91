# Runs a hook scenario's program (docs/scenario-format.md, "Hooks") on REAL
# CPython import machinery and prints what impsim's --json reports for it.
#
#   python -S -I -B hooks_real.py SCENARIO.json VARIANT [PARAMS_JSON]
#   python -S -I -B hooks_real.py --serve
#
# PARAMS_JSON: the params of the run to compare with (one sweep value's, as
# impsim's --json names them per run); default: the scenario's params.
#
# --serve: runs of the first form read from stdin, each in a fork of this
# process before any scenario ran (harness_common.serve; forked_runs.py).
#
# What is real here: importlib._bootstrap (_find_and_load, _find_spec over
# the live sys.meta_path, importlib.util.find_spec, module_from_spec,
# _load_unlocked), PathFinder over real files, BuiltinImporter and
# FrozenImporter. What is a re-statement: each hook finder class, generated
# from the scenario's declared behaviour by hook_runtime.py (the one Python
# re-statement of the hook language, which zoo_harness.py runs too). So a
# match checks impsim's ENGINE against the real import machinery for the
# declared hooks; it does not check that a declaration describes some real
# package's hook (that is tools/check/crosscheck --zoo, on the real packages).
#
# Counting is from outside (hook_runtime.py): _find_spec is wrapped
# (searches, max_depth), each hook object's find_spec is wrapped on the
# instance, and BuiltinImporter's, FrozenImporter's and PathFinder's at
# class level (finder_calls_by_object); _find_spec_legacy's ImportWarnings
# are counted (legacy_warnings).
#
# Only hook steps, import/find_spec/call and PEP 810's lazy steps (on
# CPython 3.15: lazy_steps.py; a hook's "use" action too) are run; a
# scenario with Paddle steps (enable, disable, guard, block) prints
# {"skip": reason}.
# Standard library only, Python >= 3.9.

import os as _os
import sys as _sys
import json as _json
import tempfile as _tempfile
import shutil as _shutil  # imported by tempfile already: no name of a scenario's is taken
import builtins as _builtins

_HERE = __file__.rpartition("/")[0] or "."
_sys.path.insert(0, _HERE)  # for these imports only: a scenario's names must not find this folder
import harness_common as _common  # noqa: E402
import hook_runtime as _hooks  # noqa: E402
import lazy_steps as _lazy_steps  # noqa: E402
del _sys.path[0]

_PADDLE_STEPS = ("enable", "disable", "guard", "block")


def _uses_paddle(steps):
    return any(any(k in s for k in _PADDLE_STEPS) or _uses_paddle(s.get("body", [])) or _uses_paddle(s.get("do", []))
               for s in steps)


def main(argv):
    sc = _json.load(open(argv[1]))
    variant = argv[2]
    if _common.uses_lazy(sc) and not hasattr(_sys, "set_lazy_imports"):
        print(_json.dumps({"skip": "lazy-import steps need CPython 3.15"}))
        return
    if _uses_paddle(sc["program"]) or any(_uses_paddle(e.get("body", [])) for e in sc["tree"].values()):
        print(_json.dumps({"skip": "Paddle steps are checked by tools/check/crosscheck"}))
        return
    if sc.get("builtin") or "P" in sc.get("meta_path", []):
        print(_json.dumps({"skip": "builtin names and P are not part of this check"}))
        return
    if _sys.platform == "emscripten" and any("lock" in h for h in sc.get("hooks", {}).values()):
        # A hook's lock is watched from a second thread (hook_runtime.run_watched).
        print(_json.dumps({"skip": "a hook lock needs a second thread to watch for a hang; "
                                   "this WebAssembly build cannot start threads"}))
        return
    root = _tempfile.mkdtemp(prefix="impsim-hooks-")
    try:
        _run(sc, variant, _json.loads(argv[3]) if len(argv) > 3 else sc.get("params", {}), root)
    finally:
        _shutil.rmtree(root, ignore_errors=True)


def _run(sc, variant, params, root):
    _common.write_tree(sc["tree"], root)
    rt = _hooks.Runtime(sc, variant, params)
    if _common.uses_lazy(sc):
        rt.lazy_steps.watch = _lazy_steps.LazyWatch()
    rt.make_hooks()
    _builtins.__impsim__ = rt
    _sys.path.insert(0, root)
    _sys.path_importer_cache.clear()
    _sys.meta_path[:] = [rt.object(i) for i in sc.get("meta_path", list(_hooks.PREDEFINED))]
    before = set(_sys.modules)
    _hooks.preload(sc)
    _hooks.count_predefined(rt.counts.by_object)
    watch = rt.lazy_steps.watch
    if watch is not None:
        # The hooks' own __import__ calls (import actions) are not resolutions.
        watch.install(skip_files=(_hooks.__file__,))
    error = rt.run_program(_sys.modules["__main__"].__dict__)
    lazy = watch.uninstall() if watch is not None else None
    ids = rt.order + [f for f in _hooks.PREDEFINED]  # with the objects new steps made
    c = rt.counts
    meta_path = [rt.ids.get(id(f), repr(f)) for f in _sys.meta_path]
    modules = [n for n in _sys.modules if n not in before]
    marks = {}
    for n, attrs in rt.attributes.items():
        if n in _sys.modules:
            # Each count as the module object now in sys.modules holds it.
            times = [(a, getattr(_sys.modules[n], "__impsim_mark_%s__" % a, 0)) for a in attrs]
            if any(k for _, k in times):
                marks[n] = "+".join(a if k == 1 else "%s*%d" % (a, k) for a, k in times if k)
    labels = {}
    for label, sums in rt.labels.items():
        labels[label] = {"searches": sums["searches"], "finder_calls": sums["finder_calls"],
                         "max_depth": sums["max_depth"], "hook_depth": sums["hook_depth"],
                         "hook_reentries": sums["hook_reentries"], "meta_path": sums["meta_path"],
                         "finder_calls_by_object": {f: sums["by_object"].get(f, 0) for f in ids}}
    print(_json.dumps({
        "searches": c.searches, "finder_calls": c.finder_calls, "max_depth": c.max_depth,
        "legacy_warnings": rt.legacy_warnings,
        "hook_depth": c.max_hook_depth, "hook_reentries": c.hook_reentries,
        "finder_calls_by_object": {f: c.by_object.get(f, 0) for f in ids},
        "labels": labels, "results": rt.results, "meta_path": meta_path,
        "modules": modules, "marks": marks, "error": error["type"] if error else None,
        "hang": rt.hang, "lazy": lazy,
    }, sort_keys=True))
    if rt.hang:
        _sys.stdout.flush()
        _shutil.rmtree(root, ignore_errors=True)
        _os._exit(0)  # the hung program holds the import lock: no shutdown


if __name__ == "__main__":
    if _sys.argv[1:] == ["--serve"]:
        _common.serve(main)
    else:
        main(_sys.argv)
