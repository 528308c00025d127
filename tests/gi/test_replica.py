#!/usr/bin/python3
# test_replica.py: live queries from Python, their events on the main loop
#
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A consumer written the way the replica's documentation says: it keeps
a query's rows from Hydrated, buffers Changed slices, applies them when
its worker's Progressed confirms them, and compares what it holds with a
fresh run of the query. Runs once per provider."""

import os
import shutil
import tempfile
import unittest

import gi

gi.require_version("GLib", "2.0")
gi.require_version("QStore", "1.0")
from gi.repository import GLib, QStore  # noqa: E402

QUERY = "SELECT id, name FROM item WHERE price > 1"
TIMEOUT_S = 20


def _recorded(handler):
    """@handler with what it raises kept on the consumer: PyGObject only
    prints exceptions raised in signal handlers."""
    def wrapper(self, *args):
        try:
            handler(self, *args)
        except Exception as error:  # noqa: BLE001
            self.errors.append(error)
    return wrapper


class Consumer:
    """What one live query holds, kept from the replica's signals."""

    def __init__(self, replica, query_id):
        self.replica = replica
        self.query_id = query_id
        self.rows = None          # sorted list of tuples once hydrated
        self.pending = []         # (tx, removed, added)
        self.tx = 0
        self.kinds = []           # kinds of the events about this query, in order
        self.payloads = []        # (kind, payload) from the "event" signal
        self.errors = []          # raised by the handlers
        self.handlers = [
            replica.connect("hydrated", self.on_hydrated),
            replica.connect("changed", self.on_changed),
            replica.connect("progressed", self.on_progressed),
            replica.connect("faulted", self.on_faulted),
            replica.connect("event", self.on_event),
        ]

    def disconnect(self):
        for handler in self.handlers:
            self.replica.disconnect(handler)

    @_recorded
    def on_hydrated(self, replica, query_id, tx, rows):
        if query_id != self.query_id:
            return
        self.kinds.append("hydrated")
        self.rows = sorted(tuple(row) for row in rows.unpack())
        self.tx = tx

    @_recorded
    def on_changed(self, replica, query_id, tx, removed, added):
        if query_id != self.query_id:
            return
        self.kinds.append("changed")
        self.pending.append((tx, removed.unpack(), added.unpack()))

    @_recorded
    def on_progressed(self, replica, worker, tx):
        if worker != replica.get_worker_for_query(self.query_id):
            return
        self.kinds.append("progressed")
        keep = []
        for slice_tx, removed, added in self.pending:
            if slice_tx > tx:
                keep.append((slice_tx, removed, added))
                continue
            for row in removed:
                self.rows.remove(tuple(row))
            self.rows.extend(tuple(row) for row in added)
        self.rows.sort()
        self.pending = keep
        self.tx = tx

    @_recorded
    def on_faulted(self, replica, query_id, reason):
        if query_id == self.query_id:
            self.kinds.append("faulted")

    @_recorded
    def on_event(self, replica, kind, payload):
        self.payloads.append((kind, payload.unpack()))


def run_until(consumer, condition, what):
    """Runs the default main loop until @condition holds."""
    context = GLib.MainContext.default()
    deadline = GLib.get_monotonic_time() + TIMEOUT_S * GLib.USEC_PER_SEC
    while not condition():
        if consumer.errors:
            raise consumer.errors[0]
        if GLib.get_monotonic_time() > deadline:
            raise AssertionError("no %s within %d s" % (what, TIMEOUT_S))
        context.iteration(True)


