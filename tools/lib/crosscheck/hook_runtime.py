# The hook language (docs/scenario-format.md, "Hooks") re-stated in Python,
# once, for both harnesses that run hook scenarios on real CPython:
# hooks_real.py (tools/check/crosscheck --hooks: impsim's engine against the real
# importlib) and zoo_harness.py (tools/check/crosscheck --zoo: the zoo against the
# real packages, or against this re-statement).
#
# Hook: a finder object generated from a hook's declaration (claims,
# find_spec actions, guard, loader wrapper).  Runtime: the scenario's finder
# objects, the designs (generic fixes), install/uninstall policies, the step
# interpreter and the counting, from outside: importlib._bootstrap._find_spec
# and importlib.util._find_spec are wrapped (searches, max_depth) and each
# hook object's find_spec (or find_module) is wrapped on the object
# (finder_calls, per object).
#
# Imported from beside the harnesses (their folder on sys.path for the import
# only), inside the interpreter under test.  Standard library only, Python
# >= 3.9.

import gc as _gc
import sys as _sys
import importlib as _importlib
import importlib.abc as _abc
import importlib.util as _util
import importlib.machinery as _machinery
import threading as _threading
import time as _time
import types as _types  # loaded by importlib.util already
import warnings as _warnings

try:
    from . import harness_common as common
    from . import lazy_steps
except ImportError:  # imported from beside a harness, not as crosscheck.hook_runtime
    import harness_common as common
    import lazy_steps

_bootstrap = _sys.modules["_frozen_importlib"]  # what importlib._bootstrap is

PREDEFINED = {
    "BuiltinImporter": _machinery.BuiltinImporter,
    "FrozenImporter": _machinery.FrozenImporter,
    "PathFinder": _machinery.PathFinder,
}

# The hook designs (docs/designs.md, "Designs for hooks") -> the fix.
DESIGNS = {
    "as_is": None, "idempotent_install": "idempotent_install", "remove_all": "remove_all",
    "skip_self": "skip_self", "call_next": "call_next", "guard_global_set": "global_set",
    "guard_object_set": "object_set", "guard_thread_set": "thread_set", "guard_flag": "flag",
    "guard_remove_self": "remove_self", "unlock_after_exec": "unlock_after_exec",
}


def apply_fix(hook, fix):
    """The hook's declaration as a design leaves it (impsim's apply_hook_fix)."""
    hook = dict(hook)
    if fix == "idempotent_install":
        policy = hook.get("install", "insert0")
        hook["install"] = {"insert0": "insert0_if_absent", "append": "append_if_absent"}.get(policy, policy)
    elif fix == "remove_all":
        hook["uninstall"] = "all"
    elif fix == "call_next":
        hook["find_spec"] = [{"call_next": True} if "reenter" in a else a for a in hook.get("find_spec", [])]
    elif fix == "unlock_after_exec":
        places = lock_places(hook) - {"after_exec"}
        if "lock" in hook and places:
            hook["lock"] = dict(hook["lock"], taken=sorted(places))
        elif "lock" in hook:
            del hook["lock"]
    elif fix is not None:
        hook["guard"] = fix
    return hook


def claims(hook, fullname, path):
    c = hook.get("claims", {"all": True})
    if c.get("top_level_only") and path is not None:
        return False
    if "names" in c:
        return fullname in c["names"]
    if "packages" in c:
        return any(fullname == p or fullname.startswith(p + ".") for p in c["packages"])
    if "patterns" in c:  # the real fnmatch, on the name's last part
        last = fullname.rpartition(".")[2]
        return any(_fnmatch.fnmatchcase(last, p) for p in c["patterns"])
    if "top_level" in c:
        return "." not in fullname
    return True


_fnmatch = None


