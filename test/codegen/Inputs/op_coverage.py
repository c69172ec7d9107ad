#!/usr/bin/env python3
"""The op-coverage test of hlo-to-bir (docs/codegen.md, "Op coverage test").

Makes small random HLO modules, one op family each (elementwise ops,
convert, movement, dot, reduce, collectives, loops, ...) with random ranks
0-4, odd sizes and sizes past 128 partitions and 512 columns, random
layouts and element types. Each module is first run by hlo-run: a module
hlo-run refuses is the generator's fault and is counted as `invalid`.
Then `hlo-to-bir --check --lnc=1` and `--lnc=2` run on it, and each check
is classified:

  pass     compared N elements ...: 0 differ
  refused  exit 1 with `<computation>/<instruction>: <opcode> is not
           lowered (...)`: acceptable, the reasons are counted
  bug      anything else: outputs differ, a crash, a timeout, another error

    op_coverage.py [--seed=S] [--cases=N] [--full] [--family=F,...]
                   [--bin=DIR] [--jobs=J] [--timeout=T] [--keep=DIR] [-v]

The bounded sample is --cases (default 60); --full, or LOOM_OPCOVER_FULL=1
in the environment, runs 1000 cases. Case k of seed S has its own random
stream (`S:k`), so `--seed=S --first=k --cases=1` makes it again; --keep
writes every module that fails (and with -v every module) to DIR. Exit
status 1 when a check is a bug.
"""

import argparse
import collections
import concurrent.futures
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

FLOATS = ["f32", "bf16", "f16"]
FP8 = ["f8e4m3fn", "f8e5m2"]
INTS = ["s32", "s8", "u8"]
EXT_INTS = ["u32", "s64", "s16", "u16", "u64"]
ALL_TYPES = FLOATS + FP8 + INTS + ["pred"]

# Sizes of a dimension: odd, powers of two and their neighbours, past the
# 128 partitions and the 512 fp32 columns of a PSUM bank.
SIZES = [1, 1, 2, 3, 3, 4, 5, 7, 8, 9, 13, 16, 31, 33, 64, 127, 128, 129,
         130, 200, 257, 511, 513, 600, 1000]


class Gen:
    """One case: a random stream and the module being written."""

    def __init__(self, rng):
        self.r = rng
        self.comps = []     # computations before the entry, as text
        self.lines = []     # the entry's instructions
        self.params = []    # (name, shape text)
        self.names = collections.Counter()
        self.header = ""
        self.empty_ok = False  # dims() may make an empty array

    # -- shapes -------------------------------------------------------------
    def dims(self, rank, max_elems=40000):
        if self.r.random() < 0.1:
            # Past one 128 x 2048 tile of fp32.
            max_elems = max(max_elems, 700000)
        d = [self.r.choice(SIZES + ([4096, 70000, 300000] if rank <= 2 else []))
             for _ in range(rank)]
        while math.prod(d) > max_elems:
            i = max(range(rank), key=lambda k: d[k])
            d[i] = max(1, d[i] // self.r.choice([2, 3, 5]))
        if rank and self.empty_ok and self.r.random() < 0.02:
            d[self.r.randrange(rank)] = 0  # an empty array
        return d

    def layout(self, rank, p=0.3):
        """A layout {minor-to-major}: the default most of the time."""
        if rank < 2 or self.r.random() >= p:
            return None
        perm = list(range(rank))
        self.r.shuffle(perm)
        return perm

    @staticmethod
    def shape(ty, dims, layout=None):
        s = "%s[%s]" % (ty, ",".join(str(d) for d in dims))
        if layout is not None:
            s += "{%s}" % ",".join(str(d) for d in layout)
        return s

    def name(self, base):
        self.names[base] += 1
        n = self.names[base]
        return base if n == 1 else "%s%d" % (base, n)

    # -- instructions -------------------------------------------------------
    def param(self, ty, dims, layout="random", base="p"):
        if layout == "random":
            layout = self.layout(len(dims))
        n = self.name(base)
        s = self.shape(ty, dims, layout)
        self.lines.append("  %s = %s parameter(%d)" % (n, s, len(self.params)))
        self.params.append((n, s))
        return n

    def inst(self, shape, text, base="v"):
        n = self.name(base)
        self.lines.append("  %s = %s %s" % (n, shape, text))
        return n

    EDGE = {"s32": ["-2147483648", "2147483647", "-2147483647", "65536", "-1"],
            "s8": ["-128", "127", "-127", "-1"], "u8": ["255", "128", "0"],
            "f32": ["3.4e38", "-3.4e38", "1e-40", "-1e-45", "1e-38", "16777217",
                    "65504", "1e30"],
            "bf16": ["3.38e38", "1e-40", "256.5", "-1e-39"],
            "f16": ["65504", "-65504", "6e-08", "1e-05", "2049"],
            "f8e4m3fn": ["448", "-448", "0.001953125"],
            "f8e5m2": ["57344", "-57344", "1.5e-05"],
            "u32": ["4294967295", "2147483648"], "s64": ["-9223372036854775808",
            "9223372036854775807", "4294967296"], "s16": ["-32768", "32767"],
            "u16": ["65535"], "u64": ["18446744073709551615"]}

    def scalar_lit(self, ty, special=True, edge=0.0):
        r = self.r
        if ty == "pred":
            return r.choice(["true", "false"])
        if r.random() < edge:
            return r.choice(self.EDGE[ty] + (["inf", "-inf", "nan", "-0"]
                                             if ty not in INTS + EXT_INTS else []))
        if ty in INTS + EXT_INTS:
            lo = 0 if ty.startswith("u") else -9
            return str(r.randint(lo, 9))
        if special and r.random() < 0.1:
            return r.choice(["inf", "-inf", "nan", "-0"])
        return r.choice(["0", "1", "-1", "0.5", "-2.25", "3", "0.1", "-0.3",
                         "7.5", "100"])

    def literal(self, ty, dims, edge=0.0):
        if not dims:
            return self.scalar_lit(ty, edge=edge)
        if dims[0] == 0:
            return "{}"
        return "{" + ", ".join(self.literal(ty, dims[1:], edge)
                               for _ in range(dims[0])) + "}"

    def constant(self, ty, dims, base="c", edge=0.0):
        return self.inst(self.shape(ty, dims), "constant(%s)" %
                         self.literal(ty, dims, edge), base)

    def operand(self, ty, dims, edge_p=0.3):
        """A parameter, or (small shapes) a constant of edge values: the
        extremes of the type, denormals, infinities and NaN."""
        if math.prod(dims) <= 400 and self.r.random() < edge_p:
            return self.constant(ty, dims, "e", edge=0.5)
        return self.param(ty, dims)

    def binary_comp(self, op, ty):
        n = "%s_%s" % (op, ty)
        if any(c.startswith(n + " {") for c in self.comps):
            return n
        self.comps.append(
            "%s {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n"
            "  ROOT r = %s[] %s(a, b)\n}\n" % (n, ty, ty, ty, op))
        return n

    def module(self, root, root_shape):
        self.lines.append("  ROOT out = %s copy(%s)" % (root_shape, root)
                          if root_shape else "")
        body = "\n".join(l for l in self.lines if l)
        return ("HloModule opcover%s\n\n%s\nENTRY main {\n%s\n}\n" %
                (self.header, "\n".join(self.comps), body))


def elem_shape(ty, dims):
    return Gen.shape(ty, dims)


def default_rank(g, lo=0, hi=4):
    return g.r.randint(lo, hi)


# ---------------------------------------------------------------------------
# Families. Each returns (module text, a short description) or None.

UNARY_FLOAT = ["exponential", "log", "sqrt", "rsqrt", "tanh", "logistic",
               "sine", "cosine", "negate", "abs"]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum",
          "power", "remainder"]


def pick_type(g, floats=0.6, fp8=0.05, ints=0.3):
    x = g.r.random()
    if g.r.random() < 0.05:
        return g.r.choice(EXT_INTS)
    if x < floats:
        return g.r.choice(FLOATS)
    if x < floats + fp8:
        return g.r.choice(FP8)
    if x < floats + fp8 + ints:
        return g.r.choice(INTS)
    return "pred"


def fam_unary(g):
    op = g.r.choice(UNARY_FLOAT + ["not", "negate", "abs"])
    if op == "not":
        ty = g.r.choice(["pred", "s32", "u8", "s8"])
    elif op in ("negate", "abs"):
        ty = pick_type(g, 0.6, 0.05, 0.35)
        if ty == "pred":
            ty = "s32"
    else:
        ty = g.r.choice(FLOATS * 6 + FP8)
    d = g.dims(default_rank(g))
    x = g.operand(ty, d)
    src = x
    if op in ("log", "sqrt", "rsqrt") and g.r.random() < 0.5:
        src = g.inst(g.shape(ty, d), "abs(%s)" % x, "a")
    y = g.inst(g.shape(ty, d, g.layout(len(d))), "%s(%s)" % (op, src), op)
    return g.module(y, g.shape(ty, d)), "%s %s%s" % (op, ty, d)


