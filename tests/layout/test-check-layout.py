#!/usr/bin/env python3
# test-check-layout.py: the layout check fails on what it must, naming the
# file and line, and passes a tree without them.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import os
import shutil
import subprocess
import sys
import tempfile

CHECK = sys.argv[1]


def tree(files):
    root = tempfile.mkdtemp(prefix="qstore-layout-")
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)
    return root


def run(root):
    p = subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True)
    return p.returncode, p.stdout


CLEAN = {
    "libqstore/qstore.h": '#include "qstore-kv.h"\n',
    "libqstore/qstore-version-macros.h": "\n",
    "libqstore/kv/qstore-kv.h": '#include "qstore-version-macros.h"\n',
    "libqstore/kv/qstore-kv.c": '#include "config.h"\n#include "qstore-kv.h"\n',
    "libqstore/table/qstore-table.h": '#include "qstore-kv.h"\n',
    "libqstore/table/qstore-table.c": '#include "qstore-table.h"\n#include "qstore-kv.h"\n',
    "plugins/memory/qstore-memory.c": "#include <qstore.h>\n",
}

failures = 0


def expect(name, files, code, needles):
    global failures
    root = tree(files)
    try:
        rc, out = run(root)
    finally:
        shutil.rmtree(root)
    ok = rc == code and all(n in out for n in needles)
    print("%s - %s" % ("ok" if ok else "not ok", name))
    if not ok:
        failures += 1
        print("# exit %d, output:\n# %s" % (rc, out.replace("\n", "\n# ")))


expect("a clean tree passes", CLEAN, 0, ["no upward include"])

upward = dict(CLEAN)
upward["libqstore/kv/qstore-kv.c"] = '#include "config.h"\n#include "qstore-kv.h"\n#include "qstore-table.h"\n'
expect("an upward include is named with its file and line", upward, 1,
       ["libqstore/kv/qstore-kv.c:3: includes libqstore/table/qstore-table.h, which is in a higher layer"])

cycle = dict(CLEAN)
cycle["libqstore/table/qstore-index.c"] = '#include "qstore-table.h"\n'
cycle["libqstore/table/qstore-index-private.h"] = "\n"
cycle["libqstore/table/qstore-table.c"] = '#include "qstore-table.h"\n#include "qstore-index-private.h"\n'
expect("an include cycle between modules of one layer is named", cycle, 1,
       ["include cycle between modules", "libqstore/table/qstore-table.c:2 includes libqstore/table/qstore-index-private.h",
        "libqstore/table/qstore-index.c:1 includes libqstore/table/qstore-table.h"])

long = dict(CLEAN)
long["libqstore/table/qstore-table.c"] = '#include "qstore-table.h"\n' + "/* */\n" * 1500
expect("a source over 1,500 lines is named", long, 1,
       ["libqstore/table/qstore-table.c: 1501 lines, over the limit of 1500"])

plugin = dict(CLEAN)
plugin["plugins/memory/qstore-memory.c"] = '#include <qstore.h>\n#include "qstore-table.h"\n'
expect("a plugin reaching past <qstore.h> is named", plugin, 1,
       ["plugins/memory/qstore-memory.c:2: includes libqstore/table/qstore-table.h: a plugin sees libqstore through <qstore.h> only"])

stray = dict(CLEAN)
stray["libqstore/qstore-helpers.c"] = "\n"
stray["libqstore/misc/qstore-misc.c"] = "\n"
expect("a source outside the layer folders is named", stray, 1,
       ["libqstore/misc/qstore-misc.c: not in a layer folder",
        "libqstore/qstore-helpers.c: not in a layer folder"])

print("1..6")
sys.exit(1 if failures else 0)
