# impsim zoo harness: runs ONE run (one variant, one set of params) of a hook
# scenario (scenarios/zoo/*.json) inside a fresh CPython process, with the
# REAL hook package when the scenario's "real" key binds it, and prints the
# run's report as JSON (the fields of `impsim run FILE --json` that
# tools/crosscheck --zoo compares).
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
# re-statement of the hook language (_Hook below); this checks impsim's
# importlib against CPython's, not the hook against its package.
#
# Counting, from outside: importlib._bootstrap._find_spec and
# importlib.util._find_spec are wrapped (searches, max_depth); each finder
# object seen in sys.meta_path gets an instance attribute find_spec (or
# find_module, for a legacy finder) that counts and calls the original;
# BuiltinImporter, FrozenImporter and PathFinder's find_spec are wrapped at
# class level (predefined_calls, every call, direct ones included).  Objects are seen when a search starts and
# after each step.  Everything the harness and the bound packages' set-up
# need is imported before counting starts (real.setup, real.preimport).
#
# Must run on Python >= 3.9, standard library only.

import sys as _sys
import types as _types
import builtins as _builtins
import importlib as _importlib
import importlib.abc as _abc
import importlib.util as _util
import importlib.machinery as _machinery
import json as _json
import threading as _threading  # noqa: F401 (loaded before counting)
import warnings as _warnings
import functools as _functools  # noqa: F401

_bootstrap = _sys.modules["_frozen_importlib"]
_PREDEFINED = {
    "BuiltinImporter": _machinery.BuiltinImporter,
    "FrozenImporter": _machinery.FrozenImporter,
    "PathFinder": _machinery.PathFinder,
}


class _Counts:
    def __init__(self):
        self.searches = 0
        self.finder_calls = 0
        self.depth = 0
        self.max_depth = 0
        self.by_object = {}       # finder id -> calls
        self.predefined = {}      # predefined id -> calls (BuiltinImporter, FrozenImporter, PathFinder)


_C = _Counts()


class _ServeLoader(_abc.Loader):
    """A re-stated hook's own loader: the module is created by the hook."""

    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


class _WrappedLoader(_abc.Loader):
    """loader: {"wrap": ...} of the hook language."""

    def __init__(self, rt, loader, wrap):
        self.rt, self.loader, self.wrap = rt, loader, wrap

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        if self.wrap.get("wrap") == "toggle":
            finder = self.rt.object(self.wrap["finder"])
            index = _index(finder)
            if index is not None:
                del _sys.meta_path[index]
            try:
                self.loader.exec_module(module)
            finally:
                if index is not None:
                    _sys.meta_path.insert(index, finder)
        else:
            self.loader.exec_module(module)
            setattr(module, "__impsim_mark_%s__" % self.wrap["attribute"], True)


def _index(obj):
    for i, f in enumerate(_sys.meta_path):
        if f is obj:
            return i
    return None


_GLOBAL_SET = set()


