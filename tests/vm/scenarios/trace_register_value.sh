#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: kinstctl traces the instruction of ksys_write after the count is copied into a callee-saved register: every one of a program's N writes shows its odd byte count there
# scenario-needs: kinst
# scenario-timeout: 300
#
# Proof item 2 of issue 4.  The offset is found in the running kernel with
# list-offsets (never hard-coded): the first `movq %rdx, %rNN` of
# ksys_write (the count, its third argument, saved in a callee-saved
# register); kinst traces the instruction after it, where %rNN must hold
# the count the workload passed.  syscall_loop makes exactly N write(2)s of
# B bytes (B odd, random) and no other write.  The independent count is the
# function tracer on ksys_write (not a kprobe: kinst refuses a function
# holding one).
. /kinst/lib/guest-lib.sh
kt_need_kinst

f=ksys_write
kinstctl list-offsets --json "$f" >/tmp/lo.json || kt_fail "list-offsets $f failed"
# "movq %rdx, %r12" -> the register after it, and the next instruction.
set -- $(jq -r 'select(.type == "insn") | "\(.offset) \(.length) \(.text)"' /tmp/lo.json |
    awk '$3 == "movq" && $4 == "%rdx," && $5 ~ /^%(rbx|rbp|r12|r13|r14|r15)$/ {
	print $1 + $2, substr($5, 2); exit }')
off=$1 reg=$2
[ -n "$off" ] && [ -n "$reg" ] || kt_fail "no 'movq %rdx, <callee-saved>' in $f: $(jq -r 'select(.type == "insn") | "+\(.offset) \(.text)"' /tmp/lo.json | head -n 20 | tr '\n' ';')"
v=$(jq -r "select(.type == \"insn\" and .offset == $off) | .verdict" /tmp/lo.json)
case $v in
refused*|"") kt_fail "$f+$off (after the count is saved in %$reg) is not traceable: '$v'" ;;
esac

n=$(( 200 + $(od -An -tu2 -N2 /dev/urandom) % 300 ))
b=$(( 2 * ($(od -An -tu2 -N2 /dev/urandom) % 2000) + 1 ))
hexb=$(printf '0x%x' "$b")
kt_log "tracing $f+$off (count in %$reg), N = $n writes of B = $b ($hexb) bytes"

fn=$(kt_ftrace_name "$f") || exit 1
kt_ftrace_start "$fn"
kt_trace_start /tmp/trace.json /tmp/trace.err --json "kernel:$f+$off"
pid=$(syscall_loop write "$n" "$b") || kt_fail "syscall_loop failed"
kt_trace_stop
st=$?
kt_ftrace_stop
[ "$st" = 0 ] || kt_fail "kinstctl trace exited $st after SIGINT: $(cat /tmp/trace.err)"
cat /tmp/trace.err
kt_trace_summary /tmp/trace.err /tmp/trace.json
kt_expect_eq "records dropped" 0 "$KT_DROPPED"

kt_expect_eq "function tracer calls of $fn by pid $pid" "$n" "$(kt_ftrace_count "$fn" "$pid")"
jq -c "select(.type == \"hit\" and .pid == $pid)" /tmp/trace.json >/tmp/ours.json
kt_expect_eq "kinst hits by pid $pid" "$n" "$(grep -c . /tmp/ours.json)"
# The register's values over those hits, as "VALUE COUNT" (hex strings:
# compare numerically after jq's parse of the hex).
vals=$(jq -r ".regs.$reg" /tmp/ours.json | sort | uniq -c | awk '{ print $2, $1 }' | tr '\n' ' ' | sed 's/ $//')
[ -n "$vals" ] || kt_fail "no .regs.$reg in the hits: $(head -n 1 /tmp/ours.json)"
set -- $vals
[ $# = 2 ] || kt_fail "%$reg took several values over pid $pid's hits (value count ...): $vals"
[ $(( $1 )) = "$b" ] || kt_fail "%$reg at $f+$off was $1, not the byte count $b ($hexb), on $2 hits"
kt_expect_eq "hits of pid $pid with %$reg = $b" "$n" "$2"
# Each snapshot is of that instruction, in that process.
kt_expect_eq "hits at $f+$off by tid $pid comm syscall_loop" "$n" \
    "$(jq -c "select(.tid == $pid and .comm == \"syscall_loop\" and .offset == $off and .function == \"$f\")" /tmp/ours.json | grep -c .)"
exit 0
