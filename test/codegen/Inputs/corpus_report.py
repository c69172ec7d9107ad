#!/usr/bin/env python3
"""Reports, for every HLO module of a corpus, whether hlo-to-bir lowers it,
and for those with collectives whether hlo-to-bir --check passes.

    corpus_report.py [--bin DIR] [--every N] [--timeout S] CORPUS_DIR

One line per module: "lowered", "lowered, check passes", "lowered, check:
<first error>" or "not lowered: <opcode> (<why>)"; then the counts, and the
opcodes (or reasons) that block the rest, most frequent first. --every N
takes every N-th module in sorted order (a bounded sample for CI). Exit 1
when a module makes hlo-to-bir crash or time out, or a lowered module's
check reports differing elements; refusals and a reference run that exceeds
its limits are reported, not failures.
"""

import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

COLLECTIVE = re.compile(r"\b(all-reduce|all-gather|reduce-scatter|collective-permute|all-to-all)"
                        r"(-start)?\(|AwsNeuronCollectiveMatmul")
NOT_LOWERED = re.compile(r"error: [^ ]+: ([a-z0-9-]+) is not lowered \((.*)\)$")


def first_error(text):
    for line in text.splitlines():
        if "error:" in line:
            return line.strip()
    return text.strip().splitlines()[-1] if text.strip() else "no message"


def main():
    args = sys.argv[1:]
    bindir, every, timeout = None, 1, 120
    while args and args[0].startswith("--"):
        if args[0] == "--bin":
            bindir, args = args[1], args[2:]
        elif args[0] == "--every":
            every, args = int(args[1]), args[2:]
        elif args[0] == "--timeout":
            timeout, args = int(args[1]), args[2:]
        else:
            raise SystemExit(__doc__)
    if len(args) != 1:
        raise SystemExit(__doc__)
    tool = os.path.join(bindir, "hlo-to-bir") if bindir else shutil.which("hlo-to-bir")
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(args[0])
                   for f in fs if f.endswith(".hlo"))[::every]
    out = os.path.join(tempfile.mkdtemp(prefix="corpus_report."), "launch.json")
    counts = collections.Counter()
    blockers = collections.Counter()
    bad = 0
    for path in files:
        name = os.path.relpath(path, args[0])
        with open(path, errors="replace") as f:
            has_coll = bool(COLLECTIVE.search(f.read()))
        try:
            r = subprocess.run([tool, path, "-o", out], capture_output=True, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            print("%s: TIMEOUT" % name)
            bad += 1
            continue
        if r.returncode not in (0, 1):
            print("%s: CRASH (exit %d): %s" % (name, r.returncode, first_error(r.stderr)))
            bad += 1
            continue
        if r.returncode == 1:
            err = first_error(r.stderr)
            m = NOT_LOWERED.search(err)
            if m:
                key = "%s (%s)" % (m.group(1), m.group(2))
                key = re.sub(r"'[^']*'", "'...'", key)
                key = re.sub(r"id -?[0-9]+ is out of range \[0, [0-9]+\)", "id out of range",
                             key)
                key = re.sub(r"start index [0-9]+", "start index", key)
                key = re.sub(r"[0-9]+ iterations", "N iterations", key)
                print("%s: not lowered: %s" % (name, m.group(1)))
                counts["not lowered"] += 1
                blockers[key] += 1
            else:
                print("%s: input refused: %s" % (name, err))
                counts["input refused (parse or verify)"] += 1
            continue
        counts["lowered"] += 1
        if not has_coll:
            print("%s: lowered" % name)
            continue
        counts["lowered, with collectives"] += 1
        try:
            r = subprocess.run([tool, "--check", path], capture_output=True, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            print("%s: lowered, check: TIMEOUT" % name)
            counts["check: timeout"] += 1
            continue
        summary = [l for l in r.stdout.splitlines() if l.startswith("compared ")]
        if r.returncode == 0:
            print("%s: lowered, check passes (%s)" % (name, summary[0] if summary else ""))
            counts["check passes"] += 1
        elif summary:
            print("%s: lowered, check: %s" % (name, summary[0]))
            counts["check: outputs differ"] += 1
            bad += 1
        else:
            print("%s: lowered, check: %s" % (name, first_error(r.stderr)))
            counts["check: did not run (limits)"] += 1
    print()
    print("%d modules" % len(files))
    for k in ["lowered", "lowered, with collectives", "check passes", "check: outputs differ",
              "check: did not run (limits)", "check: timeout", "not lowered",
              "input refused (parse or verify)"]:
        print("  %-34s %d" % (k, counts[k]))
    print("blocking the rest (first refusal of each module):")
    for k, n in blockers.most_common():
        print("  %4d  %s" % (n, k))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
