#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Guest benchmark (not a test: prints figures, never fails on timing).  Run:
#
#   tests/vm/run-in-guest --require-module -t 1200 --append idle=poll \
#       tests/bench/guest_actions_rate.sh [N [R [RING]]]
#
# (N getpid calls per run, default 5000; R rounds, default 7; RING,
# kinst's ring bytes per CPU, below.  N=5000 R=5 took 4 min 51 s on a
# loaded 2-core host, most of it kinstctl formatting the records of the
# record cases after each loop, --stack's above all.)
# idle=poll: on a loaded host the guest stopped for good twice with both
# vCPUs in HLT; once checked with the monitor's `info lapic`, interrupts
# enabled and the local APIC timer's vector pending in IRR but never
# delivered (QEMU 7.2 TCG).  A polling idle loop never halts there.  One
# run with idle=poll also stopped (in the warm-up's --if case, timers
# alive, every task asleep; cause unknown): the watchdog below now dumps
# the blocked tasks when that happens.
#
# (add -f build/tests/kmod/kinst_devtest to also print `kinst_devtest bench
# N`, the module's own per-hit cost without kinstctl.)
#
# Issue 13's figures (jump-optimized probes): a fourth argument CASES picks
# the cases, a fifth OFF the instruction's offset in __x64_sys_getpid, e.g.
#   tests/vm/run-in-guest ... tests/bench/guest_actions_rate.sh 5000 5 \
#       8388608 "bare bare_noopt count count_noopt kp_regs" 12
# bare_noopt, count_noopt: bare and count with --no-optimize (int3s).
# The optimized kinst cases wait until the module says the jump is in
# (debugfs kinst/jump) before the loop; a probe that stays an int3 is a
# WARNING.
#
# Issue 11's "Performance" figures, all in one guest run, on one instruction:
# the first traceable instruction after the entry of __x64_sys_getpid, under
# a loop of N getpid calls (syscall_loop, timing itself: SYSCALL_LOOP_NS).
# Cases, kinst:
#   none      no probe (the baseline of its round)
#   bare      kinstctl trace --json >/dev/null (today's record per hit)
#   iffalse   the same with --if 'rdi == 0x5a5a5a5a' (never true: the
#             program runs, nothing is recorded)
#   ifload    --if '*(u64)rsp == 0x5a5a5a5a && rdi == 1' (false, with a
#             fault-safe kernel load)
#   stack     kinstctl trace --stack --json
#   mem       kinstctl trace --mem rsp:64 --json (a 64-byte capture), if
#             this kinstctl has --mem
#   count     kinstctl count (per probe, in the kernel)
#   bycomm    kinstctl count --by comm
#   hist      kinstctl hist --value rdi (log2)
# and tracefs kprobe events at the same address (kinstbench/kinstbench_probe)
# recording what kinst records (the 16 GPRs, ip, flags, cs, ss as
# fetchargs), read out by `cat trace_pipe >/dev/null` as kinstctl reads:
#   kp_regs   the event alone                      (peer of bare)
#   kp_filter with the filter 'di == 1515870810'   (peer of iffalse)
#   kp_stack  with the `stacktrace` trigger        (peer of stack)
#   kp_mem    plus 8 x 8 bytes at %sp (+0(%sp):x64 ... +56(%sp):x64)
#                                                  (peer of mem)
# If the kernel optimizes that kprobe (a jump instead of an int3:
# /sys/kernel/debug/kprobes/list says [OPTIMIZED]), every kp_* case also
# runs with /proc/sys/debug/kprobes-optimization = 0 (kp_*_noopt: an int3,
# like kinst).
#
# Issue 25's cases (many sessions on one instruction), by name in CASES:
#   count2, count4       2 or 4 kinstctl count sessions on the instruction
#                        at once (one site, 2 or 4 subscribers; the first
#                        session's hits and loop are measured)
#   count2_noopt, count4_noopt   the same with --no-optimize (int3s)
#   kp_hist, kp_hist2, kp_hist4  1, 2 or 4 kprobe events on the address,
#                        each with a `hist:keys=common_pid` trigger (the
#                        kernel's own in-kernel counting: count's peer)
# and the goals "the second session costs less than the first":
#   (ns/hit(count2) - ns/hit(count)) / ns/hit(count) < 1.
#
# Method (TCG's timing drifts ~3x over a run): a warm-up round (small N, each
# case's output checked: records, stacks, captures are really there), then
# R rounds, each running every case once in a rotated order.  Per case and
# round, ns/hit = (loop time - that round's `none` loop time) / hits, hits
# from kinstctl's summary or kprobe_profile (a count different from N is a
# WARNING line; 0 hits is an ERROR: the probe measured nothing).  Printed:
# the median ns/hit over rounds, and per pair the median of the per-round
# ratios.  Exit status: 0, or 1 on an ERROR (never on timing).
. /kinst/lib/guest-lib.sh
kt_need_kinst
n=${1:-5000}
rounds=${2:-7}
ring=${3:-8388608}
BENCH_CASES=${4:-}
BENCH_OFF=${5:-}
case $n$rounds$ring in *[!0-9]*|'') echo "ERROR: usage: guest_actions_rate.sh [N [R [RING [CASES [OFF]]]]]" >&2; exit 2 ;; esac
[ "$n" -gt 0 ] && [ "$rounds" -gt 0 ] || { echo "ERROR: N and R must be > 0" >&2; exit 2; }

