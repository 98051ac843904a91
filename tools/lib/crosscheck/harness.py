# impsim crosscheck harness: runs ONE scenario run (one variant, one set of
# params) inside a fresh CPython process and prints the run's report as JSON.
#
#   python -S -I -B harness.py CONFIG.json
#
# CONFIG: {"scenario": {...}, "variant": NAME, "params": {...},
#          "tree_root": "/tmp/.../tree"}   (the tree's .py files already written)
# NAME: one of _DESIGNS below (impsim's include/impsim/scenario/variant.h), or
# "DESIGN@REVISION": a design on a revision of its own.
# "revision": "b52ce17" (default) or "04efefd": the upstream revision the
# re-statement follows (the two differ in use_torch_proxy_guard's saved
# scope, _swap_torch_modules_to_cache, the cached-module spec and
# enable_torch_proxy's blocked_modules).
# "cpython": "3.14" on an older interpreter runs the program with
# importlib._bootstrap._find_spec iterating a snapshot of sys.meta_path
# (gh-130094), emulated on this interpreter (_snapshot_meta_path below); any
# other value must be this interpreter's X.Y (a real 3.14 runs its own).
# "finder_source": PATH runs the real finder (that proxy.py, unmodified)
# instead of the re-statement: tools/lib/crosscheck/real_finder.py.
# "branches": true (with "finder_source"; tools/check/crosscheck_reasons) adds
# "branches": which branch of the real find_spec each call took.
# Optional keys (tools/check/time_cpython): "time": true adds "program_seconds",
# the wall time of the program alone (perf_counter around it: no start-up,
# no tree set-up, no report); "python_walk": true makes every walk a Python
# loop over all of sys.modules, as the released finder's is, instead of a
# set difference in C (same names, same counters, a different cost).
#
# This file is a re-statement of the torch proxy finder described in
# docs/model.md, instrumented with impsim's counters, plus a small
# interpreter for the scenario steps.  Everything it needs is imported up
# front, before the program starts: nothing the harness does is seen by the
# finder.  The finder never warns, walks the stack with sys._getframe, and the
# report is built from a snapshot taken the moment the program ends.
#
# The program runs with __main__'s globals, so every module-level name of this
# file starts with an underscore (scenario top-level names do not).
#
# The finder behind the step interpreter is a backend (_Restated here,
# real_finder.RealFinder for a real proxy.py) with: .finder (the object in
# sys.meta_path), enable(scope, extra) (extra: {} or {"blocked_modules": X},
# the keyword passed, None included), disable(), block(names)
# and guard(enable, scope) (a context manager).  Both count through the
# runtime: rt.counts, rt.count_walk_of / rt.enter_lookup / rt.leave_lookup.
#
# PEP 810 lazy imports (CPython >= 3.15; docs/lazy-imports.md): the steps
# lazy_import, lazy_from, use, set_lazy_imports, set_lazy_imports_filter and
# __lazy_modules__ (lazy_steps.py).  A scenario with any of them gets a run-level "lazy" object in its
# report; a scenario without them runs exactly as before.
#
# Must run on Python >= 3.9, standard library only.

import sys as _sys
import types as _types
import builtins as _builtins
import importlib as _importlib
import importlib.util as _util
import importlib.machinery as _machinery
import json as _json
import zipimport as _zipimport
from time import perf_counter as _perf_counter

try:
    from . import harness_common as _common  # imported as crosscheck.harness (oracle.py)
    from . import lazy_steps as _lazy_steps
except ImportError:  # run as the harness: from beside this file, which is not left on sys.path
    _sys.path.insert(0, __file__.rpartition("/")[0] or ".")
    import harness_common as _common
    import lazy_steps as _lazy_steps
    del _sys.path[0]

_ENABLED_MARK = "__enable_torch_proxy__"
_DISABLED_MARK = "__disable_torch_proxy__"
_MARK_NAMES = {_ENABLED_MARK: "enabled", _DISABLED_MARK: "disabled"}

_COUNTERS = ("asks", "suppressed", "lookups", "toggles", "walks", "comparisons")
_ASKS, _SUPPRESSED, _LOOKUPS, _TOGGLES, _WALKS, _COMPARISONS = range(6)