def load_fnmatch(hooks):
    """fnmatch (and re, which it compiles each pattern with) imported, and
    each pattern compiled, before the program runs and only where a hook
    claims by pattern: no search of theirs is counted, and no other
    scenario finds them in sys.modules."""
    global _fnmatch
    patterns = [p for h in hooks.values() for p in h.get("claims", {}).get("patterns", [])]
    if patterns:
        import fnmatch
        _fnmatch = fnmatch
        for p in patterns:
            fnmatch.fnmatchcase("", p)


def index_of(obj):
    """sys.meta_path.index(obj) by identity, or None."""
    for i, f in enumerate(_sys.meta_path):
        if f is obj:
            return i
    return None


def unload(names, submodules):
    for name in names:
        for key in list(_sys.modules):
            if key == name or (submodules and key.startswith(name + ".")):
                del _sys.modules[key]


def preload(scenario):
    """The scenario's sys_modules.preloaded, in sys.modules before the
    program: a module of its tree imported, any other a bare module (no
    spec a finder made, as impsim's)."""
    for name in scenario.get("sys_modules", {}).get("preloaded", []):
        if name not in _sys.modules:
            if name in scenario.get("tree", {}):
                _importlib.import_module(name)
            else:
                _sys.modules[name] = _types.ModuleType(name)


def import_module(name):
    """six's _import_module: `__import__(name); return sys.modules[name]`."""
    __import__(name)
    return _sys.modules[name]


class ServeLoader(_abc.Loader):
    """A hook's own loader (serve): the module object it was given (None:
    the default creation), or, for a table entry, the module it stands for,
    imported again as six's load_module does (MovedModule._resolve).  First
    its create_module runs the serve action's "create_module" imports
    (pyximport's build), before the module exists."""

    def __init__(self, module=None, target=None, package=False, build=()):
        self.module, self.target, self.package = module, target, package
        self.build = build

    def is_package(self, fullname):
        # what spec_from_loader asks when a legacy finder's find_module
        # returned this loader (_find_spec_legacy)
        if self.target:
            return hasattr(import_module(self.target), "__path__")
        return self.package

    def create_module(self, spec):
        for action in self.build:
            try:
                __import__(action["import"])
            except ImportError:
                if not action.get("optional"):
                    raise
        return import_module(self.target) if self.target else self.module

    def exec_module(self, module):
        pass


def lock_places(definition):
    """Where a hook's lock is taken ("lock"'s "taken": one place or a list)."""
    lock = definition.get("lock")
    if lock is None:
        return set()
    taken = lock.get("taken", "after_guard_test")
    return set(taken) if isinstance(taken, list) else {taken}


def _with_hook_lock(rt, owner, fullname, body):
    """`with lock:` around body, for Hook object `owner`'s lock, each side a
    point of the runtime's (threads_real.py forces them); the runtime knows
    who holds it. fullname: the name asked or loaded, None for an install."""
    rt.hook_point("hook_acquire", fullname)
    owner._lock.acquire()  # a hang waits here (Runtime.hang_of reads this line)
    rt.hook_lock_taken(owner._lock)
    try:
        return body()
    finally:
        rt.hook_lock_given(owner._lock)
        owner._lock.release()
        rt.hook_point("hook_release", fullname)


class WrappedLoader(_abc.Loader):
    """loader: {"wrap": "toggle" | "set_attribute", ...}; `hook`: the Hook
    object whose find_spec wrapped it (whose lock "after_exec" takes)."""

    def __init__(self, rt, loader, wrap, hook):
        self.rt, self.loader, self.wrap, self.hook = rt, loader, wrap, hook

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        if self.wrap["wrap"] == "toggle":
            finder = self.rt.object(self.wrap["finder"])
            index = index_of(finder)
            if index is not None:
                del _sys.meta_path[index]
            try:
                self.loader.exec_module(module)
            finally:
                if index is not None:
                    _sys.meta_path.insert(index, finder)
            return
        self.loader.exec_module(module)

        def after_exec():
            # wrapt's notify_module_loaded: the post-import hooks
            self.rt.mark(module, self.wrap["attribute"])
            for action in self.wrap.get("after_exec", []):
                __import__(action["import"])
        if "after_exec" in lock_places(self.hook._d):
            _with_hook_lock(self.rt, self.hook, module.__name__, after_exec)
        else:
            after_exec()


