#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: kinstctl traces what a CPU runs on its way offline before its death report (cpuhp_report_idle_dead, idle_task_exit, rcu_report_dead, ...; the dead loop after it is refused) while cpu1 goes offline and online three times; after SIGINT it exits within 30 s, counts balance, every offline is seen; a second session is closed while cpu1 is still offline
# scenario-needs: kinst
# scenario-timeout: 240
#
# Issue 8, item 3.  A hit on a CPU after its last irq_work flush
# (smpcfd_dying_cpu) used to queue kinst's reader wake-up on that CPU,
# where nothing runs it: kinstctl's close then spun forever in
# irq_work_sync() (soft lockup).  Now a CPU that is not online queues no
# wake-up (kmod/linux/kinst_linux_trap.c, kinst_os_wake_deferred) and readers
# still get those records.  The harness checks the kernel log (no soft
# lockup, RCU stall, BUG, WARNING).
. /kinst/lib/guest-lib.sh
kt_need_kinst

CPU=/sys/devices/system/cpu/cpu1/online
NOFF=3
[ -w "$CPU" ] || kt_skip "no cpu1 to take offline ($CPU): the guest needs 2 CPUs"
[ "$(cat "$CPU")" = 1 ] || kt_fail "cpu1 is not online at the start"

# Functions the dying CPU runs after its last irq_work flush (the
# offline idle path), traced whole where kinst accepts them.
cand="cpuhp_report_idle_dead play_dead_common native_play_dead idle_task_exit cpu_report_death rcu_report_dead tboot_shutdown"
funcs=
for f in $cand; do
	n=$(kinstctl list-offsets --json "$f" 2>/dev/null |
	    jq -r 'select(.type == "summary") | .traceable')
	kt_log "$f: ${n:-no} traceable instructions"
	[ "${n:-0}" -gt 0 ] && funcs="$funcs $f"
done
case " $funcs " in
*" cpuhp_report_idle_dead "*) ;;
*)	kt_fail "cpuhp_report_idle_dead is not traceable (list-offsets); the scenario needs it" ;;
esac
# The first traced instruction of cpuhp_report_idle_dead runs once per
# offline (its only caller is the idle loop of a CPU that is offline).
first=$(kinstctl list-offsets --json cpuhp_report_idle_dead | jq -r 'select(.type == "insn" and
    (.verdict | startswith("refused") | not)) | .offset' | head -n 1)

# start_trace OUT ERR [OPTION...]: kinstctl trace --json of $funcs in the
# background (pid in $pid), once it says it is tracing.
start_trace() {
	_out=$1 _err=$2
	shift 2
	: >"$_err"
	kinstctl trace --json "$@" $funcs >"$_out" 2>"$_err" &
	pid=$!
	i=0
	while ! grep -q 'tracing [0-9]* probe' "$_err"; do
		i=$((i + 1))
		[ $i -le 120 ] || kt_fail "kinstctl did not start tracing: $(cat "$_err")"
		kill -0 "$pid" 2>/dev/null || kt_fail "kinstctl exited early: $(cat "$_err")"
		sleep 0.5
	done
}

# stop_trace WHY: SIGINT to $pid, which must exit within 30 s; its exit
# status in $st.
stop_trace() {
	kill -INT "$pid"
	i=0
	while kill -0 "$pid" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le 60 ] || kt_fail "kinstctl did not exit within 30 s of SIGINT$1"
		sleep 0.5
	done
	wait "$pid"
	st=$?
}

start_trace /tmp/hp.json /tmp/hp.err
kt_log "$(grep 'tracing' /tmp/hp.err)"

k=0
while [ $k -lt $NOFF ]; do
	echo 0 >"$CPU" || kt_fail "cannot take cpu1 offline"
	[ "$(cat "$CPU")" = 0 ] || kt_fail "cpu1 still online after echo 0"
	sleep 1
	echo 1 >"$CPU" || kt_fail "cannot bring cpu1 online again"
	sleep 1
	k=$((k + 1))
done
kt_log "cpu1 went offline and online $NOFF times"

# SIGINT: kinstctl disarms, drains, prints its summary and closes; the
# close must not wait for work that cpu1 had to do while it was down.
stop_trace " (stuck closing /dev/kinst?)"
cat /tmp/hp.err
[ "$st" = 0 ] || kt_fail "kinstctl exited $st"

set -- $(sed -n 's/^kinstctl: \([0-9]*\) hits, \([0-9]*\) delivered, \([0-9]*\) dropped, \([0-9]*\) printed.*/\1 \2 \3 \4/p' /tmp/hp.err)
[ $# = 4 ] || kt_fail "no summary line from kinstctl"
hits=$1 delivered=$2 dropped=$3 printed=$4
kt_expect_eq "hits = delivered + dropped" "$hits" $((delivered + dropped))
kt_expect_eq "printed = delivered (no filter)" "$delivered" "$printed"
kt_expect_eq "JSON hit lines = printed" "$printed" "$(jq -r 'select(.type == "hit") | .probe' /tmp/hp.json | wc -l)"
kt_expect_eq "hits at cpuhp_report_idle_dead+$first on cpu1 (one per offline)" $NOFF \
    "$(jq -r --argjson o "$first" 'select(.type == "hit" and .function == "cpuhp_report_idle_dead" and .offset == $o and .cpu == 1) | .cpu' /tmp/hp.json | wc -l)"
for f in $funcs; do
	kt_log "informational: hits in $f on cpu1: $(jq -r --arg f "$f" 'select(.type == "hit" and .function == $f and .cpu == 1) | .cpu' /tmp/hp.json | wc -l)"
done
[ "$(cat "$CPU")" = 1 ] || kt_fail "cpu1 is not online at the end"

# The same close with cpu1 still offline, in a new session.  Its rings are
# 16K, so the dying CPU's hundred-odd records pass the wake-up watermark
# (a quarter of a ring: kinstctl's mapped rings are woken only there, and
# the 8M rings above never got there); its reader has been waiting in
# poll(2) for a second, so a wake-up queued there (the bug) is certain,
# and with cpu1 down nothing ever runs it: the close would spin in
# irq_work_sync() on the one CPU left (soft lockup).
start_trace /tmp/hp2.json /tmp/hp2.err --buffer-size 16K
sleep 1
echo 0 >"$CPU" || kt_fail "cannot take cpu1 offline (second session)"
sleep 1
stop_trace " with cpu1 offline"
echo 1 >"$CPU" || kt_fail "cannot bring cpu1 online again (second session)"
[ "$st" = 0 ] || kt_fail "kinstctl (cpu1 offline at the close) exited $st: $(cat /tmp/hp2.err)"
kt_expect_eq "second session: hits at cpuhp_report_idle_dead+$first on cpu1" 1 \
    "$(jq -r --argjson o "$first" 'select(.type == "hit" and .function == "cpuhp_report_idle_dead" and .offset == $o and .cpu == 1) | .cpu' /tmp/hp2.json | wc -l)"
kt_log "second session: closed with cpu1 offline, $(jq -r 'select(.type == "hit") | .cpu' /tmp/hp2.json | wc -l) hits"
[ "$(cat "$CPU")" = 1 ] || kt_fail "cpu1 is not online at the end"
exit 0
