#!/usr/bin/env python3
# The translation-list check fails on a file left out and on a file
# listed that is gone, and passes a tree that lists what it marks.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
import os
import shutil
import subprocess
import sys
import tempfile

check = sys.argv[1]


def tree(files):
    root = tempfile.mkdtemp(prefix="qstore-potfiles-")
    for path, text in files.items():
        os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(root, path), "w", encoding="utf-8") as f:
            f.write(text)
    return root


def status(files):
    root = tree(files)
    try:
        return subprocess.run([sys.executable, check, root], capture_output=True).returncode
    finally:
        shutil.rmtree(root)


base = {
    "libqstore/po/POTFILES.in": "# list\nlibqstore/kv/a.c\n",
    "po/POTFILES.in": "inspector/w.ui\n",
    "libqstore/kv/a.c": 'g_set_error_literal (e, d, c, _("A message"));\n',
    "libqstore/kv/b.c": "/* nothing to translate */\n",
    "inspector/w.ui": '<property name="title" translatable="yes">Title</property>\n',
}
cases = [
    ("a tree that lists what it marks passes", base, 0),
    ("a C file left out fails", {**base, "plugins/x/c.c": 'N_("Text")\n'}, 1),
    ("a UI file left out fails", {**base, "inspector/v.ui": 'translatable="yes"\n'}, 1),
    ("a listed file that is gone fails",
     {**base, "po/POTFILES.in": "inspector/w.ui\ninspector/gone.c\n"}, 1),
]
print(f"1..{len(cases)}")
for i, (name, files, expected) in enumerate(cases, 1):
    got = status(files)
    print(f"{'ok' if got == expected else 'not ok'} {i} - {name} (exit {got})")