_GLOBAL_SET = set()                   # guard global_set: one set for every hook (ddtrace's _finding)
_THREAD_FINDING = _threading.local()  # guard thread_set


class Hook:
    """A finder object generated from a hook's declaration."""

    def __init__(self, rt, fid, definition, same_class_as=None):
        self._rt, self._fid, self._d = rt, fid, definition
        self._in_progress = set()
        self._flag = False
        # "lock": the lock object and what impsim calls it (rt.hook_lock)
        self._lock, self._lock_name = rt.hook_lock(fid, definition, same_class_as)
        # A legacy hook has no find_spec at all (CPython 3.11 then calls
        # find_module through _find_spec_legacy, with an ImportWarning).
        if definition.get("api") == "find_module":
            self.find_module = self._find_module
        else:
            self.find_spec = self._find_spec

    def __repr__(self):
        return self._fid

    def _find_spec(self, fullname, path=None, target=None):
        return self._find(fullname, path)

    def _find_module(self, fullname, path=None):
        spec = self._find(fullname, path)
        return None if spec is None else spec.loader

    def _find(self, fullname, path):
        if not claims(self._d, fullname, path):
            return None
        spec = self._guarded(fullname, path)
        loader = self._d.get("loader", "unchanged")
        if spec is not None and isinstance(loader, dict) and spec.loader is not None:
            spec.loader = WrappedLoader(self._rt, spec.loader, loader, self)
        return spec

    def _guarded(self, fullname, path):
        places = lock_places(self._d)
        if "before_guard_test" in places:
            return self._locked(lambda: self._guard(fullname, path, False), fullname)
        return self._guard(fullname, path, "after_guard_test" in places)

    def _locked(self, body, fullname):
        return _with_hook_lock(self._rt, self, fullname, body)

    def _guard(self, fullname, path, lock_after_test):
        def locked(body):
            return self._locked(body, fullname) if lock_after_test else body()
        guard = self._d.get("guard", "none")
        if guard in ("global_set", "thread_set", "object_set"):
            if guard == "global_set":
                names = _GLOBAL_SET
            elif guard == "object_set":
                names = self._in_progress
            else:
                if not hasattr(_THREAD_FINDING, "names"):
                    _THREAD_FINDING.names = set()
                names = _THREAD_FINDING.names
            if fullname in names:
                return None

            def with_name():
                names.add(fullname)
                try:
                    return self._actions(fullname, path)
                finally:
                    names.discard(fullname)
            return locked(with_name)
        if guard in ("flag", "skip_self"):
            if self._flag:
                return None

            def with_flag():
                self._flag = True
                try:
                    return self._actions(fullname, path)
                finally:
                    self._flag = False
            return locked(with_flag)

        def stepped_aside():
            index = index_of(self) if guard == "remove_self" else None
            if index is None:
                return self._actions(fullname, path)
            del _sys.meta_path[index]
            try:
                return self._actions(fullname, path)
            finally:
                _sys.meta_path.insert(index, self)
        return locked(stepped_aside)

    def _actions(self, fullname, path):
        spec = None
        for action in self._d.get("find_spec", []):
            if "import" in action:
                __import__(action["import"])
            elif "reenter" in action:
                spec = _util.find_spec(fullname)
            elif "call" in action:
                spec = self._rt.object(action["call"]).find_spec(fullname, path)
            elif "call_next" in action:
                spec = None
                index = index_of(self)
                for finder in list(_sys.meta_path)[index + 1:] if index is not None else []:
                    spec = finder.find_spec(fullname, path)
                    if spec is not None:
                        break
            elif "serve" in action:
                spec = self._serve(action, fullname)
            elif "unload" in action:
                unload(action["unload"], action.get("submodules", False))
            elif "start" in action or "join" in action:
                self._rt.thread_action(action)  # threads_real.py's runtime: a scenario with threads
            elif "use" in action:
                # find_spec reads a global of its module (PEP 810: the read resolves a lazy one).
                self._rt.lazy_steps.use_in(action["module"], action["use"])
            elif "return" in action:
                spec = None
        return spec

    def _serve(self, action, fullname):
        target = action.get("table", {}).get(fullname)
        if target is not None:
            # six: spec_from_loader asks is_package, which reads the entry's
            # __path__, which imports the module it stands for.
            module = import_module(target)
            return _util.spec_from_loader(fullname, ServeLoader(target=target, build=action.get("create_module", ())),
                                          is_package=hasattr(module, "__path__"))
        name = action.get("module")
        package = action.get("package")
        package = fullname in package if isinstance(package, list) else bool(package)
        loader = ServeLoader(_sys.modules[name] if name else None, package=package,
                             build=action.get("create_module", ()))
        return _util.spec_from_loader(fullname, loader, is_package=package)