T=$KT_TRACING
G=kinstbench
EV=kinstbench_probe
KPLIST=/sys/kernel/debug/kprobes/list
KPOPT=/proc/sys/debug/kprobes-optimization
RES=/tmp/bench.res
f=__x64_sys_getpid

err() {
	echo "ERROR: $*"
	echo "ERROR: $*" >&2
	exit 1
}

# kinst.ko reloaded with a RING-byte ring per CPU (default 8 MiB, 0: keep
# the loaded module's): with the default 512 KiB the reader falls behind a
# tight loop and most hits are dropped, which is cheaper than recording
# them; the kprobe peers always write (the trace buffer overwrites).
if [ "$ring" != 0 ]; then
	rmmod kinst || err "rmmod kinst failed"
	insmod /kinst/modules/kinst.ko ring_size="$ring" || err "insmod kinst.ko ring_size=$ring failed"
	_i=0
	while [ ! -e /dev/kinst ]; do
		_i=$((_i + 1))
		[ $_i -lt 100 ] || err "no /dev/kinst after insmod"
		sleep 0.1
	done
	echo "bench: kinst.ko reloaded with ring_size=$ring (bytes per CPU)"
fi

lo=$(kinstctl list-offsets --json "$f") || err "kinstctl list-offsets $f failed"
off=$(echo "$lo" | jq -r 'select(.type == "insn" and .offset > 0 and
    (.verdict | startswith("refused") | not)) | .offset' | head -n 1)
