#!/usr/bin/python3
# test_changes.py: change streams from Python, through GObject introspection
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import gi

gi.require_version("QStore", "1.0")
from gi.repository import GLib, QStore  # noqa: E402

# Another process writes the store: this script, run with --write.
WRITER = r"""
import sys
import gi
gi.require_version("QStore", "1.0")
from gi.repository import QStore
db = QStore.Database.open(sys.argv[1], QStore.OpenFlags.NONE)
for i in range(int(sys.argv[2])):
    db.exec("INSERT INTO t (name, data) VALUES ('row %d', x'0%d')" % (i, i % 10))
db.exec("UPDATE t SET name = 'renamed' WHERE id = 1")
db.close()
"""


def canonical(value):
    """The canonical JSON qstore_change_digest() hashes, written apart from
    qstore: keys sorted, reals as %.17g (keeping .0), blobs as $blob."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):
        return canonical({"$blob": base64.b64encode(value).decode()})
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = "%.17g" % value
        return text if any(c in text for c in ".en") else text + ".0"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "{" + ",".join(canonical(k) + ":" + canonical(value[k])
                              for k in sorted(value, key=lambda k: k.encode())) + "}"
    return "[" + ",".join(canonical(v) for v in value) + "]"


def python_value(variant):
    """A value of a row, boxed in `v`, as Python sees SQL values."""
    value = variant.unpack() if variant is not None else None
    if isinstance(value, list):   # a blob, `ay`
        return bytes(value)
    return value


def record(change_set, index, old):
    record = (change_set.get_old_record(index) if old
              else change_set.get_new_record(index))
    if record is None:
        return None
    return {name: python_value(record.lookup_value(name, None))
            for name in record.keys()}


class ChangeStreamTests(unittest.TestCase):
    def setUp(self):
        self.tmpdir = tempfile.mkdtemp(prefix="qstore-gi-changes-")
        self.uri = "lmdb:%s/store" % self.tmpdir

    def tearDown(self):
        shutil.rmtree(self.tmpdir)

    def test_subscriber_and_records(self):
        db = QStore.Database.open("memory:", QStore.OpenFlags.NONE)
        db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, data BLOB)")
        feed = db.subscribe_changes()
        self.assertFalse(feed.is_follower())
        self.assertEqual(feed.props.position, db.get_coordinator().get_last_tx_id())
        told = []
        gaps = []
        feed.connect("changes", lambda f, change_set: told.append(change_set))
        feed.connect("gap", lambda f, reason, down: gaps.append(reason))

        db.exec("INSERT INTO t VALUES (1, 'Ada', x'00ff');"
                "UPDATE t SET name = 'Bea', id = 2 WHERE id = 1;"
                "DELETE FROM t")
        self.assertEqual(len(told), 3)
        self.assertEqual(gaps, [])
        insert, update, delete = told
        self.assertEqual(update.get_tx_id(), insert.get_tx_id() + 1)
        self.assertEqual(insert.get_op(0), QStore.ChangeOp.INSERT)
        self.assertEqual(insert.get_names(0), ["id", "name", "data"])
        self.assertEqual(insert.get_key(0).unpack(), (1,))
        self.assertIsNone(insert.get_old_key(0))
        self.assertEqual(record(insert, 0, False),
                         {"id": 1, "name": "Ada", "data": b"\x00\xff"})
        self.assertIsNone(record(insert, 0, True))
        # An update that moves the row: both keys.
        self.assertEqual(update.get_old_key(0).unpack(), (1,))
        self.assertEqual(update.get_key(0).unpack(), (2,))
        self.assertEqual(record(update, 0, True)["name"], "Ada")
        self.assertEqual(record(delete, 0, True)["name"], "Bea")
        self.assertIsNone(delete.get_new_record(0))

        # Digests, checked against one computed here.
        for change_set in told:
            op = {QStore.ChangeOp.INSERT: "insert", QStore.ChangeOp.UPDATE: "update",
                  QStore.ChangeOp.DELETE: "delete"}[change_set.get_op(0)]
            key = list(change_set.get_key(0).unpack())
            key_text = QStore.change_key_text(change_set.get_key(0))
            self.assertEqual(key_text, canonical(key))
            text = canonical({"pipe": "p", "op": op, "key": key_text,
                              "next": record(change_set, 0, False),
                              "prev": record(change_set, 0, True)})
            expected = hashlib.sha256(text.encode()).hexdigest()
            self.assertEqual(QStore.change_digest_for_change(change_set, 0, "p"), expected)
        feed.close()
        db.close()

    def test_subscriber_limit(self):
        db = QStore.Database.open("memory:", QStore.OpenFlags.NONE)
        feeds = [db.subscribe_changes() for _ in range(QStore.CHANGE_FEED_MAX_SUBSCRIBERS)]
        with self.assertRaises(GLib.Error) as raised:
            db.subscribe_changes()
        self.assertTrue(raised.exception.matches(QStore.error_quark(), QStore.Error.BUSY))
        feeds.pop().close()
        feeds.append(db.subscribe_changes())
        db.close()

    def test_follow_another_process(self):
        db = QStore.Database.open(self.uri, QStore.OpenFlags.NONE)
        db.exec("PRAGMA qstore.change_log = 1000;"
                "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, data BLOB)")
        start = db.get_coordinator().get_last_tx_id()
        db.close()

        feed = QStore.ChangeFeed.new_follower(self.uri, start)
        self.assertTrue(feed.is_follower())
        told = []
        gaps = []
        failures = []
        loop = GLib.MainLoop()

        def on_changes(feed, change_set):
            told.append(change_set)
            if len(told) == 21:
                loop.quit()

        feed.connect("changes", on_changes)
        feed.connect("gap", lambda f, reason, down: gaps.append((reason, down)))
        feed.connect("failed", lambda f, error: (failures.append(error), loop.quit()))
        feed.follow()

        writer = subprocess.Popen([sys.executable, "-c", WRITER, self.uri, "20"])
        timeout = GLib.timeout_add_seconds(20, loop.quit)
        loop.run()
        GLib.source_remove(timeout)
        self.assertEqual(writer.wait(), 0)

        self.assertEqual(failures, [])
        self.assertEqual(gaps, [])
        self.assertEqual([c.get_tx_id() for c in told], list(range(start + 1, start + 22)))
        self.assertEqual(feed.get_position(), start + 21)
        self.assertEqual(record(told[3], 0, False),
                         {"id": 4, "name": "row 3", "data": b"\x03"})
        self.assertEqual(told[-1].get_op(0), QStore.ChangeOp.UPDATE)
        self.assertEqual(record(told[-1], 0, False)["name"], "renamed")
        feed.close()
        with self.assertRaises(GLib.Error):
            feed.poll()

    def test_no_log(self):
        QStore.Database.open(self.uri, QStore.OpenFlags.NONE).close()
        with self.assertRaises(GLib.Error) as raised:
            QStore.ChangeFeed.new_follower(self.uri, 0)
        self.assertTrue(raised.exception.matches(QStore.error_quark(), QStore.Error.NOT_FOUND))
        self.assertIn("PRAGMA qstore.change_log", raised.exception.message)

    def test_identity_and_claims(self):
        digest = hashlib.sha256(b"x").hexdigest()
        key = QStore.compose_change_key(digest, 3)
        self.assertEqual(key, digest + ":3")
        self.assertEqual(QStore.parse_change_key(key), (digest, 3))
        self.assertEqual(QStore.parse_change_key("nope")[0], None)
        self.assertIsNone(QStore.compose_change_key("short", 1))

        counter = QStore.OccurrenceCounter.new(1000, 10)
        self.assertEqual([counter.next(digest, t) for t in (0, 1, 2)], [0, 1, 2])
        self.assertEqual(counter.seed_from_change_keys([digest + ":7", "bad"], 3), 1)
        self.assertEqual(counter.next(digest, 4), 8)
        counter.prune(2000)
        self.assertEqual(counter.get_size(), 0)
        self.assertEqual(QStore.OccurrenceCounter.new_for_claims(5).get_window_ms(),
                         2 * QStore.change_claims_get_ttl_ms())
        self.assertEqual(QStore.change_claims_ttl_ms_for_hours("0.5"), 1800000)
        self.assertEqual(QStore.change_claims_ttl_ms_for_hours("zero"), 3600000)

        db = QStore.Database.open(self.uri, QStore.OpenFlags.NONE)
        self.assertTrue(db.claim_change(key))
        self.assertFalse(db.claim_change(key))
        with self.assertRaises(GLib.Error) as raised:
            db.claim_change("not a key")
        self.assertTrue(raised.exception.matches(QStore.error_quark(),
                                                 QStore.Error.INVALID_ARGUMENT))
        self.assertEqual(db.list_change_claims(), [key])
        self.assertEqual(db.sweep_change_claims(), 0)

        db.observe_replica("py", "changes", json.dumps({"position": 5}))
        observations = QStore.ReplicaObservation.list(db.get_provider())
        self.assertEqual(observations.get_n_items(), 1)
        self.assertEqual(observations[0].get_replica_id(), "py")
        self.assertEqual(json.loads(observations[0].get_payload()), {"position": 5})
        self.assertGreaterEqual(observations[0].get_staleness_ms(), 0)
        db.close()


if __name__ == "__main__":
    unittest.main()
