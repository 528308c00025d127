#!/usr/bin/python3
# check-output.py: runs an example and compares what it prints with what it should
#
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Usage: check-output.py EXPECTED-FILE COMMAND [ARG...]

Runs COMMAND twice and fails unless it exits 0 and prints exactly the
contents of EXPECTED-FILE each time (the second run reopens any location
the first one wrote). An argument containing @TMPDIR@ gets a new empty
directory there, removed afterwards.
"""

import difflib
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        expected = f.read()
    with tempfile.TemporaryDirectory(prefix="qstore-example-") as tmpdir:
        command = [arg.replace("@TMPDIR@", tmpdir) for arg in sys.argv[2:]]
        for run in (1, 2):
            result = subprocess.run(command, capture_output=True, text=True, timeout=60)
            sys.stderr.write(result.stderr)
            if result.returncode != 0:
                sys.exit("run %d of %s exited with %d" % (run, command, result.returncode))
            if result.stdout != expected:
                sys.stdout.writelines(difflib.unified_diff(
                    expected.splitlines(True), result.stdout.splitlines(True),
                    "expected", "printed by run %d" % run))
                sys.exit("run %d of %s printed something else" % (run, command))
    print("%s printed what it should" % sys.argv[2])


if __name__ == "__main__":
    main()
