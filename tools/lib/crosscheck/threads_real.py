# Runs a threaded scenario (top-level "threads", steps "start" and "join")
# on REAL CPython with real `threading` threads, forcing them through their
# scheduling points in the order a point log gives, and prints what came of
# it as one JSON object.
#
#   python -S -I -B threads_real.py SCENARIO.json LOG.json [OPTIONS_JSON]
#   python -S -I -B threads_real.py --serve
#
# --serve: runs of the first form read from stdin, each in a fork of this
# process before any scenario ran (harness_common.serve; forked_runs.py).
#
# LOG: a JSON list of events in global order, each {"thread": T, "point": P,
# ...} with "pointer" (step), "site" (global_acquire, global_release),
# "module" (module_acquire, module_release, exec_begin, exec_end; hook_acquire,
# hook_release: the name a hook holds its own lock for) or
# "target" (start, join).  OPTIONS: {"settle": s, "free": s, "hang": s}, the
# bounded waits, "variant": a hook design (default "as_is"), "finder_source":
# the path of a real proxy.py for a Paddle scenario (threads_paddle.py), and
# "extend": "run_until_blocked" to go on forcing past the
# log's end and report the events forced as "passed" (docs/crosscheck.md,
# "Threads: forcing a schedule in real CPython"), "traces_after": s to
# write every thread's stack to stderr and exit 1 after s seconds.
#
# How: every thread of the run is traced (sys.settrace) and pauses at each
# point, inside the trace function, until the log's next event is its own.
# The points inside importlib._bootstrap are call, line and return events
# of its frozen code (which keeps _bootstrap.py's line numbers); step,
# start and join are reported by the step interpreter itself, exec_begin
# and exec_end by the call of a loader's exec_module from _load_unlocked.
# A controller thread (not traced) lets one thread go at a time and waits
# until every thread is paused at a point, blocked in a lock (read from its
# frame, as tools/check/lock_model does) or finished before it reads the
# next event.  Output:
#
#   {"threads": {"main": "ok" | "TypeName: message" | null, ...},
#    "hang": bool, "waits": [...], "sys_modules": [...],
#    "mismatch": null | "text", "past_log": N, "python": "X.Y.Z"}
#
# and, when the log could not be followed and a thread woken from the
# global import lock is paused at the point the log gives it next, past
# the gate that should have held it (early_after_global, a fault of this
# harness), "early_after_global": "THREAD at POINT".
#
# Standard library only, Python >= 3.9.

import faulthandler as _faulthandler
import gc as _gc
import sys as _sys
import os as _os
import re as _re
import json as _json
import time as _time
import traceback as _traceback
import builtins as _builtins
import threading as _threading
import importlib as _importlib
import importlib.util as _util
import _imp

_HERE = __file__.rpartition("/")[0] or "."
_sys.path.insert(0, _HERE)  # for these imports only: a scenario's names must not find this folder
import harness_common as _common  # noqa: E402
import hook_runtime as _hooks  # noqa: E402
del _sys.path[0]

_B = _sys.modules["_frozen_importlib"]  # importlib._bootstrap as the import system runs it
_BOOT_FILE = _B._ModuleLock.acquire.__code__.co_filename


def _line_of(func, text, after=0):
    """The line of `func` (a function or its code, in _bootstrap.py, whose
    frozen code keeps its line numbers) that reads `text`, the first one
    past line `after`."""
    code = getattr(func, "__code__", func)
    path = _os.path.join(_os.path.dirname(_importlib.__file__), "_bootstrap.py")
    with open(path) as f:
        lines = f.read().splitlines()
    first = max(code.co_firstlineno, after + 1)
    for i in range(first - 1, len(lines)):
        if lines[i].strip() == text:
            return i + 1
        if i > code.co_firstlineno and lines[i] and not lines[i][0].isspace():
            break
    raise SystemExit("threads harness: no line %r in %s" % (text, code.co_name))


def _nested(code, name):
    """The code of the function `name` defined inside `code`."""
    for const in code.co_consts:
        if getattr(const, "co_name", None) == name:
            return const
    raise SystemExit("threads harness: no function %r inside %s" % (name, code.co_name))


