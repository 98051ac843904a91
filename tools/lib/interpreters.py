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


RELEASE_CODE = ("import sys; v = sys.version_info; print('%d.%d.%d%s' % (v[0], v[1], v[2], '' if v[3] == 'final' "
                "else {'alpha': 'a', 'beta': 'b', 'candidate': 'rc'}[v[3]] + str(v[4])))")


def release_of(python):
    """The interpreter's release as impsim's --cpython takes it: 3.13.2,
    3.15.0rc1."""
    out = subprocess.run([python, "-S", "-I", "-c", RELEASE_CODE], capture_output=True, text=True, timeout=60)
    if out.returncode != 0 or not out.stdout.strip():
        raise RuntimeError("%s did not say its version: %s" % (python, out.stderr.strip()[-300:]))
    return out.stdout.strip()


def version_of(python):
    """The interpreter's X.Y.Z, or "?" when it does not say."""
    out = subprocess.run([python, "-S", "-I", "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                         capture_output=True, text=True, timeout=30)
    return out.stdout.strip() or "?"


PYODIDE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyodide")
# Each pinned pyodide release (package.json there) and the CPython it is.
PYODIDE_RELEASES = (("python3.12", "py312", "0.27.7", "3.12.7"), ("python3.13", "py313", "0.29.5", "3.13.2"),
                    ("python3.14", "py314", "314.0.8", "3.14.2"), ("python3.15", "py315", "315.0.0-alpha.2", "3.15.0rc1"))


def pyodide_pythons():
    """The WebAssembly CPythons (tools/lib/pyodide/python3.X) whose pyodide
    package `npm ci` in that folder installed, oldest first; [] without
    Node."""
    import shutil
    if not shutil.which("node"):
        return []
    return [os.path.join(PYODIDE, shim) for shim, package, _, _ in PYODIDE_RELEASES
            if os.path.exists(os.path.join(PYODIDE, "node_modules", package, "pyodide.mjs"))]


def is_pyodide(python):
    return os.path.dirname(os.path.abspath(python)) == PYODIDE


def describe(python):
    """How a summary names an interpreter: its path, or the pyodide release."""
    for shim, _, release, _ in PYODIDE_RELEASES:
        if is_pyodide(python) and os.path.basename(python) == shim:
            return "pyodide %s in Node, WebAssembly" % release
    return python
