"""`tools/check/crosscheck --zoo`: hook scenarios against the real packages.

For each hook scenario (one with "hooks", "finders" or "meta_path"), every
run of it that has an oracle runs in real CPython (zoo_oracle), and is
compared with `impsim run FILE --json`: counters searches, finder_calls,
max_depth, legacy_warnings, finder_calls_by_object (hook objects and the
interpreter's three), the labels' searches and finder_calls,
and the outcome's modules (as sets), marks, results, meta_path and error
type.  --no-impsim prints the real measurements alone.
"""

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import interpreters  # tools/lib, on sys.path (tools/check/crosscheck)
from . import zoo_oracle

COUNTERS = ("searches", "finder_calls", "max_depth", "legacy_warnings", "hook_depth", "hook_reentries")


def fmt(value):
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def by_object(run):
    """impsim may put the per-object counts in the run or in its counters."""
    found = run.get("finder_calls_by_object")
    if found is None:
        found = (run.get("counters") or {}).get("finder_calls_by_object")
    return {k: v for k, v in (found or {}).items() if v}


def differences(impsim, real):
    diffs = []

    def check(field, a, b):
        if a != b:
            diffs.append((field, a, b))

    for c in COUNTERS:
        check("counters." + c, (impsim.get("counters") or {}).get(c),
              real["counters"][c])
    iobjects = by_object(impsim)
    robjects = by_object(real)
    # the interpreter's finders (BuiltinImporter, FrozenImporter,
    # PathFinder), counted at class level by the harness: every zoo file
    for fid, calls in (real.get("predefined_calls") or {}).items():
        if calls:
            robjects[fid] = calls
    check("finder_calls_by_object", iobjects, robjects)
    ilabels = impsim.get("labels") or {}
    for label, counts in real.get("labels", {}).items():
        for c in ("searches", "finder_calls", "hook_depth", "hook_reentries"):
            check("labels.%s.%s" % (label, c), (ilabels.get(label) or {}).get(c, 0),
                  counts[c])
        check("labels.%s.meta_path" % label, (ilabels.get(label) or {}).get("meta_path"), counts["meta_path"])
    iout = impsim.get("outcome") or {}
    rout = real["outcome"]
    check("outcome.modules", sorted(iout.get("modules") or []), rout["modules"])
    check("outcome.marks", iout.get("marks") or {}, rout["marks"])
    iresults = iout.get("results") or {}
    for label, results in rout["results"].items():
        check("outcome.results." + label, iresults.get(label, []), results)
    check("outcome.meta_path", iout.get("meta_path"), rout["meta_path"])
    check("outcome.error.type", (iout.get("error") or {}).get("type"),
          (rout["error"] or {}).get("type"))
    check("outcome.hang", iout.get("hang") or [], rout.get("hang") or [])
    return diffs


def collect(paths):
    files = []
    for path in paths:
        if os.path.isdir(path):
            for top, _, names in os.walk(path):
                files.extend(os.path.join(top, n) for n in names if n.endswith(".json"))
        else:
            files.append(path)
    return sorted(files)


