#!/usr/bin/env python3
"""Checks that the BIR libraries include only their own layer and the layers
below it (docs/bir.md, "Layers"):

    ir  <-  json, analysis  <-  passes  <-  sim

usage: check_layers.py ROOT   ROOT holding include/loom/bir and lib/bir

Prints every upward or sideways include as FILE:LINE: LAYER includes
loom/bir/OTHER/... and exits 1 if there is one.
"""
import os
import re
import sys

RANK = {"ir": 0, "json": 1, "analysis": 1, "passes": 2, "sim": 3}
INCLUDE = re.compile(r'^\s*#\s*include\s*"loom/bir/([^/"]+)/')


def main():
    root = sys.argv[1]
    bad = 0
    checked = 0
    for top in ("include/loom/bir", "lib/bir"):
        base = os.path.join(root, top)
        for layer in sorted(os.listdir(base)):
            folder = os.path.join(base, layer)
            if not os.path.isdir(folder):
                continue
            if layer not in RANK:
                print("%s: a folder of no known layer" % folder)
                bad += 1
                continue
            for dirpath, _, files in os.walk(folder):
                for name in sorted(files):
                    if not name.endswith((".h", ".cpp")):
                        continue
                    path = os.path.join(dirpath, name)
                    checked += 1
                    with open(path) as f:
                        for num, line in enumerate(f, 1):
                            m = INCLUDE.match(line)
                            if not m:
                                continue
                            other = m.group(1)
                            if other == layer:
                                continue
                            if other in RANK and RANK[other] < RANK[layer]:
                                continue
                            print("%s:%d: %s includes loom/bir/%s/..." %
                                  (os.path.relpath(path, root), num, layer,
                                   other))
                            bad += 1
    print("checked %d files, %d upward includes" % (checked, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