[ -z "${BENCH_OFF:-}" ] || off=$BENCH_OFF
[ -n "$off" ] || err "no traceable instruction in $f"
insn=$(echo "$lo" | jq -r --argjson o "$off" 'select(.type == "insn" and .offset == $o) |
    "\(.address) \(.text) (\(.verdict))"')
hexoff=$(printf '0x%x' "$off")
addr=$(echo "$insn" | cut -d' ' -f1)
addr=${addr#0x}
case $addr in *[!0-9a-f]*|'') err "no address for $f+$hexoff in list-offsets: $insn" ;; esac
spec="kernel:$f+$off"
echo "bench: $f+$hexoff: $insn; N = $n getpid calls per run, R = $rounds rounds"

REGS="ax=%ax bx=%bx cx=%cx dx=%dx si=%si di=%di bp=%bp sp=%sp r8=%r8 r9=%r9 r10=%r10 r11=%r11 r12=%r12 r13=%r13 r14=%r14 r15=%r15 ip=%ip flags=%flags cs=%cs ss=%ss"
MEM="m0=+0(%sp):x64 m1=+8(%sp):x64 m2=+16(%sp):x64 m3=+24(%sp):x64 m4=+32(%sp):x64 m5=+40(%sp):x64 m6=+48(%sp):x64 m7=+56(%sp):x64"

# The loop: sets LOOP_T (ns the calls took, measured by syscall_loop itself).
loop() {
	kt_loop_ns getpid "$1"
	LOOP_T=$KT_LOOP_NS
}

# --- kinst -----------------------------------------------------------------

# kinst_trace CALLS OUT ARGS...: the loop under kinstctl trace ARGS SPEC;
# sets LOOP_T, HITS, DROPS, DELIV.
kinst_trace() {
	_calls=$1 _out=$2
	shift 2
	kt_trace_start "$_out" /tmp/k.err "$@" "$spec"
	jump_wait "$*"
	loop "$_calls"
	kt_trace_stop || err "kinstctl trace $* failed: $(cat /tmp/k.err)"
	set -- $(grep -E '^kinstctl: [0-9]+ hits' /tmp/k.err | head -n 1 | tr -c '0-9\n' ' ')
	[ $# -ge 3 ] || err "no summary from kinstctl trace: $(cat /tmp/k.err)"
	HITS=$1 DELIV=$2 DROPS=$3
}

# kinst_agg CALLS OUT ARGS...: the loop under kinstctl ARGS SPEC (count,
# hist); sets LOOP_T, HITS, DROPS (overflowed + nested), DELIV (aggregated).
# agg_start OUT ERR ARGS...: kinstctl ARGS SPEC (count, hist) in the
# background until it says it is counting; $AGG_PID.
agg_start() {
	_ao=$1 _ae=$2
	shift 2
	: >"$_ae"	# not the last case's 'counting' line (see kt_trace_start)
	kinstctl "$@" "$spec" >"$_ao" 2>"$_ae" &
	AGG_PID=$!
	_i=0
	while ! grep -q '^kinstctl: counting ' "$_ae" 2>/dev/null; do
		kill -0 "$AGG_PID" 2>/dev/null || err "kinstctl $* exited: $(cat "$_ae")"
		_i=$((_i + 1))
		[ $_i -lt 600 ] || err "kinstctl $* did not start in 60 s: $(cat "$_ae")"
		sleep 0.1
	done
}

kinst_agg() {
	_calls=$1 _out=$2
	shift 2
	agg_start "$_out" /tmp/a.err "$@"
	_p=$AGG_PID
	jump_wait "$*"
	loop "$_calls"
	kill -INT "$_p"
	kt_wait_pid "$_p" 90 "kinstctl $* after SIGINT" "$_out" /tmp/a.err ||
	    err "kinstctl $* failed: $(cat /tmp/a.err)"
	set -- $(grep -E '^kinstctl: [0-9]+ hits, [0-9]+ aggregated' /tmp/a.err | tr -c '0-9\n' ' ')
	[ $# -ge 6 ] || err "no summary from kinstctl $*: $(cat /tmp/a.err)"
	HITS=$1 DELIV=$2 DROPS=$(($5 + $6))
}

# jump_wait ARGS: unless ARGS has --no-optimize, wait (3 s at most) until
# the module has installed the probe's jump (issue 13), so the loop times
# one kind of probe; sets KJ_STATE (jump or int3).
KJ=/sys/kernel/debug/kinst/jump
jump_wait() {
	KJ_STATE=int3
	case " $1 " in *" --no-optimize "*) return 0 ;; esac
	[ -r "$KJ" ] || return 0
	_j=0
	while [ "$(sed -n 's/^installed //p' "$KJ")" = 0 ]; do
		_j=$((_j + 1))
		[ $_j -lt 30 ] || return 0
		sleep 0.1
	done
	KJ_STATE=jump
}

# kinst_aggm M CALLS OUT ARGS...: kinst_agg with M sessions of kinstctl ARGS
# on the same instruction at once (issue 25: one site, M subscribers); sets
# what kinst_agg sets, from the first session (each must see every hit).
kinst_aggm() {
	_m=$1 _mcalls=$2 _mout=$3
	shift 3
	_pids=
	_j=2
	while [ $_j -le "$_m" ]; do
		agg_start /dev/null /tmp/a$_j.err "$@"
		_pids="$_pids $AGG_PID"
		_j=$((_j + 1))
	done
	kinst_agg "$_mcalls" "$_mout" "$@"
	for _p in $_pids; do kill -INT "$_p"; done
	_j=2
	for _p in $_pids; do
		kt_wait_pid "$_p" 90 "kinstctl $* (session $_j) after SIGINT" /tmp/a$_j.err ||
		    err "kinstctl $* (session $_j) failed: $(cat /tmp/a$_j.err)"
		grep -q "^kinstctl: 1 of 1 probe shared with other kinstctl sessions (up to $_m " /tmp/a$_j.err ||
		    echo "WARNING: session $_j of $_m does not say its probe was shared by $_m: $(grep shared /tmp/a$_j.err)"
		_h=$(sed -n 's/^kinstctl: \([0-9]*\) hits, .*/\1/p' /tmp/a$_j.err)
		[ "${_h:-0}" -ge "$HITS" ] || echo "WARNING: session $_j of $_m: ${_h:-no} hits, the first session $HITS"
		_j=$((_j + 1))
	done
}

# --- kprobe peers ----------------------------------------------------------

# kp_line: our kprobe's line in debugfs kprobes/list, found by address
# (it names the function by kallsyms' first name for it); empty: none.
kp_line() {
	grep -i "^0*$addr " "$KPLIST" 2>/dev/null | head -n 1
}

# kp_gone: wait until our kprobe is gone (kinst refuses a function holding
# one, and an optimized kprobe is freed asynchronously).
kp_gone() {
	_i=0
	while [ -n "$(kp_line)" ]; do
		_i=$((_i + 1))
		[ $_i -lt 300 ] || err "the kprobe at $f+$hexoff is still listed 30 s after its removal: $(kp_line)"
		sleep 0.1
	done
}

# kp_armed OPT WHAT: the kprobe at the address is armed (WHAT, for the
# error): with OPT 1, wait until it is optimized -- an optimizable kprobe is
# optimized a few jiffies after it is armed (plus an RCU-tasks grace period)
# -- so the loop times one kind of probe; sets KP_STATE (its kprobes/list
# line).
kp_armed() {
	if [ "$1" = 1 ] && [ "$KP_OPTIMIZABLE" = 1 ]; then
		_i=0
		while ! kp_line | grep -q OPTIMIZED; do
			_i=$((_i + 1))
			[ $_i -lt 100 ] || break
			sleep 0.1
		done
	fi
	KP_STATE=$(kp_line)
	[ -n "$KP_STATE" ] || err "$2 but $KPLIST does not list $f+$hexoff"
}

# kp_case CALLS OPT KIND READER: the loop under the kprobe event of KIND
# (regs, filter, stack, mem) with kprobes-optimization OPT (1 or 0); READER
# 1: `cat trace_pipe >/dev/null` runs during the loop, 0: the buffer is kept
# (the warm-up checks it).  Sets LOOP_T, HITS (kprobe_profile's), DROPS
# (missed + ring overruns), KP_STATE (the kprobes/list line while armed).
kp_case() {
	_calls=$1 _opt=$2 _kind=$3 _reader=$4
	[ "$_opt" = 1 ] || echo 0 >"$KPOPT" || err "cannot set $KPOPT to 0"
	_args=$REGS
	[ "$_kind" != mem ] || _args="$REGS $MEM"
	echo "p:$G/$EV $f+$off $_args" >>"$T/kprobe_events" ||
	    err "cannot add the kprobe event (error_log: $(tail -n 3 "$T/error_log" 2>/dev/null))"
	_ev=$T/events/$G/$EV
	echo 0 >"$T/tracing_on"
	: >"$T/trace"
	case $_kind in
	filter) echo 'di == 1515870810' >"$_ev/filter" || err "cannot set the filter" ;;
	stack) echo stacktrace >"$_ev/trigger" || err "cannot set the stacktrace trigger" ;;
	esac
	echo 1 >"$_ev/enable" || err "cannot enable the kprobe event"
	echo 1 >"$T/tracing_on"
	kp_armed "$_opt" "the kprobe event is enabled"
	_rp=
	if [ "$_reader" = 1 ]; then
		cat "$T/trace_pipe" >/dev/null &
		_rp=$!
	fi
	loop "$_calls"
	echo 0 >"$T/tracing_on"
	if [ -n "$_rp" ]; then
		kill "$_rp"
		wait "$_rp" 2>/dev/null
	fi
	echo 0 >"$_ev/enable"
	# Removing the event clears the buffer: keep it for the warm-up checks.
	[ -n "$_rp" ] || cp "$T/trace" /tmp/w.trace
	set -- $(awk -v e="$EV" '$1 == e || $1 == "'"$G"'/" e { print $2, $3 }' "$T/kprobe_profile")
	[ $# -eq 2 ] || err "no line for $EV in kprobe_profile: $(cat "$T/kprobe_profile")"
	HITS=$1 DROPS=$2
	DROPS=$((DROPS + $(cat "$T"/per_cpu/cpu*/stats | awk '/^overrun:/ { o += $2 } END { print o + 0 }')))
	case $_kind in
	filter) echo 0 >"$_ev/filter" ;;
	stack) echo '!stacktrace' >"$_ev/trigger" ;;
	esac
	echo "-:$G/$EV" >>"$T/kprobe_events" || err "cannot remove the kprobe event"
	[ "$_opt" = 1 ] || echo 1 >"$KPOPT"
	kp_gone
}

