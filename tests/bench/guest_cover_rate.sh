#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Guest benchmark (not a test: prints figures, never fails on timing).  Run:
#
#   tests/vm/run-in-guest --require-module -t 1200 --append idle=poll \
#       tests/bench/guest_cover_rate.sh [N [R]]
#
# Issue 12's "cover of a whole busy function": the overhead of kinstctl
# cover on every instruction of ksys_read (in-kernel counts keyed by the
# flags) on a loop of N read(2)s of 8 bytes from /dev/zero (syscall_loop,
# timing itself: SYSCALL_LOOP_NS), against the same loop untraced, count
# (the same probes, one key per probe: what the flag key costs) and trace
# (record mode: a record per hit, kinstctl writing --json to /dev/null).
# R rounds of the four cases (default 5), N reads each (default 2000);
# prints ns per read, the median over the rounds, and the ratio to
# untraced.
. /kinst/lib/guest-lib.sh
kt_need_kinst
n=${1:-2000}
r=${2:-5}
f=kernel:ksys_read
# A big ring, so that record mode drops as little as it can.
rmmod kinst && insmod /kinst/modules/kinst.ko ring_size=4194304 ||
    kt_fail "reloading kinst.ko with a 4 MiB ring failed"

# loop_ns: run the loop, print its nanoseconds.
loop_ns() {
	kt_loop_ns read "$n" 8
	echo "$KT_LOOP_NS"
}
: >/tmp/res
i=1
while [ $i -le $r ]; do
	echo "none $(loop_ns)" >>/tmp/res
	kinstctl cover --json "$f" -- sh -c "SYSCALL_LOOP_NS=1 syscall_loop read $n 8 >/tmp/loop.out" \
	    >/tmp/c.json 2>/tmp/c.err || kt_fail "cover failed: $(cat /tmp/c.err)"
	echo "cover $(sed -n 's/^loop_ns //p' /tmp/loop.out)" >>/tmp/res
	kinstctl count --json "$f" -- sh -c "SYSCALL_LOOP_NS=1 syscall_loop read $n 8 >/tmp/loop.out" \
	    >/tmp/n.json 2>/tmp/n.err || kt_fail "count failed: $(cat /tmp/n.err)"
	echo "count $(sed -n 's/^loop_ns //p' /tmp/loop.out)" >>/tmp/res
	kt_trace_start /tmp/t.json /tmp/t.err --json "$f"
	ns=$(loop_ns)
	kt_trace_stop || kt_fail "trace failed: $(cat /tmp/t.err)"
	kt_trace_summary /tmp/t.err /tmp/t.json
	echo "trace $ns" >>/tmp/res
	echo "trace_dropped $KT_DROPPED" >>/tmp/res
	i=$((i + 1))
done
hits=$(jq -r 'select(.type == "summary") | .hits' /tmp/c.json)
kt_log "last cover run: $hits hits over $(jq -r 'select(.type == "cover_function") | .counted' /tmp/c.json) counted instructions, exact: $(jq -r 'select(.type == "summary") | .exact' /tmp/c.json)"
awk -v n="$n" '
function median(a, k,    i, j, t) {
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
$1 == "trace_dropped" { dropped += $2; next }
{ v[$1, ++k[$1]] = $2 / n }
END {
	split("none cover count trace", cs, " ")
	for (c = 1; c <= 4; c++) { m = cs[c]; for (i = 1; i <= k[m]; i++) a[i] = v[m, i]; med[m] = median(a, k[m]) }
	printf "%-8s %14s %10s   (%d reads of 8 bytes from /dev/zero, %d rounds)\n", "case", "ns/read(med)", "vs none", n, k["none"]
	for (c = 1; c <= 4; c++) {
		m = cs[c]; r = ""
		for (i = 1; i <= k[m]; i++) r = r sprintf(" %.0f", v[m, i])
		printf "%-8s %14.0f %9.2fx   rounds:%s\n", m, med[m], med[m] / med["none"], r
	}
	printf "trace (record mode) dropped %d records over the rounds\n", dropped
	print "(figures only: timing under TCG)"
}' /tmp/res
exit 0
