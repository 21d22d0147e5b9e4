#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: kinstctl cover (JSON and text) of a test module function with known control flow reports the exact loop and branch counts (taken and not taken, including a jcc whose fall-through is also a branch target), 0 for the path never taken, refused instructions as refused, and the basic blocks' counts; cover of ksys_read under syscall_loop counts at least the reads it made at the entry, every branch's taken + not taken = its count; the HTML holds the same counts as --json (checked on the host, tests/vm/cover_html_check.py)
# scenario-needs: kinst
# scenario-timeout: 300
# scenario-options: -f "$KINST_BUILD/tests/vm/kinst_covtest.ko"
# scenario-host-check: python3 "$KINST_DEFAULT_SRCDIR/tests/vm/cover_html_check.py" vm.out "$KINST_DEFAULT_BUILDDIR/tests/vm/screenshots"
#
# tests/vm/testmod/kinst_covtest.c is the module: its comment lists
# kinst_covtest_body instruction by instruction (fixed offsets, it is
# assembly).  Writing "TRIPS DIR" to its "run" parameter calls it once.
. /kinst/lib/guest-lib.sh
kt_need_kinst

kt_testmod kinst_covtest
p=/sys/module/kinst_covtest/parameters/run
fn=kinst_covtest:kinst_covtest_body

# R1 calls with T trips and dir 1, R0 calls with 0 trips and dir 0.
t=$(( 3 + $(od -An -tu2 -N2 /dev/urandom) % 20 ))
r1=3 r0=2
kt_log "workload: $r1 calls with $t trips (dir 1), $r0 with 0 trips (dir 0)"
cat >/tmp/wl.sh <<WL
i=0; while [ \$i -lt $r1 ]; do echo "$t 1" >$p || exit 1; i=\$((i + 1)); done
i=0; while [ \$i -lt $r0 ]; do echo "0 0" >$p || exit 1; i=\$((i + 1)); done
WL
kinstctl cover --json --html /tmp/c.html "$fn" -- sh /tmp/wl.sh >/tmp/c.json 2>/tmp/c.err ||
    kt_fail "kinstctl cover failed: $(cat /tmp/c.err)"
cat /tmp/c.err
grep -q 'sh exited with status 0' /tmp/c.err || kt_fail "the workload failed: $(cat /tmp/c.err)"
grep -q 'no source lines' /tmp/c.err || kt_fail "cover did not say that source lines are unavailable"
kt_expect_eq "runs of the module function" "runs=$((r1 + r0))" "$(cut -d' ' -f1 $p)"
kt_expect_eq "counts exact (no overflow, no nesting)" true \
    "$(jq -r 'select(.type == "summary") | .exact' /tmp/c.json)"

