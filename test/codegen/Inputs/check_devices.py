#!/usr/bin/env python3
"""Checks hlo-to-bir's programs against hlo-run, one device at a time.

    check_devices.py [--bin DIR] [--tolerance] MODULE.hlo [hlo-to-bir options...]

--tolerance compares float outputs with hlo-run's default per-type
tolerances (|a - b| <= atol + rtol * |b|, docs/hlo-run.md) instead of bit
for bit: for sums whose order the HLO does not fix (a contraction split
between cores).

The tools come from DIR, or from PATH without --bin (as lit sets it).

Compiles MODULE.hlo with hlo-to-bir, gives every entry parameter of every
device the same seeded values in hlo-run (--input) and in bir-sim (--input
on the parameter's location), runs each device's program alone in bir-sim
and compares every output element with hlo-run --output-dir, bit for bit.
A launch whose programs hold a collective across devices cannot run one
device at a time; the script then says so and exits 2. Prints
"compared N elements on D devices: M differ"; exit 1 when M > 0 or a tool
fails.
"""

import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

# Values with at most three significant bits: exact in every float type.
VALUES = [0.0, 0.5, 0.625, 0.75, 0.875, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0]

HLO_INT = {"s8": "|i1", "s16": "<i2", "s32": "<i4", "u8": "|u1", "u16": "<u2",
           "u32": "<u4"}
INT_RANGE = {"s8": (-8, 8), "s16": (-100, 100), "s32": (-1000, 1000),
             "u8": (0, 16), "u16": (0, 200), "u32": (0, 2000)}
INT_FMT = {"|i1": "b", "<i2": "h", "<i4": "i", "|u1": "B", "<u2": "H",
           "<u4": "I", "|b1": "B"}


# hlo-run's default tolerances (docs/hlo-run.md, "Comparing outputs").
TOLERANCE = {"f32": (1e-5, 1e-6), "f16": (1e-3, 1e-3), "bf16": (1e-2, 1e-2),
             "f8e4m3fn": (1.25e-1, 1e-1), "f8e5m2": (1.25e-1, 1e-1)}


def write_npy(path, descr, shape, data):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d," % d for d in shape))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode() + data)