def fam_binary(g):
    op = g.r.choice(BINARY + ["and", "or"])
    if op in ("and", "or"):
        ty = g.r.choice(["pred", "pred", "s32", "u8", "s8"])
    else:
        ty = pick_type(g, 0.6, 0.05, 0.35)
        if ty == "pred":
            ty = "f32"
    d = g.dims(default_rank(g))
    a = g.operand(ty, d)
    form = g.r.random()
    if form < 0.25:
        # One side a broadcast scalar constant.
        c = g.constant(ty, [])
        b = g.inst(g.shape(ty, d), "broadcast(%s), dimensions={}" % c, "b")
    elif form < 0.35:
        b = a
    else:
        b = g.operand(ty, d)
    if g.r.random() < 0.5:
        a, b = b, a
    y = g.inst(g.shape(ty, d, g.layout(len(d))), "%s(%s, %s)" % (op, a, b), op)
    return g.module(y, g.shape(ty, d)), "%s %s%s" % (op, ty, d)


def fam_compare_select(g):
    ty = pick_type(g, 0.5, 0.05, 0.3)
    d = g.dims(default_rank(g))
    a = g.param(ty, d)
    b = g.param(ty, d) if g.r.random() < 0.8 else a
    dirn = g.r.choice(["EQ", "NE", "LT", "LE", "GT", "GE"])
    extra = ""
    if ty in INTS + ["pred"] and g.r.random() < 0.3:
        extra = ", type=TOTALORDER"
    elif ty in FLOATS and g.r.random() < 0.1:
        extra = ", type=FLOAT"
    c = g.inst(g.shape("pred", d), "compare(%s, %s), direction=%s%s" %
               (a, b, dirn, extra), "cmp")
    if g.r.random() < 0.3:
        return g.module(c, g.shape("pred", d)), "compare %s %s%s" % (dirn, ty, d)
    vt = pick_type(g)
    t = g.param(vt, d)
    f = g.param(vt, d)
    if g.r.random() < 0.3:
        # A scalar predicate.
        c = g.param("pred", [])
    s = g.inst(g.shape(vt, d, g.layout(len(d))), "select(%s, %s, %s)" % (c, t, f),
               "sel")
    return g.module(s, g.shape(vt, d)), "compare %s %s + select %s%s" % (
        dirn, ty, vt, d)


def fam_convert(g):
    types = ALL_TYPES[:-1] + (EXT_INTS if g.r.random() < 0.2 else [])
    src = g.r.choice(types + ["pred"])
    dst = g.r.choice(types if g.r.random() < 0.95 else ALL_TYPES)
    d = g.dims(default_rank(g))
    x = g.operand(src, d, 0.4)
    if src in FLOATS + INTS + EXT_INTS and dst != "pred" and g.r.random() < 0.5:
        # Scale so that conversions overflow and truncate.
        c = g.constant(src, [])
        k = g.inst(g.shape(src, []), "constant(%s)" % (
            g.r.choice(["300", "7.5", "1000", "40000"]) if src in FLOATS else
            g.r.choice(g.EDGE[src])), "k")
        bk = g.inst(g.shape(src, d), "broadcast(%s), dimensions={}" % k, "bk")
        x = g.inst(g.shape(src, d), "multiply(%s, %s)" % (x, bk), "scaled")
        del c
    y = g.inst(g.shape(dst, d, g.layout(len(d))), "convert(%s)" % x, "cv")
    return g.module(y, g.shape(dst, d)), "convert %s->%s %s" % (src, dst, d)


def fam_iota_constant(g):
    ty = g.r.choice(["s32", "f32", "bf16", "f16", "u8", "s8", "f32", "s32"] +
                    EXT_INTS + FP8)
    if g.r.random() < 0.6:
        d = g.dims(default_rank(g, 1, 4))
        dim = g.r.randrange(len(d))
        y = g.inst(g.shape(ty, d, g.layout(len(d))), "iota(), iota_dimension=%d" % dim,
                   "iota")
        if g.r.random() < 0.5:
            x = g.param(ty, d)
            y = g.inst(g.shape(ty, d), "add(%s, %s)" % (y, x), "sum")
        return g.module(y, g.shape(ty, d)), "iota %s%s dim %d" % (ty, d, dim)
    rank = default_rank(g, 0, 3)
    d = g.dims(rank, 300)
    ty = g.r.choice(ALL_TYPES)
    c = g.constant(ty, d)
    if g.r.random() < 0.5 and ty not in FP8:
        x = g.param(ty, d)
        op = "or" if ty == "pred" else "maximum"
        c = g.inst(g.shape(ty, d), "%s(%s, %s)" % (op, c, x), "m")
    return g.module(c, g.shape(ty, d)), "constant %s%s" % (ty, d)


def any_type(g):
    return pick_type(g, 0.55, 0.1, 0.3)


def fam_broadcast(g):
    ty = any_type(g)
    rr = default_rank(g, 0, 4)
    rd = g.dims(rr, 60000)
    orank = g.r.randint(0, rr)
    bd = sorted(g.r.sample(range(rr), orank))
    od = [rd[k] for k in bd]
    x = g.param(ty, od)
    y = g.inst(g.shape(ty, rd, g.layout(rr)), "broadcast(%s), dimensions={%s}" %
               (x, ",".join(map(str, bd))), "bc")
    return g.module(y, g.shape(ty, rd)), "broadcast %s%s->%s dims %s" % (
        ty, od, rd, bd)


def fam_transpose(g):
    ty = any_type(g)
    d = g.dims(default_rank(g, 1, 4), 60000)
    perm = list(range(len(d)))
    g.r.shuffle(perm)
    x = g.param(ty, d)
    rd = [d[p] for p in perm]
    y = g.inst(g.shape(ty, rd, g.layout(len(rd))), "transpose(%s), dimensions={%s}" %
               (x, ",".join(map(str, perm))), "tr")
    return g.module(y, g.shape(ty, rd)), "transpose %s%s perm %s" % (ty, d, perm)


def factor(n):
    f, p = [], 2
    while n > 1 and p * p <= n:
        while n % p == 0:
            f.append(p)
            n //= p
        p += 1
    if n > 1:
        f.append(n)
    return f


def reshape_dims(g, n, rank):
    if n == 0:
        return [0] + [g.r.choice([1, 3]) for _ in range(max(rank, 1) - 1)]
    dims = [1] * rank
    if rank == 0:
        return [] if n == 1 else [n]
    for p in factor(n):
        dims[g.r.randrange(rank)] *= p
    return dims


def fam_reshape(g):
    ty = any_type(g)
    d = g.dims(default_rank(g), 40000)
    n = math.prod(d)
    rd = reshape_dims(g, n, g.r.randint(0 if n == 1 else 1, 4))
    form = g.r.choice(["reshape", "bitcast", "copy", "bitcast-layout"])
    if form == "copy":
        lay = g.layout(len(d), 1.0)
        x = g.param(ty, d)
        y = g.inst(g.shape(ty, d, lay), "copy(%s)" % x, "cp")
        if g.r.random() < 0.5:
            y = g.inst(g.shape(ty, d), "negate(%s)" % y if ty in FLOATS else
                       "copy(%s)" % y, "n")
        return g.module(y, g.shape(ty, d)), "copy %s%s layout %s" % (ty, d, lay)
    if form == "bitcast-layout":
        x = g.param(ty, d, g.layout(len(d), 0.7))
        y = g.inst(g.shape(ty, rd, g.layout(len(rd), 0.7)), "bitcast(%s)" % x, "bt")
        return g.module(y, g.shape(ty, rd)), "bitcast %s%s->%s (layouts)" % (
            ty, d, rd)
    x = g.param(ty, d, None)
    y = g.inst(g.shape(ty, rd), "%s(%s)" % (form, x), "rs")
    if g.r.random() < 0.5 and ty in FLOATS + INTS:
        y = g.inst(g.shape(ty, rd), "add(%s, %s)" % (y, y), "twice")
    return g.module(y, g.shape(ty, rd)), "%s %s%s->%s" % (form, ty, d, rd)


