#!/usr/bin/python3
# site-dir.py: which directory of this Python's module path lies under PREFIX
#
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Usage: site-dir.py PREFIX

Prints the site-packages (or dist-packages) directory this Python searches
that lies under PREFIX, or nothing when there is none. When several do
(/usr holds /usr/local/lib/python3.X/dist-packages too), the one nearest
to PREFIX is PREFIX's own."""

import os
import site
import sys


def main():
    prefix = os.path.abspath(sys.argv[1]).rstrip(os.sep) + os.sep
    under = [path for path in site.getsitepackages()
             if os.path.abspath(path).startswith(prefix)]
    if under:
        print(min(under, key=len))


if __name__ == "__main__":
    main()