# The finder designs, as in impsim's sim/scenario/variant.cc: the released finder plus
# a set of changes.
#   resolving_fix      find_spec returns None for a name it is resolving
#   idempotent_enable  enable inserts P only when P is absent
#   disable_all        disable removes every occurrence of P, not the first
#   indexed_walk       a toggle's walk examines only the torch names
#   resolving_global   the fix's set is one set on the finder, for every thread
_REVISIONS = ("b52ce17", "04efefd")

_DESIGNS = {
    "before": (),
    "after": ("resolving_fix",),
    "idempotent-enable": ("idempotent_enable",),
    "disable-all": ("disable_all",),
    "indexed-walk": ("resolving_fix", "indexed_walk"),
    "after+idempotent-enable": ("resolving_fix", "idempotent_enable"),
    "after-global-set": ("resolving_fix", "resolving_global"),
}

# The attributes ProxyLoader.exec_module does not copy from the paddle module.
_NOT_COPIED = frozenset(("__name__", "__package__", "__path__", "__spec__"))


def _is_torch(name):
    return name == "torch" or name.startswith("torch.")


def _inside(name, modules):
    """name is, or is inside, one of modules."""
    for m in modules:
        if name == m or name.startswith(m + "."):
            return True
    return False


class _ProxyModule(_types.ModuleType):
    """A torch name served by the proxy (everything else is 'real')."""


class _BodilessLoader:
    """A loader with no body to run: serves `module` (a real torch module out
    of the torch cache) or, with None, lets importlib make an empty module (a
    preloaded module that is not in the tree)."""

    def __init__(self, module=None):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


class _ProxyLoader:
    """Serves torch.X as a copy of paddle.X."""

    def __init__(self, source):
        self.source = source

    def create_module(self, spec):
        module = _ProxyModule(spec.name)
        if hasattr(self.source, "__path__"):
            module.__path__ = list(self.source.__path__)
        return module

    def exec_module(self, module):
        target = module.__dict__
        for key, value in list(self.source.__dict__.items()):
            if key not in _NOT_COPIED:
                target[key] = value


class _SpecificLoader:
    """The loader wrapper `specific` installs: body under a guard, then mark."""

    def __init__(self, rt, original, exec_enable, mark):
        self.rt = rt
        self.original = original
        self.exec_enable = exec_enable
        self.mark = mark

    def create_module(self, spec):
        module = self.original.create_module(spec)
        if module is None:
            module = _types.ModuleType(spec.name)
            module.__spec__ = spec
            module.__loader__ = spec.loader
            if spec.submodule_search_locations is not None:
                module.__path__ = list(spec.submodule_search_locations)
        return module

    def exec_module(self, module):
        with _Guard(self.rt, self.exec_enable, None):
            self.original.exec_module(module)
        module.__dict__[self.mark] = True


class _ProxyFinder:
    """P: one object, possibly several times in sys.meta_path."""

    def __init__(self, rt):
        self.rt = rt
        # TORCH_PROXY_FINDER = TorchProxyMetaFinder() runs _set_scope(None):
        # an empty scope, enabled globally (it matters once P is inserted
        # while its scope is kept, e.g. the first enable inside a guard).
        self.scope = set()
        self.globally_enabled = True

    def find_spec(self, name, path=None, target=None):
        rt = self.rt
        counts = rt.counts
        counts[_ASKS] += 1
        if rt.resolving_fix and name in rt.resolving:
            counts[_SUPPRESSED] += 1
            return None
        if _inside(name, rt.blocked):
            return rt.specific(name, False, _DISABLED_MARK)
        if _inside(name, self.scope):
            return rt.specific(name, True, _ENABLED_MARK)
        if not _is_torch(name):
            return None
        if _stack_has(_DISABLED_MARK):
            return rt.cached_spec(name)
        if not self.globally_enabled and not _stack_has(_ENABLED_MARK):
            return rt.cached_spec(name)
        source = _importlib.import_module(name.replace("torch", "paddle", 1))
        return _util.spec_from_loader(name, _ProxyLoader(source),
                                      is_package=hasattr(source, "__path__"))


