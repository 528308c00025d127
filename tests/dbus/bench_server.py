#!/usr/bin/python3
# bench_server.py: change rows per second qstore serve sends to one follower
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Under dbus-run-session: a server on a fresh lmdb store commits
# QSTORE_BENCH_TXS transactions of QSTORE_BENCH_ROWS inserted rows each
# (through Execute, from QSTORE_BENCH_WRITERS connections at once, no
# faster than QSTORE_BENCH_RATE change rows/s when set), while one
# follower takes them. QSTORE_BENCH_FOLLOWER says which:
#
#   signals    this process counts the rows of the CommittedRows signals
#              (the server alone, no follower's work)
#   feed       this process follows through QStore.ChangeFeed, the
#              library's bus follower, and counts the rows of its change
#              sets (needs the typelib on GI_TYPELIB_PATH)
#   inspector  qstore-inspector ($QSTORE_INSPECTOR, on $DISPLAY) opens the
#              store and follows the server on its Events page; its CPU
#              and RSS are read from /proc while the writers run, and it
#              has kept up when its CPU use stops within a second of the
#              last commit
#
# With QSTORE_BENCH_SERVER=fake, this process plays the server instead
# (its StoreUri is the store, so the inspector finds it): each "commit"
# only emits Committed and CommittedRows, as fast as the bus takes them,
# which measures what a follower can take rather than what qstore serve
# commits (a million one-row transactions in a minute, not in an hour).
#
# Prints rows/s from the first commit to the last row told (signals,
# feed) or to the last commit (inspector), and the follower's CPU use.

import os
import subprocess
import threading
import time

from serverutil import GLib, Gio, Server, new_connection, new_store, remove, spin, wait_until