# kp_hist CALLS OPT M: the loop under M kprobe events on the same address,
# each counting in the kernel (a `hist:keys=common_pid` trigger: the peer of
# kinst count), kprobes-optimization OPT.  Sets LOOP_T, HITS (the first
# event's, kprobe_profile), DROPS (missed), KP_STATE.
kp_hist() {
	_calls=$1 _opt=$2 _m=$3
	[ "$_opt" = 1 ] || echo 0 >"$KPOPT" || err "cannot set $KPOPT to 0"
	echo 0 >"$T/tracing_on"
	: >"$T/trace"
	_j=1
	while [ $_j -le "$_m" ]; do
		echo "p:$G/$EV$_j $f+$off" >>"$T/kprobe_events" ||
		    err "cannot add kprobe event $_j (error_log: $(tail -n 3 "$T/error_log" 2>/dev/null))"
		echo 'hist:keys=common_pid' >"$T/events/$G/$EV$_j/trigger" ||
		    err "cannot set the hist trigger (CONFIG_HIST_TRIGGERS?)"
		echo 1 >"$T/events/$G/$EV$_j/enable" || err "cannot enable kprobe event $_j"
		_j=$((_j + 1))
	done
	echo 1 >"$T/tracing_on"
	kp_armed "$_opt" "the kprobe events are enabled"
	loop "$_calls"
	echo 0 >"$T/tracing_on"
	cp "$T/events/$G/${EV}1/hist" /tmp/w.hist
	set -- $(awk -v e="${EV}1" '$1 == e || $1 == "'"$G"'/" e { print $2, $3 }' "$T/kprobe_profile")
	[ $# -eq 2 ] || err "no line for ${EV}1 in kprobe_profile: $(cat "$T/kprobe_profile")"
	HITS=$1 DROPS=$2
	_j=1
	while [ $_j -le "$_m" ]; do
		echo 0 >"$T/events/$G/$EV$_j/enable"
		echo '!hist:keys=common_pid' >"$T/events/$G/$EV$_j/trigger"
		echo "-:$G/$EV$_j" >>"$T/kprobe_events" || err "cannot remove kprobe event $_j"
		_j=$((_j + 1))
	done
	[ "$_opt" = 1 ] || echo 1 >"$KPOPT"
	kp_gone
}

# --- the cases ------------------------------------------------------------

# run_case NAME CALLS OUT: one run of case NAME (OUT: where kinstctl's
# output goes; the kprobe cases keep their buffer unread unless OUT is
# /dev/null).  Sets LOOP_T, HITS, DROPS.
run_case() {
	_rd=1
	[ "$3" = /dev/null ] || _rd=0
	case $1 in
	none) loop "$2"; HITS=$2 DROPS=0 ;;
	bare) kinst_trace "$2" "$3" --json ;;
	bare_noopt) kinst_trace "$2" "$3" --json --no-optimize ;;
	count_noopt) kinst_agg "$2" "$3" count --no-optimize ;;
	iffalse) kinst_trace "$2" "$3" --json --if 'rdi == 0x5a5a5a5a' ;;
	ifload) kinst_trace "$2" "$3" --json --if '*(u64)rsp == 0x5a5a5a5a && rdi == 1' ;;
	stack) kinst_trace "$2" "$3" --stack --json ;;
	mem) kinst_trace "$2" "$3" --mem rsp:64 --json ;;
	count) kinst_agg "$2" "$3" count ;;
	count2) kinst_aggm 2 "$2" "$3" count ;;
	count4) kinst_aggm 4 "$2" "$3" count ;;
	count2_noopt) kinst_aggm 2 "$2" "$3" count --no-optimize ;;
	count4_noopt) kinst_aggm 4 "$2" "$3" count --no-optimize ;;
	kp_hist) kp_hist "$2" 1 1 ;;
	kp_hist2) kp_hist "$2" 1 2 ;;
	kp_hist4) kp_hist "$2" 1 4 ;;
	kp_hist_noopt) kp_hist "$2" 0 1 ;;
	kp_hist2_noopt) kp_hist "$2" 0 2 ;;
	kp_hist4_noopt) kp_hist "$2" 0 4 ;;
	bycomm) kinst_agg "$2" "$3" count --by comm ;;
	hist) kinst_agg "$2" "$3" hist --value rdi ;;
	kp_regs) kp_case "$2" 1 regs $_rd ;;
	kp_filter) kp_case "$2" 1 filter $_rd ;;
	kp_stack) kp_case "$2" 1 stack $_rd ;;
	kp_mem) kp_case "$2" 1 mem $_rd ;;
	kp_regs_noopt) kp_case "$2" 0 regs $_rd ;;
	kp_filter_noopt) kp_case "$2" 0 filter $_rd ;;
	kp_stack_noopt) kp_case "$2" 0 stack $_rd ;;
	kp_mem_noopt) kp_case "$2" 0 mem $_rd ;;
	*) err "unknown case $1" ;;
	esac
}

