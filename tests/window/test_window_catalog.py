#!/usr/bin/python3
# test_window_catalog.py: `qstore catalog` shows an unsafe window's tables
# as a kind of their own, apart from the user's tables
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: test_window_catalog.py QSTORE-TOOL

import json
import subprocess
import sys
import tempfile

import gi

gi.require_version("QStore", "1.0")
from gi.repository import QStore  # noqa: E402

PARTS = ["active", "arrivals", "generations", "index_entries", "kicks", "markers",
         "receipts", "rows", "safe_rows", "wait_receipts"]


def main():
    tool = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="qstore-window-catalog-") as tmpdir:
        uri = "lmdb:%s/store" % tmpdir
        db = QStore.Database.open(uri, QStore.OpenFlags.NONE)
        db.exec("CREATE TABLE orders (id INTEGER PRIMARY KEY, v)")
        QStore.UnsafeWindow.new(db, "stock")
        db.close()

        out = subprocess.run([tool, "--store", uri, "catalog", "--json"], check=True,
                             capture_output=True, text=True).stdout
        kinds = {}
        for line in out.splitlines():
            entry = json.loads(line)
            kinds.setdefault(entry["kind"], []).append(entry["name"])
        assert kinds["table"] == ["orders"], kinds
        assert kinds["unsafe_window_table"] == ["_qstore_window_stock_" + p for p in PARTS], kinds

        plain = subprocess.run([tool, "--store", uri, "catalog"], check=True,
                               capture_output=True, text=True).stdout
        assert "unsafe_window_table\tmain._qstore_window_stock_receipts\tCREATE TABLE" in plain
        assert "\ntable\tmain.orders\t" in plain
    print("qstore catalog: %d window tables, 1 user table" % len(PARTS))


if __name__ == "__main__":
    main()
