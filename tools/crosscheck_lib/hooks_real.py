# Runs a hook scenario's program (docs/scenario-format.md, "Hooks") on REAL
# CPython import machinery and prints what impsim's --json reports for it.
#
#   python -S -I -B hooks_real.py SCENARIO.json VARIANT
#
# What is real here: importlib._bootstrap (_find_and_load, _find_spec over
# the live sys.meta_path, importlib.util.find_spec, module_from_spec,
# _load_unlocked), PathFinder over real files, BuiltinImporter and
# FrozenImporter. What is a re-statement: each hook finder class, generated
# from the scenario's declared behaviour (claims, actions, guard, loader
# wrapper, install/uninstall policy) by the classes below. So a match checks
# impsim's ENGINE against the real import machinery for the declared hooks;
# it does not check that a declaration describes some real package's hook
# (that is tools/crosscheck --zoo, on the real packages).
#
# Counting is from outside: importlib._bootstrap._find_spec and
# importlib.util._find_spec are wrapped (searches, max_depth), each hook
# object's find_spec is wrapped on the instance, and BuiltinImporter's,
# FrozenImporter's and PathFinder's at class level (finder_calls_by_object).
#
# Only hook steps and import/find_spec/call are run; a scenario with Paddle
# steps (enable, disable, guard, block) prints {"skip": reason}.
# Standard library only, Python >= 3.9.

import sys as _sys
import os as _os
import json as _json
import tempfile as _tempfile
import threading as _threading
import importlib as _importlib
import importlib.util as _util
import importlib.machinery as _machinery
import importlib._bootstrap as _bootstrap
import builtins as _builtins
import warnings as _warnings

_HOOK_FIXES = {
    "as_is": None, "idempotent_install": "idempotent_install", "remove_all": "remove_all",
    "skip_self": "skip_self", "call_next": "call_next", "guard_global_set": "global_set",
    "guard_object_set": "object_set", "guard_thread_set": "thread_set", "guard_flag": "flag",
    "guard_remove_self": "remove_self",
}
_PADDLE_STEPS = ("enable", "disable", "guard", "block")


class _Counts:
    def __init__(self):
        self.searches = 0
        self.finder_calls = 0
        self.max_depth = 0
        self.by_object = {}

    def snapshot(self):
        return (self.searches, self.finder_calls, dict(self.by_object))


C = _Counts()
_depth = [0]
_label_high = [0]
_global_finding = set()       # guard global_set: one set for every hook (ddtrace's _finding)
_thread_finding = _threading.local()  # guard thread_set
_attributes = {}              # module name -> attributes a wrapper set, in order


def _apply_fix(hook, fix):
    hook = dict(hook)
    if fix is None:
        return hook
    if fix == "idempotent_install":
        hook["install"] = {"insert0": "insert0_if_absent", "append": "append_if_absent"}.get(
            hook.get("install", "insert0"), hook.get("install", "insert0"))
    elif fix == "remove_all":
        hook["uninstall"] = "all"
    elif fix == "call_next":
        hook["find_spec"] = [{"call_next": True} if "reenter" in a else a for a in hook.get("find_spec", [])]
    else:
        hook["guard"] = fix
    return hook


def _claims(hook, fullname, path):
    c = hook.get("claims", {"all": True})
    if c.get("top_level_only") and path is not None:
        return False
    if "names" in c:
        return fullname in c["names"]
    if "packages" in c:
        return any(fullname == p or fullname.startswith(p + ".") for p in c["packages"])
    if "top_level" in c:
        return "." not in fullname
    return True


class _ServeLoader:
    def __init__(self, module_name, package=False):
        self.module_name = module_name
        self.package = package

    def is_package(self, fullname):
        # what spec_from_loader asks when a legacy finder's find_module
        # returned this loader (_find_spec_legacy)
        return self.package

    def create_module(self, spec):
        return _sys.modules[self.module_name] if self.module_name else None

    def exec_module(self, module):
        pass


