#!/usr/bin/env bash
# The hooks of .pre-commit-hooks.yaml run by the real pre-commit, as a
# repository that keeps scenarios beside other JSON files would run them:
# a package.json must pass both hooks (skipped, saying so), a valid scenario
# too, and a scenario whose expectation fails must fail impsim-run, named.
#
#   tests/precommit_hooks_test.sh IMPSIM_BINARY SOURCE_DIR
#
# Exit 77 (ctest's SKIP_RETURN_CODE) when pre-commit is not installed;
# tools/test installs it (Debian's pre-commit).
set -euo pipefail
impsim=$(realpath "$1")
source_dir=$(realpath "$2")

if ! command -v pre-commit >/dev/null; then
  echo "SKIP: pre-commit is not installed (apt-get install pre-commit; tools/test installs it)"
  exit 77
fi
if ! command -v git >/dev/null; then
  echo "SKIP: git is not installed (apt-get install git)"
  exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/impsim-precommit.XXXXXX")
trap 'rm -rf "$work"' EXIT
# pre-commit's cache (its clone of the hooks repository) stays in here.
export PRE_COMMIT_HOME="$work/cache"
# The hooks run the impsim on PATH (language: system).
export PATH="$(dirname "$impsim"):$PATH"
git_() { git -c user.name=impsim-test -c user.email=impsim-test@example.invalid -c init.defaultBranch=main "$@"; }

# The hooks repository: this checkout's .pre-commit-hooks.yaml, as a
# commit of its own, so that the file under test is the working tree's
# (committed or not) and the checkout need not be a git repository.
mkdir "$work/hooks"
cp "$source_dir/.pre-commit-hooks.yaml" "$work/hooks/"
git_ -C "$work/hooks" init -q
git_ -C "$work/hooks" add .pre-commit-hooks.yaml
git_ -C "$work/hooks" commit -q -m hooks
rev=$(git -C "$work/hooks" rev-parse HEAD)

# The user's repository.
repo="$work/repo"
mkdir -p "$repo/scenarios"
cat >"$repo/package.json" <<'EOF'
{
  "name": "a-project-with-scenarios",
  "version": "1.0.0",
  "dependencies": {"left-pad": "1.3.0"}
}
EOF
cp "$source_dir/scenarios/nested_guards.json" "$repo/scenarios/good.json"
# nested_guards with the after variant's lookups expected one higher at k=4.
python3 - "$source_dir/scenarios/nested_guards.json" "$repo/scenarios/failing.json" <<'EOF'
import json, sys
sc = json.load(open(sys.argv[1]))
sc["name"] = "failing_expectation"
sc["expect"]["after"]["probe.lookups"][-1] += 1
json.dump(sc, open(sys.argv[2], "w"), indent=2)
EOF
cat >"$repo/.pre-commit-config.yaml" <<EOF
repos:
  - repo: file://$work/hooks
    rev: $rev
    hooks:
      - id: impsim-validate
      - id: impsim-run
EOF
git_ -C "$repo" init -q
git_ -C "$repo" add -A

fail=0
check() {  # check DESCRIPTION COMMAND...: one line per check
  if "${@:2}"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}
has() { grep -qF -- "$2" <<<"$1"; }
hasnt() { ! grep -qF -- "$2" <<<"$1"; }

# Every file: impsim-validate passes (package.json skipped, both scenarios
# valid), impsim-run fails on failing.json alone.
set +e
out=$(cd "$repo" && pre-commit run --all-files --verbose --color never 2>&1)
status=$?
set -e
echo "$out" | sed 's/^/  | /'
check "pre-commit run --all-files exits 1" test "$status" -eq 1
check "impsim validate passed" grep -qE '^impsim validate\.+Passed' <<<"$out"
check "impsim run failed" grep -qE '^impsim run\.+Failed' <<<"$out"
check "package.json is said to be skipped" has "$out" "impsim: skipped package.json: not a scenario"
check "package.json is not an invalid scenario" hasnt "$out" 'unknown key "dependencies"'
run_out=$(sed -n '/^impsim run\.\.\./,$p' <<<"$out")
check "impsim run names the failing scenario" has "$run_out" "failing_expectation"
check "impsim run shows its failed expectation" has "$run_out" "FAILED after probe.lookups [k=4]: expected 5, got 4"
check "only one expectation failed" test "$(grep -c FAILED <<<"$run_out")" -eq 1

# Without the failing scenario both hooks pass.
set +e
out=$(cd "$repo" && pre-commit run --files package.json scenarios/good.json --color never 2>&1)
status=$?
set -e
echo "$out" | sed 's/^/  | /'
check "package.json and a valid scenario: pre-commit exits 0" test "$status" -eq 0
check "both hooks passed" test "$(grep -cE '\.+Passed$' <<<"$out")" -eq 2

[ "$fail" -eq 0 ] && echo "pre-commit hooks: all checks passed"
exit "$fail"
