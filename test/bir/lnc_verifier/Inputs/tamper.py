"""Edits one core's module of a BIR program document, for lnc_verifier's tests.

    tamper.py IN OUT CORE OP ARGS...

OP is one of
    set NAME KEY VALUE      set field KEY of instruction NAME (VALUE is JSON)
    rename NAME NEW         rename instruction NAME, and every dependency on it
    remove NAME             remove instruction NAME; whatever depended on it
                            now depends on its dependencies instead
    wait NAME C INST        add the wait (C, INST) to completion NAME
    block NAME KEY VALUE    set field KEY of block NAME (VALUE is JSON)
    loc NAME KEY VALUE      set field KEY of memory location NAME (VALUE is JSON)
    moveloc NAME NEW        rename memory location NAME, and every access to it
    dead NAME LOC           append a block NAME that no branch reaches, with a
                            Memset NAME_write of location LOC and a Return
CORE selects the module by neuron_core_id (subgraph 0).
"""
import json
import sys


def main(argv):
    src, dst, core, op, args = argv[1], argv[2], int(argv[3]), argv[4], argv[5:]
    with open(src) as f:
        doc = json.load(f)
    mod = next(m for m in doc["modules"]
               if m["neuron_core_id"] == core and m["subgraph_id"] == 0)
    insts = [i for b in mod["blocks"] for i in b["instructions"]]

    def find(name):
        return next(i for i in insts if i["name"] == name)

    if op == "set":
        find(args[0])[args[1]] = json.loads(args[2])
    elif op == "rename":
        find(args[0])["name"] = args[1]
        for i in insts:
            i["deps"] = [args[1] if d == args[0] else d for d in i.get("deps", [])]
    elif op == "remove":
        gone = find(args[0])
        for b in mod["blocks"]:
            b["instructions"] = [i for i in b["instructions"] if i is not gone]
        for i in insts:
            deps = i.get("deps", [])
            if args[0] in deps:
                deps = [d for d in deps if d != args[0]]
                deps += [d for d in gone.get("deps", []) if d not in deps]
                i["deps"] = deps
    elif op == "wait":
        find(args[0]).setdefault("waits", []).append(
            {"core": int(args[1]), "instruction": args[2]})
    elif op == "block":
        next(b for b in mod["blocks"] if b["name"] == args[0])[args[1]] = \
            json.loads(args[2])
    elif op == "loc":
        next(l for l in mod["memory_locations"] if l["name"] == args[0])[
            args[1]] = json.loads(args[2])
    elif op == "moveloc":
        next(l for l in mod["memory_locations"] if l["name"] == args[0])[
            "name"] = args[1]
        for i in insts:
            for ap in i.get("inputs", []) + i.get("outputs", []):
                if ap["memloc"] == args[0]:
                    ap["memloc"] = args[1]
    elif op == "dead":
        mod["blocks"].append({"name": args[0], "instructions": [
            {"name": args[0] + "_write", "type": "Memset", "engine": "DVE",
             "value": 0,
             "outputs": [{"memloc": args[1], "partitions": 1, "pattern": []}]},
            {"name": args[0] + "_ret", "type": "Branch", "engine": "SP",
             "kind": "Return"}]})
    else:
        sys.exit("unknown operation " + op)
    with open(dst, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main(sys.argv)
