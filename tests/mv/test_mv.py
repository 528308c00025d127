#!/usr/bin/python3
# test_mv.py: materialized views from Python, through GObject introspection
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import shutil
import tempfile
import unittest

import gi

gi.require_version("Gio", "2.0")
gi.require_version("QStore", "1.0")
from gi.repository import Gio, GLib, QStore  # noqa: E402

Strategy = QStore.MaterializedViewStrategy


def items_of(model):
    """The items of a GListModel, as a list."""
    return [model.get_item(i) for i in range(model.get_n_items())]


class MaterializedViewTests(unittest.TestCase):
    def setUp(self):
        self.tmpdir = tempfile.mkdtemp(prefix="qstore-gi-mv-")
        self.uri = "lmdb:%s/store" % self.tmpdir

    def tearDown(self):
        shutil.rmtree(self.tmpdir)

    def test_list_refresh_reopen(self):
        db = QStore.Database.open(self.uri, QStore.OpenFlags.NONE)
        db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, g TEXT, x INT);"
                "CREATE INDEX t_g ON t (g);"
                "INSERT INTO t VALUES (1, 'a', 10), (2, 'a', 20), (3, 'b', 5);"
                "CREATE MATERIALIZED VIEW sums AS SELECT g, sum(x) AS s FROM t GROUP BY g;"
                "CREATE MATERIALIZED VIEW big AS SELECT id, x FROM t WHERE x > 8")

        views = db.list_materialized_views()
        self.assertIsInstance(views, Gio.ListModel)
        by_name = {view.get_name(): view for view in items_of(views)}
        self.assertEqual(sorted(by_name), ["big", "sums"])
        self.assertEqual(by_name["sums"].get_strategy(), Strategy.GROUP_RECOMPUTE)
        self.assertEqual(by_name["big"].props.strategy, Strategy.INVERSE_PROJECTION)
        self.assertEqual(by_name["sums"].get_sources(), ["main.t"])
        self.assertEqual(by_name["big"].props.body, "SELECT id, x FROM t WHERE x > 8")
        self.assertFalse(by_name["sums"].props.stale)
        self.assertIsNone(by_name["sums"].get_stale_reason())

        db.exec("UPDATE t SET x = 1 WHERE id = 2")
        rows = db.query("SELECT g, s FROM sums ORDER BY g", None)
        self.assertEqual([rows.get_row(i) for i in range(rows.get_n_rows())],
                         [("a", 11), ("b", 5)])
        self.assertNotIn("sums", db.list_tables())

        db.exec("ALTER TABLE t ALTER COLUMN x SET COLLATE NOCASE")
        stale = {v.get_name(): v for v in items_of(db.list_materialized_views())}
        self.assertTrue(stale["sums"].get_stale())
        self.assertIn("t.x", stale["sums"].get_stale_reason())
        db.exec("REFRESH MATERIALIZED VIEW sums; REFRESH MATERIALIZED VIEW big")

        db.set_materialized_view_rebuild_row_threshold(1)
        self.assertEqual(db.get_materialized_view_rebuild_row_threshold(), 1)
        self.assertTrue(db.close())

        db = QStore.Database.open(self.uri, QStore.OpenFlags.NONE)
        result = db.get_rehydration_result()
        self.assertEqual(sorted(result.get_adopted_materialized_views()),
                         ["main.big", "main.sums"])
        self.assertEqual(result.get_refilled_materialized_views(), [])

        # The table holding a view's rows reads, and only the view writes it.
        contents = db.get_table(None, "big")
        self.assertEqual(contents.get_row_count(), 1)
        with self.assertRaises(GLib.Error) as raised:
            contents.insert(GLib.Variant("(xx)", (9, 9)), QStore.Conflict.ABORT)
        self.assertTrue(raised.exception.matches(QStore.error_quark(), QStore.Error.READ_ONLY))
        self.assertTrue(db.close())

        # The read-only catalog listing: the view's query, and its contents
        # table marked as such, with the view's columns.
        provider = QStore.Provider.new_for_uri(self.uri, QStore.OpenFlags.READ_ONLY)
        entries = items_of(QStore.catalog_list_entries(provider))
        kinds = {(e.get_kind(), e.get_name()): e for e in entries}
        view = kinds[(QStore.CatalogKeyKind.MATERIALIZED_VIEW, "big")]
        table = kinds[(QStore.CatalogKeyKind.TABLE, "big")]
        self.assertEqual(view.get_body(), "SELECT id, x FROM t WHERE x > 8")
        self.assertTrue(table.is_materialized_view_contents())
        self.assertTrue(table.props.materialized_view_contents)
        self.assertFalse(kinds[(QStore.CatalogKeyKind.TABLE, "t")].is_materialized_view_contents())
        self.assertEqual([c.get_name() for c in items_of(view.get_columns())], ["id", "x"])
        provider.close_all()


if __name__ == "__main__":
    unittest.main()