class _WrappedLoader:
    def __init__(self, inner, hook, objects):
        self.inner = inner
        self.hook = hook
        self.objects = objects

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        w = self.hook["loader"]
        if w["wrap"] == "toggle":
            f = self.objects[w["finder"]]
            if f in _sys.meta_path:
                i = _sys.meta_path.index(f)
                _sys.meta_path.remove(f)
                try:
                    self.inner.exec_module(module)
                finally:
                    _sys.meta_path.insert(i, f)
                return
        self.inner.exec_module(module)
        if w["wrap"] == "set_attribute":
            setattr(module, w["attribute"], True)
            attrs = _attributes.setdefault(module.__name__, [])
            if w["attribute"] not in attrs:
                attrs.append(w["attribute"])


class _Declared:
    """What a finder class generated from a hook's declaration does."""

    def __init__(self, fid, hook, objects):
        self.fid = fid
        self.hook = hook
        self.objects = objects
        self._in_progress = set()
        self._flag = False

    def __repr__(self):
        return self.fid

    def _guarded(self, fullname, path):
        g = self.hook.get("guard", "none")
        if g in ("global_set", "thread_set", "object_set"):
            if g == "global_set":
                s = _global_finding
            elif g == "thread_set":
                if not hasattr(_thread_finding, "names"):
                    _thread_finding.names = set()
                s = _thread_finding.names
            else:
                s = self._in_progress
            if fullname in s:
                return None
            s.add(fullname)
            try:
                return self._actions(fullname, path)
            finally:
                s.discard(fullname)
        if g in ("flag", "skip_self"):
            if self._flag:
                return None
            self._flag = True
            try:
                return self._actions(fullname, path)
            finally:
                self._flag = False
        if g == "remove_self" and self in _sys.meta_path:
            i = _sys.meta_path.index(self)
            _sys.meta_path.remove(self)
            try:
                return self._actions(fullname, path)
            finally:
                _sys.meta_path.insert(i, self)
        return self._actions(fullname, path)

    def _actions(self, fullname, path):
        result = None
        for a in self.hook.get("find_spec", []):
            if "import" in a:
                __import__(a["import"])
            elif "reenter" in a:
                result = _util.find_spec(fullname)
            elif "call" in a:
                result = self.objects[a["call"]].find_spec(fullname, path)
            elif "call_next" in a:
                result = None
                if self in _sys.meta_path:
                    i = _sys.meta_path.index(self)
                    for f in _sys.meta_path[i + 1:]:
                        result = f.find_spec(fullname, path)
                        if result is not None:
                            break
            elif "serve" in a:
                result = _util.spec_from_loader(fullname, _ServeLoader(a.get("module"), bool(a.get("package"))),
                                                is_package=bool(a.get("package")))
            elif "unload" in a:
                _unload(a["unload"], a.get("submodules", False))
            elif "return" in a:
                result = None
        return result


class DeclaredHook(_Declared):
    """A finder class generated from a hook's declaration."""

    def find_spec(self, fullname, path, target=None):
        if not _claims(self.hook, fullname, path):
            return None
        spec = self._guarded(fullname, path)
        if spec is not None and self.hook.get("loader", "unchanged") != "unchanged":
            spec.loader = _WrappedLoader(spec.loader, self.hook, self.objects)
        return spec


class DeclaredLegacyHook(_Declared):
    """"api": "find_module": a legacy finder, no find_spec attribute at all."""

    def find_module(self, fullname, path=None):
        if not _claims(self.hook, fullname, path):
            return None
        spec = self._guarded(fullname, path)
        return None if spec is None else spec.loader


def _unload(names, submodules):
    for n in list(_sys.modules):
        if n in names or (submodules and any(n.startswith(x + ".") for x in names)):
            del _sys.modules[n]


def _counted_find_spec(original):
    def find_spec(name, path, target=None):
        C.searches += 1
        _depth[0] += 1
        C.max_depth = max(C.max_depth, _depth[0])
        _label_high[0] = max(_label_high[0], _depth[0])
        try:
            return original(name, path, target)
        finally:
            _depth[0] -= 1
    return find_spec


_PREDEFINED_IDS = ("BuiltinImporter", "FrozenImporter", "PathFinder")


