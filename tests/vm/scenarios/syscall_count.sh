#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: tracefs counts a static program's getpid calls exactly, twice, and sees its write(2) byte count in %rdx
# scenario-timeout: 300
#
# The pattern every kinst scenario follows, without kinst: a workload built
# on the host (tests/vm/guest/syscall_loop.c, gcc -static) makes K system
# calls; two independent counters (a kprobe on the syscall's handler and the
# syscalls:sys_enter_getpid trace event, each with a per-pid hist trigger)
# must both say K for that pid.  A kinst scenario adds `kinstctl trace`
# beside them and compares its hits with these counts (counting at a
# different instruction than the one kinst patches: DESIGN.md).
. /kinst/lib/guest-lib.sh

k=$(( 1000 + $(od -An -tu2 -N2 /dev/urandom) % 1000 ))
kt_log "K = $k"

kt_counter_kprobe getpid __x64_sys_getpid
kt_counter_event syscalls/sys_enter_getpid

pid=$(syscall_loop getpid "$k") || kt_fail "syscall_loop failed"

kt_expect_eq "kprobe hits by pid $pid" "$k" "$(kt_count kinst_test/getpid "$pid")"
kt_expect_eq "sys_enter_getpid hits by pid $pid" "$k" "$(kt_count syscalls/sys_enter_getpid "$pid")"
total=$(kt_count_total kinst_test/getpid)
[ "$total" -ge "$k" ] || kt_fail "total kprobe hits $total < $k"

# A register's value at a probe, the pattern of proof item 2: the third
# argument of ksys_write (%rdx at its entry) is the byte count the
# workload passed, on every one of its K writes and on nothing else.
b=$(( 1 + $(od -An -tu2 -N2 /dev/urandom) % 4096 ))
kt_counter_kprobe write ksys_write count=%dx:u64
kt_counter_values kinst_test/write count
pid=$(syscall_loop write "$k" "$b") || kt_fail "syscall_loop failed"
kt_expect_eq "ksys_write hits by pid $pid" "$k" "$(kt_count kinst_test/write "$pid")"
kt_expect_eq "(count, hits) of pid $pid" "$b $k" "$(kt_values kinst_test/write "$pid" count | tr '\n' ' ' | sed 's/ $//')"

kt_counter_remove kinst_test/getpid
kt_counter_remove syscalls/sys_enter_getpid
kt_counter_remove kinst_test/write
# Removed means removed: no kprobe event of ours is left.
if grep -q "$KT_GROUP" "$KT_TRACING/kprobe_events"; then
	kt_fail "kprobe event left behind: $(cat "$KT_TRACING/kprobe_events")"
fi
exit 0
