#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: kinstctl count over every instruction of ksys_read equals the per-instruction counts of trace (record mode) in the same workload, its entry count equals the function tracer's, straight-line instructions of one basic block have equal counts; count --by rdx/comm/pid and hist --value rdx (log2 and --linear) of reads of 7 and 9 bytes, and of dd bs=3000 run with -- COMMAND, match the sizes used; hits == aggregated + filtered + overflowed + nested
# scenario-needs: kinst
# scenario-timeout: 420
#
# Proof item 5 of issue 11.  The workload is syscall_loop read2 N 7 9
# (N reads of 7 bytes and N of 9 from /dev/zero, nothing else read(2)s);
# every run selects it with --if 'comm == "syscall_loop"' so that other
# processes' reads cannot make the two modes differ.  The record run must
# drop nothing (else the comparison allows the drops).  Basic blocks come
# from count's own disassembly: a block ends after a jump or return and
# starts at a jump target.
. /kinst/lib/guest-lib.sh
kt_need_kinst
# A 4 MiB ring per CPU, so that record mode keeps every hit.
rmmod kinst || kt_fail "rmmod kinst failed"
insmod /kinst/modules/kinst.ko ring_size=4194304 || kt_fail "insmod kinst.ko ring_size=4194304 failed"

f=ksys_read
sel='comm == "syscall_loop"'
kinstctl list-offsets --json "$f" >/tmp/lo.json || kt_fail "list-offsets $f failed"
off=$(jq -r 'select(.type == "insn" and .offset > 0 and
    (.verdict | startswith("refused") | not)) | .offset' /tmp/lo.json | head -n 1)
[ -n "$off" ] || kt_fail "list-offsets $f shows no traceable instruction after the entry"
before=$(jq -r "select(.type == \"insn\" and .offset < $off) | .text" /tmp/lo.json | tr '\n' ';')
case $before in
*dx*|*dl*|*dh*) kt_fail "an instruction before $f+$off may touch %rdx: $before" ;;
esac
n=$(( 100 + $(od -An -tu2 -N2 /dev/urandom) % 100 ))
kt_log "N = $n reads of 7 and $n of 9; entry probe $f+$off"

# check_sum FILE: the JSON summary adds up, nothing overflowed or nested.
check_sum() {
	_s=$(jq -c 'select(.type == "summary")' "$1")
	[ -n "$_s" ] || kt_fail "no summary line in $1"
	_h=$(echo "$_s" | jq .hits) _a=$(echo "$_s" | jq .aggregated)
	_f=$(echo "$_s" | jq .filtered) _o=$(echo "$_s" | jq .overflow)
	_n=$(echo "$_s" | jq .nested)
	kt_expect_eq "hits = aggregated $_a + filtered $_f + overflow $_o + nested $_n ($1)" \
	    "$_h" $((_a + _f + _o + _n))
	kt_expect_eq "overflowed hits ($1)" 0 "$_o"
	KT_AGGREGATED=$_a
}

# The workload of parts 1 and 2: 10 runs of syscall_loop read2 10 7 9, a
# pause after each, so that record mode's reader keeps up.
wl='for i in 1 2 3 4 5 6 7 8 9 10; do syscall_loop read2 10 7 9 >/dev/null || exit 1; sleep 0.3; done'
nw=100

# 1. Record mode: per-instruction hit counts of the whole function.
kt_trace_start /tmp/r.json /tmp/r.err --json --if "$sel" "kernel:$f"
sh -c "$wl" || kt_fail "the workload failed"
kt_trace_stop
st=$?
[ "$st" = 0 ] || kt_fail "kinstctl trace exited $st: $(cat /tmp/r.err)"
kt_trace_summary /tmp/r.err /tmp/r.json
drops=$KT_DROPPED
# A tolerance of the drops must stay small for the comparison to mean anything.
[ $((drops * 20)) -le "$KT_HITS" ] ||
    kt_fail "record mode dropped $drops of $KT_HITS hits: too many to compare"
jq -r 'select(.type == "hit") | .offset' /tmp/r.json | sort -n | uniq -c |
    awk '{ print $2, $1 }' >/tmp/r.cnt

