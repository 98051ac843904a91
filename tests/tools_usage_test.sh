#!/usr/bin/env bash
# The set-up and test scripts answer --help with their usage and refuse a
# switch they do not know, before they install or build anything: a
# switch read as a package name reached apt-get.
#   tests/tools_usage_test.sh SOURCE_DIR
set -uo pipefail
src=$1
fail=0
# apt-get, cmake, ninja, sudo and dpkg-query first on PATH, as stand-ins
# that say they were reached and fail.
stubs=$(mktemp -d)
trap 'rm -rf "$stubs"' EXIT
for tool in apt-get cmake ninja sudo dpkg-query ctest; do
  printf '#!/bin/sh\necho "REACHED %s"\nexit 97\n' "$tool" >"$stubs/$tool"
  chmod +x "$stubs/$tool"
done
check() {  # check WANT_STATUS WANT_TEXT COMMAND...
  local want=$1 text=$2 out status
  shift 2
  out=$(env PATH="$stubs:$PATH" "$@" 2>&1)
  status=$?
  if [ "$status" != "$want" ] || [[ "$out" != *"$text"* ]] || [[ "$out" == *REACHED* ]]; then
    echo "FAIL $*: exit $status (want $want), output:"
    printf '%s\n' "$out" | sed 's/^/    /' | head -20
    fail=1
  fi
}
check 0 "Usage: tools/setup" "$src/tools/setup" --help
check 0 "Usage: tools/setup" "$src/tools/setup" -h
check 0 "Usage: tools/setup" "$src/tools/setup" g++ --help
check 2 "unknown option --frob" "$src/tools/setup" --frob
check 2 "\$'x\\E[31m' is not a Debian package name" "$src/tools/setup" $'x\e[31m'
check 2 "unknown option --frob" "$src/tools/setup" --tool-only --frob
check 0 "--tool-only" "$src/tools/setup" --help
check 0 "Usage: tools/test" "$src/tools/test" --help
check 2 "unknown argument" "$src/tools/test" --frob
[ "$fail" = 0 ] && echo "ok: tools/setup and tools/test answer --help and refuse unknown switches"
exit "$fail"
