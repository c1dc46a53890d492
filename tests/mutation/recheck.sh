#!/usr/bin/env bash
# After adding tests: copy this checkout's tests/ into a finished run's scratch tree and re-run only the mutants that
# survived there (much faster than a full run). Then: python3 tests/mutation/report.py $MUT_OUT/NAME --survivors
#   bash tests/mutation/recheck.sh NAME
set -uo pipefail
cd "$(dirname "$0")/../.."
VENV=${MUT_VENV:-/tmp/mutvenv}
OUT=${MUT_OUT:-/tmp/tw-mutation}
name=$1
line=$(grep -v '^\s*#' tests/mutation/targets.txt | awk -F'|' -v n="$name" '{k=$1; gsub(/ /,"",k)} k==n')
[ -n "$line" ] || { echo "no target $name in tests/mutation/targets.txt" >&2; exit 2; }
path=$(echo "$line" | cut -d'|' -f2 | xargs)
tests=$(echo "$line" | cut -d'|' -f3- | sed 's/^ *//')
work="$OUT/$name"
[ -f "$work/.mutmut-cache" ] || { echo "no finished run in $work" >&2; exit 2; }
rm -rf "$work/tests" && cp -r tests "$work/tests"
cd "$work" || exit 1
runner="env PYTHONPATH=$work $VENV/bin/python -m pytest -x -q -p no:cacheprovider --hypothesis-seed=0 $tests"
for id in $("$VENV/bin/mutmut" result-ids survived 2>/dev/null); do
  "$VENV/bin/mutmut" run "$id" --paths-to-mutate "$path" --runner "$runner" --tests-dir tests --simple-output \
    --no-progress > /dev/null 2>&1
done
python3 "$OLDPWD/tests/mutation/report.py" "$work"