# 2. Count mode, the same workload run by -- COMMAND.
kinstctl count --json --if "$sel" "kernel:$f" -- sh -c "$wl" >/tmp/c.json 2>/tmp/c.err ||
    kt_fail "kinstctl count failed: $(cat /tmp/c.err)"
cat /tmp/c.err
grep -q 'sh exited with status 0' /tmp/c.err ||
    kt_fail "count did not report the command's exit: $(cat /tmp/c.err)"
check_sum /tmp/c.json
jq -r 'select(.type == "count") | "\(.offset) \(.count)"' /tmp/c.json >/tmp/c.cnt
narmed=$(grep -c . /tmp/c.cnt)
[ "$narmed" -ge 10 ] || kt_fail "count listed only $narmed instructions of $f"
sort -n -c /tmp/c.cnt 2>/dev/null || kt_fail "count's rows are not in address order"
kt_expect_eq "aggregated hits = sum of the rows" "$KT_AGGREGATED" \
    "$(awk '{ s += $2 } END { print s + 0 }' /tmp/c.cnt)"
kt_expect_eq "count at $f+$off (entry)" $((2 * nw)) "$(awk -v o="$off" '$1 == o { print $2 }' /tmp/c.cnt)"
# Every instruction: count mode == record mode (within the record drops).
bad=$(awk -v d="$drops" 'NR == FNR { r[$1] = $2; next }
	{ x = $2 - r[$1]; if (x < 0) x = -x; if (x > d) print $1 ": count " $2 ", record " r[$1] + 0; delete r[$1] }
	END { for (o in r) print o ": record " r[o] ", not in count" }' /tmp/r.cnt /tmp/c.cnt)
[ -z "$bad" ] || kt_fail "count and record mode differ (record drops $drops): $bad"
kt_log "count == record on $narmed instructions (record drops: $drops)"

# 3. Basic blocks: consecutive instructions with no jump/return between
# and no jump target on the second have equal counts.
jq -r 'select(.type == "count") | "\(.offset) \(.count) \(.address) \(.insn)"' /tmp/c.json >/tmp/bb.txt
awk '
	function hexval(s,   i, c, v) { v = 0; s = tolower(s); sub(/^0x/, "", s)
		for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }
		return v }
	{ off[NR] = $1; cnt[NR] = $2; base = hexval($3) - $1; m = $4; mn[NR] = m
	  if (m ~ /^j/ && $5 ~ /^0x/) tgt[hexval($5) - base] = 1 }
	END { pairs = 0
	  for (i = 1; i < NR; i++) {
		if (mn[i] ~ /^(j|ret|ud|int|call)/ || (off[i + 1] in tgt)) continue
		pairs++
		if (cnt[i] != cnt[i + 1]) print "BAD +" off[i] " (" cnt[i] ") +" off[i + 1] " (" cnt[i + 1] ")"
	  }
	  print "PAIRS " pairs }' /tmp/bb.txt >/tmp/bb.out
pairs=$(sed -n 's/^PAIRS //p' /tmp/bb.out)
[ "${pairs:-0}" -ge 5 ] || kt_fail "only ${pairs:-0} straight-line pairs found in $f: $(cat /tmp/bb.txt | head -5)"
! grep -q '^BAD' /tmp/bb.out || kt_fail "unequal counts inside a basic block: $(grep '^BAD' /tmp/bb.out | tr '\n' ' ')"
kt_log "$pairs straight-line pairs with equal counts"

# 4. count --by rdx / comm / pid at the entry probe.
kinstctl count --json --by rdx --if "$sel" "kernel:$f+$off" -- \
    sh -c "exec syscall_loop read2 $n 7 9 >/dev/null" >/tmp/k1.json 2>/tmp/k1.err ||
    kt_fail "count --by rdx failed: $(cat /tmp/k1.err)"
