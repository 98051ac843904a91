"""The real interpreters the checks run on: Debian's /usr/bin/python3 and
every pyenv 3.9-3.13 on this machine, and what version each is.

Shared by tools/check/crosscheck (--hooks), import_locks and lock_model.
"""

import glob
import os
import subprocess

PYENV_GLOB = "~/.pyenv/versions/3.{9..13}*/bin/python3"


def pyenv_pythons():
    """Every pyenv 3.9-3.13 here, oldest first."""
    found = []
    for minor in range(9, 14):
        found.extend(sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.%d*/bin/python3" % minor))))
    return found


def default_pythons():
    """/usr/bin/python3 where it exists, then every pyenv 3.9-3.13."""
    return [p for p in ["/usr/bin/python3"] if os.path.exists(p)] + pyenv_pythons()


def version_of(python):
    """The interpreter's X.Y.Z, or "?" when it does not say."""
    out = subprocess.run([python, "-S", "-I", "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                         capture_output=True, text=True, timeout=30)
    return out.stdout.strip() or "?"
