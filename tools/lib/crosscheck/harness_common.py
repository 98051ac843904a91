# What every crosscheck harness shares (harness.py for the Paddle finder,
# hook_runtime.py for the hook language, zoo_harness.py and hooks_real.py):
# the scenario's labels, JSON pointers to its steps, the .py files its tree
# is written as, and the step loop of their interpreters.  The harnesses run alone inside the interpreter under
# test (python -S -I -B), so this module is imported from beside them (their
# folder is put on sys.path for the import only) and also as
# crosscheck.harness_common by the tools.  Standard library only,
# Python >= 3.9.
#
# serve() is a harness's --serve mode (forked_runs.py is the other end):
# runs read from stdin one a line, each in a fork of the harness as it
# stands before any scenario ran. The child starts from the interpreter
# state a fresh `python -S -I -B HARNESS ARGS...` has when its main() is
# called, and a run does not pay for the interpreter's start-up, most of
# a short run's time.

import json as _json
import os as _os


def collect_labels(scenario):
    """Every step label of the program and of the tree's bodies, in order."""
    labels = []

    def walk(steps):
        for step in steps:
            if "label" in step:
                labels.append(step["label"])
            walk(step.get("body", []))
            walk(step.get("do", []))

    walk(scenario.get("program", []))
    for entry in scenario.get("tree", {}).values():
        walk(entry.get("body", []))
    return labels


# PEP 810's lazy imports (docs/lazy-imports.md), CPython >= 3.15: harness.py
# and hooks_real.py run these steps (lazy_steps.py) and report a run-level
# "lazy" object for a scenario that has any of them, or a hook whose
# find_spec reads a global (a "use" action).
LAZY_STEPS = ("lazy_import", "lazy_from", "use", "resolve", "set_lazy_imports", "set_lazy_imports_filter",
              "__lazy_modules__")


def uses_lazy(scenario):
    """Whether any step of the program or of a tree module's body (nested
    bodies and do blocks included) is a lazy-import step, or any hook's
    find_spec has a use action."""
    def walk(steps):
        for step in steps if isinstance(steps, list) else ():
            if isinstance(step, dict) and (any(k in step for k in LAZY_STEPS)
                                           or walk(step.get("body")) or walk(step.get("do"))):
                return True
        return False
    bodies = [entry.get("body") for entry in scenario.get("tree", {}).values()
              if isinstance(entry, dict)]
    hooks = [hook.get("find_spec") for hook in scenario.get("hooks", {}).values() if isinstance(hook, dict)]
    return any(walk(steps) for steps in [scenario.get("program")] + bodies + hooks)


def escape(token):
    """A JSON pointer token (RFC 6901)."""
    return token.replace("~", "~0").replace("/", "~1")


def body_source(key):
    """What a tree module's file holds: a call back into the interpreter."""
    return "__impsim__.body(%s, globals())\n" % _json.dumps(key)


def write_tree(tree, root):
    """Write the scenario's package tree under root as real .py files."""
    _os.makedirs(root, exist_ok=True)
    for name, entry in tree.items():
        base = _os.path.join(root, *name.split("."))
        if entry.get("package", False):
            _os.makedirs(base, exist_ok=True)
            path = _os.path.join(base, "__init__.py")
        else:
            _os.makedirs(_os.path.dirname(base), exist_ok=True)
            path = base + ".py"
        with open(path, "w") as f:
            f.write(body_source(name))


# The keys whose names a do block's "{i}" may stand in: module names and
# finder ids ("wd#{i}").  A guard's scope is not among them: "{i}" there is
# its nest level.
_ITERATION_KEYS = ("import", "find_spec", "import_module", "call", "install", "uninstall",
                   "insert", "append", "remove", "unload", "reload", "claim",
                   "lazy_import", "use")


def with_iteration(step, i):
    """A do block's step as iteration i spells it; a do block inside keeps
    its own "{i}"."""
    if "do" in step:
        return step
    out = dict(step)
    for key in _ITERATION_KEYS:
        value = out.get(key)
        if isinstance(value, str):
            out[key] = value.replace("{i}", str(i))
        elif isinstance(value, list):
            out[key] = [v.replace("{i}", str(i)) if isinstance(v, str) else v for v in value]
    if "body" in out:
        out["body"] = [with_iteration(s, i) for s in out["body"]]
    return out


