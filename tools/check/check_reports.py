#!/usr/bin/env python3
"""Every subcommand in every output format, and its JSON against docs/report.schema.json.

- run, sweep, compare, trace and validate on every shipped scenario with
  --format text, json and markdown (and --json): the exit status is the same
  in every format, text and markdown print something, json prints exactly one
  JSON object that validates against the report schema;
- several files make one object holding each file's report, each naming
  its file;
- errors (a missing file, a bad scenario, a bad flag, an unknown
  subcommand) under --format json are one JSON object on standard output
  that validates too, with the exit status unchanged.

--batched runs each subcommand and format once over every shipped scenario
(the several-files report, each file's report in it; the threaded ones in a
batch of their own, compare's schedule search cut at 100), and compare and
schedules once over tests/data/threads/ (compare's searches cut at 50),
instead of once per file: the same report writers on the same runs, in a
few dozen processes instead of hundreds. The sanitizer build uses it, where each process's start and leak check
cost about 0.1 s.

Needs python3-jsonschema >= 4 (Debian bookworm: 4.10.3); tools/setup installs it.
Usage: tools/check/check_reports.py [--impsim build/impsim] [--batched]
"""
import glob
import json
import os
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
from schema_validation import ROOT, SchemaCheck  # noqa: E402


def main():
    check = SchemaCheck(__doc__.splitlines()[0], "report.schema.json",
                        lambda ap: ap.add_argument("--batched", action="store_true",
                                                   help="each subcommand and format once over every shipped scenario"))
    batched = check.args.batched
    fail = check.fail

    def run(argv):
        r = check.impsim(argv, cwd=ROOT)
        return r.returncode, r.stdout, r.stderr

    # The runs of the shipped scenarios are independent: made beforehand, as
    # many at once as there are cores (this test is the longest of the
    # suite), then checked in order. Each command line runs once.
    made = {}

    def impsim(argv):
        key = tuple(argv)
        if key not in made:
            made[key] = run(argv)
        return made[key]

    def check_json(what, out, want_title=None):
        try:
            doc = json.loads(out)
        except json.JSONDecodeError as e:
            fail(f"{what}: not one JSON object: {e}: {out[:200]!r}")
            return None
        errs = check.schema_errors(doc, 160)
        if errs:
            fail(f"{what}: against docs/report.schema.json: {errs[:3]}")
        return doc

    shipped = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "scenarios", "**", "*.json"), recursive=True))

    def threaded(path):
        with open(os.path.join(ROOT, path)) as f:
            return bool(json.load(f).get("threads"))

    # The zoo's threaded scenarios: compare searches their schedules.
    threads = {p for p in shipped if threaded(p)}
    # Each subcommand's command line over some files.
    # --batched: the threaded scenarios apart, their compare's schedule
    # search cut at 100 (the same writers, each class a row as at any cut;
    # under the sanitizers the zoo's full searches took over a minute of
    # this test, and 300 schedules still 22 s of it).
    cut = ["--max-schedules", "100"] if batched else []
    commands = {
        "run": lambda files: ["run", *files],
        "compare": lambda files: ["compare", *files, *(cut if set(files) <= threads else [])],
        "trace": lambda files: ["trace", *files, "--max-lines", "50"],
        "validate": lambda files: ["validate", *files],
    }
    flags = (["--format", "text"], ["--format", "json"], ["--format", "markdown"], ["--json"])
    # What one check covers: a file, or with --batched every file at once.
    groups = [[p for p in shipped if p not in threads], sorted(threads)] if batched else [[path] for path in shipped]

    def names(group):
        return list(commands)

    every = [commands[name](group) + flag for group in groups for name in names(group) for flag in flags]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        made.update(zip(map(tuple, every), pool.map(run, every)))
    checked = 0
    for group in groups:
        for name in names(group):
            argv = commands[name](group)
            files = [a for a in argv if a in group]
            statuses = {}
            for fmt in ["text", "json", "markdown"]:
                status, out, err = impsim(argv + ["--format", fmt])
                statuses[fmt] = status
                what = f"{' '.join(argv)} --format {fmt}"
                if fmt == "json":
                    doc = check_json(what, out)
                    if doc is not None and "exit_status" in doc and doc["exit_status"] != status:
                        fail(f"{what}: exit_status {doc['exit_status']} but the exit status is {status}")
                    if doc is not None and len(files) > 1 and len(doc.get("reports", [])) != len(files):
                        fail(f"{what}: {len(doc.get('reports', []))} reports for {len(files)} files")
                elif not out.strip():
                    fail(f"{what}: printed nothing")
                if fmt == "markdown" and name in ("run", "compare", "trace"):
                    # One file's report starts with its heading; several
                    # files' each follow the file's name.
                    headings = out.count("\n### impsim ") + out.startswith("### impsim ")
                    if len(files) == 1 and not out.startswith("### impsim "):
                        fail(f"{what}: markdown does not start with a heading")
                    elif headings != len(files):
                        fail(f"{what}: {headings} markdown headings for {len(files)} files")
                checked += len(files)
            status, out, _ = impsim(argv + ["--json"])
            if out != impsim(argv + ["--format", "json"])[1]:
                fail(f"{' '.join(argv)}: --json differs from --format json")
            if len(set(statuses.values())) != 1:
                fail(f"{' '.join(argv)}: exit statuses differ between formats: {statuses}")

    # sweep, in each format, on the scenarios with a parameter k.
    for path in ["scenarios/nested_guards.json", "scenarios/import_chain.json"]:
        for fmt in ["text", "json", "markdown"]:
            status, out, _ = impsim(["sweep", path, "--param", "k", "--values", "1..3", "--format", fmt])
            if status != 0:
                fail(f"sweep {path} --format {fmt}: exit {status}")
            if fmt == "json":
                check_json(f"sweep {path} --format json", out)
            if fmt == "markdown" and not out.startswith("### impsim sweep: "):
                fail(f"sweep {path} --format markdown: no heading")
            checked += 1

    # compare of a threaded scenario (its own report: the designs across
    # the schedules), in each format. --batched: every file of
    # tests/data/threads in one process per format, each search cut at 50
    # (the same writers; under the sanitizers one process a file took 29 s
    # of this test's 69 s of impsim).
    thread_data = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "tests", "data", "threads", "*.json")))
    for files in ([thread_data] if batched else [[path] for path in thread_data]):
        argv = ["compare", *files, "--max-schedules", "50" if batched else "200"]
        what = "compare " + (files[0] if len(files) == 1 else f"tests/data/threads/ ({len(files)} files)")
        statuses = set()
        for fmt in ["text", "json", "markdown"]:
            status, out, _ = impsim(argv + ["--format", fmt])
            statuses.add(status)
            if fmt == "json":
                doc = check_json(f"{what} --format json", out)
                if doc is not None and doc.get("exit_status") != status:
                    fail(f"{what} --format json: exit_status {doc.get('exit_status')} but the exit status is {status}")
                if doc is not None and len(files) > 1 and len(doc.get("reports", [])) != len(files):
                    fail(f"{what} --format json: {len(doc.get('reports', []))} reports for {len(files)} files")
            elif fmt == "markdown" and out.count("### impsim compare: ") != len(files):
                fail(f"{what} --format markdown: {out.count('### impsim compare: ')} headings for {len(files)} files")
            elif not out.strip():
                fail(f"{what} --format {fmt}: printed nothing")
            checked += len(files)
        if len(statuses) != 1:
            fail(f"{what}: exit statuses differ between formats: {statuses}")

    # schedules of a threaded scenario, in each format; its JSON split in
    # two shards (each a document of its own, with the identity --merge
    # checks) and merged back into the unsplit search's very document.
    with tempfile.TemporaryDirectory() as tmp:
        # --batched: the text and JSON of every file in one process each.
        if batched:
            argv = ["schedules", *thread_data, "--max-schedules", "200"]
            for fmt in ["text", "json"]:
                status, out, _ = impsim(argv + ["--format", fmt])
                what = f"schedules tests/data/threads/ ({len(thread_data)} files) --format {fmt}"
                if fmt == "json":
                    doc = check_json(what, out)
                    if doc is not None and len(doc.get("reports", [])) != len(thread_data):
                        fail(f"{what}: {len(doc.get('reports', []))} reports for {len(thread_data)} files")
                elif not out.strip():
                    fail(f"{what}: printed nothing")
                checked += len(thread_data)
        for path in thread_data:
            argv = ["schedules", path, "--max-schedules", "200"]
            for fmt in ([] if batched else ["text", "json"]):
                status, out, _ = impsim(argv + ["--format", fmt])
                if fmt == "json":
                    check_json(" ".join(argv) + " --format json", out)
                elif not out.strip():
                    fail(f"{' '.join(argv)} --format text: printed nothing")
                checked += 1
            whole = impsim(argv + ["--format", "json"])[1]
            shards = []
            for i in (1, 2):
                shard = os.path.join(tmp, f"{os.path.basename(path)}.{i}.json")
                status, _, err = impsim(argv + ["--shard", f"{i}/2", "--format", "json", "-o", shard])
                if status not in (0, 1):
                    fail(f"{' '.join(argv)} --shard {i}/2: exit {status}: {err[-300:]}")
                    continue
                with open(shard) as f:
                    doc = check_json(f"{' '.join(argv)} --shard {i}/2", f.read())
                if doc is not None and "shard_of" not in doc:
                    fail(f"{' '.join(argv)} --shard {i}/2: no shard_of")
                shards.append(shard)
            status, out, err = impsim(["schedules", "--merge", *shards, "--format", "json"])
            merged = check_json(f"schedules --merge of {path}'s two shards", out)
            # A search cut short at --max-schedules covers other schedules
            # when split: only a complete one must come back the same.
            if all(e["complete"] for e in json.loads(whole)["searches"]) and out != whole:
                fail(f"schedules --merge of {path}'s two shards: not the unsplit search's document")
            elif merged is not None and any(e["schedules"] != sum(o["schedules"] for o in e["outcomes"])
                                            for e in merged["searches"]):
                fail(f"schedules --merge of {path}'s two shards: the outcomes do not add up to the total")
            checked += 1

    # Several files: one object, each file's report in it, the worst status.
    for argv in (["run"], ["compare", "--variants", "before,after"], ["validate"], ["trace", "--max-lines", "20"]):
        status, out, _ = impsim(argv + shipped[:3] + ["--format", "json"])
        doc = check_json(f"{argv[0]} on three files", out)
        if doc is not None and len(doc.get("reports", [])) != 3:
            fail(f"{argv[0]} on three files: expected 3 reports, got {len(doc.get('reports', []))}")
        # Each report says which file it is (a trace is Trace Event JSON: its own format).
        if doc is not None and argv[0] != "trace":
            files = [r.get("file") for r in doc.get("reports", [])]
            if files != shipped[:3]:
                fail(f"{argv[0]} on three files: the reports' files are {files}, expected {shipped[:3]}")
        checked += 1

    # Budgets (a bound, a ratio, one failing) in run's and compare's JSON.
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(ROOT, "scenarios", "seed_incident.json")) as f:
            doc = json.load(f)
        doc["expect"] = {"after": {"probe.lookups": {"<=": 7}, "lookups": {">=": 100},
                                   "probe.walks": {"ratio_to": "before", "<=": "1/1000"}, "probe.asks": 49}}
        path = os.path.join(tmp, "budgets.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        for argv in (["run", path], ["compare", path, "--variants", "before,after"], ["sweep", path, "--param", "k", "--values", "6,7"]):
            status, out, _ = impsim(argv + ["--format", "json"])
            got = check_json(" ".join(argv[:1]) + " with budgets", out)
            if status != 1 or (got is not None and got.get("exit_status") != 1):
                fail(f"{argv[0]} with a failing budget: exit {status}, expected 1")
            checked += 1

    # explore --json: the result, naming the page written.
    with tempfile.TemporaryDirectory() as tmp:
        page = os.path.join(tmp, "page.html")
        status, out, _ = impsim(["explore", "scenarios/nested_guards.json", "--set", "k=1", "--json", "-o", page])
        got = check_json("explore --json", out)
        if status != 0 or (got is not None and got.get("page") != page):
            fail(f"explore --json: exit {status}, or no \"page\" naming {page}")
        checked += 1

    # Errors: one JSON object on standard output, the exit status unchanged.
    with tempfile.TemporaryDirectory() as tmp:
        bad = os.path.join(tmp, "bad.json")
        with open(bad, "w") as f:
            f.write('{"impsim": 1, "tree": {}, "program": [], "nmae": "x"}\n')
        cases = [
            (["run", "does-not-exist.json"], 2),
            (["run", bad], 2),
            (["compare", bad], 2),
            (["sweep", bad, "--param", "k", "--values", "1"], 2),
            (["trace", bad], 2),
            (["validate", bad], 2),
            (["run", "scenarios/nested_guards.json", "--set", "k=1", "--set", "k=2"], 2),
            (["run", "scenarios/nested_guards.json", "--no-such-flag"], 2),
            (["runn", "scenarios/nested_guards.json"], 2),
            (["run", "scenarios/nested_guards.json", "--max-file-bytes", "10"], 3),
            (["run", "scenarios/nested_guards.json", "--set", "k=9", "--max-events", "100"], 3),
        ]
        for argv, want in cases:
            for flag in (["--format", "json"], ["--json"]):
                status, out, err = impsim(argv + flag)
                what = " ".join(argv + flag)
                if status != want:
                    fail(f"{what}: exit {status}, expected {want}")
                doc = check_json(what, out)
                if doc is not None and doc.get("exit_status") != want:
                    fail(f"{what}: exit_status {doc.get('exit_status')}, expected {want}")
                if want == 2 and doc is not None and "error" not in doc:
                    fail(f"{what}: no \"error\" object")
                checked += 1
        status, out, _ = impsim(["run", bad, "--format", "json"])
        doc = json.loads(out)
        if doc["error"]["pointer"] != "/nmae" or "did you mean \"name\"" not in doc["error"]["message"]:
            fail(f"unknown key: expected /nmae and a did-you-mean, got {doc['error']}")

    print(f"{checked} outputs checked, {len(check.failures)} failures")
    return 1 if check.failures else 0


if __name__ == "__main__":
    sys.exit(main())
