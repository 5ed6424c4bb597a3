# SPDX-License-Identifier: MIT
# Plots of bench/run.py's data files. Called once per plot:
#   gnuplot -e "which='overview'; datadir='results/raw'; outfile='results/overview.png'; ncol=7" \
#       bench/plot.gp
# (ncol = number of columns of the data file, counted by run.py from its header line).
# which: overview (speed relative to clean glibc), memory (heap + shadow after boot),
#        sizes (micro throughput by size), sweep (HWTAG_SAMPLE sweep on the loopback workload).

set terminal pngcairo size 1200,650 noenhanced font ",10"
set output outfile
set grid ytics
set key outside right top
set datafile missing "NaN"

if (which eq 'overview') {
    set title "Speed relative to clean glibc of the same round (1.0 = as fast; higher is better; time metrics inverted)"
    set style data histograms
    set style histogram clustered gap 1
    set style fill solid 0.8 border -1
    set boxwidth 0.9
    set xtics rotate by -30
    set yrange [0:*]
    set ylabel "speed / clean"
    plot for [i=2:ncol] datadir.'/overview.dat' using i:xtic(1) title columnhead(i), \
         1 with lines dt 2 lc rgb "black" notitle
}

if (which eq 'memory') {
    set title "Memory held after the boot trace: heap + sanitizer shadow (KiB; beyond an empty clean program)"
    set style data histograms
    set style histogram rowstacked
    set style fill solid 0.8 border -1
    set boxwidth 0.7
    set xtics rotate by -30
    set yrange [0:*]
    set ylabel "KiB"
    plot datadir.'/memory.dat' skip 1 using 2:xtic(1) title "heap", '' skip 1 using 3 title "shadow"
}

if (which eq 'sizes') {
    set title "micro: malloc/free throughput by size, 1 thread (Mops/s, median)"
    set logscale x 2
    set logscale y
    set xlabel "allocation size (bytes)"
    set ylabel "Mops/s"
    plot for [i=2:ncol] datadir.'/sizes.dat' using 1:i with linespoints title columnhead(i)
}

if (which eq 'sweep') {
    set title "Sampling sweep: loopback, HWTAG_SAMPLE=N at order 3 (throughput vs HWTAG_MODE=off; unchecked share)"
    set logscale x
    set xlabel "HWTAG_SAMPLE (N)"
    set ylabel "throughput / off"
    set y2label "allocations left unchecked (%)"
    set yrange [0:*]
    set y2range [0:100]
    set ytics nomirror
    set y2tics
    set xtics (1, 2, 5, 10, 20, 50)
    set xrange [0.8:70]
    plot datadir.'/sweep.dat' using 1:2:3:4 with yerrorlines lw 2 title "throughput / off", \
         '' using 1:6 axes x1y2 with linespoints dt 2 title "large allocations unchecked (%)", \
         '' using 1:5 axes x1y2 with linespoints dt 3 title "all allocations unchecked (%)"
}