TXS = int(os.environ.get("QSTORE_BENCH_TXS", "50"))
ROWS = int(os.environ.get("QSTORE_BENCH_ROWS", "1000"))
PER_SIGNAL = os.environ.get("QSTORE_BENCH_ROWS_PER_SIGNAL", "500")
WRITERS = int(os.environ.get("QSTORE_BENCH_WRITERS", "1"))
# Change rows per second the writers keep to (0: as fast as they can).
RATE = float(os.environ.get("QSTORE_BENCH_RATE", "0"))
FOLLOWER = os.environ.get("QSTORE_BENCH_FOLLOWER", "signals")
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """utime + stime of a process, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class FakeServer:
    """org.qstore.Server.t played from here: Subscribe, StoreUri, signals."""

    def __init__(self, store):
        with open(os.environ["QSTORE_SERVER_XML"]) as f:
            info = Gio.DBusNodeInfo.new_for_xml(f.read()).interfaces[0]
        self.name = "org.qstore.Server.t"
        self.store = store
        self.tx = 0
        self.subscribed = 0
        self.connection = new_connection()
        self.connection.register_object("/org/qstore/Server", info, self._method,
                                        self._property, None)
        self.owner = Gio.bus_own_name_on_connection(self.connection, self.name,
                                                    Gio.BusNameOwnerFlags.NONE, None, None)
        wait_until(lambda: self.connection.call_sync(
            "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
            "NameHasOwner", GLib.Variant("(s)", (self.name,)), None, Gio.DBusCallFlags.NONE,
            -1, None).unpack()[0])

    def _method(self, connection, sender, path, iface, method, parameters, invocation):
        self.subscribed += method == "Subscribe"
        invocation.return_value(None)

    def _property(self, connection, sender, path, iface, name):
        return GLib.Variant("s", self.store) if name == "StoreUri" else None

    def call(self, method, *args):
        pass

    def execute(self, sql, connection=None):
        self.tx += 1
        rows = ",".join('{"table":"main.t","op":"insert","old":null,"new":[%d,"row %d",0.5]}'
                        % (self.tx * ROWS + i, i) for i in range(ROWS))
        self.connection.emit_signal(None, "/org/qstore/Server", "org.qstore.Server1", "Committed",
                                    GLib.Variant("(txasu)", (self.tx, GLib.get_real_time(),
                                                             ["main.t"], ROWS)))
        self.connection.emit_signal(None, "/org/qstore/Server", "org.qstore.Server1",
                                    "CommittedRows",
                                    GLib.Variant("(tuus)", (self.tx, 0, ROWS, "[%s]" % rows)))
        return self.tx, ROWS

    def stop(self):
        self.connection.flush_sync(None)
        Gio.bus_unown_name(self.owner)
        return 0


directory, store = new_store(("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, n REAL)",))
if os.environ.get("QSTORE_BENCH_SERVER") == "fake":
    server = FakeServer(store)
    WRITERS = 1
else:
    server = Server(store, "--allow-writes", "--rows-per-signal", PER_SIGNAL)
bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
received = [0]
inspector = None
feed = None

if FOLLOWER == "signals":
    def on_signal(connection, sender, path, iface, member, parameters):
        import json
        received[0] += len(json.loads(parameters.unpack()[3]))

    bus.signal_subscribe(server.name, "org.qstore.Server1", "CommittedRows",
                         "/org/qstore/Server", None, Gio.DBusSignalFlags.NONE, on_signal)
    server.call("Subscribe")
elif FOLLOWER == "feed":
    import gi
    gi.require_version("QStore", "1.0")
    from gi.repository import QStore

    def on_changes(feed, change_set):
        received[0] += change_set.get_n_changes()

    feed = QStore.ChangeFeed.new_for_bus_sync(bus, server.name, QStore.BusFollowFlags.NONE, None)
    feed.connect("changes", on_changes)
elif FOLLOWER == "inspector":
    inspector = subprocess.Popen([os.environ["QSTORE_INSPECTOR"], store])
    # It follows once the server has a subscriber: a probe commit is heard
    # by a listener only then.
    heard = []
    bus.signal_subscribe(server.name, "org.qstore.Server1", "Committed", "/org/qstore/Server",
                         None, Gio.DBusSignalFlags.NONE, lambda *args: heard.append(1))

    probes = [0]

    def probe():
        # The server played here knows when it was subscribed.
        if isinstance(server, FakeServer):
            return server.subscribed > 0
        probes[0] += 1
        server.execute("INSERT INTO t VALUES (%d, 'probe', 0)" % -probes[0])
        spin(0.2)
        return bool(heard)

    if not wait_until(probe, 60):
        raise SystemExit("qstore-inspector never subscribed to the server")
    spin(1)
else:
    raise SystemExit("QSTORE_BENCH_FOLLOWER is signals, feed or inspector, not " + FOLLOWER)


executed = [0]


def write(writer):
    connection = new_connection()
    for tx in range(writer, TXS, WRITERS):
        if RATE > 0:
            time.sleep(max(0.0, start + tx * ROWS / RATE - time.monotonic()))
        base = tx * ROWS
        server.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                       "WHERE x < %d) INSERT INTO t SELECT %d + x, 'row ' || x, x * 0.5 FROM c"
                       % (ROWS, base), connection)
        executed[0] += 1


follower_pid = inspector.pid if inspector is not None else os.getpid()
cpu_before = cpu_seconds(follower_pid)
start = time.monotonic()
writers = [threading.Thread(target=write, args=(w,)) for w in range(WRITERS)]
for writer in writers:
    writer.start()
samples = []
if inspector is not None:
    # RSS as the events come.
    while any(writer.is_alive() for writer in writers):
        time.sleep(0.5)
        samples.append((time.monotonic() - start, rss_mib(inspector.pid)))
for writer in writers:
    writer.join()
committed = time.monotonic() - start

if inspector is None:
    wait_until(lambda: received[0] >= TXS * ROWS, 600)
    elapsed = time.monotonic() - start
    cpu = cpu_seconds(follower_pid) - cpu_before
    rows = received[0]
else:
    # Caught up when its CPU time stops growing: what it still had to do
    # after the last commit.
    last, idle_since = cpu_seconds(inspector.pid), time.monotonic()
    while time.monotonic() - idle_since < 1.0 and time.monotonic() - start < committed + 600:
        time.sleep(0.1)
        now = cpu_seconds(inspector.pid)
        if now - last > 0.02:
            last, idle_since = now, time.monotonic()
    drained = idle_since - start - committed
    elapsed = committed
    cpu = last - cpu_before
    rows = executed[0] * ROWS

print("follower %s: %d rows in %d transactions, %s rows per signal, %d writers: %.2f s, "
      "%.0f change rows/s, follower CPU %.2f s (%.0f%% of one core)"
      % (FOLLOWER, rows, TXS, PER_SIGNAL, WRITERS, elapsed, rows / elapsed, cpu,
         100 * cpu / elapsed))
if inspector is not None:
    print("inspector: caught up %.2f s after the last commit; RSS %.1f MiB at the end, "
          "peak %.1f MiB; RSS over time: %s"
          % (max(0.0, drained), rss_mib(inspector.pid), max(s[1] for s in samples),
             ", ".join("%.0fs %.0f" % s for s in samples[:: max(1, len(samples) // 10)])))
    inspector.terminate()
    inspector.wait(timeout=30)
if feed is not None:
    feed.close()
server.stop()
remove(directory)
