#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Guest benchmark (not a test: prints figures, never fails on timing).  Run:
#
#   tests/vm/run-in-guest --require-module -t 600 \
#       -f build/tests/kmod/kinst_devtest tests/bench/guest_stack_rate.sh [N]
#
# 1. kinst_devtest bench: the kernel-side per-hit cost on getpid's second
#    instruction, bare and with KINST_ARM_STACK (records drained by the
#    program itself between batches of 1000 calls: no reader competes).
# 2. The loop below, through kinstctl (the whole path, reader included):
# Per-hit cost of stacks (issue 11), all in one guest run, on the same
# instruction (the first traceable one of ksys_read, after its entry), a
# loop of N 7-byte reads of /dev/zero (syscall_loop) timed with:
#   none:    no probe;
#   bare:    kinstctl trace --json >/dev/null (today's record);
#   stack:   kinstctl trace --stack --json >/dev/null (record + unwind +
#            symbolized JSON frames);
#   kprobe:  a tracefs kprobe on the same instruction with the `stacktrace`
#            trigger (the event plus a kernel stack into the trace buffer).
# ns/hit = (probed - none) / N.  Timing under TCG means little in absolute
# terms; compare within a run.
. /kinst/lib/guest-lib.sh
kt_need_kinst
n=${1:-5000}
f=ksys_read
off=$(kinstctl list-offsets --json "$f" | jq -r 'select(.type == "insn" and .offset > 0 and
    (.verdict | startswith("refused") | not)) | .offset' | head -n 1)
loop() {
	_best=
	for _r in 1 2 3; do
		_t=$(nsclock)
		syscall_loop read "$n" 7 >/dev/null || kt_fail "syscall_loop failed"
		_t=$(( $(nsclock) - _t ))
		[ -n "$_best" ] && [ "$_best" -le "$_t" ] || _best=$_t
	done
	echo "$_best"
}
# kinst_run ARGS...: the loop under kinstctl trace ARGS; prints ns, sets
# hits/delivered/dropped.
kinst_run() {
	kt_trace_start /dev/null /tmp/k.err "$@"
	_t=$(loop)
	kt_trace_stop
	set -- $(grep -E '^kinstctl: [0-9]+ hits' /tmp/k.err | tr -c '0-9\n' ' ')
	echo "$_t $1 $2 $3"
}

if command -v kinst_devtest >/dev/null; then
	kinst_devtest bench 20000
	# The same instruction under a kprobe with the stacktrace trigger,
	# the same loop shape (syscall_loop getpid, best of 3), for 1.
	g=__x64_sys_getpid
	goff=$(kinstctl list-offsets --json "$g" | jq -r 'select(.type == "insn" and .offset > 0 and
	    (.verdict | startswith("refused") | not)) | .offset' | head -n 1)
	gloop() {
		_best=
		for _r in 1 2 3; do
			_t=$(nsclock)
			syscall_loop getpid 20000 >/dev/null || kt_fail "syscall_loop failed"
			_t=$(( $(nsclock) - _t ))
			[ -n "$_best" ] && [ "$_best" -le "$_t" ] || _best=$_t
		done
		echo "$_best"
	}
	gloop >/dev/null
	g_none=$(gloop)
	echo "p:$KT_GROUP/gstack $g+$goff" >>"$KT_TRACING/kprobe_events" ||
	    kt_fail "cannot add the kprobe event"
	echo 0 >"$KT_TRACING/tracing_on"
	echo 16384 >"$KT_TRACING/buffer_size_kb"
	: >"$KT_TRACING/trace"
	echo stacktrace >"$KT_TRACING/events/$KT_GROUP/gstack/trigger"
	echo 1 >"$KT_TRACING/events/$KT_GROUP/gstack/enable"
	echo 1 >"$KT_TRACING/tracing_on"
	g_kp=$(gloop)
	echo 0 >"$KT_TRACING/tracing_on"
	echo 0 >"$KT_TRACING/events/$KT_GROUP/gstack/enable"
	echo '!stacktrace' >"$KT_TRACING/events/$KT_GROUP/gstack/trigger"
	echo "-:$KT_GROUP/gstack" >>"$KT_TRACING/kprobe_events"
	: >"$KT_TRACING/trace"
	awk -v a="$g_none" -v p="$g_kp" -v off="$goff" 'BEGIN {
		printf "bench: %s+%d, syscall_loop getpid 20000 (best of 3): no probe %.0f ns/call; kprobe + stacktrace trigger %.0f ns/call, %.0f ns/hit\n", "'"$g"'", off, a / 20000, p / 20000, (p - a) / 20000
	}'
else
	echo "bench: kinst_devtest not in the guest (-f build/tests/kmod/kinst_devtest)"
fi

loop >/dev/null		# warm up
t_none=$(loop)
set -- $(kinst_run --json "kernel:$f+$off"); t_bare=$1 b_h=$2 b_d=$3 b_dr=$4
set -- $(kinst_run --stack --json "kernel:$f+$off"); t_stack=$1 s_h=$2 s_d=$3 s_dr=$4

echo "p:$KT_GROUP/bstack $f+$off" >>"$KT_TRACING/kprobe_events" ||
    kt_fail "cannot add the kprobe event"
echo 0 >"$KT_TRACING/tracing_on"
echo nop >"$KT_TRACING/current_tracer"
echo 16384 >"$KT_TRACING/buffer_size_kb"
: >"$KT_TRACING/trace"
echo stacktrace >"$KT_TRACING/events/$KT_GROUP/bstack/trigger"
echo 1 >"$KT_TRACING/events/$KT_GROUP/bstack/enable"
echo 1 >"$KT_TRACING/tracing_on"
t_kprobe=$(loop)
echo 0 >"$KT_TRACING/tracing_on"
echo 0 >"$KT_TRACING/events/$KT_GROUP/bstack/enable"
echo '!stacktrace' >"$KT_TRACING/events/$KT_GROUP/bstack/trigger"
kp=$(grep -c "bstack: (" "$KT_TRACING/trace")
kps=$(grep -c "<stack trace>" "$KT_TRACING/trace")
echo "-:$KT_GROUP/bstack" >>"$KT_TRACING/kprobe_events"

awk -v n="$n" -v a="$t_none" -v b="$t_bare" -v s="$t_stack" -v p="$t_kprobe" \
    -v bh="$b_h" -v bd="$b_d" -v bdr="$b_dr" -v sh="$s_h" -v sd="$s_d" -v sdr="$s_dr" \
    -v kp="$kp" -v kps="$kps" -v off="$off" 'BEGIN {
	printf "bench: %s+%d, %d 7-byte reads per run, best of 3\n", "'"$f"'", off, n
	printf "bench: no probe:                       %8.0f ns/call\n", a / n
	printf "bench: kinst bare (--json):            %8.0f ns/call, %8.0f ns/hit (%d hits, %d delivered, %d dropped)\n", b / n, (b - a) / n, bh, bd, bdr
	printf "bench: kinst --stack (--json):         %8.0f ns/call, %8.0f ns/hit (%d hits, %d delivered, %d dropped)\n", s / n, (s - a) / n, sh, sd, sdr
	printf "bench: kprobe + stacktrace trigger:    %8.0f ns/call, %8.0f ns/hit (%d events, %d stack traces in the buffer)\n", p / n, (p - a) / n, kp, kps
	if (p > a) printf "bench: kinst --stack / kprobe+stacktrace per-hit ratio: %.2f\n", (s - a) / (p - a)
	if (b > a) printf "bench: kinst --stack / kinst bare per-hit ratio: %.2f\n", (s - a) / (b - a)
}'
