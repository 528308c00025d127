#!/bin/sh
# test-gdbus.sh: a person at a shell, with gdbus, against qstore serve
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Runs under dbus-run-session; QSTORE_TOOL is the qstore command.
set -eu

dir=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$dir"' EXIT
store="lmdb:$dir/shop-data"
fail () { echo "not ok - $*"; exit 1; }

"$QSTORE_TOOL" --store "$store" sql "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)" >/dev/null
# The default id comes from the store's path.
"$QSTORE_TOOL" --store "$store" serve --allow-writes 2>"$dir/log" &
server=$!
name=org.qstore.Server.shop_data
for i in $(seq 100); do
  gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
    --method org.freedesktop.DBus.NameHasOwner "$name" | grep -q true && break
  sleep 0.1
done

gdbus introspect --session --dest "$name" --object-path /org/qstore/Server >"$dir/introspect"
grep -q "interface org.qstore.Server1" "$dir/introspect" || fail "introspect lists the interface"
grep -q "Committed(t tx" "$dir/introspect" || fail "introspect lists Committed"
echo "ok 1 - gdbus introspect shows org.qstore.Server1"

call () { gdbus call --session --dest "$name" --object-path /org/qstore/Server --method "$@"; }
call org.qstore.Server1.Execute "INSERT INTO items VALUES (1, 'pear')" | grep -q "(uint64 2, uint64 1)" \
  || fail "Execute commits transaction 2 with one row"
echo "ok 2 - gdbus call Execute"

call org.qstore.Server1.GetCatalog | grep -q '"name":"items"' || fail "GetCatalog lists items"
echo "ok 3 - gdbus call GetCatalog"

call org.freedesktop.DBus.Properties.Get org.qstore.Server1 TxId | grep -q "<uint64 2>" \
  || fail "TxId is 2"
echo "ok 4 - gdbus call Properties.Get TxId"

if call org.qstore.Server1.RegisterQuery "SELECT * FROM items" 2>"$dir/err"; then
  fail "RegisterQuery without --allow-queries"
fi
grep -q "org.qstore.Server1.Error.NotAllowed" "$dir/err" || fail "refused as NotAllowed"
echo "ok 5 - RegisterQuery refused without --allow-queries"

kill -TERM "$server"
wait "$server" || fail "serve exits 0 on SIGTERM"
grep -q "stopped" "$dir/log" || fail "the log says it stopped"
echo "ok 6 - SIGTERM stops the server"
echo "1..6"
