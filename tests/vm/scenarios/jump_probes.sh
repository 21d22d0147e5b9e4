#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: jump-optimized probes (issue 13): the same instruction of a test module traced with a jump and with --no-optimize gives identical snapshots (all 16 GPRs as loaded, flags, %rsp as the function recorded, the kernel stack), every hit of the optimized run comes through the jump; inside a user-access region (stac ... clac) the handler runs with AC clear and the window with it set; then whole busy functions are counted and their holders killed with SIGKILL at spread delays, also while the jumps are being installed, on both CPUs: no jump is left, the text is byte-identical each time, and rmmod works
# scenario-needs: kinst
# scenario-timeout: 900
# scenario-options: -f "$KINST_BUILD/tests/vm/kinst_gprtest.ko"
#
# debugfs kinst/jump (kmod/linux/kinst_linux_debugfs.c) says how many jumps are
# installed and how many hits came through one: the proof that a hit took
# the jump and not the int3.
. /kinst/lib/guest-lib.sh
kt_need_kinst

J=/sys/kernel/debug/kinst/jump
[ -r "$J" ] || kt_fail "$J is missing"
jv() { sed -n "s/^$1 //p" "$J"; }
kt_expect_eq "jump optimization enabled (debugfs kinst/jump)" 1 "$(jv enabled)"
kt_expect_eq "jumps installed before any trace" 0 "$(jv installed)"

# ---- 1. one instruction, optimized and not: identical snapshots ----
kt_testmod kinst_gprtest
p=/sys/module/kinst_gprtest/parameters/run
fn=kinst_gprtest:kinst_gprtest_body
kinstctl list-offsets --json "$fn" >/tmp/lo.json || kt_fail "kinstctl list-offsets $fn failed"
o_add=$(jq -r 'select(.type == "insn" and .bytes == "4d01ee") | .offset' /tmp/lo.json)
[ "$(echo "$o_add" | grep -c .)" = 1 ] || kt_fail "not exactly one add %r13,%r14 in $fn: '$o_add'"
# Its window is the add and the jae after it (relocated as a rel32 jae).
kt_expect_eq "list-offsets: add %r13,%r14 (+$o_add) qualifies" jump \
    "$(jq -r "select(.type == \"insn\" and .offset == $o_add) | .probe" /tmp/lo.json)"

