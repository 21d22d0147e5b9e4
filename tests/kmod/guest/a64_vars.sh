#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# C variables by name on arm64 (issue 44): kinstctl, cross-built, reads
# kinst_srctest.ko's DWARF (--debug-file) at live hits in the arm64 guest:
# the loop counter and trip count at the loop body, every variable at every
# instruction of the loop, parameters that are entry values after a
# recursive call (a hidden entry probe saves x0-x5), a struct passed by
# reference.  The JSON goes to the host (a64_guest_test:vars), prefixed
# LOOP, ALL, REC and PT; "RC-<step> N" says each ran.
set -u
F=/kinst/files
ko=$F/kinst_srctest.ko
src=$F/kinst_srctest.c
P=/sys/module/kinst_srctest/parameters
insmod $ko || { echo "FAIL insmod kinst_srctest.ko"; exit 1; }
echo 6 >$P/trips
line() { grep -n "L:$1 " "$src" | cut -d: -f1; }
# trace PREFIX RUNS ARGS...: trace while RUNS runs of the module's
# functions happen, its JSON lines printed behind PREFIX.
trace() {
	pre=$1 runs=$2
	shift 2
	timeout 120 kinstctl trace --json --debug-file $ko "$@" >t.json 2>t.err &
	tp=$!
	n=0
	while ! grep -q '^kinstctl: tracing ' t.err 2>/dev/null && [ $n -lt 120 ]; do
		sleep 1
		n=$((n + 1))
	done
	i=0
	while [ $i -lt "$runs" ]; do echo 1 >$P/run; i=$((i + 1)); done
	kill -INT $tp
	wait $tp
	echo "RC-$pre $?"
	sed -n 's/^kinstctl: \([0-9]* hits\)/\1/p' t.err | head -n 1
	grep -v '^kinstctl: \|^  cpu' t.err | head -n 3
	sed "s/^/$pre /" t.json
}
trace LOOP 4 --var i --var n --var acc "kinst_srctest_loop:$(line loop_body)"
trace ALL 1 --vars kinst_srctest:kinst_srctest_loop
trace REC 2 --var depth --var tag "kinst_srctest_rec:$(line rec_after)"
trace PT 2 --var p kinst_srctest:kinst_srctest_point