class _Hook:
    """A hook of the scenario language, re-stated in Python (mode restated,
    and finders the real binding leaves out)."""

    def __init__(self, rt, fid, definition):
        self._rt = rt
        self._fid = fid
        self._d = definition
        self._in_progress = set()
        self._flag = False
        self._skipping = False
        # A legacy hook has no find_spec at all (CPython 3.11 then calls
        # find_module through _find_spec_legacy, with an ImportWarning).
        if definition.get("api") == "find_module":
            self.find_module = self._find_module
        else:
            self.find_spec = self._find_spec

    def _claims(self, fullname, path):
        c = self._d.get("claims", {})
        if c.get("top_level_only") and path is not None:
            return False
        if c.get("all"):
            return True
        if c.get("top_level"):
            return "." not in fullname
        if fullname in c.get("names", ()):
            return True
        return any(fullname == p or fullname.startswith(p + ".")
                   for p in c.get("packages", ()))

    def _find_spec(self, fullname, path=None, target=None):
        return self._find(fullname, path)

    def _find_module(self, fullname, path=None):
        spec = self._find(fullname, path)
        return None if spec is None else spec.loader

    def _find(self, fullname, path):
        if not self._claims(fullname, path):
            return None
        guard = self._rt.guard_of(self._fid)
        if guard in ("global_set", "thread_set"):
            if fullname in _GLOBAL_SET:
                return None
            _GLOBAL_SET.add(fullname)
        elif guard == "object_set":
            if fullname in self._in_progress:
                return None
            self._in_progress.add(fullname)
        elif guard == "flag":
            if self._flag:
                return None
            self._flag = True
        elif guard == "skip_self":
            if self._skipping:
                return None
            self._skipping = True
        index = None
        if guard == "remove_self":
            index = _index(self)
            if index is not None:
                del _sys.meta_path[index]
        try:
            spec = self._actions(fullname, path)
        finally:
            if guard in ("global_set", "thread_set"):
                _GLOBAL_SET.discard(fullname)
            elif guard == "object_set":
                self._in_progress.discard(fullname)
            elif guard == "flag":
                self._flag = False
            elif guard == "skip_self":
                self._skipping = False
            elif guard == "remove_self" and index is not None:
                _sys.meta_path.insert(index, self)
        loader = self._d.get("loader", "unchanged")
        if spec is not None and isinstance(loader, dict) and spec.loader is not None:
            spec.loader = _WrappedLoader(self._rt, spec.loader, loader)
        return spec

    def _actions(self, fullname, path):
        spec = None
        for action in self._d.get("find_spec", []):
            if "import" in action:
                _importlib.import_module(action["import"])
            elif "reenter" in action:
                spec = _util.find_spec(fullname)
            elif "call" in action:
                finder = self._rt.object(action["call"])
                spec = finder.find_spec(fullname, path)
            elif "call_next" in action:
                spec = None
                index = _index(self)
                for finder in list(_sys.meta_path)[index + 1:] if index is not None else []:
                    spec = finder.find_spec(fullname, path)
                    if spec is not None:
                        break
            elif "serve" in action:
                name = action.get("module")
                module = _sys.modules[name] if name else _types.ModuleType(fullname)
                spec = _util.spec_from_loader(fullname, _ServeLoader(module),
                                              is_package=bool(action.get("package")))
            elif "unload" in action:
                _unload(action["unload"], action.get("submodules", False))
            elif "return" in action:
                spec = None
        return spec


def _unload(names, submodules):
    for name in names:
        for key in list(_sys.modules):
            if key == name or (submodules and key.startswith(name + ".")):
                del _sys.modules[key]


def _find_spec_counted(original):
    def _find_spec(name, path, target=None):
        rt = _RT
        rt.observe()
        _C.searches += 1
        _C.depth += 1
        if _C.depth > _C.max_depth:
            _C.max_depth = _C.depth
        for frame in rt.active:
            if _C.depth > frame[2]:
                frame[2] = _C.depth
        try:
            return original(name, path, target)
        finally:
            _C.depth -= 1
    return _find_spec


def _count_predefined():
    """BuiltinImporter, FrozenImporter, PathFinder: every call of each
    class's find_spec, through sys.meta_path or direct (pytest's hook)."""
    for fid, cls in _PREDEFINED.items():
        original = cls.__dict__["find_spec"].__func__

        def find_spec(cls, fullname, path=None, target=None, _fid=fid, _original=original):
            _C.predefined[_fid] = _C.predefined.get(_fid, 0) + 1
            return _original(cls, fullname, path, target)
        cls.find_spec = classmethod(find_spec)


def _counted_method(fid, method):
    def counted(*args, **kwargs):
        _C.finder_calls += 1
        _C.by_object[fid] = _C.by_object.get(fid, 0) + 1
        return method(*args, **kwargs)
    return counted