class StepLoop:
    """The step loop of a harness's interpreter: repeat, the stack of step
    pointers (where an exception was raised), labelled results and each
    label's counters.  The interpreter has params, tree, stack, where,
    active (label frames: [label, snapshot, deepest nesting]) and results,
    and gives action(step, ptr, g), label_snapshot() and
    label_add(label, snapshot, deepest, hook_deepest)."""

    def num(self, value):
        """An integer field: a number, "$param", or "$param" with one
        constant applied ("$N-1", "$N+1", "$k*2")."""
        if isinstance(value, str) and value.startswith("$"):
            for op in "+-*":
                name, found, operand = value[1:].partition(op)
                if found:
                    p, k = int(self.params[name]), int(operand)
                    return p + k if op == "+" else p - k if op == "-" else p * k
            return int(self.params[value[1:]])
        return int(value)

    def body(self, key, g):
        """A tree module's body; `key` is the tree entry the file belongs to."""
        self.block(self.tree[key].get("body", []), "/tree/" + escape(key) + "/body", g)

    def block(self, steps, ptr, g):
        for i, step in enumerate(steps):
            self.step(step, ptr + "/" + str(i), g)

    def after_step(self):
        """Called after each step, raising or not."""

    def do(self, step, i, ptr, g):
        """`for i in range(1, N + 1):` over a do block's steps, this one
        iteration i: the caller's frame, "{i}" read as i."""
        self.block([with_iteration(s, i) for s in step["do"]], ptr + "/do", g)
        return "ok"

    def step(self, step, ptr, g):
        label = step.get("label")
        for i in range(1, self.num(step.get("repeat", 1)) + 1):
            self.stack.append(ptr)
            frame = None
            if label is not None:
                frame = [label, self.label_snapshot(), 0, 0]  # deepest search, deepest hook call
                self.active.append(frame)
            try:
                result = self.do(step, i, ptr, g) if "do" in step else self.action(step, ptr, g)
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
                self.after_step()
                if frame is not None:
                    self.active.pop()
                    self.label_add(label, frame[1], frame[2], frame[3])
                self.stack.pop()


def serve(main):
    """Reads one run a line from stdin, {"args": [...], "cwd": DIR or
    null}, runs main(["HARNESS"] + args) in a forked child (in DIR) for each,
    with its stdout and stderr going to files, and answers each with a line
    {"rc", "out", "err"}: the exit status and output the harness run as a
    process with those arguments would give. Ends at the end of stdin."""
    import sys
    import tempfile
    spool = tempfile.mkdtemp(prefix="impsim-serve-")
    out_path, err_path = _os.path.join(spool, "out"), _os.path.join(spool, "err")
    try:
        while True:
            line = sys.stdin.readline()
            if not line:
                return
            run = _json.loads(line)
            sys.stdout.flush()  # nothing buffered is copied into the child
            sys.stderr.flush()
            pid = _os.fork()
            if pid == 0:
                _run_forked(main, run["args"], run["cwd"], out_path, err_path)
            _, status = _os.waitpid(pid, 0)
            with open(out_path, encoding="utf-8", errors="replace") as o, \
                    open(err_path, encoding="utf-8", errors="replace") as e:
                answer = {"rc": _os.waitstatus_to_exitcode(status), "out": o.read(), "err": e.read()}
            sys.stdout.write(_json.dumps(answer) + "\n")
            sys.stdout.flush()
    finally:
        for path in (out_path, err_path):
            if _os.path.exists(path):
                _os.unlink(path)
        _os.rmdir(spool)


def _run_forked(main, args, cwd, out_path, err_path):
    """The forked child: main() with the arguments, ending as the process
    would (SystemExit's status, 1 and a traceback on an exception); it never
    returns into the serve loop."""
    import sys
    code = 0
    try:
        for fd, where in ((1, out_path), (2, err_path)):
            f = _os.open(where, _os.O_WRONLY | _os.O_CREAT | _os.O_TRUNC, 0o600)
            _os.dup2(f, fd)
            _os.close(f)
        null = _os.open(_os.devnull, _os.O_RDONLY)
        _os.dup2(null, 0)
        _os.close(null)
        if cwd is not None:
            _os.chdir(cwd)
        main(["HARNESS"] + args)
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            code = e.code or 0
        else:
            print(e.code, file=sys.stderr)
            code = 1
    except BaseException as e:
        import traceback
        traceback.print_exception(type(e), e, e.__traceback__.tb_next)  # from main() on
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            _os._exit(code)