k=8
# wait_one_jump WHAT: until the one probe traced is a jump (60 s at most).
wait_one_jump() {
	n=0
	until [ "$(jv installed)" = 1 ]; do
		n=$((n + 1))
		[ $n -lt 600 ] || { KT_TRACE_ANY_STATUS=1 kt_trace_stop; kt_fail "$1: the jump was not installed in 60 s"; }
		sleep 0.1
	done
	kt_log "$1: jump installed $(( n / 10 )).$(( n % 10 )) s after tracing started"
}
# run_mode opt|noopt PROBE RSPDELTA [VARYING]: k runs traced at PROBE; each
# snapshot's %rsp must be the one the function recorded + RSPDELTA; the
# registers VARYING (jq paths, comma-separated) are left out of the
# snapshots compared (they hold the caller's values, which vary per run).
run_mode() {
	probe=$2 rspd=$3 vary=${4:+, $4}
	h0=$(jv hits)
	if [ "$1" = opt ]; then
		kt_trace_start /tmp/t.json /tmp/t.err --json --stack "$probe"
		wait_one_jump opt
	else
		kt_trace_start /tmp/t.json /tmp/t.err --json --stack --no-optimize "$probe"
		sleep 1
		kt_expect_eq "noopt: jumps installed" 0 "$(jv installed)"
	fi
	: >/tmp/rsp.$1
	i=0
	while [ $i -lt $k ]; do
		echo 1 >"$p" || kt_fail "write $p failed ($1)"
		r=$(cat "$p")
		case $r in
		ok*) printf '0x%x\n' $(( $(echo "$r" | sed -n 's/.* rsp=\(0x[0-9a-f]*\).*/\1/p') + rspd )) >>/tmp/rsp.$1 ;;
		*) KT_TRACE_ANY_STATUS=1 kt_trace_stop; kt_fail "$1 run $i: the registers after the traced instructions are wrong: $r" ;;
		esac
		i=$((i + 1))
	done
	kt_trace_stop
	st=$?
	cat /tmp/t.err
	[ "$st" = 0 ] || kt_fail "kinstctl trace ($1) exited $st after SIGINT: $(cat /tmp/t.err)"
	kt_trace_summary /tmp/t.err /tmp/t.json
	kt_expect_eq "$1: records" "$k" "$KT_PRINTED"
	h1=$(jv hits)
	if [ "$1" = opt ]; then
		kt_expect_eq "opt: hits through the jump" "$k" $((h1 - h0))
		grep -q '^kinstctl: 1 of 1 probe jump-optimized' /tmp/t.err ||
		    kt_fail "opt: the summary does not say the probe was jump-optimized"
	else
		kt_expect_eq "noopt: hits through a jump" 0 $((h1 - h0))
		grep -q '^kinstctl: 0 of 1 probe jump-optimized (--no-optimize)' /tmp/t.err ||
		    kt_fail "noopt: the summary does not say --no-optimize"
	fi
	jq -c ".regs | del(.rsp$vary)" /tmp/t.json | sort -u >/tmp/regs.$1
	# The kernel stack at each hit (unwound from the registers alone on the
	# jump path): the same call chain either way.
	jq -c '[.stack[].function]' /tmp/t.json | sort -u >/tmp/stack.$1
	kt_expect_eq "$1: distinct call chains" 1 "$(grep -c . /tmp/stack.$1)"
	[ "$(jq -r 'length' /tmp/stack.$1)" -ge 3 ] || kt_fail "$1: a stack of fewer than 3 frames: $(cat /tmp/stack.$1)"
	kt_expect_eq "$1: distinct snapshots other than %rsp" 1 "$(grep -c . /tmp/regs.$1)"
	kt_expect_eq "$1: %rsp of the snapshots = the one the function recorded + $rspd, run by run" \
	    "$(cat /tmp/rsp.$1 | tr '\n' ' ')" "$(jq -r .regs.rsp /tmp/t.json | tr '\n' ' ')"
}
run_mode opt "$fn+$o_add" 0
run_mode noopt "$fn+$o_add" 0
kt_expect_eq "snapshots (all registers but %rsp, rip, rflags) optimized vs --no-optimize" \
    "$(cat /tmp/regs.noopt)" "$(cat /tmp/regs.opt)"
kt_expect_eq "call chains optimized vs --no-optimize" "$(cat /tmp/stack.noopt)" "$(cat /tmp/stack.opt)"
val() { printf '0x%x' $(( 0x0101010101010101 * ($1 + 1) + 0x123 )); }
kt_expect_eq "r13 as loaded" "$(val 13)" "$(jq -r .r13 /tmp/regs.opt)"
kt_expect_eq "r14 as loaded" "$(val 14)" "$(jq -r .r14 /tmp/regs.opt)"
kt_expect_eq "rip" "$(jq -r .address /tmp/t.json | sort -u)" "$(jq -r .rip /tmp/regs.opt)"
kt_expect_eq "arithmetic flags before the add (OF SF AF: add \$1 to 0x7f)" 0x890 \
    "$(printf '0x%x' $(( $(jq -r .rflags /tmp/regs.opt) & 0x8d5 )))"
kt_log "optimized and --no-optimize: $k identical snapshots each"

# ---- 1b. its return, optimized and not (issue 42: no trap per return) ----
# The function returns through `jmp __x86_return_thunk`, which the kernel
# rewrote at load into `ret; int3 x4` unless a return-thunk mitigation is
# on (then the jmp stays): a jump window either way.  Six pops after the
# recorded %rsp (pushfq and six pushes; popfq and six pops): +56.
o_ret=$(jq -r 'select(.type == "insn" and .return != null) | .offset' /tmp/lo.json)
[ "$(echo "$o_ret" | grep -c .)" = 1 ] || kt_fail "not exactly one return point in $fn: '$o_ret'"
kt_text_of "$fn" >/tmp/gt.text || kt_fail "cannot read the text of $fn"
live=$(sed -n 's/^ok //p' /tmp/gt.text | tr '\n' ' ' |
    awk -v o="$o_ret" '{ for (i = o + 1; i <= o + 5; i++) printf "%s", $i }')
