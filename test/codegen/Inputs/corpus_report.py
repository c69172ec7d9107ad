#!/usr/bin/env python3
"""Reports, for every HLO module of a corpus, whether hlo-to-bir lowers it,
and for those with collectives whether hlo-to-bir --check passes.

    corpus_report.py [--bin DIR] [--every N] [--timeout S] [--listed-only]
                     CORPUS_DIR

Every module is first classified by opcode (docs/codegen.md, "Corpus"):
"listed" when every instruction's opcode is one of LISTED_OPCODES below,
"with collectives" when one is in COLLECTIVE_OPCODES. A module whose header
gives no launch size and whose collectives do not fit one device is
compiled for the smallest launch that fits them, as hlo-to-bir's note
names it (codegen::inferLaunchSize).

One line per module: its class, then "lowered", "lowered, check passes",
"lowered, check: <first error>" or "not lowered: <opcode> (<why>)"; then
the counts for the listed modules and for the others, and what blocks the
rest of each, most frequent first. --every N takes every N-th module in
sorted order (a bounded sample for CI); --listed-only skips the others.
Exit 1 when a module makes hlo-to-bir crash or time out, or a lowered
module's check reports differing elements; refusals and a reference run
that exceeds its limits are reported, not failures.
"""

import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

# The ops hlo-to-bir is to lower, by opcode; a custom-call counts whatever
# its target (the identities and AwsNeuronCollectiveMatmul are lowered,
# other targets are refused by name). fusion is not listed.
LISTED_OPCODES = frozenset("""
    parameter constant iota convert broadcast reshape bitcast transpose copy slice
    concatenate pad dynamic-slice dynamic-update-slice add subtract multiply divide
    maximum minimum negate abs exponential log sqrt rsqrt tanh logistic compare select
    and or not dot reduce all-gather all-reduce reduce-scatter collective-permute
    all-to-all all-gather-start all-gather-done all-reduce-start all-reduce-done
    collective-permute-start collective-permute-done async-start async-done
    partition-id replica-id after-all power remainder sine cosine gather scatter
    tuple get-tuple-element call while custom-call""".split())
COLLECTIVE_OPCODES = frozenset("""
    all-reduce all-gather reduce-scatter collective-permute all-to-all
    all-reduce-start all-gather-start collective-permute-start""".split())

INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*(.*)$")
BARE_OPCODE = re.compile(r"\s*([a-z][\w\-]*)\(")
ARRAY_THEN_OPCODE = re.compile(r"\s*[a-z]\w*(?:\[[^\]]*\])?(?:\{[^}]*\})?\s+([a-z][\w\-]*)\(")
NOT_LOWERED = re.compile(r"error: [^ ]+: ([a-z0-9-]+) is not lowered \((.*)\)$")
LAUNCH_NOTE = re.compile(r"note: the smallest launch that fits the module's collectives is "
                         r"(--replica-count=[0-9]+) (--num-partitions=[0-9]+)")


def opcode_after_name(rest):
    """The opcode of an instruction's text after `name =`, or None when the
    text ends before it (the shape or opcode is on a later line)."""
    rest = rest.lstrip()
    if rest.startswith("("):  # a tuple shape: skip its balanced parentheses
        depth = 0
        for i, c in enumerate(rest):
            depth += {"(": 1, ")": -1}.get(c, 0)
            if depth == 0:
                m = BARE_OPCODE.match(rest[i + 1:])
                return m.group(1) if m else None
        return None
    m = BARE_OPCODE.match(rest) or ARRAY_THEN_OPCODE.match(rest)
    return m.group(1) if m else None


def opcodes(text):
    """Every instruction's opcode in the module text: lines `name = shape
    opcode(`, the shape and opcode possibly on the next three lines; whole
    `//` comment lines are skipped."""
    lines = [l for l in text.splitlines() if not l.lstrip().startswith("//")]
    ops = set()
    for k, line in enumerate(lines):
        m = INSTRUCTION.match(line)
        if not m:
            continue
        rest, op = m.group(1), opcode_after_name(m.group(1))
        for nxt in lines[k + 1:k + 4]:
            if op is not None:
                break
            rest += " " + nxt.strip()
            op = opcode_after_name(rest)
        if op:
            ops.add(op)
    return ops


def first_error(text):
    for line in text.splitlines():
        if "error:" in line:
            return line.strip()
    return text.strip().splitlines()[-1] if text.strip() else "no message"


def blocker_key(opcode, why):
    key = "%s (%s)" % (opcode, why)
    key = re.sub(r"'[^']*'", "'...'", key)
    key = re.sub(r"id -?[0-9]+ is out of range \[0, [0-9]+\)(: the launch has no \w+ -?[0-9]+)?", "id out of range", key)
    key = re.sub(r"start index [0-9]+", "start index", key)
    key = re.sub(r"[0-9]+ iterations", "N iterations", key)
    key = re.sub(r"group of [0-9]+ device", "group of N device", key)
    return key


