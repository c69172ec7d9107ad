#!/usr/bin/env bash
# The SendRecv engine study (docs/local-collectives.md, "Study"): runs
# sendrecv-study for the cost-model table and the simulated check, prints
# the summaries and draws docs/images/sendrecv-engine-study.png with gnuplot
# (Debian package gnuplot-nox).
#
#   scripts/sendrecv-study.sh [--cost NAME=VALUE]...
#
# Extra arguments go to sendrecv-study (e.g. --cost sb2sb-bytes-per-ns=153.6).
# LOOM_BUILD_DIR picks the build (default build/); SENDRECV_STUDY_PNG the
# output image.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${LOOM_BUILD_DIR:-$ROOT/build}"
PNG="${SENDRECV_STUDY_PNG:-$ROOT/docs/images/sendrecv-engine-study.png}"
TOOL="$BUILD/bin/sendrecv-study"

if ! command -v gnuplot >/dev/null; then
  echo "sendrecv-study.sh: gnuplot is missing (apt-get install gnuplot-nox)" >&2
  exit 1
fi
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
if ! cmake --build "$BUILD" --target sendrecv-study >"$TMP/build.log" 2>&1; then
  cat "$TMP/build.log" >&2
  exit 1
fi
"$TOOL" "$@" >"$TMP/table.dat"
"$TOOL" --simulate "$@" >"$TMP/simulated.dat"

echo "== cost model: where the budget rule (GPSIMD iff <= 1024 effective bytes/partition) is slower"
grep '^# [0-9]-byte' "$TMP/table.dat"
echo "== simulated lowerings (ns)"
cat "$TMP/simulated.dat"

# "slower from N" for the legend, from the summary of each element size.
slower_from() {
  local n
  n="$(grep "^# $1-byte" "$TMP/table.dat" | sed -n 's/.*elements \([0-9]*\)\.\..*/\1/p')"
  if [ -n "$n" ]; then echo "rule slower from $n"; else echo "rule never slower"; fi
}
S4="$(slower_from 4)"; S2="$(slower_from 2)"; S1="$(slower_from 1)"

mkdir -p "$(dirname "$PNG")"
# Data blocks of the table, in sendrecv-study's type order: 0 fp32, 1 bf16,
# 5 int8 stand for the 4-, 2- and 1-byte types (types of one size are equal).
gnuplot <<EOF
set terminal pngcairo size 1100,900 font "DejaVu Sans,11"
set output "$PNG"
set datafile missing "-"
set multiplot layout 2,1 title "SendRecv swap of a 128-partition tile: GPSIMDSB2SB vs DMACopy (loom cost model)" font ",13"

set title "Copy time"
set logscale x 2
set logscale y 10
set xrange [1:4096]
set format x "%g"
set xtics (1, 4, 16, 64, 256, 1024, 4096)
set xlabel "elements per partition"
set ylabel "time (us)"
set grid xtics ytics
set key top left
set arrow 1 from 256, graph 0 to 256, graph 1 nohead dashtype 2 lc rgb "#888888"
set label 1 "GPSIMD limit: 256 elements\n(1024 effective bytes)" at 270, graph 0.12 tc rgb "#555555"
plot "$TMP/table.dat" index 0 using 3:(\$4/1000) with lines lw 3 lc rgb "#000000" title "GPSIMDSB2SB (any type: 4-byte lanes)", \
     "" index 0 using 3:(\$5/1000) with lines lw 2 lc rgb "#1f77b4" title "DMACopy, 4-byte types", \
     "" index 1 using 3:(\$5/1000) with lines lw 2 lc rgb "#ff7f0e" title "DMACopy, 2-byte types", \
     "" index 5 using 3:(\$5/1000) with lines lw 2 lc rgb "#2ca02c" title "DMACopy, 1-byte types"

set title "GPSIMD time / DMA time where the budget rule picks GPSIMD (above 1: the rule picks the slower engine)"
unset logscale y
unset label 1
set xrange [1:260]
set xtics (1, 2, 4, 8, 16, 32, 64, 128, 256)
set yrange [0:2]
set ylabel "GPSIMD / DMA"
set key top left
set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead lw 2 dashtype 2 lc rgb "#d62728"
plot "$TMP/table.dat" index 0 using 3:(\$4/\$5) with lines lw 2 lc rgb "#1f77b4" title "4-byte types ($S4)", \
     "" index 1 using 3:(\$4/\$5) with lines lw 2 lc rgb "#ff7f0e" title "2-byte types ($S2)", \
     "" index 5 using 3:(\$4/\$5) with lines lw 2 lc rgb "#2ca02c" title "1-byte types ($S1)"
unset multiplot
EOF
echo "== wrote $PNG"