class Counts:
    def __init__(self):
        self.searches = 0
        self.finder_calls = 0
        self.depth = 0
        self.max_depth = 0
        self.by_object = {}    # finder id -> calls
        self.predefined = {}   # predefined id -> calls (zoo_harness; hooks_real counts them in by_object)
        self.hook_depth = 0      # hook objects' find_spec calls open now
        self.max_hook_depth = 0  # their deepest nesting (impsim's hook_depth)
        self.hook_reentries = 0  # searches begun while one is open
        self.frames = []         # the open labels' frames (the runtime's `active`)


def count_predefined(into):
    """BuiltinImporter, FrozenImporter, PathFinder: every call of each
    class's find_spec, through sys.meta_path or direct (a hook's "call",
    pytest's hook), per object into `into` (not in finder_calls)."""
    for fid, cls in PREDEFINED.items():
        original = cls.__dict__["find_spec"].__func__

        def find_spec(cls, fullname, path=None, target=None, _fid=fid, _original=original):
            into[_fid] = into.get(_fid, 0) + 1
            return _original(cls, fullname, path, target)
        cls.find_spec = classmethod(find_spec)


def counted_method(counts, fid, method):
    def counted(*args, **kwargs):
        counts.finder_calls += 1
        counts.by_object[fid] = counts.by_object.get(fid, 0) + 1
        counts.hook_depth += 1
        counts.max_hook_depth = max(counts.max_hook_depth, counts.hook_depth)
        for frame in counts.frames:  # each open label's deepest hook call
            frame[3] = max(frame[3], counts.hook_depth)
        try:
            return method(*args, **kwargs)
        finally:
            counts.hook_depth -= 1
    return counted