class _Runtime:
    def __init__(self, config):
        self.scenario = scenario = config["scenario"]
        self.variant = config["variant"]
        self.params = config["params"]
        self.mode = config["mode"]
        real = scenario.get("real", {}) if self.mode == "real" else {}
        bind = real.get("bind", {})
        over = bind.get("variants", {}).get(self.variant, {})
        self.bind_finders = dict(bind.get("finders", {}))
        self.bind_install = dict(bind.get("install", {}))
        self.bind_install.update(over.get("install", {}))
        self.bind_uninstall = dict(bind.get("uninstall", {}))
        self.bind_uninstall.update(over.get("uninstall", {}))
        self.hooks = scenario.get("hooks", {})
        self.finders = scenario.get("finders", {})
        self.tree = scenario.get("tree", {})
        self.tree_root = config["tree_root"]
        self.external = list(real.get("external", [])) + list(real.get("copy", {})) \
            + list(real.get("generate", {}))
        self.mark_exprs = dict(real.get("marks", {}))
        self.design = self.variant  # as_is or one generic fix
        self.objects = {}          # finder id -> object
        self.ids = {}              # id(object) -> finder id
        self.keep = []             # observed objects (ids stay valid)
        self.class_seen = {}       # class name -> objects seen, in order
        self.stack, self.where, self.active = [], {}, []
        self.labels, self.results = {}, {}
        for label in _collect_labels(scenario):
            self.labels[label] = [0, 0, 0]
            self.results[label] = []
        for name, obj in _PREDEFINED.items():
            self.objects[name] = obj
            self.ids[id(obj)] = name
        ns = {"sys": _sys}
        self.ns = ns

    # -- finder objects -------------------------------------------------------
    def hook_of(self, fid):
        return self.hooks[self.finders[fid]["hook"]]

    def guard_of(self, fid):
        guard = self.hook_of(fid).get("guard", "none")
        for design, kind in (("guard_global_set", "global_set"),
                             ("guard_object_set", "object_set"),
                             ("guard_flag", "flag"), ("skip_self", "skip_self")):
            if self.design == design:
                return kind
        return guard

    def make_restated(self):
        for fid in self.finders:
            if fid in self.bind_finders:
                continue
            definition = dict(self.hook_of(fid))
            if self.design == "call_next":
                definition["find_spec"] = [
                    {"call_next": True} if "reenter" in a else a
                    for a in definition.get("find_spec", [])]
            obj = _Hook(self, fid, definition)
            self.name_object(fid, obj)

    def name_object(self, fid, obj):
        self.objects[fid] = obj  # for "#*": the newest
        self.ids[id(obj)] = fid
        self.keep.append(obj)
        attr = "find_spec" if hasattr(obj, "find_spec") else "find_module"
        if isinstance(obj, type):
            if fid in _PREDEFINED:
                return  # the predefined are counted at class level (predefined_calls)
            # a class on meta_path (setuptools' _EditableFinder): its
            # classmethod is replaced by a counting static function
            method = getattr(obj, attr, None)
            if method is not None:
                setattr(obj, attr, staticmethod(_counted_method(fid, method)))
            return
        method = getattr(obj, attr, None)
        if method is not None:
            setattr(obj, attr, _counted_method(fid, method))

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
                    # seen; "class:Name#*": every one of them (copies that
                    # replace each other, as six's on reload).
                    cls_name, _, nth = spec[6:].partition("#")
                    if type(obj).__name__ != cls_name:
                        continue
                    seen = self.class_seen.setdefault(cls_name, [])
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

    # -- install / uninstall -------------------------------------------------
    def install(self, fid):
        if fid in self.bind_install:
            exec(self.bind_install[fid], self.ns)
            self.observe()
            return
        policy = self.hook_of(fid).get("install", "insert0")
        if self.design == "idempotent_install":
            policy = {"insert0": "insert0_if_absent",
                      "append": "append_if_absent"}.get(policy, policy)
        obj = self.object(fid)
        present = _index(obj) is not None
        if policy == "insert0" or (policy == "insert0_if_absent" and not present):
            _sys.meta_path.insert(0, obj)
        elif policy == "append" or (policy == "append_if_absent" and not present):
            _sys.meta_path.append(obj)

    def uninstall(self, fid):
        if fid in self.bind_uninstall:
            exec(self.bind_uninstall[fid], self.ns)
            return
        policy = self.hook_of(fid).get("uninstall", "first")
        if self.design == "remove_all":
            policy = "all"
        obj = self.object(fid)
        while True:
            index = _index(obj)
            if index is None:
                break
            del _sys.meta_path[index]
            if policy == "first":
                break

    # -- the step interpreter ---------------------------------------------------
    def num(self, value):
        if isinstance(value, str) and value.startswith("$"):
            return int(self.params[value[1:]])
        return int(value)

    def body(self, key, g):
        self.block(self.tree[key].get("body", []),
                   "/tree/" + _escape(key) + "/body", g)

    def block(self, steps, ptr, g):
        for i, step in enumerate(steps):
            self.step(step, ptr + "/" + str(i), g)

    def step(self, step, ptr, g):
        label = step.get("label")
        for _ in range(self.num(step.get("repeat", 1))):
            self.stack.append(ptr)
            frame = None
            if label is not None:
                frame = [label, (_C.searches, _C.finder_calls), 0]
                self.active.append(frame)
            try:
                result = self.action(step, ptr, g)
            except BaseException as exc:
                if id(exc) not in self.where:
                    self.where[id(exc)] = (exc, list(self.stack))
                if frame is not None:
                    self.results[label].append(type(exc).__name__)
                raise
            else:
                if frame is not None:
                    self.results[label].append(result)
            finally:
                self.observe()
                if frame is not None:
                    self.active.pop()
                    sums = self.labels[label]
                    sums[0] += _C.searches - frame[1][0]
                    sums[1] += _C.finder_calls - frame[1][1]
                    sums[2] = max(sums[2], frame[2])
                self.stack.pop()

    def action(self, step, ptr, g):
        optional = step.get("optional", False)
        if "import" in step:
            try:
                exec(compile("import " + step["import"], "<impsim import>", "exec"), g)
            except ImportError as exc:
                if not optional:
                    raise
                return type(exc).__name__
            return "ok"
        if "find_spec" in step:
            try:
                spec = _util.find_spec(step["find_spec"])
            except ImportError as exc:
                if not optional:
                    raise
                return type(exc).__name__
            return "none" if spec is None else "found"
        if "install" in step:
            self.install(step["install"])
            return "ok"
        if "uninstall" in step:
            self.uninstall(step["uninstall"])
            return "ok"
        if "insert" in step:
            _sys.meta_path.insert(self.num(step.get("at", 0)), self.object(step["insert"]))
            return "ok"
        if "append" in step:
            _sys.meta_path.append(self.object(step["append"]))
            return "ok"
        if "remove" in step:
            obj = self.object(step["remove"])
            if step.get("copies") == "all":
                while _index(obj) is not None:
                    del _sys.meta_path[_index(obj)]
                return "ok"
            index = _index(obj)
            if index is None:
                if optional:
                    return "ValueError"
                raise ValueError("list.remove(x): x not in list")
            del _sys.meta_path[index]
            return "ok"
        if "unload" in step:
            _unload(step["unload"], step.get("submodules", False))
            return "ok"
        raise ValueError("zoo harness: unknown step at " + ptr)


