#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: kinstctl trace --if on ksys_read's entry while a program interleaves reads of 7 and 9 bytes: 'rdx == 7' delivers exactly the 7-byte ones, the summary counts the rest as not matching; comm and && select the 9-byte ones of that program only; a malformed expression is a usage error naming its column
# scenario-needs: kinst
# scenario-timeout: 300
#
# Proof item 4 of issue 11.  The probe is ksys_read's first traceable
# instruction after the entry (list-offsets), checked to come before
# anything that could write %rdx, so that %rdx there is read(2)'s count.
# syscall_loop read2 N 7 9 makes N reads of 7 bytes and N of 9,
# alternating, and no other read(2).  The independent count is the
# function tracer on ksys_read (2N calls by the program).
. /kinst/lib/guest-lib.sh
kt_need_kinst

f=ksys_read
kinstctl list-offsets --json "$f" >/tmp/lo.json || kt_fail "list-offsets $f failed"
off=$(jq -r 'select(.type == "insn" and .offset > 0 and
    (.verdict | startswith("refused") | not)) | .offset' /tmp/lo.json | head -n 1)
[ -n "$off" ] || kt_fail "list-offsets $f shows no traceable instruction after the entry"
before=$(jq -r "select(.type == \"insn\" and .offset < $off) | .text" /tmp/lo.json | tr '\n' ';')
case $before in
*dx*|*dl*|*dh*) kt_fail "an instruction before $f+$off may touch %rdx: $before" ;;
esac
n=$(( 100 + $(od -An -tu2 -N2 /dev/urandom) % 200 ))
kt_log "tracing $f+$off (before: $before), N = $n reads of 7 and $n of 9"

# 1. rdx == 7: every 7-byte read, no 9-byte one.
fn=$(kt_ftrace_name "$f") || exit 1
kt_ftrace_start "$fn"
kt_trace_start /tmp/t1.json /tmp/t1.err --json --if 'rdx == 7' "kernel:$f+$off"
pid=$(syscall_loop read2 "$n" 7 9) || kt_fail "syscall_loop failed"
kt_trace_stop
st=$?
kt_ftrace_stop
[ "$st" = 0 ] || kt_fail "kinstctl trace exited $st: $(cat /tmp/t1.err)"
cat /tmp/t1.err
kt_trace_summary /tmp/t1.err /tmp/t1.json
kt_expect_eq "records dropped" 0 "$KT_DROPPED"
kt_expect_eq "function tracer calls of $fn by pid $pid" $((2 * n)) "$(kt_ftrace_count "$fn" "$pid")"
kt_expect_eq "hits of pid $pid delivered" "$n" \
    "$(jq -c "select(.type == \"hit\" and .pid == $pid)" /tmp/t1.json | grep -c .)"
kt_expect_eq "delivered hits (any process) with rdx != 7" 0 \
    "$(jq -r 'select(.type == "hit") | .regs.rdx' /tmp/t1.json | awk '$1 + 0 != 7' | grep -c .)"
[ "$KT_NOMATCH" -ge "$n" ] ||
    kt_fail "the summary counts $KT_NOMATCH hits not matching --if, fewer than the $n 9-byte reads"
kt_expect_eq "faulted predicate runs" 0 "$KT_FAULTED"

# 2. comm and &&: only this program's 9-byte reads, nobody else's.
kt_trace_start /tmp/t2.json /tmp/t2.err --json \
    --if 'comm == "syscall_loop" && rdx != 7' "kernel:$f+$off"
pid=$(syscall_loop read2 "$n" 7 9) || kt_fail "syscall_loop failed"
kt_trace_stop
st=$?
[ "$st" = 0 ] || kt_fail "kinstctl trace exited $st: $(cat /tmp/t2.err)"
cat /tmp/t2.err
kt_trace_summary /tmp/t2.err /tmp/t2.json
kt_expect_eq "records dropped" 0 "$KT_DROPPED"
kt_expect_eq "hits delivered (all of pid $pid, rdx 9)" "$n" \
    "$(jq -c "select(.type == \"hit\" and .pid == $pid and .comm == \"syscall_loop\")" /tmp/t2.json |
        jq -r '.regs.rdx' | awk '$1 + 0 == 9' | grep -c .)"
kt_expect_eq "hits delivered in total" "$n" "$KT_DELIVERED"

# 3. A malformed expression: exit 2, one line naming the column, nothing armed.
kinstctl trace --if 'rdx == 7 &&' "kernel:$f+$off" >/tmp/t3.out 2>/tmp/t3.err
st=$?
kt_expect_eq "exit status of a malformed --if" 2 "$st"
kt_expect_eq "lines of its error" 1 "$(grep -c . /tmp/t3.err)"
grep -q 'column 12' /tmp/t3.err || kt_fail "the error does not name column 12: $(cat /tmp/t3.err)"
exit 0
