#!/usr/bin/env python3
# check-layout.py: keeps the code's layers honest.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# usage: check-layout.py [SOURCE-ROOT]
#
# Reads every `#include "…"` (and `<qstore.h>`) in libqstore/ and plugins/
# and fails, naming the file and line, on
#   - an include that points up: libqstore's layers are, bottom to top,
#     the LAYERS below; a file may include its own layer and those under
#     it. A plugin may include its own files and libqstore's public face,
#     <qstore.h>, only;
#   - an include that closes a cycle between modules (a module is one
#     source with its headers: qstore-foo.c, qstore-foo.h and
#     qstore-foo-private.h), inside a layer as much as across layers;
#   - a source file longer than MAX_LINES.
import os
import re
import sys

LAYERS = ["kv", "table", "sql", "mview", "changes", "open", "staging", "window", "replica"]
MAX_LINES = 1500

# libqstore's root: the version macros sit under every layer, the
# umbrella header above them all. qstore-enums.h is generated from the
# public headers and declares nothing but GTypes.
BASE_HEADERS = {"qstore-version-macros.h", "qstore-enums.h"}
UMBRELLA = "qstore.h"
# What a plugin may include of libqstore: the public umbrella, and the test
# fault points, which the plugins check while test programs arm them and
# which must be one state inside libqstore (see qstore-fault-private.h),
# and the message catalogue, so plugins' errors share libqstore's domain.
PLUGIN_VISIBLE = {"libqstore/" + UMBRELLA, "libqstore/kv/qstore-fault-private.h",
                  "libqstore/kv/qstore-i18n-private.h"}

INCLUDE = re.compile(r'^\s*#\s*include\s+(?:"([^"]+)"|<(qstore\.h)>)')


def layer_rank(rel):
    """A file's place: (kind, rank). kind is 'lib' or 'plugin:NAME'."""
    parts = rel.split("/")
    if parts[0] == "libqstore":
        if len(parts) == 2:
            if parts[1] in BASE_HEADERS:
                return ("lib", -1)
            if parts[1] == UMBRELLA:
                return ("lib", len(LAYERS))
            return ("lib", None)
        if parts[1] not in LAYERS:
            return ("lib", None)
        return ("lib", LAYERS.index(parts[1]))
    return ("plugin:" + parts[1], None)


def module_of(rel):
    head, name = os.path.split(rel)
    stem = re.sub(r"\.(c|h)$", "", name)
    stem = re.sub(r"-private$", "", stem)
    return os.path.join(head, stem)


def scan(root):
    files = []
    for top in ("libqstore", "plugins"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith((".c", ".h")):
                    files.append(os.path.relpath(os.path.join(dirpath, name), root))
    return files


def check(root):
    problems = []
    files = scan(root)
    by_name = {}
    for rel in files:
        by_name.setdefault(os.path.basename(rel), []).append(rel)

    edges = {}  # module -> {module: (file, line, header)}
    for rel in files:
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        if rel.endswith(".c") and len(lines) > MAX_LINES:
            problems.append("%s: %d lines, over the limit of %d: split it by "
                            "responsibility" % (rel, len(lines), MAX_LINES))
        kind, rank = layer_rank(rel)
        if kind == "lib" and rank is None:
            problems.append("%s: not in a layer folder (%s)" % (rel, ", ".join(LAYERS)))
        for number, text in enumerate(lines, 1):
            m = INCLUDE.match(text)
            if not m:
                continue
            name = m.group(1) or m.group(2)
            base = os.path.basename(name)
            if base in BASE_HEADERS and kind == "lib":
                continue
            # A plugin's own files first, then libqstore's.
            candidates = by_name.get(base, [])
            own = [c for c in candidates if os.path.dirname(c) == os.path.dirname(rel)]
            targets = own or candidates
            if not targets:
                continue  # config.h, generated or system headers
            target = targets[0]
            where = "%s:%d" % (rel, number)
            tkind, trank = layer_rank(target)
            if kind == "lib":
                if tkind != "lib":
                    problems.append("%s: includes %s, a plugin's header" % (where, target))
                elif rank is not None and trank is not None and trank > rank:
                    problems.append("%s: includes %s, which is in a higher layer (%s over %s)"
                                    % (where, target, layer_name(trank), layer_name(rank)))
            elif tkind == "lib" and target not in PLUGIN_VISIBLE:
                problems.append("%s: includes %s: a plugin sees libqstore through "
                                "<qstore.h> only" % (where, target))
            elif tkind != "lib" and tkind != kind:
                problems.append("%s: includes %s, another plugin's header" % (where, target))
            src, dst = module_of(rel), module_of(target)
            if src != dst:
                edges.setdefault(src, {}).setdefault(dst, (where, target))

    for cycle in cycles(edges):
        steps = []
        for a, b in zip(cycle, cycle[1:] + cycle[:1]):
            where, target = edges[a][b]
            steps.append("%s includes %s" % (where, target))
        problems.append("include cycle between modules %s:\n    %s"
                        % (" -> ".join(cycle + cycle[:1]), "\n    ".join(steps)))
    return problems


def layer_name(rank):
    if rank < 0:
        return "libqstore/"
    if rank >= len(LAYERS):
        return "libqstore/" + UMBRELLA
    return LAYERS[rank] + "/"


def cycles(edges):
    """One cycle through each strongly connected component (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def strongconnect(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(shortest_cycle(edges, set(component)))

    for v in sorted(edges):
        if v not in index:
            strongconnect(v)
    return found


def shortest_cycle(edges, component):
    start = min(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges.get(v, {})):
            if w == start:
                return paths[v]
            if w in component and w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    return sorted(component)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = check(root)
    for p in problems:
        print("check-layout: " + p)
    if problems:
        return 1
    print("check-layout: %s: layers %s, no upward include, no cycle, no source over %d lines"
          % (os.path.normpath(root), " < ".join(LAYERS), MAX_LINES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
