#!/usr/bin/env bash
# Mutation testing (not part of CI): mutmut 2.x over the modules in tests/mutation/targets.txt, each with its own
# fast test selection. Works on a scratch copy of the tree (mutmut 2 edits files in place), one process at a time.
#   python3 -m venv /tmp/mutvenv && /tmp/mutvenv/bin/pip install "mutmut==2.5.1" pytest hypothesis
#   bash tests/mutation/run.sh [NAME ...]        # default: every target; results in $MUT_OUT (default /tmp/tw-mutation)
# Prints the score per module and writes NAME.results (mutmut results) and NAME.survivors (each surviving diff).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
VENV=${MUT_VENV:-/tmp/mutvenv}
OUT=${MUT_OUT:-/tmp/tw-mutation}
mkdir -p "$OUT"
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  mapfile -t names < <(grep -v '^\s*#' tests/mutation/targets.txt | grep '|' | cut -d'|' -f1 | tr -d ' ')
fi
for name in "${names[@]}"; do
  line=$(grep -v '^\s*#' tests/mutation/targets.txt | awk -F'|' -v n="$name" '{k=$1; gsub(/ /,"",k)} k==n')
  [ -n "$line" ] || { echo "no target $name in tests/mutation/targets.txt" >&2; exit 2; }
  path=$(echo "$line" | cut -d'|' -f2 | xargs)
  tests=$(echo "$line" | cut -d'|' -f3- | sed 's/^ *//')
  work="$OUT/$name"
  rm -rf "$work" && mkdir -p "$work"
  # tracked and untracked-but-not-ignored files: the tree as this checkout has it
  git ls-files -z --cached --others --exclude-standard | (cd "$ROOT" && xargs -0 cp --parents -t "$work" 2>/dev/null)
  (
    cd "$work" || exit 1
    runner="env PYTHONPATH=$work $VENV/bin/python -m pytest -x -q -p no:cacheprovider --hypothesis-seed=0 \
$tests"
    start=$(date +%s)
    "$VENV/bin/mutmut" run --paths-to-mutate "$path" --runner "$runner" --tests-dir tests --simple-output \
      --no-progress > "$OUT/$name.log" 2>&1
    "$VENV/bin/mutmut" results > "$OUT/$name.results" 2>&1
    : > "$OUT/$name.survivors"
    for id in $("$VENV/bin/mutmut" result-ids survived 2>/dev/null); do
      echo "### mutant $id" >> "$OUT/$name.survivors"
      "$VENV/bin/mutmut" show "$id" >> "$OUT/$name.survivors" 2>&1
    done
    killed=$("$VENV/bin/mutmut" result-ids killed 2>/dev/null | wc -w)
    survived=$("$VENV/bin/mutmut" result-ids survived 2>/dev/null | wc -w)
    timeout=$("$VENV/bin/mutmut" result-ids timeout 2>/dev/null | wc -w)
    suspicious=$("$VENV/bin/mutmut" result-ids suspicious 2>/dev/null | wc -w)
    total=$((killed + survived + timeout + suspicious))
    score=$([ "$total" -gt 0 ] && echo "scale=1; 100 * ($killed + $timeout) / $total" | bc || echo 0)
    echo "$name ($path): $killed killed, $timeout timeout, $suspicious suspicious, $survived survived of $total;" \
         "score ${score}% ($(( $(date +%s) - start )) s)" | tee -a "$OUT/scores.txt"
  )
done
