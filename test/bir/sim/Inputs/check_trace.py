#!/usr/bin/env python3
"""Checks that a file is a well-formed Chrome trace (the subset bir-sim
writes): valid JSON, every event with name, ph, pid, tid; complete events
with ts and dur >= 0; flow events in s/f pairs sharing an id. Prints a
summary: the processes, the number of slices and of flows. With
--args NAME, also prints the args of every slice named NAME, one line per
slice: `NAME pid P: {...}` (the keys in the file's order)."""
import json
import sys

d = json.load(open(sys.argv[1]))
show = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--args" else None
events = d["traceEvents"]
procs, slices, starts, finishes = set(), 0, {}, {}
for e in events:
    for key in ("name", "ph", "pid"):
        assert key in e, "event without %s: %r" % (key, e)
    if e["ph"] == "M":
        if e["name"] == "process_name":
            procs.add(e["args"]["name"])
        continue
    assert "tid" in e and "ts" in e, e
    if e["ph"] == "X":
        assert e["dur"] >= 0 and e["ts"] >= 0, e
        slices += 1
        if e["name"] == show:
            print("%s pid %d: %s" % (show, e["pid"], json.dumps(e.get("args"))))
    elif e["ph"] == "s":
        starts[e["id"]] = e
    elif e["ph"] == "f":
        finishes[e["id"]] = e
    else:
        raise AssertionError("unexpected phase %r" % e["ph"])
assert starts.keys() == finishes.keys(), "unpaired flow events"
print("processes: %s" % ", ".join(sorted(procs)))
print("slices: %d" % slices)
print("flows: %d" % len(starts))