# --- setup ----------------------------------------------------------------

# Watchdog: when no case has ended for 180 s, the blocked tasks and every
# CPU's backtrace go to the kernel console (kt_dump_blocked), so a stuck
# guest says where; never kills anything.
progress() {
	cut -d. -f1 /proc/uptime >/tmp/bench.progress
}
progress
(
	while sleep 10; do
		_now=$(cut -d. -f1 /proc/uptime)
		read -r _last </tmp/bench.progress
		if [ $((_now - _last)) -ge 180 ]; then
			kt_dump_blocked "guest_actions_rate: no case ended for 180 s"
			echo "$_now" >/tmp/bench.progress
		fi
	done
) &
watchdog=$!
trap 'kill $watchdog 2>/dev/null' EXIT

[ -r "$KPLIST" ] || err "$KPLIST is not readable (debugfs not mounted?)"
[ -w "$T/kprobe_events" ] || err "no kprobe_events in $T (tracefs not mounted?)"
echo 0 >"$T/tracing_on"
echo nop >"$T/current_tracer"
echo 4096 >"$T/buffer_size_kb" || err "cannot size the trace buffer"
grep -q "$G/" "$T/kprobe_events" && echo "-:$G/$EV" >>"$T/kprobe_events"
KP_OPTIMIZABLE=0
if [ -w "$KPOPT" ]; then
	echo 1 >"$KPOPT"
	KP_OPTIMIZABLE=1
else
	echo "bench: no $KPOPT (kernel without CONFIG_OPTPROBES): kprobes are int3s"
fi

cases="none bare iffalse ifload stack"
if kinstctl trace --help 2>&1 | grep -q -- '--mem'; then
	# The option's syntax is issue 11's (--mem EXPR:LEN); if this
	# kinstctl refuses it, say so and go on without the case.
	if _e=$(kinstctl trace --json --duration 1 --mem rsp:64 "$spec" 2>&1 >/dev/null); then
		cases="$cases mem"
		have_mem=1
	else
		echo "capture: kinstctl trace --mem rsp:64 failed: $(echo "$_e" | tail -n 1)"
		have_mem=2
	fi
else
	echo "capture: not supported by this kinstctl"
	have_mem=0
fi
cases="$cases count bycomm hist kp_regs kp_filter kp_stack"
[ "$have_mem" != 1 ] || cases="$cases kp_mem"
if [ -n "${BENCH_CASES:-}" ]; then
	cases=$BENCH_CASES
	case " $cases " in *" none "*) ;; *) cases="none $cases" ;; esac
	echo "bench: cases $cases (argument 4)"
fi

# --- warm-up round: small N, every case's output checked --------------------

