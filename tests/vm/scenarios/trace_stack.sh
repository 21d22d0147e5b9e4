#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: trace --stack on ksys_read while a program reads K times: every stack starts at the probe, holds the syscall entry path in order, every caller frame follows a call and resolves in /proc/kallsyms; the unwinder is refused as trap path
# scenario-needs: kinst
# scenario-timeout: 400
#
# Issue 11, proof item 2 (stacks).  On Linux the module unwinds with the
# kernel's own unwinder (ORC on Debian's kernel) from the trap's registers;
# a frame-pointer walk there, or a walk that starts one frame too deep,
# fails the chain checks below.  Independent evidence: /proc/kallsyms for
# the names and offsets, and the live text (list-offsets) for "a return
# address follows a call instruction".
. /kinst/lib/guest-lib.sh
kt_need_kinst

# The unwinder runs inside kinst's handler now: probing it with --stack
# would recurse, so the module refuses every instruction of it.
for g in __unwind_start unwind_next_frame unwind_get_return_address __orc_find get_stack_info; do
	kinstctl list-offsets --json "$g" >/tmp/lo.json 2>/tmp/lo.err ||
	    kt_fail "list-offsets $g: $(cat /tmp/lo.err)"
	n=$(jq -c 'select(.type == "insn")' /tmp/lo.json | grep -c .)
	[ "$n" -gt 0 ] || kt_fail "list-offsets $g: no instructions"
	kt_log "$g: $(jq -r 'select(.type == "insn") | .reason // .verdict' /tmp/lo.json | sort | uniq -c | tr -s ' \n' ' ')"
	kt_expect_eq "$g: instructions refused" "$n" \
	    "$(jq -c 'select(.type == "insn" and .verdict == "refused")' /tmp/lo.json | grep -c .)"
	[ "$(jq -c 'select(.type == "insn" and .reason == "excluded-function (trap path)")' /tmp/lo.json | grep -c .)" -gt 0 ] ||
	    kt_fail "$g: no instruction refused as trap path"
done

f=ksys_read
off=$(kt_first_traceable "$f") ||
    kt_fail "list-offsets $f shows no traceable instruction after the entry"
k=$(( 200 + $(od -An -tu2 -N2 /dev/urandom) % 200 ))
kt_log "tracing $f+$off with --stack, K = $k reads"

kt_trace_start /tmp/trace.json /tmp/trace.err --stack --json "kernel:$f+$off"
pid=$(syscall_loop read "$k" 7) || kt_fail "syscall_loop failed"
kt_trace_stop
st=$?
[ "$st" = 0 ] || kt_fail "kinstctl trace exited $st after SIGINT: $(cat /tmp/trace.err)"
cat /tmp/trace.err
kt_trace_summary /tmp/trace.err /tmp/trace.json
kt_expect_eq "records dropped" 0 "$KT_DROPPED"

jq -c "select(.type == \"hit\" and .pid == $pid)" /tmp/trace.json >/tmp/ours.json
kt_expect_eq "hits by pid $pid" "$k" "$(grep -c . /tmp/ours.json)"
kt_expect_eq "hits of every pid with a stack" "$KT_PRINTED" \
    "$(jq -c 'select(.stack | type == "array" and length > 0)' /tmp/trace.json | grep -c .)"
kt_expect_eq "stacks flagged truncated" 0 \
    "$(jq -c 'select(.stack_truncated != false)' /tmp/trace.json | grep -c .)"
# Frame 0 is the probed instruction itself.
kt_expect_eq "stacks whose frame 0 is $f+$off" "$KT_PRINTED" \
    "$(jq -c "select(.stack[0].function == \"$f\" and .stack[0].offset == $off and
        .stack[0].address == .address)" /tmp/trace.json | grep -c .)"
# The syscall entry path, innermost first: do_syscall_64 below the entry
# code, which is the outermost frame of a system call.
kt_expect_eq "stacks of pid $pid with $f .. do_syscall_64 .. entry_SYSCALL_64* (outermost)" "$k" \
    "$(jq -c '[.stack[].function] as $s |
        ($s | index(["do_syscall_64"])) as $d |
        select($d != null and $d > 0 and
            ($s[-1] | startswith("entry_SYSCALL_64")))' /tmp/ours.json | grep -c .)"
# A direct caller may be tail-called away (__x64_sys_read jumps to
# ksys_read), but nothing may sit between ksys_read and the syscall layer
# but the read syscall's own wrapper.
kt_expect_eq "stacks whose frame 1 is do_syscall_64 or __x64_sys_read" "$k" \
    "$(jq -c 'select(.stack[1].function == "do_syscall_64" or
        .stack[1].function == "__x64_sys_read")' /tmp/ours.json | grep -c .)"

# Every frame resolves: function and offset agree with /proc/kallsyms
# (a text symbol at address - offset), and every caller frame (1..) is a
# return address: the instruction before it in the live text is a call.
jq -r '.stack | to_entries[] | "\(.key > 0) \(.value.address) \(.value.function) \(.value.offset)"' \
    /tmp/trace.json | sort -u >/tmp/frames
nf=$(grep -c . /tmp/frames)
[ "$nf" -gt 0 ] || kt_fail "no frames"
kt_log "$nf distinct frames"
# (64-bit addresses: shell arithmetic, not awk's doubles)
while read -r _ addr fn fo; do
	ok=0
	for a in $(awk -v fn="$fn" '($2 == "t" || $2 == "T") && $3 == fn { print $1 }' /proc/kallsyms); do
		[ $((0x$a + fo)) = $((addr)) ] && ok=1
	done
	[ "$ok" = 1 ] || kt_fail "frame $fn+$fo at $addr: /proc/kallsyms has no text symbol $fn at $addr - $fo"
done </tmp/frames || exit 1
grep '^true ' /tmp/frames | while read -r _ addr fn fo; do
	kinstctl list-offsets --json "$fn" >/tmp/fn.json 2>/dev/null ||
	    kt_fail "list-offsets $fn failed"
	call=$(jq -r "select(.type == \"insn\" and .offset + .length == $fo) | .mnemonic" /tmp/fn.json)
	case $call in
	call*)	;;
	*)	kt_fail "frame $fn+$fo ($addr) does not follow a call (instruction before it: '$call')" ;;
	esac
done || exit 1

# Text output: one indented "function+0xoff [module]" line per frame.
# (kt_trace_start waits until the probe is armed; -n 1 then ends it.)
kt_trace_start /tmp/text.out /tmp/text.err --stack -n 1 "kernel:$f+$off"
syscall_loop read 20 7 >/dev/null
wait "$KT_TRACE_PID" || kt_fail "kinstctl trace --stack -n 1 failed: $(cat /tmp/text.err)"
cat /tmp/text.out
grep -q "^        $f+0x$(printf %x "$off") \[kernel\]\$" /tmp/text.out ||
    kt_fail "text output has no '$f+0x$(printf %x "$off") [kernel]' frame line"
grep -q '^        do_syscall_64+0x[0-9a-f]* \[kernel\]$' /tmp/text.out ||
    kt_fail "text output has no do_syscall_64 frame line"
exit 0