def _stack_has(mark):
    frame = _sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get(mark):
            return True
        frame = frame.f_back
    return False


class _Guard:
    """use_torch_proxy_guard(enable=..., scope=...)."""

    def __init__(self, rt, enable, scope):
        self.rt = rt
        self.enable = enable
        self.scope = scope  # a set or None

    def __enter__(self):
        finder = self.rt.finder
        had = finder in _sys.meta_path
        # b52ce17 saves a copy; 04efefd saves the set object itself, which
        # an in-place `|=` during the guard (enable with a scope while P is
        # present and not global) also changes.
        self.old_scope = finder.scope if self.rt.revision == "04efefd" \
            else set(finder.scope)
        self.old_global = finder.globally_enabled
        given = self.scope
        if self.enable == had and (
                (self.old_global and given is None)
                or self.old_scope == (given or set())):
            self.noop = True
            return self
        self.noop = False
        if self.enable:
            self.rt.enable(given)
        else:
            self.rt.disable()
        return self

    def __exit__(self, *exc_info):
        if self.noop:
            return False
        finder = self.rt.finder
        if self.enable:
            finder.scope = self.old_scope
            finder.globally_enabled = self.old_global
            self.rt.disable()
        else:
            self.rt.enable(None)
            finder.scope = self.old_scope
            finder.globally_enabled = self.old_global
        return False


class _Restated:
    """The backend of the re-statement: _ProxyFinder and _Guard above."""

    def __init__(self, rt):
        self.rt = rt
        self.finder = rt.finder

    def enable(self, scope, extra):
        self.rt.enable(scope, extra)

    def disable(self):
        self.rt.disable()

    def block(self, names):
        self.rt.blocked.extend(names)

    def guard(self, enable, scope):
        return _Guard(self.rt, enable, scope)


# A function whose frame belongs to whatever globals it is created with: the
# `call` step builds one with a module's __dict__ as its globals.  Its body
# reads no global or builtin name.
_CALL_CODE = (lambda rt, steps, ptr, g: rt.block(steps, ptr, g)).__code__