wn=200
[ "$n" -ge "$wn" ] || wn=$n
echo "bench: warm-up round ($wn calls per case), checking what each case records"
# check NAME: that the last run recorded what it claims (OUT = /tmp/w.out).
check() {
	[ "$HITS" -gt 0 ] || err "$1: 0 hits for $wn calls: the probe measured nothing"
	case $1 in
	bare|bare_noopt)
		_c=$(jq -c 'select(.regs.rip != null and .regs.rflags != null)' /tmp/w.out | grep -c .)
		_w="$_c records with registers" ;;
	iffalse|ifload)
		_c=$(grep -c . /tmp/w.out)
		[ "$_c" = 0 ] || err "$1: $_c records delivered (the predicate should be false)"
		_c=$(sed -n 's/.* \([0-9]*\) not matching --if.*/\1/p' /tmp/k.err)
		_w="${_c:-0} hits not matching --if" ;;
	stack)
		_c=$(jq -c 'select((.stack | length) > 1)' /tmp/w.out | grep -c .)
		_w="$_c records with a stack of 2+ frames: $(head -n 1 /tmp/w.out | jq -r '[.stack[].function] | join(" <- ")')" ;;
	mem)
		_c=$(jq -c 'select(.mem != null)' /tmp/w.out | grep -c .)
		_w="$_c records with a capture: $(head -n 1 /tmp/w.out | jq -c '.mem')" ;;
	count|count_noopt|count[24]|count[24]_noopt|bycomm|hist)
		_c=$HITS
		_w="$DELIV hits aggregated: $(sed 's/  */ /g' /tmp/w.out | tr '\n' '|')" ;;
	kp_hist*)
		_c=$(awk '/^ *Hits: / { print $2 }' /tmp/w.hist)
		_w="${_c:-0} hits in the first event's hist: $(grep -m 1 common_pid /tmp/w.hist)" ;;
	kp_filter*)
		_c=$(grep -c "$EV:" /tmp/w.trace)
		[ "$_c" = 0 ] || err "$1: $_c events recorded (the filter should be false)"
		_c=$HITS
		_w="$HITS kprobe hits, 0 events recorded" ;;
	kp_stack*)
		_c=$(grep -c '<stack trace>' /tmp/w.trace)
		_w="$_c stack traces; $(grep -c "$EV:.* flags=" /tmp/w.trace) events with registers" ;;
	kp_mem*)
		_c=$(grep -c "$EV:.* m7=" /tmp/w.trace)
		_w="$_c events with 8 x64 at %sp" ;;
	kp_regs*)
		_c=$(grep -c "$EV:.* r15=.* flags=.* ss=" /tmp/w.trace)
		_w="$_c events with registers" ;;
	none)
		return 0 ;;
	esac
	[ "$_c" -gt 0 ] || err "$1: nothing recorded in the warm-up ($_w)"
	echo "check: $1: $HITS hits; $_w"
	case $1 in bare|count|bare_noopt|count_noopt|count[24]*) echo "check: $1: kinst probe: $KJ_STATE" ;; esac
	case $1 in kp_*) echo "check: $1: $KP_STATE" ;; esac
}
for c in $cases; do
	echo "kinst-bench: warm-up: $c" >/dev/kmsg 2>/dev/null
	run_case "$c" "$wn" /tmp/w.out
	progress
	check "$c"
	case $c in
	kp_regs)
		if echo "$KP_STATE" | grep -q OPTIMIZED; then
			echo "bench: the kprobe at $f+$hexoff is [OPTIMIZED] (a jump, no int3): the kp_* cases also run with $KPOPT = 0 (kp_*_noopt)"
			noopt=
			for _k in kp_regs kp_filter kp_stack kp_mem kp_hist kp_hist2 kp_hist4; do
				case " $cases " in *" $_k "*) noopt="$noopt ${_k}_noopt" ;; esac
			done
		else
			echo "bench: the kprobe at $f+$hexoff is not optimized (an int3, like kinst)"
			KP_OPTIMIZABLE=0
			noopt=
		fi
		;;
	esac
done
JUMP_SEEN=
case " $cases " in *" bare "*) run_case bare "$wn" /tmp/w.out; [ "$KJ_STATE" != jump ] || JUMP_SEEN=1 ;; esac
for c in $noopt; do
	run_case "$c" "$wn" /tmp/w.out
	progress
	check "$c"
done
cases="$cases $noopt"
: >"$T/trace"

# --- the rounds -----------------------------------------------------------

