#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: direct calls and jumps out of a function are named by the symbol they reach: list-offsets --json gives a target object whose function + offset is the address by /proc/kallsyms, the text shows "<function>", a trace of such a call shows it in each hit (text, and a JSON target object equal to list-offsets'), and jumps inside the function get none
# scenario-needs: kinst
# scenario-timeout: 300
#
# Issue 26, item 4 (what objdump and perf annotate print: call <__fdget_pos>).
. /kinst/lib/guest-lib.sh
kt_need_kinst

f=ksys_read
kinstctl list-offsets --json "$f" >/tmp/l.json || kt_fail "list-offsets --json $f"
kinstctl list-offsets "$f" >/tmp/l.txt || kt_fail "list-offsets $f"
fn=$(jq -r 'select(.type == "function") | .address' /tmp/l.json | head -n 1)
fs=$(jq -r 'select(.type == "function") | .size' /tmp/l.json | head -n 1)
jq -r 'select(.type == "insn" and .target != null) |
    "\(.offset) \(.target.address) \(.target.function) \(.target.offset) \(.target.module)"' \
    /tmp/l.json >/tmp/targets
n=$(grep -c . /tmp/targets)
[ "$n" -ge 3 ] || kt_fail "only $n named branch targets in $f"
kt_log "$n branches out of $f named"
while read -r off addr tf toff tmod; do
	[ "$tf" != null ] || kt_fail "+$off: target $addr has no symbol"
	kt_expect_eq "+$off: module of $tf" kernel "$tmod"
	ok=0
	for a in $(awk -v fn="$tf" '($2 == "t" || $2 == "T") && $3 == fn { print $1 }' /proc/kallsyms); do
		[ $((0x$a + toff)) = $((addr)) ] && ok=1
	done
	[ "$ok" = 1 ] || kt_fail "+$off: $tf+$toff is not $addr by /proc/kallsyms"
	# Outside the function, by its own address and size.
	[ $((addr)) -lt $((fn)) ] || [ $((addr)) -ge $((fn + fs)) ] ||
	    kt_fail "+$off: target $addr is inside $f"
	grep -q "^  +$(printf '0x%x' "$off") .* <$tf\(+0x[0-9a-f]*\)\?>" /tmp/l.txt ||
	    kt_fail "+$off: the text line does not name <$tf>"
done </tmp/targets || exit 1
# Direct branches without a target: every one stays inside the function.
jq -r 'select(.type == "insn" and .target == null and (.mnemonic | test("^(j|call|loop)")) and
    (.operands | test("^0x[0-9a-f]+$"))) | "\(.offset) \(.operands)"' /tmp/l.json >/tmp/inside
ni=$(grep -c . /tmp/inside)
[ "$ni" -ge 1 ] || kt_fail "no direct branch inside $f"
while read -r off to; do
	[ $((to)) -ge $((fn)) ] && [ $((to)) -lt $((fn + fs)) ] ||
	    kt_fail "+$off: branch to $to leaves $f but has no target"
done </tmp/inside || exit 1
kt_log "$ni direct branches inside $f, none named"

# A trace of the first traceable call shows its target in each hit.
set -- $(jq -r 'select(.type == "insn" and .target != null and .verdict != "refused" and
    (.mnemonic | test("^call"))) | "\(.offset) \(.target.function)"' /tmp/l.json | head -n 1)
[ $# -eq 2 ] || kt_fail "no traceable call out of $f"
kt_trace_start /tmp/t.txt /tmp/t.err -n 3 "kernel:$f+$1"
dd if=/dev/zero of=/dev/null bs=1 count=5 2>/dev/null
kt_trace_stop || kt_fail "kinstctl trace $f+$1 failed: $(cat /tmp/t.err)"
head -n 3 /tmp/t.txt
kt_expect_eq "hits naming <$2>" 3 "$(grep -c " <$2>  rip=" /tmp/t.txt)"
# The same as JSON: a target object equal to list-offsets'.
want=$(jq -c "select(.type == \"insn\" and .offset == $1) | .target" /tmp/l.json)
kt_trace_start /tmp/t.json /tmp/tj.err --json -n 3 "kernel:$f+$1"
dd if=/dev/zero of=/dev/null bs=1 count=5 2>/dev/null
kt_trace_stop || kt_fail "kinstctl trace --json $f+$1 failed: $(cat /tmp/tj.err)"
kt_expect_eq "JSON hits whose target is list-offsets' $want" 3 \
    "$(jq -c '.target' /tmp/t.json | grep -c -x -F "$want")"
# A probe elsewhere has none.
kt_trace_start /tmp/n.json /tmp/nj.err --json -n 1 "kernel:$f+$(kt_first_traceable "$f")"
dd if=/dev/zero of=/dev/null bs=1 count=2 2>/dev/null
kt_trace_stop || kt_fail "kinstctl trace --json at the first instruction failed"
kt_expect_eq "JSON hits with a target at a non-branch" 0 "$(jq -c 'select(.target != null)' /tmp/n.json | grep -c .)"
exit 0