def _escape(token):
    return token.replace("~", "~0").replace("/", "~1")


def _collect_labels(scenario):
    labels = []

    def walk(steps):
        for step in steps:
            if "label" in step:
                labels.append(step["label"])
            walk(step.get("body", []))

    walk(scenario.get("program", []))
    for entry in scenario.get("tree", {}).values():
        walk(entry.get("body", []))
    return labels


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
    counters = {"searches": _C.searches, "finder_calls": _C.finder_calls,
                "max_depth": _C.max_depth}
    by_object = dict(_C.by_object)
    predefined = dict(_C.predefined)
    meta_path = []
    for obj in _sys.meta_path:
        meta_path.append(rt.ids.get(id(obj), "?%s" % type(obj).__name__))
    # The scenario's modules: the names of its tree, of its preloaded list
    # and of what its hooks claim by name (served modules), and every module
    # loaded from a tree file under any name (distutils.core from the tree's
    # setuptools/_distutils/core.py); not what the real set-up imported.
    owned = set(rt.tree) | set(rt.external) \
        | set(rt.scenario.get("sys_modules", {}).get("preloaded", []))
    for hook in rt.hooks.values():
        owned.update(hook.get("claims", {}).get("names", ()))
    root = rt.tree_root + "/"
    modules = sorted(n for n, m in list(_sys.modules.items())
                     if n in owned or (getattr(m, "__file__", None) or "").startswith(root))
    marks = {}
    for name in modules:
        module = _sys.modules[name]
        d = getattr(module, "__dict__", {})
        found = [k[len("__impsim_mark_"):-2] for k in d
                 if k.startswith("__impsim_mark_")]
        for mark, expr in rt.mark_exprs.items():
            try:
                if eval(expr, {"m": module, "sys": _sys,
                               "wrapper_modules": _wrapper_modules}):
                    found.append(mark)
            except Exception:
                pass
        found = sorted(set(found))
        if found:
            marks[name] = "+".join(found)
    labels = {}
    for label, sums in rt.labels.items():
        labels[label] = {"searches": sums[0], "finder_calls": sums[1],
                         "max_depth": sums[2]}
    return {
        "counters": counters,
        "finder_calls_by_object": by_object,
        "predefined_calls": predefined,
        "labels": labels,
        "outcome": {"modules": modules, "marks": marks, "results": rt.results,
                    "meta_path": meta_path, "error": error},
    }


