#!/usr/bin/env bash
# bench-compare.sh: raw LMDB, raw SQLite and qstore-bench on one workload, in
# one run, and the ratio of qstore's throughput to the raw engine's per phase.
#
# usage: tools/bench-compare.sh [--rows N] [--reps N] [--layers LIST]
#                               [--providers LIST] [--baseline DIR] [--build DIR]
#                               [--bench PATH] [--dir DIR] [--out FILE]
#   --rows N           rows to load (default 1000000, or $QSTORE_BENCH_ROWS)
#   --reps N           rounds (default 3, or $QSTORE_BENCH_REPS): each runs the
#                      raw engines and every qstore engine, raw first in odd
#                      rounds and last in even ones; a ratio is taken within a
#                      round and the median of the rounds' is printed, so a
#                      machine whose speed drifts moves both sides alike
#   --layers LIST      the qstore layers to measure, from kv,table,sql (default
#                      all three, or $QSTORE_BENCH_LAYERS). kv and table are
#                      compared with raw LMDB (kv on the sqlite provider with
#                      raw SQLite), sql with raw SQLite. With sql, the
#                      sql-floor column is SQLite alone on the same reads
#                      (a virtual table that stores nothing): the most any
#                      provider's get and scan can reach through SQL
#   --providers LIST   the providers, from lmdb,sqlite,memory (default all
#                      three, or $QSTORE_BENCH_PROVIDERS)
#   --baseline DIR     the bench-baseline sources (default $QSTORE_BENCH_BASELINE,
#                      else ../shared/bench-baseline next to the source tree);
#                      built in a temporary copy, so it may be read-only
#   --build DIR        the meson build directory (default ./build of the tree):
#                      qstore-bench and the plugins are taken from there
#   --bench PATH       the qstore-bench program (default DIR/tools/qstore-bench)
#   --dir DIR          where the stores are created (default a new directory
#                      under $TMPDIR or /var/tmp, removed at exit)
#   --out FILE         keep the JSON lines of every program in FILE
# Peak RSS of every program is taken with /usr/bin/time when it is there.
# Figures are medians over the rounds; each ratio is followed by its range
# over the rounds.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
rows=${QSTORE_BENCH_ROWS:-1000000}
reps=${QSTORE_BENCH_REPS:-3}
layers=${QSTORE_BENCH_LAYERS:-kv,table,sql}
providers=${QSTORE_BENCH_PROVIDERS:-lmdb,sqlite,memory}
baseline=${QSTORE_BENCH_BASELINE:-$root/../shared/bench-baseline}
build=$root/build
bench=
workdir=
out=

usage() {
    if [ "$1" = 0 ]; then
        sed -n '2,34s/^# \{0,1\}//p' "$0"
    else
        sed -n '2,34s/^# \{0,1\}//p' "$0" >&2
    fi
    exit "$1"
}

while [ $# -gt 0 ]; do
    case "$1" in
        --rows) [ $# -ge 2 ] || usage 2; rows=$2; shift 2 ;;
        --reps) [ $# -ge 2 ] || usage 2; reps=$2; shift 2 ;;
        --layers) [ $# -ge 2 ] || usage 2; layers=$2; shift 2 ;;
        --providers) [ $# -ge 2 ] || usage 2; providers=$2; shift 2 ;;
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
case "$reps" in
    ''|*[!0-9]*|0) echo "bench-compare.sh: --reps takes a positive number, not “$reps”" >&2; exit 2 ;;
esac
IFS=, read -r -a layer_list <<< "$layers"
for layer in "${layer_list[@]}"; do
    case "$layer" in
        kv|table|sql) ;;
        *) echo "bench-compare.sh: unknown layer “$layer” in --layers: use kv, table and sql" >&2; exit 2 ;;
    esac
done
IFS=, read -r -a provider_list <<< "$providers"
for provider in "${provider_list[@]}"; do
    case "$provider" in
        lmdb|sqlite|memory) ;;
        *) echo "bench-compare.sh: unknown provider “$provider” in --providers: use lmdb, sqlite and memory" >&2; exit 2 ;;
    esac
