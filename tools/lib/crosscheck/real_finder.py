# The real-source backend of harness.py: a real paddle/compat/proxy.py,
# loaded unmodified, drives the scenario's enable/disable/guard/block steps,
# and impsim's counters are taken from outside by wrapping its functions.
#
# Loaded by harness.py (by path: python -I leaves this folder off sys.path)
# when the harness CONFIG has "finder_source".  Everything here, and
# everything proxy.py imports, is loaded before the program starts, so it is
# among the interpreter's own modules that the counters leave out.
#
# What is wrapped (the names are looked up at call time, as module globals or
# class attributes, so the wrappers see every call, the finder's own included):
#   TorchProxyMetaFinder.find_spec           asks (+ the fix's early return)
#   ..._find_spec_for_specific_module        lookups, max_depth
#   enable_torch_proxy                        toggles (when the call binds)
#   disable_torch_proxy                       toggles (when P is present)
#   _swap_torch_modules_to_cache,
#   _clear_torch_proxy_modules                walks, comparisons
# Neutralised: _register_compat_override (it imports paddle.compat, which a
# scenario's paddle tree does not have).  Warnings are ignored: they change
# nothing but stderr (and printing them would import linecache).
#
# The fix (`after`), as in the reference PR: a per-thread set of the names
# being resolved, on the finder (`after-global-set`: one plain set there,
# shared by every thread); find_spec returns None at once for a name in
# it; the name is added before, and discarded after, the
# importlib.util.find_spec call inside _find_spec_for_specific_module.  That
# call is reached through the proxy module's own global `importlib`, which
# gets a stand-in (_Importlib) whose .util.find_spec does add/call/discard and
# whose every other attribute is the real one: only proxy.py's code sees it,
# and importlib.util.find_spec stays untouched for everyone else (the parent
# package it imports first may probe too).
#
# With the harness CONFIG key "branches" (tools/check/crosscheck_reasons): every
# call of find_spec records which `return` of the REAL find_spec it left by
# and which functions it called on the way (sys.settrace, find_spec's frames
# only), and _Branches names that return from find_spec's own syntax tree:
# the `if` tests around it and what it returns.  The report gets
# "branches": [[name, key], ...] in call order, keys as impsim's reasons.

import importlib as _importlib
import importlib.util as _util
import inspect as _inspect
import sys as _sys
import threading as _threading
import warnings as _warnings

_ASKS, _SUPPRESSED = 0, 1    # harness.py's counter indices
_TOGGLES = 3


class _Shared:
    """after-global-set's `_resolving`: one object for every thread, where
    the reference PR has a threading.local."""


def _resolving(finder):
    """The finder's set of names being resolved (this thread's, under the
    reference PR's threading.local)."""
    local = finder._resolving
    names = getattr(local, "names", None)
    if names is None:
        names = local.names = set()
    return names


class _Util:
    """importlib.util as proxy.py sees it under the fix."""

    def __init__(self, finder):
        self._finder = finder

    def __getattr__(self, name):
        return getattr(_util, name)

    def find_spec(self, name, package=None):
        names = _resolving(self._finder)
        names.add(name)
        try:
            return _util.find_spec(name, package)
        finally:
            names.discard(name)


class _Importlib:
    """importlib as proxy.py sees it under the fix: .util is _Util."""

    def __init__(self, finder):
        self.util = _Util(finder)

    def __getattr__(self, name):
        return getattr(_importlib, name)


class _Branches:
    """Which branch of the real find_spec each call took, by its return line.

    The branch of a `return` is read from find_spec's syntax tree: the `if`
    tests that enclose it (innermost last) and the call it returns (or
    None).  Names of the finder's helpers and predicates give the key;
    a return no rule names is reported as "unknown@LINE" (a mismatch).
    """

    def __init__(self, source, function):
        import ast
        with open(source) as f:
            tree = ast.parse(f.read())
        code = function.__code__
        self.code = code
        self.by_line = {}
        target = None
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == "find_spec" \
                    and node.lineno <= code.co_firstlineno <= node.body[0].lineno:
                target = node
        if target is None:
            raise SystemExit("harness: find_spec not found in %s" % source)

        def visit(body, tests):
            for stmt in body:
                if isinstance(stmt, ast.If):
                    visit(stmt.body, tests + [ast.unparse(stmt.test)])
                    visit(stmt.orelse, tests + ["not (%s)" % ast.unparse(stmt.test)])
                elif isinstance(stmt, ast.Return):
                    value = stmt.value
                    called = None
                    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
                        called = value.func.attr
                    self.by_line[stmt.lineno] = (tests, called)

        visit(target.body, [])
        self.records = []   # [name, key]
        self.open = []      # per running find_spec: [record index, functions it called]

    def key(self, line, called_by_frame):
        tests, called = self.by_line.get(line, (None, None))
        if tests is None:
            return "unknown@%d" % line
        cached = called == "_find_spec_for_cached_torch_module"
        outer = tests[0] if tests else ""
        if called == "_find_spec_for_torch_proxy_blocked_module":
            return "blocked"
        if called == "_find_spec_for_torch_proxy_local_enabled_module":
            return "in-scope"
        if outer.startswith("not _is_torch_module("):
            return "not-torch"
        if outer == "_is_called_by_torch_proxy_blocked_module()":
            return "caller-disabled-cached" if cached else "caller-disabled"
        if "not self._globally_enabled" in outer:
            return "not-enabled-cached" if cached else "not-enabled"
        if called == "_find_spec_for_torch_module" and not tests:
            # `not self._globally_enabled and not _is_called_by_..._local_enabled_module()`
            # short-circuits: the frame walk runs only when the finder is not global.
            if "_is_called_by_torch_proxy_local_enabled_module" in called_by_frame:
                return "proxied-caller"
            return "proxied-global"
        return "unknown@%d" % line

    def begin(self, name):
        self.records.append([name, None])
        self.open.append([len(self.records) - 1, []])

    def end(self):
        self.open.pop()

    def tracer(self, frame, event, arg):
        """The global trace function: find_spec's frames get a local one."""
        if event != "call":
            return None
        if frame.f_code is self.code:
            return self.local
        back = frame.f_back
        if back is not None and back.f_code is self.code and self.open:
            self.open[-1][1].append(frame.f_code.co_name)
        return None

    def local(self, frame, event, arg):
        if event == "return" and self.open:
            index, called = self.open[-1]
            if self.records[index][1] is None:
                self.records[index][1] = self.key(frame.f_lineno, called)
        return self.local


