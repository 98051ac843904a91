#!/bin/sh
# Every doctest case of impsim_tests is run by ctest. doctest_discover_tests
# writes one ctest test per case, filtered by the case's name; a name that
# holds a ";" (CMake's list separator) comes out as two tests whose
# filters match no case, and both pass without running anything.
# Usage: every_case_runs.sh IMPSIM_TESTS DISCOVERED_TESTS_DIR
set -eu
bin=$1
dir=$2
listed=$(mktemp)
filtered=$(mktemp)
trap 'rm -f "$listed" "$filtered"' EXIT
"$bin" --list-test-cases --no-version | awk '/^=+$/ { n++; next } n == 1' | LC_ALL=C sort >"$listed"
cat "$dir"/impsim_tests_tests-*.cmake |
  sed -n 's/.*\[==\[--test-case=\(.*\)\]==\])$/\1/p' | sed 's/\\,/,/g' | LC_ALL=C sort >"$filtered"
if ! cmp -s "$listed" "$filtered"; then
  echo "ctest's tests and the doctest cases differ (< a case no test runs, > a test that runs no case):"
  diff "$listed" "$filtered" | grep '^[<>]' || true
  echo "a case name must not hold a \";\": ctest splits it"
  exit 1
fi
echo "$(wc -l <"$listed") doctest cases, each run by one ctest test"