set -- $cases
ncases=$#
: >"$RES"
runs=0 extra_runs=0 extra_max=0
r=1
while [ "$r" -le "$rounds" ]; do
	# Rotate: round r starts at case (r - 1) mod ncases.
	order=$(echo "$cases" | awk -v s=$(( (r - 1) % ncases )) '{
		for (i = 0; i < NF; i++) printf "%s ", $((i + s) % NF + 1) }')
	line="round $r:"
	for c in $order; do
		# Progress on the kernel console (timestamped): a run that
		# stops says where.
		echo "kinst-bench: round $r: $c" >/dev/kmsg 2>/dev/null
		run_case "$c" "$n" /dev/null
		progress
		[ "$HITS" -gt 0 ] || err "round $r, $c: 0 hits for $n calls: the probe measured nothing"
		# Hits of other processes' getpid calls while the probe is
		# armed (the script's shell, say) come on top: a few are
		# tallied, fewer hits than calls or 1% more is a WARNING.
		if [ "$HITS" -lt "$n" ] || [ "$HITS" -gt $((n + n / 100)) ]; then
			echo "WARNING: round $r, $c: $HITS hits for $n calls"
		elif [ "$HITS" != "$n" ]; then
			extra_runs=$((extra_runs + 1))
			extra_max=$(( HITS - n > extra_max ? HITS - n : extra_max ))
		fi
		runs=$((runs + 1))
		echo "$r $c $LOOP_T $HITS $DROPS" >>"$RES"
		case $c in
		kp_*) if [ "${c%_noopt}" = "$c" ] && [ "$KP_OPTIMIZABLE" = 1 ] &&
		    ! echo "$KP_STATE" | grep -q OPTIMIZED; then
			echo "WARNING: round $r, $c: the kprobe was not optimized during the loop: $KP_STATE"
		fi ;;
		esac
		case $c in bare|count|count2|count4|iffalse|ifload|stack|mem|bycomm|hist)
			[ "$KJ_STATE" = jump ] || [ -z "$JUMP_SEEN" ] ||
			    echo "WARNING: round $r, $c: the kinst probe was not jump-optimized during the loop" ;;
		esac
		line="$line $c=$((LOOP_T / n))"
	done
	echo "bench: $line (ns/call)"
	r=$((r + 1))
done

echo "bench: hits = calls in $((runs - extra_runs)) of $runs runs; $extra_runs runs had 1 to $extra_max hits more (getpid calls of other processes while armed; the warm-up's count --by comm rows name them)"

if command -v kinst_devtest >/dev/null; then
	kinst_devtest bench "$n"
fi

# --- the table ------------------------------------------------------------

