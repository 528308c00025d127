#!/usr/bin/python3
# test-damage.py: a damaged LMDB store gives a clean error or the right
# answer, never a crash
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: test-damage.py PATH-TO-QSTORE PATH-TO-DAMAGE-READER
#
# Makes a small lmdb store with the qstore command (a table with an index,
# a materialized view, a store holding a value on overflow pages), then
# runs catalog, stale, kv scan and sql SELECT on damaged copies of its
# data.mdb: truncated at 0, 4096, 8192, half and size - 1 bytes, and
# QSTORE_DAMAGE_COPIES (default 200) copies with one random bit flipped
# (QSTORE_DAMAGE_SEED, fixed unless given, picks them). Core dumps are
# off. Every run must end with exit status 0 (and the same output as on
# the intact store) or a clean error (status 1 or 2, with a message) -
# never a signal.
#
# The same copies are read below the tables, through the provider API
# (damage-reader read: every store iterated, every key looked up), and
# checked with qstore_provider_check() (damage-reader check), both with
# the default open and with ?verify=meta, which leaves the walk to the
# check. Damage the open refuses must be damage the check reports.
#
# A flipped bit inside a key or value is not damage LMDB or qstore can see
# (LMDB keeps no checksums): such a copy may answer with the changed bytes.
# Those runs are counted and printed, not failed; the README says so.

import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile

QSTORE = sys.argv[1]
READER = sys.argv[2]
COPIES = int(os.environ.get("QSTORE_DAMAGE_COPIES", "200"))
SEED = int(os.environ.get("QSTORE_DAMAGE_SEED", "11"))

COMMANDS = [
    ["catalog", "--json"],
    ["stale", "--json"],
    ["kv", "scan", "main.raw", "--json"],
    ["sql", "--json", "SELECT id, name, n FROM t ORDER BY id"],
    ["sql", "--json", "SELECT count(*), sum(n) FROM big_n"],
]

tests = 0
failures = 0


def no_core():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run(argv):
    p = subprocess.run(argv, capture_output=True, preexec_fn=no_core, timeout=120)
    return p.returncode, p.stdout, p.stderr


def qstore(store, args):
    return run([QSTORE, "--store", "lmdb:" + store] + args)


# damage-reader MODE on @uri: (status, output, error code or None).
def reader(mode, uri):
    rc, out, err = run([READER, mode, uri])
    code = None
    if rc == 1 and err.startswith(b"error "):
        code = int(err.split()[1].rstrip(b":"))
    return rc, out, code


def ok(cond, what):
    global tests, failures
    tests += 1
    if cond:
        print("ok %d - %s" % (tests, what))
    else:
        failures += 1
        print("not ok %d - %s" % (tests, what))


def make_store(path):
    rows = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
            "WHERE x < 300) INSERT INTO t SELECT x, printf('name %05d of the test "
            "table', x), x * x FROM c")
    steps = [
        ["sql", "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, n INTEGER)",
         "CREATE INDEX t_name ON t (name)", rows,
         "CREATE MATERIALIZED VIEW big_n AS SELECT id, n FROM t WHERE n > 1000"],
        ["kv", "put", "main.raw", "a", "1"],
        ["kv", "put", "main.raw", "big", "y" * 6000],
    ]
    for step in steps:
        rc, out, err = qstore(path, step)
        if rc != 0:
            sys.exit("cannot make the store: %s" % err.decode())


# Runs every command on a damaged copy; returns (errors, same, different).
def try_copy(store, expected, what):
    errors = same = different = 0
    for i, args in enumerate(COMMANDS):
        rc, out, err = qstore(store, args)
        if rc < 0 or rc >= 128:
            ok(False, "%s: %s was killed (status %d): %s"
               % (what, " ".join(args[:2]), rc, err.decode(errors="replace")))
            return None
        if rc != 0 and not err.strip():
            ok(False, "%s: %s failed without a message" % (what, " ".join(args[:2])))
            return None
        if rc != 0:
            errors += 1
        elif out == expected[i]:
            same += 1
        else:
            different += 1
    return errors, same, different


