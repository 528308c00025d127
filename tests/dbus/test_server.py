#!/usr/bin/python3
# test_server.py: qstore serve on a session bus, called as programs call it
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Runs under dbus-run-session (the `dbus` suite starts one).

import os
import signal
import subprocess
import threading
import unittest

from serverutil import (IFACE, PATH, QSTORE, Gio, GLib, Recorder, Server, json,
                        new_connection, new_store, remove, run_tool, spin, wait_until)

SOURCE_XML = os.environ["QSTORE_SERVER_XML"]


def describe(interface):
    """What a caller relies on: names, types, directions, access."""
    return {
        "methods": {m.name: ([(a.name, a.signature) for a in m.in_args or []],
                             [(a.name, a.signature) for a in m.out_args or []])
                    for m in interface.methods},
        "signals": {s.name: [(a.name, a.signature) for a in s.args or []]
                    for s in interface.signals},
        "properties": {p.name: (p.signature, int(p.flags)) for p in interface.properties},
    }


class ServerTest(unittest.TestCase):
    def setUp(self):
        self.directory, self.store = new_store()
        self.server = Server(self.store, "--allow-queries", "--allow-writes",
                             "--rows-per-signal", "2")
        self.bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)

    def tearDown(self):
        if self.server.process.poll() is None:
            self.assertEqual(self.server.stop(), 0, self.server.log)
        remove(self.directory)

    def test_introspection_matches_the_file(self):
        reply = self.bus.call_sync(self.server.name, PATH, "org.freedesktop.DBus.Introspectable",
                                   "Introspect", None, GLib.VariantType("(s)"),
                                   Gio.DBusCallFlags.NONE, 10000, None)
        xml = reply.unpack()[0]
        served = Gio.DBusNodeInfo.new_for_xml(xml).lookup_interface(IFACE)
        with open(SOURCE_XML) as f:
            source = Gio.DBusNodeInfo.new_for_xml(f.read()).lookup_interface(IFACE)
        self.assertIsNotNone(served)
        self.assertEqual(describe(served), describe(source))
        self.assertIn("Committed", describe(served)["signals"])

    def test_properties(self):
        self.assertEqual(self.server.prop("StoreUri"), self.store)
        self.assertEqual(self.server.prop("Provider"), "lmdb")
        self.assertEqual(self.server.prop("RowsPerSignal"), 2)
        self.assertTrue(self.server.prop("AllowQueries"))
        tx = self.server.prop("TxId")
        new_tx, rows = self.server.execute("INSERT INTO t VALUES (1, 'a')")
        self.assertEqual((new_tx, rows), (tx + 1, 1))
        self.assertEqual(self.server.prop("TxId"), tx + 1)
        uptime = self.server.prop("Uptime")
        spin(0.05)
        self.assertGreater(self.server.prop("Uptime"), uptime)

    def test_catalog_and_stale_report_are_the_commands_json(self):
        catalog = json.loads(self.server.call("GetCatalog", None, "(s)")[0])
        printed = [json.loads(line) for line in
                   run_tool(self.store, "catalog", "--json").stdout.splitlines()]
        self.assertEqual(catalog, printed)
        self.assertIn("t", [entry["name"] for entry in catalog if entry["kind"] == "table"])
        report = json.loads(self.server.call("GetStaleReport", None, "(s)")[0])
        self.assertEqual(report, json.loads(run_tool(self.store, "stale", "--json").stdout))

    def test_staging_leftovers_are_the_commands_json(self):
        self.assertEqual(json.loads(self.server.call("GetStagingLeftovers", None, "(s)")[0]), [])
        # An import interrupted before the server started leaves a run.
        self.assertEqual(self.server.stop(), 0, self.server.log)
        bad = os.path.join(self.directory, "bad.csv")
        with open(bad, "w") as f:
            f.write("id,name\n10,ten\n11,\n")
        run_tool(self.store, "sql", "CREATE TABLE u (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        failed = run_tool(self.store, "import", "--mode", "replace", "--no-atomic", "u", bad,
                          check=False)
        self.assertEqual(failed.returncode, 1, failed.stderr)
        self.server = Server(self.store)
        runs = json.loads(self.server.call("GetStagingLeftovers", None, "(s)")[0])
        printed = [json.loads(line) for line in
                   run_tool(self.store, "staging", "--json").stdout.splitlines()]
        self.assertEqual([run["target"] for run in runs], ["u"])
        self.assertTrue(runs[0]["resumable"])
        for run in runs + printed:
            del run["heartbeat_age_ms"]
        self.assertEqual(runs, printed)

    def test_committed_with_bounded_rows(self):
        recorder = Recorder(self.bus, self.server.name)
        self.server.call("Subscribe")
        tx, count = self.server.execute(
            "INSERT INTO t VALUES (1, 'a'), (2, NULL), (3, 'c'), (4, 'd'), (5, x'00ff')")
        self.assertEqual(count, 5)
        self.assertTrue(wait_until(lambda: len(recorder.named("CommittedRows")) == 3))
        self.assertEqual(recorder.named("Committed")[0][0], tx)
        self.assertEqual(recorder.named("Committed")[0][2], ["main.t"])
        self.assertEqual(recorder.named("Committed")[0][3], 5)
        rows = []
        for got_tx, first, total, text in recorder.named("CommittedRows"):
            self.assertEqual((got_tx, first, total), (tx, len(rows), 5))
            chunk = json.loads(text)
            self.assertLessEqual(len(chunk), 2)
            rows += chunk
        self.assertEqual([row["new"] for row in rows],
                         [[1, "a"], [2, None], [3, "c"], [4, "d"], [5, {"$blob": "AP8="}]])
        self.assertEqual({row["op"] for row in rows}, {"insert"})
        # The Committed of a transaction comes before its rows.
        self.assertEqual(recorder.signals[0][0], "Committed")
        self.server.call("Unsubscribe")

    def test_a_proxy_hears_signals(self):
        proxy = Gio.DBusProxy.new_sync(self.bus, Gio.DBusProxyFlags.NONE, None,
                                       self.server.name, PATH, IFACE, None)
        self.assertEqual(proxy.get_cached_property("Provider").unpack(), "lmdb")
        heard = []
        proxy.connect("g-signal", lambda p, sender, name, params: heard.append((name, params.unpack())))
        proxy.call_sync("Subscribe", None, Gio.DBusCallFlags.NONE, -1, None)
        tx, _ = self.server.execute("INSERT INTO t VALUES (1, 'from python')")
        self.assertTrue(wait_until(lambda: [h for h in heard if h[0] == "CommittedRows"]))
        self.assertEqual([h[1][0] for h in heard if h[0] == "Committed"], [tx])
        rows = json.loads([h for h in heard if h[0] == "CommittedRows"][0][1][3])
        self.assertEqual(rows[0]["new"], [1, "from python"])

    def test_nothing_is_sent_while_nobody_subscribed(self):
        listener = new_connection()
        recorder = Recorder(listener, self.server.name)
        self.server.execute("INSERT INTO t VALUES (1, 'a')")
        spin(0.5)
        self.assertEqual(recorder.signals, [])
        subscriber = new_connection()
        self.server.call("Subscribe", connection=subscriber)
        self.server.execute("INSERT INTO t VALUES (2, 'b')")
        self.assertTrue(wait_until(lambda: recorder.named("Committed")))
        self.server.call("Unsubscribe", connection=subscriber)
        before = len(recorder.signals)
        self.server.execute("INSERT INTO t VALUES (3, 'c')")
        spin(0.5)
        self.assertEqual(len(recorder.signals), before)
        # A subscriber that leaves the bus without a word counts as gone.
        self.server.call("Subscribe", connection=subscriber)
        subscriber.close_sync(None)
        spin(0.3)
        self.server.execute("INSERT INTO t VALUES (4, 'd')")
        spin(0.5)
        self.assertEqual(len(recorder.signals), before)

    def test_live_queries(self):
        self.server.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
        owner = new_connection()
        recorder = Recorder(owner, self.server.name)
        (query,) = self.server.call("RegisterQuery",
                                    GLib.Variant("(s)", ("SELECT id, name FROM t",)), "(t)",
                                    owner)
        self.assertTrue(wait_until(lambda: len(recorder.named("Hydrated")) == 2))
        hydrated = recorder.named("Hydrated")
        self.assertEqual([(h[0], h[2], h[3]) for h in hydrated], [(query, 0, 3), (query, 2, 3)])
        self.assertEqual(sorted(json.loads(hydrated[0][4]) + json.loads(hydrated[1][4])),
                         [[1, "a"], [2, "b"], [3, "c"]])
        self.assertEqual(self.server.prop("LiveQueries"), 1)
        queries = self.server.call("ListQueries", None, "(a(tssu))")[0]
        self.assertEqual([(q[0], q[1], q[2]) for q in queries],
                         [(query, "SELECT id, name FROM t", owner.get_unique_name())])

        tx, _ = self.server.execute("UPDATE t SET name = 'z' WHERE id = 2")
        self.assertTrue(wait_until(lambda: any(p[1] == tx for p in recorder.named("Progressed"))))
        changed = [c for c in recorder.named("Changed") if c[1] == tx]
        self.assertEqual(changed, [(query, tx, '[[2,"b"]]', '[[2,"z"]]')])

        # Another caller may not end it; its owner may.
        with self.assertRaises(GLib.Error) as raised:
            self.server.call("DestroyQuery", GLib.Variant("(t)", (query,)))
        self.assertIn("org.qstore.Server1.Error.NotAllowed", raised.exception.message)
        self.assertEqual(self.server.prop("LiveQueries"), 1)
        self.server.call("DestroyQuery", GLib.Variant("(t)", (query,)), connection=owner)
        self.assertEqual(self.server.prop("LiveQueries"), 0)
        with self.assertRaises(GLib.Error) as raised:
            self.server.call("DestroyQuery", GLib.Variant("(t)", (query,)), connection=owner)
        self.assertIn("org.qstore.Server1.Error.NotFound", raised.exception.message)

        # A caller's queries go when it leaves the bus.
        self.server.call("RegisterQuery", GLib.Variant("(s)", ("SELECT id FROM t",)), "(t)",
                         owner)
        self.assertEqual(self.server.prop("LiveQueries"), 1)
        owner.close_sync(None)
        self.assertTrue(wait_until(lambda: self.server.prop("LiveQueries") == 0))

    def test_bad_sql_is_an_error_and_changes_nothing(self):
        tx = self.server.prop("TxId")
        with self.assertRaises(GLib.Error) as raised:
            self.server.execute("INSERT INTO nowhere VALUES (1)")
        self.assertIn("org.qstore.Server1.Error.Failed", raised.exception.message)
        self.assertIn("nowhere", raised.exception.message)
        with self.assertRaises(GLib.Error):
            self.server.call("RegisterQuery", GLib.Variant("(s)", ("SELECT * FROM nowhere",)),
                             "(t)")
        self.assertEqual(self.server.prop("TxId"), tx)
        self.assertEqual(self.server.prop("LiveQueries"), 0)

    def test_a_second_server_of_the_store_is_refused(self):
        second = subprocess.run([QSTORE, "--store", self.store, "serve", "--id", "t"],
                                capture_output=True, text=True, timeout=30)
        self.assertEqual(second.returncode, 1)
        self.assertIn("org.qstore.Server.t", second.stderr)
        self.assertIn("one writer", second.stderr)

    def test_sigterm_closes_the_store_cleanly(self):
        self.server.execute("INSERT INTO t VALUES (1, 'a')")
        self.assertEqual(self.server.stop(), 0, self.server.log)
        self.assertIn("stopped", self.server.log)
        report = json.loads(run_tool(self.store, "stale", "--json").stdout)
        self.assertTrue(report["clean_shutdown_marker"]["present"])


