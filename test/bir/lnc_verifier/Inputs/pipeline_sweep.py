"""Runs bir-opt --pipeline=default over every BIR document under the given
folders, with three option sets, and prints one line per run that
lnc_verifier refused: "REFUSED <file> <options>: <first problem>", or
"UNEXPECTED REFUSAL ..." when the file name does not start with PREFIX.
Then "checked N runs", N counting the runs that reached the end of the
pipeline or lnc_verifier's refusal (documents the loader or an earlier pass
refuses are not counted).

    pipeline_sweep.py PREFIX OUT_DIR FOLDER...
"""
import os
import subprocess
import sys

OPTIONS = [[], ["--enable-ptcom"],
           ["--enable-remote-semaphore-dma", "--enable-ptcom"]]


def main(argv):
    prefix, out_dir, folders = argv[1], argv[2], argv[3:]
    out = os.path.join(out_dir, "sweep.json")
    checked = 0
    for folder in folders:
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".json"):
                continue
            path = os.path.join(folder, name)
            for opts in OPTIONS:
                r = subprocess.run(["bir-opt", "--pipeline=default", *opts, path,
                                    "-o", out], capture_output=True, text=True)
                marker = "pass 'lnc_verifier' failed: "
                if marker in r.stderr:
                    first = r.stderr.split(marker, 1)[1].splitlines()[0]
                    tag = "" if name.startswith(prefix) else "UNEXPECTED "
                    print("%sREFUSED %s %s: %s" % (tag, name, " ".join(opts),
                                                   first))
                    checked += 1
                elif r.returncode == 0:
                    checked += 1
    print("checked %d runs" % checked)


if __name__ == "__main__":
    main(sys.argv)
