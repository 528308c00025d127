#!/usr/bin/python3
# test_window_bench.py: qstore-bench --layer unsafe-window runs and
# reports what its workload did (a correctness test, not a timing one)
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: test_window_bench.py QSTORE-BENCH

import json
import os
import subprocess
import sys
import tempfile

EVENTS = 200


def run(bench, provider, tmpdir):
    result = subprocess.run([bench, "--provider", provider, "--layer", "unsafe-window",
                             "--rows", str(EVENTS), "--dir", tmpdir],
                            capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        sys.exit("%s: exit %d: %s" % (provider, result.returncode, result.stderr))
    return [json.loads(line) for line in result.stdout.splitlines()]


def main():
    bench = sys.argv[1]
    # Memory-backed where there is one: this checks results, not timings.
    shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="qstore-window-bench-", dir=shm) as tmpdir:
        for provider in ("memory", "lmdb", "sqlite"):
            lines = run(bench, provider, tmpdir)
            phases = {line["phase"]: line for line in lines}
            assert list(phases) == ["plain_upsert", "apply_in_order", "apply_shuffled",
                                    "composed_page"], (provider, list(phases))
            for line in lines:
                assert line["engine"] == "qstore-%s-unsafe-window" % provider, line
                assert line["ops"] > 0 and line["seconds"] > 0, line
            # Every event applies in SUID order; shuffled, some are older.
            assert phases["plain_upsert"]["checksum"] == EVENTS
            assert phases["apply_in_order"]["checksum"] == EVENTS
            assert 0 < phases["apply_shuffled"]["checksum"] < EVENTS
            assert phases["apply_in_order"]["vs_plain_upsert"] > 0
            assert phases["composed_page"]["view_rows"] == EVENTS // 4
            assert phases["composed_page"]["page_rows"] == 20
            print("%s: %s" % (provider, ", ".join("%s %.0f/s" % (line["phase"], line["ops_per_sec"])
                                                  for line in lines)))
        bad = subprocess.run([bench, "--provider", "memory", "--layer", "window"],
                             capture_output=True, text=True)
        assert bad.returncode == 2 and "unsafe-window" in bad.stderr, bad


if __name__ == "__main__":
    main()
