"""Run scenarios in the real CPython interpreter (the oracle side of crosscheck).

Each (scenario, sweep value, variant) runs in its own interpreter:
``python -S -I -B harness.py CONFIG`` with the scenario's package tree
written out as real .py files in a temporary folder, as a fork of a
``harness.py --serve`` process that has not run anything yet
(forked_runs.py); a timed run as a process of its own.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

from . import harness, harness_common
from .counters import CORE as _CORE
from .forked_runs import ForkedRuns

# The harness runs alone in the interpreter under test (standard library
# only), so it names the counters it increments itself: they must be
# impsim's, in impsim's order (max_depth is reported apart).
if tuple(harness._COUNTERS) + ("max_depth",) != _CORE:
    raise RuntimeError("harness counters %r are not impsim's %r"
                       % (harness._COUNTERS, _CORE))

HARNESS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "harness.py")

DEFAULT_VARIANTS = ["before", "after"]
# The designs the harness implements (all of impsim's, in its order).
KNOWN_VARIANTS = tuple(harness._DESIGNS)


class OracleError(Exception):
    """The harness process failed (crash, timeout, no JSON)."""


write_tree = harness_common.write_tree


def resolve_params(scenario, overrides=None):
    params = dict(scenario.get("params", {}))
    params.update(overrides or {})
    return params


def run_plan(scenario, overrides=None):
    """[(variant, params)] in report order: sweep values outer, variants inner.

    Like impsim, overriding the swept param runs that value only.
    """
    params = resolve_params(scenario, overrides)
    variants = scenario.get("variants", DEFAULT_VARIANTS)
    sweep = scenario.get("sweep")
    if sweep and sweep["param"] in (overrides or {}):
        sweep = None
    plan = []
    if sweep:
        for value in sweep["values"]:
            p = dict(params)
            p[sweep["param"]] = value
            for v in variants:
                plan.append((v, p))
    else:
        for v in variants:
            plan.append((v, dict(params)))
    return plan


def run_one(scenario, variant, params, python=None, timeout=120, extra=None):
    """One run in a fresh interpreter (forked, or started when timed);
    returns the run's report dict.

    extra: more harness config keys ("time", "python_walk": see harness.py).
    """
    python = python or sys.executable
    tmp = tempfile.mkdtemp(prefix="impsim_cc_")
    try:
        root = os.path.join(tmp, "tree")
        write_tree(scenario.get("tree", {}), root)
        config = os.path.join(tmp, "config.json")
        with open(config, "w") as f:
            config_dict = {"scenario": scenario, "variant": variant,
                           "params": params, "tree_root": root}
            config_dict.update(extra or {})
            json.dump(config_dict, f)
        report = run_harness(python, HARNESS, config, tmp, timeout, fresh=bool((extra or {}).get("time")))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    run = {"variant": variant, "params": params}
    run.update(report)
    return run


_FORKED = {}  # harness path -> its ForkedRuns, made at its first run
_FORKED_LOCK = threading.Lock()  # runs come from a tool's worker threads


def run_harness(python, harness, config, tmp, timeout, error=OracleError, what="harness", fresh=False):
    """`python -S -I -B HARNESS CONFIG` in tmp: its report, the last line it
    prints (JSON); a crash, a timeout or no output raise `error`. A fork of
    a harness server (forked_runs.py) unless `fresh`: a timed run starts a
    process of its own, so that no page it writes is a copy-on-write one."""
    try:
        if fresh:
            try:
                proc = subprocess.run([python, "-S", "-I", "-B", harness, config], capture_output=True, text=True,
                                      encoding="utf-8", errors="replace", timeout=timeout, cwd=tmp)
            except subprocess.TimeoutExpired:
                raise error("CPython run timed out after %ss" % timeout)
            returncode, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
        else:
            with _FORKED_LOCK:
                if harness not in _FORKED:
                    _FORKED[harness] = ForkedRuns(harness)
                forked = _FORKED[harness]
            returncode, stdout, stderr = forked.run(python, [config], timeout, cwd=tmp)
    except OSError as exc:
        raise error("cannot run %s: %s" % (python, exc))
    if returncode is None:
        raise error("CPython run: %s" % stderr)
    out = stdout.strip().splitlines()
    if returncode != 0 or not out:
        err = stderr.strip().splitlines()
        raise error("%s exit %d: %s" % (what, returncode, err[-1] if err else "(no output)"))
    return json.loads(out[-1])


def counter_value(run, counter):
    """'lookups' (a total) or 'probe.lookups' (a labelled step's share)."""
    if counter in run["counters"]:
        return run["counters"][counter]
    label, _, name = counter.rpartition(".")
    return run["labels"].get(label, {}).get(name)


def add_expectations(scenario, runs, lookup=None):
    """Fill each run's "expectations" from the scenario's `expect`.

    lookup(run, counter): the counter's value in a run (default
    counter_value; zoo_oracle passes its own for the hook counters).  A null
    expected value checks nothing, as in impsim.
    """
    lookup = lookup or counter_value
    expect = scenario.get("expect", {})
    sweep = scenario.get("sweep")
    for run in runs:
        checks = []
        for counter, expected in expect.get(run["variant"], {}).items():
            if sweep and isinstance(expected, list):
                index = sweep["values"].index(run["params"][sweep["param"]])
                expected = expected[index]
            if expected is None:
                continue
            actual = lookup(run, counter)
            checks.append({"counter": counter, "expected": expected,
                           "actual": actual, "ok": actual == expected})
        run["expectations"] = checks


def build_report(scenario, runs):
    """The same shape as `impsim run FILE --json`."""
    add_expectations(scenario, runs)
    equivalent = True
    by_params = {}
    for run in runs:
        key = json.dumps(run["params"], sort_keys=True)
        if key in by_params and by_params[key] != run["outcome"]:
            equivalent = False
        by_params.setdefault(key, run["outcome"])
    return {"impsim": 1, "scenario": scenario.get("name", ""),
            "runs": runs, "equivalent": equivalent}