awk -v n="$n" -v rounds="$rounds" -v cases="$cases" -v mem="$have_mem" '
function median(a, k,    i, j, t) {
	for (i = 2; i <= k; i++) {
		t = a[i]
		for (j = i - 1; j >= 1 && a[j] > t; j--)
			a[j + 1] = a[j]
		a[j + 1] = t
	}
	if (k == 0)
		return "-"
	return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
# med_case(c): median ns/hit of case c over the rounds
function med_case(c,    r, k, a) {
	k = 0
	for (r = 1; r <= rounds; r++)
		if (((r SUBSEP c) in t) && hits[r, c] > 0)
			a[++k] = (t[r, c] - t[r, "none"]) / hits[r, c]
	return median(a, k)
}
# med_ratio(c, p): median over rounds of ns/hit(c) / ns/hit(p)
function med_ratio(c, p,    r, k, a, x, y) {
	k = 0
	for (r = 1; r <= rounds; r++) {
		if (!((r SUBSEP c) in t) || !((r SUBSEP p) in t))
			continue
		x = (t[r, c] - t[r, "none"]) / hits[r, c]
		y = (t[r, p] - t[r, "none"]) / hits[r, p]
		if (y > 0)
			a[++k] = x / y
	}
	return median(a, k)
}
function fmt(x) { return x == "-" ? "-" : sprintf("%.0f", x) }
function fmtr(x) { return x == "-" ? "-" : sprintf("%.2f", x) }
# goal(text, c, p, strict): a goal line; met when the ratio is < 1
# (strict) or <= 1
function goal(text, c, p, strict,    x) {
	if (!(c in seen) || !(p in seen))
		return
	x = med_ratio(c, p)
	printf "goal: %s: median ratio %s (%s / %s): %s\n", text, fmtr(x), c, p,
	    x == "-" ? "no figure" : ((strict ? (x < 1) : (x <= 1)) ? "met" : "not met")
}
# med_more(c2, c1): median over rounds of (ns/hit(c2) - ns/hit(c1)) /
# ns/hit(c1): what the subscribers of c2 add, per hit, relative to c1
function med_more(c2, c1,    r, k, a, x, y) {
	k = 0
	for (r = 1; r <= rounds; r++) {
		if (!((r SUBSEP c2) in t) || !((r SUBSEP c1) in t))
			continue
		x = (t[r, c2] - t[r, "none"]) / hits[r, c2]
		y = (t[r, c1] - t[r, "none"]) / hits[r, c1]
		if (y > 0)
			a[++k] = (x - y) / y
	}
	return median(a, k)
}
# goal_more(text, c2, c1, m): met when the m - 1 more subscribers of c2 cost
# less than m - 1 times the first (the ratio above < m - 1)
function goal_more(text, c2, c1, m,    x) {
	if (!(c2 in seen) || !(c1 in seen))
		return
	x = med_more(c2, c1)
	printf "goal: %s: median (%s - %s) / %s = %s: %s\n", text, c2, c1, c1, fmtr(x),
	    x == "-" ? "no figure" : (x < m - 1 ? "met" : "not met")
}
# goal5(text, c, p): met when the ratio is <= 0.2
function goal5(text, c, p,    x) {
	if (!(c in seen) || !(p in seen))
		return
	x = med_ratio(c, p)
	printf "goal: %s: median ratio %s (%s / %s): %s\n", text, fmtr(x), c, p,
	    x == "-" ? "no figure" : (x <= 0.2 ? "met" : "not met")
}
{
	t[$1, $2] = $3; hits[$1, $2] = $4; drops[$2] += $5; sumh[$2] += $4
	seen[$2] = 1
}
END {
	label["none"] = "no probe (ns/call)"
	label["bare"] = "kinst bare record"
	label["bare_noopt"] = "kinst bare record, --no-optimize"
	label["count_noopt"] = "kinst count, --no-optimize"
	label["iffalse"] = "kinst --if false"
	label["ifload"] = "kinst --if false, with a load"
	label["stack"] = "kinst --stack"
	label["mem"] = "kinst --mem rsp:64"
	label["count"] = "kinst count"
	label["bycomm"] = "kinst count --by comm"
	label["hist"] = "kinst hist --value rdi"
	label["count2"] = "kinst count, 2 sessions"
	label["count4"] = "kinst count, 4 sessions"
	label["count2_noopt"] = "kinst count, 2 sessions, --no-optimize"
	label["count4_noopt"] = "kinst count, 4 sessions, --no-optimize"
	label["kp_hist"] = "kprobe hist trigger"
	label["kp_hist2"] = "kprobe hist trigger, 2 events"
	label["kp_hist4"] = "kprobe hist trigger, 4 events"
	peer["count2"] = "kp_hist2"; peer["count4"] = "kp_hist4"
	peer["count2_noopt"] = "kp_hist2"; peer["count4_noopt"] = "kp_hist4"
	label["kp_regs"] = "kprobe regs+flags"
	label["kp_filter"] = "kprobe regs, false filter"
	label["kp_stack"] = "kprobe regs + stacktrace"
	label["kp_mem"] = "kprobe regs + 64 B at sp"
	peer["bare"] = "kp_regs"; peer["iffalse"] = "kp_filter"; peer["ifload"] = "kp_filter"
	peer["stack"] = "kp_stack"; peer["mem"] = "kp_mem"
	peer["count"] = "bare"; peer["bycomm"] = "bare"; peer["hist"] = "bare"
	peer["bare_noopt"] = "kp_regs"; peer["count_noopt"] = "bare_noopt"
	if ("kp_hist" in seen) peer["count"] = "kp_hist"
	printf "\n%-36s %15s  %s\n", "case", "ns/hit(median)", "vs peer (median ratio)    [hits, dropped/missed over the rounds]"
	nc = split(cases, cl, " ")
	for (i = 1; i <= nc; i++) {
		c = cl[i]
		if (!(c in seen))
			continue
		l = (c in label) ? label[c] : label[substr(c, 1, length(c) - 6)] " [opt off]"
		if (c == "none") {
			k = 0
			for (r = 1; r <= rounds; r++)
				a[++k] = t[r, "none"] / n
			printf "%-36s %15s\n", l, fmt(median(a, k))
			continue
		}
		v = ""
		if ((c in peer) && (peer[c] in seen))
			v = fmtr(med_ratio(c, peer[c])) " vs " label[peer[c]]
		if ((c in peer) && ((peer[c] "_noopt") in seen))
			v = v "; " fmtr(med_ratio(c, peer[c] "_noopt")) " vs " label[peer[c]] " [opt off]"
		if (c == "iffalse" || c == "ifload")
			v = v "; " fmtr(med_ratio(c, "bare")) " vs " label["bare"]
		printf "%-36s %15s  %s  [%d, %d]\n", l, fmt(med_case(c)), v, sumh[c], drops[c]
	}
	for (i = 1; i <= nc; i++) {
		c = cl[i]
		if ((c == "bare" || c == "stack" || c == "mem") && drops[c] > 0)
			printf "WARNING: %s dropped %d of %d hits (the reader fell behind; raise RING): its ns/hit mixes recorded and dropped hits\n", label[c], drops[c], sumh[c]
	}
	if (mem == 0)
		print "capture: not supported by this kinstctl"
	else if (mem == 2)
		print "capture: kinstctl trace --mem rsp:64 failed (above): no figure"
	print ""
	goal("count mode costs less than a bare record", "count", "bare", 1)
	goal("a false predicate costs less than a bare record", "iffalse", "bare", 1)
	goal("--stack costs no more than a kprobe with stacktrace", "stack", "kp_stack", 0)
	goal("--stack costs no more than a kprobe with stacktrace, optimization off", "stack", "kp_stack_noopt", 0)
	goal("kinst record (jump) costs no more than the kprobe recording the same (optimized if it can be)", "bare", "kp_regs", 0)
	goal5("kinst record: the jump at least 5x cheaper than the int3 (--no-optimize)", "bare", "bare_noopt")
	goal5("kinst count: the jump at least 5x cheaper than the int3 (--no-optimize)", "count", "count_noopt")
	goal_more("kinst: the second session on an instruction costs less than the first", "count2", "count", 2)
	goal_more("kinst: 4 sessions cost less than 4 x the first", "count4", "count", 4)
	goal_more("kinst --no-optimize: the second session costs less than the first", "count2_noopt", "count_noopt", 2)
	goal_more("kprobes (informational): the second event costs less than the first", "kp_hist2", "kp_hist", 2)
	goal_more("kprobes (informational): 4 events cost less than 4 x the first", "kp_hist4", "kp_hist", 4)
	print "(goals are informational: timing under TCG; ratios are medians of per-round ratios)"
}' "$RES"
exit 0