class RealFinder:
    """harness.py's backend interface over a real proxy.py."""

    def __init__(self, rt, source):
        if rt.indexed_walk or rt.idempotent_enable or rt.disable_all:
            raise SystemExit("harness: the real finder runs only `before` "
                             "and `after`")
        _warnings.simplefilter("ignore")
        spec = _util.spec_from_file_location("paddle.compat.proxy", source)
        proxy = _util.module_from_spec(spec)
        spec.loader.exec_module(proxy)   # not put in sys.modules
        self.proxy = proxy
        self.finder = proxy.TORCH_PROXY_FINDER
        proxy._register_compat_override = lambda: None
        blocked = proxy.TORCH_PROXY_BLOCKED_MODULES
        blocked.clear()
        blocked.update(rt.blocked)
        counts = rt.counts
        fix = rt.resolving_fix
        if fix:
            self.finder._resolving = _Shared() if rt.resolving_global else _threading.local()
            proxy.importlib = _Importlib(self.finder)

        cls = proxy.TorchProxyMetaFinder
        find_spec = cls.find_spec
        branches = self.branches = None
        if rt.branches:
            branches = self.branches = _Branches(source, find_spec)
            _sys.settrace(branches.tracer)

        def counted_find_spec(self, fullname, path, target=None):
            counts[_ASKS] += 1
            if fix and fullname in _resolving(self):
                counts[_SUPPRESSED] += 1
                if branches is not None:
                    branches.records.append([fullname, "suppressed"])
                return None
            if branches is None:
                return find_spec(self, fullname, path, target)
            branches.begin(fullname)
            try:
                return find_spec(self, fullname, path, target)
            finally:
                branches.end()

        cls.find_spec = counted_find_spec

        specific = cls._find_spec_for_specific_module

        def counted_specific(self, *args, **kwargs):
            rt.enter_lookup()
            try:
                return specific(self, *args, **kwargs)
            finally:
                rt.leave_lookup()

        cls._find_spec_for_specific_module = counted_specific

        def walk(function):
            def counted_walk(*args, **kwargs):
                rt.count_walk_of()
                return function(*args, **kwargs)
            return counted_walk

        proxy._swap_torch_modules_to_cache = walk(proxy._swap_torch_modules_to_cache)
        proxy._clear_torch_proxy_modules = walk(proxy._clear_torch_proxy_modules)

        enable = proxy.enable_torch_proxy
        signature = _inspect.signature(enable)

        def counted_enable(*args, **kwargs):
            try:
                signature.bind(*args, **kwargs)
            except TypeError:
                return enable(*args, **kwargs)  # raises the real TypeError
            counts[_TOGGLES] += 1
            return enable(*args, **kwargs)

        disable = proxy.disable_torch_proxy
        finder = self.finder

        def counted_disable(*args, **kwargs):
            if finder in _sys.meta_path:
                counts[_TOGGLES] += 1
            return disable(*args, **kwargs)

        proxy.enable_torch_proxy = counted_enable
        proxy.disable_torch_proxy = counted_disable

    # -- the backend interface (harness.py) -----------------------------------
    def enable(self, scope, extra):
        self.proxy.enable_torch_proxy(scope=scope, **extra)

    def disable(self):
        self.proxy.disable_torch_proxy()

    def block(self, names):
        self.proxy.extend_torch_proxy_blocked_modules(names)

    def guard(self, enable, scope):
        return self.proxy.use_torch_proxy_guard(enable=enable, scope=scope)