_ACQUIRE = _B._ModuleLock.acquire.__code__
_RELEASE = _B._ModuleLock.release.__code__
_ENTER = _B._ImportLockContext.__enter__.__code__
_EXIT = _B._ImportLockContext.__exit__.__code__
_GET_LOCK = _B._get_module_lock.__code__
# The weak reference callback _get_module_lock gives each new lock: it runs
# when the lock's last reference goes, and takes the global lock.
_LOCK_GC = _nested(_GET_LOCK, "cb")
_EXEC_CALLERS = (_B._load_unlocked.__code__, _B._exec.__code__)
# Where a thread waits: for a module lock's release, for the global lock.
_WAKEUP_LINE = _line_of(_B._ModuleLock.acquire, "self.wakeup.acquire()")
_WOKEN_LINE = _line_of(_B._ModuleLock.acquire, "self.wakeup.release()", _WAKEUP_LINE)
_ENTER_LINE = _line_of(_B._ImportLockContext.__enter__, "_imp.acquire_lock()")
_GET_LOCK_LINE = _line_of(_B._get_module_lock, "_imp.acquire_lock()")
_LOCK_GC_LINE = _line_of(_LOCK_GC, "_imp.acquire_lock()")


class _StrayLockGC(Exception):
    """Ends a module lock's callback in the controller before it waits."""


class _Forget(dict):
    """StepLoop.where for this harness: a dict that keeps nothing.  The
    step loop records each exception there (where it was raised); kept, an
    exception keeps its traceback's frames alive, and with them the module
    lock a _DeadlockError was raised by, whose death (a point) must come
    when CPython's would."""

    def __setitem__(self, key, value):
        pass


class _Thread:
    """One thread of the scenario: where it is and what came of it."""

    def __init__(self, name):
        self.name = name
        self.thread = None     # the threading.Thread (main: the main thread)
        self.started = False
        self.state = "new"     # running, point, gate, done
        self.event = None      # the point it is paused at
        self.joining = None    # the thread it joins
        self.outcome = None


def _describe(exc):
    text = str(exc)
    if type(exc).__name__ == "_DeadlockError":
        text = _re.sub(r" at \d+", "", text)  # the lock's address
    return "%s: %s" % (type(exc).__name__, text)


def _same(log_event, event):
    """The log's event against the one a thread reports: every key the log
    gives but "thread" must be equal."""
    return all(event.get(k) == v for k, v in log_event.items() if k != "thread")


def _text(event):
    words = ([event["thread"]] if "thread" in event else []) + [event.get("point", "?")]
    for key in ("module", "target", "site", "pointer"):
        if key in event:
            words.append("%s=%s" % (key, event[key]))
    return " ".join(words)


class _TreeFinder:
    """PathFinder's place in sys.meta_path: the scenario's tree, in memory
    (a name not in the tree is not found)."""

    def __init__(self, rt):
        self.rt = rt

    def __repr__(self):
        return "PathFinder"

    def find_spec(self, fullname, path=None, target=None):
        entry = self.rt.tree.get(fullname)
        if entry is None:
            return None
        return _util.spec_from_loader(fullname, _TreeLoader(self.rt, fullname),
                                      is_package=bool(entry.get("package", False)))


class _TreeLoader:
    def __init__(self, rt, name):
        self.rt, self.name = rt, name

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        self.rt.body(self.name, module.__dict__)


