#!/usr/bin/env python3
"""Every command under a memory cap either says what it says without one, or
stops with exit status 3 saying what ran out, and prints no result.

    tests/memory_caps_test.py --impsim build/impsim [--seed S] [--count N] [--caps K]

First two threads (tests/data/threads/cross_import.json) and fifteen,
through each command under caps a few MiB apart, from where nothing starts
to where everything runs; then random scenarios (tools/gen/gen_random.py's programs, and the same programs
split over one to fifteen threads that main starts and joins; the shipped
threaded scenarios too) go through run, compare, schedules, trace and
explore, once without a cap and then under K random caps of address space
(util-linux's prlimit --as, as a CI runner's ulimit -v or a container
would set one). Under a cap, each command's result must be one of:

- the same as without it: the exit status, standard output and (explore)
  the page, byte for byte;
- exit status 3 (4 for an output that could not be written), "out of
  memory" on standard error, and no result: nothing on standard output
  (trace, which prints its events as they happen, prints a beginning of
  what it prints uncapped and none of its end) and no page written.

A crash, a hang, another exit status, or a partial result printed as if it
were whole fails the test, with the command line that reproduces it.
Standard library only; tools/test runs it under ctest.
"""

import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "gen"))
import gen_random  # noqa: E402

# Below this the system's loader cannot map impsim and its libraries at all
# (exit 127, or a SIGSEGV before main): nothing of impsim runs to be tested.
SMALLEST_CAP_MB = 10
LARGEST_CAP_MB = 256


def threaded(scenario, rng):
    """The program split over threads: each takes some top-level steps,
    main starts them all, keeps the rest, and joins them."""
    steps = scenario["program"]
    n = rng.choice([1, 1, 2, 3, 15])
    threads = {f"w{i}": [] for i in range(n)}
    mine = []
    for step in steps:
        (threads[f"w{rng.randrange(n)}"] if rng.random() < 0.6 else mine).append(step)
    for name in threads:
        if not threads[name]:
            threads[name] = [{"find_spec": "nothere", "optional": True}]
    out = dict(scenario)
    out["name"] = scenario.get("name", "random") + f"_threads{n}"
    out["threads"] = threads
    out["program"] = [{"start": t} for t in threads] + mine + [{"join": t} for t in threads]
    out.pop("sweep", None)
    out.pop("expect", None)
    return out


def commands(path, threaded_scenario, page):
    """Each command on the scenario; every run bounded low (a random
    program with a dozen copies of Paddle's finder steps k! lookups, and a
    schedule search runs it once per schedule), so that a limit, not the
    clock, ends the long ones."""
    small = ["--max-events", "200000"]
    cut = ["--max-schedules", "30"] if threaded_scenario else []
    out = [["run", path, *small], ["compare", path, *small, *cut], ["trace", path, "--max-lines", "200", *small],
           ["explore", path, "-o", page, *small]]
    if threaded_scenario:
        out.append(["schedules", path, *small, *cut])
    return out


