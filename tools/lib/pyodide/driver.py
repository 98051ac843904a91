"""The inside of tools/lib/pyodide/python: what `python -S -I -B SCRIPT ARGS`
and `python -S -I -c CODE` do, on a CPython compiled to WebAssembly
(pyodide) that Node has loaded once.

A WebAssembly interpreter takes seconds to load and cannot fork, so one
loaded interpreter serves many runs. Each run starts from the state the
interpreter had when this file set it up (sys.modules, sys.meta_path,
sys.path, sys.path_hooks, the importer cache, builtins and importlib's own
modules): what a run imports, installs or patches is undone after it, and
the next run checks that it was.

Set-up makes the interpreter look like `python -S -I -B`: no site-packages
and no script folder on sys.path, no bytecode written, and sys.meta_path
holding only CPython's three finders. Pyodide adds finders of its own
(JsFinder, which imports JavaScript modules, and on some releases
WindowsToLinuxPathFinder); they answer no name a scenario uses, but they
would be asked, so they are taken out and named in `removed_finders`.
"""

import builtins
import gc
import io
import json
import os
import runpy
import sys
import traceback
import warnings
import importlib
import importlib.machinery
import importlib.util

_CPYTHON_FINDERS = (importlib.machinery.BuiltinImporter, importlib.machinery.FrozenImporter,
                    importlib.machinery.PathFinder)
_PATCHABLE = ("importlib._bootstrap", "importlib._bootstrap_external", "importlib",
              "importlib.util", "importlib.machinery", "sys")

removed_finders = []
_kept_modules = []


def _setup():
    sys.dont_write_bytecode = True
    sys.path[:] = [p for p in sys.path if p.startswith("/lib/python") and not p.endswith("/site-packages")]
    for finder in list(sys.meta_path):
        if not any(finder is f for f in _CPYTHON_FINDERS):
            removed_finders.append(getattr(type(finder), "__qualname__", "?") if not isinstance(finder, type)
                                   else finder.__qualname__)
            sys.meta_path.remove(finder)
    if len(sys.meta_path) != 3 or any(a is not b for a, b in zip(sys.meta_path, _CPYTHON_FINDERS)):
        raise SystemExit("pyodide python: sys.meta_path is %r after set-up" % (sys.meta_path,))
    sys.path_importer_cache.clear()
    os.chdir("/")


class _State:
    """What a run may change and the next run must not see."""

    def __init__(self):
        self.modules = dict(sys.modules)
        self.meta_path = list(sys.meta_path)
        self.path = list(sys.path)
        self.path_hooks = list(sys.path_hooks)
        self.importer_cache = dict(sys.path_importer_cache)
        self.builtins = dict(builtins.__dict__)
        self.dicts = {name: dict(sys.modules[name].__dict__) for name in _PATCHABLE if name in sys.modules}
        self.recursion_limit = sys.getrecursionlimit()
        self.filters = list(warnings.filters)
        self.argv = list(sys.argv)
        self.streams = (sys.stdout, sys.stderr, sys.stdin)

    def restore(self):
        sys.settrace(None)
        sys.setprofile(None)
        sys.stdout, sys.stderr, sys.stdin = self.streams
        for name, saved in self.dicts.items():
            module = self.modules[name]
            if name == "sys":  # only what a run may rebind; not the interpreter's own slots
                for key in set(module.__dict__) - set(saved):
                    delattr(module, key)
                for key in ("meta_path", "path", "path_hooks", "path_importer_cache", "modules", "argv"):
                    setattr(module, key, saved[key])
                continue
            module.__dict__.clear()
            module.__dict__.update(saved)
        # The modules a run imported stay alive, out of sys.modules: freeing
        # an extension module that was loaded from lib-dynload crashes these
        # builds ("null function or function signature mismatch", seen on
        # 3.13.2 after six.moves' imports), where a process that exits never
        # frees it.
        _kept_modules.extend(m for name, m in sys.modules.items() if name not in self.modules)
        sys.modules.clear()
        sys.modules.update(self.modules)
        sys.meta_path[:] = self.meta_path
        sys.path[:] = self.path
        sys.path_hooks[:] = self.path_hooks
        sys.path_importer_cache.clear()
        sys.path_importer_cache.update(self.importer_cache)
        builtins.__dict__.clear()
        builtins.__dict__.update(self.builtins)
        sys.setrecursionlimit(self.recursion_limit)
        warnings.filters[:] = self.filters
        if hasattr(warnings, "_filters_mutated"):
            warnings._filters_mutated()
        sys.argv[:] = self.argv
        os.chdir("/")
        gc.collect()

    def differs(self):
        """Why the interpreter is not in this state, or None."""
        if set(sys.modules) != set(self.modules):
            extra = sorted(set(sys.modules) ^ set(self.modules))
            return "sys.modules differs: %s" % ", ".join(extra[:5])
        if sys.meta_path != self.meta_path or sys.path != self.path or sys.path_hooks != self.path_hooks:
            return "sys.meta_path, sys.path or sys.path_hooks differs"
        return None


_setup()
_start = _State()


def _exit_status(exc, err):
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    err.write(str(code) + "\n")
    return 1


def run(kind, argv, cwd):
    """One run as `python -S -I -B` would make it: kind "script" (argv[0]
    the script) or "code" (argv[0] the -c text). Returns JSON:
    {"rc", "out", "err"}."""
    why = _start.differs()
    if why:
        return json.dumps({"rc": 1, "out": "", "err": "pyodide python: a run left state behind (%s)\n" % why})
    out, err = io.StringIO(), io.StringIO()
    sys.stdout, sys.stderr = out, err
    sys.stdin = io.StringIO("")
    rc = 0
    try:
        os.chdir(cwd or "/")
        if kind == "code":
            sys.argv[:] = ["-c"] + list(argv[1:])
            main = type(sys)("__main__")
            saved_main = sys.modules["__main__"]
            sys.modules["__main__"] = main
            try:
                exec(compile(argv[0], "<string>", "exec"), main.__dict__)
            finally:
                sys.modules["__main__"] = saved_main
        else:
            sys.argv[:] = list(argv)
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as exc:
        rc = _exit_status(exc, err)
    except BaseException:
        traceback.print_exc(file=err)
        rc = 1
    finally:
        sys.stdout.flush()
        _start.restore()
    return json.dumps({"rc": rc, "out": out.getvalue(), "err": err.getvalue()})
