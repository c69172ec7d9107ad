#!/usr/bin/env python3
"""Checks the reference semantics of the collectives of collectives.json
(docs/bir.md, CollectiveCompute) on the .npy files bir-sim --dump-all wrote.
Prints one "<kind> ok" line per kind, or the first wrong element."""
import os
import sys
sys.path.insert(0, os.path.dirname(__file__))
import ast
import struct

FORMATS = {"<f4": "f", "|i1": "b"}


def load(d, core, name):
    data = open(os.path.join(d, "core%d.%s.npy" % (core, name)), "rb").read()
    hlen = struct.unpack("<H", data[8:10])[0]
    h = ast.literal_eval(data[10:10 + hlen].decode())
    n = h["shape"][0] * h["shape"][1]
    return list(struct.unpack_from("<%d%s" % (n, FORMATS[h["descr"]]), data, 10 + hlen))


def check(kind, got, want):
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            print("%s wrong at %d: %r, expected %r" % (kind, i, g, w))
            return
    print("%s ok" % kind)


d = sys.argv[1]
n = 4
x = [load(d, r, "x") for r in range(n)]
N = len(x[0])
M = N // n
for r in range(n):
    check("AllReduce core %d" % r, load(d, r, "y_ar"), [sum(x[j][i] for j in range(n)) for i in range(N)])
    check("ReduceScatter core %d" % r, load(d, r, "y_rs"), [sum(x[j][r * M + i] for j in range(n)) for i in range(M)])
    check("AllGather core %d" % r, load(d, r, "y_ag"), [x[j][i] for j in range(n) for i in range(N)])
    check("AllToAll core %d" % r, load(d, r, "y_a2a"), [x[j][r * M + i] for j in range(n) for i in range(M)])
    check("Permute core %d" % r, load(d, r, "y_perm"), x[(r - 1) % n])
    initial = [float(i) for i in range(N)]
    check("PermuteReduce core %d" % r, load(d, r, "y_pr"), [max(a, b) for a, b in zip(initial, x[(r - 1) % n])])
    # 4 x 100 wraps in int8, as XLA's all-reduce of s8 does.
    check("AllReduce int8 core %d" % r, load(d, r, "y_m8"), [(4 * 100 + 128) % 256 - 128] * 8)
