#!/usr/bin/python3
# include-snippets.py: puts regions of compiled sources into a manual page
#
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Usage: include-snippets.py INPUT OUTPUT

Replaces each line `{{ snippet FILE REGION }}` of INPUT (FILE relative to
INPUT's folder) with the lines of FILE between two markers
`/* [REGION] */` (or `# [REGION]` in a meson.build), fenced as code. A
missing file or region is an error, so the manual cannot show code that
is not built."""

import os
import re
import sys

LANGUAGES = {".c": "c", ".build": "meson", ".txt": "meson"}


def region(path, name):
    with open(path) as f:
        lines = f.read().splitlines()
    marks = [i for i, line in enumerate(lines)
             if line.strip() in ("/* [%s] */" % name, "# [%s]" % name)]
    if len(marks) != 2:
        sys.exit("%s: region “%s” must be marked exactly twice, found %d" %
                 (path, name, len(marks)))
    return lines[marks[0] + 1:marks[1]]


def main(source, output):
    base = os.path.dirname(os.path.abspath(source))
    out = []
    with open(source) as f:
        for line in f.read().splitlines():
            m = re.fullmatch(r"\{\{ snippet (\S+) (\S+) \}\}", line.strip())
            if not m:
                if "{{ snippet" in line:
                    sys.exit("%s: a malformed snippet line: %s" % (source, line))
                out.append(line)
                continue
            path = os.path.normpath(os.path.join(base, m.group(1)))
            language = LANGUAGES.get(os.path.splitext(path)[1], "")
            out += ["```" + language] + region(path, m.group(2)) + ["```"]
    with open(output, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