def read_npy(path):
    with open(path, "rb") as f:
        raw = f.read()
    hlen = struct.unpack("<H", raw[8:10])[0]
    header = raw[10:10 + hlen].decode()
    descr = header.split("'descr':")[1].split("'")[1]
    data = raw[10 + hlen:]
    if descr == "<f4":
        return [v for v in struct.unpack("<%df" % (len(data) // 4), data)]
    if descr == "<f2":
        return list(struct.unpack("<%de" % (len(data) // 2), data))
    if descr == "<f8":
        return list(struct.unpack("<%dd" % (len(data) // 8), data))
    fmt = INT_FMT.get(descr)
    if fmt is None:
        raise SystemExit("check_devices: %s: dtype %s" % (path, descr))
    size = struct.calcsize(fmt)
    return list(struct.unpack("<%d%s" % (len(data) // size, fmt), data))


def parse_shape(text):
    ty, dims = text.split("[", 1)
    dims = dims.rstrip("]")
    return ty, [int(d) for d in dims.split(",")] if dims else []


def same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        if a != a and b != b:
            return True
        return struct.pack("<d", a) == struct.pack("<d", b)
    return a == b


def main():
    args = sys.argv[1:]
    bindir = None
    tolerance = False
    while args[:1] in (["--bin"], ["--tolerance"]):
        if args[0] == "--bin":
            bindir, args = args[1], args[2:]
        else:
            tolerance, args = True, args[1:]
    if not args:
        raise SystemExit(__doc__)
    module, flags = args[0], args[1:]
    tool = lambda name: os.path.join(bindir, name) if bindir else shutil.which(name)
    tmp = tempfile.mkdtemp(prefix="check_devices.")
    launch_path = os.path.join(tmp, "launch.json")
    r = subprocess.run([tool("hlo-to-bir"), module, "-o", launch_path] + flags)
    if r.returncode:
        sys.exit(1)
    with open(launch_path) as f:
        launch = json.load(f)["launch"]
    devices = launch["devices"]
    for d in devices:
        for m in d["modules"]:
            for b in m["blocks"]:
                for i in b["instructions"]:
                    if i["type"] == "CollectiveCompute" and not i["local"]:
                        print("check_devices: device %d has the collective "
                              "'%s' across devices" % (d["device"], i["name"]))
                        sys.exit(2)
    rng = random.Random(1)
    hlo_inputs, sim_inputs = [], {}
    for d in devices:
        sim_inputs[d["device"]] = []
        for p in d["parameters"]:
            if p["index"]:
                raise SystemExit("check_devices: tuple parameters")
            ty, shape = parse_shape(p["shape"])
            n = 1
            for x in shape:
                n *= x
            base = os.path.join(tmp, "in_d%d_p%d" % (d["device"], p["parameter"]))
            if ty == "pred":
                vals = [rng.randint(0, 1) for _ in range(n)]
                write_npy(base + ".hlo.npy", "|b1", shape, bytes(vals))
                write_npy(base + ".sim.npy", "|u1", shape, bytes(vals))
            elif ty in HLO_INT:
                lo, hi = INT_RANGE[ty]
                vals = [rng.randint(lo, hi) for _ in range(n)]
                descr = HLO_INT[ty]
                data = struct.pack("<%d%s" % (n, INT_FMT[descr]), *vals)
                write_npy(base + ".hlo.npy", descr, shape, data)
                write_npy(base + ".sim.npy", descr, shape, data)
            else:
                vals = [rng.choice(VALUES) * rng.choice([1, -1]) for _ in range(n)]
                data = struct.pack("<%df" % n, *vals)
                write_npy(base + ".hlo.npy", "<f4", shape, data)
                write_npy(base + ".sim.npy", "<f4", shape, data)
            hlo_inputs += ["--input", "%d:%d=%s.hlo.npy" % (d["device"], p["parameter"], base)]
            sim_inputs[d["device"]] += ["--input", "%s=%s.sim.npy" % (p["memloc"], base)]
    ref = os.path.join(tmp, "ref")
    run_flags = [f for f in flags if f.startswith("--replica-count") or
                 f.startswith("--num-partitions")]
    r = subprocess.run([tool("hlo-run"), module, "--output-dir", ref] + run_flags + hlo_inputs,
                       stdout=subprocess.DEVNULL)
    if r.returncode:
        sys.exit(1)
    total = differ = 0
    shown = 0
    for d in devices:
        prog = os.path.join(tmp, "device%d.json" % d["device"])
        with open(prog, "w") as f:
            json.dump({"version": 1, "modules": d["modules"]}, f)
        dumps = []
        for k, o in enumerate(d["outputs"]):
            out = os.path.join(tmp, "sim_d%d_o%d.npy" % (d["device"], k))
            dumps += ["--dump", "%s=%s" % (o["memloc"], out)]
        r = subprocess.run([tool("bir-sim"), prog] + sim_inputs[d["device"]] + dumps,
                           stdout=subprocess.DEVNULL)
        if r.returncode:
            sys.exit(1)
        for k, o in enumerate(d["outputs"]):
            name = "device%d%s.npy" % (d["device"], "".join("_%d" % i for i in o["index"]))
            want = read_npy(os.path.join(ref, name))
            got = read_npy(os.path.join(tmp, "sim_d%d_o%d.npy" % (d["device"], k)))[:len(want)]
            ty = parse_shape(o["shape"])[0]
            rtol, atol = TOLERANCE.get(ty, (0, 0)) if tolerance else (0, 0)
            for e, (a, b) in enumerate(zip(want, got)):
                total += 1
                close = (isinstance(a, float) and a == a and b == b and
                         abs(a - b) <= atol + rtol * abs(a) and
                         (abs(a) != float("inf") or a == b))
                if not same(a, b) and not close:
                    differ += 1
                    if shown < 10:
                        shown += 1
                        print("device %d output %s element %d: hlo-run %r, bir-sim %r"
                              % (d["device"], o["index"], e, a, b))
            if len(got) < len(want):
                differ += len(want) - len(got)
    print("compared %d elements on %d devices: %d differ" % (total, len(devices), differ))
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
