#!/usr/bin/env bash
# tools/check/memcheck names the file behind a failure, though it runs the
# files in batches: a stand-in for impsim (built here, a few lines of C)
# leaks memory or reads memory it never set when given a file of a certain
# name, or refuses one in `validate`, or fails only when two files run in
# the same process. Each must fail memcheck, named; the clean files must
# not be named.
#
#   tests/memcheck_test.sh SOURCE_DIR COMPILER (gcc or g++: the stand-in is C)
#
# Exit 77 (ctest's SKIP_RETURN_CODE) when valgrind is not installed;
# tools/test installs it for CI's sanitizer pass.
set -uo pipefail
source_dir=$(realpath "$1")
cc=$2

if ! command -v valgrind >/dev/null; then
  echo "SKIP: valgrind is not installed (apt-get install valgrind; tools/test --sanitize installs it)"
  exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/impsim-memcheck.XXXXXX")
trap 'rm -rf "$work"' EXIT

cat >"$work/fake.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static volatile int sink;
int main(int argc, char** argv) {
  int validate = argc > 1 && strcmp(argv[1], "validate") == 0, x = 0, y = 0;
  for (int i = 2; i < argc; ++i) {
    const char* f = argv[i];
    if (validate) { if (strstr(f, "refused")) return 2; continue; }
    if (strstr(f, "leaky")) { char* p = malloc(64); p[0] = 1; sink = p[0]; p = 0; }
    if (strstr(f, "uninit")) { int* p = malloc(sizeof *p); if (*p == 42) sink = 1; free(p); }
    if (strstr(f, "pair_x")) x = 1;
    if (strstr(f, "pair_y")) y = 1;
  }
  if (x && y) { int* p = malloc(sizeof *p); if (*p == 7) sink = 2; free(p); }
  return 0;
}
C
"$cc" -O0 -g -o "$work/impsim" -x c "$work/fake.c" || { echo "FAIL: the stand-in did not compile"; exit 1; }

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
memcheck() {  # memcheck NAME JOBS FILE...: memcheck's output in $work/NAME.out, its status returned
  local name=$1 jobs=$2
  shift 2
  # Two commands are enough: one that takes a batch of files, and explore,
  # which takes one.
  (cd "$work" && "$source_dir/tools/check/memcheck" --impsim impsim --jobs "$jobs" \
    --command run --command explore "$@") >"$work/$name.out" 2>&1
}

# Clean files pass, in batches.
memcheck clean 2 a.json b.json c.json
status=$?
[ "$status" -eq 0 ] || fail "clean files: exit $status, not 0: $(cat "$work/clean.out")"
grep -q "3 scenarios x 2 commands in 5 processes" "$work/clean.out" \
  || fail "clean files: not run in 2 batches + explore 3 times: $(tail -1 "$work/clean.out")"

# A leak and an uninitialised read, each in a batch with clean files: the
# file is named under each command that runs it, the clean ones never.
memcheck dirty 2 a.json leaky.json b.json uninit.json c.json
status=$?
[ "$status" -eq 1 ] || fail "dirty files: exit $status, not 1"
for f in leaky.json uninit.json; do
  n=$(grep -c "^FAIL (exit 99) impsim .*/$f\$" "$work/dirty.out")
  [ "$n" -eq 2 ] || fail "$f: named under $n commands, not 2: $(grep '^FAIL' "$work/dirty.out")"
done
grep -q "definitely lost" "$work/dirty.out" || fail "the leak's valgrind log is not shown"
grep -q "uninitialised value" "$work/dirty.out" || fail "the uninitialised read's valgrind log is not shown"
grep -E '^FAIL' "$work/dirty.out" | grep -qE '/(a|b|c)\.json' && fail "a clean file was named: $(grep '^FAIL' "$work/dirty.out")"

# A refused file fails without valgrind, named.
memcheck refused 2 a.json refused.json
status=$?
[ "$status" -eq 1 ] || fail "refused file: exit $status, not 1"
grep -q "^FAIL impsim validate .*/refused.json" "$work/refused.out" || fail "refused file not named: $(cat "$work/refused.out")"

# A hostile file name (a newline then a GitHub workflow command, an ESC
# byte) is refused, printed escaped, and the other files still run.
hostile=$'x\n::add-mask::y\e[31m.json'
memcheck hostile 2 a.json "$hostile"
status=$?
[ "$status" -eq 1 ] || fail "hostile name: exit $status, not 1"
grep -q '^FAIL a file name with a control character, not run: ' "$work/hostile.out" \
  || fail "hostile name not refused: $(cat "$work/hostile.out")"
grep -q '^::add-mask::' "$work/hostile.out" && fail "a workflow command reached the log: $(cat "$work/hostile.out")"
grep -q $'\e' "$work/hostile.out" && fail "an ESC byte reached the log"
grep -q "1 scenarios x 2 commands in 2 processes" "$work/hostile.out" \
  || fail "hostile name: the clean file did not run alone: $(tail -1 "$work/hostile.out")"

# Two files that fail only together: the batch is reported with both.
memcheck pair 1 pair_x.json a.json pair_y.json
status=$?
[ "$status" -eq 1 ] || fail "pair: exit $status, not 1"
grep -qE "over 3 files together \(each passes alone\): [^ ]*/pair_x.json [^ ]*/a.json [^ ]*/pair_y.json" "$work/pair.out" \
  || fail "pair: the batch is not reported: $(grep '^FAIL' "$work/pair.out")"

if [ "$failures" -eq 0 ]; then echo "memcheck_test: OK"; fi
[ "$failures" -eq 0 ]