def _count_predefined():
    """Every call of the interpreter's finders' find_spec, through
    sys.meta_path or direct (a hook's "call"), per object; not in the
    hooks-only total finder_calls."""
    for fid in _PREDEFINED_IDS:
        cls = getattr(_machinery, fid)
        original = cls.__dict__["find_spec"].__func__

        def find_spec(cls, fullname, path=None, target=None, _fid=fid, _original=original):
            C.by_object[_fid] = C.by_object.get(_fid, 0) + 1
            return _original(cls, fullname, path, target)
        cls.find_spec = classmethod(find_spec)
        C.by_object[fid] = 0


def _counted_method(fid, method):
    def find_spec(fullname, path, target=None):
        C.finder_calls += 1
        C.by_object[fid] = C.by_object.get(fid, 0) + 1
        return method(fullname, path, target)
    return find_spec


def _counted_legacy(fid, method):
    def find_module(fullname, path=None):
        C.finder_calls += 1
        C.by_object[fid] = C.by_object.get(fid, 0) + 1
        return method(fullname, path)
    return find_module


class _Program:
    def __init__(self, sc, variant):
        design, _, only = variant.partition(":")
        fix = _HOOK_FIXES[design]
        self.hooks = {}
        for name, h in sc.get("hooks", {}).items():
            self.hooks[name] = _apply_fix(h, fix) if (not only or only == name) else dict(h)
        self.objects = {
            "BuiltinImporter": _machinery.BuiltinImporter,
            "FrozenImporter": _machinery.FrozenImporter,
            "PathFinder": _machinery.PathFinder,
        }
        self.hook_ids = []
        for fid, f in sc.get("finders", {}).items():
            if self.hooks[f["hook"]].get("api") == "find_module":
                obj = DeclaredLegacyHook(fid, self.hooks[f["hook"]], self.objects)
                obj.find_module = _counted_legacy(fid, obj.find_module)
            else:
                obj = DeclaredHook(fid, self.hooks[f["hook"]], self.objects)
                obj.find_spec = _counted_method(fid, obj.find_spec)
            self.objects[fid] = obj
            self.hook_ids.append(fid)
            C.by_object[fid] = 0
        self.counted_ids = self.hook_ids + list(_PREDEFINED_IDS)
        self.labels = {}
        self.results = {}

    def id_of(self, obj):
        for k, v in self.objects.items():
            if v is obj:
                return k
        return repr(obj)

    def install(self, fid):
        obj = self.objects[fid]
        policy = self.hooks[sc_finder_hook(self, fid)].get("install", "insert0")
        if policy == "insert0" or (policy == "insert0_if_absent" and obj not in _sys.meta_path):
            _sys.meta_path.insert(0, obj)
        elif policy == "append" or (policy == "append_if_absent" and obj not in _sys.meta_path):
            _sys.meta_path.append(obj)

    def uninstall(self, fid):
        obj = self.objects[fid]
        if self.hooks[sc_finder_hook(self, fid)].get("uninstall", "first") == "all":
            while obj in _sys.meta_path:
                _sys.meta_path.remove(obj)
        elif obj in _sys.meta_path:
            _sys.meta_path.remove(obj)

    def run_steps(self, steps):
        for s in steps:
            for _ in range(s.get("repeat", 1)):
                self.run_step(s)

    def run_step(self, s):
        label = s.get("label")
        if label is not None:
            before = C.snapshot()
            saved_high = _label_high[0]
            _label_high[0] = 0
        result = "ok"
        try:
            try:
                if "import" in s:
                    __import__(s["import"])
                elif "find_spec" in s:
                    result = "none" if _util.find_spec(s["find_spec"]) is None else "found"
                elif "call" in s:
                    self.run_steps(s["body"])
                elif "install" in s:
                    self.install(s["install"])
                elif "uninstall" in s:
                    self.uninstall(s["uninstall"])
                elif "insert" in s:
                    _sys.meta_path.insert(s["at"], self.objects[s["insert"]])
                elif "append" in s:
                    _sys.meta_path.append(self.objects[s["append"]])
                elif "remove" in s:
                    obj = self.objects[s["remove"]]
                    if s.get("copies") == "all":
                        while obj in _sys.meta_path:
                            _sys.meta_path.remove(obj)
                    elif obj in _sys.meta_path or not s.get("optional"):
                        _sys.meta_path.remove(obj)
                elif "unload" in s:
                    _unload(s["unload"], s.get("submodules", False))
            except ImportError as e:
                if s.get("optional") and ("import" in s or "find_spec" in s):
                    result = type(e).__name__
                else:
                    raise
        except BaseException as e:
            result = type(e).__name__
            raise
        finally:
            if label is not None:
                after = C.snapshot()
                lab = self.labels.setdefault(label, {"searches": 0, "finder_calls": 0, "max_depth": 0,
                                                     "finder_calls_by_object": {f: 0 for f in self.counted_ids}})
                lab["searches"] += after[0] - before[0]
                lab["finder_calls"] += after[1] - before[1]
                for f in self.counted_ids:
                    lab["finder_calls_by_object"][f] += after[2].get(f, 0) - before[2].get(f, 0)
                lab["max_depth"] = max(lab["max_depth"], _label_high[0])
                _label_high[0] = max(saved_high, _label_high[0])
                self.results.setdefault(label, []).append(result)


