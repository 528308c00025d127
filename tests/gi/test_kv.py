#!/usr/bin/python3
# test_kv.py: the key/value layer from Python, through GObject introspection
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import os
import shutil
import tempfile
import unittest

import gi

gi.require_version("GLib", "2.0")
gi.require_version("QStore", "1.0")
from gi.repository import GLib, QStore  # noqa: E402

# Every provider qstore ships; all of them must load from the typelib.
PROVIDERS = ("memory", "lmdb", "sqlite")

Caps = QStore.Capabilities
EXPECTED_CAPABILITIES = {
    "memory": Caps.ATOMIC_BATCH | Caps.SNAPSHOTS,
    "lmdb": Caps.PERSISTENT | Caps.ATOMIC_BATCH | Caps.SNAPSHOTS | Caps.MULTI_PROCESS
        | Caps.WRITER_LOCK | Caps.WRITE_TXN,
    "sqlite": Caps.PERSISTENT | Caps.ATOMIC_BATCH | Caps.SNAPSHOTS | Caps.MULTI_PROCESS
        | Caps.WRITER_LOCK | Caps.WRITE_TXN,
}

NONE = QStore.WriteFlags.NONE


def collect(it):
    """Drains an iterator into a list of (key, value) byte strings."""
    entries = []
    while it.next():
        entries.append((bytes(it.peek_key()), bytes(it.peek_value())))
    return entries


def data(gbytes):
    """The content of a GLib.Bytes (an empty one reads as b"", never None)."""
    return bytes(gbytes.get_data() or b"")


class QStoreErrorMixin:
    def assertQStoreError(self, code, func, *args):
        with self.assertRaises(GLib.Error) as cm:
            func(*args)
        err = cm.exception
        self.assertEqual(err.domain, GLib.quark_to_string(QStore.Error.quark()))
        self.assertEqual(err.code, int(code), err.message)
        self.assertTrue(err.matches(QStore.Error.quark(), code))
        return err


