#!/usr/bin/env python3
"""Mutation test of the launch check: does `bir-sim --against-hlo` refuse
wrong programs?

    mutation_test.py MODULE.hlo [--max=N] [--seed=S] [hlo-to-bir options]

compiles MODULE.hlo with hlo-to-bir (the options given, pipeline included),
checks that the correct launch passes `bir-sim --against-hlo`, then makes
mutants of it, each one change to one device's program:

  drop-barrier   a CoreBarrier removed from every core that has it (and
                 from the dependencies that named it)
  drop-wait      a SemaphoreWait removed likewise
  drop-dep       one dependency of one instruction removed
  shift-offset   a DMACopy's input read one element further on
  reduce-op      a reducing CollectiveCompute's op changed (Add to Max,
                 others to Add)
  matmul-acc     a Matmul's accumulate flag flipped
  ring-reverse   a Permute's group reversed (the ring turns the other way)
  swap-devices   the programs of two devices exchanged

Each mutant runs through `bir-sim --against-hlo=MODULE.hlo` (with the race
check and the deadlock detection the simulator always applies). A mutant is
*refused* when bir-sim exits non-zero (outputs differ, a race, a deadlock,
an unwritten output, an invalid program). An accepted mutant is run once
more with `--output-dir` and its outputs compared byte for byte with the
correct launch's: equal outputs make it *equivalent* (the change does not
change the result, e.g. a dependency that another one implies); different
outputs make it an *escape*, which fails the test. Prints the counts per
mutation and `killed K of N mutants (P%), E equivalent, X escaped`; exit 1
when anything escaped or the correct launch fails.

--max=N samples N mutants (seeded by --seed) for a bounded run, as the lit
test does; --max=0 runs every mutant (LOOM_MUTATION_FULL=1 in the
environment does the same).
"""

import copy
import filecmp
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile


def tool(name):
    path = shutil.which(name)
    if not path:
        raise SystemExit("mutation_test: %s is not on PATH" % name)
    return path


def instructions(module):
    for block in module["blocks"]:
        for inst in block["instructions"]:
            yield block, inst


def remove_named(device, name, only_core=None):
    """Removes instruction `name` from every module of the device (or one
    core's) and every dependency on it."""
    for m in device["modules"]:
        if only_core is not None and m["neuron_core_id"] != only_core:
            continue
        for block in m["blocks"]:
            block["instructions"] = [i for i in block["instructions"]
                                     if i["name"] != name]
            for i in block["instructions"]:
                if "deps" in i:
                    i["deps"] = [d for d in i["deps"] if d != name]


def sites(launch):
    """Every mutation as (kind, description, function mutating a copy)."""
    out = []
    devs = launch["launch"]["devices"]
    for d, dev in enumerate(devs):
        seen = set()
        for m in dev["modules"]:
            core = m["neuron_core_id"]
            for _, inst in instructions(m):
                name, typ = inst["name"], inst.get("type")
                where = "device %d core %d %s" % (d, core, name)
                if typ in ("CoreBarrier", "SemaphoreWait") and name not in seen:
                    seen.add(name)
                    kind = "drop-barrier" if typ == "CoreBarrier" else "drop-wait"

                    def f(l, d=d, name=name):
                        remove_named(l["launch"]["devices"][d], name)
                    out.append((kind, "device %d %s" % (d, name), f))
                for k, dep in enumerate(inst.get("deps", [])):
                    def f(l, d=d, core=core, name=name, dep=dep):
                        for mm in l["launch"]["devices"][d]["modules"]:
                            if mm["neuron_core_id"] != core:
                                continue
                            for _, i in instructions(mm):
                                if i["name"] == name:
                                    i["deps"] = [x for x in i["deps"] if x != dep]
                    out.append(("drop-dep", where + " on " + dep, f))
                if typ == "DMACopy" and inst.get("inputs"):
                    def f(l, d=d, core=core, name=name):
                        for mm in l["launch"]["devices"][d]["modules"]:
                            if mm["neuron_core_id"] != core:
                                continue
                            for _, i in instructions(mm):
                                if i["name"] == name:
                                    ap = i["inputs"][0]
                                    size = {"fp32": 4, "int32": 4, "uint32": 4,
                                            "bf16": 2, "fp16": 2, "int16": 2,
                                            "uint16": 2}.get(ap["dtype"], 1)
                                    ap["offset"] += size
                    out.append(("shift-offset", where, f))
                if typ == "CollectiveCompute" and inst.get("reduce", "None") != "None":
                    def f(l, d=d, core=core, name=name):
                        for mm in l["launch"]["devices"][d]["modules"]:
                            if mm["neuron_core_id"] != core:
                                continue
                            for _, i in instructions(mm):
                                if i["name"] == name:
                                    i["reduce"] = "Max" if i["reduce"] == "Add" else "Add"
                    out.append(("reduce-op", where, f))
                if typ == "Matmul":
                    def f(l, d=d, core=core, name=name):
                        for mm in l["launch"]["devices"][d]["modules"]:
                            if mm["neuron_core_id"] != core:
                                continue
                            for _, i in instructions(mm):
                                if i["name"] == name:
                                    i["accumulate"] = not i.get("accumulate", False)
                    out.append(("matmul-acc", where, f))
                if (typ == "CollectiveCompute" and inst.get("kind") == "Permute"
                        and len(inst.get("group", [])) > 2):
                    def f(l, d=d, core=core, name=name):
                        for mm in l["launch"]["devices"][d]["modules"]:
                            if mm["neuron_core_id"] != core:
                                continue
                            for _, i in instructions(mm):
                                if i["name"] == name:
                                    i["group"] = list(reversed(i["group"]))
                    out.append(("ring-reverse", where, f))
    for a in range(len(devs)):
        for b in range(a + 1, len(devs)):
            def f(l, a=a, b=b):
                ds = l["launch"]["devices"]
                ds[a]["modules"], ds[b]["modules"] = ds[b]["modules"], ds[a]["modules"]
            out.append(("swap-devices", "devices %d and %d" % (a, b), f))
    return out


