#!/bin/sh
# test-bench-compare.sh COMPARE BUILD: tools/bench-compare-postgres.sh,
# a short run on a throwaway server. Every layer and phase gets a ratio
# from each round, the engines' checksums agree, and bad arguments are
# refused before any server starts.
set -u

compare=$1
build=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT

echo "1..4"

if "$compare" --build "$build" --rows 300 --reps 2 > "$out" 2>/dev/null; then
  echo "ok 1 - a run of two rounds succeeds"
else
  echo "not ok 1 - a run of two rounds fails"
  sed 's/^/# /' "$out"
fi

# layer, then load, get and scan as "median [lowest, highest]"
cell='[0-9][0-9]*\.[0-9][0-9] \[[0-9][0-9]*\.[0-9][0-9], [0-9][0-9]*\.[0-9][0-9]\]'
n=$(grep -c "^\(kv\|table\|sql\) *$cell *$cell *$cell\$" "$out")
if [ "$n" = 3 ]; then
  echo "ok 2 - every layer has a ratio for load, get and scan"
else
  echo "not ok 2 - $n of 3 layers have their ratios"
  sed 's/^/# /' "$out"
fi

if grep -q "^checksums: identical across engines for every phase\$" "$out"; then
  echo "ok 3 - qstore and libpq checksums agree"
else
  echo "not ok 3 - the checksums are not reported identical"
fi

QSTORE_BENCH_POSTGRES= "$compare" --build "$build" --layers kv,nosuch > "$out" 2>&1
status=$?
if [ "$status" = 2 ] && grep -q "unknown layer “nosuch”" "$out"; then
  echo "ok 4 - an unknown layer is refused"
else
  echo "not ok 4 - an unknown layer gives status $status"
  sed 's/^/# /' "$out"
fi
