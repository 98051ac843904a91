#!/usr/bin/env bash
# A build configured where Python 3 and python3-jsonschema cannot be found
# still lists every test that needs them, and each runs as skipped with
# its reason (exit 77), rather than dropping out of ctest's count: CI's
# --strict fails on such a skip, and would never see a test that is gone.
#   tests/missing_tools_test.sh SOURCE_DIR CXX_COMPILER MAKE_PROGRAM
set -uo pipefail
src=$1 cxx=$2 make_program=$3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# No program found anywhere (every find_program is re-rooted at a folder
# that does not exist), the compiler and ninja given; find_package(Python3)
# turned off.
if ! cmake -S "$src" -B "$scratch" -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_COMPILER=$cxx" \
     "-DCMAKE_MAKE_PROGRAM=$make_program" -DCMAKE_DISABLE_FIND_PACKAGE_Python3=ON \
     -DCMAKE_FIND_ROOT_PATH=/nonexistent -DCMAKE_FIND_ROOT_PATH_MODE_PROGRAM=ONLY >"$scratch/configure.log" 2>&1; then
  echo "FAIL: configuring without Python failed:"
  sed 's/^/    /' "$scratch/configure.log" | tail -20
  exit 1
fi
needs_python=(schema_agrees_with_reader reports_match_schema unicode_tables_match_cpython
              fast_engine_equals_step_engine_on_random_programs
              fast_engine_equals_step_engine_on_04efefd_and_cpython_3_14 name_patterns_match_fnmatch
              commands_under_memory_caps forked_runs_answer_as_fresh_processes
              import_graph_becomes_a_scenario axes_table_matches_docs import_locks_match_cpython)
fail=0
for t in "${needs_python[@]}"; do
  out=$(cd "$scratch" && ctest -R "^$t\$" --output-on-failure -V 2>&1)
  if [[ "$out" != *"Test #"*"$t "*"Skipped"* ]] || [[ "$out" != *"SKIP $t: "*"when the build was configured"* ]]; then
    echo "FAIL $t: not listed as skipped with its reason; ctest said:"
    printf '%s\n' "$out" | sed 's/^/    /' | tail -12
    fail=1
  fi
done
[ "$fail" = 0 ] && echo "ok: ${#needs_python[@]} tests that need Python are listed and skip, saying why"
exit "$fail"
