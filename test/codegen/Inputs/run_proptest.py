#!/usr/bin/env python3
"""Runs collective-matmul-proptest with --hlo-opt=hlo_opt_then_check.py, so
that every module the generator makes, unfused and fused by the real
hlo-opt, goes through `hlo-to-bir --check` at lnc 1 and 2, and prints the
figures: `checks: P passed, F failed`.

    run_proptest.py [--full] [proptest options]

The bounded sample (the lit test) is the options given; --full, or
LOOM_PROPTEST_FULL=1 in the environment, runs the generator's default run
(320 random cases and 64 scan cases, seed 1) instead.
"""

import collections
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    args = sys.argv[1:]
    full = "--full" in args or os.environ.get("LOOM_PROPTEST_FULL") == "1"
    args = [a for a in args if a != "--full"]
    if full:
        args = [a for a in args
                if not a.startswith(("--cases=", "--scan-cases="))]
    here = os.path.dirname(os.path.abspath(__file__))
    fd, tally = tempfile.mkstemp(prefix="cmtally.")
    os.close(fd)
    env = dict(os.environ, LOOM_CM_TALLY=tally)
    cmd = [shutil.which("collective-matmul-proptest"), "--min-fused-percent=0",
           "--hlo-opt=" + os.path.join(here, "hlo_opt_then_check.py")] + args
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    with open(tally) as f:
        lines = f.read().splitlines()
    os.unlink(tally)
    passed = collections.Counter()
    failed = 0
    for line in lines:
        word, rest = line.split(" ", 1)
        if word == "passed":
            passed[rest] += 1
        else:
            failed += 1
    for key in sorted(passed):
        print("passed %-16s %d" % (key, passed[key]))
    print("checks: %d passed, %d failed" % (sum(passed.values()), failed))
    sys.exit(r.returncode or (1 if failed else 0))


if __name__ == "__main__":
    main()
