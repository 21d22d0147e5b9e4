#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: kinstctl count --by stack on a ksys_read instruction (and on all of them) while syscall_loop reads K times: the counts add up to the summary's hits, the rows with ksys_read and do_syscall_64 hold at least K (exactly K with --if comm), frame 0 is the probe, every frame resolves in /proc/kallsyms, same frames never in two rows; the text form is bpftrace's @[kstack]; hist --by stack too
# scenario-needs: kinst
# scenario-timeout: 400
#
# Issue 11: "count per key, the key being ... the stack".  The module takes
# the stack at each hit (as trace --stack), keeps each distinct stack once
# per CPU, and counts by it; kinstctl merges the CPUs by frames.
# Independent evidence: the workload's own read count K, the module's hit
# counter (the summary), and /proc/kallsyms for every frame.
. /kinst/lib/guest-lib.sh
kt_need_kinst

f=ksys_read
off=$(kt_first_traceable "$f") ||
    kt_fail "list-offsets $f shows no traceable instruction after the entry"
k=$(( 200 + $(od -An -tu2 -N2 /dev/urandom) % 200 ))
kt_log "count --by stack at $f+$off, K = $k reads of 7 bytes"

# 1. Every reader of the system, while syscall_loop reads K times.
kinstctl count --json --by stack "kernel:$f+$off" -- \
    sh -c "syscall_loop read $k 7 >/dev/null" >/tmp/s.json 2>/tmp/s.err ||
    kt_fail "kinstctl count --by stack failed: $(cat /tmp/s.err)"
cat /tmp/s.err
jq -e . /tmp/s.json >/dev/null || kt_fail "count --by stack --json does not parse"
sum=$(jq -c 'select(.type == "summary")' /tmp/s.json)
[ -n "$sum" ] || kt_fail "no summary line"
hits=$(echo "$sum" | jq .hits)
kt_log "summary: $sum"
kt_expect_eq "overflowed hits" 0 "$(echo "$sum" | jq .overflow)"
kt_expect_eq "sum of the rows' counts == the summary's hits" "$hits" \
    "$(jq -s '[.[] | select(.type == "count") | .count] | add // 0' /tmp/s.json)"
kt_expect_eq "rows without by == \"stack\" or without a stack array" 0 \
    "$(jq -c 'select(.type == "count" and (.by != "stack" or (.stack | type) != "array" or
        (.stack | length) == 0 or .stack_truncated != false))' /tmp/s.json | grep -c .)"
# The syscall path of the workload: ksys_read (frame 0) .. do_syscall_64.
ours=$(jq -s '[.[] | select(.type == "count") | select([.stack[].function] |
    (index(["ksys_read"]) == 0) and (index(["do_syscall_64"]) != null)) | .count] | add // 0' /tmp/s.json)
kt_log "rows with $f .. do_syscall_64: $ours of $hits hits"
[ "$ours" -ge "$k" ] || kt_fail "rows with $f and do_syscall_64 sum to $ours < K = $k"
kt_expect_eq "rows whose frame 0 is not $f+$off" 0 \
    "$(jq -c "select(.type == \"count\" and (.stack[0].function != \"$f\" or .stack[0].offset != $off))" \
        /tmp/s.json | grep -c .)"
# kinstctl merged the CPUs: one row per distinct list of frame addresses.
nrows=$(jq -c 'select(.type == "count")' /tmp/s.json | grep -c .)
kt_expect_eq "distinct stacks among $nrows rows" "$nrows" \
    "$(jq -c 'select(.type == "count") | [.stack[].address]' /tmp/s.json | sort -u | grep -c .)"
# Sorted by count, largest first.
jq -r 'select(.type == "count") | .count' /tmp/s.json | sort -n -r -c ||
    kt_fail "rows not sorted by count"

# Every frame resolves: function and offset agree with /proc/kallsyms.
jq -r 'select(.type == "count") | .stack[] | "\(.address) \(.function) \(.offset)"' \
    /tmp/s.json | sort -u >/tmp/frames
nf=$(grep -c . /tmp/frames)
[ "$nf" -gt 1 ] || kt_fail "only $nf distinct frames"
kt_log "$nf distinct frames in $nrows stacks"
# (64-bit addresses: shell arithmetic, not awk's doubles)
while read -r addr fn fo; do
	[ "$fn" != null ] || kt_fail "frame $addr does not resolve"
	ok=0
	for a in $(awk -v fn="$fn" '($2 == "t" || $2 == "T") && $3 == fn { print $1 }' /proc/kallsyms); do
		[ $((0x$a + fo)) = $((addr)) ] && ok=1
	done
	[ "$ok" = 1 ] || kt_fail "frame $fn+$fo at $addr: /proc/kallsyms has no text symbol $fn at $addr - $fo"
done </tmp/frames || exit 1

