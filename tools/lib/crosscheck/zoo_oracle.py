"""Run hook scenarios (scenarios/zoo/) in real CPython: the oracle of
`tools/check/crosscheck --zoo`.

Each (scenario, sweep value, variant) runs in its own fresh interpreter:
``PYTHON -S -I -B zoo_harness.py CONFIG`` with the scenario's package tree
written out as .py files (tree entries the real package provides, listed in
"real"."external", are not written).  Mode "real" runs the packages the
scenario's "real" key binds; mode "restated" runs every hook as the generic
Python re-statement of the hook language.
"""

import json
import os
import shutil
import tempfile

from . import oracle

HARNESS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "zoo_harness.py")
DEFAULT_VARIANTS = ["as_is"]
# The designs the re-statement implements (docs/zoo.md); the real package
# has as_is, and the designs its "real"."bind"."variants" bind.
RESTATED_VARIANTS = ("as_is", "idempotent_install", "remove_all", "skip_self",
                     "call_next", "guard_global_set", "guard_object_set",
                     "guard_flag")
HOOK_KEYS = ("hooks", "finders", "meta_path")
# Steps that make a scenario a hook scenario wherever they are (impsim's
# kMetaPathSteps): its variants are then the hook designs.
HOOK_STEPS = ("install", "uninstall", "insert", "append", "remove", "unload", "new", "reload")


class ZooError(Exception):
    """The harness process failed (crash, timeout, no JSON)."""


def is_hook_scenario(scenario):
    if any(key in scenario for key in HOOK_KEYS):
        return True

    def has_hook_step(steps):
        for step in steps if isinstance(steps, list) else ():
            if isinstance(step, dict) and (any(k in step for k in HOOK_STEPS)
                                           or has_hook_step(step.get("do"))):
                return True
        return False
    bodies = [entry.get("body") for entry in scenario.get("tree", {}).values() if isinstance(entry, dict)]
    return any(has_hook_step(steps) for steps in
               [scenario.get("program")] + list(scenario.get("threads", {}).values()) + bodies)


def run_plan(scenario, overrides=None):
    plan = []
    for variant, params in oracle.run_plan(
            dict(scenario, variants=scenario.get("variants", DEFAULT_VARIANTS)),
            overrides):
        plan.append((variant, params))
    return plan


def real_variants(scenario):
    bind = scenario.get("real", {}).get("bind", {})
    return ("as_is",) + tuple(bind.get("variants", {}))


def no_restatement(scenario):
    """Why the scenario has no re-stated run, or None: "real".
    "no_restated_run" says why (a tree of the interpreter's own module
    names, which the real ones shadow through their loaded parents)."""
    return scenario.get("real", {}).get("no_restated_run")


def runnable(scenario, variant, mode):
    if mode == "real":
        return "real" in scenario and variant in real_variants(scenario)
    return variant in RESTATED_VARIANTS and not no_restatement(scenario)


def python_of(scenario, mode, default):
    if mode == "real":
        return scenario["real"].get("python", "/usr/bin/python3")
    return default


def run_one(scenario, variant, params, mode, python, timeout=120, record=False):
    real = scenario.get("real", {}) if mode == "real" else {}
    external = set(real.get("external", [])) | set(real.get("copy", {})) \
        | set(real.get("generate", {}))
    tmp = tempfile.mkdtemp(prefix="impsim_zoo_")
    try:
        root = os.path.join(tmp, "tree")
        tree = {k: v for k, v in scenario.get("tree", {}).items() if k not in external}
        oracle.write_tree(tree, root)
        for name, source in scenario.get("real", {}).get("source", {}).items():
            if mode == "real" and name in tree:  # what the package expects to find there
                parts = name.split(".")
                base = os.path.join(root, *parts)
                path = (os.path.join(base, "__init__.py")
                        if tree[name].get("package") else base + ".py")
                with open(path) as f:
                    body = f.read()
                with open(path, "w") as f:
                    f.write(source + "\n" + body)
        for name, source in (scenario.get("real", {}).get("copy", {}).items()
                             if mode == "real" else ()):
            # a tree module that is a copy of the package's own file
            # (written at test time, never kept in the repository)
            shutil.copyfile(source, os.path.join(root, *name.split(".")) + ".py")
        for name, expr in (real.get("generate", {}).items()):
            # a tree module whose source the package generates at install
            # time (setuptools' editable finder): Python evaluated here, with
            # TMP (the run's folder) and os, ast at hand
            with open(os.path.join(root, *name.split(".")) + ".py", "w") as f:
                f.write(eval(expr, {"os": os, "ast": __import__("ast"), "TMP": tmp}))
        for path, text in real.get("files", {}).items():
            full = os.path.join(tmp, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(text)
        config = os.path.join(tmp, "config.json")
        with open(config, "w") as f:
            json.dump({"scenario": scenario, "variant": variant, "params": params,
                       "tree_root": root, "mode": mode, "record": record}, f)
        report = oracle.run_harness(python, HARNESS, config, tmp, timeout, ZooError, "zoo harness")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    run = {"variant": variant, "params": params, "mode": mode}
    run.update(report)
    return run


def counter_value(run, counter):
    """searches, finder_calls, max_depth, finder_calls:ID, LABEL.counter."""
    if counter.startswith("finder_calls:"):
        fid = counter.partition(":")[2]
        if fid in run.get("predefined_calls", {}):
            return run["predefined_calls"][fid]
        return run.get("finder_calls_by_object", {}).get(fid, 0)
    if counter in run["counters"]:
        return run["counters"][counter]
    label, _, name = counter.rpartition(".")
    return run["labels"].get(label, {}).get(name)


def build_report(scenario, runs):
    """The shape of `impsim run FILE --json`, with the measured expectations."""
    oracle.add_expectations(scenario, runs, counter_value)
    return {"impsim": 1, "scenario": scenario.get("name", ""), "runs": runs}
