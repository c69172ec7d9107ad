#!/usr/bin/env python3
"""A stand-in for hlo-opt that collective-matmul-proptest --hlo-opt=THIS
calls for every case it generates: it runs the real hlo-opt (from PATH)
with the same arguments, keeping the fused module, then hlo-to-bir --check
on the unfused and the fused module at lnc 1 and 2. Exit status non-zero
(with the failing command on stderr) when any of them fails, so that the
property test reports the case. No refusal is accepted: every case the
generator makes is made of lowered ops (the scan cases that read the weight
index from an activation lower through IndirectDMACopy, docs/codegen.md).
With LOOM_CM_TALLY set, one line per check is appended to that file
(`passed lnc=N fused`, `failed lnc=N unfused`) for run_proptest.py's
summary.
"""

import os
import shutil
import subprocess
import sys
import tempfile


def main():
    args = sys.argv[1:]
    if "-o" not in args:
        raise SystemExit("hlo_opt_then_check: expected -o OUT")
    k = args.index("-o")
    module = [a for a in args[:k] if not a.startswith("-")][-1]
    fused = os.path.join(tempfile.mkdtemp(prefix="cmcheck."), "fused.hlo")
    run = args[:k] + ["-o", fused] + args[k + 2:]
    r = subprocess.run([shutil.which("hlo-opt")] + run)
    if r.returncode:
        sys.exit(r.returncode)
    tally = os.environ.get("LOOM_CM_TALLY")

    def note(line):
        if tally:
            with open(tally, "a") as f:
                f.write(line + "\n")

    for path, form in ((module, "unfused"), (fused, "fused")):
        for lnc in ("1", "2"):
            cmd = [shutil.which("hlo-to-bir"), "--check", "--lnc=" + lnc, path]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode == 0:
                note("passed lnc=%s %s" % (lnc, form))
            if r.returncode:
                note("failed lnc=%s %s" % (lnc, form))
                shutil.copy(path, path + ".failed.hlo")
                sys.stderr.write(r.stdout + "".join(
                    l + "\n" for l in r.stderr.splitlines()
                    if "lnc_verifier: warning" not in l))
                sys.stderr.write("failed: %s (module kept as %s.failed.hlo)\n"
                                 % (" ".join(cmd), path))
                sys.exit(1)
    shutil.rmtree(os.path.dirname(fused))


if __name__ == "__main__":
    main()