# Reads and checks a damaged copy through the provider; returns how the
# read went ("error", "same" or "different") and whether the checks saw
# damage, or None after a failure.
def try_provider(store, expected, what):
    results = []
    for mode, uri in (("read", "lmdb:" + store),
                      ("check", "lmdb:" + store),
                      ("check", "lmdb:" + store + "?verify=meta")):
        rc, out, code = reader(mode, uri)
        if rc != 0 and code is None:
            ok(False, "%s: damage-reader %s %s ended with status %d"
               % (what, mode, uri, rc))
            return None
        results.append((rc, out, code))
    (read_rc, read_out, _), checks = results[0], results[1:]
    if read_rc != 0:
        read = "error"
    elif read_out == expected:
        read = "same"
    else:
        read = "different"
    # A check sees damage when it reports some, or when the open refuses
    # the location (the open's walk is the check's).
    seen = [rc != 0 or not out.startswith(b"problems 0\n") for rc, out, code in checks]
    if read == "error" and not all(seen):
        ok(False, "%s: reading failed, but a check reported nothing: %s"
           % (what, [out.decode(errors="replace") for rc, out, code in checks]))
        return None
    return read, any(seen)


def main():
    with tempfile.TemporaryDirectory(prefix="qstore-damage-") as tmp:
        intact = os.path.join(tmp, "intact")
        make_store(intact)
        expected = []
        for args in COMMANDS:
            rc, out, err = qstore(intact, args)
            if rc != 0:
                sys.exit("the intact store fails %s: %s" % (args, err.decode()))
            expected.append(out)
        rc, expected_read, code = reader("read", "lmdb:" + intact)
        if rc != 0:
            sys.exit("the intact store cannot be read through the provider")
        rc, out, code = reader("check", "lmdb:" + intact)
        ok(rc == 0 and out.startswith(b"problems 0\n"),
           "the intact store checks clean")
        data = os.path.join(intact, "data.mdb")
        size = os.path.getsize(data)
        print("# the store: %d bytes; seed %d" % (size, SEED))

        def damaged_copy(name):
            path = os.path.join(tmp, name)
            shutil.rmtree(path, ignore_errors=True)
            os.mkdir(path)
            shutil.copy(data, os.path.join(path, "data.mdb"))
            return path

        for cut in (0, 4096, 8192, size // 2, size - 1):
            path = damaged_copy("cut")
            os.truncate(os.path.join(path, "data.mdb"), cut)
            what = "truncated at %d" % cut
            # Read-only first: a command that writes may start a new store.
            result = try_provider(path, expected_read, what)
            if result is not None:
                ok(result == ("error", True),
                   "%s, through the provider: %s; the checks see it" % (what, result[0]))
            result = try_copy(path, expected, what)
            if result is not None:
                errors, same, different = result
                # A cut through pages the store uses is seen; answers
                # never come from the missing bytes.
                ok(different == 0, "%s: %d errors, %d right answers"
                   % (what, errors, same))

        rng = random.Random(SEED)
        totals = [0, 0, 0]
        reads = {"error": 0, "same": 0, "different": 0}
        unseen = 0
        for n in range(COPIES):
            path = damaged_copy("flip")
            offset = rng.randrange(size)
            bit = rng.randrange(8)
            with open(os.path.join(path, "data.mdb"), "r+b") as f:
                f.seek(offset)
                byte = f.read(1)[0]
                f.seek(offset)
                f.write(bytes([byte ^ (1 << bit)]))
            what = "bit %d of byte %d flipped" % (bit, offset)
            result = try_provider(path, expected_read, what)
            if result is not None:
                reads[result[0]] += 1
                if result[0] == "different" and not result[1]:
                    unseen += 1
            result = try_copy(path, expected, what)
            if result is not None:
                for i in range(3):
                    totals[i] += result[i]
        ok(True, "%d copies with a flipped bit, %d runs each: %d clean errors, "
           "%d right answers, %d other answers (flips in stored bytes)"
           % (COPIES, len(COMMANDS), totals[0], totals[1], totals[2]))
        ok(True, "the same copies through the provider: %d clean errors, %d right "
           "answers, %d other answers, %d of them unseen by the checks"
           % (reads["error"], reads["same"], reads["different"], unseen))

    print("1..%d" % tests)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
