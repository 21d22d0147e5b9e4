#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: kinstctl trace --perfetto writes Chrome's Trace Event Format: one instant event per hit of the workload's K reads (--if comm), on its thread's track, named by the probe, registers as args, process and thread names from comm, timestamps in microseconds of the monotonic clock within the run; checked on the host against the format's rules (tests/vm/perfetto_check.py)
# scenario-needs: kinst
# scenario-timeout: 240
# scenario-host-check: python3 "$KINST_DEFAULT_SRCDIR/tests/vm/perfetto_check.py" vm.out
#
# Issue 26, item 2.  The guest has no python: the file and what the guest
# knows go to the output between markers.
. /kinst/lib/guest-lib.sh
kt_need_kinst

f=ksys_read
off=$(kt_first_traceable "$f") || kt_fail "no traceable instruction in $f"
k=$(( 50 + $(od -An -tu2 -N2 /dev/urandom) % 100 ))
# Monotonic microseconds, from the kernel's own clock (timer_list's "now").
now_us() { awk '/^now at / { printf "%d\n", $3 / 1000; exit }' /proc/timer_list; }
t0=$(now_us)
[ -n "$t0" ] || kt_fail "no monotonic clock reading in /proc/timer_list"
kt_trace_start /tmp/t.out /tmp/t.err --perfetto /tmp/p.json --if 'comm == "syscall_loop"' "$f+$off"
syscall_loop read "$k" 7 >/dev/null || kt_fail "syscall_loop failed"
kt_trace_stop || kt_fail "kinstctl trace --perfetto failed: $(cat /tmp/t.err)"
t1=$(now_us)
cat /tmp/t.err
kt_expect_eq "bytes on stdout with --perfetto" 0 "$(wc -c </tmp/t.out)"
grep -q "^kinstctl: $k events written to /tmp/p.json" /tmp/t.err ||
    kt_fail "the summary does not say $k events were written"
echo "=== perfetto-meta-begin ==="
echo "k=$k"
echo "probe=kernel:$f+$(printf '0x%x' "$off")"
echo "start_us=$t0"
echo "end_us=$t1"
echo "=== perfetto-meta-end ==="
echo "=== perfetto-file-begin ==="
cat /tmp/p.json
echo "=== perfetto-file-end ==="
# Bad use: a clear refusal.
kinstctl trace --perfetto /tmp/p2.json --json "$f+$off" 2>/tmp/u.err
kt_expect_eq "trace --perfetto --json: exit status" 2 $?
grep -q -- "--perfetto: --json is not supported" /tmp/u.err || kt_fail "no clear error for --perfetto --json: $(cat /tmp/u.err)"
kinstctl trace --perfetto /nonexistent/dir/p.json "$f+$off" 2>/tmp/u.err
st=$?
[ "$st" != 0 ] || kt_fail "trace --perfetto to an unwritable path succeeded"
grep -q "/nonexistent/dir/p.json" /tmp/u.err || kt_fail "no clear error for an unwritable --perfetto file: $(cat /tmp/u.err)"
exit 0