class _Runtime(_common.StepLoop):
    def __init__(self, config):
        scenario = config["scenario"]
        self.scenario = scenario
        name, _, revision = config["variant"].partition("@")
        if name not in _DESIGNS:
            raise SystemExit("harness: no oracle for variant %r" % config["variant"])
        design = _DESIGNS[name]
        self.revision = revision or config.get("revision", "b52ce17")
        if self.revision not in _REVISIONS:
            raise SystemExit("harness: unknown revision %r" % self.revision)
        self.resolving_fix = "resolving_fix" in design
        self.resolving_global = "resolving_global" in design
        self.idempotent_enable = "idempotent_enable" in design
        self.disable_all = "disable_all" in design
        self.indexed_walk = "indexed_walk" in design
        self.python_walk = bool(config.get("python_walk")) and not self.indexed_walk
        self.branches = bool(config.get("branches"))  # real_finder.py: record find_spec's branches
        self.params = config["params"]
        self.tree = scenario.get("tree", {})
        self.blocked = list(scenario.get("blocked", ["tvm_ffi"]))
        self.counts = [0] * len(_COUNTERS)
        self.depth = 0
        self.max_depth = 0
        self.resolving = set()
        self.cache = {}
        self.finder = _ProxyFinder(self)
        self.backend = _Restated(self)
        self.stack = []        # pointers of the steps running, outermost first
        self.where = {}        # id(exception) -> (exception, stack when raised)
        self.active = []       # label frames of the labelled steps running
        self.labels = {}
        self.results = {}
        self.lazy = None  # a LazyWatch when the scenario has lazy-import steps
        self.steps = _lazy_steps.LazySteps(None)
        sysmods = scenario.get("sys_modules", {})
        self.filler_count = self.num(sysmods.get("filler", 0))
        owned = {"torch", "paddle"}
        for name in list(self.tree) + list(sysmods.get("preloaded", [])) \
                + list(sysmods.get("torch", [])):
            owned.add(name.partition(".")[0])
        for i in range(self.filler_count):
            owned.add("_impsim_filler_%d" % i)
        self.owned = owned
        self.fillers = frozenset("_impsim_filler_%d" % i
                                 for i in range(self.filler_count))
        for label in _common.collect_labels(scenario):
            self.labels[label] = [0] * (len(_COUNTERS) + 1)
            self.results[label] = []

    # -- counters --------------------------------------------------------------
    def owned_count(self):
        """Scenario-owned names in sys.modules (what a walk examines).

        = len(sys.modules) minus the interpreter's own modules, which are
        all present before the program starts (self.foreign, taken then) and
        never added by it: a scenario only imports names of its own tree.
        _report checks that assumption at the end of the run.
        """
        modules = _sys.modules
        n = len(modules)
        for name in self.foreign:
            if name in modules:
                n -= 1
        return n

    def take_foreign(self):
        owned = self.owned
        self.foreign = tuple(n for n in _sys.modules
                             if n.partition(".")[0] not in owned)
        self.static = frozenset(self.foreign) | self.fillers

    def count_walk_of(self):
        """One walk over sys.modules (all its names), counted before it starts."""
        counts = self.counts
        counts[_WALKS] += 1
        counts[_COMPARISONS] += self.owned_count()

    def enter_lookup(self):
        """A lookup (`specific`) starts: lookups, depth, labels' max depth."""
        self.counts[_LOOKUPS] += 1
        self.depth += 1
        depth = self.depth
        if depth > self.max_depth:
            self.max_depth = depth
        for frame in self.active:
            if depth > frame[2]:
                frame[2] = depth

    def leave_lookup(self):
        self.depth -= 1

    def count_walk(self):
        """One toggle: one walk over sys.modules, counted before it starts.

        Returns the torch names the walk acts on.  The released walk
        examines every name (comparisons += owned_count()); indexed-walk
        examines only the torch names (comparisons += their number).
        """
        counts = self.counts
        counts[_TOGGLES] += 1
        counts[_WALKS] += 1
        names = self.torch_names()
        counts[_COMPARISONS] += len(names) if self.indexed_walk \
            else self.owned_count()
        return names

    def torch_names(self):
        """The torch names in sys.modules, in sys.modules order.

        The same list as `[n for n in sys.modules if is_torch(n)]`, but a
        walk over thousands of filler modules stays in C: the interpreter's
        own modules and the fillers are never torch names.
        """
        modules = _sys.modules
        if self.python_walk:
            return [n for n in list(modules) if _is_torch(n)]
        found = [n for n in modules.keys() - self.static if _is_torch(n)]
        if len(found) > 1:
            found = set(found)
            found = [n for n in modules if n in found]
        return found

    # -- the finder's API -------------------------------------------------------
    def enable(self, scope, extra=None):
        if extra:  # blocked_modules=X passed (X may be None)
            if self.revision == "04efefd":
                raise TypeError("enable_torch_proxy() got an unexpected "
                                "keyword argument 'blocked_modules'")
            if extra["blocked_modules"] is not None:
                self.blocked.extend(extra["blocked_modules"])
        modules = _sys.modules
        keep_proxies = self.revision == "04efefd"
        for name in self.count_walk():
            module = modules[name]
            if not isinstance(module, _ProxyModule):
                self.cache[name] = module
            elif keep_proxies:
                continue  # 04efefd moves only real torch modules
            del modules[name]
        finder = self.finder
        if finder not in _sys.meta_path or finder.globally_enabled:
            finder.scope = set(scope) if scope is not None else set()
            finder.globally_enabled = scope is None
        elif scope is None:
            finder.globally_enabled = True
        else:
            finder.scope |= set(scope)
        if not self.idempotent_enable or finder not in _sys.meta_path:
            _sys.meta_path.insert(0, finder)

    def disable(self):
        finder = self.finder
        if finder not in _sys.meta_path:
            return
        _sys.meta_path.remove(finder)
        if self.disable_all:
            while finder in _sys.meta_path:
                _sys.meta_path.remove(finder)
        modules = _sys.modules
        for name in self.count_walk():
            if isinstance(modules[name], _ProxyModule):
                del modules[name]
        for name, module in list(self.cache.items()):
            modules[name] = module

    def specific(self, name, exec_enable, mark):
        self.enter_lookup()
        try:
            with _Guard(self, False, None):
                if self.resolving_fix:
                    self.resolving.add(name)
                try:
                    spec = _util.find_spec(name)
                finally:
                    if self.resolving_fix:
                        self.resolving.discard(name)
                if spec is None or spec.loader is None:
                    return None
                spec.loader = _SpecificLoader(self, spec.loader, exec_enable, mark)
            return spec
        finally:
            self.leave_lookup()

    def cached_spec(self, name):
        if name not in self.cache:
            return None
        module = self.cache[name]
        origin = getattr(module, "__file__", None)
        if self.revision == "04efefd":  # not a package spec
            return _util.spec_from_loader(name, _BodilessLoader(module), origin=origin)
        spec = _util.spec_from_loader(name, _BodilessLoader(module), origin=origin,
                                      is_package=True)
        spec.submodule_search_locations = list(getattr(module, "__path__", []))
        return spec

    # -- the starting state -------------------------------------------------------
    def tree_spec(self, name, root):
        entry = self.tree[name]
        parts = name.split(".")
        base = _join(root, *parts)
        if entry.get("package", False):
            return _util.spec_from_file_location(
                name, _join(base, "__init__.py"), submodule_search_locations=[base])
        return _util.spec_from_file_location(name, base + ".py")

    def preload(self, root):
        sysmods = self.scenario.get("sys_modules", {})
        for kind in ("preloaded", "torch"):
            for name in sysmods.get(kind, []):
                if name in self.tree:
                    spec = self.tree_spec(name, root)
                else:
                    spec = _machinery.ModuleSpec(name, _BodilessLoader(),
                                                 is_package=(kind == "torch"))
                _sys.modules[name] = _util.module_from_spec(spec)
        for i in range(self.filler_count):
            name = "_impsim_filler_%d" % i
            _sys.modules[name] = _types.ModuleType(name)

    # -- the step interpreter (harness_common.StepLoop) ------------------------
    def label_snapshot(self):
        return list(self.counts)

    def label_add(self, label, start, deepest, hook_deepest=0):
        sums = self.labels[label]
        counts = self.counts
        for i in range(len(_COUNTERS)):
            sums[i] += counts[i] - start[i]
        if deepest > sums[-1]:
            sums[-1] = deepest

    def action(self, step, ptr, g):
        if "import" in step:
            return self.steps.import_(step["import"], bool(step.get("optional")), g)
        result = self.steps.step(step, ptr, g)
        if result is not None:
            return result
        if "import_module" in step:
            if step.get("optional"):
                try:
                    _importlib.import_module(step["import_module"])
                except ImportError as exc:
                    return type(exc).__name__
            else:
                _importlib.import_module(step["import_module"])
            return "ok"
        if "find_spec" in step:
            name = step["find_spec"]
            if step.get("optional"):
                try:
                    spec = _util.find_spec(name)
                except ImportError as exc:
                    return type(exc).__name__
            else:
                spec = _util.find_spec(name)
            return "none" if spec is None else "found"
        if "enable" in step:
            body = step["enable"] or {}
            scope = body.get("scope")
            extra = {}
            if "blocked_modules" in body:
                blocked = body["blocked_modules"]
                extra["blocked_modules"] = None if blocked is None else list(blocked)
            self.backend.enable(None if scope is None else set(scope), extra)
            return "ok"
        if "disable" in step:
            self.backend.disable()
            return "ok"
        if "block" in step:
            self.backend.block(list(step["block"]))
            return "ok"
        if "guard" in step:
            guard = step["guard"]
            enable = guard.get("enable", True)
            scope = guard.get("scope")
            body = step.get("body", [])
            if "nest" in step:
                self.nest(1, self.num(step["nest"]), enable, scope, body, ptr, g)
            else:
                with self.backend.guard(enable, None if scope is None else set(scope)):
                    self.block(body, ptr + "/body", g)
            return "ok"
        if "call" in step:
            module = _sys.modules[step["call"]]
            function = _types.FunctionType(_CALL_CODE, module.__dict__)
            function(self, step.get("body", []), ptr + "/body", module.__dict__)
            return "ok"
        raise ValueError("unknown step at " + ptr)

    def nest(self, level, levels, enable, scope, body, ptr, g):
        """`nest` guards: level 1 outermost, "{i}" in the scope is the level."""
        if level > levels:
            self.block(body, ptr + "/body", g)
            return
        given = None
        if scope is not None:
            given = set(s.replace("{i}", str(level)) for s in scope)
        with self.backend.guard(enable, given):
            self.nest(level + 1, levels, enable, scope, body, ptr, g)