_RT = None


def _main(argv):
    global _RT
    with open(argv[1]) as f:
        config = _json.load(f)
    scenario = config["scenario"]
    real = scenario.get("real", {}) if config["mode"] == "real" else {}
    if len(_sys.meta_path) != 3:
        raise SystemExit("zoo harness: unexpected sys.meta_path %r" % (_sys.meta_path,))
    _sys.path.insert(0, config["tree_root"])
    if real:
        _sys.path.append(real.get("site", "/usr/lib/python3/dist-packages"))
    rt = _RT = _Runtime(config)
    _builtins.__impsim__ = rt
    # Before the set-up: a package that keeps PathFinder.find_spec (pytest's
    # _find_spec) keeps the counting one.
    _count_predefined()
    # What the scenario takes as already imported, and the set-up the real
    # package needs, before counting starts.
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")
        for name in real.get("preimport", []):
            _importlib.import_module(name)
        if "setup" in real:
            exec(real["setup"], rt.ns)
    for name in scenario.get("sys_modules", {}).get("preloaded", []):
        if name not in _sys.modules:
            if name in rt.tree:
                _importlib.import_module(name)
            else:
                _sys.modules[name] = _types.ModuleType(name)
    rt.make_restated()
    _C.predefined.clear()  # the set-up's own calls
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
    counted = _find_spec_counted(_bootstrap._find_spec)
    _bootstrap._find_spec = counted
    _util._find_spec = counted
    main_globals = _sys.modules["__main__"].__dict__
    error = None
    # _find_spec_legacy's ImportWarnings (3.10, 3.11): each one raised
    with _warnings.catch_warnings(record=True) as warned:
        _warnings.simplefilter("always")
        try:
            rt.block(scenario.get("program", []), "/program", main_globals)
        except BaseException as exc:  # the run's uncaught exception
            where = rt.where.get(id(exc))
            trace = list(where[1]) if where is not None else []
            error = {"type": type(exc).__name__, "message": str(exc),
                     "step": trace[-1] if trace else None, "traceback": trace}
    report = _report(rt, error)
    report["counters"]["legacy_warnings"] = sum(
        1 for w in warned if issubclass(w.category, ImportWarning)
        and "falling back to find_module()" in str(w.message))
    report["python"] = "%d.%d.%d" % _sys.version_info[:3]
    _sys.stdout.write(_json.dumps(report) + "\n")
    _sys.stdout.flush()


if __name__ == "__main__":
    _main(_sys.argv)
