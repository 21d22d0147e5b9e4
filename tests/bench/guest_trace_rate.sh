#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Guest benchmark (not a test: prints figures, never fails on timing).  Run:
#
#   tests/vm/run-in-guest --require-module -t 600 \
#       -f build/tests/kmod/kinst_devtest tests/bench/guest_trace_rate.sh [N]
#
# (syscall_loop and nsclock come from tests/vm/guest/, on the guest PATH.)
#
# 1. kinst_devtest bench N: per-hit cost of a kinst probe on getpid's
#    second instruction (records drained by the program itself).
# 2. The same instruction, a tight loop of N getpid calls (syscall_loop),
#    timed with: no probe; kinst through `kinstctl trace --json >/dev/null`
#    (the whole path: trap, snapshot, ring, kinstctl formatting); a tracefs
#    kprobe event recording the 16 GPRs (%ax ... %r15) into the trace
#    buffer.  ns/hit = (probed - none) / N, and the ratio kinst/kprobe.
# 3. Delivered hit rate of those kinstctl runs, and the drop count (the loop
#    calls getpid as fast as it can: with 0 drops the rate is sustained).
# Timing under TCG means little in absolute terms; compare within a run.
. /kinst/lib/guest-lib.sh
kt_need_kinst
n=${1:-20000}
f=__x64_sys_getpid
off=$(kinstctl list-offsets --json "$f" | jq -r 'select(.type == "insn" and .offset > 0 and
    (.verdict | startswith("refused") | not)) | .offset' | head -n 1)
now() { nsclock; }
# loop: ns for N getpid calls, the fastest of 3 runs (each run includes
# the program's start, ~the same every time; the minimum damps a busy host)
loop() {
	_best=
	for _r in 1 2 3; do
		_t=$(now)
		syscall_loop getpid "$n" >/dev/null || kt_fail "syscall_loop failed"
		_t=$(( $(now) - _t ))
		[ -n "$_best" ] && [ "$_best" -le "$_t" ] || _best=$_t
	done
	echo "$_best"
}

if command -v kinst_devtest >/dev/null; then
	kinst_devtest bench "$n"
else
	echo "bench: kinst_devtest not in the guest (-f build/tests/kmod/kinst_devtest)"
fi

loop >/dev/null		# warm up
t_none=$(loop)

kt_trace_start /dev/null /tmp/k.err --json "kernel:$f+$off"
t_kinst=$(loop)
kt_trace_stop
cat /tmp/k.err
set -- $(grep -E '^kinstctl: [0-9]+ hits' /tmp/k.err | tr -c '0-9\n' ' ')
k_hits=$1 k_deliv=$2 k_drop=$3

# The kprobe: the event alone (no hist trigger), recorded into the trace
# buffer as kinst records into its ring; counted from the buffer after.
echo "p:$KT_GROUP/bench $f+$off ax=%ax bx=%bx cx=%cx dx=%dx si=%si di=%di bp=%bp sp=%sp r8=%r8 r9=%r9 r10=%r10 r11=%r11 r12=%r12 r13=%r13 r14=%r14 r15=%r15" \
    >>"$KT_TRACING/kprobe_events" || kt_fail "cannot add the kprobe event"
echo 0 >"$KT_TRACING/tracing_on"
echo nop >"$KT_TRACING/current_tracer"
echo 16384 >"$KT_TRACING/buffer_size_kb"
: >"$KT_TRACING/trace"
echo 1 >"$KT_TRACING/events/$KT_GROUP/bench/enable"
echo 1 >"$KT_TRACING/tracing_on"
t_kprobe=$(loop)
echo 0 >"$KT_TRACING/tracing_on"
echo 0 >"$KT_TRACING/events/$KT_GROUP/bench/enable"
kp=$(grep -c "bench: (" "$KT_TRACING/trace")
echo "-:$KT_GROUP/bench" >>"$KT_TRACING/kprobe_events"

awk -v n="$n" -v a="$t_none" -v k="$t_kinst" -v p="$t_kprobe" -v off="$off" \
    -v h="$k_hits" -v d="$k_deliv" -v dr="$k_drop" -v kp="$kp" 'BEGIN {
	printf "bench: %s+%d, %d getpid calls per run\n", "'"$f"'", off, n
	printf "bench: no probe:            %8.0f ns/call\n", a / n
	printf "bench: kinst (kinstctl --json >/dev/null): %8.0f ns/call, %8.0f ns/hit (%d hits, %d delivered, %d dropped)\n", k / n, (k - a) / n, h, d, dr
	printf "bench: kprobe_events 16 GPRs: %8.0f ns/call, %8.0f ns/hit (%d hits counted)\n", p / n, (p - a) / n, kp
	if (p > a) printf "bench: kinst/kprobe per-hit ratio: %.2f\n", (k - a) / (p - a)
	printf "bench: kinstctl delivered %.0f hits/s over the 3 runs (%d dropped: with drops, the kinst ns/hit above mixes recorded and dropped hits)\n", d / (3 * k / 1e9), dr
}'
