#!/bin/sh
# run-with-server.sh ID PROGRAM ARGS…: runs PROGRAM while `qstore serve
# --id ID --allow-writes` serves a fresh store with a table t.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu
id=$1; shift
dir=$(mktemp -d)
"$QSTORE_TOOL" --store "lmdb:$dir/store" sql "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)" >/dev/null
"$QSTORE_TOOL" --store "lmdb:$dir/store" serve --id "$id" --allow-writes 2>"$dir/log" &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$dir"' EXIT
for i in $(seq 100); do
  gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
    --method org.freedesktop.DBus.NameHasOwner "org.qstore.Server.$id" | grep -q true && break
  sleep 0.1
done
"$@"