def _join(*parts):
    return "/".join(parts)


def _report(rt, error):
    """Snapshot everything first, then build the run's report."""
    counts = list(rt.counts)
    max_depth = rt.max_depth
    names = list(_sys.modules)
    modules = _sys.modules
    marked = []
    for name in names:
        d = getattr(modules[name], "__dict__", {})
        marks = [text for key, text in _MARK_NAMES.items() if key in d]
        if marks:
            marked.append((name, "+".join(marks)))
    finder = rt.backend.finder
    copies = sum(1 for f in _sys.meta_path if f is finder)
    while finder in _sys.meta_path:
        _sys.meta_path.remove(finder)
    counters = dict(zip(_COUNTERS, counts))
    counters["max_depth"] = max_depth
    labels = {}
    for label, sums in rt.labels.items():
        entry = dict(zip(_COUNTERS, sums))
        entry["max_depth"] = sums[-1]
        labels[label] = entry
    owned = rt.owned
    foreign = set(rt.foreign)
    for name in names:
        if name.partition(".")[0] not in owned and name not in foreign:
            raise SystemExit("harness: the program added a module the "
                             "scenario does not own: %r" % name)
    return {
        "counters": counters,
        "labels": labels,
        "outcome": {
            "modules": [n for n in names
                        if n.partition(".")[0] in owned and n not in rt.fillers],
            "marks": dict(marked),
            "results": rt.results,
            "proxy_copies": copies,
            "error": error,
        },
    }