# field OFFSET FIELD: the instruction's field in the JSON.
field() {
	jq -r "select(.type == \"cover_insn\" and .offset == $1) | .$2" /tmp/c.json
}
# expect OFFSET BYTES COUNT [TAKEN NOT_TAKEN]
expect() {
	kt_expect_eq "bytes at +$1" "$2" "$(field "$1" bytes)" >/dev/null
	kt_expect_eq "count at +$1 ($2)" "$3" "$(field "$1" count)"
	[ $# -lt 5 ] && return 0
	kt_expect_eq "taken at +$1 ($2)" "$4" "$(field "$1" taken)"
	kt_expect_eq "not taken at +$1 ($2)" "$5" "$(field "$1" not_taken)"
}
n=$((r1 + r0))
expect 0 31c0 $n
expect 5 7408 $n $r0 $r1				# je 3f: zero trips
expect 7 4801f8 $((r1 * t))				# loop body
expect 13 75f8 $((r1 * t)) $((r1 * (t - 1))) $r1	# jne 1b
expect 15 4885f6 $n					# 3: target of je, fall-through of jne
expect 18 7504 $n $r1 $r0				# jne 4f: dir
expect 20 4883c001 $r0					# dir == 0 only
expect 31 7502 $n $n 0					# jne 5f: never equal
expect 33 31c0 0					# never executed
kt_expect_eq "state of the never-executed xor" counted "$(field 33 state)"
kt_expect_eq "state of the int3 pad after the jmp" refused "$(field 47 state)"
kt_expect_eq "count of the int3 pad (refused, not 0)" null "$(field 47 count)"
kt_expect_eq "block counts" "$n,$((r1 * t)),$n,$r0,$n,0,$n" \
    "$(jq -r 'select(.type == "cover_function") | [.blocks[0:7][].count] | map(tostring) | join(",")' /tmp/c.json)"
kt_expect_eq "never-executed instructions" 1 \
    "$(jq -r 'select(.type == "cover_function") | .never_executed' /tmp/c.json)"
[ -s /tmp/c.html ] || kt_fail "cover --html wrote nothing"

# The text form of a second run (same workload, same counts).
kinstctl cover --no-color "$fn" -- sh /tmp/wl.sh >/tmp/c.txt 2>/tmp/c.err ||
    kt_fail "kinstctl cover (text) failed: $(cat /tmp/c.err)"
cat /tmp/c.txt
row() {	# row OFFSET: the text line of the instruction at +OFFSET
	# As strings: busybox awk compares "+0x21" and a count of 33 as numbers
	# (strtod reads hex), and matched the count column whenever 3t was 33.
	awk -v o="+$1" '{ for (i = 1; i <= 3; i++) if (($i "") == o) { print; exit } }' /tmp/c.txt
}
case $(row 0xd) in
*" $((r1 * t))  jne "*"[taken $((r1 * (t - 1))), not taken $r1]"*) ;;
*) kt_fail "text row of the loop's jne: '$(row 0xd)'" ;;
esac
case $(row 0x21) in
"  B5 #####"*"#####  xor"*) ;;
*) kt_fail "text row of the never-executed xor: '$(row 0x21)'" ;;
esac
case $(row 0x2f) in
*" refused  int3"*) ;;
*) kt_fail "text row of the int3 pad: '$(row 0x2f)'" ;;
esac
kt_log "text form: the loop's jne, the never-executed xor (#####) and the refused int3 as expected"
echo "=== cover-json-begin ==="
cat /tmp/c.json
echo "=== cover-json-end ==="
echo "=== cover-html-begin ==="
cat /tmp/c.html
echo "=== cover-html-end ==="
rmmod kinst_covtest || kt_fail "rmmod kinst_covtest failed"

# A real kernel function: ksys_read under syscall_loop's reads.
nr=50
kinstctl cover --json kernel:ksys_read -- sh -c "syscall_loop read2 $nr 7 9 >/dev/null" >/tmp/k.json 2>/tmp/k.err ||
    kt_fail "kinstctl cover ksys_read failed: $(cat /tmp/k.err)"
cat /tmp/k.err
# The entry block: its count is its first counted instruction's (+0 is
# the ftrace site, refused).  Other processes may read too: at least.
e=$(jq -r 'select(.type == "cover_function") | .blocks[0].count' /tmp/k.json)
kt_log "ksys_read entry block: $e (syscall_loop made $((2 * nr)) reads)"
[ "$e" != null ] && [ "$e" -ge $((2 * nr)) ] ||
    kt_fail "ksys_read's entry count $e is below the $((2 * nr)) reads made"
kt_expect_eq "refused instructions shown as refused with a null count" 0 \
    "$(jq -r 'select(.type == "cover_insn" and .state != "counted" and .count != null) | .offset' /tmp/k.json | grep -c .)"
bad=$(jq -r 'select(.type == "cover_insn" and .taken != null and .taken + .not_taken != .count) | .offset' /tmp/k.json)
[ -z "$bad" ] || kt_fail "ksys_read branches whose taken + not taken != count: $bad"
nb=$(jq -r 'select(.type == "cover_insn" and .taken != null) | .offset' /tmp/k.json | grep -c .)
[ "$nb" -ge 1 ] || kt_fail "no conditional branch with counts in ksys_read"
kt_log "ksys_read: $nb conditional branches, taken + not taken = count for each"
exit 0