case $live in
c3cccccccc) kt_log "return at +$o_ret: ret; int3 x4 in memory (the kernel rewrote the thunk jump)" ;;
e9*) kt_log "return at +$o_ret: still jmp __x86_return_thunk in memory (a return-thunk mitigation is on)" ;;
*) kt_fail "return at +$o_ret: unexpected bytes in memory: $live" ;;
esac
# At the ret the six callee-saved registers hold the caller's values again
# (popped): left out of the snapshots compared, but none may be the
# body's (a record taken before the pops would show them).
saved='.rbx, .rbp, .r12, .r13, .r14, .r15'
run_mode opt "$fn:return" 56 "$saved"
jq -r "[.regs | $saved] | @tsv" /tmp/t.json >/tmp/saved.ropt
mv /tmp/regs.opt /tmp/regs.ropt
mv /tmp/stack.opt /tmp/stack.ropt
run_mode noopt "$fn:return" 56 "$saved"
jq -r "[.regs | $saved] | @tsv" /tmp/t.json >>/tmp/saved.ropt
for r in 3 5 12 13 14 15; do
	kt_expect_eq "return: records whose callee-saved registers hold the body's value $(val $r)" 0 \
	    "$(grep -c -- "$(val $r)" /tmp/saved.ropt)"
done
kt_expect_eq "return: snapshots optimized vs --no-optimize" "$(cat /tmp/regs.noopt)" "$(cat /tmp/regs.ropt)"
kt_expect_eq "return: call chains optimized vs --no-optimize" "$(cat /tmp/stack.noopt)" "$(cat /tmp/stack.ropt)"
kt_expect_eq "return: rax as loaded" "$(val 0)" "$(jq -r .rax /tmp/regs.ropt)"
kt_expect_eq "return: r10 as the body left it (sub %r9)" \
    "$(printf '0x%x' $(( $(val 10) - $(val 9) )))" "$(jq -r .r10 /tmp/regs.ropt)"
kt_expect_eq "return: rip is the return point" \
    "$(jq -r .address /tmp/t.json | sort -u)" "$(jq -r .rip /tmp/regs.ropt)"
kt_text_of "$fn" >/tmp/gt.after || kt_fail "cannot read the text of $fn"
kt_expect_eq "text of $fn after the return traces" "$(cat /tmp/gt.text)" "$(cat /tmp/gt.after)"
kt_log "return optimized and --no-optimize: $k identical snapshots each"

# ---- 1c. inside a user-access region: the handler runs with SMAP on ----
# kinst_gprtest_uaccess: stac; movl $0x5a5a5a5a,%eax; the flags stored;
# clac.  The probed code has AC set (SMAP off).  The int3 path's kernel
# entry clears it; the detour must too, before its handler (debugfs
# ac_set counts the handler's calls made with AC set), and give it back
# to the window (the module checks the flags stored after it).
grep -qw smap /proc/cpuinfo || kt_fail "the guest CPU has no SMAP (QEMU's -cpu max has it): part 1c cannot run"
ufn=kinst_gprtest:kinst_gprtest_uaccess
up=/sys/module/kinst_gprtest/parameters/ac
kinstctl list-offsets --json "$ufn" >/tmp/lu.json || kt_fail "kinstctl list-offsets $ufn failed"
o_mov=$(jq -r 'select(.type == "insn" and .bytes == "b85a5a5a5a") | .offset' /tmp/lu.json)
[ "$(echo "$o_mov" | grep -c .)" = 1 ] || kt_fail "not exactly one movl \$0x5a5a5a5a,%eax in $ufn: '$o_mov'"
kt_expect_eq "list-offsets: the movl (+$o_mov) in the user-access region qualifies" jump \
    "$(jq -r "select(.type == \"insn\" and .offset == $o_mov) | .probe" /tmp/lu.json)"
a0=$(jv ac_set) h0=$(jv hits)
kt_trace_start /tmp/u.json /tmp/u.err --json "$ufn+$o_mov"
wait_one_jump uaccess
i=0
while [ $i -lt $k ]; do
	echo 1 >"$up" || { KT_TRACE_ANY_STATUS=1 kt_trace_stop; kt_fail "write $up failed"; }
	i=$((i + 1))
done
kt_trace_stop
kt_trace_summary /tmp/u.err /tmp/u.json
kt_expect_eq "uaccess: records" "$k" "$KT_PRINTED"
kt_expect_eq "uaccess: hits through the jump" "$k" $(( $(jv hits) - h0 ))
kt_expect_eq "uaccess: records whose rflags (the probed code's) have AC set" "$k" \
    "$(jq -r '.regs.rflags' /tmp/u.json | while read -r f; do [ $(( $f & 0x40000 )) = 0 ] || echo "$f"; done | grep -c .)"
