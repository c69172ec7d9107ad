#!/usr/bin/env python3
"""Checks the include layers of both halves and the wall between them.

Inside a half, a library includes only its own layer and the layers below
it (docs/bir.md, "Layers"; docs/contributing.md, "Where things live"):

    BIR:  ir  <-  json, analysis  <-  passes  <-  sim
    HLO:  ir  <-  parser, pass  <-  passes, eval  <-  proto

Between the halves there is a wall: HLO code (include/loom/hlo, lib/hlo,
tools/hlo-opt, tools/hlo-run) never includes a BIR header, BIR code
(include/loom/bir, lib/bir, tools/bir-opt, tools/sendrecv-study) never an
HLO header. The shared
libraries below both halves (support, tools) include neither half, and
support does not include tools; the libraries of the halves include
support but not tools, which is for the programs. A library that bridges the halves
(lib/codegen, lib/launch, and any other folder of lib/) and a tool that is
not one of the halves' may include both: hlo-to-bir, and bir-sim, whose
launch mode reads the HLO module of a launch.

usage: check_layers.py ROOT   ROOT holding include/ and lib/ (and tools/)

Prints every forbidden include as FILE:LINE: LAYER includes loom/HALF/OTHER/...
(or WHAT includes loom/HALF/... for the wall) and exits 1 if there is one.
"""
import os
import re
import sys

RANKS = {
    "bir": {"ir": 0, "json": 1, "analysis": 1, "passes": 2, "sim": 3},
    "hlo": {"ir": 0, "parser": 1, "pass": 1, "passes": 2, "eval": 2, "proto": 3},
}
OTHER_HALF = {"bir": "hlo", "hlo": "bir"}
# The shared libraries below both halves, and what each may include.
SHARED = {"support": {"support"}, "tools": {"support", "tools"}}
# Tools of one half; any other tool may bridge the halves.
TOOL_HALF = {"bir-opt": "bir", "sendrecv-study": "bir",
             "hlo-opt": "hlo", "hlo-run": "hlo"}
INCLUDE = re.compile(r'^\s*#\s*include\s*"loom/([^/"]+)/(?:([^/"]+)/)?')


def sources(folder):
    for dirpath, _, files in os.walk(folder):
        for name in sorted(files):
            if name.endswith((".h", ".cpp")):
                yield os.path.join(dirpath, name)


def includes(path):
    with open(path) as f:
        for num, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield num, m.group(1), m.group(2)


def main():
    root = sys.argv[1]
    bad = 0
    checked = 0

    def report(path, num, what, top, sub):
        nonlocal bad
        print("%s:%d: %s includes loom/%s/%s" %
              (os.path.relpath(path, root), num, what, top,
               sub + "/..." if sub else "..."))
        bad += 1

    # The layers of each half, and the wall.
    for half, rank in RANKS.items():
        for top in ("include/loom/" + half, "lib/" + half):
            base = os.path.join(root, top)
            if not os.path.isdir(base):
                continue
            for layer in sorted(os.listdir(base)):
                folder = os.path.join(base, layer)
                if not os.path.isdir(folder):
                    continue
                if layer not in rank:
                    print("%s: a folder of no known layer" % folder)
                    bad += 1
                    continue
                for path in sources(folder):
                    checked += 1
                    for num, other_top, other in includes(path):
                        if other_top == OTHER_HALF[half]:
                            report(path, num, "the %s half" % half.upper(),
                                   other_top, other)
                        elif other_top == "support":
                            continue
                        elif other_top != half:
                            # loom/tools is for the tools, not the libraries
                            # they are built from.
                            report(path, num, "the %s half" % half.upper(),
                                   other_top, other)
                        elif other_top == half:
                            if other == layer:
                                continue
                            if other in rank and rank[other] < rank[layer]:
                                continue
                            # The BIR form of the line, as it always was.
                            what = layer if half == "bir" else "hlo " + layer
                            report(path, num, what, half, other)
    # The shared libraries below both halves.
    for shared, allowed in SHARED.items():
        for top in ("include/loom/" + shared, "lib/" + shared):
            folder = os.path.join(root, top)
            if not os.path.isdir(folder):
                continue
            for path in sources(folder):
                checked += 1
                for num, other_top, other in includes(path):
                    if other_top not in allowed:
                        report(path, num, shared, other_top, other)
    # The tools of each half.
    tools = os.path.join(root, "tools")
    if os.path.isdir(tools):
        for tool in sorted(os.listdir(tools)):
            half = TOOL_HALF.get(tool)
            folder = os.path.join(tools, tool)
            if half is None or not os.path.isdir(folder):
                continue
            for path in sources(folder):
                checked += 1
                for num, other_top, other in includes(path):
                    if other_top == OTHER_HALF[half]:
                        report(path, num, "the %s half" % half.upper(),
                               other_top, other)
    print("checked %d files, %d forbidden includes" % (checked, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
