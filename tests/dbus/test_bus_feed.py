#!/usr/bin/python3
# test_bus_feed.py: Python follows qstore serve through QStore.ChangeFeed
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Runs under dbus-run-session (the `dbus` suite starts one), with the
# typelib of the build tree.

import unittest

import gi

gi.require_version("QStore", "1.0")
from gi.repository import QStore  # noqa: E402

from serverutil import GLib, Server, new_store, remove, spin, wait_until  # noqa: E402


class Heard:
    """What a feed told, in order."""

    def __init__(self, feed):
        self.sets = []
        self.gaps = []
        self.order = ""
        feed.connect("changes", self._changes)
        feed.connect("gap", self._gap)

    def _changes(self, feed, change_set):
        rows = []
        for i in range(change_set.get_n_changes()):
            new = change_set.get_new_row(i)
            old = change_set.get_old_row(i)
            rows.append((change_set.get_schema(i), change_set.get_table(i),
                         change_set.get_op(i),
                         old.unpack() if old is not None else None,
                         new.unpack() if new is not None else None))
        self.sets.append((change_set.get_tx_id(), rows))
        self.order += "c"

    def _gap(self, feed, reason, down_for_ms):
        self.gaps.append((reason, down_for_ms))
        self.order += "g"


class BusFeedTest(unittest.TestCase):
    def setUp(self):
        self.directory, self.store = new_store()
        self.server = Server(self.store, "--allow-writes", "--rows-per-signal", "2",
                             server_id="py")

    def tearDown(self):
        if self.server.process.poll() is None:
            self.server.stop()
        remove(self.directory)

    def test_changes_arrive_in_order_with_their_rows(self):
        feed = QStore.ChangeFeed.new_for_bus_sync(None, "py", QStore.BusFollowFlags.NONE, None)
        self.assertEqual(feed.props.bus_name, "org.qstore.Server.py")
        self.assertIsNotNone(feed.props.server_owner)
        heard = Heard(feed)
        first, _ = self.server.execute("INSERT INTO t VALUES (1, 'a'), (2, NULL), (3, 'c')")
        second, _ = self.server.execute("UPDATE t SET name = 'b' WHERE id = 2")
        third, _ = self.server.execute("DELETE FROM t WHERE id = 1")
        self.assertTrue(wait_until(lambda: len(heard.sets) == 3))
        self.assertEqual([tx for tx, _ in heard.sets], [first, second, third])
        self.assertEqual(heard.sets[0][1], [
            ("main", "t", QStore.ChangeOp.INSERT, None, (1, "a")),
            ("main", "t", QStore.ChangeOp.INSERT, None, (2, None)),
            ("main", "t", QStore.ChangeOp.INSERT, None, (3, "c")),
        ])
        self.assertEqual(heard.sets[1][1],
                         [("main", "t", QStore.ChangeOp.UPDATE, (2, None), (2, "b"))])
        self.assertEqual(heard.sets[2][1],
                         [("main", "t", QStore.ChangeOp.DELETE, (1, "a"), None)])
        self.assertEqual(heard.gaps, [])
        self.assertEqual(feed.get_position(), third)
        feed.close()
        self.assertIsNone(feed.props.server_owner)

    def test_async_on_the_main_loop_and_a_restart(self):
        loop = GLib.MainLoop()
        made = []

        def on_made(source, result):
            made.append(QStore.ChangeFeed.new_for_bus_finish(result))
            loop.quit()

        QStore.ChangeFeed.new_for_bus(None, "org.qstore.Server.py", QStore.BusFollowFlags.NONE,
                                      None, on_made)
        GLib.timeout_add(10000, loop.quit)
        loop.run()
        self.assertEqual(len(made), 1)
        feed = made[0]
        heard = Heard(feed)
        tx, _ = self.server.execute("INSERT INTO t VALUES (1, 'before')")
        self.assertTrue(wait_until(lambda: len(heard.sets) == 1))

        self.assertEqual(self.server.stop(), 0)
        self.assertTrue(wait_until(lambda: feed.props.server_owner is None))
        spin(0.2)
        self.server = Server(self.store, "--allow-writes", server_id="py")
        self.assertTrue(wait_until(lambda: heard.gaps))
        self.assertEqual(heard.gaps[0][0], "server restarted")
        self.assertGreaterEqual(heard.gaps[0][1], 200)
        self.assertTrue(wait_until(lambda: feed.props.server_owner is not None))
        after, _ = self.server.execute("INSERT INTO t VALUES (2, 'after')")
        self.assertTrue(wait_until(lambda: len(heard.sets) == 2))
        self.assertEqual(heard.sets[1][0], after)
        self.assertEqual(heard.sets[1][1][0][4], (2, "after"))
        self.assertEqual(heard.order, "cgc")

    def test_no_such_server(self):
        with self.assertRaises(GLib.Error) as raised:
            QStore.ChangeFeed.new_for_bus_sync(None, "nobody", QStore.BusFollowFlags.NONE, None)
        self.assertTrue(raised.exception.matches(QStore.Error.quark(), QStore.Error.NOT_FOUND))
        self.assertIn("org.qstore.Server.nobody", raised.exception.message)
        with self.assertRaises(GLib.Error) as raised:
            QStore.ChangeFeed.new_for_bus_sync(None, "not-an-id", QStore.BusFollowFlags.NONE, None)
        self.assertTrue(raised.exception.matches(QStore.Error.quark(),
                                                 QStore.Error.INVALID_ARGUMENT))


if __name__ == "__main__":
    unittest.main(verbosity=2)
