#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Guest benchmark (not a test: prints figures, never fails on timing).  Run:
#
#   tests/vm/run-in-guest --require-module -t 600 tests/bench/guest_prog_rate.sh [N]
#
# Per-hit cost of a probe program on getpid's first traceable instruction
# after the entry, N getpid calls per run (syscall_loop), the fastest of 3
# runs each: no probe; a bare probe (kinstctl trace --json >/dev/null);
# --if false (a compare that never holds: the program runs, nothing is
# recorded); --if true (the same program, every hit recorded); --if false
# with a kernel memory load (*(u64)rsp); in-kernel aggregation (issue 11):
# count per probe, count --by comm, hist --value rdi, no record per hit.
# ns/hit = (probed - none) / hits.
# Timing under TCG means little in absolute terms; compare within a run.
. /kinst/lib/guest-lib.sh
kt_need_kinst
n=${1:-20000}
f=__x64_sys_getpid
off=$(kinstctl list-offsets --json "$f" | jq -r 'select(.type == "insn" and .offset > 0 and
    (.verdict | startswith("refused") | not)) | .offset' | head -n 1)
loop() {
	_best=
	for _r in 1 2 3; do
		_t=$(nsclock)
		syscall_loop getpid "$n" >/dev/null || kt_fail "syscall_loop failed"
		_t=$(( $(nsclock) - _t ))
		[ -n "$_best" ] && [ "$_best" -le "$_t" ] || _best=$_t
	done
	echo "$_best"
}
# run LABEL [trace options]: one line of figures
run() {
	_label=$1
	shift
	kt_trace_start /dev/null /tmp/b.err --json "$@" "kernel:$f+$off"
	_t=$(loop)
	kt_trace_stop
	set -- $(grep -E '^kinstctl: [0-9]+ hits' /tmp/b.err | tr -c '0-9\n' ' ')
	awk -v l="$_label" -v t="$_t" -v a="$t_none" -v n="$n" -v h="$1" -v d="$2" -v dr="$3" 'BEGIN {
		printf "bench: %-34s %8.0f ns/call %8.0f ns/hit (%d hits, %d delivered, %d dropped)\n",
		    l, t / n, (t - a) / n, h, d, dr }'
}
# run_agg LABEL count|hist [options]: the same figures for in-kernel
# aggregation (no record per hit; "delivered" is the hits aggregated).
run_agg() {
	_label=$1
	shift
	kinstctl "$@" "kernel:$f+$off" >/dev/null 2>/tmp/b.err &
	_p=$!
	_i=0
	while ! grep -q '^kinstctl: counting ' /tmp/b.err 2>/dev/null; do
		kill -0 "$_p" 2>/dev/null || kt_fail "kinstctl $* exited: $(cat /tmp/b.err)"
		_i=$((_i + 1))
		[ $_i -lt 600 ] || kt_fail "kinstctl $* did not start: $(cat /tmp/b.err)"
		sleep 0.1
	done
	_t=$(loop)
	kill -INT "$_p"
	wait "$_p" || kt_fail "kinstctl $* failed: $(cat /tmp/b.err)"
	set -- $(grep -E '^kinstctl: [0-9]+ hits, [0-9]+ aggregated' /tmp/b.err | tr -c '0-9\n' ' ')
	awk -v l="$_label" -v t="$_t" -v a="$t_none" -v n="$n" -v h="$1" -v d="$2" -v o="$5" 'BEGIN {
		printf "bench: %-34s %8.0f ns/call %8.0f ns/hit (%d hits, %d aggregated, %d overflowed)\n",
		    l, t / n, (t - a) / n, h, d, o }'
}
loop >/dev/null		# warm up
t_none=$(loop)
echo "bench: $f+$off, $n getpid calls per run; no probe: $((t_none / n)) ns/call"
run "bare probe (records every hit)"
run "--if false (rdi == 0x5a5a5a5a)" --if 'rdi == 0x5a5a5a5a'
run "--if true (rdi != 0x5a5a5a5a)" --if 'rdi != 0x5a5a5a5a'
run "--if false with a kernel load" --if '*(u64)rsp == 0x5a5a5a5a && rdi == 1'
run_agg "count (per probe, no program)" count
run_agg "count --by comm" count --by comm
run_agg "hist --value rdi (log2)" hist --value rdi
exit 0
