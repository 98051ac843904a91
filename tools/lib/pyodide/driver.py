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

A server (serve(), before its first run) differs from `python -B` in one
thing a run could see: sys.pycache_prefix names a folder in the
interpreter's memory, holding the compiled modules of the script's own
folder, so that they are not compiled again at every run.
"""

import builtins
import gc
import io
import json
import os
import runpy
import sys
import tempfile
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
        self.recursion_limit = _real_getrecursionlimit()
        self.filters = list(warnings.filters)
        self.argv = list(sys.argv)
        self.streams = (sys.stdout, sys.stderr, sys.stdin)
        # PEP 810 (3.15): the set of lazily imported names, the mode and the filter.
        self.lazy = None
        if hasattr(sys, "lazy_modules"):
            self.lazy = (set(sys.lazy_modules), sys.get_lazy_imports(), sys.get_lazy_imports_filter())

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
        if self.lazy is not None:
            names, mode, flt = self.lazy
            sys.lazy_modules.clear()
            sys.lazy_modules.update(names)
            sys.set_lazy_imports(mode)
            sys.set_lazy_imports_filter(flt)
        _real_setrecursionlimit(self.recursion_limit)
        warnings.filters[:] = self.filters
        if hasattr(warnings, "_filters_mutated"):
            warnings._filters_mutated()
        sys.argv[:] = self.argv
        os.chdir("/")
        gc.collect()
        # What survives is the start state and the modules kept above:
        # frozen, so that the next run's collections do not walk it again
        # (they grew with every run: a hook run took 50 ms at the start of
        # a server and 90 ms after 250 runs).
        gc.freeze()

    def differs(self):
        """Why the interpreter is not in this state, or None."""
        if set(sys.modules) != set(self.modules):
            extra = sorted(set(sys.modules) ^ set(self.modules))
            return "sys.modules differs: %s" % ", ".join(extra[:5])
        if sys.meta_path != self.meta_path or sys.path != self.path or sys.path_hooks != self.path_hooks:
            return "sys.meta_path, sys.path or sys.path_hooks differs"
        if self.lazy is not None and set(sys.lazy_modules) != self.lazy[0]:
            return "sys.lazy_modules differs"
        return None


# The frames below a script's module frame here (run and runpy's three),
# or below -c's code (run), which a native `python` does not have. They
# count against the recursion limit, so the limit a program starts with,
# sets and reads is shifted by them: a program recurses exactly as deep
# before RecursionError as it would natively (tools/check/recursion_depth).
_frames_below = {"script": 0, "code": 0}
_kind_running = "script"
_real_setrecursionlimit = sys.setrecursionlimit
_real_getrecursionlimit = sys.getrecursionlimit


def _setrecursionlimit(limit):
    """sys.setrecursionlimit, as a native interpreter would apply it here."""
    _real_setrecursionlimit(limit + _frames_below[_kind_running])


def _getrecursionlimit():
    """sys.getrecursionlimit, as a native interpreter would report it."""
    return _real_getrecursionlimit() - _frames_below[_kind_running]


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


# A server's runs all start the same script, which imports the same helpers
# beside it: compiled once, not at every run. A WebAssembly compile is slow
# (tools/lib/crosscheck/hook_runtime.py alone: 19 ms): with this and the
# frozen objects of _State.restore, a hook run took 19 ms, against 86. The main
# script's code is kept by its path and bytes (runpy compiles it itself,
# with no bytecode cache); its helpers are compiled once into an in-memory
# bytecode folder (sys.pycache_prefix), which the import system reads as it
# would a __pycache__ beside them. Nothing is written on the host, and the
# modules a run writes into its own folders are compiled as before.
_code_cache = {}
_real_get_code_from_file = runpy._get_code_from_file
_PYCACHE = "/lib/impsim-pycache"  # in the interpreter's own memory, not a host folder


def _get_code_from_file(fname, *rest):
    """runpy's, with its answer kept for the same file, bytes and arguments."""
    with open(fname, "rb") as f:
        key = (fname, f.read()) + rest
    code = _code_cache.get(key)
    if code is None:
        code = _code_cache[key] = _real_get_code_from_file(fname, *rest)
    return code


def serve(script):
    """Before a server's first run: the script's folder compiled into
    _PYCACHE, runpy's compiles kept, and the state runs start from taken
    again."""
    import py_compile
    sys.pycache_prefix = _PYCACHE
    folder = os.path.dirname(os.path.abspath(script))
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            path = os.path.join(folder, name)
            py_compile.compile(path, cfile=importlib.util.cache_from_source(path), doraise=True)
    runpy._get_code_from_file = _get_code_from_file
    global _start
    _start = _State()


def run(kind, argv, cwd):
    """One run as `python -S -I -B` would make it: kind "script" (argv[0]
    the script) or "code" (argv[0] the -c text). Returns JSON:
    {"rc", "out", "err"}."""
    why = _start.differs()
    if why:
        return json.dumps({"rc": 1, "out": "", "err": "pyodide python: a run left state behind (%s)\n" % why})
    global _kind_running
    out, err = io.StringIO(), io.StringIO()
    sys.stdout, sys.stderr = out, err
    sys.stdin = io.StringIO("")
    rc = 0
    _kind_running = kind
    _real_setrecursionlimit(_start.recursion_limit + _frames_below[kind])
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


def _measure_frames_below():
    """How many frames a script's module frame, and -c's code, have below
    them here (natively: none)."""
    # The frames from the program's up to run(), which Node calls with none
    # below it.
    count = ("import sys\nf, names = sys._getframe(), []\nwhile f is not None:\n"
             "    names.append(f.f_code.co_name)\n    f = f.f_back\nprint(names.index('run'))\n")
    folder = tempfile.mkdtemp(prefix="impsim_pyodide_")
    path = os.path.join(folder, "frames.py")
    with open(path, "w") as f:
        f.write(count)
    try:
        for kind, argv in (("script", [path]), ("code", [count])):
            _frames_below[kind] = int(json.loads(run(kind, argv, "/"))["out"])
    finally:
        os.unlink(path)
        os.rmdir(folder)
    sys.setrecursionlimit = _setrecursionlimit
    sys.getrecursionlimit = _getrecursionlimit
    global _start
    _start = _State()  # runs start from here: the two functions above in sys


_measure_frames_below()
