#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: kinstctl latency --perfetto writes one complete event ("ph":"X") per sample, checked on the host against the Trace Event Format's rules and the histograms (tests/vm/perfetto_check.py --latency): as many spans as samples, per key the histogram's count, minimum and maximum, dur the sample's latency, within the run, not overlapping on a thread, on the workload's thread; each busy-waiting call's span holds the instant a concurrent trace --perfetto recorded inside that call; --by stack spans carry the symbolized stack; a SIGINT keeps what was recorded, one span per thread of four kernel threads named by comm; bad use is a clear error
# scenario-needs: kinst
# scenario-timeout: 420
# scenario-options: -f "$KINST_BUILD/tests/vm/kinst_lattest.ko"
# scenario-host-check: python3 "$KINST_DEFAULT_SRCDIR/tests/vm/perfetto_check.py" --latency vm.out
#
# Issue 26, item 2 (latency).  The guest has no python: each file and what
# the guest knows go to the output between markers.
. /kinst/lib/guest-lib.sh
kt_need_kinst

kt_testmod kinst_lattest
P=/sys/module/kinst_lattest/parameters
dbg="--debug-file $ko"
wait_us=4000 rounds=$(( 4 + $(od -An -tu2 -N2 /dev/urandom) % 5 ))
echo $wait_us >$P/wait_us || kt_fail "write wait_us"
# Monotonic nanoseconds, from the kernel's own clock (timer_list's "now").
now_ns() { awk '/^now at / { print $3; exit }' /proc/timer_list; }

# dump NAME FILE JSON NAME_OF_SPANS COMM END [MORE META LINES...]: the file
# and what the host checks it against, between markers.
dump() {
	_n=$1 _f=$2 _j=$3
	shift 3
	echo "=== perfetto-$_n-meta-begin ==="
	echo "samples=$(jq -r 'select(.type == "summary") | .samples' "$_j")"
	jq -r 'select(.type == "hist" and (has("stack") | not)) | "hist=\(.key // ""):\(.count):\(.min):\(.max)"' "$_j"
	echo "name=$1"
	echo "comm=$2"
	echo "end=$3"
	shift 3
	for _l in "$@"; do echo "$_l"; done
	echo "=== perfetto-$_n-meta-end ==="
	echo "=== perfetto-$_n-file-begin ==="
	cat "$_f"
	echo "=== perfetto-$_n-file-end ==="
}

kt_lattest_spin_call

# 1. latency --by '$retval' over ROUNDS rounds (a busy wait and an early
# return each), while another session traces the call to the spin: an
# instant inside each busy-waiting call.
kt_trace_start /tmp/tr.out /tmp/tr.err --perfetto /tmp/tr.json "kinst_lattest_wait+$from"
t0=$(now_ns)
kinstctl latency --json --perfetto /tmp/l.json $dbg --by '$retval' kinst_lattest_wait \
    -- sh -c "echo $rounds >$P/run" >/tmp/l.out 2>/tmp/l.err ||
    kt_fail "latency --perfetto failed: $(cat /tmp/l.err)"
t1=$(now_ns)
kt_trace_stop || kt_fail "trace --perfetto failed: $(cat /tmp/tr.err)"
cat /tmp/l.err
n=$((2 * rounds))
kt_expect_eq "latency --perfetto: samples (two calls a round)" $n \
    "$(jq -r 'select(.type == "summary") | .samples' /tmp/l.out)"
grep -q "^kinstctl: $n samples written to /tmp/l.json" /tmp/l.err ||
    kt_fail "the summary does not say $n samples were written"
grep -q "WARNING" /tmp/l.err && kt_fail "a warning: $(cat /tmp/l.err)"
dump lat /tmp/l.json /tmp/l.out kinst_lattest_wait sh kinst_lattest:kinst_lattest_wait+0x \
    "start_ns=$t0" "end_ns=$t1" "slow=$wait_us" "rounds=$rounds"
echo "=== perfetto-lat-trace-begin ==="
cat /tmp/tr.json
echo "=== perfetto-lat-trace-end ==="

# 2. --by stack, FROM TO around the busy wait: the stack of each sample.
t0=$(now_ns)
kinstctl latency --json --perfetto /tmp/s.json --by stack "kinst_lattest_wait+$from" \
    "kinst_lattest_wait+$to" -- sh -c "echo 3 >$P/run" >/tmp/s.out 2>/tmp/s.err ||
    kt_fail "latency --perfetto --by stack failed: $(cat /tmp/s.err)"
t1=$(now_ns)
cat /tmp/s.err
kt_expect_eq "latency --perfetto --by stack: samples" 3 \
    "$(jq -r 'select(.type == "summary") | .samples' /tmp/s.out)"
dump stack /tmp/s.json /tmp/s.out \
    "$(printf 'kinst_lattest_wait+0x%x to kinst_lattest_wait+0x%x' "$from" "$to")" sh \
    kinst_lattest:kinst_lattest_wait+0x "start_ns=$t0" "end_ns=$t1" \
    "frame0=$(printf 'kinst_lattest_wait+0x%x' "$to")" "caller=kinst_lattest_set+"

# 3. No command: four kernel threads, then SIGINT.  What the module
# recorded before the stop is written (the drain after the disarm).
t0=$(now_ns)
kinstctl latency --json --perfetto /tmp/i.json kinst_lattest_wait >/tmp/i.out 2>/tmp/i.err &
lp=$!
_n=0
until grep -q '^kinstctl: timing ' /tmp/i.err 2>/dev/null; do
	_n=$((_n + 1))
	[ $_n -lt 600 ] || kt_fail "latency --perfetto did not start: $(cat /tmp/i.err)"
	kill -0 $lp 2>/dev/null || kt_fail "latency --perfetto exited: $(cat /tmp/i.err)"
	sleep 0.1
done
echo 4 >$P/spawn || kt_fail "write spawn"
kt_lattest_threads_done
kill -INT $lp
kt_wait_pid $lp 90 "latency --perfetto after SIGINT" /tmp/i.out /tmp/i.err ||
    kt_fail "latency --perfetto after SIGINT: exit $?: $(cat /tmp/i.err)"
t1=$(now_ns)
cat /tmp/i.err
kt_expect_eq "latency --perfetto, SIGINT: samples (one per thread)" 4 \
    "$(jq -r 'select(.type == "summary") | .samples' /tmp/i.out)"
dump int /tmp/i.json /tmp/i.out kinst_lattest_wait kinst_lattest/ kinst_lattest:kinst_lattest_wait+0x \
    "start_ns=$t0" "end_ns=$t1" "threads=4"

# Bad use: a clear refusal.
kinstctl latency --perfetto /nonexistent/dir/p.json kinst_lattest_wait --duration 1 2>/tmp/u.err
st=$?
[ "$st" != 0 ] || kt_fail "latency --perfetto to an unwritable path succeeded"
grep -q "/nonexistent/dir/p.json" /tmp/u.err || kt_fail "no clear error for an unwritable --perfetto file: $(cat /tmp/u.err)"
kinstctl latency --perfetto 2>/tmp/u.err
[ $? != 0 ] || kt_fail "latency --perfetto without FILE succeeded"
exit 0
