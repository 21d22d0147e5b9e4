#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: kinstctl traces getpid's handler while a program calls it K times: exactly K hits with its pid, tid and comm, as many as a kprobe counts
# scenario-needs: kinst
# scenario-timeout: 300
#
# Proof item 1 of issue 4.  kinst traces the first traceable instruction
# after the function's entry (found with list-offsets, not hard-coded); the
# independent counts are the syscalls:sys_enter_getpid trace event and the
# function tracer, which patches the entry's ftrace site, a different
# instruction than the one kinst patches.  (Not a kprobe: kinst.ko refuses
# every instruction of a function that holds one.)
. /kinst/lib/guest-lib.sh
kt_need_kinst

f=__x64_sys_getpid
off=$(kt_first_traceable "$f") ||
    kt_fail "list-offsets $f shows no traceable instruction after the entry"
k=$(( 500 + $(od -An -tu2 -N2 /dev/urandom) % 500 ))
kt_log "tracing $f+$off, K = $k"

kt_counter_event syscalls/sys_enter_getpid
fn=$(kt_ftrace_name "$f") || exit 1
kt_ftrace_start "$fn"
kt_trace_start /tmp/trace.json /tmp/trace.err --json "kernel:$f+$off"
pid=$(syscall_loop getpid "$k") || kt_fail "syscall_loop failed"
kt_trace_stop
st=$?
kt_ftrace_stop
[ "$st" = 0 ] || kt_fail "kinstctl trace exited $st after SIGINT: $(cat /tmp/trace.err)"
cat /tmp/trace.err

# The summary: hits == delivered + dropped, nothing dropped here, and every
# delivered record printed (SIGINT must not lose what the ring holds).
kt_trace_summary /tmp/trace.err /tmp/trace.json
kt_expect_eq "records dropped" 0 "$KT_DROPPED"

kt_expect_eq "sys_enter_getpid hits by pid $pid" "$k" "$(kt_count syscalls/sys_enter_getpid "$pid")"
kt_expect_eq "function tracer calls of $fn by pid $pid" "$k" "$(kt_ftrace_count "$fn" "$pid")"
ours=$(jq -c "select(.type == \"hit\" and .pid == $pid)" /tmp/trace.json)
kt_expect_eq "kinst hits by pid $pid" "$k" "$(printf '%s\n' "$ours" | grep -c .)"
kt_expect_eq "hits by pid $pid with tid $pid, comm syscall_loop, offset $off" "$k" \
    "$(printf '%s\n' "$ours" | jq -c "select(.tid == $pid and .comm == \"syscall_loop\" and .offset == $off and .function == \"$f\")" | grep -c .)"

kt_counter_remove syscalls/sys_enter_getpid
exit 0
