# SPDX-License-Identifier: MIT
# tclsh8.6 workload for tests/integration/run_program.sh: dicts and arrays
# of lists, lsort with -command and -unique, regsub, string map, format,
# lappend/append on growing values, and namespaces of procs. Reads the
# generated words file named by argv; every walk is sorted.
set f [open [lindex $argv 0]]
set lines [split [string trimright [read $f] "\n"] "\n"]
close $f

set count [dict create]
foreach line $lines {
    foreach w $line {
        dict incr count $w
        lappend byend([string index $w end]) $w
    }
}
puts [format "lines %d distinct %d endings %d" [llength $lines] [dict size $count] [array size byend]]

proc bycount {a b} {
    upvar #0 count c
    set d [expr {[dict get $c $b] - [dict get $c $a]}]
    expr {$d != 0 ? $d : [string compare $a $b]}
}
foreach w [lrange [lsort -command bycount [dict keys $count]] 0 14] {
    puts [format "top %-12s %d" $w [dict get $count $w]]
}
foreach e [lsort [array names byend]] {
    set u [lsort -unique $byend($e)]
    puts [format "ending %s %6d words %5d unique first %s last %s" $e \
        [llength $byend($e)] [llength $u] [lindex $u 0] [lindex $u end]]
}

namespace eval text {
    proc rewrite {line} {
        regsub -all {([aeiou])} $line {\1\1} line
        set line [string map {ka KA lo LO " " _} $line]
        return [string toupper [string index $line 0]][string range $line 1 end]
    }
}
set out ""
set n 0
foreach line [lreverse $lines] {
    append out [text::rewrite $line] "\n"
    if {[string length $out] > 65536} { puts -nonewline $out; set out "" }
}
puts -nonewline $out

# Rounds of nested dicts built and dropped.
for {set r 0} {$r < 5} {incr r} {
    set tree [dict create]
    for {set i $r} {$i < [llength $lines]} {incr i 5} {
        set w [lindex $lines $i]
        dict set tree [lindex $w 0] [lindex $w 1] [llength $w]
    }
    set s 0
    foreach k [lsort [dict keys $tree]] {
        foreach k2 [lsort [dict keys [dict get $tree $k]]] { incr s [dict get $tree $k $k2] }
    }
    puts [format "round %d keys %d sum %d" $r [dict size $tree] $s]
    unset tree
}
