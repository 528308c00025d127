#!/usr/bin/env bash
# bench-compare-postgres.sh: qstore-bench on PostgreSQL against its libpq
# baseline, qstore-bench-postgres, on one server in one run, and the ratio
# of qstore's throughput to the baseline's per layer and phase.
#
# usage: tools/bench-compare-postgres.sh [--rows N] [--reps N] [--layers LIST]
#                                        [--phases LIST] [--build DIR] [--out FILE]
#   --rows N        rows to load (default 20000)
#   --reps N        rounds (default 9). In each, every layer runs right next
#                   to a baseline run of its own, the baseline first in odd
#                   rounds and second in even ones: the two runs a ratio is
#                   taken from are seconds apart, so the spells in which a
#                   shared machine or server slows down weigh on both alike.
#                   The median of the rounds' ratios is printed, with the
#                   spread of them
#   --layers LIST   from kv,table,sql (default all three)
#   --phases LIST   from load,get,scan (default all three)
#   --build DIR     the meson build directory (default ./build of the tree)
#   --out FILE      keep the JSON lines of every run in FILE
# The server is the one QSTORE_BENCH_POSTGRES names (a libpq connection
# string; the qstore schema and qstore_baseline are dropped and made again
# for each run). Without it, a throwaway server is started for the run with
# tests/postgres/with-postgres.sh and removed at the end.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
args=("$@")

rows=20000
reps=9
layers=kv,table,sql
phases=load,get,scan
build=$root/build
out=

usage() {
    if [ "$1" = 0 ]; then
        sed -n '2,23s/^# \{0,1\}//p' "$0"
    else
        sed -n '2,23s/^# \{0,1\}//p' "$0" >&2
    fi
    exit "$1"
}

while [ $# -gt 0 ]; do
    case "$1" in
        --rows) [ $# -ge 2 ] || usage 2; rows=$2; shift 2 ;;
        --reps) [ $# -ge 2 ] || usage 2; reps=$2; shift 2 ;;
        --layers) [ $# -ge 2 ] || usage 2; layers=$2; shift 2 ;;
        --phases) [ $# -ge 2 ] || usage 2; phases=$2; shift 2 ;;
        --build) [ $# -ge 2 ] || usage 2; build=$2; shift 2 ;;
        --out) [ $# -ge 2 ] || usage 2; out=$2; shift 2 ;;
        -h|--help) usage 0 ;;
        *) echo "bench-compare-postgres.sh: unknown argument “$1”" >&2; usage 2 ;;
    esac
done

case "$rows" in
    ''|*[!0-9]*|0) echo "bench-compare-postgres.sh: --rows takes a positive number, not “$rows”" >&2; exit 2 ;;
esac
case "$reps" in
    ''|*[!0-9]*|0) echo "bench-compare-postgres.sh: --reps takes a positive number, not “$reps”" >&2; exit 2 ;;
esac
IFS=, read -r -a layer_list <<< "$layers"
for layer in "${layer_list[@]}"; do
    case "$layer" in
        kv|table|sql) ;;
        *) echo "bench-compare-postgres.sh: unknown layer “$layer” in --layers: use kv, table and sql" >&2; exit 2 ;;
    esac
done
IFS=, read -r -a phase_list <<< "$phases"
for phase in "${phase_list[@]}"; do
    case "$phase" in
        load|get|scan) ;;
        *) echo "bench-compare-postgres.sh: unknown phase “$phase” in --phases: use load, get and scan" >&2; exit 2 ;;
    esac
done
for program in "$build/tools/qstore-bench" "$build/tools/qstore-bench-postgres"; do
    if [ ! -x "$program" ]; then
        echo "bench-compare-postgres.sh: no $program: build first (ninja -C $build)" >&2
        exit 1
    fi
done

if [ -z "${QSTORE_BENCH_POSTGRES:-}" ]; then
    exec "$root/tests/postgres/with-postgres.sh" \
        sh -c 'QSTORE_BENCH_POSTGRES="$QSTORE_TEST_POSTGRES" exec "$0" "$@"' "$0" "${args[@]}"
fi

scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/qstore-bench-postgres.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
[ -n "$out" ] || out=$scratch/results.jsonl
: > "$out"

# Each engine line is tagged with its layer, so a ratio pairs a layer's run
# with the baseline run beside it.
qstore() {
    psql -X -q -d "$QSTORE_BENCH_POSTGRES" -c "DROP SCHEMA IF EXISTS qstore CASCADE" \
        > /dev/null 2>&1
    QSTORE_PLUGIN_DIR=$build/plugins/postgres "$build/tools/qstore-bench" \
        --provider postgres --layer "$1" --rows "$rows" --phases "$phases" --run "$2" |
        sed "s/\"engine\":\"[^\"]*\"/\"engine\":\"qstore-$1\"/" >> "$out"
}
baseline() {
    "$build/tools/qstore-bench-postgres" --rows "$rows" --small-txns 0 --run "$2" |
        sed "s/\"engine\":\"[^\"]*\"/\"engine\":\"libpq-$1\"/" >> "$out"
}

for round in $(seq 1 "$reps"); do
    for layer in "${layer_list[@]}"; do
        echo "# round $round: $layer" >&2
        if [ $((round % 2)) = 1 ]; then
            baseline "$layer" "$round"
            qstore "$layer" "$round"
        else
            qstore "$layer" "$round"
            baseline "$layer" "$round"
        fi
    done
done

/usr/bin/python3 - "$out" "$layers" "$phases" <<'EOF'
import json
import statistics
import sys

lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
results = {}
for r in lines:
    results.setdefault((r["engine"], r["phase"]), {})[r["run"]] = r
layers = sys.argv[2].split(",")
phases = sys.argv[3].split(",")
rounds = sorted({r["run"] for r in lines})

print(f"rows={lines[0]['rows'] if lines else 0}, {len(rounds)} round(s): qstore / libpq "
      "throughput, the median of the rounds' ratios [lowest, highest]")
print(f"{'layer':<8}" + "".join(f"{p:>24}" for p in phases))
for layer in layers:
    line = f"{layer:<8}"
    for phase in phases:
        q = results.get((f"qstore-{layer}", phase), {})
        b = results.get((f"libpq-{layer}", phase), {})
        ratios = sorted(q[k]["ops_per_sec"] / b[k]["ops_per_sec"] for k in q if k in b)
        cell = (f"{statistics.median(ratios):.2f} [{ratios[0]:.2f}, {ratios[-1]:.2f}]"
                if ratios else "-")
        line += f"{cell:>24}"
    print(line)

bad = False
for phase in phases:
    sums = {r["checksum"] for (e, p), by_round in results.items() if p == phase
            for r in by_round.values()}
    if len(sums) > 1:
        print(f"CHECKSUM MISMATCH in {phase}: {sorted(sums)}")
        bad = True
if not bad:
    print("checksums: identical across engines for every phase")
sys.exit(1 if bad else 0)
EOF
