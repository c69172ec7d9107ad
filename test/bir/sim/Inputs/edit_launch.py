"""Writes a changed copy of a launch document, for the launch tests.

  edit_launch.py IN OUT swap D1 D2           exchange the programs of two devices
  edit_launch.py IN OUT group D NAME G,...   set collective NAME's group on device D
"""
import json
import sys

src, dst, cmd = sys.argv[1], sys.argv[2], sys.argv[3]
doc = json.load(open(src))
devices = doc["launch"]["devices"]
if cmd == "swap":
    a, b = int(sys.argv[4]), int(sys.argv[5])
    devices[a]["modules"], devices[b]["modules"] = devices[b]["modules"], devices[a]["modules"]
elif cmd == "group":
    d, name, group = int(sys.argv[4]), sys.argv[5], [int(g) for g in sys.argv[6].split(",")]
    found = 0
    for module in devices[d]["modules"]:
        for block in module["blocks"]:
            for inst in block["instructions"]:
                if inst["name"] == name:
                    inst["group"] = group
                    found += 1
    if not found:
        sys.exit("no instruction " + name)
else:
    sys.exit("unknown command " + cmd)
json.dump(doc, open(dst, "w"))
