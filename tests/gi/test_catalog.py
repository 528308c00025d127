#!/usr/bin/python3
# test_catalog.py: the catalog from Python, through GObject introspection
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import shutil
import tempfile
import unittest

import gi

gi.require_version("GLib", "2.0")
gi.require_version("Gio", "2.0")
gi.require_version("QStore", "1.0")
from gi.repository import GLib, Gio, QStore  # noqa: E402

Kind = QStore.CatalogKeyKind


def entries_of(model):
    """The items of a GListModel, as a list."""
    return [model.get_item(i) for i in range(model.get_n_items())]


class CatalogTests:
    """Run once per persistent provider; subclasses set NAME."""

    NAME = None

    def setUp(self):
        self.tmpdir = tempfile.mkdtemp(prefix="qstore-gi-catalog-")
        if self.NAME == "sqlite":
            self.uri = "sqlite:%s/store.db" % self.tmpdir
        else:
            self.uri = "%s:%s/store" % (self.NAME, self.tmpdir)

        db = QStore.Database.open(self.uri, QStore.OpenFlags.NONE)
        db.exec("CREATE TABLE Items (id INTEGER PRIMARY KEY, "
                "name TEXT NOT NULL COLLATE NOCASE DEFAULT 'x', price REAL, UNIQUE (name));"
                "CREATE INDEX items_price ON items (price DESC);"
                "CREATE VIEW cheap AS SELECT name FROM items WHERE price < 10;"
                "INSERT INTO items (name, price) VALUES ('pen', 2.5), ('book', 12)")
        self.assertTrue(db.close())

    def tearDown(self):
        shutil.rmtree(self.tmpdir, ignore_errors=True)

    def test_list_entries(self):
        provider = QStore.Provider.new_for_uri(self.uri, QStore.OpenFlags.READ_ONLY)
        model = QStore.catalog_list_entries(provider)
        self.assertIsInstance(model, Gio.ListModel)
        self.assertEqual(model.get_item_type(), QStore.CatalogEntry.__gtype__)
        entries = entries_of(model)

        by_kind = {}
        for entry in entries:
            by_kind.setdefault(entry.get_kind(), []).append(entry)

        (view,) = by_kind[Kind.VIEW]
        self.assertEqual((view.get_schema(), view.get_name()), ("main", "cheap"))
        self.assertEqual(view.props.ddl, "CREATE VIEW cheap AS SELECT name FROM items "
                                         "WHERE price < 10")

        (table,) = by_kind[Kind.TABLE]
        self.assertEqual(table.get_name(), "items")
        self.assertIsNone(table.get_error())
        self.assertTrue(table.get_ddl().startswith("CREATE TABLE Items ("))
        self.assertIn("CREATE INDEX items_price ON items (price DESC);\n", table.get_ddl())
        self.assertEqual(bytes(table.get_key().get_data()), b"main.items")

        columns = entries_of(table.get_columns())
        self.assertEqual([c.get_name() for c in columns], ["id", "name", "price"])
        self.assertEqual([c.props.declared_type for c in columns], ["INTEGER", "TEXT", "REAL"])
        self.assertEqual(columns[0].get_primary_key_position(), 1)
        self.assertEqual(columns[1].get_collation(), QStore.Collation.NOCASE)
        self.assertTrue(columns[1].get_not_null())
        self.assertEqual(columns[1].get_default_value(), "'x'")
        self.assertEqual(list(table.get_index_names()),
                         ["sqlite_autoindex_Items_1", "items_price"])
        self.assertEqual(list(table.get_index_ddl()),
                         ["", "CREATE INDEX items_price ON items (price DESC)"])

        meta = {e.get_name(): e.get_value() for e in by_kind[Kind.META]}
        self.assertEqual(meta["clean_shutdown"], "[]")
        self.assertGreater(int(meta["tx"]), 0)
        self.assertIsNone(by_kind[Kind.META][0].get_schema())

        self.assertEqual(QStore.catalog_get_row_count(provider, None, "items"), 2)
        self.assertEqual(QStore.catalog_get_row_count(provider, "main", "nothing"), -1)
        provider.close_all()

    def test_rehydration_result(self):
        db = QStore.Database.open(self.uri, QStore.OpenFlags.NONE)
        result = db.get_rehydration_result()
        self.assertEqual(list(result.get_tables()), ["main.Items"])
        self.assertIn("main.items_price", list(result.get_indexes()))
        self.assertEqual(list(result.get_views()), ["main.cheap"])
        self.assertEqual(list(result.get_materialized_views()), [])
        self.assertEqual(result.get_n_errors(), 0)

        # A dropped table: its view is reported, with its DDL, at the next open.
        db.exec("DROP TABLE items")
        self.assertTrue(db.close())
        db = QStore.Database.open(self.uri, QStore.OpenFlags.NONE)
        result = db.get_rehydration_result()
        self.assertEqual(result.get_n_errors(), 1)
        self.assertEqual(result.get_error_name(0), "main.cheap")
        self.assertTrue(result.get_error_ddl(0).startswith("CREATE VIEW cheap"))
        self.assertIn("no such table", result.get_error_message(0))

        # Reclaiming a loaded table is refused.
        db.exec("CREATE TABLE t (a)")
        with self.assertRaises(GLib.Error) as cm:
            db.reclaim_detached_table(None, "t", None)
        self.assertTrue(cm.exception.matches(QStore.Error.quark(), QStore.Error.EXISTS))
        self.assertTrue(db.reclaim_detached_table(None, "gone", ["x"]))
        self.assertTrue(db.close())


class TestLmdb(CatalogTests, unittest.TestCase):
    NAME = "lmdb"


class TestSqlite(CatalogTests, unittest.TestCase):
    NAME = "sqlite"


if __name__ == "__main__":
    unittest.main(verbosity=2)
