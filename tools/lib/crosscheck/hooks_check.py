"""`tools/check/crosscheck --hooks`: impsim's engine against REAL CPython
import machinery on hook scenarios.

Each scenario (default: tests/data/hooks/*.json), under every hook design and
at every sweep value (its params when it has no sweep; both sides are given
the same values), runs in hooks_real.py (real importlib, hook classes
generated from the declaration) on each interpreter, and in `impsim run
--json` as that interpreter's X.Y; searches, finder calls per object,
max_depth, labelled counters and results, the final sys.meta_path,
sys.modules, marks and the error type must match.  The runs are independent,
--jobs at a time; the output is in the serial order whatever the
number of jobs.  A real run is a fork of a server per interpreter
(forked_runs.py), and designs that leave every hook declaration the same
share one real run.  docs/crosscheck.md, "Hook scenarios".
"""
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from . import harness_common, hook_runtime
from .forked_runs import ForkedRuns
import interpreters  # tools/lib, on sys.path (tools/check/crosscheck)

HOOKS_REAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hooks_real.py")
DESIGNS = ["as_is", "idempotent_install", "remove_all", "skip_self", "call_next", "guard_global_set",
           "guard_object_set", "guard_thread_set", "guard_flag", "guard_remove_self", "unlock_after_exec"]


def view_of(r):
    """What both sides report for one run of impsim's --json."""
    c = r["counters"]
    labels = {}
    for name, lc in r["labels"].items():
        labels[name] = {k: lc[k] for k in ("searches", "finder_calls", "max_depth", "hook_depth", "hook_reentries",
                                           "meta_path", "finder_calls_by_object")}
    return {
        "searches": c["searches"], "finder_calls": c["finder_calls"], "max_depth": c["max_depth"],
        "legacy_warnings": c["legacy_warnings"],
        "hook_depth": c["hook_depth"], "hook_reentries": c["hook_reentries"],
        "finder_calls_by_object": r["finder_calls_by_object"], "labels": labels,
        "results": r["outcome"]["results"], "meta_path": r["outcome"]["meta_path"],
        "modules": r["outcome"]["modules"], "marks": r["outcome"]["marks"],
        "error": r["outcome"]["error"]["type"] if r["outcome"]["error"] else None,
        "hang": r["outcome"].get("hang", []),
        # PEP 810: a run of a scenario with lazy steps (CPython 3.15) has it.
        "lazy": r.get("lazy"),
    }


def impsim_runs(impsim, path, variant, cpython, timeout):
    """impsim's runs of one design: one per sweep value (the scenario's
    params when it has no sweep), each as (params, view, limit)."""
    cmd = [impsim, "run", "--json", "--variant", variant, "--cpython", cpython, path]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SystemExit(f"crosscheck --hooks: {' '.join(cmd)} timed out after {timeout} s")
    # 1: an expectation failed (not this check's concern); 3: a limit
    # stopped a run, which is then skipped, saying so.
    if out.returncode not in (0, 1, 3):
        raise SystemExit(f"crosscheck --hooks: {' '.join(cmd)} exited {out.returncode}:\n{out.stderr}{out.stdout}")
    try:
        runs = json.loads(out.stdout)["runs"]
    except (ValueError, KeyError) as e:
        raise SystemExit(f"crosscheck --hooks: {' '.join(cmd)} exited {out.returncode} without a report ({e}):\n"
                         f"{out.stderr}")
    return [(r["params"], None if r.get("limit") else view_of(r), r.get("limit")) for r in runs]


def declares_hooks(path):
    """Whether the scenario has finder objects (an unreadable file: impsim says why)."""
    try:
        with open(path) as f:
            sc = json.load(f)
    except (OSError, ValueError):
        return True
    return any(k in sc for k in ("hooks", "finders", "meta_path"))


def uses_lazy(path):
    """Whether the scenario has PEP 810 steps (an unreadable file: impsim says why)."""
    try:
        with open(path) as f:
            return harness_common.uses_lazy(json.load(f))
    except (OSError, ValueError):
        return False


def count(n, one, many=None):
    return f"{n} {one if n == 1 else many or one + 's'}"


def params_text(params):
    return "[" + ", ".join(f"{k}={v}" for k, v in sorted(params.items())) + "]" if params else ""


def stand_ins(path):
    """{design: the first design in DESIGNS that runs the same real program}
    for the file at `path`. What decides a design's real run is the hook
    declarations as the design leaves them (hook_runtime.apply_fix): designs
    that leave them the same run one program, which then runs once."""
    with open(path) as f:
        hooks = json.load(f).get("hooks", {})
    first = {}  # the declarations as a design leaves them -> the first design
    out = {}
    for variant in DESIGNS:
        fix = hook_runtime.DESIGNS[variant]
        program = json.dumps({name: hook_runtime.apply_fix(h, fix) for name, h in hooks.items()}, sort_keys=True)
        out[variant] = first.setdefault(program, variant)
    return out