class RefusalTest(unittest.TestCase):
    def test_queries_and_writes_are_off_by_default(self):
        directory, store = new_store()
        server = Server(store)
        try:
            self.assertFalse(server.prop("AllowQueries"))
            self.assertFalse(server.prop("AllowWrites"))
            with self.assertRaises(GLib.Error) as raised:
                server.call("RegisterQuery", GLib.Variant("(s)", ("SELECT * FROM t",)), "(t)")
            self.assertIn("org.qstore.Server1.Error.NotAllowed", raised.exception.message)
            self.assertIn("--allow-queries", raised.exception.message)
            with self.assertRaises(GLib.Error) as raised:
                server.execute("INSERT INTO t VALUES (1, 'a')")
            self.assertIn("--allow-writes", raised.exception.message)
            self.assertEqual(server.prop("LiveQueries"), 0)
        finally:
            self.assertEqual(server.stop(), 0)
            remove(directory)

    def test_bad_ids_are_usage_errors(self):
        for bad in ("1abc", "a.b", "", "a-b"):
            result = subprocess.run([QSTORE, "--store", "memory:", "serve", "--id", bad],
                                    capture_output=True, text=True, timeout=30)
            self.assertEqual(result.returncode, 2, bad)
            self.assertIn("--id", result.stderr)