def main():
    args = sys.argv[1:]
    limit, seed, opts, module = 8, 1, [], None
    for a in args:
        if a.startswith("--max="):
            limit = int(a[len("--max="):])
        elif a.startswith("--seed="):
            seed = int(a[len("--seed="):])
        elif a.startswith("-"):
            opts.append(a)
        else:
            module = a
    if module is None:
        raise SystemExit(__doc__)
    if os.environ.get("LOOM_MUTATION_FULL") == "1":
        limit = 0
    tmp = tempfile.mkdtemp(prefix="mutation.")
    try:
        base = os.path.join(tmp, "base.json")
        r = subprocess.run([tool("hlo-to-bir"), module, "-o", base] + opts,
                           capture_output=True, text=True)
        if r.returncode:
            sys.stderr.write(r.stderr)
            raise SystemExit("mutation_test: hlo-to-bir failed")
        sim = tool("bir-sim")
        base_out = os.path.join(tmp, "base.out")
        r = subprocess.run([sim, base, "--hlo=" + module, "--output-dir=" + base_out],
                           capture_output=True, text=True)
        r2 = subprocess.run([sim, "--against-hlo=" + module, base],
                            capture_output=True, text=True)
        if r.returncode or r2.returncode:
            sys.stderr.write(r.stderr + r2.stdout + r2.stderr)
            print("the correct launch fails the check")
            sys.exit(1)
        with open(base) as f:
            launch = json.load(f)
        all_sites = sites(launch)
        chosen = all_sites
        if limit and len(all_sites) > limit:
            # Every mutation kind first, then a seeded sample of the rest.
            rng = random.Random(seed)
            kinds = {}
            for s in all_sites:
                kinds.setdefault(s[0], []).append(s)
            chosen = [rng.choice(v) for _, v in sorted(kinds.items())][:limit]
            rest = [s for s in all_sites if s not in chosen]
            chosen += rng.sample(rest, max(0, limit - len(chosen)))
        counts = {}
        reasons = {}
        killed = equivalent = 0
        escaped = []
        for n, (kind, where, mutate) in enumerate(chosen):
            mutant = copy.deepcopy(launch)
            mutate(mutant)
            path = os.path.join(tmp, "m%d.json" % n)
            with open(path, "w") as f:
                json.dump(mutant, f)
            r = subprocess.run([sim, "--against-hlo=" + module, path],
                               capture_output=True, text=True)
            c = counts.setdefault(kind, [0, 0, 0])
            c[0] += 1
            if r.returncode:
                killed += 1
                c[1] += 1
                text = (r.stdout + r.stderr).lower()
                why = ("outputs differ" if "differ" in text else
                       "race" if "race" in text else
                       "deadlock" if "deadlock" in text else
                       "read of unwritten bytes" if "uninitialized" in text
                       or "never written" in text else
                       "collectives do not match" if "collective '" in text else
                       "invalid program" if "$.launch" in text else
                       "other: " + (r.stderr.strip().splitlines() or ["?"])[-1][:100])
                reasons[why] = reasons.get(why, 0) + 1
                continue
            out = os.path.join(tmp, "m%d.out" % n)
            subprocess.run([sim, path, "--hlo=" + module, "--output-dir=" + out],
                           capture_output=True, text=True)
            names = sorted(os.listdir(base_out))
            same = (os.path.isdir(out) and sorted(os.listdir(out)) == names and
                    all(filecmp.cmp(os.path.join(base_out, x), os.path.join(out, x),
                                    shallow=False) for x in names))
            if same:
                equivalent += 1
                c[2] += 1
            else:
                escaped.append("%s %s" % (kind, where))
        for kind in sorted(counts):
            t, k, e = counts[kind]
            print("%-13s %4d mutants, %4d refused, %4d equivalent" % (kind, t, k, e))
        for why in sorted(reasons):
            print("refused because: %-40s %d" % (why, reasons[why]))
        total = len(chosen)
        print("mutation sites: %d, run: %d" % (len(all_sites), total))
        print("killed %d of %d mutants (%.1f%%), %d equivalent, %d escaped"
              % (killed, total, 100.0 * killed / max(total, 1), equivalent,
                 len(escaped)))
        for e in escaped:
            print("escaped: " + e)
        sys.exit(1 if escaped else 0)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
