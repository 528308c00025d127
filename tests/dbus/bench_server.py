#!/usr/bin/python3
# bench_server.py: change rows per second qstore serve sends to one subscriber
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Under dbus-run-session: a server on a fresh lmdb store commits
# QSTORE_BENCH_TXS transactions of QSTORE_BENCH_ROWS inserted rows each
# (through Execute), while one subscriber counts the rows its
# CommittedRows signals carry. Prints rows/s from the first commit to the
# last row received.

import json
import os
import threading
import time

from serverutil import Gio, Recorder, Server, new_connection, new_store, remove, wait_until

TXS = int(os.environ.get("QSTORE_BENCH_TXS", "50"))
ROWS = int(os.environ.get("QSTORE_BENCH_ROWS", "1000"))
PER_SIGNAL = os.environ.get("QSTORE_BENCH_ROWS_PER_SIGNAL", "500")

directory, store = new_store(("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, n REAL)",))
server = Server(store, "--allow-writes", "--rows-per-signal", PER_SIGNAL)
bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
received = [0]


def on_signal(connection, sender, path, iface, member, parameters):
    if member == "CommittedRows":
        received[0] += len(json.loads(parameters.unpack()[3]))


bus.signal_subscribe(server.name, "org.qstore.Server1", "CommittedRows", "/org/qstore/Server",
                     None, Gio.DBusSignalFlags.NONE, on_signal)
server.call("Subscribe")


def write():
    connection = new_connection()
    for tx in range(TXS):
        base = tx * ROWS
        server.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                       "WHERE x < %d) INSERT INTO t SELECT %d + x, 'row ' || x, x * 0.5 FROM c"
                       % (ROWS, base), connection)


start = time.monotonic()
writer = threading.Thread(target=write)
writer.start()
wait_until(lambda: received[0] >= TXS * ROWS, 600)
elapsed = time.monotonic() - start
writer.join()
server.stop()
remove(directory)
print("rows %d in %d transactions, %s rows per signal: %.2f s, %.0f change rows/s received"
      % (received[0], TXS, PER_SIGNAL, elapsed, received[0] / elapsed))