def run_impsim(args, path):
    try:
        cpython = ["--cpython", args.zoo_release] if getattr(args, "zoo_release", None) else []
        proc = subprocess.run([args.impsim, "run", path, "--json"] + cpython,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=args.timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, "cannot run impsim: %s" % exc
    if proc.returncode not in (0, 1, 3):
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, "impsim exit %d: %s" % (proc.returncode,
                                             " | ".join(err[:3]) or "(no message)")
    try:
        return json.loads(proc.stdout.decode("utf-8")), None
    except ValueError as exc:
        return None, "impsim printed no JSON report (%s)" % exc


def oracle_run(args, scenario, variant, params, mode):
    python = zoo_oracle.python_of(scenario, mode, args.python)
    if mode == "real" and getattr(args, "zoo_python", None):
        python = args.zoo_python
    try:
        return zoo_oracle.run_one(scenario, variant, params, mode, python,
                                  timeout=args.timeout), None
    except zoo_oracle.ZooError as exc:
        return None, str(exc)


def installed(package):
    """The Debian package's version, or None when it is not installed."""
    try:
        proc = subprocess.run(["dpkg-query", "-W", "-f=${Status} ${Version}", package],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        return None
    text = proc.stdout.decode()
    if proc.returncode != 0 or "install ok installed" not in text:
        return None
    return text.rsplit(" ", 1)[-1]


def package_problem(scenario):
    """Why the real package of a scenario cannot run as pinned, or None."""
    real = scenario["real"]
    package = real.get("debian_package")
    if not package:
        return None
    version = installed(package)
    if version is None:
        return "%s is not installed (apt-get install %s)" % (package, package)
    measured = real.get("version")
    if measured and upstream(version) != upstream(measured):
        return "%s %s is installed, the scenario was measured on %s" % (
            package, version, measured)
    if measured and version != measured:  # a Debian revision: same upstream code
        print("NOTE %s: %s %s is installed, measured on %s (same upstream version)" % (
            scenario.get("name"), package, version, measured))
    return None


# The real packages that do not run on a newer interpreter than the
# Debian one they were built for: (scenario, first minor it fails on, why).
NOT_ON_NEWER = (
    ("pyximport_build", (3, 12), "Cython 0.29 imports imp (removed in 3.12) and compiles C"),
    ("pyximport_legacy", (3, 12), "Cython 0.29 imports imp (removed in 3.12) and compiles C"),
    ("pytest_rewrite", (3, 14), "pytest 7.2.1's assertion rewriter uses ast.Str (removed in 3.14)"),
)


def elsewhere_only(args, scenario, name):
    """Why a zoo scenario's real package is not run on --zoo-python's
    interpreter, or None."""
    if not getattr(args, "zoo_python", None):
        return None
    release = tuple(int(x) for x in re.match(r"(\d+)\.(\d+)", args.zoo_release).groups())
    for scenario_name, since, why in NOT_ON_NEWER:
        if name == scenario_name and release >= since:
            return "not on %s: %s" % (args.zoo_release, why)
    if interpreters.is_pyodide(args.zoo_python) and any("lock" in h for h in scenario.get("hooks", {}).values()):
        return ("a hook lock needs a second thread to watch for a hang; this WebAssembly build cannot "
                "start threads")
    return None


def upstream(version):
    """The upstream part of a Debian version: 66.1.1 of 66.1.1-1+deb12u2."""
    version = version.partition(":")[2] or version
    return version.rpartition("-")[0] or version


def main(args):
    paths = args.paths or [os.path.join(args.repo, "scenarios", "zoo")]
    if getattr(args, "zoo_python", None):
        # The real packages on another interpreter: impsim runs as its release.
        args.zoo_release = interpreters.release_of(args.zoo_python)
    mode = "restated" if args.zoo_restated else "real"
    jobs = []
    missing = []
    for path in collect(paths):
        with open(path) as f:
            scenario = json.load(f)
        if not zoo_oracle.is_hook_scenario(scenario) or scenario.get("threads"):
            continue  # a threaded one: tools/check/crosscheck --threads
        name = scenario.get("name") or os.path.basename(path)
        why = elsewhere_only(args, scenario, name) if mode == "real" and "real" in scenario else None
        if why:
            print("SKIP %s: %s" % (name, why))
            continue
        if mode == "real" and "real" in scenario:
            problem = package_problem(scenario)
            if problem:
                print("%s %s: %s" % ("ERROR" if args.zoo_require_packages else "SKIP",
                                     name, problem))
                missing.append(name)
                continue
        jobs.append([path, name, scenario, None, []])
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for job in jobs:
            path, _, scenario, _, runs = job
            if not args.no_impsim and not args.zoo_real_vs_restated:
                job[3] = pool.submit(run_impsim, args, path)
            # Against the re-statement, a scenario that has none runs nothing.
            unpaired = args.zoo_real_vs_restated and zoo_oracle.no_restatement(scenario)
            for variant, params in zoo_oracle.run_plan(scenario):
                future = None
                if zoo_oracle.runnable(scenario, variant, mode) and not unpaired:
                    future = pool.submit(oracle_run, args, scenario, variant, params, mode)
                runs.append((variant, params, future))
        if args.zoo_real_vs_restated:
            status = real_vs_restated(args, jobs, pool)
        elif args.no_impsim:
            status = print_reports(args, jobs, mode)
        else:
            status = compare_all(args, jobs, mode)
    if missing and args.zoo_require_packages:
        return 1
    return status


def real_vs_restated(args, jobs, pool):
    """The Python re-statement of each hook against the real package, on
    every run the package has (no impsim): what makes the re-stated-only
    checks worth something."""
    total = matched = 0
    for path, name, scenario, _, planned in jobs:
        why = zoo_oracle.no_restatement(scenario)
        if why:  # its real runs were not started (main)
            print("SKIP %s: no re-stated run (%s)" % (name, why))
            continue
        for variant, params, future in planned:
            if future is None:
                continue
            total += 1
            where = "%s variant=%s params=%s" % (name, variant, fmt(params))
            real, rerror = future.result()
            restated, serror = oracle_run(args, scenario, variant, params, "restated")
            if real is None or restated is None:
                print("MISMATCH %s: %s" % (where, rerror or serror))
                continue
            restated["finder_calls_by_object"] = dict(
                restated["finder_calls_by_object"], **restated["predefined_calls"])
            diffs = differences(restated, real)
            if restated["predefined_calls"] != real["predefined_calls"]:
                diffs.append(("predefined_calls", restated["predefined_calls"],
                              real["predefined_calls"]))
            if not diffs:
                matched += 1
                if args.verbose:
                    print("ok %s" % where)
                continue
            print("MISMATCH %s: %s" % (where, "; ".join(
                "%s: restated=%s real=%s" % (f, fmt(a), fmt(b)) for f, a, b in diffs[:4])))
    print("%d/%d zoo runs: the re-statement matches the real package" % (matched, total))
    return 0 if total and matched == total else 1


def print_reports(args, jobs, mode):
    status = 0
    for path, name, scenario, _, planned in jobs:
        runs = []
        for variant, params, future in planned:
            if future is None:
                continue
            run, error = future.result()
            if run is None:
                print("ERROR %s variant=%s: %s" % (name, variant, error), file=sys.stderr)
                status = 1
                continue
            runs.append(run)
        if not runs:
            print("SKIP %s: no %s run" % (name, mode), file=sys.stderr)
            continue
        report = zoo_oracle.build_report(scenario, runs)
        if any(not e["ok"] for r in runs for e in r["expectations"]):
            status = 1
        print(json.dumps(report) if args.compact else json.dumps(report, indent=2))
    return status


def compare_all(args, jobs, mode):
    total = matched = 0
    for path, name, scenario, impsim, planned in jobs:
        report, error = impsim.result()
        iruns = (report or {}).get("runs", [])
        skipped = [v for v, _, f in planned if f is None]
        if skipped:
            unrestated = mode == "restated" and zoo_oracle.no_restatement(scenario)
            print("SKIP %s variants %s: no %s oracle (%s)" % (
                name, ",".join(skipped), mode,
                "no \"real\" key" if mode == "real" and "real" not in scenario
                else unrestated or "a design the package does not have"))
        for index, (variant, params, future) in enumerate(planned):
            if future is None:
                continue
            total += 1
            where = "%s variant=%s params=%s (%s)" % (name, variant, fmt(params), mode)
            real, rerror = future.result()
            if report is None:
                print("MISMATCH %s: %s" % (where, error))
                continue
            if real is None:
                print("MISMATCH %s: CPython run failed: %s" % (where, rerror))
                continue
            if index >= len(iruns):
                print("MISMATCH %s: impsim reported only %d runs" % (where, len(iruns)))
                continue
            diffs = differences(iruns[index], real)
            if not diffs:
                matched += 1
                if args.verbose:
                    print("ok %s" % where)
                continue
            shown = "; ".join("%s: impsim=%s cpython=%s" % (f, fmt(a), fmt(b))
                              for f, a, b in diffs[:4])
            more = " (+%d more)" % (len(diffs) - 4) if len(diffs) > 4 else ""
            print("MISMATCH %s: %s%s" % (where, shown, more))
        sys.stdout.flush()
    where = ""
    if getattr(args, "zoo_python", None):
        where = " %s (%s)" % (args.zoo_release, interpreters.describe(args.zoo_python))
    print("%d/%d zoo runs match CPython%s (%s)" % (
        matched, total, where, "real packages" if mode == "real" else "re-statement of the hooks"))
    return 0 if total and matched == total else 1
