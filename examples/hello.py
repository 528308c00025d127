#!/usr/bin/python3
# hello.py: store, read and walk a few keys with qstore, from Python
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: hello.py [LMDB-DIRECTORY]
# Without a directory, the data lives in memory.

import sys

import gi

gi.require_version("QStore", "1.0")
from gi.repository import QStore  # noqa: E402

FRUITS = [
    ("apple", "red"),
    ("banana", "yellow"),
    ("cherry", "dark red"),
    ("date", "brown"),
    ("elderberry", "purple"),
]

if len(sys.argv) > 1:
    provider = QStore.Provider.new("lmdb", sys.argv[1], QStore.OpenFlags.NONE)
else:
    provider = QStore.Provider.new_for_uri("memory:", QStore.OpenFlags.NONE)
store = provider.open_store("main.fruit")

for fruit, color in FRUITS:
    store.put(fruit.encode(), color.encode(), QStore.WriteFlags.NONE)

print("cherry:", store.get(b"cherry").get_data().decode())

# Keys from "b" up to, not including, "d".
bounds = QStore.Bounds.new()
bounds.set_gte(b"b")
bounds.set_lt(b"d")
print("from b to d:")
it = store.iterate(bounds)
while it.next():
    print("  %s: %s" % (it.peek_key().decode(), it.peek_value().decode()))

provider.close_all()
