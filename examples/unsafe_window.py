#!/usr/bin/python3
# unsafe_window.py: a view fed by events that arrive out of order, from Python
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: unsafe_window.py [LMDB-DIRECTORY]
# Without a directory, the data lives in memory.
#
# Stock levels of a few fruits change with each event. The events are
# delivered shuffled, some twice; the window keeps, for each fruit, the
# state of its newest event, so the pages read the same in any order.

import json
import random
import sys

import gi

gi.require_version("GLib", "2.0")
gi.require_version("QStore", "1.0")
from gi.repository import GLib, QStore  # noqa: E402

FRUITS = ["apple", "banana", "cherry", "date", "elderberry", "fig", "grape"]


def make_stream():
    """24 events, one every minute from 2024-05-01 09:00 UTC: each sets
    a fruit's stock. Its SUID is made from its time."""
    rng = random.Random(7)
    start = GLib.DateTime.new_utc(2024, 5, 1, 9, 0, 0)
    stock = {fruit: 10 for fruit in FRUITS}
    stream = []
    for i in range(24):
        fruit = rng.choice(FRUITS)
        stock[fruit] = max(0, stock[fruit] + rng.randint(-4, 3))
        when = start.add_minutes(i)
        # A fixed random part keeps the example's output the same each run.
        ticks = (when.to_unix() + 62135596800) * 10_000_000
        suid = QStore.suid_new_from_parts(ticks, 1000 + i)
        event = QStore.UnsafeEvent.new("sale-%02d" % i, suid)
        event.set_updated_at(when.to_unix() * 1000)
        event.add_upsert(fruit, json.dumps({"stock": stock[fruit]}), i + 1, suid)
        stream.append(event)
    return stream


def print_pages(window, per_page):
    offset = 0
    while True:
        rows, total = window.query_composed_page(0, per_page, offset, True)
        if len(rows) == 0:
            break
        cells = ["%s=%d" % (row.get_row_key(), json.loads(row.get_value_json())["stock"])
                 for row in rows]
        print("  page %d of %d: %s" % (offset // per_page + 1, -(-total // per_page),
                                       ", ".join(cells)))
        offset += per_page


def main():
    if len(sys.argv) > 1:
        db = QStore.Database.open("lmdb:" + sys.argv[1], QStore.OpenFlags.NONE)
    else:
        db = QStore.Database.open("memory:", QStore.OpenFlags.NONE)
    window = QStore.UnsafeWindow.new(db, "stock")

    stream = make_stream()
    deliveries = stream + random.Random(1).sample(stream, 4)
    random.Random(2).shuffle(deliveries)
    print("Delivering %d events in a shuffled order, %d of them twice"
          % (len(stream), len(deliveries) - len(stream)))
    for event in deliveries:
        window.apply(event)

    print("Stock, newest change first, 3 fruits a page:")
    print_pages(window, 3)

    again = stream[7]
    outcome, duplicate = window.apply(again)
    print("Delivering %s again: %s%s" % (again.get_event_id(), outcome.value_nick,
                                         ", a duplicate" if duplicate else ""))

    # One event id must keep one SUID.
    impostor = QStore.UnsafeEvent.new(again.get_event_id(),
                                      QStore.suid_new_from_parts(1, 1))
    try:
        window.apply(impostor)
    except GLib.Error as error:
        if not error.matches(QStore.unsafe_window_error_quark(),
                             QStore.UnsafeWindowError.SUID_CONTRADICTION):
            raise
        print("The same id with another SUID is refused: %s"
              % QStore.UnsafeWindowError(error.code).value_nick)

    db.close()


if __name__ == "__main__":
    main()
