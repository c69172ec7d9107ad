#!/usr/bin/env python3
"""Writes deep BIR inputs for the robustness tests (docs/robustness.md).

  gen_deep.py chain N FILE    one LNC=2 module whose N TensorCopy
                              instructions form one dependency chain
  gen_deep.py cycle N FILE    the same chain, its first instruction waiting
                              for its last
  gen_deep.py fanin N FILE    N independent copies, the final Branch
                              waiting for all of them
  gen_deep.py fanout N FILE   N copies that all wait for the first
  gen_deep.py nested N FILE   a document whose "modules" is N nested arrays
  gen_deep.py loop N FILE     a module whose loop body copies 2 MiB of SB
                              in N trips (bir-sim's work limit)
"""
import sys


def chain(n, out, cycle=False, shape="chain"):
    out.write('{"version":1,"modules":[{"name":"chain","neuron_core_id":0,'
              '"subgraph_id":0,"pass_options":{"lnc_size":2,"target":"trn2"},'
              '"memory_locations":['
              '{"name":"a","tensor_id":0,"kind":"SB","dtype":"fp32",'
              '"partitions":128,"bytes_per_partition":1024},'
              '{"name":"b","tensor_id":1,"kind":"SB","dtype":"fp32",'
              '"partitions":128,"bytes_per_partition":1024}],'
              '"blocks":[{"name":"entry","instructions":[')
    ap = '{"memloc":"%s","partitions":128,"pattern":[[1,256]]}'
    for i in range(n):
        src, dst = ("a", "b") if i % 2 == 0 else ("b", "a")
        if shape == "fanout":
            dep = ',"deps":["i0"]' if i else ''
        elif shape == "fanin":
            dep = ''
        else:
            dep = ',"deps":["i%d"]' % ((i or n) - 1) if i or cycle else ''
        out.write('{"name":"i%d","type":"TensorCopy","engine":"DVE",'
                  '"inputs":[%s],"outputs":[%s]%s},'
                  % (i, ap % src, ap % dst, dep))
    out.write('{"name":"ret","type":"Branch","engine":"SP","kind":"Return"')
    if shape == "fanin":
        out.write(',"deps":[%s]' % ",".join('"i%d"' % i for i in range(n)))
    elif n:
        out.write(',"deps":["i%d"]' % (n - 1))
    out.write('}]}]}]}\n')


def nested(n, out):
    out.write('{"version":1,"modules":' + '[' * n + ']' * n + '}\n')


def loop(n, out):
    # a is read before anything writes it, so the simulator seeds it.
    ap = ('{"memloc":"%s","partitions":128,"pattern":[[1,4096]]}')
    out.write('{"version":1,"modules":[{"name":"loop","neuron_core_id":0,'
              '"subgraph_id":0,"pass_options":{"lnc_size":1,"target":"trn2"},'
              '"memory_locations":['
              '{"name":"a","tensor_id":0,"kind":"SB","dtype":"fp32",'
              '"partitions":128,"bytes_per_partition":16384},'
              '{"name":"b","tensor_id":1,"kind":"SB","dtype":"fp32",'
              '"partitions":128,"bytes_per_partition":16384}],'
              '"blocks":['
              '{"name":"entry","successors":["body"],"instructions":['
              '{"name":"go","type":"Branch","engine":"SP","kind":"Jump"}]},'
              '{"name":"body","successors":["body","exit"],"instructions":['
              '{"name":"copy","type":"TensorCopy","engine":"DVE",'
              '"inputs":[%s],"outputs":[%s]},'
              '{"name":"back","type":"Branch","engine":"SP","kind":"Loop",'
              '"trip_count":%d,"deps":["copy"]}]},'
              '{"name":"exit","instructions":['
              '{"name":"ret","type":"Branch","engine":"SP","kind":"Return"}]}'
              ']}]}\n' % (ap % "a", ap % "b", n))


def main():
    kind, n, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(path, "w") as out:
        {"chain": chain, "cycle": lambda n, out: chain(n, out, True),
         "fanin": lambda n, out: chain(n, out, shape="fanin"),
         "fanout": lambda n, out: chain(n, out, shape="fanout"),
         "nested": nested, "loop": loop}[kind](n, out)


if __name__ == "__main__":
    main()