def sc_finder_hook(program, fid):
    return program.objects[fid].hook_name


def _write_tree(root, tree):
    for name, entry in tree.items():
        parts = name.split(".")
        if entry.get("package"):
            d = _os.path.join(root, *parts)
            _os.makedirs(d, exist_ok=True)
            path = _os.path.join(d, "__init__.py")
        else:
            d = _os.path.join(root, *parts[:-1])
            _os.makedirs(d, exist_ok=True)
            path = _os.path.join(d, parts[-1] + ".py")
        with open(path, "w") as f:
            f.write("__impsim_run__(%r)\n" % _json.dumps(entry.get("body", [])))


def _uses_paddle(steps):
    return any(any(k in s for k in _PADDLE_STEPS) or _uses_paddle(s.get("body", [])) for s in steps)


def main():
    sc = _json.load(open(_sys.argv[1]))
    variant = _sys.argv[2]
    if _uses_paddle(sc["program"]) or any(_uses_paddle(e.get("body", [])) for e in sc["tree"].values()):
        print(_json.dumps({"skip": "Paddle steps are checked by tools/crosscheck"}))
        return
    if sc.get("builtin") or "P" in sc.get("meta_path", []):
        print(_json.dumps({"skip": "builtin names and P are not part of this check"}))
        return
    root = _tempfile.mkdtemp(prefix="impsim-hooks-")
    _write_tree(root, sc["tree"])
    program = _Program(sc, variant)
    for fid, f in sc.get("finders", {}).items():
        program.objects[fid].hook_name = f["hook"]
    _builtins.__impsim_run__ = lambda steps: program.run_steps(_json.loads(steps))
    _sys.path.insert(0, root)
    _sys.path_importer_cache.clear()
    _sys.meta_path[:] = [program.objects[i] for i in sc.get("meta_path", ["BuiltinImporter", "FrozenImporter", "PathFinder"])]
    before = set(_sys.modules)
    original = _bootstrap._find_spec
    _count_predefined()
    counted = _counted_find_spec(original)
    _bootstrap._find_spec = counted
    _util._find_spec = counted
    error = None
    # _find_spec_legacy's ImportWarning (3.10, 3.11), each one it raises
    with _warnings.catch_warnings(record=True) as warned:
        _warnings.simplefilter("always")
        try:
            program.run_steps(sc["program"])
        except Exception as e:
            error = type(e).__name__
        finally:
            _bootstrap._find_spec = original
            _util._find_spec = original
    legacy_warnings = sum(1 for w in warned if issubclass(w.category, ImportWarning)
                          and "falling back to find_module()" in str(w.message))
    meta_path = [program.id_of(f) for f in _sys.meta_path]
    modules = [n for n in _sys.modules if n not in before]
    marks = {n: "+".join(a) for n, a in _attributes.items() if n in _sys.modules}
    print(_json.dumps({
        "searches": C.searches, "finder_calls": C.finder_calls, "max_depth": C.max_depth,
        "legacy_warnings": legacy_warnings,
        "finder_calls_by_object": {f: C.by_object.get(f, 0) for f in program.counted_ids},
        "labels": program.labels, "results": program.results, "meta_path": meta_path,
        "modules": modules, "marks": marks, "error": error,
    }, sort_keys=True))


if __name__ == "__main__":
    main()