def run_module(tool, path, out, timeout, counts, blockers):
    """One module's line; returns (text, bad)."""
    try:
        r = subprocess.run([tool, path, "-o", out], capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        counts["lowering timed out"] += 1
        return "TIMEOUT", True
    launch = []
    m = LAUNCH_NOTE.search(r.stderr)
    if r.returncode == 1 and m:
        launch = [m.group(1), m.group(2)]
        try:
            r = subprocess.run([tool, path, "-o", out] + launch, capture_output=True,
                               text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            counts["lowering timed out"] += 1
            return "TIMEOUT (%s)" % " ".join(launch), True
    where = " [%s]" % " ".join(launch) if launch else ""
    if r.returncode not in (0, 1):
        counts["crash"] += 1
        return "CRASH (exit %d)%s: %s" % (r.returncode, where, first_error(r.stderr)), True
    if r.returncode == 1:
        err = first_error(r.stderr)
        m = NOT_LOWERED.search(err)
        if m:
            counts["not lowered"] += 1
            blockers[blocker_key(m.group(1), m.group(2))] += 1
            return "not lowered%s: %s (%s)" % (where, m.group(1), m.group(2)), False
        counts["input refused (parse or verify)"] += 1
        return "input refused: %s" % err, False
    counts["lowered"] += 1
    if launch:
        counts["lowered at an inferred launch size"] += 1
    with open(path, errors="replace") as f:
        if not (opcodes(f.read()) & COLLECTIVE_OPCODES):
            return "lowered%s" % where, False
    counts["lowered, with collectives"] += 1
    try:
        r = subprocess.run([tool, "--check", path] + launch, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        counts["check: timeout"] += 1
        return "lowered%s, check: TIMEOUT" % where, False
    summary = [l for l in r.stdout.splitlines() if l.startswith("compared ")]
    if r.returncode == 0:
        counts["check passes"] += 1
        return "lowered%s, check passes (%s)" % (where, summary[0] if summary else ""), False
    if summary:
        counts["check: outputs differ"] += 1
        return "lowered%s, check: %s" % (where, summary[0]), True
    counts["check: did not run (limits)"] += 1
    return "lowered%s, check: %s" % (where, first_error(r.stderr)), False


ROWS = ["lowered", "lowered at an inferred launch size", "lowered, with collectives",
        "check passes", "check: outputs differ", "check: did not run (limits)",
        "check: timeout", "not lowered", "lowering timed out", "crash",
        "input refused (parse or verify)"]


def main():
    args = sys.argv[1:]
    bindir, every, timeout, listed_only = None, 1, 120, False
    while args and args[0].startswith("--"):
        if args[0] == "--bin":
            bindir, args = args[1], args[2:]
        elif args[0] == "--every":
            every, args = int(args[1]), args[2:]
        elif args[0] == "--timeout":
            timeout, args = int(args[1]), args[2:]
        elif args[0] == "--listed-only":
            listed_only, args = True, args[1:]
        else:
            raise SystemExit(__doc__)
    if len(args) != 1:
        raise SystemExit(__doc__)
    tool = os.path.join(bindir, "hlo-to-bir") if bindir else shutil.which("hlo-to-bir")
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(args[0])
                   for f in fs if f.endswith(".hlo"))[::every]
    out = os.path.join(tempfile.mkdtemp(prefix="corpus_report."), "launch.json")
    pops = {"listed": collections.Counter(), "other": collections.Counter()}
    blockers = {"listed": collections.Counter(), "other": collections.Counter()}
    sizes = collections.Counter()
    bad = 0
    for path in files:
        name = os.path.relpath(path, args[0])
        with open(path, errors="replace") as f:
            ops = opcodes(f.read())
        pop = "listed" if ops <= LISTED_OPCODES else "other"
        coll = bool(ops & COLLECTIVE_OPCODES)
        sizes[(pop, coll)] += 1
        if listed_only and pop != "listed":
            continue
        line, failed = run_module(tool, path, out, timeout, pops[pop], blockers[pop])
        bad += failed
        print("%s [%s%s]: %s" % (name, pop, ", collectives" if coll else "", line))
    print()
    print("%d modules: %d listed (%d with collectives), %d other (%d with collectives)" % (
        len(files), sizes[("listed", True)] + sizes[("listed", False)], sizes[("listed", True)],
        sizes[("other", True)] + sizes[("other", False)], sizes[("other", True)]))
    for pop in ["listed", "other"]:
        if listed_only and pop != "listed":
            continue
        print("%s modules:" % pop)
        for k in ROWS:
            print("  %-36s %d" % (k, pops[pop][k]))
        print("  blocking the rest (first refusal of each module):")
        for k, n in blockers[pop].most_common():
            print("    %4d  %s" % (n, k))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
