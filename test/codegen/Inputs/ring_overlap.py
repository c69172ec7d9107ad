#!/usr/bin/env python3
"""Reads a launch's Chrome trace (hlo-to-bir --check --trace=FILE) and says,
for the collective matmul named OP on device 0 core 0, whether its compute
overlaps the ring: the first Matmul of OP starts before the last of its
collective-permute steps (OP.ring<s>) ends. A gather followed by the dot
cannot do that; the ring lowering does when the transfers are not hidden
behind the loads. Prints the steps and `OP: compute overlaps the ring` or
`OP: no overlap`.
"""

import json
import re
import sys


def main():
    trace, op = sys.argv[1], sys.argv[2]
    with open(trace) as f:
        events = json.load(f)
    if isinstance(events, dict):
        events = events["traceEvents"]
    threads = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
    ring, mm = [], []
    for e in events:
        if e.get("ph") != "X" or e.get("pid") != 0:
            continue
        if not threads.get((e["pid"], e["tid"]), "").startswith("core 0 "):
            continue
        name = e["name"]
        if re.fullmatch(re.escape(op) + r"\.ring[0-9]+", name):
            ring.append((e["ts"], e["ts"] + e["dur"], name))
        elif re.fullmatch(re.escape(op) + r"\.mm(\.[0-9]+)?", name):
            mm.append(e["ts"])
    if not ring or not mm:
        print("%s: %d ring steps, %d matmuls" % (op, len(ring), len(mm)))
        sys.exit(1)
    print("%s: %d ring steps, %d matmuls" % (op, len(ring), len(mm)))
    last = max(end for _, end, _ in ring)
    print("%s: %s" % (op, "compute overlaps the ring" if min(mm) < last
                      else "no overlap"))


if __name__ == "__main__":
    main()