class TestModule(QStoreErrorMixin, unittest.TestCase):
    def test_list_providers(self):
        names = QStore.list_providers()
        self.assertEqual(names, sorted(names))
        for name in PROVIDERS:
            self.assertIn(name, names)

    def test_lookup_capabilities(self):
        for name in PROVIDERS:
            with self.subTest(provider=name):
                caps = QStore.lookup_provider_capabilities(name)
                self.assertIsInstance(caps, QStore.Capabilities)
                self.assertEqual(caps, EXPECTED_CAPABILITIES[name])

    def test_unknown_provider(self):
        err = self.assertQStoreError(QStore.Error.NOT_FOUND,
                                     QStore.Provider.new, "no-such", None,
                                     QStore.OpenFlags.NONE)
        # The message lists the providers that do exist.
        self.assertIn("memory", err.message)
        self.assertQStoreError(QStore.Error.NOT_FOUND,
                               QStore.Provider.new_for_uri, "no-such:/x",
                               QStore.OpenFlags.NONE)
        self.assertQStoreError(QStore.Error.NOT_FOUND,
                               QStore.lookup_provider_capabilities, "no-such")

    def test_bad_uri(self):
        self.assertQStoreError(QStore.Error.INVALID_ARGUMENT,
                               QStore.Provider.new_for_uri, "memory",
                               QStore.OpenFlags.NONE)
        self.assertQStoreError(QStore.Error.INVALID_ARGUMENT,
                               QStore.Provider.new_for_uri, "memory:?atomic=maybe",
                               QStore.OpenFlags.NONE)

    def test_store_names(self):
        self.assertEqual(QStore.store_name_for_table("Main", "T"), "main.t")
        self.assertEqual(QStore.store_name_for_index("main", "t", "By_Name"),
                         "main.t_idx_by_name")

    def test_codec_key(self):
        C = QStore.Collation
        collations = [C.BINARY, C.NOCASE]
        asc = [False, False]
        rows = [(1, "b"), (1, "ABC"), (-5, "z"), (2, "a"), (1, "abd")]
        keys = [data(QStore.codec_encode_key(GLib.Variant("(xs)", r), collations, asc))
                for r in rows]
        # memcmp order is SQL order: by integer, then text without case.
        order = sorted(range(len(rows)), key=lambda i: keys[i])
        self.assertEqual([rows[i] for i in order],
                         [(-5, "z"), (1, "ABC"), (1, "abd"), (1, "b"), (2, "a")])

        # A descending column reverses its order.
        hi = data(QStore.codec_encode_key(GLib.Variant("(x)", (2,)), [C.BINARY], [True]))
        lo = data(QStore.codec_encode_key(GLib.Variant("(x)", (1,)), [C.BINARY], [True]))
        self.assertLess(hi, lo)

        # Keys decode to the normal form of each value.
        key = QStore.codec_encode_key(GLib.Variant("(xs)", (7, "MiXed")), collations, asc)
        decoded = QStore.codec_decode_key(key, asc)
        self.assertEqual(decoded.unpack(), (7, "mixed"))

        self.assertQStoreError(QStore.Error.INVALID_ARGUMENT, QStore.codec_encode_key,
                               GLib.Variant("(xs)", (1, "a")), [C.BINARY], [False])

    def test_codec_row(self):
        row = GLib.Variant("(xdsaymv)", (42, 2.5, "Keep Case  ", b"\x00\xff\x01", None))
        encoded = QStore.codec_encode_row(row)
        self.assertIsInstance(encoded, GLib.Bytes)
        decoded = QStore.codec_decode_row(encoded)
        self.assertEqual(decoded.unpack(), (42, 2.5, "Keep Case  ", [0, 255, 1], None))
        self.assertTrue(QStore.value_is_null(decoded.get_child_value(4).get_variant()))

        self.assertQStoreError(QStore.Error.CORRUPT, QStore.codec_decode_row,
                               GLib.Bytes.new(data(encoded)[:-1]))


class TestLocationLock(QStoreErrorMixin, unittest.TestCase):
    def test_acquire_query_release(self):
        tmpdir = tempfile.mkdtemp(prefix="qstore-gi-")
        try:
            path = os.path.join(tmpdir, "x.lock")
            self.assertEqual(QStore.LocationLock.query(path), (False, -1))
            lock = QStore.LocationLock.acquire(path, "The test location", 0)
            self.assertTrue(lock.is_held())
            self.assertEqual(lock.get_path(), path)
            self.assertEqual(QStore.LocationLock.query(path), (True, os.getpid()))
            self.assertQStoreError(QStore.Error.BUSY, QStore.LocationLock.acquire,
                                   path, "The test location", 0)
            lock.release()
            self.assertFalse(lock.is_held())
            self.assertEqual(QStore.LocationLock.query(path), (False, -1))
            self.assertFalse(os.path.exists(path))
        finally:
            shutil.rmtree(tmpdir)


class TestCheckReport(unittest.TestCase):
    """What layers above the providers build on: a report they add to."""

    def test_problems_checked_notes(self):
        report = QStore.CheckReport.new()
        self.assertTrue(report.is_clean())
        report.add_checked("table", "main.t", 3)
        report.add_checked("table", "main.u", 4)
        report.add_problem("table", "main.t", GLib.Bytes.new(b"\x01k"),
                           "The row has no index entry")
        report.add_problem(QStore.CHECK_SCOPE_FILE, "data.mdb", None, "Damaged")
        report.add_note("The views were not read")
        self.assertFalse(report.is_clean())
        self.assertEqual(report.get_n_problems(), 2)
        problem = report.get_problem(0)
        self.assertEqual(problem.get_scope(), "table")
        self.assertEqual(problem.get_object(), "main.t")
        self.assertEqual(data(problem.get_key()), b"\x01k")
        self.assertEqual(problem.get_message(), "The row has no index entry")
        self.assertIsNone(report.get_problem(1).get_key())
        self.assertEqual(report.get_n_checked("table"), 2)
        self.assertEqual(report.get_n_checked_items("table"), 7)
        self.assertEqual(report.get_n_checked(QStore.CHECK_SCOPE_STORE), 0)
        self.assertEqual(report.get_notes(), ["The views were not read"])
        json = report.to_json()
        self.assertIn('"clean":false', json)
        self.assertIn('"key":"016b"', json)


