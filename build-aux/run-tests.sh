#!/bin/bash
# Runs every meson test suite and ends with one summary line:
# "tests: N passed, N failed, N skipped".
set -u -o pipefail
builddir=${1:-_build}

log=$(mktemp)
trap 'rm -f "$log"' EXIT

meson test -C "$builddir" --print-errorlogs --num-processes 2 2>&1 | tee "$log"
status=$?

awk '
  /^Ok:/              { ok = $2 }
  /^Expected Fail:/   { ok += $3 }
  /^Fail:/            { fail = $2 }
  /^Unexpected Pass:/ { fail += $3 }
  /^Timeout:/         { fail += $2 }
  /^Skipped:/         { skip = $2 }
  END { printf "tests: %d passed, %d failed, %d skipped\n", ok, fail, skip }
' "$log"
exit $status