kt_expect_eq "uaccess: handler calls with AC set (debugfs ac_set)" 0 $(( $(jv ac_set) - a0 ))
kt_expect_eq "uaccess: AC after the window, every run" "ok runs=$k" "$(cat "$up")"
kt_log "user-access region: $k hits through the jump, the handler with AC clear, the window with it set"
rmmod kinst_gprtest || kt_fail "rmmod kinst_gprtest failed"

# ---- 2. arm, optimize, SIGKILL, on both CPUs ----
# The text is read from memory itself (kt_text_of), not through kinst's
# unpatched view.
funcs="vfs_read ksys_read __x64_sys_getpid"
for f in $funcs; do
	kt_text_of "$f" >/tmp/before.$f || kt_fail "cannot read the text of $f"
	grep -qv '^ok ' /tmp/before.$f && kt_fail "reading the text of $f: $(grep -v '^ok ' /tmp/before.$f | head -n 1)"
done
( while :; do cat /proc/self/stat >/dev/null; done ) &
w1=$!
( while :; do dd if=/dev/zero of=/dev/null bs=1 count=200 2>/dev/null; done ) &
w2=$!
# Round "opt": killed as soon as the optimizer runs (debugfs says so);
# then at spread delays after the last function was armed.
during=0 after=0 r=0
for d in opt 0 0.3 1 2.5; do
	: >/tmp/c.err
	kinstctl count $funcs >/dev/null 2>/tmp/c.err &
	c=$!
	n=0
	if [ "$d" = opt ]; then
		until [ "$(jv optimizing)" = 1 ]; do
			n=$((n + 1))
			kill -0 $c 2>/dev/null || kt_fail "round $r: kinstctl count exited: $(cat /tmp/c.err)"
			[ $n -lt 6000 ] || kt_fail "round $r: the optimizer did not run in 60 s"
			sleep 0.01
		done
	else
		until grep -q "^kinstctl: __x64_sys_getpid: .* armed" /tmp/c.err; do
			n=$((n + 1))
			kill -0 $c 2>/dev/null || kt_fail "round $r: kinstctl count exited: $(cat /tmp/c.err)"
			[ $n -lt 600 ] || kt_fail "round $r: kinstctl count did not arm in 60 s"
			sleep 0.1
		done
		sleep "$d"
	fi
	inst=$(jv installed) busy=$(jv optimizing)
	kill -9 $c
	wait $c 2>/dev/null
	if [ "$busy" = 1 ]; then during=$((during + 1)); fi
	if [ "$inst" -gt 0 ]; then after=$((after + 1)); fi
	kt_log "round $r: SIGKILL ($d), $inst jumps installed, optimizer running: $busy"
	kt_jumps_out "round $r" 30 $funcs
	r=$((r + 1))
done
kt_log "$during rounds killed while the optimizer ran, $after with jumps installed; text identical after each"
[ "$during" -gt 0 ] || kt_fail "no round was killed while the optimizer ran"
[ "$after" -gt 0 ] || kt_fail "no round had a jump installed when it was killed: removal was not exercised"

# A clean stop: every function had some of its probes jump-optimized.
kinstctl count --duration 4 $funcs >/dev/null 2>/tmp/c.err || kt_fail "kinstctl count failed: $(cat /tmp/c.err)"
cat /tmp/c.err
for f in $funcs; do
	l=$(grep "^  kernel:$f: " /tmp/c.err) || kt_fail "no jump summary line for $f"
	n=$(echo "$l" | sed -n 's/.*: \([0-9]*\) of \([0-9]*\) jump-optimized/\1/p')
	[ "${n:-0}" -gt 0 ] || kt_fail "$f: no probe jump-optimized: $l"
done
kill $w1 $w2
wait $w1 $w2 2>/dev/null
kt_expect_eq "jumps installed at the end" 0 "$(jv installed)"
kt_log "jump hits since load: $(jv hits)"
rmmod kinst || kt_fail "rmmod kinst failed"
insmod /kinst/modules/kinst.ko || kt_fail "insmod kinst.ko failed"
exit 0
