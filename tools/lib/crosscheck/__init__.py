"""impsim crosscheck: the CPython oracle (see docs/crosscheck.md)."""
