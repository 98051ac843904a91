"""Field-by-field comparison of an impsim run with the CPython (oracle) run."""

from .counters import COUNTERS
ZERO = dict.fromkeys(COUNTERS, 0)


def _get(d, *keys):
    for key in keys:
        if not isinstance(d, dict) or key not in d:
            return None
        d = d[key]
    return d


def differences(impsim, cpython):
    """[(field, impsim value, cpython value)] in a fixed order.

    A label missing from one side counts as all-zero counters and an empty
    result list (an engine may leave out labels whose step never ran).
    """
    diffs = []

    def check(field, a, b):
        if a != b:
            diffs.append((field, a, b))

    check("variant", impsim.get("variant"), cpython.get("variant"))
    for c in COUNTERS:
        check("counters." + c, _get(impsim, "counters", c),
              _get(cpython, "counters", c))
    ilabels = impsim.get("labels") or {}
    clabels = cpython.get("labels") or {}
    for label in _union(clabels, ilabels):
        a = ilabels.get(label, ZERO)
        b = clabels.get(label, ZERO)
        for c in COUNTERS:
            check("labels.%s.%s" % (label, c), a.get(c), b.get(c))
    iout = impsim.get("outcome") or {}
    cout = cpython.get("outcome") or {}
    check("outcome.modules", iout.get("modules"), cout.get("modules"))
    check("outcome.marks", iout.get("marks"), cout.get("marks"))
    iresults = iout.get("results") or {}
    cresults = cout.get("results") or {}
    for label in _union(cresults, iresults):
        a = iresults.get(label, [])
        b = cresults.get(label, [])
        if _runs(a) != _runs(b):
            diffs.append(("outcome.results." + label, a, b))
    check("outcome.proxy_copies", iout.get("proxy_copies"),
          cout.get("proxy_copies"))
    ierr = iout.get("error")
    cerr = cout.get("error")
    check("outcome.error.type", _get(ierr, "type"), _get(cerr, "type"))
    check("outcome.error.step", _get(ierr, "step"), _get(cerr, "step"))
    # PEP 810 lazy imports: only a scenario with lazy-import steps has it.
    check("lazy", impsim.get("lazy"), cpython.get("lazy"))
    return diffs


def _runs(results):
    """[(result, times)] of a results list, plain or run-length encoded
    (impsim writes {"result": R, "times": N} past 100 results)."""
    runs = []
    for item in results:
        if isinstance(item, dict):
            result, times = item.get("result"), item.get("times")
        else:
            result, times = item, 1
        if runs and runs[-1][0] == result:
            runs[-1][1] += times
        else:
            runs.append([result, times])
    return runs


def _union(first, second):
    keys = list(first)
    keys.extend(k for k in second if k not in first)
    return keys
