#!/usr/bin/env python3
"""Checks that a file is a well-formed Chrome trace (the subset bir-sim
writes): valid JSON, every event with name, ph, pid, tid; complete events
with ts and dur >= 0; flow events in s/f pairs sharing an id. Prints a
summary: the processes, the number of slices and of flows."""
import json
import sys

d = json.load(open(sys.argv[1]))
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
