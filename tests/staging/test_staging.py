#!/usr/bin/python3
# test_staging.py: imports, staged runs and their leftovers from Python,
# through GObject introspection (what a GTK page or a script uses)
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import shutil
import tempfile
import time
import unittest

import gi

gi.require_version("GLib", "2.0")
gi.require_version("Gio", "2.0")
gi.require_version("QStore", "1.0")
from gi.repository import GLib, Gio, QStore  # noqa: E402

MINUTE = 60 * 1000


def stream_of(text):
    return Gio.MemoryInputStream.new_from_bytes(GLib.Bytes.new(text.encode()))


class StagingTests(unittest.TestCase):
    def setUp(self):
        self.tmpdir = tempfile.mkdtemp(prefix="qstore-gi-staging-")
        self.uri = "lmdb:%s/store" % self.tmpdir
        self.db = QStore.Database.open(self.uri, QStore.OpenFlags.NONE)
        self.db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL, data BLOB)")

    def tearDown(self):
        if self.db is not None:
            self.db.close()
        shutil.rmtree(self.tmpdir, ignore_errors=True)

    def rows(self):
        result = self.db.query("SELECT id, name, data FROM t ORDER BY id", None)
        return [tuple(result.get_row(i)) for i in range(result.get_n_rows())]

    def test_import_with_progress(self):
        imp = QStore.Import.new(self.db, "t")
        imp.props.format = QStore.ImportFormat.JSONL
        imp.props.mode = QStore.ImportMode.REPLACE
        seen = []
        imp.connect("progress", lambda _imp, rows, read: seen.append((rows, read)))
        text = "".join('{"id": %d, "name": "n%d", "data": {"$blob": "AAE="}}\n' % (i, i)
                       for i in range(1, 1001))
        self.assertTrue(imp.run(stream_of(text), None))
        self.assertEqual(imp.get_rows(), 1000)
        self.assertEqual(imp.get_staging_table(), "_qstore_staging_t")
        self.assertEqual(seen[-1], (1000, len(text)))
        self.assertEqual(self.rows()[0], (1, "n1", b"\x00\x01"))

    def test_run_file(self):
        path = "%s/rows.csv" % self.tmpdir
        with open(path, "w") as f:
            f.write("id,name\n1,a\n2,b\n")
        imp = QStore.Import.new(self.db, "t")
        self.assertTrue(imp.run_file(Gio.File.new_for_path(path), None))
        self.assertEqual(imp.props.source_name, path)
        self.assertEqual(imp.props.source_size, 16)
        self.assertEqual(imp.props.rows, 2)
        with self.assertRaises(GLib.Error) as raised:
            imp.run_file(Gio.File.new_for_path(path + ".missing"), None)
        self.assertTrue(raised.exception.matches(QStore.error_quark(), QStore.Error.NOT_FOUND))

    def test_error_place(self):
        imp = QStore.Import.new(self.db, "t")
        with self.assertRaises(GLib.Error) as raised:
            imp.run(stream_of("id,name\n1,a\n2,\n"), None)
        self.assertTrue(raised.exception.matches(QStore.error_quark(), QStore.Error.CONSTRAINT))
        self.assertEqual((imp.get_error_line(), imp.get_error_column(),
                          imp.get_error_column_name()), (3, 2, "name"))
        self.assertEqual(self.rows(), [])

    def test_cancel(self):
        imp = QStore.Import.new(self.db, "t")
        cancellable = Gio.Cancellable()
        imp.connect("progress", lambda *args: cancellable.cancel())
        text = "id,name\n" + "".join("%d,x\n" % i for i in range(1, 3000))
        with self.assertRaises(GLib.Error) as raised:
            imp.run(stream_of(text), cancellable)
        self.assertTrue(raised.exception.matches(Gio.io_error_quark(), Gio.IOErrorEnum.CANCELLED))
        self.assertEqual(self.rows(), [])

    def test_leftovers_list_and_sweep(self):
        # A resumable run that failed, and an atomic one left by a "crash"
        # (its marker row and table, aged past the threshold).
        imp = QStore.Import.new(self.db, "t")
        imp.props.mode = QStore.ImportMode.REPLACE
        imp.props.atomic = False
        with self.assertRaises(GLib.Error):
            imp.run(stream_of("id,name\n1,a\n2,\n"), None)

        leftovers = QStore.StagingLeftovers.read(self.db)
        self.assertIsInstance(leftovers, Gio.ListModel)
        self.assertEqual(leftovers.get_n_items(), 1)
        run = leftovers.get_item(0)
        self.assertEqual(run.props.target, "t")
        self.assertEqual(list(run.props.tables), ["_qstore_staging_t"])
        self.assertTrue(run.props.resumable)
        self.assertFalse(run.props.droppable)
        self.assertTrue(run.props.reason.startswith("kept: resumable"))
        self.assertGreaterEqual(run.props.heartbeat_age, 0)

        self.db.exec("UPDATE _qstore_replace_in_progress SET resumable = 0, "
                     "heartbeat = heartbeat - 3600000")
        leftovers = QStore.StagingLeftovers.read(self.db)
        self.assertEqual(leftovers.get_n_droppable(), 1)
        swept = QStore.staging_sweep(self.db)
        self.assertEqual([r.get_target() for r in swept], ["t"])
        self.assertEqual(QStore.StagingLeftovers.read(self.db).get_n_items(), 0)
        self.assertEqual(self.db.list_tables(), ["t"])

    def test_rule_without_a_store(self):
        now = int(time.time() * 1000)
        runs = [QStore.StagingRun.new("a", ["_qstore_staging_a"], now, now - 45 * MINUTE, False),
                QStore.StagingRun.new("b", ["_qstore_staging_b"], now, now - 45 * MINUTE, True),
                QStore.StagingRun.new("c", ["_qstore_staging_c"], now, 0, False)]
        threshold = QStore.staging_stale_after_ms("abc", "40")
        self.assertEqual(threshold, 40 * MINUTE)
        leftovers = QStore.StagingLeftovers.new(runs, now, threshold)
        self.assertEqual([r.get_target() for r in leftovers.get_droppable()], ["a", "c"])
        self.assertIn("_qstore_staging_a", leftovers.describe())

    def test_open_note(self):
        imp = QStore.Import.new(self.db, "t")
        imp.props.mode = QStore.ImportMode.REPLACE
        imp.props.atomic = False
        with self.assertRaises(GLib.Error):
            imp.run(stream_of("id,name\n1,a\n2,\n"), None)
        self.db.close()
        self.db = QStore.Database.open(self.uri, QStore.OpenFlags.READ_ONLY)
        leftovers = self.db.get_rehydration_result().get_staging_leftovers()
        self.assertEqual(leftovers.get_n_items(), 1)
        self.assertEqual(leftovers.get_item(0).get_target(), "t")


if __name__ == "__main__":
    unittest.main()
