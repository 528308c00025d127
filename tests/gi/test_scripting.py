#!/usr/bin/python3
# test_scripting.py: SQL from Python the way a sqlite3 user writes it
#
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Parameters as tuples, lists and dicts of plain values; rows as tuples;
the database and its transactions as context managers; errors that carry
their code; every value at its edges. Runs once per persistent provider
and on memory:."""

import enum
import gc
import math
import os
import shutil
import sqlite3
import tempfile
import unittest
import weakref

import gi

gi.require_version("GLib", "2.0")
gi.require_version("GIRepository", "2.0")
gi.require_version("QStore", "1.0")
from gi.repository import GIRepository, GLib, QStore  # noqa: E402

INT64_MAX = 2**63 - 1
INT64_MIN = -2**63


class Scripting:
    """Subclasses set PROVIDER."""

    PROVIDER = None

    def setUp(self):
        self.tmpdir = tempfile.mkdtemp(prefix="qstore-gi-scripting-")
        if self.PROVIDER == "memory":
            self.uri = "memory:"
        elif self.PROVIDER == "sqlite":
            self.uri = "sqlite:" + os.path.join(self.tmpdir, "shop.db")
        else:
            self.uri = "%s:%s" % (self.PROVIDER, os.path.join(self.tmpdir, "shop"))
        self.db = QStore.Database.open(self.uri)
        self.db.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
                        "price REAL, photo BLOB, extra)")

    def tearDown(self):
        try:
            self.db.close()
        finally:
            shutil.rmtree(self.tmpdir, ignore_errors=True)

    def reopen(self):
        if self.PROVIDER != "memory":
            self.db.close()
            self.db = QStore.Database.open(self.uri)

    # Parameters

    def test_positional_parameters(self):
        db = self.db
        self.assertEqual(db.execute("INSERT INTO item (name, price, photo) VALUES (?, ?, ?)",
                                    ("pear", 0.5, b"\x89PNG\0")), 1)
        self.assertEqual(db.execute("INSERT INTO item (name, price, photo) VALUES (?, ?, ?)",
                                    ["apple", None, b""]), 1)
        self.assertEqual(db.execute("INSERT INTO item (name, price) VALUES (?1, ?1)",
                                    ("7",)), 1)
        self.reopen()
        rows = self.db.query("SELECT name, price, photo, typeof(photo) FROM item "
                             "ORDER BY id").fetchall()
        self.assertEqual(rows, [("pear", 0.5, b"\x89PNG\0", "blob"),
                                ("apple", None, b"", "blob"),
                                ("7", 7.0, None, "null")])

    def test_named_parameters(self):
        db = self.db
        db.execute("INSERT INTO item (name, price) VALUES (:name, :price)",
                   {"name": "pear", "price": 0.5})
        self.assertEqual(db.execute("UPDATE item SET price = @price WHERE name = $name",
                                    {"price": 0.25, "name": "pear"}), 1)
        self.assertEqual(db.execute("UPDATE item SET price = :price WHERE name = :name",
                                    {":price": 0.75, ":name": "nothing"}), 0)
        self.assertEqual(db.query("SELECT price FROM item WHERE name = :n", {"n": "pear"}).fetchall(),
                         [(0.25,)])

    def test_parameter_mistakes(self):
        db = self.db
        with self.assertRaises(QStore.InvalidArgumentError) as cm:
            db.execute("INSERT INTO item (name) VALUES (?)", ())
        self.assertIn("takes 1 parameter but 0 were given", cm.exception.message)
        with self.assertRaises(QStore.InvalidArgumentError) as cm:
            db.execute("INSERT INTO item (name) VALUES (:name)", {})
        self.assertIn("No value for parameter “:name”", cm.exception.message)
        with self.assertRaises(QStore.InvalidArgumentError) as cm:
            db.execute("INSERT INTO item (name) VALUES (:name)", {"name": "x", "price": 1})
        self.assertIn("“price” is not a parameter of the statement", cm.exception.message)
        with self.assertRaises(QStore.InvalidArgumentError) as cm:
            db.execute("INSERT INTO item (id, name) VALUES (?, :name)", {"name": "x"})
        self.assertIn("is positional", cm.exception.message)
        with self.assertRaises(TypeError):
            db.execute("INSERT INTO item (name) VALUES (?)", ({"not": "a value"},))
        with self.assertRaises(TypeError):
            db.execute("INSERT INTO item (name) VALUES (?)", "pear")
        with self.assertRaises(OverflowError):
            db.execute("INSERT INTO item (name, extra) VALUES ('x', ?)", (2**63,))
        with self.assertRaises(ValueError) as cm:
            db.execute("INSERT INTO item (name) VALUES (?)", ("a\0b",))
        self.assertIn("CAST(? AS TEXT)", str(cm.exception))
        with self.assertRaises(ValueError):
            db.execute("INSERT INTO item (name) VALUES (?)", ("\udc80",))
        with self.assertRaises(ValueError):
            db.execute("SELECT 1\0; DROP TABLE item")
        # Nothing of the refused statements was written.
        self.assertEqual(db.query("SELECT count(*) FROM item").fetchall(), [(0,)])

    def test_executemany(self):
        n = self.db.executemany("INSERT INTO item (name, price) VALUES (?, ?)",
                                [("a", 1.0), ("b", 2.0), ("c", None)])
        self.assertEqual(n, 3)
        # All or nothing: the duplicate undoes the whole batch.
        with self.assertRaises(QStore.ConstraintError):
            self.db.executemany("INSERT INTO item (name) VALUES (?)", [("d",), ("a",)])
        self.assertEqual([r[0] for r in self.db.query("SELECT name FROM item ORDER BY name")],
                         ["a", "b", "c"])

    # Prepared statements

    def test_values_bound_as_sqlite_binds_them(self):
        # Parameters are bound with typed calls: each plain value must reach
        # SQL as Python's sqlite3 binds it, and each GLib.Variant as the
        # GVariant parameters of query() carry it.
        class Kind(enum.IntEnum):
            SEVEN = 7

        native = sqlite3.connect(":memory:")
        sql = "SELECT ?1, typeof(?1), quote(?1)"
        statement = self.db.prepare(sql)
        self.assertIsInstance(statement, QStore.PreparedStatement)
        for value in [None, 0, -1, INT64_MAX, INT64_MIN, 0.0, -0.0, 2.5, math.inf, -math.inf,
                      math.nan, "", "pear", "\U0001f600é", b"", b"\x00\xff", True, False,
                      Kind.SEVEN]:
            with self.subTest(value=value):
                expected = native.execute(sql, (value,)).fetchall()
                self.assertEqual(self.db.query(sql, (value,)).fetchall(), expected)
                self.assertEqual(statement.query([value]).fetchall(), expected)
                self.assertEqual(statement.query_row([value]), expected[0])
                self.assertEqual(self.db.query_row(sql, (value,)), expected[0])
        for value in [bytearray(b"ab"), memoryview(b"cd")]:
            self.assertEqual(statement.query((value,)).fetchall(),
                             native.execute(sql, (bytes(value),)).fetchall())
        for value in [GLib.Variant("s", "boxed"), GLib.Variant("i", -7), GLib.Variant("mv", None),
                      GLib.Variant("ay", b"\x01")]:
            with self.subTest(value=value):
                expected = self.db.query(sql, GLib.Variant.new_tuple(value)).fetchall()
                self.assertEqual(statement.query((value,)).fetchall(), expected)
        named = self.db.prepare("SELECT :a, @b, $c")
        self.assertEqual(named.query({"a": 1, "b": "two", "$c": None}).fetchall(),
                         [(1, "two", None)])
        # Values stay bound between runs.
        self.assertEqual(named.query().fetchall(), [(1, "two", None)])

    def test_query_row(self):
        db = self.db
        db.executemany("INSERT INTO item (name, price, photo, extra) VALUES (?, ?, ?, ?)",
                       [("a", 1.5, b"\x01\x00", INT64_MAX), ("b", None, None, "text"),
                        ("c", 3, b"", 7)])
        sql = "SELECT name, price, photo, extra FROM item WHERE id >= ? ORDER BY id"
        self.assertEqual(db.query_row(sql, (1,)), ("a", 1.5, b"\x01\x00", INT64_MAX))
        self.assertEqual(db.query_row(sql, [2]), ("b", None, None, "text"))
        self.assertIsNone(db.query_row(sql, (4,)))
        self.assertEqual(db.query_row("SELECT count(*) FROM item"), (3,))
        self.assertEqual(db.prepare("SELECT :n * 2").query_row({"n": 21}), (42,))

        # The statement stays on the row, for step() to go on from, as
        # sqlite3's fetchone() leaves its cursor; each call runs the
        # statement anew, and so sees what was written since.
        first = db.prepare("SELECT name FROM item ORDER BY id DESC")
        self.assertEqual(first.query_row(), ("c",))
        db.execute("INSERT INTO item (name) VALUES (?)", ("d",))
        self.assertTrue(first.step())
        self.assertEqual(first.get_text(0), "b")
        self.assertEqual(first.query_row(), ("d",))

        # A write runs and gives no row; one that fails raises and writes
        # nothing; so do mistakes in the parameters.
        insert = db.prepare("INSERT INTO item (name) VALUES (?)")
        self.assertIsNone(insert.query_row(("e",)))
        with self.assertRaises(QStore.ConstraintError):
            insert.query_row(("e",))
        with self.assertRaises(QStore.InvalidArgumentError):
            db.query_row(sql, (1, 2))
        with self.assertRaises(QStore.InvalidArgumentError):
            db.query_row(sql)
        with self.assertRaises(OverflowError):
            db.query_row(sql, (2**63,))
        self.assertEqual(db.query_row("SELECT count(*), group_concat(name) FROM item"),
                         (5, "a,b,c,d,e"))

    def test_more_parameter_mistakes(self):
        # Each mistake is refused before anything is written.
        cases = [
            ("INSERT INTO item (name) VALUES (?)", ("a", "b"), QStore.InvalidArgumentError,
             "takes 1 parameter but 2 were given"),
            ("INSERT INTO item (name) VALUES (:name)", {"name": "x", ":name": "y"},
             QStore.InvalidArgumentError, "“:name” is given twice"),
            ("INSERT INTO item (name) VALUES (?)", 7, TypeError, "not int"),
            ("INSERT INTO item (name) VALUES (?)", (GLib.Variant("(ii)", (1, 2)),),
             QStore.InvalidArgumentError, "Parameter 1"),
            ("INSERT INTO item (name) VALUES (?)", (None,), QStore.ConstraintError,
             "NOT NULL constraint failed: item.name"),
        ]
        for sql, params, error, part in cases:
            with self.subTest(sql=sql, params=params):
                with self.assertRaises(error) as cm:
                    self.db.execute(sql, params)
                self.assertIn(part, str(cm.exception))
                # The same from a statement prepared by hand.
                with self.assertRaises(error):
                    self.db.prepare(sql).execute(params)
        self.assertEqual(self.db.query("SELECT count(*) FROM item").fetchall(), [(0,)])

    def test_kept_statements_do_not_keep_the_database(self):
        # query() and execute() keep their statements prepared; dropping
        # the database without closing it still finalizes it, so its
        # location can be opened again for writing.
        self.db.execute("INSERT INTO item (name) VALUES (?)", ("kept",))
        self.assertEqual(self.db.query("SELECT name FROM item WHERE name = ?", ("kept",)).fetchall(),
                         [("kept",)])
        finalized = []
        self.db.weak_ref(lambda: finalized.append(True))
        wrapper = weakref.ref(self.db)
        self.db = None
        gc.collect()
        self.assertIsNone(wrapper())
        self.assertEqual(finalized, [True])
        self.db = QStore.Database.open(self.uri)
        self.db.execute("CREATE TABLE IF NOT EXISTS item (name)")
        self.db.execute("INSERT INTO item (name) VALUES (?)", ("again",))
        if self.PROVIDER != "memory":
            self.assertEqual(sorted(r[0] for r in self.db.query("SELECT name FROM item")),
                             ["again", "kept"])

    def test_prepared_statement_across_ddl(self):
        lookup = self.db.prepare("SELECT * FROM item WHERE id = ?")
        self.db.execute("INSERT INTO item (id, name) VALUES (1, 'a')")
        self.assertEqual(lookup.query((1,)).fetchall(), [(1, "a", None, None, None)])
        self.db.execute("ALTER TABLE item ADD COLUMN added DEFAULT 'new'")
        self.assertEqual(lookup.query((1,)).fetchall(), [(1, "a", None, None, None, "new")])
        self.db.execute("DROP TABLE item")
        with self.assertRaises(QStore.NotFoundError):
            lookup.query((1,))
        with self.assertRaises(QStore.InvalidArgumentError):
            self.db.prepare("SELECT 1; SELECT 2")
        with self.assertRaises(QStore.SyntaxError):
            self.db.prepare("SELEC 1")

    # Values at their edges

    def test_value_edges(self):
        db = self.db
        db.execute("INSERT INTO item (id, name, extra) VALUES (?, ?, ?)", (1, "", b""))
        db.execute("INSERT INTO item (id, name, extra) VALUES (?, ?, ?)", (2, "max", INT64_MAX))
        db.execute("INSERT INTO item (id, name, extra) VALUES (?, ?, ?)", (3, "min", INT64_MIN))
        db.execute("INSERT INTO item (id, name, price, extra) VALUES (?, ?, ?, ?)",
                   (4, "zero", -0.0, -0.0))
        db.execute("INSERT INTO item (id, name, extra) VALUES (?, ?, ?)", (5, "true", True))
        db.execute("INSERT INTO item (id, name, extra) VALUES (?, ?, ?)", (6, "nan", math.nan))
        db.execute("INSERT INTO item (id, name, extra) VALUES (?, ?, ?)", (7, "inf", -math.inf))
        db.execute("INSERT INTO item (id, name, extra) VALUES (?, ?, CAST(? AS TEXT))",
                   (8, "nul", b"a\0b"))
        db.execute("INSERT INTO item (id, name, extra) VALUES (?, ?, CAST(? AS TEXT))",
                   (9, "latin1", b"caf\xe9"))
        db.execute("INSERT INTO item (id, name, extra) VALUES (?, ?, ?)", (10, "\U0001f600", "é"))
        self.reopen()
        rows = self.db.query("SELECT id, name, extra, typeof(extra), hex(extra) FROM item "
                             "ORDER BY id").fetchall()
        self.assertEqual(rows[0], (1, "", b"", "blob", ""))
        self.assertEqual(rows[1], (2, "max", INT64_MAX, "integer", str(INT64_MAX).encode().hex().upper()))
        self.assertEqual(rows[2][2:4], (INT64_MIN, "integer"))
        self.assertEqual(rows[4][2:4], (1, "integer"))
        self.assertEqual(rows[5][2:4], (None, "null"))          # NaN is NULL, as in SQLite
        self.assertEqual(rows[6][2:4], (-math.inf, "real"))
        # Text a GLib string cannot hold reads back made valid; the store
        # keeps every byte, and CAST(… AS BLOB) gives them back.
        self.assertEqual(rows[7][2:], ("a\ufffdb", "text", "610062"))
        self.assertEqual(rows[8][2:], ("caf\ufffd", "text", "636166E9"))
        self.assertEqual(self.db.query("SELECT CAST(extra AS BLOB) FROM item WHERE id IN (8, 9) "
                                       "ORDER BY id").fetchall(), [(b"a\0b",), (b"caf\xe9",)])
        self.assertEqual(rows[9][1:4], ("\U0001f600", "é", "text"))
        # -0.0 keeps its sign where SQLite keeps it (no affinity), and
        # becomes 0.0 in a REAL column, as SQLite stores it.
        price, extra = self.db.query("SELECT price, extra FROM item WHERE id = 4")[0]
        self.assertEqual((math.copysign(1, price), math.copysign(1, extra)), (1.0, -1.0))

    def test_subclassed_values(self):
        # Subclasses of int, float and str go as their plain values, and a
        # bool as the integer SQLite makes of it.
        class Kind(enum.IntEnum):
            SEVEN = 7

        class Name(str):
            pass

        class Price(float):
            pass

        self.assertEqual(self.db.query("SELECT ?1, typeof(?1), ?2, typeof(?2), ?3, ?4, ?5",
                                       (Kind.SEVEN, Name("pear"), Price(2.5), False, True)).get_row(0),
                         (7, "integer", "pear", "text", 2.5, 0, 1))
        self.assertEqual(type(self.db.query("SELECT ?", (Kind.SEVEN,)).get_value(0, 0)), int)

    def test_empty_blob_is_a_blob(self):
        for value in (b"", bytearray(), memoryview(b"")):
            self.assertEqual(self.db.query("SELECT typeof(?1), length(?1), ?1", (value,)).get_row(0),
                             ("blob", 0, b""))
        self.assertEqual(self.db.query("SELECT typeof(x''), ?1 = x''", (b"",)).get_row(0),
                         ("blob", 1))

    # Results

    def test_rows_are_tuples(self):
        db = self.db
        db.executemany("INSERT INTO item (name, price) VALUES (?, ?)", [("a", 1.5), ("b", None)])
        result = db.query("SELECT id, name, price FROM item ORDER BY id")
        rows = [(1, "a", 1.5), (2, "b", None)]
        self.assertEqual(list(result), rows)
        self.assertEqual([result.get_row(i) for i in range(result.get_n_rows())], rows)
        self.assertEqual([result[0], result[-1]], rows)
        self.assertEqual(result[:], rows)
        self.assertEqual(len(result), 2)
        self.assertEqual(result.column_names, ("id", "name", "price"))
        self.assertEqual(result.get_value(1, 1), "b")
        self.assertEqual(result.get_value(1, 2), None)
        with self.assertRaises(IndexError):
            result[2]
        with self.assertRaises(IndexError):
            result.get_value(0, 3)
        # The GListModel items (what a Gtk.ColumnView shows) unpack the same.
        item = result.get_item(0)
        self.assertIsInstance(item, QStore.Row)
        self.assertEqual(tuple(item), rows[0])
        self.assertEqual(item.get_values(), rows[0])
        self.assertEqual((item[1], len(item), item.get_value(2)), ("a", 3, 1.5))
        for (id_, name, price), expected in zip(db.query("SELECT id, name, price FROM item"), rows):
            self.assertEqual((id_, name, price), expected)
        self.assertFalse(db.query("SELECT * FROM item WHERE 0"))

    # Errors

    def test_errors_carry_their_code(self):
        self.db.execute("INSERT INTO item (name) VALUES (?)", ("pear",))
        with self.assertRaises(QStore.ConstraintError) as cm:
            self.db.execute("INSERT INTO item (name) VALUES (?)", ("pear",))
        e = cm.exception
        self.assertIsInstance(e, GLib.Error)
        self.assertIsInstance(e, QStore.DatabaseError)
        self.assertEqual(e.code, QStore.Error.CONSTRAINT)
        self.assertIs(type(e.code), QStore.Error)
        self.assertTrue(e.matches(QStore.error_quark(), QStore.Error.CONSTRAINT))
        self.assertIn("UNIQUE constraint failed: item.name", e.message)

        try:
            self.db.exec("SELEC * FROM item")
        except GLib.Error as e:
            self.assertTrue(e.matches(QStore.error_quark(), QStore.Error.SYNTAX))
            self.assertIsInstance(e, QStore.SyntaxError)
        else:
            self.fail("a syntax error was accepted")
        for sql in ("SELECT (1", "SELECT 'open", "INSERT INTO item VALUES"):
            with self.assertRaises(QStore.SyntaxError):
                self.db.query(sql)
        with self.assertRaises(QStore.NotFoundError):
            self.db.query("SELECT * FROM nowhere")
        with self.assertRaises(QStore.NotFoundError):
            QStore.Database.open("nosuchprovider:")
        # Every code has its class.
        for code in QStore.Error.__enum_values__.values():
            cls = [c for c in vars(QStore).values()
                   if isinstance(c, type) and issubclass(c, QStore.DatabaseError)
                   and c.__name__.upper().replace("ERROR", "") ==
                   code.value_nick.upper().replace("-", "")]
            self.assertEqual(len(cls), 1, code)

    # Context managers

    def test_database_context_manager(self):
        self.db.close()
        with QStore.Database.open(self.uri) as db:
            db.execute("CREATE TABLE IF NOT EXISTS item (id INTEGER PRIMARY KEY, name TEXT)")
            db.execute("INSERT INTO item (name) VALUES (?)", ("inside",))
        with self.assertRaises(QStore.ClosedError):
            db.execute("SELECT 1")
        # Closed also when the block raises, and the block's error wins.
        with self.assertRaises(KeyError):
            with QStore.Database.open(self.uri) as db:
                raise KeyError("boom")
        with self.assertRaises(QStore.ClosedError):
            db.query("SELECT 1")
        self.db = QStore.Database.open(self.uri)

    def test_transactions(self):
        db = self.db
        with db.transaction():
            db.execute("INSERT INTO item (name) VALUES (?)", ("kept",))
        with self.assertRaises(ZeroDivisionError):
            with db.transaction():
                db.execute("INSERT INTO item (name) VALUES (?)", ("undone",))
                1 / 0
        with db.transaction():
            db.execute("INSERT INTO item (name) VALUES (?)", ("outer",))
            with self.assertRaises(QStore.ConstraintError):
                with db.transaction():
                    db.execute("INSERT INTO item (name) VALUES (?)", ("inner",))
                    db.execute("INSERT INTO item (name) VALUES (?)", ("kept",))
            with db.transaction():
                db.execute("INSERT INTO item (name) VALUES (?)", ("inner kept",))
        # A transaction opens again after each of those.
        with db.transaction():
            pass
        self.reopen()
        self.assertEqual([r[0] for r in self.db.query("SELECT name FROM item ORDER BY id")],
                         ["kept", "outer", "inner kept"])

    def test_read_transaction(self):
        db = self.db
        coordinator = db.get_coordinator()
        db.execute("INSERT INTO item (name) VALUES (?)", ("first",))
        coordinator.begin_read()
        try:
            self.assertEqual(db.query("SELECT count(*) FROM item")[0], (1,))
            with self.assertRaises(QStore.ReadOnlyError):
                db.execute("INSERT INTO item (name) VALUES (?)", ("refused",))
        finally:
            coordinator.end_read()
        db.execute("INSERT INTO item (name) VALUES (?)", ("second",))
        self.assertEqual([r[0] for r in db.query("SELECT name FROM item ORDER BY id")],
                         ["first", "second"])
        with self.assertRaises(QStore.BusyError):
            with db.transaction():
                db.execute("INSERT INTO item (name) VALUES (?)", ("undone",))
                coordinator.begin_read()
        self.assertEqual(db.query("SELECT count(*) FROM item")[0], (2,))

    # The catalog

    def test_catalog(self):
        self.db.execute("CREATE INDEX item_price ON item (price)")
        self.db.execute("CREATE VIEW cheap AS SELECT name FROM item WHERE price < 1")
        entries = {(e.get_kind(), e.get_name()) for e in self.db.catalog()}
        self.assertIn((QStore.CatalogKeyKind.TABLE, "item"), entries)
        self.assertIn((QStore.CatalogKeyKind.VIEW, "cheap"), entries)
        (table,) = [e for e in self.db.catalog() if e.get_name() == "item"]
        self.assertIn("item_price", list(table.get_index_names()))


class TestMemory(Scripting, unittest.TestCase):
    PROVIDER = "memory"


class TestLmdb(Scripting, unittest.TestCase):
    PROVIDER = "lmdb"


class TestSqlite(Scripting, unittest.TestCase):
    PROVIDER = "sqlite"


class TestTypelib(unittest.TestCase):
    def test_fault_injection_is_not_api(self):
        repository = GIRepository.Repository.get_default()
        for name in ("fault_arm", "fault_disarm_all", "fault_check"):
            self.assertIsNone(repository.find_by_name("QStore", name))
            self.assertFalse(hasattr(QStore, name))

    def test_new_api_is_in_the_typelib(self):
        info = GIRepository.Repository.get_default().find_by_name("QStore", "Database")
        self.assertIsNotNone(GIRepository.object_info_find_method(info, "execute"))
        self.assertEqual(QStore.Error.SYNTAX.value_nick, "syntax")
        self.assertEqual(int(QStore.Error.SYNTAX), int(QStore.Error.CLOSED) + 1)


if __name__ == "__main__":
    unittest.main()