_SNAPSHOT = """\
    # gh-130094: Copy sys.meta_path so that we have a consistent view of the
    # list while iterating over it.
    meta_path = list(meta_path)
"""


def _stdlib_source(path, inside):
    """The text of a standard-library file: at path, or, where the library
    is a zip on sys.path (pyodide's builds), `inside` that zip."""
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        for entry in _sys.path:
            if entry.endswith(".zip"):
                try:
                    return _zipimport.zipimporter(entry).get_data(entry + "/" + inside).decode("utf-8")
                except OSError:
                    continue
        raise


def _snapshot_meta_path():
    """CPython 3.14's meta path iteration, emulated on this interpreter.

    From gh-130094 on, importlib._bootstrap._find_spec iterates a copy of
    sys.meta_path.  This interpreter's own _find_spec, read from its
    Lib/importlib/_bootstrap.py, gets that one line and replaces the global
    in importlib._bootstrap (which import statements reach through
    _find_and_load) and importlib.util (which bound the name at import).
    A probe checks that both paths now run the new code.
    """
    bootstrap = _sys.modules["importlib._bootstrap"]
    folder = getattr(_sys, "_stdlib_dir", None)
    if folder:
        path = folder + "/importlib/_bootstrap.py"
    else:
        path = _importlib.__file__.rpartition("/")[0] + "/_bootstrap.py"
    lines = _stdlib_source(path, "importlib/_bootstrap.py").split("\n")
    start = lines.index("def _find_spec(name, path, target=None):")
    end = start + 1
    while end < len(lines) and (not lines[end] or lines[end][0] in " \t#"):
        end += 1
    body = lines[start:end]
    anchor = [i for i, line in enumerate(body) if line == "    if not meta_path:"]
    if len(anchor) != 1 or "meta_path = list(meta_path)" in "\n".join(body):
        raise SystemExit("harness: cannot find where to copy sys.meta_path "
                         "in %s" % path)
    source = "\n".join(body[:anchor[0]]) + "\n" + _SNAPSHOT \
        + "\n".join(body[anchor[0]:]) + "\n"
    exec(compile(source, "<impsim: %s _find_spec, snapshot of sys.meta_path>"
                 % path, "exec"), bootstrap.__dict__)
    new = bootstrap.__dict__["_find_spec"]
    _util._find_spec = new
    seen = []

    class Probe:
        def find_spec(self, name, path=None, target=None):
            seen.append(_sys._getframe(1).f_code is new.__code__)
            return None

    probe = Probe()
    _sys.meta_path.insert(0, probe)
    try:
        try:
            exec("import _impsim_snapshot_probe", {})
        except ImportError:
            pass
        _util.find_spec("_impsim_snapshot_probe")
    finally:
        _sys.meta_path.remove(probe)
    if seen != [True, True]:
        raise SystemExit("harness: the snapshot _find_spec is not the one "
                         "imports run (%r)" % seen)