class FollowerTest(unittest.TestCase):
    def setUp(self):
        self.directory, self.store = new_store()
        self.server = Server(self.store, "--allow-writes", server_id="store")
        self.follower = subprocess.Popen(
            [QSTORE, "--store", self.store, "changes", "--follow", "--bus", "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        # The follower subscribes when it sees the name: probe until a
        # transaction reaches it.
        self.probes = 0
        self.assertTrue(wait_until(self._probe, 20))

    def _probe(self):
        self.probes += 1
        self.server.execute("INSERT INTO t VALUES (%d, 'probe')" % -self.probes)
        spin(0.2)
        return bool(self.lines)

    def _read(self):
        for line in self.follower.stdout:
            self.lines.append(json.loads(line))

    def tearDown(self):
        self.follower.send_signal(signal.SIGINT)
        self.assertEqual(self.follower.wait(timeout=30), 0)
        if self.server.process.poll() is None:
            self.server.stop()
        remove(self.directory)

    def test_every_transaction_once_in_order_under_load(self):
        first = self.lines[-1]["tx"]
        writers = []
        committed = []

        def write(n):
            connection = new_connection()
            for i in range(n):
                tx, _ = self.server.execute("INSERT INTO t VALUES (%d, 'x')" % (i + 1000 * n),
                                            connection)
                committed.append(tx)

        for n in (40, 41, 42):
            writers.append(threading.Thread(target=write, args=(n,)))
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join()
        last = max(committed)
        self.assertTrue(wait_until(lambda: self.lines[-1].get("tx") == last, 30))
        txs = [line["tx"] for line in self.lines if "tx" in line]
        self.assertEqual(txs, list(range(txs[0], last + 1)))
        self.assertEqual(sorted(committed), list(range(first + 1, last + 1)))
        self.assertFalse([line for line in self.lines if "gap" in line])
        self.assertTrue(all(line["rows"][0]["op"] == "insert" for line in self.lines))

    def test_a_restart_is_a_gap(self):
        self.assertEqual(self.server.stop(), 0)
        spin(0.3)
        self.server = Server(self.store, "--allow-writes", server_id="store")
        self.assertTrue(wait_until(lambda: any("gap" in line for line in self.lines)))
        gap = [line for line in self.lines if "gap" in line][0]["gap"]
        self.assertEqual(gap["reason"], "server restarted")
        self.assertGreaterEqual(gap["down_for_ms"], 300)
        # Following goes on with the new server.
        spin(0.3)
        tx, _ = self.server.execute("INSERT INTO t VALUES (7, 'after')")
        self.assertTrue(wait_until(lambda: self.lines[-1].get("tx") == tx))
        self.assertEqual(self.lines[-1]["rows"][0]["new"], [7, "after"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
