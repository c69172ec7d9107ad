#!/usr/bin/env bash
# Draws docs/images/trace-timeline.png (docs/simulator.md, "The trace"): a
# real bir-sim trace of the bundled example examples/bir/lnc2_matmul_allreduce.json,
# lowered for two cores, rendered as a timeline with gnuplot (Debian package
# gnuplot-nox) the way Perfetto lays it out: a row per core and engine,
# every slice a bar from ts to ts + dur (microseconds, the file's unit),
# coloured by the collective its args name, and every flow an arrow.
#
#   scripts/trace-picture.sh
#
# LOOM_BUILD_DIR picks the build (default build/); TRACE_PICTURE_PNG the
# output image. The trace itself is left in $TRACE_PICTURE_JSON when set.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${LOOM_BUILD_DIR:-$ROOT/build}"
PNG="${TRACE_PICTURE_PNG:-$ROOT/docs/images/trace-timeline.png}"

if ! command -v gnuplot >/dev/null; then
  echo "trace-picture.sh: gnuplot is missing (apt-get install gnuplot-nox)" >&2
  exit 1
fi
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
if ! cmake --build "$BUILD" --target bir-opt bir-sim >"$TMP/build.log" 2>&1; then
  cat "$TMP/build.log" >&2
  exit 1
fi
"$BUILD/bin/bir-opt" --lnc=2 --pipeline=default --enable-ptcom \
  "$ROOT/examples/bir/lnc2_matmul_allreduce.json" -o "$TMP/lowered.json"
"$BUILD/bin/bir-sim" --collective=ar --collective=swap --trace="$TMP/trace.json" \
  "$TMP/lowered.json" >/dev/null
if [ -n "${TRACE_PICTURE_JSON:-}" ]; then cp "$TMP/trace.json" "$TRACE_PICTURE_JSON"; fi

# The trace to gnuplot data: slices.dat (x0 x1 row colour label) per
# collective block, flows.dat (x0 row0 dx drow), rows.gp (the row names).
python3 - "$TMP" <<'PY'
import json, sys
tmp = sys.argv[1]
events = json.load(open(tmp + "/trace.json"))["traceEvents"]
procs = {e["pid"]: e["args"]["name"] for e in events
         if e["ph"] == "M" and e["name"] == "process_name"}
threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
           if e["ph"] == "M" and e["name"] == "thread_name"}
# Perfetto's order: processes by pid, their threads by tid; row 0 on top.
keys = sorted(threads)
row = {k: len(keys) - 1 - i for i, k in enumerate(keys)}
colour = {"": 0, "ar": 1, "swap": 2}
with open(tmp + "/slices.dat", "w") as out:
    for e in events:
        if e["ph"] != "X":
            continue
        c = colour.get(e.get("args", {}).get("collective", ""), 3)
        label = e["name"] if e["dur"] >= 3.0 and e["pid"] == 0 else ""
        out.write("%g %g %d %d \"%s\"\n" % (e["ts"], e["ts"] + e["dur"],
                                           row[(e["pid"], e["tid"])], c, label))
starts = {e["id"]: e for e in events if e["ph"] == "s"}
with open(tmp + "/flows.dat", "w") as out:
    for e in events:
        if e["ph"] == "f":
            s = starts[e["id"]]
            r0, r1 = row[(s["pid"], s["tid"])], row[(e["pid"], e["tid"])]
            out.write("%g %d %g %d\n" % (s["ts"], r0, e["ts"] - s["ts"], r1 - r0))
with open(tmp + "/rows.gp", "w") as out:
    tics = ", ".join('"%s %s" %d' % (procs[k[0]], threads[k], row[k]) for k in keys)
    out.write("set ytics (%s)\nset yrange [-0.7:%g]\n" % (tics, len(keys) - 0.3))
PY

mkdir -p "$(dirname "$PNG")"
gnuplot <<EOF
set terminal pngcairo noenhanced size 1400,760 font "DejaVu Sans,10"
set output "$PNG"
set title "bir-sim --trace of examples/bir/lnc2_matmul_allreduce.json lowered for 2 cores (as Perfetto lays it out)" font ",12"
load "$TMP/rows.gp"
set xlabel "time (us; the trace's ts and dur, simulated)"
set xrange [0:*]
set grid xtics lc rgb "#dddddd"
set key outside bottom center horizontal
set style fill solid 0.85 border lc rgb "#333333"
set palette defined (0 "#9aa5b1", 1 "#e07b39", 2 "#3a86c8", 3 "#6a994e")
set cbrange [0:3]
unset colorbox
plot "$TMP/slices.dat" using ((\$1+\$2)/2):3:((\$2-\$1)/2):(0.38):4 with boxxyerror lc palette notitle, \
     "$TMP/slices.dat" using ((\$1+\$2)/2):3:5 with labels font ",8" notitle, \
     "$TMP/flows.dat" using 1:2:3:4 with vectors head filled size screen 0.006,20 lc rgb "#c0392b" lw 1 title "flow (barrier, completion, semaphore)", \
     NaN with boxes lc rgb "#9aa5b1" title "no collective", \
     NaN with boxes lc rgb "#e07b39" title "args.collective = ar (AllReduce)", \
     NaN with boxes lc rgb "#3a86c8" title "args.collective = swap (SendRecv)"
EOF
echo "wrote $PNG"
