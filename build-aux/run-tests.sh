#!/bin/bash
# Runs every meson test suite and ends with one summary line:
# "tests: N passed, N failed, N skipped". Just above it, the last lines
# each failed test printed, so that the end of the output says why.
set -u -o pipefail
builddir=${1:-_build}

log=$(mktemp)
trap 'rm -f "$log"' EXIT

meson test -C "$builddir" --print-errorlogs --num-processes 2 2>&1 | tee "$log"
status=$?

if [ "$status" -ne 0 ] && [ -f "$builddir/meson-logs/testlog.json" ]; then
  python3 - "$builddir/meson-logs/testlog.json" <<'PY'
import json, sys
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    test = json.loads(line)
    if test["result"] in ("OK", "SKIP", "EXPECTEDFAIL"):
        continue
    print(f"--- {test['name']}: {test['result']}, the last lines it printed")
    output = (test.get("stdout") or "") + (test.get("stderr") or "")
    for text in output.rstrip("\n").split("\n")[-12:]:
        print("    " + text[:300])
PY
fi

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
