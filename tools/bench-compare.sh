#!/usr/bin/env bash
# bench-compare.sh: raw LMDB, raw SQLite and qstore-bench on one workload, in
# one run, and the ratio of qstore's throughput to the raw engine's per phase.
#
# usage: tools/bench-compare.sh [--rows N] [--baseline DIR] [--build DIR]
#                               [--bench PATH] [--dir DIR] [--out FILE]
#   --rows N        rows to load (default 1000000, or $QSTORE_BENCH_ROWS)
#   --baseline DIR  the bench-baseline sources (default $QSTORE_BENCH_BASELINE,
#                   else ../shared/bench-baseline next to the source tree);
#                   built in a temporary copy, so it may be read-only
#   --build DIR     the meson build directory (default ./build of the tree):
#                   qstore-bench and the plugins are taken from there
#   --bench PATH    the qstore-bench program (default DIR/tools/qstore-bench)
#   --dir DIR       where the stores are created (default a new directory
#                   under $TMPDIR or /var/tmp, removed at exit)
#   --out FILE      keep the JSON lines of every program in FILE
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
rows=${QSTORE_BENCH_ROWS:-1000000}
baseline=${QSTORE_BENCH_BASELINE:-$root/../shared/bench-baseline}
build=$root/build
bench=
workdir=
out=

usage() {
    if [ "$1" = 0 ]; then
        sed -n '2,17s/^# \{0,1\}//p' "$0"
    else
        sed -n '2,17s/^# \{0,1\}//p' "$0" >&2
    fi
    exit "$1"
}

while [ $# -gt 0 ]; do
    case "$1" in
        --rows) [ $# -ge 2 ] || usage 2; rows=$2; shift 2 ;;
        --baseline) [ $# -ge 2 ] || usage 2; baseline=$2; shift 2 ;;
        --build) [ $# -ge 2 ] || usage 2; build=$2; shift 2 ;;
        --bench) [ $# -ge 2 ] || usage 2; bench=$2; shift 2 ;;
        --dir) [ $# -ge 2 ] || usage 2; workdir=$2; shift 2 ;;
        --out) [ $# -ge 2 ] || usage 2; out=$2; shift 2 ;;
        -h|--help) usage 0 ;;
        *) echo "bench-compare.sh: unknown argument “$1”" >&2; usage 2 ;;
    esac
done

case "$rows" in
    ''|*[!0-9]*) echo "bench-compare.sh: --rows takes a positive number, not “$rows”" >&2; exit 2 ;;
esac
[ -n "$bench" ] || bench=$build/tools/qstore-bench
if [ ! -x "$bench" ]; then
    echo "bench-compare.sh: no qstore-bench at $bench: build first (ninja -C $build) or pass --bench" >&2
    exit 1
fi
if [ ! -f "$baseline/Makefile" ]; then
    echo "bench-compare.sh: no bench-baseline at $baseline: pass --baseline DIR or set QSTORE_BENCH_BASELINE" >&2
    exit 1
fi
export QSTORE_PLUGIN_DIR=${QSTORE_PLUGIN_DIR:-$build/plugins/memory:$build/plugins/lmdb:$build/plugins/sqlite}

scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/qstore-bench-compare.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
[ -n "$workdir" ] || workdir=$scratch/stores
mkdir -p "$workdir"
[ -n "$out" ] || out=$scratch/results.jsonl
: > "$out"

# The baseline is built in a copy: its directory is often read-only (and a
# test of write permission means nothing when running as root).
bindir=$scratch/baseline
mkdir -p "$bindir"
cp "$baseline"/Makefile "$baseline"/*.c "$baseline"/*.h "$bindir"/
chmod -R u+w "$bindir"
make -s -C "$bindir" raw_lmdb raw_sqlite >&2

status=0
run() {
    echo "# $*" >&2
    if ! "$@" >> "$out"; then
        echo "bench-compare.sh: $1 failed" >&2
        status=1
    fi
}

run "$bindir/raw_lmdb" --rows "$rows" --dir "$workdir"
run "$bindir/raw_sqlite" --rows "$rows" --dir "$workdir"
for provider in lmdb sqlite memory; do
    run "$bench" --provider "$provider" --layer kv --rows "$rows" --dir "$workdir"
done

/usr/bin/python3 - "$out" <<'EOF' || status=1
import json
import sys

lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
results = {(r["engine"], r["phase"]): r for r in lines}
rows = lines[0]["rows"] if lines else 0
phases = ["load", "get", "scan", "small_txn"]
# (qstore engine, raw engine it is compared with)
pairs = [("qstore-lmdb-kv", "lmdb"), ("qstore-sqlite-kv", "sqlite"), ("qstore-memory-kv", "lmdb")]


def ops(engine, phase):
    r = results.get((engine, phase))
    return r["ops_per_sec"] if r else None


def fmt_ops(v):
    return f"{v:>12.0f}" if v is not None else f"{'-':>12}"


def fmt_ratio(q, raw):
    return f"{q / raw:>7.2f}x" if q is not None and raw else f"{'-':>8}"


print(f"rows={rows}: ops/s, and qstore / raw engine")
header = f"{'phase':<10}"
for q, raw in pairs:
    header += f" {raw:>12} {q:>16} {'ratio':>8}"
print(header)
for phase in phases:
    line = f"{phase:<10}"
    for q, raw in pairs:
        line += f" {fmt_ops(ops(raw, phase))} {fmt_ops(ops(q, phase)):>16} {fmt_ratio(ops(q, phase), ops(raw, phase))}"
    print(line)

line = f"{'size MiB':<10}"
for q, raw in pairs:
    rs, qs = results.get((raw, "size")), results.get((q, "size"))
    line += f" {rs['bytes'] / 1048576 if rs else float('nan'):>12.1f}"
    line += f" {qs['bytes'] / 1048576 if qs else float('nan'):>16.1f} {'':>8}"
print(line)

bad = False
for phase in phases:
    sums = {e: r["checksum"] for (e, p), r in results.items() if p == phase}
    if len(set(sums.values())) > 1:
        print(f"CHECKSUM MISMATCH in {phase}: {sums}")
        bad = True
if not bad:
    print("checksums: identical across engines for every phase")
sys.exit(1 if bad else 0)
EOF

exit "$status"
