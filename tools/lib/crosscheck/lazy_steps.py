# PEP 810's lazy imports (docs/lazy-imports.md), CPython >= 3.15, for the
# harnesses that run scenarios on the real interpreter: harness.py (the
# Paddle finder) and hooks_real.py (the hook language).  LazySteps runs the
# lazy steps (lazy_import, lazy_from, use, resolve, set_lazy_imports,
# set_lazy_imports_filter, __lazy_modules__) and the import step, which is
# lazy under mode "all" or __lazy_modules__; LazyWatch counts what the
# report's "lazy" object holds.  Imported from beside the harnesses, inside
# the interpreter under test.  Standard library only.

import builtins
import sys
import types


OPTIONAL_IMPORT = """\
try:
    import %s
except ImportError as __impsim_exc__:
    __impsim_caught__ = __impsim_exc__
"""
USE_FILE = "<impsim use>"
ABSENT = object()


class LazyWatch:
    """The run-level "lazy" report of a scenario with lazy-import steps.

    statements: lazy_import and lazy_from steps (and, under
    set_lazy_imports("all") or __lazy_modules__, import steps) after which a
    name the statement binds holds a NEW types.LazyImportType object: the
    statement ran lazily.  A filter's false answer makes it eager (the name
    holds the module): not counted; nor is a lazy_from whose every name the
    module in sys.modules had already (bound to its value).

    resolutions: each attempt to resolve a lazy_import object, failed ones
    included, counted by a wrapper around builtins.__import__ installed for
    the program only (install/uninstall).  On 3.15.0rc1 a resolution calls
    builtins.__import__ exactly once (rule import-hook-at-resolution;
    `lazy import a.b as c` too: one call __import__('a', ..., ('b',), 0)),
    with the Python frame that read the name as the caller: it runs the
    LOAD_NAME, LOAD_GLOBAL or LOAD_ATTR (a module attribute) that found the
    lazy object (or a CALL of getattr/hasattr, which no step makes).  The
    statement calls
    builtins.__lazy_import__, not __import__ (rule
    lazy-import-hook-at-statement).  The wrapper sees three other kinds of
    call, and leaves them out:
      - an import statement (eager, or inside try): the caller frame's
        current instruction is IMPORT_NAME;
      - PyImport_Import from C (FileLoader.get_data reaching _io while a
        tree module's file is read: __import__('_io', ..., [], 0)) and
        importlib.util.find_spec's own __import__(parent,
        fromlist=['__path__']): their fromlist is a list, a resolution's is
        None or a tuple (None for `lazy import a.b`, ('b',) with `as`).
    Everything left is a resolution: 3.15.0rc1 has no audit event, monitoring
    event or hook of its own for one (the "import" audit event also fires for
    eager imports, and not at all for a module already in sys.modules, which
    a resolution still passes through __import__).  Two things that are not
    a lazy_import object's resolution are not counted, as they call no
    __import__: the attribute access `a.b` that imports submodule a.b
    because 'a.b' is in sys.lazy_modules (_find_and_load_lazy_submodule),
    and a read of a lazy object during its own resolution (ImportCycleError
    is raised before any import).  Counting every __import__ call made while
    the innermost step is a `use` would count the _io calls too (two per
    source file read).  Checked by a census of every call the wrapper saw in
    the 300 programs of `gen_random.py --kind lazy --seed 1`: the counted
    ones all came from LOAD_NAME or LOAD_ATTR in `use` code, the others from
    IMPORT_NAME in import steps, get_data's _io and find_spec's parent
    import; the `use`-step count differed from this one in 199 of 371 runs.

    filter_calls: calls of the filters set_lazy_imports_filter installed.
    lazy_modules: the names sys.lazy_modules gained during the program.
    """

    def __init__(self):
        import opcode  # before the program: nothing is imported while it runs
        self.import_name = opcode.opmap["IMPORT_NAME"]
        self.statements = 0
        self.resolutions = 0
        self.filter_calls = 0
        self.original = None

    def count_statement(self, g, bound, before):
        """bound, before: the names the statement binds and what each held."""
        for name, old in zip(bound, before):
            after = g.get(name)  # dict access: does not resolve
            if type(after) is types.LazyImportType and after is not old:
                self.statements += 1
                return

    def install(self, skip_files=()):
        """skip_files: the files of Python code that calls __import__ for
        reasons of its own (hook_runtime.py's hooks: `__import__(m)` for an
        import action, six's _import_module), whose calls are not
        resolutions."""
        self.start_modules = set(sys.lazy_modules)
        original = self.original = builtins.__import__
        getframe = sys._getframe
        import_name = self.import_name
        skip = frozenset(skip_files)
        watch = self

        def __import__(*args, **kwargs):
            fromlist = args[3] if len(args) > 3 else kwargs.get("fromlist")
            if type(fromlist) is not list:
                caller = getframe(1)
                if caller.f_code.co_code[caller.f_lasti] != import_name \
                        and caller.f_code.co_filename not in skip:
                    watch.resolutions += 1
            return original(*args, **kwargs)

        builtins.__import__ = __import__

    def uninstall(self):
        """The program's end: the report's figures, then the interpreter's
        import state as before the program (no lazy mode, no filter)."""
        report = {"statements": self.statements, "resolutions": self.resolutions,
                  "filter_calls": self.filter_calls,
                  "lazy_modules": sorted(set(sys.lazy_modules) - self.start_modules)}
        builtins.__import__ = self.original
        sys.set_lazy_imports_filter(None)
        sys.set_lazy_imports("normal")
        return report


