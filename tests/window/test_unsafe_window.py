#!/usr/bin/python3
# test_unsafe_window.py: the unsafe window through the typelib
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import unittest

import gi

gi.require_version("QStore", "1.0")
from gi.repository import GLib, QStore  # noqa: E402


def suid(n):
    return QStore.suid_new_from_parts(n, 0)


def upsert(event_id, n, key, value):
    event = QStore.UnsafeEvent.new(event_id, suid(n))
    event.set_updated_at(n)
    event.add_upsert(key, value, n, suid(n))
    return event


class UnsafeWindowTest(unittest.TestCase):
    def setUp(self):
        self.db = QStore.Database.open("memory:", QStore.OpenFlags.NONE)
        self.window = QStore.UnsafeWindow.new(self.db, "view")

    def tearDown(self):
        self.db.close()

    def test_apply_outcomes(self):
        outcome, duplicate = self.window.apply(upsert("e5", 5, "a", '{"n": 5}'))
        self.assertEqual(outcome, QStore.UnsafeOutcome.APPLIED)
        self.assertFalse(duplicate)
        outcome, duplicate = self.window.apply(upsert("e5", 5, "a", '{"n": 5}'))
        self.assertEqual(outcome, QStore.UnsafeOutcome.NO_CHANGE)
        self.assertTrue(duplicate)
        outcome, duplicate = self.window.apply(upsert("e3", 3, "a", '{"n": 3}'))
        self.assertEqual(outcome, QStore.UnsafeOutcome.OLDER)

        patch = QStore.UnsafeEvent.new("e6", suid(6))
        patch.add_patch("b", '{"x": 1}', 6, suid(6))
        patch.add_index_entry("i", "b", GLib.Variant("x", 6))
        self.assertEqual(patch.get_n_mutations(), 1)
        outcome, duplicate = self.window.apply(patch)
        self.assertEqual(outcome, QStore.UnsafeOutcome.PATCH_NOT_FOUND)

    def test_errors(self):
        self.window.apply(upsert("e5", 5, "a", "1"))
        with self.assertRaises(GLib.Error) as caught:
            self.window.apply(upsert("e5", 6, "a", "1"))
        self.assertTrue(caught.exception.matches(QStore.unsafe_window_error_quark(),
                                                 QStore.UnsafeWindowError.SUID_CONTRADICTION))
        self.assertFalse(QStore.unsafe_window_error_is_retryable(caught.exception))

        cas = upsert("e7", 7, "a", "7")
        cas.set_expected_row_version(1)
        with self.assertRaises(GLib.Error) as caught:
            self.window.apply(cas)
        self.assertTrue(caught.exception.matches(QStore.unsafe_window_error_quark(),
                                                 QStore.UnsafeWindowError.ROW_CAS_MISMATCH))
        self.assertTrue(QStore.unsafe_window_error_is_retryable(caught.exception))

        with self.assertRaises(GLib.Error) as caught:
            self.window.apply(QStore.UnsafeEvent.new("bad", "123"))
        self.assertTrue(caught.exception.matches(QStore.error_quark(),
                                                 QStore.Error.INVALID_ARGUMENT))
        self.assertIn("suid", caught.exception.message)

    def test_pages_and_meta(self):
        self.window.put_safe_row(0, "a", '"safe"', 1, suid(4))
        for n, key in ((5, "b"), (6, "c"), (7, "d")):
            self.window.apply(upsert("e%d" % n, n, key, str(n)))
        rows, total = self.window.query_composed_page(0, 2, 1, False)
        self.assertEqual(total, 4)
        self.assertEqual([(row.get_row_key(), row.get_value_json(), row.get_safe())
                          for row in rows], [("b", "5", False), ("c", "6", False)])
        rows, total = self.window.query_composed_page(0, 1, 0, True)
        self.assertEqual(rows.get_item(0).get_source_suid(), suid(7))

        safe, observed, rebuild = self.window.read_meta(0)
        self.assertEqual((safe, observed, rebuild), ("", suid(7), False))
        self.window.observe_safe_receipt(0, "e7", suid(7))
        behind = self.window.observe_arrival(0, "late", suid(2))
        self.assertTrue(behind)
        safe, observed, rebuild = self.window.read_meta(0)
        self.assertEqual((safe, rebuild), (suid(7), True))
        with self.assertRaises(GLib.Error) as caught:
            self.window.query_composed_page(0, 10, 0, False)
        self.assertTrue(caught.exception.matches(QStore.unsafe_window_error_quark(),
                                                 QStore.UnsafeWindowError.BEHIND_FRONTIER))
        self.assertTrue(self.window.has_target_receipt("e7", suid(7)))
        self.assertFalse(self.window.has_target_receipt("e7", suid(8)))

    def test_kicks_and_collection(self):
        self.window.activate_generation(0, 1)
        event = upsert("e5", 5, "a", "5")
        event.set_record_arrival(True)
        self.window.apply(event)
        acquired, target = self.window.acquire_kick("worker", 0, 1000)
        self.assertTrue(acquired)
        self.assertEqual(target, suid(5))
        with self.assertRaises(GLib.Error) as caught:
            self.window.acquire_kick("other", 10, 1000)
        self.assertTrue(caught.exception.matches(QStore.unsafe_window_error_quark(),
                                                 QStore.UnsafeWindowError.KICK_LEASE_HELD))
        settled, dirty = self.window.finish_kick("worker", suid(5))
        self.assertEqual((settled, dirty), (True, False))

        self.assertFalse(self.window.garbage_collect(0, 1, "a", 5, suid(5), ""))
        self.window.observe_safe_receipt(0, "e5", suid(5))
        self.assertEqual(self.window.collect_eligible(0, 1, suid(5)), 1)
        rows, total = self.window.query_composed_page(0, 10, 0, False)
        self.assertEqual(total, 0)

    def test_suids(self):
        now = QStore.suid_new_for_time(GLib.DateTime.new_now_utc())
        self.assertEqual(len(now), QStore.SUID_LENGTH)
        self.assertTrue(QStore.suid_validate(now, "suid"))
        self.assertLess(QStore.suid_compare(suid(1), now), 0)
        with self.assertRaises(GLib.Error):
            QStore.suid_validate("1" * 29, "suid")

    def test_internal_tables(self):
        self.assertTrue(QStore.UnsafeWindow.is_internal_table_name("_qstore_window_view_rows"))
        self.assertFalse(QStore.UnsafeWindow.is_internal_table_name("orders"))
        # Whether the user's table list shows them or not, they are the window's.
        for table in self.db.list_tables():
            self.assertTrue(QStore.UnsafeWindow.is_internal_table_name(table))
        self.assertEqual(self.window.props.name, "view")
        self.assertEqual(self.window.get_database(), self.db)

    def test_test_seams_are_not_public(self):
        for name in ("set_test_hooks", "set_fast_path", "get_n_fast_applies",
                     "record_arrival", "begin", "lock"):
            self.assertFalse(hasattr(QStore.UnsafeWindow, name), name)
        self.assertFalse(hasattr(QStore, "UnsafeWindowTestHook"))


if __name__ == "__main__":
    unittest.main()
