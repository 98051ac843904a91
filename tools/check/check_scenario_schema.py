#!/usr/bin/env python3
"""docs/scenario.schema.json and impsim's reader agree.

- the schema is a valid draft 2020-12 schema;
- every shipped scenario (scenarios/*.json) passes both the schema and
  `impsim validate`;
- every error case of tests/bad/cases.json is refused by impsim with its
  exit status, and by the schema exactly when the case says "rejects"; the
  "reader-only" cases must pass the schema (so that list stays the exact list
  of what only the reader catches) and "not-json" ones must not parse;
- the schema's variant names are the reader's.

Needs python3-jsonschema >= 4 (Debian bookworm: 4.10.3); tools/setup installs it.
Usage: tools/check/check_scenario_schema.py [--impsim build/impsim]
"""
import glob
import json
import os
import re
import shlex
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from crosscheck import counters  # noqa: E402
from schema_validation import ROOT, SchemaCheck  # noqa: E402


def main():
    check = SchemaCheck(__doc__.splitlines()[0], "scenario.schema.json")
    fail = check.fail
    schema = check.schema

    def schema_errors(doc):
        return check.schema_errors(doc, 120)

    def impsim(argv):
        r = check.impsim(argv)
        return r.returncode, r.stdout + r.stderr

    shipped = sorted(glob.glob(os.path.join(ROOT, "scenarios", "**", "*.json"), recursive=True))
    if not shipped:
        fail("no shipped scenarios found")
    for path in shipped:
        rel = os.path.relpath(path, ROOT)
        with open(path) as f:
            doc = json.load(f)
        errs = schema_errors(doc)
        if errs:
            fail(f"{rel}: the schema rejects a shipped scenario: {errs[:3]}")
        want = os.path.relpath(os.path.join(ROOT, "docs", "scenario.schema.json"), os.path.dirname(path))
        if doc.get("$schema") != want:
            fail(f'{rel}: "$schema" should be "{want}"')
        status, out = impsim(["validate", path])
        if status != 0:
            fail(f"{rel}: impsim validate exits {status}: {out.strip()}")
        print(f"ok   {rel}: schema and reader accept it")

    # The hook language: the small scenarios of tests/data/hooks (no "$schema").
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "data", "hooks", "*.json"))):
        rel = os.path.relpath(path, ROOT)
        with open(path) as f:
            errs = schema_errors(json.load(f))
        status, out = impsim(["validate", path])
        if errs or status != 0:
            fail(f"{rel}: schema errors {errs[:3]}, impsim validate exits {status}: {out.strip()[:200]}")
        else:
            print(f"ok   {rel}: schema and reader accept it")

    with open(os.path.join(ROOT, "tests", "bad", "cases.json")) as f:
        cases = json.load(f)["cases"]
    counts = {}
    for c in cases:
        path = os.path.join(ROOT, "tests", "bad", c["file"])
        kind = c["schema"]
        counts[kind] = counts.get(kind, 0) + 1
        status, out = impsim(["run", path] + shlex.split(c.get("args", "")))
        if status != c["status"] or c["message"] not in out:
            fail(f"{c['file']}: impsim exits {status} (want {c['status']}), output: {out.strip()[:200]}")
        with open(path, "rb") as f:
            raw = f.read()
        try:
            doc = json.loads(raw)
        except (ValueError, RecursionError) as e:
            if kind != "not-json":
                fail(f"{c['file']}: Python's json refuses it ({e}), but the case says {kind}")
            else:
                print(f"ok   {c['file']}: not JSON for either")
            continue
        if kind == "not-json":
            fail(f"{c['file']}: Python's json parses it, but the case says not-json")
            continue
        errs = schema_errors(doc)
        if kind == "rejects" and not errs:
            fail(f"{c['file']}: the reader refuses it but the schema accepts it")
        elif kind == "reader-only" and errs:
            fail(f"{c['file']}: listed as reader-only, but the schema rejects it too: {errs[:2]} (mark it \"rejects\")")
        elif kind not in ("rejects", "reader-only"):
            fail(f"{c['file']}: unknown schema verdict {kind!r}")
        else:
            print(f"ok   {c['file']}: {kind}")

    # The variant names: the reader lists its own in the error for an unknown one.
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as t:
        t.write('{"impsim": 1, "tree": {}, "program": [], "variants": ["?"]}')
    try:
        _, out = impsim(["validate", t.name])
    finally:
        os.unlink(t.name)
    m = re.search(r"expected one of: ([^\n(]*)\(each may take @REVISION: ([^)]*)\)", out)
    designs = [d.strip() for d in m.group(1).split(",") if d.strip()] if m else []
    revisions = [r.strip() for r in m.group(2).split(",") if r.strip()] if m else []
    pattern = schema["$defs"]["variant"]["pattern"]
    names = designs + [f"{d}@{r}" for d in designs for r in revisions]
    wrong = [n for n in names if not re.fullmatch(pattern, n)]
    wrong += [n for n in ("fixed", "before@", "before@zzz", "@04efefd", "after@b52ce17@04efefd")
              if re.fullmatch(pattern, n)]
    if not designs or not revisions or wrong:
        fail(f"variants: the reader knows {designs} on revisions {revisions}; the schema's pattern disagrees on {wrong}")
    else:
        print(f"ok   variants: {', '.join(designs)}, each also @{'/@'.join(revisions)}")

    # The counter names: impsim's table (read by tools/lib/crosscheck/counters.py).
    m = re.search(r"\(\?:((?:\w+\|)*\w+)\)\$$", schema["$defs"]["counterName"]["pattern"])
    schema_counters = tuple(m.group(1).split("|")) if m else ()
    if schema_counters != counters.COUNTERS:
        fail(f"counters: impsim has {counters.COUNTERS}, the schema's pattern {schema_counters}")
    else:
        print(f"ok   counters: {', '.join(schema_counters)}")

    # The finder revisions and CPython versions: the reader lists its own.
    for key in ("revision", "cpython"):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as t:
            t.write('{"impsim": 1, "tree": {}, "program": [], "%s": "?"}' % key)
        try:
            _, out = impsim(["validate", t.name])
        finally:
            os.unlink(t.name)
        # The names the reader lists; a CPython release beyond them is
        # the schema's pattern, and the reader's ", or a release ...".
        m = re.search(r"expected one of: ([^\n;]*)", out)
        reader_values = [v.strip() for v in m.group(1).split(",") if not v.strip().startswith("or ")] if m else []
        prop = schema["properties"][key]
        schema_values = prop["enum"] if "enum" in prop else next(a["enum"] for a in prop["anyOf"] if "enum" in a)
        if reader_values != schema_values:
            fail(f"{key}: the reader knows {reader_values}, the schema {schema_values}")
        else:
            print(f"ok   {key}: {', '.join(schema_values)}")

    only = [c["file"] for c in cases if c["schema"] == "reader-only"]
    print(f"\n{len(shipped)} shipped scenarios; {len(cases)} error cases: "
          + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    print("caught only by the reader or the run: " + ", ".join(only))
    if check.failures:
        print(f"\n{len(check.failures)} disagreement(s)")
        return 1
    return 0


if __name__ == "__main__":
    # jsonschema validates recursively: tests/bad/deep_guards.json nests a few
    # hundred levels, so run on a thread with room for a deep Python stack.
    import threading
    sys.setrecursionlimit(100000)
    threading.stack_size(512 * 1024 * 1024)
    result = []

    def run():
        try:
            result.append(main())
        except SystemExit as e:  # argparse's --help or a bad flag: its status, not a crash
            result.append(e.code)
    t = threading.Thread(target=run)
    t.start()
    t.join()
    sys.exit(result[0] if result else 1)