done
if [ ${#layer_list[@]} = 0 ] || [ ${#provider_list[@]} = 0 ]; then
    echo "bench-compare.sh: --layers and --providers need at least one name each" >&2
    exit 2
fi

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
rss=$scratch/rss.tsv
: > "$rss"

# The baseline is built in a copy: its directory is often read-only (and a
# test of write permission means nothing when running as root).
bindir=$scratch/baseline
mkdir -p "$bindir"
cp "$baseline"/Makefile "$baseline"/*.c "$baseline"/*.h "$bindir"/
chmod -R u+w "$bindir"
make -s -C "$bindir" raw_lmdb raw_sqlite >&2

# run ENGINE ROUND PROGRAM ARGS…: the JSON lines go to $out, the peak RSS
# (KiB, the whole process) to $rss. GNU time measures every program the
# same way; the raw programs do not report it themselves.
status=0
run() {
    local engine=$1 round=$2
    shift 2
    echo "# round $round: $*" >&2
    if [ -x /usr/bin/time ]; then
        if /usr/bin/time -f '%M' -o "$scratch/rss.one" "$@" >> "$out"; then
            printf '%s\t%s\n' "$engine" "$(tail -n 1 "$scratch/rss.one")" >> "$rss"
            return
        fi
    elif "$@" >> "$out"; then
        return
    fi
    echo "bench-compare.sh: $1 failed" >&2
    status=1
}

run_raw() {
    run lmdb "$1" "$bindir/raw_lmdb" --rows "$rows" --dir "$workdir" --run "$1"
    run sqlite "$1" "$bindir/raw_sqlite" --rows "$rows" --dir "$workdir" --run "$1"
}

run_qstore() {
    for layer in "${layer_list[@]}"; do
        for provider in "${provider_list[@]}"; do
            run "qstore-$provider-$layer" "$1" \
                "$bench" --provider "$provider" --layer "$layer" --rows "$rows" \
                --dir "$workdir" --run "$1"
        done
        if [ "$layer" = sql ]; then
            run sql-floor "$1" "$bench" --layer sql-floor --rows "$rows" --run "$1"
        fi
    done
}

# Raw, qstore, qstore, raw, raw, qstore…: a drift of the machine's speed
# during the rounds then weighs on both sides alike.
for round in $(seq 1 "$reps"); do
    if [ $((round % 2)) = 1 ]; then
        run_raw "$round"
        run_qstore "$round"
    else
        run_qstore "$round"
        run_raw "$round"
    fi
done

/usr/bin/python3 - "$out" "$rss" "$layers" "$providers" <<'EOF' || status=1
import json
import sys

lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
results = {}
for r in lines:
    results.setdefault((r["engine"], r["phase"]), {})[r.get("run", 1)] = r
peak = {}
for l in open(sys.argv[2]):
    engine, kib = l.split("\t")
    if kib.strip().isdigit():
        peak.setdefault(engine, []).append(int(kib))
layers = sys.argv[3].split(",")
providers = sys.argv[4].split(",")
rows = lines[0]["rows"] if lines else 0
rounds = sorted({r.get("run", 1) for r in lines})
phases = ["load", "get", "scan", "small_txn"]


def reference(layer, provider):
    """The raw engine a qstore engine is compared with."""
    if layer == "sql":
        return "sqlite"
    if layer == "kv" and provider == "sqlite":
        return "sqlite"
    return "lmdb"


def median(values):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def per_round(engine, phase, get):
    return {k: get(r) for k, r in results.get((engine, phase), {}).items()}


def ops_of(r):
    return r["ops_per_sec"]


def cpu_of(r):
    return r["cpu_seconds"] / r["ops"] * 1e6 if r["ops"] else None


def ops(engine, phase):
    return median(per_round(engine, phase, ops_of).values())


def cpu_us(engine, phase):
    return median(per_round(engine, phase, cpu_of).values())


def round_ratios(q, raw, phase, get):
    """qstore / raw within each round."""
    a = per_round(q, phase, get)
    b = per_round(raw, phase, get)
    return [a[k] / b[k] for k in a if a[k] is not None and b.get(k)]


def round_ratio(q, raw, phase, get):
    """The median over the rounds of qstore / raw within each round."""
    return median(round_ratios(q, raw, phase, get))


def size_mib(engine):
    sizes = [r["bytes"] for r in results.get((engine, "size"), {}).values()]
    return median(sizes) / 1048576 if sizes else None


def rss_mib(engine):
    return median(peak[engine]) / 1024 if engine in peak else None


def fmt(v, width, digits=0):
    return f"{v:>{width}.{digits}f}" if v is not None else f"{'-':>{width}}"


def fmt_ratio(q, raw):
    return f"{q / raw:>8.2f}x" if q is not None and raw else f"{'-':>9}"


def fmt_ratio_of(ratio):
    return f"{ratio:>8.2f}x" if ratio is not None else f"{'-':>9}"


def fmt_range(ratios):
    return f"{min(ratios):>4.2f}-{max(ratios):<4.2f}" if ratios else f"{'-':>9}"


print(f"rows={rows}, {len(rounds)} round(s): ops/s, and qstore / raw engine (the raw engine")
print("named under ratio); then CPU microseconds per operation, size and peak RSS, each")
print("with the same ratio. Figures are medians over the rounds; a ratio is the median")
print("of the ratios within each round, whose range follows it")
for layer in layers:
    engines = [(f"qstore-{p}-{layer}", reference(layer, p)) for p in providers]
    if layer == "sql":
        engines.append(("sql-floor", "sqlite"))
    print()
    print(f"layer {layer}")
    header = f"{'phase':<12} {'raw lmdb':>12} {'raw sqlite':>12}"
    for q, raw in engines:
        header += f" {q:>20} {'/' + raw:>9}"
    print(header)
    for phase in phases:
        line = f"{phase:<12} {fmt(ops('lmdb', phase), 12)} {fmt(ops('sqlite', phase), 12)}"
        for q, raw in engines:
            line += f" {fmt(ops(q, phase), 20)} {fmt_ratio_of(round_ratio(q, raw, phase, ops_of))}"
        print(line)
    # A machine shared with others moves single rounds a lot: the spread
    # says how far a median can be trusted.
    print(f"{'ratio range':<12} (the lowest and the highest round)")
    for phase in phases:
        line = f"  {phase:<10} {'':>12} {'':>12}"
        for q, raw in engines:
            line += f" {'':>20} {fmt_range(round_ratios(q, raw, phase, ops_of))}"
        print(line)
    # CPU time per operation moves less than wall time on a shared machine;
    # its ratio is qstore / raw too, so here above 1 means more work.
    print(f"{'cpu us/op':<12}")
    for phase in phases:
        line = f"  {phase:<10} {fmt(cpu_us('lmdb', phase), 12, 2)} {fmt(cpu_us('sqlite', phase), 12, 2)}"
        for q, raw in engines:
            line += f" {fmt(cpu_us(q, phase), 20, 2)} {fmt_ratio_of(round_ratio(q, raw, phase, cpu_of))}"
        print(line)
    for label, get in (("size MiB", size_mib), ("peak RSS MiB", rss_mib)):
        line = f"{label:<12} {fmt(get('lmdb'), 12, 1)} {fmt(get('sqlite'), 12, 1)}"
        for q, raw in engines:
            line += f" {fmt(get(q), 20, 1)} {fmt_ratio(get(q), get(raw))}"
        print(line)
print()

bad = False
for phase in phases:
    sums = {f"{e} round {k}": r["checksum"]
            for (e, p), by_round in results.items() if p == phase
            for k, r in by_round.items()}
    if len(set(sums.values())) > 1:
        print(f"CHECKSUM MISMATCH in {phase}: {sums}")
        bad = True
if not bad:
    print("checksums: identical across engines for every phase")
sys.exit(1 if bad else 0)
EOF

exit "$status"