class ProviderTests(QStoreErrorMixin):
    """Run once per provider; subclasses set NAME."""

    NAME = None

    def setUp(self):
        self.tmpdir = tempfile.mkdtemp(prefix="qstore-gi-")
        self.location = self.location_for(self.NAME)
        self.provider = self.open()

    def tearDown(self):
        self.provider.close_all()
        shutil.rmtree(self.tmpdir)

    def location_for(self, name):
        if name == "memory":
            return None
        if name == "sqlite":
            return os.path.join(self.tmpdir, "data.db")
        # A directory that does not exist yet: opening creates it.
        return os.path.join(self.tmpdir, "data")

    def open(self, flags=QStore.OpenFlags.NONE, query=""):
        uri = "%s:%s%s" % (self.NAME, self.location or "", query)
        provider = QStore.Provider.new_for_uri(uri, flags)
        self.assertEqual(provider.get_name(), self.NAME)
        self.assertEqual(provider.get_location(), self.location or "")
        return provider

    def fill(self, kv, keys):
        for k in keys:
            self.assertTrue(kv.put(k, b"v:" + k, NONE))

    def test_capabilities(self):
        caps = self.provider.get_capabilities()
        self.assertEqual(caps, EXPECTED_CAPABILITIES[self.NAME])
        self.assertEqual(caps, QStore.lookup_provider_capabilities(self.NAME))
        self.assertFalse(self.provider.is_closed())

    def test_put_get_delete(self):
        kv = self.provider.open_store("main.t")
        self.assertEqual(kv.get_name(), "main.t")
        self.assertIsNone(kv.get(b"k1"))

        self.assertTrue(kv.put(b"k1", b"one", NONE))
        self.assertTrue(kv.put(b"k\x00\xff", b"\x00binary\xff", QStore.WriteFlags.SYNC))
        self.assertTrue(kv.put(b"empty", b"", NONE))
        value = kv.get(b"k1")
        self.assertIsInstance(value, GLib.Bytes)
        self.assertEqual(data(value), b"one")
        self.assertEqual(data(kv.get(b"k\x00\xff")), b"\x00binary\xff")
        # An empty value is a value, not an absent key.
        self.assertIsNotNone(kv.get(b"empty"))
        self.assertEqual(data(kv.get(b"empty")), b"")
        # A proper prefix is another key.
        self.assertIsNone(kv.get(b"k"))

        self.assertTrue(kv.put(b"k1", b"uno", NONE))
        self.assertEqual(data(kv.get(b"k1")), b"uno")
        self.assertTrue(kv.delete(b"k1", NONE))
        self.assertIsNone(kv.get(b"k1"))
        self.assertTrue(kv.delete(b"never-there", NONE))

        # Stores are separate.
        other = self.provider.open_store("main.u")
        self.assertIsNone(other.get(b"empty"))
        self.assertEqual(self.provider.list_stores(), ["main.t"])

        self.assertQStoreError(QStore.Error.INVALID_ARGUMENT, kv.put, b"", b"x", NONE)

    def test_iterate_bounds(self):
        kv = self.provider.open_store("main.t")
        self.fill(kv, [b"d", b"b", b"\xff", b"a", b"c", b"b\x00", b"e", b"ba"])
        everything = [b"a", b"b", b"b\x00", b"ba", b"c", b"d", b"e", b"\xff"]

        def keys(bounds):
            entries = collect(kv.iterate(bounds))
            for k, v in entries:
                self.assertEqual(v, b"v:" + k)
            return [k for k, _ in entries]

        self.assertEqual(keys(None), everything)
        self.assertEqual(keys(QStore.Bounds.new()), everything)

        b = QStore.Bounds.new()
        b.set_gte(b"b")
        b.set_lt(b"d")
        self.assertEqual(keys(b), [b"b", b"b\x00", b"ba", b"c"])

        b.set_reverse(True)
        self.assertEqual(keys(b), [b"c", b"ba", b"b\x00", b"b"])

        b.set_limit(2)
        self.assertEqual(keys(b), [b"c", b"ba"])

        b.set_reverse(False)
        self.assertEqual(keys(b), [b"b", b"b\x00"])

        b.set_limit(0)
        self.assertEqual(keys(b), [])

        b.unset_limit()
        b.set_gt(b"b")
        b.set_lte(b"d")
        self.assertEqual(keys(b), [b"b\x00", b"ba", b"c", b"d"])

        b = QStore.Bounds.new()
        b.set_gt(b"e")
        self.assertEqual(keys(b), [b"\xff"])
        b.set_reverse(True)
        b.set_gte(b"\xff\xff")
        self.assertEqual(keys(b), [])

        # One iterator walks range after range, sought to each, halfway
        # through a walk too.
        it = kv.iterate(None)
        self.assertTrue(it.next())
        b = QStore.Bounds.new()
        b.set_gte(b"b")
        b.set_lt(b"d")
        self.assertTrue(it.seek(b))
        self.assertEqual([k for k, _ in collect(it)], [b"b", b"b\x00", b"ba", b"c"])
        b.set_reverse(True)
        b.set_limit(1)
        it.seek(b)
        self.assertEqual(collect(it), [(b"c", b"v:c")])
        it.seek(None)
        self.assertEqual([k for k, _ in collect(it)], everything)
        b.set_limit(-1)
        self.assertQStoreError(QStore.Error.INVALID_ARGUMENT, it.seek, b)

        # The iterator also hands out copies that outlive it.
        it = kv.iterate(None)
        self.assertTrue(it.next())
        key, value = it.get_key(), it.get_value()
        del it
        self.assertEqual((data(key), data(value)), (b"a", b"v:a"))

    def test_negative_limit(self):
        kv = self.provider.open_store("main.t")
        self.fill(kv, [b"a"])
        b = QStore.Bounds.new()
        b.set_limit(-1)
        err = self.assertQStoreError(QStore.Error.INVALID_ARGUMENT, kv.iterate, b)
        self.assertIn("-1", err.message)

    def test_batch(self):
        kv = self.provider.open_store("main.t")
        self.fill(kv, [b"gone", b"kept"])
        batch = kv.new_batch()
        self.assertEqual(batch.get_store().get_name(), "main.t")
        batch.put(b"x", b"1")
        batch.put(b"y", b"2")
        batch.delete(b"gone")
        batch.put(b"x", b"last")  # the last write to a key wins
        batch.put(b"z", b"")
        self.assertEqual(batch.get_n_ops(), 5)
        # Nothing is visible before the write.
        self.assertIsNone(kv.get(b"x"))
        self.assertIsNotNone(kv.get(b"gone"))

        self.assertTrue(batch.write(NONE))
        self.assertEqual(batch.get_n_ops(), 0)
        self.assertEqual(collect(kv.iterate(None)),
                         [(b"kept", b"v:kept"), (b"x", b"last"), (b"y", b"2"), (b"z", b"")])

    def test_atomic_batch(self):
        stores = [self.provider.open_store(n) for n in ("main.a", "main.b", QStore.CATALOG_STORE_NAME)]
        batch = self.provider.begin_atomic_batch()
        self.assertIsInstance(batch, QStore.AtomicBatch)
        for i, kv in enumerate(stores):
            batch.put(kv, b"key", b"value %d" % i)
            batch.put(kv, b"only-%d" % i, b"x")
        batch.delete(stores[1], b"only-1")
        self.assertEqual(batch.get_n_ops(), 7)
        for kv in stores:
            self.assertIsNone(kv.get(b"key"))

        self.assertTrue(batch.commit(QStore.WriteFlags.SYNC))
        self.assertEqual(batch.get_n_ops(), 0)
        for i, kv in enumerate(stores):
            self.assertEqual(data(kv.get(b"key")), b"value %d" % i)
        self.assertEqual(collect(stores[0].iterate(None)),
                         [(b"key", b"value 0"), (b"only-0", b"x")])
        self.assertEqual(collect(stores[1].iterate(None)), [(b"key", b"value 1")])
        self.assertEqual(self.provider.list_stores(),
                         sorted(["main.a", "main.b", QStore.CATALOG_STORE_NAME]))

    def test_atomic_batch_withheld(self):
        self.provider.close_all()
        self.provider = self.open(query="?atomic=0")
        self.assertTrue(self.provider.get_flags() & QStore.OpenFlags.NO_ATOMIC_BATCH)
        self.assertFalse(self.provider.get_capabilities() & Caps.ATOMIC_BATCH)
        self.assertIsNone(self.provider.begin_atomic_batch())

    def test_snapshot(self):
        kv = self.provider.open_store("main.t")
        self.fill(kv, [b"a", b"b"])
        snapshot = self.provider.begin_snapshot()
        self.assertIsInstance(snapshot, QStore.Snapshot)

        kv.put(b"a", b"changed", NONE)
        kv.put(b"c", b"new", NONE)
        kv.delete(b"b", NONE)

        self.assertEqual(data(snapshot.get(kv, b"a")), b"v:a")
        self.assertEqual(data(snapshot.get(kv, b"b")), b"v:b")
        self.assertIsNone(snapshot.get(kv, b"c"))
        found, value = snapshot.lookup(kv, b"a")
        self.assertTrue(found)
        self.assertEqual(bytes(value), b"v:a")
        self.assertEqual(collect(snapshot.iterate(kv, None)), [(b"a", b"v:a"), (b"b", b"v:b")])
        b = QStore.Bounds.new()
        b.set_reverse(True)
        b.set_limit(1)
        self.assertEqual(collect(snapshot.iterate(kv, b)), [(b"b", b"v:b")])
        b.set_limit(-3)
        self.assertQStoreError(QStore.Error.INVALID_ARGUMENT, snapshot.iterate, kv, b)

        # The store itself sees the latest state.
        self.assertEqual(collect(kv.iterate(None)), [(b"a", b"changed"), (b"c", b"new")])
        del snapshot

    def test_coordinator_reads(self):
        kv = self.provider.open_store("main.t")
        self.fill(kv, [b"a", b"b"])
        coordinator = QStore.Coordinator.new(self.provider)
        coordinator.begin()
        coordinator.put(kv, b"a", b"mine")
        self.assertEqual(data(coordinator.get(kv, b"a")), b"mine")
        found, value = coordinator.lookup(kv, b"a")
        self.assertTrue(found)
        self.assertEqual(bytes(value), b"mine")
        found, value = coordinator.lookup(kv, b"b")
        self.assertTrue(found)
        self.assertEqual(bytes(value), b"v:b")
        self.assertFalse(coordinator.lookup(kv, b"zz")[0])
        coordinator.rollback()

    def test_read_only(self):
        kv = self.provider.open_store("main.t")
        self.fill(kv, [b"a"])
        if self.NAME != "memory":
            # Read-only handles on a persistent location see its data.
            self.provider.close_all()
        reader = self.open(QStore.OpenFlags.READ_ONLY)
        store = reader.open_store("main.t")
        if self.NAME != "memory":
            self.assertEqual(data(store.get(b"a")), b"v:a")
        self.assertQStoreError(QStore.Error.READ_ONLY, store.put, b"b", b"x", NONE)
        self.assertQStoreError(QStore.Error.READ_ONLY, store.delete, b"a", NONE)
        batch = store.new_batch()
        batch.put(b"b", b"x")
        self.assertQStoreError(QStore.Error.READ_ONLY, batch.write, NONE)
        self.assertEqual(batch.get_n_ops(), 1)
        self.assertQStoreError(QStore.Error.READ_ONLY, reader.delete_table_stores,
                               "main", "t", None)
        reader.close_all()

    def test_closed(self):
        kv = self.provider.open_store("main.t")
        self.fill(kv, [b"a"])
        it = kv.iterate(None)
        self.provider.close_all()
        self.assertTrue(self.provider.is_closed())
        self.assertQStoreError(QStore.Error.CLOSED, kv.get, b"a")
        self.assertQStoreError(QStore.Error.CLOSED, kv.put, b"a", b"x", NONE)
        self.assertQStoreError(QStore.Error.CLOSED, kv.iterate, None)
        self.assertQStoreError(QStore.Error.CLOSED, it.next)
        self.assertQStoreError(QStore.Error.CLOSED, self.provider.open_store, "main.t")
        self.assertQStoreError(QStore.Error.CLOSED, self.provider.begin_snapshot)
        self.provider.close_all()  # twice is harmless

    def test_nul_in_store_name(self):
        kv = self.provider.open_store("main.t")
        self.fill(kv, [b"a"])
        before = sorted(os.listdir(self.tmpdir))
        for bad in ("a\0b", "main.t\0evil", "\0"):
            with self.subTest(name=bad):
                with self.assertRaises((TypeError, ValueError)):
                    self.provider.open_store(bad)
                with self.assertRaises((TypeError, ValueError)):
                    self.provider.get_store("main", bad)
        with self.assertRaises((TypeError, ValueError)):
            self.provider.delete_table_stores("main", "t", ["i\0x"])
        self.assertEqual(self.provider.list_stores(), ["main.t"])
        self.assertEqual(sorted(os.listdir(self.tmpdir)), before)
        self.assertEqual(collect(kv.iterate(None)), [(b"a", b"v:a")])

    def test_check(self):
        kv = self.provider.open_store("main.t")
        self.fill(kv, [b"a", b"b"])
        report = self.provider.check()
        self.assertTrue(report.is_clean())
        self.assertEqual(report.get_n_problems(), 0)
        self.assertEqual(report.get_n_checked(QStore.CHECK_SCOPE_STORE), 1)
        self.assertEqual(report.get_n_checked_items(QStore.CHECK_SCOPE_STORE), 2)
        self.assertIn('"clean":true', report.to_json())

    def test_writer_lock(self):
        if self.NAME == "memory":
            self.skipTest("a memory store is its opener's alone")
        self.assertQStoreError(QStore.Error.BUSY, self.open)
        self.open(QStore.OpenFlags.READ_ONLY).close_all()

    def test_persistence(self):
        kv = self.provider.open_store("main.t")
        self.fill(kv, [b"a", b"b"])
        self.provider.close_all()
        self.provider = self.open()
        kv = self.provider.open_store("main.t")
        expected = [] if self.NAME == "memory" else [(b"a", b"v:a"), (b"b", b"v:b")]
        self.assertEqual(collect(kv.iterate(None)), expected)


class TestMemory(ProviderTests, unittest.TestCase):
    NAME = "memory"


class TestLmdb(ProviderTests, unittest.TestCase):
    NAME = "lmdb"


class TestSqlite(ProviderTests, unittest.TestCase):
    NAME = "sqlite"


if __name__ == "__main__":
    unittest.main(verbosity=2)