def _load_real_finder(rt, source):
    """tools/lib/crosscheck/real_finder.py (not on sys.path: -I)."""
    here = __file__.rpartition("/")[0] or "."
    spec = _util.spec_from_file_location("_impsim_real_finder",
                                         here + "/real_finder.py")
    module = _util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.RealFinder(rt, source)


def _main(argv):
    with open(argv[1]) as f:
        config = _json.load(f)
    cpython = config.get("cpython")
    here = "%d.%d" % _sys.version_info[:2]
    if cpython == "3.14" and here != "3.14":
        _snapshot_meta_path()
    elif cpython is not None and cpython != here:
        raise SystemExit("harness: CPython %s asked for, this is %s (only 3.14 "
                         "is emulated)" % (cpython, here))
    expected = [_machinery.BuiltinImporter, _machinery.FrozenImporter,
                _machinery.PathFinder]
    if len(_sys.meta_path) != 3 or any(a is not b for a, b in
                                       zip(_sys.meta_path, expected)):
        raise SystemExit("harness: unexpected sys.meta_path %r" % (_sys.meta_path,))
    _sys.setrecursionlimit(int(config.get("recursion_limit", 1000)))
    rt = _Runtime(config)
    if config.get("finder_source"):
        rt.backend = _load_real_finder(rt, config["finder_source"])
    root = config["tree_root"]
    _sys.path.insert(0, root)
    rt.preload(root)
    if _common.uses_lazy(rt.scenario):
        if not hasattr(_sys, "set_lazy_imports"):
            raise SystemExit("harness: lazy-import steps need CPython 3.15 or "
                             "later, this is %s" % here)
        rt.lazy = rt.steps.watch = _lazy_steps.LazyWatch()
    rt.take_foreign()
    _builtins.__impsim__ = rt
    main_globals = _sys.modules["__main__"].__dict__
    error = None
    if rt.lazy is not None:
        rt.lazy.install()
    start = _perf_counter()
    try:
        rt.block(rt.scenario.get("program", []), "/program", main_globals)
    except BaseException as exc:  # the run's uncaught exception
        seconds = _perf_counter() - start
        where = rt.where.get(id(exc))
        trace = list(where[1]) if where is not None else []
        error = {"type": type(exc).__name__, "message": str(exc),
                 "step": trace[-1] if trace else None, "traceback": trace}
    else:
        seconds = _perf_counter() - start
    _sys.settrace(None)
    lazy = rt.lazy.uninstall() if rt.lazy is not None else None
    report = _report(rt, error)
    if lazy is not None:
        report["lazy"] = lazy
    if getattr(rt.backend, "branches", None) is not None:
        report["branches"] = rt.backend.branches.records
    if config.get("time"):
        report["program_seconds"] = seconds
    report["python"] = "%d.%d.%d" % _sys.version_info[:3]
    _sys.stdout.write(_json.dumps(report) + "\n")
    _sys.stdout.flush()


if __name__ == "__main__":
    if _sys.argv[1:] == ["--serve"]:  # runs in forks of this process (harness_common.serve)
        _common.serve(_main)
    else:
        _main(_sys.argv)