class Replica:
    """Subclasses set PROVIDER."""

    PROVIDER = None

    def setUp(self):
        self.tmpdir = tempfile.mkdtemp(prefix="qstore-gi-replica-")
        if self.PROVIDER == "memory":
            uri = "memory:"
        elif self.PROVIDER == "sqlite":
            uri = "sqlite:" + os.path.join(self.tmpdir, "shop.db")
        else:
            uri = "%s:%s" % (self.PROVIDER, os.path.join(self.tmpdir, "shop"))
        self.replica = QStore.Replica.open(uri, 2, 16)
        self.replica.exec_ddl("CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, price REAL)")

    def tearDown(self):
        try:
            self.replica.close()
        finally:
            shutil.rmtree(self.tmpdir, ignore_errors=True)

    def write(self, statements):
        txn = self.replica.begin_write()
        for sql, params in statements:
            txn.exec(sql, params)
        return txn.commit()

    def fresh(self):
        return sorted(tuple(row) for row in self.replica.query(QUERY, None).fetchall())

    def test_events_on_the_main_loop(self):
        self.write([("INSERT INTO item VALUES (?, ?, ?)", GLib.Variant("(xsd)", (1, "pear", 2.5))),
                    ("INSERT INTO item VALUES (?, ?, ?)", GLib.Variant("(xsd)", (2, "fig", 0.5)))])
        consumer = Consumer(self.replica, 7)
        try:
            self.assertEqual(self.replica.register_query(7, QUERY), (True, 7 % 2))
            run_until(consumer, lambda: consumer.rows is not None, "hydrated")
            self.assertEqual(consumer.rows, [(1, "pear")])
            self.assertEqual(consumer.tx, self.replica.get_committed_tx_id())

            tx = self.write([
                ("UPDATE item SET price = 3 WHERE id = ?", GLib.Variant("(x)", (2,))),
                ("DELETE FROM item WHERE id = ?", GLib.Variant("(x)", (1,))),
                ("INSERT INTO item VALUES (?, ?, ?)", GLib.Variant("(xsd)", (3, "plum", 9.0))),
            ])
            self.assertEqual(tx, self.replica.get_committed_tx_id())
            run_until(consumer, lambda: consumer.tx >= tx, "progressed")
            self.assertEqual(consumer.pending, [])
            self.assertEqual(consumer.rows, [(2, "fig"), (3, "plum")])
            self.assertEqual(consumer.rows, self.fresh())
            self.assertEqual(consumer.kinds[0], "hydrated")
            self.assertIn("changed", consumer.kinds)
            self.assertEqual(consumer.kinds[-1], "progressed")
            self.assertEqual(consumer.errors, [])

            # Every event also came as one GVariant.
            kinds = [kind for kind, _ in consumer.payloads]
            self.assertIn(("hydrated", (7, consumer.payloads[0][1][1], [[1, "pear"]])),
                          consumer.payloads)
            self.assertIn("changed", kinds)
            self.assertIn(("progressed", (7 % 2, tx)), consumer.payloads)
        finally:
            consumer.disconnect()

    def test_registration_refused_while_streaming(self):
        txn = self.replica.begin_write()
        for start in range(0, 1500, 500):
            txn.exec("WITH RECURSIVE n(v) AS (SELECT ?1 UNION ALL SELECT v + 1 FROM n WHERE v < ?2) "
                     "INSERT INTO item SELECT v, 'n' || v, v FROM n",
                     GLib.Variant("(xx)", (start, start + 499)))
        self.assertTrue(self.replica.view_is_speculative())
        with self.assertRaises(GLib.Error) as caught:
            self.replica.register_query(1, QUERY)
        self.assertTrue(caught.exception.matches(QStore.ReplicaError.quark(),
                                                 QStore.ReplicaError.SPECULATIVE))
        self.assertIn("commit", caught.exception.message)
        txn.commit()
        self.assertFalse(self.replica.view_is_speculative())

        consumer = Consumer(self.replica, 1)
        try:
            self.replica.register_query(1, QUERY)
            run_until(consumer, lambda: consumer.rows is not None, "hydrated")
            self.assertEqual(len(consumer.rows), 1498)
            self.assertEqual(consumer.rows, self.fresh())
        finally:
            consumer.disconnect()

    def test_write_out_step(self):
        self.assertEqual(self.replica.props.write_out_step, 64 * 1024 * 1024)
        self.replica.props.write_out_step = 1024 * 1024
        self.assertEqual(self.replica.get_write_out_step(), 1024 * 1024)
        with self.assertRaises(GLib.Error) as caught:
            self.replica.set_write_out_step(1000)
        self.assertTrue(caught.exception.matches(QStore.Error.quark(),
                                                 QStore.Error.INVALID_ARGUMENT))
        self.assertIn("65536", caught.exception.message)
        self.assertEqual(self.replica.props.write_out_step, 1024 * 1024)
        self.replica.set_write_out_step(65536)
        self.write([("INSERT INTO item VALUES (?, ?, ?)", GLib.Variant("(xsd)", (1, "pear", 2.5)))])
        self.assertEqual(self.fresh(), [(1, "pear")])


class TestMemory(Replica, unittest.TestCase):
    PROVIDER = "memory"


class TestLmdb(Replica, unittest.TestCase):
    PROVIDER = "lmdb"


class TestSqlite(Replica, unittest.TestCase):
    PROVIDER = "sqlite"


if __name__ == "__main__":
    unittest.main()
