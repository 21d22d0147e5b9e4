#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: kinstctl traces three instructions of a test module that loads a distinct known value into every one of the 16 GPRs and chosen flags (add %r13,%r14 out of line, jae emulated, sub %r9,%r10 out of line): every snapshot shows exactly those values, and every register afterwards holds what the instructions compute
# scenario-needs: kinst
# scenario-timeout: 300
# scenario-options: -f "$KINST_BUILD/tests/vm/kinst_gprtest.ko"
#
# tests/vm/testmod/kinst_gprtest.c is the module; writing its "run"
# parameter runs kinst_gprtest_body once and checks the registers it stored
# after the traced instructions (a register swapped on the way out of the
# trap handler); the snapshots here check the way in.
. /kinst/lib/guest-lib.sh
kt_need_kinst

kt_testmod kinst_gprtest
p=/sys/module/kinst_gprtest/parameters/run
fn=kinst_gprtest:kinst_gprtest_body

# Untraced, the module's own check holds.
echo 1 >"$p" || kt_fail "write $p failed"
r=$(cat "$p")
case $r in ok*) kt_log "untraced: $r" ;; *) kt_fail "untraced run: $r" ;; esac

# The three instructions, by their bytes, and their verdicts.
kinstctl list-offsets --json "$fn" >/tmp/lo.json || kt_fail "kinstctl list-offsets $fn failed"
off_of() {	# off_of BYTES VERDICT
	_o=$(jq -r "select(.type == \"insn\" and .bytes == \"$1\") | .offset" /tmp/lo.json)
	[ "$(echo "$_o" | grep -c .)" = 1 ] || kt_fail "not exactly one instruction $1 in $fn: '$_o'"
	kt_expect_eq "verdict of $1 at +$_o" "$2" \
	    "$(jq -r "select(.type == \"insn\" and .offset == $_o) | .verdict" /tmp/lo.json)" >&2
	echo "$_o"
}
o_add=$(off_of 4d01ee out-of-line) || exit 1
o_jae=$(jq -r 'select(.type == "insn" and (.bytes | startswith("73"))) | .offset' /tmp/lo.json)
[ "$(echo "$o_jae" | grep -c .)" = 1 ] || kt_fail "not exactly one jae in $fn: '$o_jae'"
kt_expect_eq "verdict of jae at +$o_jae" emulated \
    "$(jq -r "select(.type == \"insn\" and .offset == $o_jae) | .verdict" /tmp/lo.json)"
o_sub=$(off_of 4d29ca out-of-line) || exit 1
kt_log "add %r13,%r14 at +$o_add, jae at +$o_jae, sub %r9,%r10 at +$o_sub"

k=5
kt_trace_start /tmp/t.json /tmp/t.err --json "$fn+$o_add" "$fn+$o_jae" "$fn+$o_sub"
: >/tmp/rsp
i=0
while [ $i -lt $k ]; do
	echo 1 >"$p" || kt_fail "write $p failed (traced)"
	r=$(cat "$p")
	case $r in
	ok*) echo "$r" | sed -n 's/.* rsp=\(0x[0-9a-f]*\).*/\1/p' >>/tmp/rsp ;;
	*) KT_TRACE_ANY_STATUS=1 kt_trace_stop; kt_fail "traced run $i: the registers after the traced instructions are wrong: $r" ;;
	esac
	i=$((i + 1))
done
addflags=$(echo "$r" | sed -n 's/.* addflags=\(0x[0-9a-f]*\).*/\1/p')
kt_trace_stop
st=$?
cat /tmp/t.err
[ "$st" = 0 ] || kt_fail "kinstctl trace exited $st after SIGINT: $(cat /tmp/t.err)"
kt_trace_summary /tmp/t.err /tmp/t.json
kt_expect_eq "records dropped" 0 "$KT_DROPPED"
kt_log "module verdict after $k traced runs: $r"

# The loaded values: register number i (encoding order, rsp = 4 is not
# loaded but recorded) holds 0x0101010101010101 * (i + 1) + 0x123.
regs="rax:0 rcx:1 rdx:2 rbx:3 rbp:5 rsi:6 rdi:7 r8:8 r9:9 r10:10 r11:11 r12:12 r13:13 r14:14 r15:15"
val() { printf '0x%x' $(( 0x0101010101010101 * ($1 + 1) + 0x123 )); }
sum1314=$(printf '0x%x' $(( $(val 13) + $(val 14) )))
# check_hits OFFSET NAME FLAGS R14: every snapshot at +OFFSET, register by
# register (r14 is R14: the add changes it), %rsp, rip and the flags.
check_hits() {
	jq -c "select(.type == \"hit\" and .offset == $1)" /tmp/t.json >/tmp/h.json
	kt_expect_eq "snapshots at $2 (+$1)" "$k" "$(grep -c . /tmp/h.json)"
	for ri in $regs; do
		r=${ri%:*}
		want=$(val ${ri#*:})
		[ "$r" = r14 ] && want=$4
		got=$(jq -r ".regs.$r" /tmp/h.json | sort -u | tr '\n' ' ' | sed 's/ $//')
		[ "$got" = "$want" ] || kt_fail "$2: %$r in the snapshots is '$got', loaded $want"
	done
	kt_expect_eq "$2: %rsp of the snapshots = the one the function recorded, run by run" \
	    "$(sort /tmp/rsp | tr '\n' ' ')" "$(jq -r .regs.rsp /tmp/h.json | sort | tr '\n' ' ')"
	kt_expect_eq "$2: rip = the instruction's address" "$(jq -r .address /tmp/h.json | sort -u)" \
	    "$(jq -r .regs.rip /tmp/h.json | sort -u)"
	fl=$(jq -r .regs.rflags /tmp/h.json | sort -u)
	[ "$(echo "$fl" | grep -c .)" = 1 ] || kt_fail "$2: several rflags values: $fl"
	kt_expect_eq "$2: arithmetic flags (CF PF AF ZF SF OF)" "$(printf '0x%x' $(( $3 )))" \
	    "$(printf '0x%x' $(( fl & 0x8d5 )))"
	kt_log "$2: all 16 GPRs, rip and the flags as loaded, in $k snapshots"
}
check_hits "$o_add" "add %r13,%r14" 0x890 "$(val 14)"
check_hits "$o_jae" "jae" "$addflags" "$sum1314"
check_hits "$o_sub" "sub %r9,%r10" "$addflags" "$sum1314"
rmmod kinst_gprtest || kt_fail "rmmod kinst_gprtest failed"
exit 0