class _Runtime(_hooks.Runtime):
    """The scenario's steps (hook_runtime's interpreter) plus start and
    join, run by real threads that pause at every scheduling point."""

    def __init__(self, scenario, log, options):
        super().__init__(scenario, options.get("variant", "as_is"), scenario.get("params", {}))
        self.log = log
        self.settle_wait = float(options.get("settle", 5.0))
        self.free_wait = float(options.get("free", 5.0))
        self.hang_wait = float(options.get("hang", 0.25))
        self.extend = options.get("extend") == "run_until_blocked"
        self.passed = []  # the events forced, in order
        self.early = None  # at a mismatch: a thread woken from the global lock, run ahead (early_after_global)
        self.past_log = 0  # the points passed after the log's end (unforced)
        self.cv = _threading.Condition()
        self.free = False
        self.threads = {"main": _Thread("main")}
        for name in scenario.get("threads", {}):
            self.threads[name] = _Thread(name)
        self.by_ident = {}
        self.gowner, self.gcount = None, 0  # the global import lock, as the trace sees it
        self.stray = []  # lock callbacks run by a thread that is not the scenario's
        self.where = _Forget()
        self.objects["PathFinder"] = _TreeFinder(self)
        self.ids[id(self.objects["PathFinder"])] = "PathFinder"

    # -- pausing ------------------------------------------------------------
    def me(self):
        return self.by_ident.get(_threading.get_ident())

    def point(self, event):
        th = self.me()
        if th is None:
            return
        if self.free:
            with self.cv:
                self.past_log += 1
            return
        with self.cv:
            th.event = event
            th.state = "point"
            self.cv.notify_all()
            while th.state == "point":
                self.cv.wait()

    def hook_point(self, kind, fullname):
        """A hook lock's acquire (before it) or release (after it)."""
        self.point({"point": kind, "module": fullname})

    def gate(self):
        """A thread woken from a module lock's wait, before it tries again,
        or from the global import lock's (retake_global): held until the
        log's next event is its own."""
        th = self.me()
        if th is None or self.free:
            return
        with self.cv:
            th.event = None
            th.state = "gate"
            self.cv.notify_all()
            while th.state == "gate":
                self.cv.wait()

    # -- the trace ------------------------------------------------------------
    def tracer(self, frame, event, arg):
        """The global trace function ('call' events)."""
        code = frame.f_code
        if code.co_name == "exec_module":
            back = frame.f_back
            if back is not None and back.f_code in _EXEC_CALLERS:
                name = back.f_locals["spec"].name
                self.point({"point": "exec_begin", "module": name})
                return self.exec_local(name)
            return None
        if code.co_filename != _BOOT_FILE:
            return None
        if code is _ENTER:
            self.point({"point": "global_acquire", "site": "find_spec"})
            return self.held_local(_ENTER_LINE, "find_spec")
        if code is _EXIT:
            return self.exit_local
        if code is _GET_LOCK:
            self.point({"point": "global_acquire", "site": "module_lock"})
            return self.held_local(_GET_LOCK_LINE, "module_lock")
        if code is _LOCK_GC:
            self.point({"point": "global_acquire", "site": "lock_gc"})
            return self.held_local(_LOCK_GC_LINE, "lock_gc")
        if code is _ACQUIRE:
            self.point({"point": "module_acquire", "module": frame.f_locals["self"].name})
            return self.acquire_local()
        if code is _RELEASE:
            return self.release_local
        return None

    def took_global(self):
        self.gowner = _threading.get_ident()
        self.gcount += 1

    def gave_global(self):
        self.gcount -= 1
        if not self.gcount:
            self.gowner = None

    def preload(self):
        """What sys.modules holds before the program besides the scenario's
        preloaded names: nothing here (threads_paddle.py adds Paddle's)."""

    # Names present before the program that the report lists all the same
    # when they are there at its end (the scenario's own torch modules).
    reported = frozenset()

    def retake_global(self):
        """A thread woken from the global import lock holds it at once,
        inside `_imp.acquire_lock` (C, no trace event), and runs on; the
        engine's schedule may keep it waiting while the thread that
        released the lock goes on, and takes it again (CPython's lock lets
        it).  So the woken thread lets the lock go, waits at a gate until
        the log's next event is its own, and takes it then: every schedule
        can be forced."""
        _imp.release_lock()
        self.gate()
        _imp.acquire_lock()

    def exit_local(self, frame, event, arg):
        if event == "return":
            self.gave_global()
            self.point({"point": "global_release", "site": "find_spec"})
        return self.exit_local

    def held_local(self, acquire_line, site):
        """_ImportLockContext.__enter__, _get_module_lock or a lock's
        callback: `_imp.acquire_lock()` on `acquire_line` (the global lock
        is held from the next line on, or from __enter__'s return), and but
        for __enter__ `_imp.release_lock()` in the `finally` before the
        return.  A thread that finds the lock held by another when it
        reaches `acquire_line` waits there, and is held at a gate once woken
        (retake_global)."""
        state = {"held": False, "waits": False}
        me = _threading.get_ident()

        def take(frame):
            state["held"] = True
            if state["waits"]:
                self.retake_global()
            self.took_global()

        def local(frame, event, arg):
            if event == "line" and not state["held"] and frame.f_lineno == acquire_line:
                state["waits"] = self.gowner is not None and self.gowner != me
            elif event == "line" and not state["held"]:
                take(frame)
            elif event == "return":
                if site == "find_spec":
                    if not state["held"]:
                        take(frame)
                    return local
                if state["held"]:
                    self.gave_global()
                self.point({"point": "global_release", "site": site})
            return local
        return local

    def stray_tracer(self, frame, event, arg):
        """The controller's trace: a lock callback run there (the last
        reference to a lock dropped by the controller, not by the thread
        CPython would drop it in) is the harness's fault, reported. It is
        ended before it runs: it takes the global import lock, which a
        thread paused at a point may hold while it waits for the
        controller, and neither would move again (a run that gave no
        report). Its lock's name stays in _module_locks, a dead reference
        _get_module_lock replaces. Python prints the exception as ignored
        and turns the trace off (watch_strays turns it on again)."""
        if frame.f_code is _LOCK_GC:
            self.stray.append(_threading.current_thread().name)
            raise _StrayLockGC("a module lock died in the harness's controller")
        return None

    def watch_strays(self):
        if _sys.gettrace() is None:
            _sys.settrace(self.stray_tracer)

    def acquire_local(self):
        state = {"woken": False}

        def local(frame, event, arg):
            if event == "line":
                if frame.f_lineno == _WOKEN_LINE:
                    state["woken"] = True
                elif state["woken"]:
                    state["woken"] = False
                    self.gate()
            return local
        return local

    def release_local(self, frame, event, arg):
        if event == "return":
            self.point({"point": "module_release", "module": frame.f_locals["self"].name})
        return self.release_local

    def exec_local(self, name):
        def local(frame, event, arg):
            if event == "return":
                self.point({"point": "exec_end", "module": name})
            return local
        return local

    # -- steps ----------------------------------------------------------------
    def action(self, step, ptr, g):
        self.point({"point": "step", "pointer": ptr})
        if "start" in step or "join" in step:
            self.thread_action(step)
            return "ok"
        return super().action(step, ptr, g)

    def thread_action(self, action):
        """A start or a join, a step's or a hook's action inside find_spec."""
        if "start" in action:
            th = self.threads[action["start"]]
            with self.cv:
                if not th.started:
                    th.started = True
                    th.state = "running"
            th.thread.start()
            self.point({"point": "start", "target": th.name})
            return
        th = self.threads[action["join"]]
        self.point({"point": "join", "target": th.name})
        me = self.me()
        me.joining = th.name
        try:
            th.thread.join()
        finally:
            me.joining = None

    def run_steps(self, th, steps, ptr, g):
        try:
            self.block(steps, ptr, g)
            outcome = "ok"
        except BaseException as exc:
            outcome = _describe(exc)
        with self.cv:
            th.outcome = outcome
            th.state = "done"
            self.cv.notify_all()

    def make_thread(self, th):
        steps = self.scenario["threads"][th.name]
        ptr = "/threads/" + _common.escape(th.name)

        def target():
            self.by_ident[_threading.get_ident()] = th
            _sys.settrace(self.tracer)
            self.run_steps(th, steps, ptr, {"__builtins__": _builtins})
        th.thread = _threading.Thread(target=target, name=th.name)

    # -- the controller ---------------------------------------------------------
    def situation(self, th, frames):
        """What a thread is doing: (state, what it waits for or None)."""
        if th.state in ("point", "gate", "done", "new"):
            return th.state, None
        if th.joining is not None:
            target = self.threads[th.joining]
            if target.started and target.state != "done":
                return "blocked", {"thread": th.name, "waits": "join", "target": target.name}
        ident = th.thread.ident
        f = frames.get(ident) if ident is not None else None
        if f is None:
            return "running", None
        code = f.f_code
        if code is _ACQUIRE and f.f_lineno == _WAKEUP_LINE:
            lock = f.f_locals.get("self")
            owner = getattr(lock, "owner", None)
            if owner is not None and owner != ident:
                return "blocked", {"thread": th.name, "waits": "module", "module": lock.name,
                                   "holder": self.name_of(owner)}
        if ((code is _ENTER and f.f_lineno == _ENTER_LINE) or (code is _GET_LOCK and f.f_lineno == _GET_LOCK_LINE)
                or (code is _LOCK_GC and f.f_lineno == _LOCK_GC_LINE)):
            owner = self.gowner
            if owner is not None and owner != ident:
                return "blocked", {"thread": th.name, "waits": "global", "holder": self.name_of(owner)}
        if code is _RETAKE:  # woken from the global lock, past its gate, taking it again
            owner = self.gowner
            if owner is not None and owner != ident:
                return "blocked", {"thread": th.name, "waits": "global", "holder": self.name_of(owner)}
        wait = self.lock_wait(f)  # a hook's own lock, held (by this thread too: a Lock)
        if wait is not None and wait[1] is not None:
            return "blocked", {"thread": th.name, "waits": "hook_lock", "lock": wait[0],
                               "holder": self.name_of(wait[1])}
        return "running", {"thread": th.name, "waits": "unknown",
                           "at": "%s:%s %s" % (code.co_filename, f.f_lineno, code.co_name)}

    def name_of(self, ident):
        th = self.by_ident.get(ident)
        return th.name if th is not None else "?"

    def snapshot(self):
        """Each thread's (state, what it waits for, the point it is at)."""
        frames = _sys._current_frames()
        try:
            out = {}
            with self.cv:
                for name, th in self.threads.items():
                    out[name] = self.situation(th, frames) + (th.event,)
            return out
        finally:
            # The dict holds this very frame, whose locals hold the dict: a
            # cycle that would keep every thread's frames, and the module
            # locks in their locals, alive until the garbage collector
            # runs, at a time and in a thread of its choosing. One at a
            # time: each may end a lock's callback, which turns the trace
            # off.
            while frames:
                frames.popitem()
                self.watch_strays()

    def settle(self):
        """Waits until every thread is paused, blocked or finished, seen
        twice alike; returns the snapshot (or the last one, after the
        settle wait)."""
        deadline = _time.monotonic() + self.settle_wait
        last = None
        while True:
            snap = self.snapshot()
            quiet = all(s[0] != "running" for s in snap.values())
            if quiet and snap == last:
                return snap, True
            last = snap if quiet else None
            if _time.monotonic() > deadline:
                return snap, False
            _time.sleep(0.001)

    def release(self, th):
        with self.cv:
            th.state = "running"
            th.event = None
            self.cv.notify_all()

    def force(self):
        """Lets the threads pass their points in the log's order; returns
        (the mismatch or None, whether a thread got stuck running)."""
        i = 0
        last = "main"
        waited_global = set()  # threads seen waiting for the global import lock
        while True:
            snap, quiet = self.settle()
            waited_global.update(n for n, s in snap.items() if s[0] == "blocked" and s[1]["waits"] == "global")
            if not quiet:
                return None, True  # a thread neither pauses nor blocks: reported as a hang
            if i >= len(self.log):
                if not self.extend:
                    return None, False
                want = self.pick(snap, last)
                if want is None:
                    return None, False
            else:
                want = self.log[i]
            th = self.threads.get(want.get("thread"))
            if th is None:
                return "event %d (%s): the scenario has no thread %r" % (i, _text(want), want.get("thread")), False
            state, info, event = snap[th.name]
            if state == "gate":
                self.release(th)  # it tries the lock again, then reaches its next point or waits
                continue
            if state == "point" and _same(want, event):
                self.passed.append(dict(event, thread=th.name))
                self.release(th)
                i += 1
                last = th.name
                continue
            if state == "point":
                now = "is at " + _text(event)
            elif state == "blocked":
                now = "is blocked (%s)" % _json.dumps(info, sort_keys=True)
            elif state == "done":
                now = "has finished (%s)" % th.outcome
            else:
                now = "has not started"
            self.early = self.early_after_global(snap, i, waited_global)
            others = "; ".join("%s %s" % (n, s[0] if s[0] != "point" else _text(s[2]))
                               for n, s in sorted(snap.items()) if n != th.name and s[0] != "new")
            return "event %d (%s): %s %s%s" % (i, _text(want), th.name, now,
                                                 " (others: %s)" % others if others else ""), False

    def early_after_global(self, snap, i, waited_global):
        """At a mismatch: a thread that waited for the global import lock
        and is paused at the very point the log gives it next, which
        retake_global's gate should have kept from running ahead: "main at
        global_release site=module_lock"; else None."""
        for name in sorted(waited_global):
            state, _, event = snap[name]
            ahead = next((e for e in self.log[i:] if e.get("thread") == name), None)
            if state == "point" and ahead is not None and _same(ahead, event):
                return "%s at %s" % (name, _text(event))
        return None

    def pick(self, snap, last):
        """Past the log's end with "extend": run until blocked (the thread
        that went last while it can, else the first in declaration order,
        main first); the event to force, or None when none can go."""
        order = [last] + [n for n in self.threads if n != last]
        for name in order:
            state, _, event = snap[name]
            if state == "point":
                return dict(event, thread=name)
            if state == "gate":
                return {"thread": name, "point": "?"}
        return None

    def run_free(self):
        """The log is done: every thread runs on; the blocked ones (a hang)."""
        with self.cv:
            self.free = True
            for th in self.threads.values():
                if th.state in ("point", "gate"):
                    th.state = "running"
                    th.event = None
            self.cv.notify_all()
        deadline = _time.monotonic() + self.free_wait
        since = None
        while True:
            snap = self.snapshot()
            live = [s for s in snap.values() if s[0] not in ("done", "new")]
            if not live:
                return []
            now = _time.monotonic()
            if all(s[0] == "blocked" for s in live):
                since = now if since is None else since
                if now - since >= self.hang_wait:
                    return [s[1] for s in live]
            else:
                since = None
            if now > deadline:
                return [s[1] or {"thread": n, "waits": "unknown"} for n, s in sorted(snap.items())
                        if s[0] not in ("done", "new")]
            _time.sleep(0.002)

    def control(self, before):
        self.watch_strays()
        try:
            mismatch, stuck = self.force()
            waits = self.run_free()
            self.watch_strays()
            report = {
                "threads": {n: th.outcome for n, th in self.threads.items() if th.started},
                "hang": bool(waits) or stuck,
                "waits": sorted(waits, key=lambda w: w["thread"]),
                "sys_modules": sorted(n for n in list(_sys.modules)
                                      if n not in before or n in self.tree or n in self.reported),
                "mismatch": mismatch,
                "past_log": self.past_log,
                "python": "%d.%d.%d" % _sys.version_info[:3],
            }
            if self.extend:
                report["passed"] = self.passed
            if self.stray:
                report["stray_lock_gc"] = self.stray
            if mismatch and self.early:
                report["early_after_global"] = self.early
            _sys.stdout.write(_json.dumps(report, sort_keys=True) + "\n")
        except BaseException as exc:  # the harness's own failure
            _sys.stderr.write("threads harness: %s\n%s" % (_describe(exc), _traceback.format_exc()))
            _sys.stderr.flush()
            _os._exit(2)
        _sys.stdout.flush()
        _os._exit(0)  # hung threads are left where they wait


