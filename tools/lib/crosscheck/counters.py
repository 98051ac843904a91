"""impsim's counter names, read from the one table that defines them
(include/impsim/scenario/counters.h, kCounters), so no Python tool restates them.

COUNTERS: every counter's name, in report order (the JSON report's keys).
GROUPS: name -> its group ("kCoreCounters", ...); a report shows a group's
counters only for scenarios that use it, the core ones always.
"""
import os
import re

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
_HEADER = os.path.join(_REPO, "include", "impsim", "scenario", "counters.h")

_ENTRY = re.compile(r'\{"(\w+)", &Counters::(\w+), (?:true|false), (\w+),')


def _read():
    with open(_HEADER) as f:
        text = f.read()
    table = text[text.index("kCounters = {{"):]
    table = table[:table.index("}};")]
    entries = _ENTRY.findall(table)
    if not entries:
        raise RuntimeError("no counters found in " + _HEADER)
    return entries


_ENTRIES = _read()
COUNTERS = tuple(name for name, _, _ in _ENTRIES)
GROUPS = {name: group for name, _, group in _ENTRIES}
CORE = tuple(name for name in COUNTERS if GROUPS[name] == "kCoreCounters")
