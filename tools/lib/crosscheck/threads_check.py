"""The real side of a threaded crosscheck: a threaded scenario run on a REAL
interpreter with its threads forced through a point log's schedule
(threads_real.py, as `python -S -I -B`, in forks of a server: forked_runs.py); docs/crosscheck.md, "Threads:
forcing a schedule in real CPython".

As a command, for writing and trying point logs by hand:

    python3 tools/lib/crosscheck/threads_check.py SCENARIO [LOG] [--python PATH]...
                                                   [--extend]

LOG: a file holding the JSON list of events (default: none, an empty log).
--extend: past the log's end, go on forcing a run-until-blocked schedule
(the thread that went last while it can, else the first declared, main
first) and print every event forced, one a line, after the report: a
start for a log written by hand.
"""

import json
import os
import subprocess
import sys
import tempfile

try:
    from .forked_runs import ForkedRuns
except ImportError:  # run as a command, this folder on sys.path
    from forked_runs import ForkedRuns

THREADS_REAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "threads_real.py")


_FORKED = ForkedRuns(THREADS_REAL)


def run_real(python, scenario_path, log, options=None, timeout=60):
    """threads_real.py's report (a dict) for one scenario and one point log
    (a list of events), or {"error": text} when it gave none. The run is a
    fork of a threads_real.py server for `python` (forked_runs.py)."""
    fd, log_path = tempfile.mkstemp(prefix="impsim-threads-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(log, f)
        returncode, stdout, stderr = _FORKED.run(python, [scenario_path, log_path, json.dumps(options or {})],
                                                 timeout)
    finally:
        os.unlink(log_path)
    if returncode is None:
        return {"error": "no report: %s" % stderr}
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if returncode != 0 or not lines:
        stacks = stderr.find("Timeout (")  # traces_after's, whole
        return {"error": "exit %d: %s" % (returncode, stderr[stacks:].strip() if stacks >= 0
                                          else stderr.strip()[-600:])}
    return json.loads(lines[-1])


# -- tools/check/crosscheck --threads ------------------------------------------

def impsim_classes(impsim, path, minor, bound, variant, random, seed, timeout):
    """impsim's outcome classes of one scenario as CPython X.Y: the
    exhaustive search within `bound`, and `random` seeded random schedules
    when asked; one entry per distinct (outcome, point log), as (class,
    searches' schedule count)."""
    searches = [["--preemption-bound", str(bound)]]
    if random:
        searches.append(["--search", "random", "--seed", str(seed), "--max-schedules", str(random)])
    classes, counted = {}, 0
    for extra in searches:
        cmd = [impsim, "schedules", path, "--cpython", minor, "--format", "json", "--points"] + extra
        if variant:
            cmd += ["--variant", variant]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise SystemExit("crosscheck --threads: %s timed out after %g s" % (" ".join(cmd), timeout))
        try:
            report = json.loads(out.stdout)
        except ValueError:
            raise SystemExit("crosscheck --threads: %s exited %d without a report:\n%s"
                             % (" ".join(cmd), out.returncode, out.stderr))
        for search in report["searches"]:
            counted += search["schedules"]
            for o in search["outcomes"]:
                key = (o["outcome"], json.dumps(o["points"]))
                if key not in classes:
                    classes[key] = dict(o, search=search["search"], variant=search["variant"])
    return list(classes.values()), counted


def parse_outcome(line, names):
    """impsim's outcome line as {"threads": {name: "ok" | "Type: message" |
    None (waiting) }, "hang": [waits], "sys_modules": [names], "limit": bool};
    a thread never started is left out, as the real report does."""
    threads, waits, modules, limit = {}, [], None, False
    section = None
    for part in line.split("; "):
        head, _, rest = part.partition(": ")
        if section != "sys.modules" and head in names:
            section = "threads"
            if rest == "waiting":
                threads[head] = None
            elif rest != "never started":
                threads[head] = rest
        elif head == "hang":
            section = "hang"
            waits.append(rest)
        elif head == "stopped":
            limit = True
        elif head == "sys.modules":
            section = "sys.modules"
            modules = [] if rest == "(none)" else rest.split(" ")
        elif section == "hang" and part.startswith("thread "):
            waits.append(part)
        elif section == "threads" and threads:
            last = list(threads)[-1]  # a message holding "; "
            threads[last] += "; " + part
    return {"threads": threads, "hang": sorted(waits), "sys_modules": modules or [], "limit": limit}


def wait_text(w):
    """A real report's wait, in impsim's words."""
    if w.get("waits") == "join":
        return "thread %s waits for thread %s to finish (join)" % (w["thread"], w["target"])
    if w.get("waits") == "global":
        return "thread %s waits for the global import lock, held by thread %s" % (w["thread"], w["holder"])
    if w.get("waits") == "module":
        return "thread %s waits for the module lock of %s, held by thread %s" % (w["thread"], w["module"], w["holder"])
    if w.get("waits") == "hook_lock":
        return "thread %s waits for %s, held by thread %s" % (w["thread"], w["lock"], w["holder"])
    return "thread %s waits somewhere unknown (%s)" % (w.get("thread"), w.get("at", "?"))


def differences(scenario, want, got):
    """What the real run of one outcome class's log did otherwise than
    impsim said, one text per difference ([] when it matches)."""
    if "error" in got:
        return ["the real run gave no report: " + got["error"]]
    out = []
    if got.get("mismatch"):
        out.append("the real threads left the log at " + got["mismatch"])
    if got.get("past_log"):
        out.append("the real threads passed %d points after the log's end" % got["past_log"])
    if got.get("stray_lock_gc"):
        out.append("a module lock died in the harness's own thread (%s)" % ", ".join(got["stray_lock_gc"]))
    real_threads = got.get("threads", {})
    def result(threads, name):
        if name not in threads:
            return "never started"
        return "waiting" if threads[name] is None else threads[name]
    for name in sorted(set(want["threads"]) | set(real_threads)):
        w, r = result(want["threads"], name), result(real_threads, name)
        if w != r:
            out.append("thread %s: impsim %s, real %s" % (name, json.dumps(w), json.dumps(r)))
    real_waits = sorted(wait_text(w) for w in got.get("waits", []))
    if bool(want["hang"]) != bool(got.get("hang")):
        out.append("hang: impsim %s, real %s" % ("; ".join(want["hang"]) or "no", "; ".join(real_waits) or
                                                  ("yes" if got.get("hang") else "no")))
    elif want["hang"] != real_waits:
        out.append("waits: impsim %s; real %s" % ("; ".join(want["hang"]), "; ".join(real_waits)))
    # The real report lists the names the run added and the tree's; the
    # scenario's preloaded names outside the tree are not the run's.
    tree = set(scenario.get("tree", {}))
    preloaded = set(scenario.get("sys_modules", {}).get("preloaded", [])) - tree
    engine_modules = [n for n in want["sys_modules"] if n not in preloaded]
    if engine_modules != got.get("sys_modules"):
        out.append("sys.modules: impsim %s, real %s" % (" ".join(engine_modules) or "(none)",
                                                       " ".join(got.get("sys_modules", [])) or "(none)"))
    return out


def crosscheck(args, files, pythons, is_hook_scenario):
    """tools/check/crosscheck --threads: every outcome class impsim finds
    for each scenario as each interpreter's X.Y, its point log forced on
    that interpreter (args: impsim, jobs, timeout, preemption_bound,
    random, seed, verbose).  Returns the exit status."""
    from concurrent.futures import ThreadPoolExecutor
    import time
    sys.stdout.reconfigure(line_buffering=True)
    started = time.monotonic()
    versions = {py: _version(py) for py in pythons}
    minors = list(dict.fromkeys(".".join(v.split(".")[:2]) for v in versions.values()))
    scenarios = {}
    for path in files:
        with open(path) as f:
            scenarios[path] = json.load(f)
    files = [p for p in files if scenarios[p].get("threads")]
    # A zoo scenario is checked in every variant it declares (its fix too);
    # one of Paddle's finder in each on every upstream revision found, the
    # real finder driving it (options: the harness's, per variant).
    variants, options = {}, {}
    for p in list(files):
        declared = scenarios[p].get("variants") or ["as_is" if is_hook_scenario(scenarios[p]) else "before"]
        variants[p] = declared
        if not uses_paddle_finder(scenarios[p]):
            options.update(((p, v), {"variant": v}) for v in declared)
            continue
        sources = upstream_sources()
        if not sources:
            print("SKIP %s: no real finder to force its schedules on (%s has no proxy_*.py; "
                  "IMPSIM_UPSTREAM=DIR names their folder)" % (p, upstream_dir()))
            files.remove(p)
            continue
        variants[p] = ["%s@%s" % (v, rev) for v in declared for rev in sources]
        options.update(((p, "%s@%s" % (v, rev)), {"variant": "%s@%s" % (v, rev), "finder_source": path})
                       for v in declared for rev, path in sources.items())
    schedules = compared = bad = again = 0
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        engine = {(path, minor, v): pool.submit(impsim_classes, args.impsim, path, minor, args.preemption_bound,
                                                v, args.random, args.seed, args.timeout)
                  for path in files for minor in minors for v in variants[path]}
        real = {}
        for path in files:
            for py in pythons:
                minor = ".".join(versions[py].split(".")[:2])
                for v in variants[path]:
                    classes, _ = engine[path, minor, v].result()
                    for i, cls in enumerate(classes):
                        real[path, py, v, i] = pool.submit(run_real, py, os.path.abspath(path),
                                                           cls["points"], options[path, v], args.timeout)
        for key in engine:
            schedules += engine[key].result()[1]
        for path in files:
            names = ["main"] + list(scenarios[path]["threads"])
            for py, v in ((py, v) for py in pythons for v in variants[path]):
                minor = ".".join(versions[py].split(".")[:2])
                for i, cls in enumerate(engine[path, minor, v].result()[0]):
                    want = parse_outcome(cls["outcome"], names)
                    where = "%s %s (impsim --cpython %s%s) schedule %s" % (
                        path, versions[py], minor, "" if len(variants[path]) == 1 else " --variant " + v,
                        cls["schedule"])
                    if want["limit"]:
                        print("SKIP %s: impsim stopped at a limit (%s)" % (where, cls["outcome"]))
                        continue
                    got = real[path, py, v, i].result()
                    if got.get("stray_lock_gc"):
                        # The controller's snapshot held the last reference to a
                        # finished frame, and with it a lock: a race of the
                        # harness, not of the run. Once more, said so.
                        print("NOTE %s: a module lock died in the harness's own thread; run again" % where)
                        again += 1
                        got = run_real(py, os.path.abspath(path), cls["points"], options[path, v], args.timeout)
                    elif got.get("error", "").startswith("no report"):
                        # Every wait of the harness is bounded: a run that never
                        # reports is stuck in the harness, or the machine is
                        # starved. Once more, its threads' stacks written
                        # into the failure if it is stuck again.
                        print("NOTE %s: the real run gave %s; run again" % (where, got["error"]))
                        again += 1
                        got = run_real(py, os.path.abspath(path), cls["points"],
                                       dict(options[path, v], traces_after=args.timeout), 2 * args.timeout)
                    compared += 1
                    diffs = differences(scenarios[path], want, got)
                    if diffs and got.get("early_after_global"):
                        # The harness holds a thread woken from the global lock
                        # at a gate: one that ran ahead is the harness's fault.
                        diffs.append("%s, woken from the global import lock, ran on to that point past its gate"
                                     % got["early_after_global"])
                    if diffs:
                        bad += 1
                        print("FAIL %s: %s" % (where, diffs[0]))
                        for d in diffs[1:]:
                            print("     " + d)
                    elif args.verbose:
                        print("ok   %s: %s" % (where, cls["outcome"]))
    print("crosscheck --threads: %d/%d outcome classes match CPython (%d schedules searched; %d scenarios, "
          "%d interpreters, preemption bound %d%s%s; %.1f s)"
          % (compared - bad, compared, schedules, len(files), len(pythons), args.preemption_bound,
             ", %d random schedules from seed %s" % (args.random, args.seed) if args.random else "",
             ", %d run again" % again if again else "", time.monotonic() - started))
    return 0 if compared and not bad else 1


PADDLE_STEPS = ("enable", "disable", "guard", "block")


def uses_paddle_finder(scenario):
    """Whether a step anywhere drives Paddle's finder."""
    def steps(block):
        for step in block:
            yield step
            yield from steps(step.get("body", []))
            yield from steps(step.get("do", []))
    every = [scenario.get("program", [])] + list(scenario.get("threads", {}).values()) \
        + [entry.get("body", []) for entry in scenario.get("tree", {}).values()]
    return any(key in step for block in every for step in steps(block) for key in PADDLE_STEPS)


def upstream_dir():
    """The upstream proxy_*.py's folder: IMPSIM_UPSTREAM, else tools/test's default beside the checkout."""
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    return os.environ.get("IMPSIM_UPSTREAM") or os.path.join(os.path.dirname(repo), "shared", "reference", "upstream")


def upstream_sources():
    """{revision: path} of the upstream finder's files found (proxy_REV.py)."""
    folder = upstream_dir()
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return {}
    return {n[len("proxy_"):-len(".py")]: os.path.join(folder, n) for n in names
            if n.startswith("proxy_") and n.endswith(".py")}


def _version(python):
    out = subprocess.run([python, "-S", "-I", "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                         capture_output=True, text=True, timeout=60)
    return out.stdout.strip() or "?"


def main(argv=None):
    import argparse
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import interpreters
    ap = argparse.ArgumentParser(description="Run a threaded scenario on real CPython under a point log.")
    ap.add_argument("scenario")
    ap.add_argument("log", nargs="?")
    ap.add_argument("--python", action="append", default=[], metavar="PATH",
                    help="an interpreter (repeatable; default: /usr/bin/python3 and pyenv 3.9-3.13)")
    ap.add_argument("--extend", action="store_true", help="past the log, force run-until-blocked and print it")
    args = ap.parse_args(argv)
    log = []
    if args.log:
        with open(args.log) as f:
            log = json.load(f)
    options = {"extend": "run_until_blocked"} if args.extend else {}
    for python in args.python or interpreters.default_pythons():
        report = run_real(python, os.path.abspath(args.scenario), log, options)
        passed = report.pop("passed", [])
        print(json.dumps(report, sort_keys=True))
        for event in passed:
            print("  " + json.dumps(event))
    return 0


if __name__ == "__main__":
    sys.exit(main())