def fam_slice(g):
    ty = any_type(g)
    d = g.dims(default_rank(g, 1, 4), 60000)
    parts, rd = [], []
    for n in d:
        s = g.r.randrange(n)
        l = g.r.randint(s + 1, n)
        st = g.r.choice([1, 1, 2, 3, 7])
        parts.append("[%d:%d%s]" % (s, l, "" if st == 1 and g.r.random() < 0.5
                                     else ":%d" % st))
        rd.append((l - s + st - 1) // st)
    x = g.param(ty, d)
    y = g.inst(g.shape(ty, rd, g.layout(len(rd))), "slice(%s), slice={%s}" %
               (x, ", ".join(parts)), "sl")
    return g.module(y, g.shape(ty, rd)), "slice %s%s %s" % (ty, d, "".join(parts))


def fam_concatenate(g):
    ty = any_type(g)
    d = g.dims(default_rank(g, 1, 4), 20000)
    dim = g.r.randrange(len(d))
    ops, sizes = [], []
    for _ in range(g.r.randint(1, 4)):
        e = list(d)
        e[dim] = g.r.choice(SIZES[:18])
        sizes.append(e[dim])
        ops.append(g.param(ty, e))
    if g.r.random() < 0.3:
        # An operand twice.
        ops.append(ops[0])
        sizes.append(sizes[0])
    total = sum(sizes)
    rd = list(d)
    rd[dim] = total
    y = g.inst(g.shape(ty, rd, g.layout(len(rd))), "concatenate(%s), dimensions={%d}" %
               (", ".join(ops), dim), "cc")
    return g.module(y, g.shape(ty, rd)), "concatenate %d x %s dim %d -> %s" % (
        len(ops), ty, dim, rd)


def fam_pad(g):
    ty = any_type(g)
    d = g.dims(default_rank(g, 1, 4), 20000)
    cfg, rd = [], []
    for n in d:
        while True:
            lo = g.r.randint(-min(n, 5), 6)
            hi = g.r.randint(-min(n, 5), 6)
            it = g.r.choice([0, 0, 1, 2, 3])
            r = lo + hi + n + max(n - 1, 0) * it
            if r >= 1:
                break
        cfg.append("%d_%d%s" % (lo, hi, "_%d" % it if it or g.r.random() < 0.3
                                 else ""))
        rd.append(r)
    x = g.param(ty, d)
    pv = g.constant(ty, []) if g.r.random() < 0.7 else g.param(ty, [])
    y = g.inst(g.shape(ty, rd, g.layout(len(rd))), "pad(%s, %s), padding=%s" %
               (x, pv, "x".join(cfg)), "pd")
    return g.module(y, g.shape(ty, rd)), "pad %s%s %s" % (ty, d, "x".join(cfg))


def index_scalar(g, dim, size, allow_param=True):
    """A start index: a constant (often out of range), a parameter (hlo-run
    gives s32 values in [-8, 8)) or arithmetic on them."""
    ity = g.r.choice(["s32", "s32", "u32", "s64"])
    x = g.r.random()
    if x < 0.5 or not allow_param:
        v = g.r.choice([0, 1, dim - size, dim - size + 1, dim + 3, -1, -7,
                        g.r.randint(0, dim)])
        if ity.startswith("u"):
            v = abs(v)
        return g.inst(ity + "[]", "constant(%d)" % v, "i")
    if ity == "u32":
        ity = "s32"
    p = g.param(ity, [], None, "ip")
    if x < 0.75:
        return p
    k = g.inst(ity + "[]", "constant(%d)" % g.r.randint(-3, dim), "k")
    return g.inst(ity + "[]", "%s(%s, %s)" % (g.r.choice(["add", "multiply"]),
                                                p, k), "ix")


def fam_dynamic_slice(g):
    ty = any_type(g)
    d = g.dims(default_rank(g, 1, 4), 40000)
    sizes = [g.r.randint(1, n) for n in d]
    x = g.param(ty, d)
    idx = [index_scalar(g, n, s) for n, s in zip(d, sizes)]
    # All start indices have one type.
    idx = [g.inst("s32[]", "convert(%s)" % i, "i32") for i in idx]
    y = g.inst(g.shape(ty, sizes, g.layout(len(sizes))),
               "dynamic-slice(%s, %s), dynamic_slice_sizes={%s}" %
               (x, ", ".join(idx), ",".join(map(str, sizes))), "ds")
    return g.module(y, g.shape(ty, sizes)), "dynamic-slice %s%s -> %s" % (
        ty, d, sizes)


def fam_dynamic_update_slice(g):
    ty = any_type(g)
    d = g.dims(default_rank(g, 1, 4), 40000)
    sizes = [g.r.randint(1, n) for n in d]
    x = g.param(ty, d)
    u = g.param(ty, sizes)
    idx = [index_scalar(g, n, s) for n, s in zip(d, sizes)]
    idx = [g.inst("s32[]", "convert(%s)" % i, "i32") for i in idx]
    y = g.inst(g.shape(ty, d, g.layout(len(d))), "dynamic-update-slice(%s, %s, %s)" %
               (x, u, ", ".join(idx)), "dus")
    return g.module(y, g.shape(ty, d)), "dynamic-update-slice %s%s <- %s" % (
        ty, d, sizes)


def fam_dot(g):
    r = g.r
    nb, nc = r.choice([0, 0, 0, 1, 1, 2]), r.choice([0, 1, 1, 1, 1, 2, 2, 3])
    nl, nr = r.choice([0, 1, 1, 1, 2]), r.choice([0, 1, 1, 1, 2])
    small = [1, 2, 3, 5, 7]
    mid = [1, 3, 7, 16, 31, 64, 127, 128, 129, 130, 200, 257, 300]
    big = mid + [513, 600, 700]
    bdim = [r.choice(small) for _ in range(nb)]
    cdim = [r.choice(big) for _ in range(nc)]
    ldim = [r.choice(mid) for _ in range(nl)]
    rdim = [r.choice(big) for _ in range(nr)]

    def shrink(ds, cap):
        while ds and math.prod(ds) > cap:
            i = max(range(len(ds)), key=lambda k: ds[k])
            ds[i] = max(1, ds[i] // 2)

    gemv = r.random() < 0.25
    if gemv:
        # Few output tiles and many K tiles: at lnc 2 the contraction is
        # split between the cores.
        cdim = [r.choice([257, 1000, 2049, 4096])] + [r.choice([1, 2, 3])
                                                      for _ in cdim[1:]]
        ldim = [r.choice([1, 2, 3, 64, 128, 130]) for _ in ldim]
        rdim = [r.choice([1, 5, 256, 512, 513]) for _ in rdim]
    shrink(cdim, 8192 if gemv else 1200)
    shrink(ldim, 300)
    shrink(rdim, 700)
    shrink(bdim, 6)
    while math.prod(bdim + cdim + ldim + rdim) > 3_000_000:
        shrink(cdim, max(1, math.prod(cdim) // 2))
        shrink(rdim, max(1, math.prod(rdim) // 2))
    lhs = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + \
        [("f", i) for i in range(nl)]
    rhs = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + \
        [("f", i) for i in range(nr)]
    if r.random() < 0.6:
        r.shuffle(lhs)
    if r.random() < 0.6:
        r.shuffle(rhs)
    size = {"b": bdim, "c": cdim}

    def dims_of(order, free):
        return [(free if k == "f" else size[k])[i] for k, i in order]

    ld, rd = dims_of(lhs, ldim), dims_of(rhs, rdim)
    corder = list(range(nc))
    r.shuffle(corder)
    lc = [lhs.index(("c", i)) for i in corder]
    rc = [rhs.index(("c", i)) for i in corder]
    lb = [lhs.index(("b", i)) for i in range(nb)]
    rb = [rhs.index(("b", i)) for i in range(nb)]
    x = r.random()
    if x < 0.5:
        lt = rt = r.choice(FLOATS)
    elif x < 0.7:
        lt, rt = r.choice(FLOATS + FP8), r.choice(FLOATS + FP8)
    elif x < 0.9:
        lt = rt = r.choice(FP8)
    else:
        lt = rt = r.choice(["s32", "s8"])
    if lt in INTS:
        ot = "s32"
    else:
        ot = r.choice(["f32", "f32", "f32", lt if lt in FLOATS else "f32",
                       "bf16"])
    od = bdim + [ld[i] for i in range(len(lhs)) if lhs[i][0] == "f"] + \
        [rd[i] for i in range(len(rhs)) if rhs[i][0] == "f"]
    a = g.param(lt, ld)
    b = g.param(rt, rd)
    attrs = "lhs_contracting_dims={%s}, rhs_contracting_dims={%s}" % (
        ",".join(map(str, lc)), ",".join(map(str, rc)))
    if nb:
        attrs = "lhs_batch_dims={%s}, rhs_batch_dims={%s}, " % (
            ",".join(map(str, lb)), ",".join(map(str, rb))) + attrs
    y = g.inst(g.shape(ot, od, g.layout(len(od))), "dot(%s, %s), %s" % (a, b, attrs),
               "dot")
    return g.module(y, g.shape(ot, od)), "dot %s%s x %s%s -> %s%s (%s)" % (
        lt, ld, rt, rd, ot, od, attrs)


def fam_reduce(g):
    r = g.r
    op = r.choice(["add", "maximum", "minimum", "add", "maximum", "minimum",
                   "multiply"])
    ty = r.choice(FLOATS * 3 + INTS + ["pred"])
    if ty == "pred":
        op = r.choice(["and", "or"])
    d = g.dims(default_rank(g, 1, 4), 60000)
    k = r.randint(0, len(d)) if r.random() < 0.1 else r.randint(1, len(d))
    rdims = sorted(r.sample(range(len(d)), k))
    x = g.param(ty, d)
    if r.random() < 0.75:
        if op == "add":
            v = r.choice(["0", "0", "1"] if ty != "pred" else ["false"])
        elif op == "maximum":
            v = "-inf" if ty in FLOATS else ("0" if ty.startswith("u") else "-128")
        elif op == "minimum":
            v = "inf" if ty in FLOATS else ("255" if ty == "u8" else "127")
        elif op == "multiply":
            v = "1"
        else:
            v = "true" if op == "and" else "false"
        if r.random() < 0.3:
            v = g.scalar_lit(ty, special=False)
        init = g.inst(ty + "[]", "constant(%s)" % v, "init")
    else:
        init = g.param(ty, [], None, "init")
    comp = g.binary_comp(op, ty)
    od = [d[i] for i in range(len(d)) if i not in rdims]
    y = g.inst(g.shape(ty, od, g.layout(len(od))), "reduce(%s, %s), dimensions={%s}, to_apply=%s" %
               (x, init, ",".join(map(str, rdims)), comp), "red")
    return g.module(y, g.shape(ty, od)), "reduce %s %s%s dims %s" % (
        op, ty, d, rdims)


# -- collectives --------------------------------------------------------------

class Launch:
    """A launch of R replicas x P partitions and the group mode of the
    collectives (XLA's: no channel_id groups replica ids within a
    partition; a channel_id without use_global_device_ids groups replica
    ids, each group spanning every partition; with use_global_device_ids
    groups list device ids)."""

    def __init__(self, g):
        r = g.r
        n = r.choice([2, 2, 3, 4, 4, 6, 8, 8])
        self.mode = r.choice(["replica", "replica-partition", "global", "global"])
        divs = [k for k in range(1, n + 1) if n % k == 0]
        self.R = r.choice(divs)
        if self.mode == "replica" and r.random() < 0.7:
            self.R = n
        self.P = n // self.R
        self.n = n
        g.header = ", replica_count=%d, num_partitions=%d" % (self.R, self.P)
        self.g = g
        self.channel = 0

    def ids(self):
        """How many ids a replica group lists in this mode."""
        return {"global": self.n, "partitions": self.P}.get(self.mode, self.R)

    def span(self):
        """Devices per listed id."""
        return self.P if self.mode == "replica-partition" else 1

    def attrs(self):
        if self.mode == "replica":
            return ""
        self.channel += 1
        s = ", channel_id=%d" % self.channel
        if self.mode == "global":
            s += ", use_global_device_ids=true"
        if self.mode == "partitions":
            pass
        return s

    def groups(self, must_divide=None):
        """Random replica groups: (text, group size)."""
        r = self.g.r
        m = self.ids()
        sizes = [k for k in range(1, m + 1) if m % k == 0 and
                 (must_divide is None or must_divide % k == 0)]
        k = r.choice(sizes)
        if r.random() < 0.15 and k == m:
            return "{}", k * self.span()
        if r.random() < 0.3:
            # Iota form [groups,k]<=[m], maybe through a transpose.
            ng = m // k
            facs = [a for a in range(2, m) if m % a == 0]
            if facs and r.random() < 0.5:
                a = r.choice(facs)
                return "[%d,%d]<=[%d,%d]T(1,0)" % (ng, k, a, m // a), k * self.span()
            return "[%d,%d]<=[%d]" % (ng, k, m), k * self.span()
        ids = list(range(m))
        r.shuffle(ids)
        gs = [sorted(ids[i:i + k]) if r.random() < 0.5 else ids[i:i + k]
              for i in range(0, m, k)]
        return ("{%s}" % ",".join("{%s}" % ",".join(map(str, x)) for x in gs),
                k * self.span())


def coll_type(g, reducing=False):
    ty = g.r.choice(["f32", "f32", "bf16", "f16", "s32", "u8", "s8"] +
                    ([] if reducing else ["pred", "f8e4m3fn"]))
    return ty


def fam_all_reduce(g):
    L = Launch(g)
    ty = coll_type(g, True)
    op = g.r.choice(["add", "maximum", "minimum"])
    d = g.dims(default_rank(g), 20000)
    x = g.param(ty, d)
    grp, k = L.groups()
    comp = g.binary_comp(op, ty)
    form = g.r.random()
    sh = g.shape(ty, d)
    if form < 0.2:
        s = g.inst(sh, "all-reduce-start(%s), replica_groups=%s%s, to_apply=%s" %
                   (x, grp, L.attrs(), comp), "ars")
        y = g.inst(sh, "all-reduce-done(%s)" % s, "ard")
    elif form < 0.3:
        g.comps.append("wrapped {\n  p = %s parameter(0)\n  ROOT ar = %s "
                       "all-reduce(p), replica_groups=%s%s, to_apply=%s\n}\n" %
                       (sh, sh, grp, L.attrs(), comp))
        s = g.inst("((%s), %s)" % (sh, sh), "async-start(%s), calls=wrapped" % x,
                   "as")
        y = g.inst(sh, "async-done(%s), calls=wrapped" % s, "ad")
    else:
        y = g.inst(sh, "all-reduce(%s), replica_groups=%s%s, to_apply=%s" %
                   (x, grp, L.attrs(), comp), "ar")
    return g.module(y, sh), "all-reduce %s %s%s groups %s %s on %dx%d" % (
        op, ty, d, grp, L.mode, L.R, L.P)


def fam_all_gather(g):
    L = Launch(g)
    ty = coll_type(g)
    d = g.dims(default_rank(g, 1, 4), 8000)
    dim = g.r.randrange(len(d))
    x = g.param(ty, d)
    grp, k = L.groups()
    od = list(d)
    od[dim] *= k
    sh, osh = g.shape(ty, d), g.shape(ty, od)
    attrs = "replica_groups=%s, dimensions={%d}%s" % (grp, dim, L.attrs())
    if g.r.random() < 0.25:
        s = g.inst("(%s, %s)" % (sh, osh), "all-gather-start(%s), %s" % (x, attrs),
                   "ags")
        y = g.inst(osh, "all-gather-done(%s)" % s, "agd")
    else:
        y = g.inst(g.shape(ty, od, g.layout(len(od))), "all-gather(%s), %s" % (x, attrs), "ag")
    return g.module(y, osh), "all-gather %s%s dim %d groups %s %s on %dx%d" % (
        ty, d, dim, grp, L.mode, L.R, L.P)


def fam_reduce_scatter(g):
    L = Launch(g)
    ty = coll_type(g, True)
    op = g.r.choice(["add", "maximum", "minimum"])
    d = g.dims(default_rank(g, 1, 4), 8000)
    dim = g.r.randrange(len(d))
    grp, k = L.groups()
    d[dim] *= k
    x = g.param(ty, d)
    od = list(d)
    od[dim] //= k
    comp = g.binary_comp(op, ty)
    sh, osh = g.shape(ty, d), g.shape(ty, od)
    text = "reduce-scatter(%%s), replica_groups=%s, dimensions={%d}%s, to_apply=%s" % (
        grp, dim, L.attrs(), comp)
    if g.r.random() < 0.25:
        g.comps.append("wrapped {\n  p = %s parameter(0)\n  ROOT rs = %s %s\n}\n" %
                       (sh, osh, text % "p"))
        s = g.inst("((%s), %s)" % (sh, osh), "async-start(%s), calls=wrapped" % x,
                   "as")
        y = g.inst(osh, "async-done(%s), calls=wrapped" % s, "ad")
    else:
        y = g.inst(osh, text % x, "rs")
    return g.module(y, osh), "reduce-scatter %s %s%s dim %d groups %s %s on %dx%d" % (
        op, ty, d, dim, grp, L.mode, L.R, L.P)


def fam_combined(g):
    """Combined collectives (several operands, a tuple result), rank-0
    operands among them, and collectives of large values."""
    L = Launch(g)
    r = g.r
    kind = r.choice(["all-reduce", "all-gather", "reduce-scatter"])
    grp, k = L.groups()
    ops, outs = [], []
    for _ in range(r.randint(1, 3)):
        ty = coll_type(g, kind != "all-gather")
        d = g.dims(r.randint(0 if kind != "reduce-scatter" else 1, 3),
                   r.choice([2000, 200000]))
        if kind == "all-reduce":
            od = d
        elif kind == "all-gather":
            if not d:
                d = [r.choice([1, 3])]
            od = [d[0] * k] + d[1:]
        else:
            d = [d[0] * k] + d[1:]
            od = [d[0] // k] + d[1:]
        # The results have their operands' (default) layouts.
        ops.append((g.param(ty, d, None), ty, d))
        outs.append(g.shape(ty, od))
    rest = "replica_groups=%s%s" % (grp, L.attrs())
    if kind != "all-reduce":
        rest += ", dimensions={0}"
    if kind != "all-gather":
        tys = set(t for _, t, _ in ops)
        if len(tys) > 1:
            # One to_apply: one element type.
            t0 = ops[0][1]
            ops = [(g.inst(g.shape(t0, d), "convert(%s)" % n, "cv"), t0, d)
                   for n, _, d in ops]
            outs = [re.sub(r"^[a-z0-9]+", t0, o) for o in outs]
        rest += ", to_apply=%s" % g.binary_comp(r.choice(["add", "maximum"]),
                                                ops[0][1])
    sh = outs[0] if len(ops) == 1 else "(%s)" % ", ".join(outs)
    names = ", ".join(n for n, _, _ in ops)
    ins = [g.shape(t, d) for _, t, d in ops]
    insh = ins[0] if len(ins) == 1 else "(%s)" % ", ".join(ins)
    form = r.random()
    if form < 0.2 and kind != "reduce-scatter":
        # The -start / -done pair: all-reduce-start is its result,
        # all-gather-start (operands, results).
        ssh = sh if kind == "all-reduce" else "(%s, %s)" % (insh, sh)
        st = g.inst(ssh, "%s-start(%s), %s" % (kind, names, rest), "st")
        y = g.inst(sh, "%s-done(%s)" % (kind, st), "c")
    elif form < 0.35:
        params = "\n".join("  q%d = %s parameter(%d)" % (i, ins[i], i)
                           for i in range(len(ins)))
        g.comps.append("wrapped {\n%s\n  ROOT c = %s %s(%s), %s\n}\n" % (
            params, sh, kind, ", ".join("q%d" % i for i in range(len(ins))), rest))
        st = g.inst("((%s), %s)" % (", ".join(ins), sh),
                    "async-start(%s), calls=wrapped" % names, "as")
        y = g.inst(sh, "async-done(%s), calls=wrapped" % st, "c")
    else:
        y = g.inst(sh, "%s(%s), %s" % (kind, names, rest), "c")
    g.lines.append("  ROOT out = %s copy(%s)" % (sh, y) if not sh.startswith("(")
                   else "  ROOT out = %s tuple(%s)" % (sh, ", ".join(
                       g.inst(o, "get-tuple-element(%s), index=%d" % (y, i), "e")
                       for i, o in enumerate(outs))))
    return g.module(None, None), "combined %s of %d on %dx%d %s groups %s" % (
        kind, len(ops), L.R, L.P, L.mode, grp)


def fam_all_to_all(g):
    L = Launch(g)
    if L.mode != "replica":
        # all-to-all has no use_global_device_ids: with a channel_id its
        # groups list partition ids.
        L.mode = "partitions"
    ty = coll_type(g)
    d = g.dims(default_rank(g, 1, 4), 8000)
    grp, k = L.groups()
    if g.r.random() < 0.2:
        # The tuple form: one operand per member.
        xs = [g.param(ty, d) for _ in range(k)]
        sh = g.shape(ty, d)
        tsh = "(%s)" % ", ".join([sh] * k)
        t = g.inst(tsh, "all-to-all(%s), replica_groups=%s%s" %
                   (", ".join(xs), grp, L.attrs()), "a2a")
        outs = [g.inst(sh, "get-tuple-element(%s), index=%d" % (t, i), "e")
                for i in range(k)]
        g.lines.append("  ROOT out = %s tuple(%s)" % (tsh, ", ".join(outs)))
        return g.module(None, None), "all-to-all tuple %d x %s%s groups %s %s on %dx%d" % (
            k, ty, d, grp, L.mode, L.R, L.P)
    dim = g.r.randrange(len(d))
    d[dim] *= k
    x = g.param(ty, d)
    sh = g.shape(ty, d)
    text = "all-to-all(%%s), replica_groups=%s, dimensions={%d}%s" % (
        grp, dim, L.attrs())
    if g.r.random() < 0.2:
        g.comps.append("wrapped {\n  p = %s parameter(0)\n  ROOT a = %s %s\n}\n" %
                       (sh, sh, text % "p"))
        s = g.inst("((%s), %s)" % (sh, sh), "async-start(%s), calls=wrapped" % x,
                   "as")
        y = g.inst(sh, "async-done(%s), calls=wrapped" % s, "ad")
    else:
        y = g.inst(sh, text % x, "a2a")
    return g.module(y, sh), "all-to-all %s%s dim %d groups %s %s on %dx%d" % (
        ty, d, dim, grp, L.mode, L.R, L.P)


def fam_collective_permute(g):
    L = Launch(g)
    # Pairs name partitions with a channel, replicas without one.
    chan = L.P > 1 and (L.R == 1 or g.r.random() < 0.5)
    ty = coll_type(g)
    d = g.dims(default_rank(g), 20000)
    x = g.param(ty, d)
    m = L.P if chan else L.R
    src = list(range(m))
    dst = list(range(m))
    g.r.shuffle(src)
    g.r.shuffle(dst)
    npairs = g.r.randint(1, m)
    pairs = list(zip(src[:npairs], dst[:npairs]))
    if g.r.random() < 0.3:
        pairs = [(i, (i + 1) % m) for i in range(m)]
    ptxt = "{%s}" % ",".join("{%d,%d}" % p for p in pairs)
    sh = g.shape(ty, d)
    attrs = "source_target_pairs=%s%s" % (
        ptxt, ", channel_id=1" if chan else "")
    if g.r.random() < 0.25:
        s = g.inst("(%s, %s, u32[], u32[])" % (sh, sh),
                   "collective-permute-start(%s), %s" % (x, attrs), "cps")
        y = g.inst(sh, "collective-permute-done(%s)" % s, "cpd")
    else:
        y = g.inst(sh, "collective-permute(%s), %s" % (x, attrs), "cp")
    return g.module(y, sh), "collective-permute %s%s pairs %s %s on %dx%d" % (
        ty, d, ptxt, "partitions" if chan else "replicas", L.R, L.P)


def fam_ids(g):
    """partition-id and replica-id in arithmetic and as slice offsets."""
    L = Launch(g)
    d = g.dims(default_rank(g, 1, 3), 20000)
    pid = g.inst("u32[]", "partition-id()", "pid")
    rid = g.inst("u32[]", "replica-id()", "rid")
    s = g.inst("u32[]", "add(%s, %s)" % (pid, rid), "s")
    ty = g.r.choice(["f32", "s32", "bf16"])
    c = g.inst(ty + "[]", "convert(%s)" % s, "cv")
    b = g.inst(g.shape(ty, d), "broadcast(%s), dimensions={}" % c, "b")
    x = g.param(ty, d)
    y = g.inst(g.shape(ty, d), "multiply(%s, %s)" % (x, b), "m")
    if g.r.random() < 0.6:
        sizes = [max(1, n // 2) for n in d]
        i = g.inst("s32[]", "convert(%s)" % s, "i")
        z = g.inst("s32[]", "constant(0)", "z")
        idx = [i] + [z] * (len(d) - 1)
        y = g.inst(g.shape(ty, sizes), "dynamic-slice(%s, %s), dynamic_slice_sizes={%s}" %
                   (y, ", ".join(idx), ",".join(map(str, sizes))), "ds")
        d = sizes
    return g.module(y, g.shape(ty, d)), "partition-id/replica-id %s%s on %dx%d" % (
        ty, d, L.R, L.P)


# -- gather, scatter ----------------------------------------------------------

def gather_dims(g):
    """Random gather / scatter dimension numbers: operand dims, window
    (slice) sizes, the collapsed dims, start_index_map, the batch shape of
    the indices and the index vector dimension."""
    r = g.r
    D = [r.choice([1, 2, 3, 5, 7, 16, 130, 257]) for _ in range(r.randint(1, 3))]
    while math.prod(D) > 40000:
        D[D.index(max(D))] //= 2
    m = r.randint(1, len(D))
    smap = r.sample(range(len(D)), m)
    collapsed = sorted(i for i in range(len(D)) if r.random() < 0.4)
    S = [1 if i in collapsed else r.randint(1, D[i]) for i in range(len(D))]
    B = [r.choice([1, 2, 3, 5]) for _ in range(r.randint(0, 2))]
    ivd = r.randint(0, len(B))
    ishape = B[:ivd] + [m] + B[ivd:]
    return D, S, collapsed, smap, B, ivd, ishape


def fam_gather(g):
    r = g.r
    if r.random() < 0.4:
        ty = r.choice(["f32", "bf16", "s32", "u8", "f8e4m3fn"])
        D, S, collapsed, smap, B, ivd, ishape = gather_dims(g)
        x = g.param(ty, D)
        ids = g.param("s32", ishape, None, "ids") if r.random() < 0.7 else \
            g.constant("s32", ishape, "ids")
        win = [S[i] for i in range(len(D)) if i not in collapsed]
        orank = len(B) + len(win)
        offs = sorted(r.sample(range(orank), len(win)))
        od, wi, bi = [], iter(win), iter(B)
        for k in range(orank):
            od.append(next(wi) if k in offs else next(bi))
        y = g.inst(g.shape(ty, od),
                   "gather(%s, %s), offset_dims={%s}, collapsed_slice_dims={%s}, "
                   "start_index_map={%s}, index_vector_dim=%d, slice_sizes={%s}" %
                   (x, ids, ",".join(map(str, offs)), ",".join(map(str, collapsed)),
                    ",".join(map(str, smap)), ivd, ",".join(map(str, S))), "g")
        return g.module(y, g.shape(ty, od)), "gather %s%s slices %s map %s collapsed %s ids %s" % (
            ty, D, S, smap, collapsed, ishape)
    ty = r.choice(["f32", "bf16", "s32", "f16", "u8"])
    if r.random() < 0.6:
        # Rows of a table: offset_dims={1}, collapsed {0}.
        v, dcol = r.choice([3, 7, 16, 130]), r.choice([1, 5, 64, 257, 600])
        n = r.choice([1, 3, 7, 20, 129])
        t = g.param(ty, [v, dcol])
        if r.random() < 0.5:
            ids = g.param("s32", [n, 1], None, "ids")
        else:
            ids = g.constant("s32", [n, 1], "ids")
        y = g.inst(g.shape(ty, [n, dcol]),
                   "gather(%s, %s), offset_dims={1}, collapsed_slice_dims={0}, "
                   "start_index_map={0}, index_vector_dim=1, slice_sizes={1,%d}" %
                   (t, ids, dcol), "g")
        return g.module(y, g.shape(ty, [n, dcol])), "gather rows %s[%d,%d] x %d" % (
            ty, v, dcol, n)
    # Windows of a 2-d operand, index vector of two starts.
    a, b = r.choice([5, 9, 31, 130]), r.choice([4, 7, 64, 513])
    wa, wb = r.randint(1, a), r.randint(1, b)
    n1, n2 = r.choice([1, 2, 3]), r.choice([1, 4])
    x = g.param(ty, [a, b])
    ivd = r.choice([0, 2])
    ishape = [2, n1, n2] if ivd == 0 else [n1, n2, 2]
    ids = g.param("s32", ishape, None, "ids")
    smap = r.choice(["0,1", "1,0"])
    od = [n1, n2, wa, wb]
    y = g.inst(g.shape(ty, od),
               "gather(%s, %s), offset_dims={2,3}, collapsed_slice_dims={}, "
               "start_index_map={%s}, index_vector_dim=%d, slice_sizes={%d,%d}" %
               (x, ids, smap, ivd, wa, wb), "g")
    return g.module(y, g.shape(ty, od)), "gather windows %s[%d,%d] %dx%d map %s" % (
        ty, a, b, wa, wb, smap)


def fam_scatter(g):
    r = g.r
    ty = r.choice(["f32", "bf16", "s32", "f16"])
    op = r.choice(["add", "add", "take", "maximum", "minimum", "multiply"])
    if op == "take":
        comp = "take_%s" % ty
        g.comps.append("%s {\n  a = %s[] parameter(0)\n  ROOT b = %s[] parameter(1)\n}\n"
                       % (comp, ty, ty))
    else:
        comp = g.binary_comp(op, ty)
    if r.random() < 0.4:
        D, S, inserted, smap, B, ivd, ishape = gather_dims(g)
        x = g.param(ty, D)
        ids = g.param("s32", ishape, None, "ids") if r.random() < 0.7 else \
            g.constant("s32", ishape, "ids")
        win = [S[i] for i in range(len(D)) if i not in inserted]
        urank = len(B) + len(win)
        uwd = sorted(r.sample(range(urank), len(win)))
        ud, wi, bi = [], iter(win), iter(B)
        for k in range(urank):
            ud.append(next(wi) if k in uwd else next(bi))
        u = g.param(ty, ud, None, "u")
        y = g.inst(g.shape(ty, D),
                   "scatter(%s, %s, %s), update_window_dims={%s}, inserted_window_dims={%s}, "
                   "scatter_dims_to_operand_dims={%s}, index_vector_dim=%d, to_apply=%s" %
                   (x, ids, u, ",".join(map(str, uwd)), ",".join(map(str, inserted)),
                    ",".join(map(str, smap)), ivd, comp), "sc")
        return g.module(y, g.shape(ty, D)), "scatter %s %s%s updates %s map %s inserted %s ids %s" % (
            op, ty, D, ud, smap, inserted, ishape)
    v, dcol = r.choice([3, 6, 16, 130]), r.choice([1, 5, 64, 257])
    n = r.choice([1, 3, 10, 40])
    x = g.param(ty, [v, dcol])
    ids = g.param("s32", [n, 1], None, "ids") if r.random() < 0.7 else \
        g.constant("s32", [n, 1], "ids")
    u = g.param(ty, [n, dcol], None, "u")
    y = g.inst(g.shape(ty, [v, dcol]),
               "scatter(%s, %s, %s), update_window_dims={1}, inserted_window_dims={0}, "
               "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%s" %
               (x, ids, u, comp), "sc")
    return g.module(y, g.shape(ty, [v, dcol])), "scatter %s %s[%d,%d] x %d" % (
        op, ty, v, dcol, n)


# -- control flow, tuples, calls ---------------------------------------------

def fam_while(g):
    r = g.r
    ty = r.choice(["f32", "f32", "bf16", "s32"])
    d = g.dims(default_rank(g, 1, 3), 6000)
    trips = r.choice([0, 1, 2, 3, 5, 7, 17, 64, 65, 100])
    ity = r.choice(["s32", "s32", "s64", "u32"])
    start = r.randint(0 if ity == "u32" else -3, 3)
    step = r.choice([1, 1, 2, 3])
    bound = start + trips * step
    dirn = "LT"
    if r.random() < 0.3:
        dirn, bound = "LE", bound - 1
    if r.random() < 0.2:
        dirn, bound = "NE", start + trips * step
    sh = g.shape(ty, d)
    tsh = g.shape(ty, [1] + d[1:])
    tab = [trips + 2] + d[1:]
    tabsh = g.shape(ty, tab)
    st = "(%s[], %s, %s)" % (ity, sh, tabsh)
    use_ds = r.random() < 0.6
    use_dus = r.random() < 0.4
    zeros = ", ".join(["z"] * (len(d) - 1))
    body = ["  s = %s parameter(0)" % st,
            "  i = %s[] get-tuple-element(s), index=0" % ity,
            "  x = %s get-tuple-element(s), index=1" % sh,
            "  t = %s get-tuple-element(s), index=2" % tabsh,
            "  k = %s[] constant(%d)" % (ity, step),
            "  i1 = %s[] add(i, k)" % ity,
            "  z = %s[] constant(0)" % ity]
    res = "x"
    if use_ds:
        body += ["  row = %s dynamic-slice(t, i%s), dynamic_slice_sizes={%s}" %
                 (tsh, (", " + zeros) if zeros else "", ",".join(map(str, [1] + d[1:]))),
                 "  rb = %s broadcast(row), dimensions={%s}" % (
                     sh, ",".join(map(str, range(len(d))))) if d[0] == 1 else
                 "  rr = %s reshape(row)\n  rb = %s broadcast(rr), dimensions={%s}" % (
                     g.shape(ty, d[1:]), sh, ",".join(map(str, range(1, len(d))))),
                 "  x1 = %s add(x, rb)" % sh]
        res = "x1"
    else:
        body += ["  x1 = %s multiply(x, x)" % sh if ty != "s32" else
                 "  x1 = %s add(x, x)" % sh]
        res = "x1"
    tres = "t"
    if use_dus:
        body += ["  xs = %s slice(%s), slice={[0:1]%s}" % (
            tsh, res, "".join(", [0:%d]" % n for n in d[1:])),
            "  t1 = %s dynamic-update-slice(t, xs, i%s)" % (
                tabsh, (", " + zeros) if zeros else "")]
        tres = "t1"
    body.append("  ROOT r = %s tuple(i1, %s, %s)" % (st, res, tres))
    g.comps.append("body {\n%s\n}\n" % "\n".join(body))
    operands = "i, n"
    if r.random() < 0.3:
        # The bound first.
        operands = "n, i"
        dirn = {"LT": "GT", "LE": "GE", "NE": "NE"}[dirn]
    if ity == "u32" and bound < 0:
        bound, dirn, operands = 0, "NE", "i, n"
    g.comps.append("cond {\n  s = %s parameter(0)\n  i = %s[] get-tuple-element(s), "
                   "index=0\n  n = %s[] constant(%d)\n  ROOT c = pred[] compare(%s), "
                   "direction=%s\n}\n" % (st, ity, ity, bound, operands, dirn))
    x = g.param(ty, d, None)
    t = g.param(ty, tab, None)
    i0 = g.inst(ity + "[]", "constant(%d)" % start, "i0")
    init = g.inst(st, "tuple(%s, %s, %s)" % (i0, x, t), "init")
    w = g.inst(st, "while(%s), condition=cond, body=body" % init, "w")
    a = g.inst(sh, "get-tuple-element(%s), index=1" % w, "xo")
    b = g.inst(tabsh, "get-tuple-element(%s), index=2" % w, "to")
    g.lines.append("  ROOT out = (%s, %s) tuple(%s, %s)" % (sh, tabsh, a, b))
    return g.module(None, None), "while %s%s trips %d (%s %s %s, ds %d, dus %d)" % (
        ty, d, trips, ity, operands, dirn, use_ds, use_dus)


def fam_while_body(g):
    """Counted loops whose body holds a collective, a dot, a reduce, a
    nested counted loop or a run-time slice of a table, counting down or
    up, the state a nested tuple; the loop sometimes inside a call."""
    r = g.r
    L = Launch(g) if r.random() < 0.5 else None
    ty = r.choice(["f32", "f32", "bf16"])
    m, k = r.choice([1, 3, 64, 130]), r.choice([2, 7, 128, 129])
    xs, ws = g.shape(ty, [m, k]), g.shape(ty, [k, k])
    trips = r.choice([0, 1, 2, 3, 4, 9, 65, 70])
    down = r.random() < 0.4
    start = trips if down else 0
    st = "(s32[], (%s, %s), %s)" % (xs, ws, xs)
    body = ["  s = %s parameter(0)" % st,
            "  i = s32[] get-tuple-element(s), index=0",
            "  inner = (%s, %s) get-tuple-element(s), index=1" % (xs, ws),
            "  x = %s get-tuple-element(inner), index=0" % xs,
            "  w = %s get-tuple-element(inner), index=1" % ws,
            "  acc = %s get-tuple-element(s), index=2" % xs,
            "  one = s32[] constant(1)",
            "  i1 = s32[] %s(i, one)" % ("subtract" if down else "add")]
    kinds = r.sample(["dot", "coll", "reduce", "nested", "slice"], r.randint(1, 3))
    if L is None and "coll" in kinds:
        kinds.remove("coll")
    cur = "x"
    for kd in kinds:
        if kd == "dot":
            body += ["  d = f32[%d,%d] dot(%s, w), lhs_contracting_dims={1}, "
                     "rhs_contracting_dims={0}" % (m, k, cur),
                     "  dt = f32[%d,%d] tanh(d)" % (m, k),
                     "  dc = %s convert(dt)" % xs]
            cur = "dc"
        elif kd == "coll":
            grp, gk = L.groups()
            g.binary_comp("maximum", ty)
            body += ["  ar = %s all-reduce(%s), replica_groups=%s%s, to_apply=maximum_%s"
                     % (xs, cur, grp, L.attrs(), ty)]
            cur = "ar"
        elif kd == "reduce":
            g.binary_comp("add", ty)
            body += ["  z = %s constant(0)" % (ty + "[]"),
                     "  rd = %s reduce(%s, z), dimensions={1}, to_apply=add_%s" % (
                         g.shape(ty, [m]), cur, ty),
                     "  rb = %s broadcast(rd), dimensions={0}" % xs,
                     "  rm = %s minimum(%s, rb)" % (xs, cur)]
            cur = "rm"
        elif kd == "nested":
            nt = r.choice([1, 2, 5])
            g.comps.append("ibody {\n  s = (s32[], %s) parameter(0)\n  j = s32[] "
                           "get-tuple-element(s), index=0\n  v = %s get-tuple-element(s), "
                           "index=1\n  one = s32[] constant(1)\n  j1 = s32[] add(j, one)\n"
                           "  v1 = %s add(v, v)\n  ROOT t = (s32[], %s) tuple(j1, v1)\n}\n"
                           % (xs, xs, xs, xs))
            g.comps.append("icond {\n  s = (s32[], %s) parameter(0)\n  j = s32[] "
                           "get-tuple-element(s), index=0\n  n = s32[] constant(%d)\n"
                           "  ROOT c = pred[] compare(j, n), direction=LT\n}\n" % (xs, nt))
            body += ["  j0 = s32[] constant(0)",
                     "  it = (s32[], %s) tuple(j0, %s)" % (xs, cur),
                     "  iw = (s32[], %s) while(it), condition=icond, body=ibody" % xs,
                     "  nv = %s get-tuple-element(iw), index=1" % xs]
            cur = "nv"
        elif kd == "slice":
            # A run-time window of w: rows [i mod k, ...).
            body += ["  kk = s32[] constant(%d)" % k,
                     "  im = s32[] remainder(i, kk)",
                     "  z0 = s32[] constant(0)",
                     "  row = %s dynamic-slice(w, im, z0), dynamic_slice_sizes={1,%d}" % (
                         g.shape(ty, [1, k]), k),
                     "  rr = %s reshape(row)" % g.shape(ty, [k]),
                     "  rb2 = %s broadcast(rr), dimensions={1}" % xs,
                     "  sx = %s add(%s, rb2)" % (xs, cur)]
            cur = "sx"
    body += ["  acc1 = %s add(acc, %s)" % (xs, cur),
             "  ni = (%s, %s) tuple(%s, w)" % (xs, ws, cur),
             "  ROOT r = %s tuple(i1, ni, acc1)" % st]
    g.comps.append("body {\n%s\n}\n" % "\n".join(body))
    g.comps.append("cond {\n  s = %s parameter(0)\n  i = s32[] get-tuple-element(s), "
                   "index=0\n  n = s32[] constant(%d)\n  ROOT c = pred[] compare(i, n), "
                   "direction=%s\n}\n" % (st, 0 if down else trips,
                                          "GT" if down else "LT"))
    x = g.param(ty, [m, k])
    w = g.param(ty, [k, k])
    loop = ["  i0 = s32[] constant(%d)" % start,
            "  t0 = (%s, %s) tuple(%s, %s)" % (xs, ws, "x", "w"),
            "  init = %s tuple(i0, t0, x)" % st,
            "  wl = %s while(init), condition=cond, body=body" % st,
            "  ROOT o = %s get-tuple-element(wl), index=2" % xs]
    if r.random() < 0.3:
        g.comps.append("looped {\n  x = %s parameter(0)\n  w = %s parameter(1)\n%s\n}\n"
                       % (xs, ws, "\n".join(loop)))
        y = g.inst(xs, "call(%s, %s), to_apply=looped" % (x, w), "cl")
    else:
        g.lines += [l.replace("(x, w)", "(%s, %s)" % (x, w)).replace(
            "tuple(i0, t0, x)", "tuple(i0, t0, %s)" % x).replace("ROOT o", "o")
            for l in loop]
        y = "o"
    return g.module(y, xs), "while %s trips %d %s: %s%s" % (
        ty, trips, "down" if down else "up", ",".join(kinds),
        " on %dx%d" % (L.R, L.P) if L else "")


def fam_call_tuple(g):
    r = g.r
    ty = r.choice(["f32", "bf16", "s32", "f16"])
    d = g.dims(default_rank(g), 20000)
    sh = g.shape(ty, d)
    g.comps.append("callee {\n  a = %s parameter(0)\n  b = %s parameter(1)\n"
                   "  s = %s add(a, b)\n  m = %s maximum(a, b)\n"
                   "  ROOT t = (%s, %s) tuple(s, m)\n}\n" % (sh, sh, sh, sh, sh, sh))
    x = g.param(ty, d)
    y = g.param(ty, d)
    form = r.choice(["call", "custom-call", "token"])
    if form == "custom-call":
        tgt = r.choice(["Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape",
                        "MoveToDevice", "annotate_device_placement"])
        y = g.inst(sh, 'custom-call(%s), custom_call_target="%s"' % (y, tgt), "cc")
    tk = None
    if form == "token":
        tk = g.inst("token[]", "after-all()", "tk")
        tk = g.inst("token[]", "after-all(%s, %s)" % (tk, tk), "tk")
    c = g.inst("(%s, %s)" % (sh, sh), "call(%s, %s), to_apply=callee" % (x, y), "call")
    a = g.inst(sh, "get-tuple-element(%s), index=0" % c, "e0")
    b = g.inst(sh, "get-tuple-element(%s), index=1" % c, "e1")
    if tk:
        t = g.inst("(%s, token[])" % sh, "tuple(%s, %s)" % (a, tk), "tt")
        a = g.inst(sh, "get-tuple-element(%s), index=0" % t, "e")
    g.lines.append("  ROOT out = (%s, %s) tuple(%s, %s)" % (sh, sh, b, a))
    return g.module(None, None), "%s %s%s" % (form, ty, d)


def fam_mixed(g):
    """A random chain of ops on values of the module: elementwise ops,
    moves, converts, reduces and dots feeding each other, constants among
    the operands, and a result tuple that may hold a parameter, a value
    twice or a reshape of a parameter (outputs that alias)."""
    r = g.r
    pool = []  # (name, type, dims)

    def add(n, ty, d):
        pool.append((n, ty, d))
        return n

    ty0 = r.choice(FLOATS + ["s32"])
    d0 = g.dims(r.randint(1, 3), r.choice([3000, 40000, 300000]))
    add(g.param(ty0, d0), ty0, d0)
    if r.random() < 0.5:
        add(g.param(ty0, d0), ty0, d0)
    for _ in range(r.randint(2, 7)):
        n, ty, d = r.choice(pool)
        same = [v for v in pool if v[1] == ty and v[2] == d]
        k = r.random()
        sh = lambda t, e: g.shape(t, e, g.layout(len(e), 0.2))
        if r.random() < 0.08 and len(d) > 1:
            # A copy into another layout, then a bitcast that reads its
            # bytes in physical order.
            lay = g.layout(len(d), 1.0)
            c = g.inst(g.shape(ty, d, lay), "copy(%s)" % n, "cp")
            nd = reshape_dims(g, math.prod(d), r.randint(1, 3))
            add(g.inst(g.shape(ty, nd, g.layout(len(nd), 0.5)), "bitcast(%s)" % c,
                       "bt"), ty, nd)
            continue
        if k < 0.25:
            m = r.choice(same)[0]
            op = r.choice(["add", "multiply", "maximum", "subtract", "minimum"] +
                          (["divide"] if ty in FLOATS else []))
            add(g.inst(sh(ty, d), "%s(%s, %s)" % (op, n, m), op), ty, d)
        elif k < 0.35:
            c = g.constant(ty, [])
            b = g.inst(g.shape(ty, d), "broadcast(%s), dimensions={}" % c, "bc")
            add(g.inst(sh(ty, d), "multiply(%s, %s)" % (n, b), "scale"), ty, d)
        elif k < 0.45:
            t2 = r.choice(FLOATS + ["s32", "s8", "u8"])
            add(g.inst(sh(t2, d), "convert(%s)" % n, "cv"), t2, d)
        elif k < 0.55 and len(d) > 1:
            perm = list(range(len(d)))
            r.shuffle(perm)
            nd = [d[i] for i in perm]
            add(g.inst(sh(ty, nd), "transpose(%s), dimensions={%s}" % (
                n, ",".join(map(str, perm))), "tr"), ty, nd)
        elif k < 0.62:
            nd = reshape_dims(g, math.prod(d), r.randint(1, 3))
            add(g.inst(g.shape(ty, nd), "reshape(%s)" % n, "rs"), ty, nd)
        elif k < 0.7 and len(d) >= 1:
            dims = sorted(r.sample(range(len(d)), r.randint(1, len(d))))
            op = r.choice(["add", "maximum", "minimum"])
            init = g.inst(ty + "[]", "constant(0)", "z")
            nd = [d[i] for i in range(len(d)) if i not in dims]
            add(g.inst(sh(ty, nd), "reduce(%s, %s), dimensions={%s}, to_apply=%s" % (
                n, init, ",".join(map(str, dims)), g.binary_comp(op, ty)), "red"),
                ty, nd)
        elif k < 0.78:
            parts, nd = [], []
            for e in d:
                a = r.randrange(e)
                b = r.randint(a + 1, e)
                st = r.choice([1, 1, 2, 3])
                parts.append("[%d:%d:%d]" % (a, b, st))
                nd.append((b - a + st - 1) // st)
            add(g.inst(sh(ty, nd), "slice(%s), slice={%s}" % (n, ", ".join(parts)),
                       "sl"), ty, nd)
        elif k < 0.84 and len(d) <= 3:
            nd = [r.choice([1, 3, 130])] + d
            add(g.inst(sh(ty, nd), "broadcast(%s), dimensions={%s}" % (
                n, ",".join(str(i + 1) for i in range(len(d)))), "bc"), ty, nd)
        elif k < 0.92 and ty in FLOATS and len(d) >= 1:
            # A dot contracting the last dimension with a new parameter or a
            # constant.
            kd = d[-1]
            nn = r.choice([1, 5, 130, 513])
            if kd * nn > 20000 or math.prod(d) * nn > 3_000_000:
                nn = 3
            w = g.param(ty, [nn, kd]) if r.random() < 0.7 else \
                g.constant(ty, [nn, kd]) if nn * kd <= 300 else g.param(ty, [nn, kd])
            nd = d[:-1] + [nn]
            add(g.inst(sh("f32", nd), "dot(%s, %s), lhs_contracting_dims={%d}, "
                       "rhs_contracting_dims={1}" % (n, w, len(d) - 1), "dot"),
                "f32", nd)
        else:
            m = r.choice(same)[0]
            dim = r.randrange(len(d)) if d else 0
            if not d:
                continue
            nd = list(d)
            nd[dim] *= 2
            add(g.inst(sh(ty, nd), "concatenate(%s, %s), dimensions={%d}" % (
                n, m, dim), "cc"), ty, nd)
    outs = [pool[-1]]
    for _ in range(r.randint(0, 2)):
        outs.append(r.choice(pool))
    if r.random() < 0.2:
        # A reshape of a parameter as an output.
        n, ty, d = pool[0]
        nd = reshape_dims(g, math.prod(d), r.randint(1, 2))
        outs.append((g.inst(g.shape(ty, nd), "reshape(%s)" % n, "prs"), ty, nd))
    if len(outs) == 1 and r.random() < 0.5:
        n, ty, d = outs[0]
        g.lines.append("  ROOT out = %s copy(%s)" % (g.shape(ty, d), n))
    else:
        g.lines.append("  ROOT out = (%s) tuple(%s)" % (
            ", ".join(g.shape(t, d) for _, t, d in outs),
            ", ".join(n for n, _, _ in outs)))
    ops = [m.group(1) for m in (re.search(r" ([a-z-]+)\(", l) for l in g.lines)
           if m and m.group(1) != "parameter"]
    return g.module(None, None), "mixed %s" % " ".join(ops)


FAMILIES = collections.OrderedDict([
    ("unary", fam_unary),
    ("binary", fam_binary),
    ("compare-select", fam_compare_select),
    ("convert", fam_convert),
    ("iota-constant", fam_iota_constant),
    ("broadcast", fam_broadcast),
    ("transpose", fam_transpose),
    ("reshape-bitcast-copy", fam_reshape),
    ("slice", fam_slice),
    ("concatenate", fam_concatenate),
    ("pad", fam_pad),
    ("dynamic-slice", fam_dynamic_slice),
    ("dynamic-update-slice", fam_dynamic_update_slice),
    ("dot", fam_dot),
    ("reduce", fam_reduce),
    ("all-reduce", fam_all_reduce),
    ("all-gather", fam_all_gather),
    ("reduce-scatter", fam_reduce_scatter),
    ("all-to-all", fam_all_to_all),
    ("combined-collectives", fam_combined),
    ("collective-permute", fam_collective_permute),
    ("ids", fam_ids),
    ("gather", fam_gather),
    ("scatter", fam_scatter),
    ("while", fam_while),
    ("while-body", fam_while_body),
    ("call-tuple", fam_call_tuple),
    ("mixed", fam_mixed),
])


# The families whose generators take dimensions of size 0.
EMPTY_OK = {"unary", "binary", "compare-select", "convert", "broadcast",
            "transpose", "reshape-bitcast-copy", "concatenate", "reduce",
            "all-reduce", "all-gather", "reduce-scatter", "all-to-all",
            "collective-permute", "combined-collectives"}

# ---------------------------------------------------------------------------

def run(cmd, timeout):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired:
        return None, "", "timeout after %ss" % timeout


REFUSAL = re.compile(r"hlo-to-bir: error: [^\n]*?/[^\n]*?: (\S+) is not lowered \((.*)\)")


def classify(rc, out, err):
    """(kind, detail): pass, refused or bug."""
    if rc is None:
        return "bug", "timeout"
    m = re.search(r"compared (\d+) elements on (\d+) devices: (\d+) differ", out)
    if rc == 0 and m and m.group(3) == "0":
        return "pass", ""
    if rc == 1:
        r = REFUSAL.search(err)
        if r:
            # The reason without its numbers, so that refusals group.
            return "refused", "%s: %s" % (r.group(1), re.sub(r"\b\d+\b", "N", r.group(2)))
    if m:
        return "bug", "%s of %s differ" % (m.group(3), m.group(1))
    lines = [l for l in err.splitlines() if "warning" not in l]
    return "bug", "exit %s: %s" % (rc, (lines[-1] if lines else out.strip()[-200:]))


def one_case(args, seed, k):
    fams = args.families
    fam = fams[k % len(fams)]
    rng = random.Random("%d:%d" % (seed, k))
    g = Gen(rng)
    g.empty_ok = fam in EMPTY_OK
    text, desc = FAMILIES[fam](g)
    d = tempfile.mkdtemp(prefix="opcover.")
    path = os.path.join(d, "case%d.hlo" % k)
    with open(path, "w") as f:
        f.write(text)
    res = {"k": k, "fam": fam, "desc": desc, "path": path, "checks": []}
    rc, out, err = run([os.path.join(args.bin, "hlo-run"), "--max-elements=0", path],
                       args.timeout)
    if rc != 0:
        res["invalid"] = (err.strip().splitlines() or ["timeout"])[-1]
    else:
        for lnc in ("1", "2"):
            rc, out, err = run([os.path.join(args.bin, "hlo-to-bir"), "--check",
                                "--lnc=" + lnc, "--seed=%d" % (k % 97), path],
                               args.timeout)
            res["checks"].append((lnc,) + classify(rc, out, err))
    bad = any(c[1] == "bug" for c in res["checks"])
    if args.keep and (bad or args.verbose):
        os.makedirs(args.keep, exist_ok=True)
        shutil.copy(path, os.path.join(args.keep, "%s-%d.hlo" % (fam, k)))
    res["text"] = text if bad else None
    shutil.rmtree(d)
    return res


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cases", type=int, default=60)
    p.add_argument("--first", type=int, default=0)
    p.add_argument("--full", action="store_true")
    p.add_argument("--family", default="")
    p.add_argument("--bin", default="")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--timeout", type=float, default=120)
    p.add_argument("--keep", default="")
    p.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args()
    if args.full or os.environ.get("LOOM_OPCOVER_FULL") == "1":
        args.cases = 1000
    if not args.bin:
        exe = shutil.which("hlo-to-bir")
        if not exe:
            sys.exit("op_coverage: hlo-to-bir is not on PATH; give --bin")
        args.bin = os.path.dirname(exe)
    args.families = [f for f in FAMILIES if not args.family or
                     f in args.family.split(",")]
    if not args.families:
        sys.exit("op_coverage: no family named %s; families: %s" %
                 (args.family, ", ".join(FAMILIES)))

    tally = collections.OrderedDict((f, collections.Counter()) for f in args.families)
    refusals = collections.Counter()
    bugs = []
    invalid = []
    ks = range(args.first, args.first + args.cases)
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as ex:
        for res in ex.map(lambda k: one_case(args, args.seed, k), ks):
            t = tally[res["fam"]]
            t["cases"] += 1
            if "invalid" in res:
                t["invalid"] += 1
                invalid.append(res)
                if args.verbose:
                    print("invalid case %d (%s): %s" % (res["k"], res["desc"],
                                                       res["invalid"]))
                continue
            for lnc, kind, detail in res["checks"]:
                t[kind] += 1
                if kind == "refused":
                    refusals[(res["fam"], detail)] += 1
                elif kind == "bug":
                    bugs.append((res, lnc, detail))
            if args.verbose:
                print("case %d %s: %s" % (res["k"], res["desc"], " ".join(
                    "lnc%s=%s%s" % (l, kd, "(%s)" % dt if dt else "")
                    for l, kd, dt in res["checks"])))
    print("op coverage, seed %d, cases %d to %d" % (args.seed, args.first,
                                                   args.first + args.cases - 1))
    print("%-22s %6s %8s %6s %8s %4s" % ("family", "cases", "invalid", "pass",
                                        "refused", "bug"))
    total = collections.Counter()
    for f, t in tally.items():
        total.update(t)
        print("%-22s %6d %8d %6d %8d %4d" % (f, t["cases"], t["invalid"], t["pass"],
                                             t["refused"], t["bug"]))
    print("%-22s %6d %8d %6d %8d %4d" % ("total", total["cases"], total["invalid"],
                                         total["pass"], total["refused"], total["bug"]))
    for (f, why), n in sorted(refusals.items()):
        print("refused %s %d: %s" % (f, n, why))
    for res, lnc, detail in bugs:
        print("BUG case %d (%s) lnc=%s: %s" % (res["k"], res["desc"], lnc, detail))
        if args.verbose and res["text"]:
            print(res["text"])
    print("checks: %d passed, %d refused, %d bugs; %d invalid cases" % (
        total["pass"], total["refused"], total["bug"], total["invalid"]))
    sys.exit(1 if bugs else 0)


if __name__ == "__main__":
    main()