def run(impsim, argv, cap_mb=None, page=None):
    if page and os.path.exists(page):
        os.remove(page)
    prefix = ["prlimit", f"--as={cap_mb << 20}"] if cap_mb else []
    try:
        r = subprocess.run(prefix + [impsim, *argv], capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        return (None, b"", b"timed out after 120 s", None)
    written = None
    if page and os.path.exists(page):
        with open(page, "rb") as f:
            written = f.read()
    return (r.returncode, r.stdout, r.stderr, written)


def verdict(reference, capped, command):
    """None when `capped` is what a cap may give; else what is wrong."""
    rc, out, err, page = capped
    if capped == reference:
        return None
    if rc is None:
        return "it hung: " + err.decode()
    if rc not in (3, 4):
        return f"exit status {rc} (without the cap {reference[0]}), not 3 or 4: {err.decode(errors='replace')[-400:]}"
    if b"out of memory" not in err:
        return f"exit status {rc} without \"out of memory\" on standard error: {err.decode(errors='replace')[-400:]}"
    if command == "trace":
        if not reference[1].startswith(out):
            return "standard output is not a beginning of the trace printed without the cap"
        if out == reference[1] and out:
            return "the whole trace was printed, and then an error"
    elif out:
        return f"a result on standard output although the command failed: {out[:300]!r}"
    if page is not None:
        return "a page was written although the command failed"
    return None


# Fifteen threads (the most a scenario may have), each importing a module
# of its own, started and joined by main.
FIFTEEN = {
    "impsim": 1, "name": "fifteen_threads",
    "tree": {f"m{i}": {} for i in range(15)},
    "threads": {f"t{i}": [{"import": f"m{i}"}] for i in range(15)},
    "program": [{"start": f"t{i}"} for i in range(15)] + [{"join": f"t{i}"} for i in range(15)],
}


def stepped_caps(impsim, tmp):
    """Two threads and fifteen, every command, caps a step apart from where
    nothing can start to where everything runs: some cap must stop a
    thread's stack (the case that used to report a search of a program that
    never ran, exit 0), and every result must be one a cap may give."""
    failures = 0
    path15 = os.path.join(tmp, "fifteen_threads.json")
    with open(path15, "w") as f:
        json.dump(FIFTEEN, f)
    cross = os.path.join(ROOT, "tests", "data", "threads", "cross_import.json")
    for path in (cross, path15):
        page = os.path.join(tmp, "stepped.html")
        for argv in commands(path, True, page):
            reference = run(impsim, argv, page=page if argv[0] == "explore" else None)
            stack_stopped = False
            for cap in range(SMALLEST_CAP_MB, 200, 8):
                capped = run(impsim, argv, cap, page if argv[0] == "explore" else None)
                why = verdict(reference, capped, argv[0])
                if why:
                    failures += 1
                    print(f"FAIL prlimit --as={cap << 20} impsim {' '.join(argv)}: {why}")
                stack_stopped |= b"for the stack of thread" in capped[2]
            if not stack_stopped:
                failures += 1
                print(f"FAIL impsim {' '.join(argv)}: no cap from {SMALLEST_CAP_MB} MiB up stopped a thread's stack")
            if capped != reference:
                failures += 1
                print(f"FAIL impsim {' '.join(argv)}: still stopped at 200 MiB")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--impsim", default=os.path.join(ROOT, "build", "impsim"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=16, help="random programs (each also split over threads)")
    ap.add_argument("--caps", type=int, default=2, help="random caps per command")
    args = ap.parse_args()
    rng = random.Random(f"memory_caps:{args.seed}")
    failures = checked = failed_cleanly = 0
    with tempfile.TemporaryDirectory() as tmp:
        failures += stepped_caps(args.impsim, tmp)
        scenarios = []
        for i in range(args.count):
            sc = gen_random.generate(args.seed, i)
            scenarios.append((f"random_s{args.seed}_{i}", sc))
            scenarios.append((f"random_s{args.seed}_{i}_threads", threaded(sc, rng)))
        threads_dir = os.path.join(ROOT, "tests", "data", "threads")
        for name in sorted(n for n in os.listdir(threads_dir) if n.endswith(".json")):
            with open(os.path.join(threads_dir, name)) as f:
                scenarios.append((name[:-5], json.load(f)))
        for name, sc in scenarios:
            path = os.path.join(tmp, name + ".json")
            with open(path, "w") as f:
                json.dump(sc, f)
            if subprocess.run([args.impsim, "validate", path], capture_output=True).returncode == 2:
                continue  # a split the reader refuses (a step a thread may not take): not a case
            page = os.path.join(tmp, name + ".html")
            for argv in commands(path, bool(sc.get("threads")), page):
                reference = run(args.impsim, argv, page=page if argv[0] == "explore" else None)
                if reference[0] is None or reference[0] < 0:
                    print(f"FAIL {' '.join(argv)}: without a cap: {reference[2].decode(errors='replace')[-300:]}")
                    failures += 1
                    continue
                for _ in range(args.caps):
                    cap = int(math.exp(rng.uniform(math.log(SMALLEST_CAP_MB), math.log(LARGEST_CAP_MB))))
                    capped = run(args.impsim, argv, cap, page if argv[0] == "explore" else None)
                    checked += 1
                    failed_cleanly += capped != reference
                    why = verdict(reference, capped, argv[0])
                    if why:
                        failures += 1
                        print(f"FAIL prlimit --as={cap << 20} impsim {' '.join(argv)}: {why}")
    print(f"{checked} capped runs, {failed_cleanly} of them stopped by the cap (exit 3, nothing printed as a "
          f"result), {checked - failed_cleanly} the same as without it; {failures} failures")
    # The caps must reach both sides, or the test shows nothing.
    if checked and (failed_cleanly == 0 or failed_cleanly == checked):
        print("FAIL the caps never (or always) stopped a command: the range no longer straddles what impsim needs")
        failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