def eager_filter(watch, eager):
    """sys.set_lazy_imports_filter's filter: lazy unless the module is one
    of `eager`; each call counted."""
    eager = frozenset(eager)

    def _filter(importer, name, fromlist):
        watch.filter_calls += 1
        return name not in eager

    return _filter


class LazySteps:
    """The steps, each compiled once and exec'd in the frame's globals `g`
    as module-level code (a `call` step's g is its module's __dict__)."""

    def __init__(self, watch):
        self.watch = watch  # a LazyWatch, or None: the scenario has no lazy step
        self.code = {}

    def compiled(self, source, filename):
        code = self.code.get((source, filename))
        if code is None:
            code = self.code[(source, filename)] = compile(source, filename, "exec")
        return code

    def import_(self, name, optional, g):
        """`import name`: an optional one is `try: import m / except
        ImportError` in the exec'd module-level code itself, as a program
        writes it: under sys.set_lazy_imports("all") an import inside try
        stays eager, where a bare `import m` would be lazy.  The caught
        exception comes back through __impsim_caught__, deleted at once (no
        scenario code runs in between)."""
        code = self.compiled(OPTIONAL_IMPORT % name if optional else "import " + name, "<impsim import>")
        watch = self.watch
        if watch is not None:
            bound = [name.partition(".")[0]]
            before = [g.get(bound[0], ABSENT)]
        exec(code, g)
        if optional:
            caught = g.pop("__impsim_caught__", None)
            if caught is not None:
                return type(caught).__name__
        if watch is not None:
            watch.count_statement(g, bound, before)
        return "ok"

    def step(self, step, ptr, g):
        """A lazy step's result, or None for any other step."""
        if "lazy_import" in step or "lazy_from" in step:
            if step.get("optional"):
                raise ValueError("a lazy step cannot be optional (`lazy import` inside try is a "
                                 "SyntaxError) at " + ptr)
            if "lazy_import" in step:
                name = step["lazy_import"]
                alias = step.get("as")
                source = "lazy import " + name + (" as " + alias if alias else "")
                bound = [alias or name.partition(".")[0]]
            else:
                names = step["names"]
                source = "lazy from " + step["lazy_from"] + " import " + ", ".join(names)
                bound = [n.partition(" as ")[2] or n for n in names]
            code = self.compiled(source, "<impsim lazy import>")
            before = [g.get(b, ABSENT) for b in bound]
            exec(code, g)
            self.watch.count_statement(g, bound, before)
            return "ok"
        if "use" in step or "resolve" in step:
            source = step["use"] if "use" in step else "globals()[%r].resolve()" % step["resolve"]
            code = self.compiled(source, USE_FILE)
            if step.get("optional"):
                try:
                    exec(code, g)
                except ImportError as exc:
                    return type(exc).__name__
            else:
                exec(code, g)
            return "ok"
        if "set_lazy_imports" in step:
            sys.set_lazy_imports(step["set_lazy_imports"])
            return "ok"
        if "set_lazy_imports_filter" in step:
            body = step["set_lazy_imports_filter"]
            sys.set_lazy_imports_filter(
                None if body is None else eager_filter(self.watch, body.get("eager", [])))
            return "ok"
        if "__lazy_modules__" in step:
            g["__lazy_modules__"] = list(step["__lazy_modules__"])
            return "ok"
        return None

    def use_in(self, module, expression):
        """A hook's `use` action: the expression read in a function of
        `module`, so against that module's globals."""
        exec(self.compiled(expression, USE_FILE), sys.modules[module].__dict__)
