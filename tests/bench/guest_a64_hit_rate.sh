#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# arm64 guest benchmark of the per-hit cost (issue 44; not a test: prints
# figures, never fails on timing).  Run in the arm64 guest:
#
#   tests/vm/run-in-guest --arch arm64 --module build/kmod-linux-arm64/kinst.ko \
#       -f build/tests/kmod/a64_devcheck -t 900 tests/bench/guest_a64_hit_rate.sh [N [ROUNDS]]
#
# ns per getpid(2) over N calls (default 20000), ROUNDS rounds (default 5)
# of three cases in rotated order, and each case's median:
#   bare     no probe
#   kinst    a kinst probe at __arm64_sys_getpid+OFF recording every hit
#            (the full register file, 328-byte records) to its ring
#   kprobe   the peer: a tracefs kprobe event at the same address with the
#            same registers (x0-x30, sp, pc, pstate) as fetchargs, its
#            trace_pipe read by cat >/dev/null
# and per hit: (case - bare).  OFF is the first instruction kinst accepts
# after the entry (+4 is ftrace's; +0, mov x9, x30, is its too).  Under QEMU's TCG: the figures are the
# emulator's, labelled so; the ratio is what the same run says.
n=${1:-20000}
rounds=${2:-5}
T=/sys/kernel/tracing
F=__arm64_sys_getpid
err() {
	echo "ERROR: $*"
	exit 1
}
[ -d $T ] || err "no tracefs"
off=
for o in 4 8 12 16; do
	if a64_devcheck armloop $F $o 10 >/tmp/probe 2>&1; then
		off=$o
		break
	fi
done
[ -n "$off" ] || err "no traceable offset in $F+4..16"
regs=
for i in $(seq 0 30); do
	regs="$regs x$i=%x$i"
done
regs="$regs sp=%sp pc=%pc pstate=%pstate"

bare() {
	a64_devcheck loop "$n" | sed -n 's/^loop: \([0-9]*\) ns.*/\1/p'
}
kinst() {
	a64_devcheck armloop $F "$off" "$n" | sed -n 's/^armloop [^:]*: \([0-9]*\) ns.*/\1/p'
}
# The event exists only while its case runs: a kprobe in the function,
# even disabled, makes kinst refuse the whole function (text-patched).
kprobe() {
	echo "p:kinsta64/getpid $F+$off$regs" >>$T/kprobe_events ||
	    err "kprobe event refused"
	echo >$T/trace
	cat $T/trace_pipe >/dev/null &
	_cat=$!
	echo 1 >$T/events/kinsta64/getpid/enable
	_v=$(a64_devcheck loop "$n" | sed -n 's/^loop: \([0-9]*\) ns.*/\1/p')
	echo 0 >$T/events/kinsta64/getpid/enable
	kill $_cat 2>/dev/null
	wait $_cat 2>/dev/null
	echo "-:kinsta64/getpid" >>$T/kprobe_events
	echo "$_v"
}
median() {
	tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
B= K= P=
r=0
while [ $r -lt "$rounds" ]; do
	case $((r % 3)) in
	0) b=$(bare); k=$(kinst); p=$(kprobe) ;;
	1) k=$(kinst); p=$(kprobe); b=$(bare) ;;
	2) p=$(kprobe); b=$(bare); k=$(kinst) ;;
	esac
	echo "round $r: bare $b ns, kinst $k ns, kprobe $p ns (per getpid, N=$n, TCG)"
	B="$B $b" K="$K $k" P="$P $p"
	r=$((r + 1))
done
mb=$(echo "$B" | median)
mk=$(echo "$K" | median)
mp=$(echo "$P" | median)
echo "median: bare $mb ns, kinst $mk ns, kprobe $mp ns per getpid ($F+$off, $rounds rounds, TCG)"
awk -v b="$mb" -v k="$mk" -v p="$mp" 'BEGIN {
	r = 0
	if (p - b > 0)
		r = (k - b) / (p - b)
	printf "per hit: kinst %d ns, kprobe %d ns: kinst/kprobe %.2f (TCG figures)\n", k - b, p - b, r }'
