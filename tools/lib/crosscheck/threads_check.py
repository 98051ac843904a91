"""The real side of a threaded crosscheck: a threaded scenario run on a REAL
interpreter with its threads forced through a point log's schedule
(threads_real.py, run as `python -S -I -B`); docs/crosscheck.md, "Threads:
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

THREADS_REAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "threads_real.py")


def run_real(python, scenario_path, log, options=None, timeout=60):
    """threads_real.py's report (a dict) for one scenario and one point log
    (a list of events), or {"error": text} when it gave none."""
    fd, log_path = tempfile.mkstemp(prefix="impsim-threads-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(log, f)
        cmd = [python, "-S", "-I", "-B", THREADS_REAL, scenario_path, log_path, json.dumps(options or {})]
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"error": "no report in %g s" % timeout}
    finally:
        os.unlink(log_path)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        return {"error": "exit %d: %s" % (out.returncode, out.stderr.strip()[-600:])}
    return json.loads(lines[-1])


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