def main(args, files, pythons):
    """Checks `files` on each interpreter of `pythons` (args: crosscheck's
    --impsim, --jobs, --timeout); returns the exit status, 1 on a mismatch or
    a crashed run."""
    sys.stdout.reconfigure(line_buffering=True)  # progress shows through tools/test's tee
    bad = checked = 0
    skipped = 0
    # A folder may hold Paddle scenarios beside hook ones (scenarios/lazy/):
    # the hook designs do not apply to them.
    for path in [f for f in files if not declares_hooks(f)]:
        print(f"SKIP {path}: no hooks (a Paddle scenario: tools/check/crosscheck checks it)")
        skipped += 1
    files = [f for f in files if declares_hooks(f)]
    # impsim runs as the interpreter's release (legacy finders differ by
    # version, the snapshot of sys.meta_path by patch level)
    minor = {py: interpreters.release_of(py) for py in pythons}
    shared = 0  # real runs of a design that another design's run stood for
    # Every process (impsim's runs, each real run) is independent: they run
    # --jobs at a time, and the results are read back in the serial order,
    # so the output is the same whatever the number of jobs.
    servers = ForkedRuns(HOOKS_REAL)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        views = {}  # (path, variant, minor) -> impsim's runs (a future)
        # A scenario with lazy steps runs on 3.15 only (impsim refuses it
        # elsewhere): the other interpreters skip it, saying so.
        lazy = {path: uses_lazy(path) for path in files}
        for path in files:
            for variant in DESIGNS:
                for v in dict.fromkeys(minor[py] for py in pythons):
                    if lazy[path] and not v.startswith("3.15"):
                        continue
                    views[path, variant, v] = pool.submit(impsim_runs, args.impsim, path, variant, v, args.timeout)
        real = {}  # (path, variant, py, index) -> the real run (a future)
        submitted = {}  # (path, stand-in design, py, params) -> the real run (a future)
        for path in files:
            stand_in_of = stand_ins(path)
            for variant in DESIGNS:
                stand_in = stand_in_of[variant]
                for py in pythons:
                    if (path, variant, minor[py]) not in views:
                        continue
                    # Every run impsim made (each sweep value, or the params), the
                    # real side given the same params.
                    for i, (params, want, limit) in enumerate(views[path, variant, minor[py]].result()):
                        if limit:
                            continue
                        key = (path, stand_in, py, json.dumps(params, sort_keys=True))
                        if key not in submitted:
                            # Absolute: a WebAssembly interpreter runs in a folder of its own.
                            submitted[key] = pool.submit(servers.run, py,
                                                         [os.path.abspath(path), stand_in, json.dumps(params)],
                                                         args.timeout)
                        else:
                            shared += 1
                        real[path, variant, py, i] = submitted[key]
        for path in files:
            for variant in DESIGNS:
                for py in pythons:
                    if (path, variant, minor[py]) not in views:
                        print(f"SKIP {path} {variant} {py}: lazy-import steps need CPython 3.15; this is "
                              f"{minor[py]}")
                        skipped += 1
                        continue
                    for i, (params, want, limit) in enumerate(views[path, variant, minor[py]].result()):
                        where = f"{path} {variant}{' ' + params_text(params) if params else ''} {py}"
                        if limit:
                            print(f"SKIP {where}: impsim stopped at a limit ({json.dumps(limit)})")
                            skipped += 1
                            continue
                        returncode, stdout, stderr = real[path, variant, py, i].result()
                        if returncode != 0:
                            what = "did not finish" if returncode is None else "crashed"
                            print(f"FAIL {where}: the real run {what}:\n{stderr}")
                            bad += 1
                            continue
                        got = json.loads(stdout)
                        if "skip" in got:
                            print(f"SKIP {where}: {got['skip']}")
                            skipped += 1
                            continue
                        checked += 1
                        diffs = [k for k in want if want[k] != got.get(k)]
                        if diffs:
                            bad += 1
                            print(f"FAIL {where}")
                            for k in diffs:
                                print(f"  {k}: impsim {json.dumps(want[k])} real {json.dumps(got.get(k))}")
    servers.close()
    print(f"crosscheck --hooks: {count(checked, 'run')} compared, {count(bad, 'mismatch', 'mismatches')}, "
          f"{skipped} skipped ({count(len(files), 'scenario')} at each sweep value or their params, "
          f"{count(len(DESIGNS), 'design')}, {count(len(pythons), 'interpreter')}: "
          f"{', '.join(minor[py] + ' (' + interpreters.describe(py) + ')' for py in pythons)}; "
          f"{count(shared, 'real run')} shared by designs that leave the hooks the same)")
    return 1 if bad else 0