class Runtime(common.StepLoop):
    """A hook scenario's finder objects and its step interpreter.
    Subclasses (zoo_harness) bind some ids to a real package's objects."""

    def __init__(self, scenario, variant, params):
        self.scenario = scenario
        self.variant = variant
        self.params = params
        design, _, only = variant.partition(":")
        self.design = design
        fix = DESIGNS.get(design)
        self.hooks = {name: apply_fix(h, fix) if not only or only == name else dict(h)
                      for name, h in scenario.get("hooks", {}).items()}
        load_fnmatch(self.hooks)
        self.finders = scenario.get("finders", {})
        self.tree = scenario.get("tree", {})
        self.counts = Counts()
        self.lazy_steps = lazy_steps.LazySteps(None)  # its watch set by hooks_real.py for lazy steps
        self.objects = {}       # finder id -> the object it names now
        self.ids = {}           # id(object) -> its finder id ("wd1", "wd1#2")
        self.order = []         # hook object ids, declared then made (impsim's order)
        self.keep = []          # every object named (so ids stay valid)
        self.made = {}          # finder id -> objects `new` made for it
        self.inserted = {}      # id(obj) -> whether its latest install inserted it
        self.participants = {}  # id(obj) -> installs not yet undone (a counted uninstall)
        self.class_locks = {}   # hook name -> (its class's lock, impsim's name for it)
        self.lock_owner = {}    # id(hook lock) -> (thread ident, count) while held
        self.attributes = {}    # module name -> attributes wrappers set, in order
        self.classes = {}       # hook name -> the class of its declared objects
        self.stack, self.where, self.active = [], {}, []
        self.counts.frames = self.active
        self.labels, self.results = {}, {}
        for label in common.collect_labels(scenario):
            self.labels[label] = {"searches": 0, "finder_calls": 0, "max_depth": 0, "by_object": {},
                                  "hook_depth": 0, "hook_reentries": 0, "meta_path": None}
            self.results[label] = []
        for name, obj in PREDEFINED.items():
            self.objects[name] = obj
            self.ids[id(obj)] = name

    # -- the hooks' own locks ("lock") ------------------------------------------
    def hook_lock(self, fid, definition, same_class_as=None):
        """The lock a new Hook object takes and impsim's name for it
        (Engine::new_hook_lock): its own, its class's (every object of the
        declaration; a `new` step's object has a new class unless
        "same_class"), or (None, None) for a hook without one."""
        spec = definition.get("lock")
        if spec is None:
            return None, None
        if spec.get("per", "class") == "class" and same_class_as is not None:
            return same_class_as._lock, same_class_as._lock_name
        kind = "threading.RLock" if spec["type"] == "RLock" else "threading.Lock"
        make = _threading.RLock if spec["type"] == "RLock" else _threading.Lock
        if spec.get("per", "class") == "object":
            return make(), "the %s of %s" % (kind, fid)
        if "#" in fid:
            return make(), "the %s of %s's class" % (kind, fid)
        hook = self.finders[fid]["hook"]
        if hook not in self.class_locks:
            self.class_locks[hook] = (make(), "the %s of class %s" % (kind, hook))
        return self.class_locks[hook]

    def hook_point(self, kind, fullname):
        """A hook lock's acquire or release: a scheduling point of
        threads_real.py's; nothing here."""

    def hook_lock_taken(self, lock):
        ident, count = self.lock_owner.get(id(lock), (None, 0))
        self.lock_owner[id(lock)] = (_threading.get_ident(), count + 1)

    def hook_lock_given(self, lock):
        ident, count = self.lock_owner[id(lock)]
        if count == 1:
            del self.lock_owner[id(lock)]
        else:
            self.lock_owner[id(lock)] = (ident, count - 1)

    def lock_wait(self, frame):
        """What a thread whose innermost frame is `frame` waits for, if it
        waits in a Hook's lock.acquire(): (the lock's name, the holder's
        thread ident); else None."""
        if frame.f_code is not _LOCKED_CODE or frame.f_lineno != _ACQUIRE_LINE:
            return None
        hook = frame.f_locals.get("owner")
        holder = self.lock_owner.get(id(hook._lock), (None, 0))[0]
        return hook._lock_name, holder

    # -- finder objects -----------------------------------------------------
    def hook_of(self, fid):
        return self.hooks[self.finders[fid.partition("#")[0]]["hook"]]

    def make_hooks(self, skip=()):
        """One object per declared finder (those in skip are bound elsewhere)."""
        for fid in self.finders:
            if fid not in skip:
                self.name_object(fid, self.hook_class(fid)(self, fid, self.hook_of(fid)))

    def hook_class(self, fid, same_class_as=None):
        """The Python class of a new hook object: one per hook declaration
        for the declared objects, a new one for a `new` step's (a re-run
        module body defines it again), its predecessor's with same_class.
        A "presence": "class" install tests it."""
        if same_class_as is not None:
            return type(same_class_as)
        hook = self.finders[fid.partition("#")[0]]["hook"]
        if "#" in fid:
            return type(hook, (Hook,), {})
        if hook not in self.classes:
            self.classes[hook] = type(hook, (Hook,), {})
        return self.classes[hook]

    def name_object(self, fid, obj):
        self.objects[fid.partition("#")[0]] = obj  # the id names the newest
        self.objects[fid] = obj
        self.ids[id(obj)] = fid
        self.keep.append(obj)
        if fid in PREDEFINED:
            return
        self.order.append(fid)
        self.counts.by_object.setdefault(fid, 0)
        attr = "find_spec" if hasattr(obj, "find_spec") else "find_module"
        method = getattr(obj, attr, None)
        if method is None:
            return
        counted = counted_method(self.counts, fid, method)
        # a class on meta_path (setuptools' _EditableFinder): its
        # classmethod is replaced by a counting static function
        setattr(obj, attr, staticmethod(counted) if isinstance(obj, type) else counted)

    def new(self, fid, same_class=False):
        """`ID = Hook()` run again: a fresh object named ID#k (of the class
        of the object ID names now with same_class, else of a new class)."""
        k = self.made[fid] = self.made.get(fid, 0) + 1
        name = "%s#%d" % (fid, k)
        before = self.objects[fid] if same_class else None
        self.name_object(name, self.hook_class(name, before)(self, name, self.hook_of(fid), before))

    def object(self, fid):
        return self.objects[fid]

    def mark(self, module, attribute):
        # The attribute counts the times it is set (a chain of wrappers, a
        # reload): the outcome's "x*k".
        key = "__impsim_mark_%s__" % attribute
        setattr(module, key, getattr(module, key, 0) + 1)
        attrs = self.attributes.setdefault(module.__name__, [])
        if attribute not in attrs:
            attrs.append(attribute)

    def claim(self, fid, name):
        """wrapt's _post_import_hooks[name]: the hook (every object of it)
        claims name from now on."""
        names = self.hook_of(fid).setdefault("claims", {}).setdefault("names", [])
        if name not in names:
            names.append(name)

    def install(self, fid, claim=None):
        hook = self.hook_of(fid)
        policy = hook.get("install", "insert0")
        obj = self.object(fid)

        def install():
            present = index_of(obj) is not None
            if hook.get("presence") == "class" and not present:
                # isinstance, as a fixed pyximport._have_importers tests
                present = any(isinstance(f, type(obj)) for f in _sys.meta_path)
            inserted = False
            if policy == "insert0" or (policy == "insert0_if_absent" and not present):
                _sys.meta_path.insert(0, obj)
                inserted = True
            elif policy == "append" or (policy == "append_if_absent" and not present):
                _sys.meta_path.append(obj)
                inserted = True
            # what install returns (the object it inserted, else None), and
            # its participants, for the "if_inserted" and "counted" uninstalls
            self.inserted[id(obj)] = inserted
            self.participants[id(obj)] = self.participants.get(id(obj), 0) + 1
        def install_and_claim():
            install()
            if claim is not None:
                self.claim(fid, claim)
        # wrapt's register_post_import_hook holds its lock
        if "install" in lock_places(hook):
            _with_hook_lock(self, obj, None, install_and_claim)
        else:
            install_and_claim()

    def uninstall(self, fid):
        policy = self.hook_of(fid).get("uninstall", "first")
        obj = self.object(fid)
        if policy == "counted":
            # the universal finder's participants: removed with the last
            left = self.participants.get(id(obj), 0)
            if left == 0:
                return
            self.participants[id(obj)] = left - 1
            if left > 1:
                return
        elif policy == "if_inserted":
            # uninstall(*install()): remove(None) is a ValueError, ignored
            inserted = self.inserted.pop(id(obj), False)
            if not inserted:
                return
        while index_of(obj) is not None:
            del _sys.meta_path[index_of(obj)]
            if policy != "all":
                break

    # -- counting -------------------------------------------------------------
    def on_search(self):
        """Called as each _find_spec starts (zoo_harness names new objects)."""

    def start_counting(self):
        original = _bootstrap._find_spec
        counts = self.counts

        def _find_spec(name, path, target=None):
            self.on_search()
            counts.searches += 1
            if counts.hook_depth > 0:
                counts.hook_reentries += 1
            counts.depth += 1
            if counts.depth > counts.max_depth:
                counts.max_depth = counts.depth
            for frame in self.active:
                if counts.depth > frame[2]:
                    frame[2] = counts.depth
            try:
                return original(name, path, target)
            finally:
                counts.depth -= 1

        _bootstrap._find_spec = _util._find_spec = _find_spec

        def stop():
            _bootstrap._find_spec = _util._find_spec = original
        return stop

    # -- the step interpreter (harness_common.StepLoop) ------------------------
    def label_snapshot(self):
        c = self.counts
        return (c.searches, c.finder_calls, dict(c.by_object), c.hook_reentries)

    def label_add(self, label, start, deepest, hook_deepest=0, ended=True):
        """A labelled step's counts added to its label's sums; a step that
        did not end (a hang stopped it) adds what it did until then, and no
        sys.meta_path "as it ended" (impsim's close_label)."""
        c = self.counts
        sums = self.labels[label]
        sums["searches"] += c.searches - start[0]
        sums["finder_calls"] += c.finder_calls - start[1]
        sums["max_depth"] = max(sums["max_depth"], deepest)
        sums["hook_depth"] = max(sums["hook_depth"], hook_deepest)
        sums["hook_reentries"] += c.hook_reentries - start[3]
        if ended:
            sums["meta_path"] = self.meta_path_ids()  # as the step ended
        for fid, n in c.by_object.items():
            sums["by_object"][fid] = sums["by_object"].get(fid, 0) + n - start[2].get(fid, 0)

    def meta_path_ids(self):
        """sys.meta_path now, each object by its finder id."""
        return [self.ids.get(id(f), "?%s" % type(f).__name__) for f in _sys.meta_path]

    def action(self, step, ptr, g):
        optional = step.get("optional", False)
        if self.lazy_steps.watch is not None:
            # PEP 810 (3.15): an import may be lazy, so it runs as
            # module-level code, an optional one inside its own try.
            if "import" in step:
                return self.lazy_steps.import_(step["import"], optional, g)
            result = self.lazy_steps.step(step, ptr, g)
            if result is not None:
                return result
        if "import" in step or "find_spec" in step or "import_module" in step or "reload" in step:
            try:
                if "reload" in step:
                    _importlib.reload(_sys.modules[step["reload"]])
                    return "ok"
                if "import" in step:
                    exec(compile("import " + step["import"], "<impsim import>", "exec"), g)
                    return "ok"
                if "import_module" in step:
                    _importlib.import_module(step["import_module"])
                    return "ok"
                return "none" if _util.find_spec(step["find_spec"]) is None else "found"
            except ImportError as exc:
                if not optional:
                    raise
                return type(exc).__name__
        if "call" in step:
            module = _sys.modules[step["call"]]
            self.block(step.get("body", []), ptr + "/body", module.__dict__)
        elif "install" in step:
            self.install(step["install"], step.get("claim"))
        elif "uninstall" in step:
            self.uninstall(step["uninstall"])
        elif "new" in step:
            self.new(step["new"], step.get("same_class", False))
        elif "insert" in step:
            _sys.meta_path.insert(self.num(step.get("at", 0)), self.object(step["insert"]))
        elif "append" in step:
            _sys.meta_path.append(self.object(step["append"]))
        elif "remove" in step:
            obj = self.object(step["remove"])
            if step.get("copies") == "all":
                while index_of(obj) is not None:
                    del _sys.meta_path[index_of(obj)]
            elif index_of(obj) is not None:
                del _sys.meta_path[index_of(obj)]
            elif not optional:
                raise ValueError("list.remove(x): x not in list")
        elif "unload" in step:
            unload(step["unload"], step.get("submodules", False))
        else:
            raise ValueError("hook runtime: unknown step at " + ptr)
        return "ok"

    def run_program(self, g):
        """The program, counted; the run's uncaught exception as a dict, or
        None.  self.legacy_warnings: the ImportWarnings _find_spec_legacy
        raised (3.10, 3.11), each one."""
        stop = self.start_counting()
        error = None
        self.hang = []
        with _warnings.catch_warnings(record=True) as warned:
            _warnings.simplefilter("always")
            program = self.scenario.get("program", [])
            try:
                if any("lock" in h for h in self.hooks.values()):
                    self.hang = self.run_watched(lambda: self.block(program, "/program", g))
                    # The hung worker's open labelled steps, as the hang left them.
                    for frame in self.active if self.hang else ():
                        self.label_add(frame[0], frame[1], frame[2], frame[3], ended=False)
                else:
                    self.block(program, "/program", g)
            except BaseException as exc:  # the run's uncaught exception
                where = self.where.get(id(exc))
                trace = list(where[1]) if where is not None else []
                error = {"type": type(exc).__name__, "message": str(exc),
                         "step": trace[-1] if trace else None, "traceback": trace}
            finally:
                stop()
        self.legacy_warnings = sum(1 for w in warned if issubclass(w.category, ImportWarning)
                                   and "falling back to find_module()" in str(w.message))
        return error

    def run_watched(self, program, settle=0.3, give_up=60.0):
        """Runs `program` in a worker thread (daemon: a hung one is left
        where it waits) and watches its innermost frame: one that waits in a
        hook lock's acquire for `settle` seconds, the lock held, is a hang.
        Returns the hang's waits in impsim's words ([]: it ended; its
        exception is raised here).  While the worker hangs it holds the
        global import lock (it is inside a find_spec): nothing may be
        imported from here on, and the process must end with os._exit.

        Nor may this thread free anything the worker's imports made: a
        module lock whose last reference goes runs a callback that takes
        the global import lock, and would wait for ever for a worker that
        hangs holding it (a frame the watch read, whose function then
        returned, holds its _ModuleLockManager: the likely cause of a real
        run that never ended, twice in about 4,000). So every frame read is kept
        until the worker ends (on self: past a hang, to os._exit), and the
        cyclic garbage collector, which may free such a cycle here, is off
        meanwhile."""
        outcome = []
        self.watched_frames = []
        collecting = _gc.isenabled()
        _gc.disable()

        def work():
            try:
                program()
            except BaseException as exc:
                outcome.append(exc)
        worker = _threading.Thread(target=work, name="impsim-program", daemon=True)
        worker.start()
        start = _time.monotonic()
        since, seen = None, None
        while True:
            worker.join(0.005)
            if not worker.is_alive():
                # Ended: nothing holds the global import lock any more.
                self.watched_frames = []
                if collecting:
                    _gc.enable()
                if outcome:
                    raise outcome[0]
                return []
            frames = _sys._current_frames()
            frame = frames.get(worker.ident)
            if frame is not None:
                self.watched_frames.append(frame)
            frames.clear()
            wait = self.lock_wait(frame) if frame is not None else None
            now = _time.monotonic()
            if wait is None or wait != seen:
                since, seen = (now if wait is not None else None), wait
            elif now - since >= settle:
                name, holder = wait
                # The program's thread is impsim's main thread.
                who = "main" if holder in (None, worker.ident) else "?"
                return ["thread main waits for %s, held by thread %s" % (name, who)]
            if now - start > give_up:
                return ["thread main waits somewhere unknown (at %s:%d)" % (
                    frame.f_code.co_filename, frame.f_lineno) if frame is not None else "thread main: no frame"]


with open(__file__, encoding="utf-8") as _source:
    _ACQUIRE_LINE = 1 + [i for i, line in enumerate(_source)
                         if line.strip().startswith("owner._lock.acquire()  # a hang waits here")][0]
_LOCKED_CODE = _with_hook_lock.__code__
