#!/usr/bin/env python3
# check-potfiles.py: every file with translatable text is listed for
# translation, and every listed file exists.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# usage: check-potfiles.py [SOURCE-ROOT]
#
# Two domains: libqstore/po (the library and its plugins) and po (the
# inspector and its data). A C file marks text with _(), N_() or C_(), a
# GtkBuilder file with translatable="yes"; such a file missing from its
# domain's POTFILES.in would never reach a translator.
import os
import re
import sys

DOMAINS = {
    "libqstore/po/POTFILES.in": ["libqstore", "plugins"],
    "po/POTFILES.in": ["inspector", "data"],
}
MARKED = {
    ".c": re.compile(r'\b[NC]?_\s*\("'),
    ".ui": re.compile(r'translatable="yes"'),
}


def listed(root, potfiles):
    with open(os.path.join(root, potfiles), encoding="utf-8") as f:
        return {line.strip() for line in f if line.strip() and not line.startswith("#")}


def marked(root, folders):
    for folder in folders:
        for dirpath, _, names in os.walk(os.path.join(root, folder)):
            for name in sorted(names):
                pattern = MARKED.get(os.path.splitext(name)[1])
                path = os.path.join(dirpath, name)
                if pattern is None:
                    continue
                with open(path, encoding="utf-8") as f:
                    if pattern.search(f.read()):
                        yield os.path.relpath(path, root)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    problems = []
    for potfiles, folders in DOMAINS.items():
        names = listed(root, potfiles)
        for path in marked(root, folders):
            if path not in names:
                problems.append(f"{path}: has translatable text but is not in {potfiles}")
        for name in sorted(names):
            if not os.path.exists(os.path.join(root, name)):
                problems.append(f"{potfiles}: lists {name}, which does not exist")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
