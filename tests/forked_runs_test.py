#!/usr/bin/env python3
"""tools/lib/crosscheck/forked_runs.py: a run forked from a harness's
--serve process answers what the same harness run as its own process
answers (exit status, stdout, stderr, the folder it runs in), starts from
the state before any run (nothing one run did is seen by the next), and a
run that does not end is killed at the timeout without taking the next
run with it.

    forked_runs_test.py [PYTHON...]   (default: /usr/bin/python3 and each
                                       pyenv 3.9-3.13 here)
"""
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tools", "lib"))
from crosscheck.forked_runs import ForkedRuns  # noqa: E402
import interpreters  # noqa: E402

# A harness as the real ones are written: harness_common imported from
# beside it, main(argv), --serve through harness_common.serve.
HARNESS = r'''
import os, sys, time
sys.path.insert(0, %(lib)r)
import harness_common
del sys.path[0]
MARK = []

def main(argv):
    what = argv[1]
    print("argv", argv[1:], "cwd", os.path.basename(os.getcwd()), "marks", MARK, "seen", "impsim_probe" in sys.modules)
    MARK.append(what)
    sys.modules["impsim_probe"] = sys
    if what == "raise":
        raise ValueError("boom \u00e9")
    if what == "exit-text":
        raise SystemExit("refused: %%s" %% argv[2])
    if what == "exit-3":
        sys.stderr.write("three\n")
        raise SystemExit(3)
    if what == "hang":
        time.sleep(600)
    if what == "os-exit":
        sys.stdout.write("unflushed")
        sys.stdout.flush()
        os._exit(4)

if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        harness_common.serve(main)
    else:
        main(sys.argv)
'''

def outer_frames_dropped(stderr):
    """A traceback without its outermost frame: the harness's `<module>`
    in a process, serve's own in a fork; the frames from main() on, and
    the error, must be the same."""
    lines = stderr.splitlines(keepends=True)
    if not lines or lines[0] != "Traceback (most recent call last):\n":
        return stderr
    end = 2
    while end < len(lines) and lines[end].startswith("    "):
        end += 1
    return lines[0] + "".join(lines[end:])


CASES = [["ok", "x y"], ["raise"], ["exit-text", "\u00fcber"], ["exit-3"], ["os-exit"], ["ok"]]


def main():
    pythons = sys.argv[1:] or interpreters.default_pythons() or [sys.executable]
    failures = 0
    with tempfile.TemporaryDirectory(prefix="impsim-forked-") as tmp:
        harness = os.path.join(tmp, "harness.py")
        with open(harness, "w") as f:
            f.write(HARNESS % {"lib": os.path.join(REPO, "tools", "lib", "crosscheck")})
        work = os.path.join(tmp, "work")
        os.mkdir(work)
        for py in pythons:
            forked = ForkedRuns(harness)
            for args in CASES:
                cwd = work if args[0] == "ok" else None
                want = subprocess.run([py, "-S", "-I", "-B", harness] + args, capture_output=True, text=True,
                                      cwd=cwd)
                got = forked.run(py, args, 60, cwd=cwd)
                want = (want.returncode, want.stdout, outer_frames_dropped(want.stderr))
                if got != want:
                    failures += 1
                    print("FAIL %s %s: forked %r, process %r" % (py, args, got, want))
            rc, out, err = forked.run(py, ["hang"], 1)
            if rc is not None or "timed out" not in err:
                failures += 1
                print("FAIL %s hang: %r" % (py, (rc, out, err)))
            rc, out, err = forked.run(py, ["ok"], 60)
            if rc != 0 or "marks []" not in out or "seen False" not in out:
                failures += 1
                print("FAIL %s after the timeout: %r" % (py, (rc, out, err)))
            forked.close()
            if any(s.poll() is None for s in forked.started):
                failures += 1
                print("FAIL %s: a server outlived close()" % py)
    print("forked_runs_test: %d interpreters, %d cases each, %d failures"
          % (len(pythons), len(CASES) + 2, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
