#!/usr/bin/env bash
# `cmake --install BUILD_DIR --prefix TMP` and check the layout: the binary
# runs, the man page, the schemas and the completions are where man(1),
# editors and shells look.
set -euo pipefail
build="${1:-build}"
prefix="$(mktemp -d /tmp/impsim-install.XXXXXX)"
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
fail=0
check() { if "$@"; then echo "ok   $*"; else echo "FAIL $*"; fail=1; fi; }
check test -x "$prefix/bin/impsim"
check test -f "$prefix/share/man/man1/impsim.1"
check test -f "$prefix/share/impsim/scenario.schema.json"
check test -f "$prefix/share/impsim/report.schema.json"
check test -f "$prefix/share/bash-completion/completions/impsim"
check test -f "$prefix/share/zsh/vendor-completions/_impsim"
check bash -n "$prefix/share/bash-completion/completions/impsim"
# The bash completion completes a subcommand and an option's values.
check bash -c "source '$prefix/share/bash-completion/completions/impsim'; COMP_WORDS=(impsim ru); COMP_CWORD=1; _impsim; [ \"\${COMPREPLY[*]}\" = run ]"
check bash -c "source '$prefix/share/bash-completion/completions/impsim'; COMP_WORDS=(impsim run x.json --format m); COMP_CWORD=4; _impsim; [ \"\${COMPREPLY[*]}\" = markdown ]"
"$prefix/bin/impsim" --version | grep -q '^impsim ' || { echo "FAIL installed impsim --version"; fail=1; }
head -5 "$prefix/share/man/man1/impsim.1" | grep -q '^\.TH IMPSIM 1' || { echo "FAIL man page has no .TH"; fail=1; }
for section in NAME SYNOPSIS DESCRIPTION OPTIONS LIMITS "EXIT STATUS" ENVIRONMENT EXAMPLES; do
  grep -q "^\.SH $section" "$prefix/share/man/man1/impsim.1" || { echo "FAIL man page lacks $section"; fail=1; }
done
if command -v man >/dev/null && man --help >/dev/null 2>&1; then
  MANWIDTH=80 man -l "$prefix/share/man/man1/impsim.1" 2>&1 >/dev/null | grep -i warn && fail=1
fi
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$prefix/share/impsim/scenario.schema.json" ||
  { echo "FAIL schema is not JSON"; fail=1; }
exit $fail
