#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: source specs on a live module with its DWARF (kinst_srctest.ko): kinstctl traces a FUNC:LINE in a loop, FILE:LINE on both sides of a branch and every inlined copy's entry (INLINE_FUNC:entry); each probe hits exactly as often as the test drove that code (trip count, branch taken or not, runs), the branch side never taken 0 times; cover shows the source lines and the counts of both sides
# scenario-needs: kinst
# scenario-timeout: 300
# scenario-options: -f "$KINST_BUILD/tests/vm/kinst_srctest.ko" -f "$top/tests/vm/testmod/kinst_srctest.c"
#
# tests/vm/testmod/kinst_srctest.c is the module: writing its "run"
# parameter runs kinst_srctest_loop(trips), kinst_srctest_branch(taken)
# and kinst_srctest_point once; kinst_srctest_mix is inlined into all
# three.  Lines are found by their "L:name" markers in the source.
. /kinst/lib/guest-lib.sh
kt_need_kinst

src=/kinst/files/kinst_srctest.c
[ -f "$src" ] || kt_fail "$src is missing"
kt_testmod kinst_srctest
P=/sys/module/kinst_srctest/parameters
dbg="--debug-file $ko"

line_of() {
	_n=$(grep -n "L:$1 " "$src" | cut -d: -f1)
	[ -n "$_n" ] || kt_fail "no marker L:$1 in $src"
	echo "$_n"
}
s_loop=kinst_srctest_loop:$(line_of loop_body)
s_taken=kinst_srctest:kinst_srctest.c:$(line_of branch_taken)
s_not=kinst_srctest:kinst_srctest.c:$(line_of branch_not_taken)
s_mix=kinst_srctest:kinst_srctest_mix:entry

# What they resolve to, live.
for s in "$s_loop" "$s_taken" "$s_not" "$s_mix"; do
	kinstctl resolve --json $dbg "$s" >/tmp/r.json 2>/tmp/r.err ||
	    kt_fail "kinstctl resolve $s failed: $(cat /tmp/r.err)"
	kt_log "$s -> $(jq -r '"\(.function)+\(.offset)"' /tmp/r.json | tr '\n' ' ')"
done
kinstctl resolve --json $dbg "$s_mix" >/tmp/mix.json || kt_fail "resolve $s_mix"
kt_expect_eq "inlined copies of kinst_srctest_mix" 3 "$(grep -c . /tmp/mix.json)"

trips=7 runs_taken=3 runs_not=2
echo $trips >$P/trips || kt_fail "write trips"
kt_trace_start /tmp/t.json /tmp/t.err --json $dbg "$s_loop" "$s_taken" "$s_not" "$s_mix"
echo 1 >$P/taken
i=0
while [ $i -lt $runs_taken ]; do echo 1 >$P/run || kt_fail "run (taken)"; i=$((i + 1)); done
echo 0 >$P/taken
i=0
while [ $i -lt $runs_not ]; do echo 1 >$P/run || kt_fail "run (not taken)"; i=$((i + 1)); done
kt_trace_stop
st=$?
cat /tmp/t.err
[ "$st" = 0 ] || kt_fail "kinstctl trace exited $st after SIGINT: $(cat /tmp/t.err)"
kt_trace_summary /tmp/t.err /tmp/t.json
kt_expect_eq "records dropped" 0 "$KT_DROPPED"
runs=$((runs_taken + runs_not))

# hits_at SPEC: "count" per address SPEC resolves to, one per line.
hits_at() {
	kinstctl resolve --json $dbg "$1" | jq -r '"\(.function) \(.offset)"' | while read -r f o; do
		jq -c "select(.type == \"hit\" and .function == \"$f\" and .offset == $o)" /tmp/t.json |
		    grep -c . | sed "s/^/$f+$o /"
	done
}
check() {	# check SPEC EXPECTED-PER-ADDRESS
	hits_at "$1" >/tmp/h.txt
	[ -s /tmp/h.txt ] || kt_fail "$1: no address"
	while read -r where n; do
		kt_expect_eq "hits of $1 at $where" "$2" "$n"
	done </tmp/h.txt
	kt_log "$1: $(tr '\n' ' ' </tmp/h.txt)"
}
check "$s_loop" $((trips * runs))
check "$s_taken" $runs_taken
check "$s_not" $runs_not
# Each inlined copy's entry: as often as its caller ran it.
hits_at "$s_mix" >/tmp/h.txt
while read -r where n; do
	case $where in
	kinst_srctest_loop+*) want=$((trips * runs)) ;;
	kinst_srctest_branch+*) want=$runs_taken ;;
	kinst_srctest_point+*) want=$runs ;;
	*) kt_fail "an inlined copy in an unexpected function: $where" ;;
	esac
	kt_expect_eq "hits of $s_mix at $where" "$want" "$n"
done </tmp/h.txt
kt_log "$s_mix: $(tr '\n' ' ' </tmp/h.txt)"
# cover with source lines: the first counted instruction of each side of
# the branch ran exactly as often as the test took that side.
cat >/tmp/cw.sh <<WL
echo 1 >$P/taken; for i in 1 2 3 4; do echo 1 >$P/run || exit 1; done
echo 0 >$P/taken; echo 1 >$P/run
WL
kinstctl cover --json $dbg kinst_srctest:kinst_srctest_branch -- sh /tmp/cw.sh >/tmp/cv.json 2>/tmp/cv.err ||
    kt_fail "kinstctl cover failed: $(cat /tmp/cv.err)"
grep -q 'sh exited with status 0' /tmp/cv.err || kt_fail "the cover workload failed: $(cat /tmp/cv.err)"
first_count() {
	jq -r "select(.type == \"cover_insn\" and .line == $1 and .count != null) | \"\(.offset) \(.count)\"" /tmp/cv.json |
	    sort -n | head -n 1 | cut -d' ' -f2
}
kt_expect_eq "cover: first instruction of the taken line (L:branch_taken)" 4 "$(first_count "$(line_of branch_taken)")"
kt_expect_eq "cover: first instruction of the other line (L:branch_not_taken)" 1 "$(first_count "$(line_of branch_not_taken)")"
n=$(jq -r 'select(.type == "cover_insn" and .line != null) | .file' /tmp/cv.json | grep -c 'kinst_srctest\.c$')
[ "$n" -gt 0 ] || kt_fail "cover: no instruction with a line of kinst_srctest.c"
kt_log "cover: $n instructions with a line of kinst_srctest.c"
rmmod kinst_srctest || kt_fail "rmmod kinst_srctest failed"
exit 0