check_sum /tmp/k1.json
kt_expect_eq "count --by rdx: key 7" "$n" "$(jq -r 'select(.type == "count" and .key == 7) | .count' /tmp/k1.json)"
kt_expect_eq "count --by rdx: key 9" "$n" "$(jq -r 'select(.type == "count" and .key == 9) | .count' /tmp/k1.json)"
kt_expect_eq "count --by rdx: keys" 2 "$(jq -c 'select(.type == "count")' /tmp/k1.json | grep -c .)"
kinstctl count --json --by comm "kernel:$f+$off" -- \
    sh -c "exec syscall_loop read2 $n 7 9 >/dev/null" >/tmp/k2.json 2>/tmp/k2.err ||
    kt_fail "count --by comm failed: $(cat /tmp/k2.err)"
check_sum /tmp/k2.json
kt_expect_eq "count --by comm: syscall_loop" $((2 * n)) \
    "$(jq -r 'select(.type == "count" and .key == "syscall_loop") | .count' /tmp/k2.json)"
# The entry count per pid against the function tracer's.
fn=$(kt_ftrace_name "$f") || exit 1
kt_ftrace_start "$fn"
kinstctl count --json --by pid "kernel:$f+$off" -- \
    sh -c "exec syscall_loop read2 $n 7 9 >/tmp/k3.pid" >/tmp/k3.json 2>/tmp/k3.err ||
    kt_fail "count --by pid failed: $(cat /tmp/k3.err)"
kt_ftrace_stop
check_sum /tmp/k3.json
pid=$(cat /tmp/k3.pid)
kt_expect_eq "count --by pid: pid $pid" $((2 * n)) \
    "$(jq -r "select(.type == \"count\" and .key == $pid) | .count" /tmp/k3.json)"
kt_expect_eq "function tracer calls of $fn by pid $pid" $((2 * n)) "$(kt_ftrace_count "$fn" "$pid")"

# 5. hist --value rdx: log2 and linear buckets hold exactly the sizes read.
kinstctl hist --json --value rdx --if "$sel" "kernel:$f+$off" -- \
    sh -c "exec syscall_loop read2 $n 7 9 >/dev/null" >/tmp/h1.json 2>/tmp/h1.err ||
    kt_fail "hist failed: $(cat /tmp/h1.err)"
check_sum /tmp/h1.json
jq -c 'select(.type == "hist")' /tmp/h1.json
kt_expect_eq "hist log2 [4, 8)" "$n" "$(jq -r 'select(.type == "hist") | .buckets[] | select(.low == 4 and .high == 8) | .count' /tmp/h1.json)"
kt_expect_eq "hist log2 [8, 16)" "$n" "$(jq -r 'select(.type == "hist") | .buckets[] | select(.low == 8 and .high == 16) | .count' /tmp/h1.json)"
kt_expect_eq "hist log2 buckets" 2 "$(jq -r 'select(.type == "hist") | .buckets | length' /tmp/h1.json)"
kt_expect_eq "hist sum" $((16 * n)) "$(jq -r 'select(.type == "hist") | .sum' /tmp/h1.json)"
kt_expect_eq "hist min/max" "7 9" "$(jq -r 'select(.type == "hist") | "\(.min) \(.max)"' /tmp/h1.json)"
kinstctl hist --json --value rdx --linear 0,16,1 --if "$sel" "kernel:$f+$off" -- \
    sh -c "exec syscall_loop read2 $n 7 9 >/dev/null" >/tmp/h2.json 2>/tmp/h2.err ||
    kt_fail "hist --linear failed: $(cat /tmp/h2.err)"
check_sum /tmp/h2.json
kt_expect_eq "hist linear buckets" "7:$n 9:$n" \
    "$(jq -r 'select(.type == "hist") | .buckets[] | "\(.low):\(.count)"' /tmp/h2.json | tr '\n' ' ' | sed 's/ $//')"
# dd with a block size it chose, and the text histogram.
kinstctl hist --value rdx --if 'comm == "dd"' "kernel:$f+$off" -- \
    dd if=/dev/zero of=/dev/null bs=3000 count=40 >/tmp/h3.txt 2>/tmp/h3.err ||
    kt_fail "hist -- dd failed: $(cat /tmp/h3.err)"
cat /tmp/h3.txt
grep -q '^\[2K, 4K) *40 |@* *|$' /tmp/h3.txt ||
    kt_fail "hist of dd bs=3000 count=40: no [2K, 4K) bucket of 40: $(cat /tmp/h3.txt)"
exit 0
