#!/bin/sh
# Builds a small demo store with the qstore command and shows what is in it.
set -eu
builddir=${1:-_build}
qstore="$builddir/tools/qstore"
export QSTORE_PLUGIN_DIR="$builddir/plugins/memory:$builddir/plugins/lmdb:$builddir/plugins/sqlite"

demo="$builddir/demo/store"
rm -rf "$demo"
mkdir -p "$demo"
export QSTORE_STORE="lmdb:$demo"

echo "== providers"
"$qstore" providers

echo "== loading a few keys into $QSTORE_STORE"
for city in amsterdam berlin copenhagen dublin edinburgh florence geneva helsinki; do
  "$qstore" kv put main.cities "$city" "visited $(printf %s "$city" | wc -c) letters ago"
done
"$qstore" kv put --sync main.meta created "$(date -u +%Y-%m-%dT%H:%M:%SZ)"

echo "== stores"
"$qstore" kv stores

echo "== cities from c to g"
"$qstore" kv scan main.cities --gte c --lt h

echo "== the last three, newest first, as JSON"
"$qstore" kv scan main.cities --reverse --limit 3 --json