# Where a thread woken from the global import lock takes it again.
_RETAKE = _Runtime.retake_global.__code__


def main(argv):
    with open(argv[1]) as f:
        scenario = _json.load(f)
    with open(argv[2]) as f:
        log = _json.load(f)
    if not isinstance(log, list) or not all(isinstance(e, dict) and "thread" in e and "point" in e for e in log):
        raise SystemExit("threads harness: %s is not a point log (a list of {\"thread\", \"point\", ...})" % argv[2])
    options = _json.loads(argv[3]) if len(argv) > 3 else {}
    # A module lock in a garbage cycle would die when the cyclic collector
    # runs, in whichever thread allocated last (the controller's too): off,
    # a lock dies where its last reference goes, as in the engine, or not
    # in the run at all, a difference the crosscheck shows.
    _gc.disable()
    if "traces_after" in options:  # a run again after one that gave no report
        _faulthandler.dump_traceback_later(float(options["traces_after"]), exit=True)
    if "finder_source" in options:  # Paddle's finder, the real one (threads_paddle.py)
        spec = _util.spec_from_file_location("_impsim_threads_paddle", _HERE + "/threads_paddle.py")
        paddle = _util.module_from_spec(spec)
        spec.loader.exec_module(paddle)
        rt = paddle.runtime(_Runtime, _TreeLoader, scenario, log, options)
    else:
        rt = _Runtime(scenario, log, options)
    _builtins.__impsim__ = rt
    _sys.path_importer_cache.clear()
    rt.make_hooks()
    _sys.meta_path[:] = [rt.object(i) for i in scenario.get("meta_path", list(_hooks.PREDEFINED))]
    main_th = rt.threads["main"]
    main_th.thread = _threading.current_thread()
    main_th.started = True
    main_th.state = "running"
    rt.by_ident[_threading.get_ident()] = main_th
    for name, th in rt.threads.items():
        if name != "main":
            rt.make_thread(th)
    for name in scenario.get("sys_modules", {}).get("preloaded", []):
        if name not in _sys.modules:
            _sys.modules[name] = type(_sys)(name)
    rt.preload()
    before = set(_sys.modules)
    controller = _threading.Thread(target=rt.control, args=(before,), name="impsim-controller", daemon=True)
    controller.start()
    _sys.settrace(rt.tracer)
    rt.run_steps(main_th, scenario.get("program", []), "/program", _sys.modules["__main__"].__dict__)
    _sys.settrace(None)
    controller.join()  # it prints the report and ends the process


if __name__ == "__main__":
    if _sys.argv[1:] == ["--serve"]:
        _common.serve(main)
    else:
        main(_sys.argv)
