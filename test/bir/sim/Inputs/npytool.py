#!/usr/bin/env python3
"""Writes and prints small .npy files for the simulator tests (no numpy).

  npytool.py make OUT.npy DESCR ROWS COLS EXPR   EXPR in p (row) and i (column)
  npytool.py print FILE.npy                      one line per row: "p: v v v"
                                                 (integers exact, floats %g)
"""
import ast
import struct
import sys

FORMATS = {"<f4": "f", "<f2": "e", "|i1": "b", "|u1": "B", "<i2": "h",
           "<u2": "H", "<i4": "i", "<u4": "I"}


def make(out, descr, rows, cols, expr):
    code = compile(expr, "<expr>", "eval")
    vals = [eval(code, {}, {"p": p, "i": i})
            for p in range(rows) for i in range(cols)]
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }" % (
        descr, rows, cols)
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * pad + "\n"
    with open(out, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode())
        f.write(struct.pack("<%d%s" % (len(vals), FORMATS[descr]), *vals))


def show(path):
    data = open(path, "rb").read()
    assert data[:6] == b"\x93NUMPY", "not a .npy file"
    hlen = struct.unpack("<H", data[8:10])[0]
    header = ast.literal_eval(data[10:10 + hlen].decode())
    rows, cols = header["shape"]
    fmt = FORMATS[header["descr"]]
    vals = struct.unpack_from("<%d%s" % (rows * cols, fmt), data, 10 + hlen)
    print("%s %dx%d" % (header["descr"], rows, cols))
    for p in range(rows):
        row = vals[p * cols:(p + 1) * cols]
        # Integers exactly (%g would round 2147483647), floats as %g.
        form = "%g" if fmt in "fe" else "%d"
        print("%d: %s" % (p, " ".join(form % v for v in row)))


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]),
             sys.argv[6])
    else:
        show(sys.argv[2])