# 2. Only the workload (--if comm): exactly K hits, each on the syscall path.
kinstctl count --json --by stack --if 'comm == "syscall_loop"' "kernel:$f+$off" -- \
    sh -c "syscall_loop read $k 7 >/dev/null" >/tmp/w.json 2>/tmp/w.err ||
    kt_fail "kinstctl count --by stack --if failed: $(cat /tmp/w.err)"
kt_expect_eq "--if comm: sum of counts" "$k" \
    "$(jq -s '[.[] | select(.type == "count") | .count] | add // 0' /tmp/w.json)"
kt_expect_eq "--if comm: counts on stacks with do_syscall_64" "$k" \
    "$(jq -s '[.[] | select(.type == "count") | select([.stack[].function] |
        index(["do_syscall_64"]) != null) | .count] | add // 0' /tmp/w.json)"
w=$(jq -c 'select(.type == "summary")' /tmp/w.json)
kt_expect_eq "--if comm: aggregated" "$k" "$(echo "$w" | jq .aggregated)"

# 3. Text: "@[", one indented "function+0xoff [module]" line per frame, "]: N".
kinstctl count --by stack "kernel:$f+$off" -- sh -c "syscall_loop read $k 7 >/dev/null" \
    >/tmp/t.out 2>/tmp/t.err || kt_fail "kinstctl count --by stack (text) failed: $(cat /tmp/t.err)"
head -n 30 /tmp/t.out
grep -q '^@\[$' /tmp/t.out || kt_fail "text output has no '@[' line"
grep -q "^        $f+0x$(printf %x "$off") \[kernel\]\$" /tmp/t.out ||
    kt_fail "text output has no '$f+0x$(printf %x "$off") [kernel]' frame line"
grep -q '^        do_syscall_64+0x[0-9a-f]* \[kernel\]$' /tmp/t.out ||
    kt_fail "text output has no do_syscall_64 frame line"
tsum=$(sed -n 's/^\]: \([0-9]*\)$/\1/p' /tmp/t.out | awk '{ s += $1 } END { print s + 0 }')
[ "$tsum" -ge "$k" ] || kt_fail "text rows sum to $tsum < K = $k"
kt_expect_eq "text: '@[' lines == ']: N' lines" "$(grep -c '^@\[$' /tmp/t.out)" \
    "$(grep -c '^\]: [0-9]*$' /tmp/t.out)"

# 4. hist --by stack: one histogram per stack, the workload's size 7.
kinstctl hist --json --by stack --value rdx --if 'comm == "syscall_loop"' "kernel:$f+$off" -- \
    sh -c "syscall_loop read $k 7 >/dev/null" >/tmp/h.json 2>/tmp/h.err ||
    kt_fail "kinstctl hist --by stack failed: $(cat /tmp/h.err)"
kt_expect_eq "hist --by stack: counts" "$k" \
    "$(jq -s '[.[] | select(.type == "hist") | .count] | add // 0' /tmp/h.json)"
kt_expect_eq "hist --by stack: rows with a value other than 7 or no stack" 0 \
    "$(jq -c 'select(.type == "hist" and (.min != 7 or .max != 7 or (.stack | length) == 0))' \
        /tmp/h.json | grep -c .)"

# 5. Every instruction of ksys_read: one stack per instruction run (frame 0
# differs), the caller chain the same; the probe at +off counts K.
kinstctl count --json --by stack --if 'comm == "syscall_loop"' "kernel:$f" -- \
    sh -c "syscall_loop read $k 7 >/dev/null" >/tmp/a.json 2>/tmp/a.err ||
    kt_fail "kinstctl count --by stack $f failed: $(cat /tmp/a.err)"
a=$(jq -c 'select(.type == "summary")' /tmp/a.json)
kt_expect_eq "whole $f: sum of the rows' counts == hits" "$(echo "$a" | jq .hits)" \
    "$(jq -s '[.[] | select(.type == "count") | .count] | add // 0' /tmp/a.json)"
kt_expect_eq "whole $f: overflow" 0 "$(echo "$a" | jq .overflow)"
na=$(jq -c 'select(.type == "count")' /tmp/a.json | grep -c .)
[ "$na" -ge 5 ] || kt_fail "whole $f: only $na stacks"
kt_expect_eq "whole $f: rows with frame 0 outside $f" 0 \
    "$(jq -c "select(.type == \"count\" and .stack[0].function != \"$f\")" /tmp/a.json | grep -c .)"
kt_expect_eq "whole $f: distinct frame-0 addresses" "$na" \
    "$(jq -r 'select(.type == "count") | .stack[0].address' /tmp/a.json | sort -u | grep -c .)"
kt_expect_eq "whole $f: count of the stack at +$off" "$k" \
    "$(jq -r "select(.type == \"count\" and .stack[0].offset == $off) | .count" /tmp/a.json)"
kt_log "whole $f: $na stacks on $(nproc) CPUs"
exit 0
