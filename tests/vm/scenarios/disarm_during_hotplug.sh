#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: probes on what a CPU runs on its way offline (before it reports its death) are armed and disarmed in 3 sessions while cpu1 goes offline and online in a loop; the dead CPU's loop (native_play_dead, play_dead_common, cpu_report_death, ...) is refused; every session balances, text restored, clean log
# scenario-needs: kinst
# scenario-timeout: 420
# scenario-options: -f "$KINST_BUILD/tests/kmod/kinst_devtest"
# scenario-args: 3
#
# Issue 8, reliability: on_each_cpu() (kinst's quiescence and text sync)
# does not reach a CPU that has left the online mask but still runs
# (take_cpu_down's dying callbacks, cpuhp_report_idle_dead, rcu_report_dead,
# idle_task_exit...).  The control path now holds cpus_read_lock() across
# arm and disarm, so no CPU is in that window while kinst writes text,
# waits for quiescence or frees a trampoline; what a CPU runs after
# cpu_report_death (no lock covers it) is refused as "cpu bring-up".
# Argument: SESSIONS.  While cpu1 goes offline and online in a loop, each
# kinstctl session arms the pre-death functions whole and is stopped with
# SIGINT after a short, varying time, so that arms and disarms fall on
# every phase of the hotplug loop.  The harness checks the kernel log.
. /kinst/lib/guest-lib.sh
kt_need_kinst
command -v kinst_devtest >/dev/null || kt_fail "kinst_devtest is not in the guest (-f)"

SESSIONS=${1:-4}
CPU=/sys/devices/system/cpu/cpu1/online
[ -w "$CPU" ] || kt_skip "no cpu1 to take offline ($CPU): the guest needs 2 CPUs"

# refused_dead FUNC: nothing traceable, and the function-level reason is
# cpu bring-up (instruction-level reasons such as int3 padding come first).
refused_dead() {
	kinstctl list-offsets --json "$1" >/tmp/lo.json 2>/tmp/lo.err ||
	    kt_fail "kinstctl list-offsets $1 failed: $(cat /tmp/lo.err)"
	bad=$(jq -r 'select(.type == "insn" and
	    ((.verdict | startswith("refused") | not) or
	     ((.reason | startswith("excluded-function")) and
	      .reason != "excluded-function (cpu bring-up)"))) |
	    "\(.offset) \(.verdict) \(.reason)"' /tmp/lo.json | head -n 3)
	[ -z "$bad" ] || kt_fail "$1: not refused as cpu bring-up: $bad"
	n=$(jq -r 'select(.type == "insn" and .reason == "excluded-function (cpu bring-up)") |
	    .offset' /tmp/lo.json | grep -c .)
	[ "$n" -gt 0 ] || kt_fail "$1: no instruction refused as cpu bring-up"
	kt_log "$1: $n instructions refused as cpu bring-up"
}

# What runs after the death report: refused, every instruction.
for f in native_play_dead play_dead_common cpu_report_death tboot_shutdown; do
	refused_dead "$f"
done
grep -q '^cpu-dead native_play_dead ' /sys/kernel/debug/kinst/excluded ||
    kt_fail "native_play_dead is not listed as cpu-dead in debugfs kinst/excluded"
kt_log "$(head -n 1 /sys/kernel/debug/kinst/excluded)"

# What runs before it (and after the online bit is cleared): armed.
funcs=
for f in cpuhp_report_idle_dead rcu_report_dead idle_task_exit \
    arch_cpu_idle_dead cpu_disable_common native_cpu_disable take_cpu_down \
    rcutree_dying_cpu smpcfd_dying_cpu; do
	n=$(kinstctl list-offsets --json "$f" 2>/dev/null |
	    jq -r 'select(.type == "summary") | .traceable')
	kt_log "$f: ${n:-no} traceable instructions"
	[ "${n:-0}" -gt 0 ] && funcs="$funcs $f"
done
for f in cpuhp_report_idle_dead rcu_report_dead idle_task_exit; do
	case " $funcs " in
	*" $f "*) ;;
	*)	kt_fail "$f (run before the death report) is not traceable" ;;
	esac
done
for f in $funcs; do
	kinst_devtest text "$f" >"/tmp/before.$f" 2>&1 || kt_fail "kinst_devtest text $f"
done

# The hotplug loop, in the background, until /tmp/hp.stop exists.
(
	k=0
	while [ ! -e /tmp/hp.stop ]; do
		echo 0 >"$CPU" || { echo "offline failed" >/tmp/hp.fail; break; }
		echo 1 >"$CPU" || { echo "online failed" >/tmp/hp.fail; break; }
		k=$((k + 1))
		echo $k >/tmp/hp.rounds
	done
) &
hp=$!

rounds() { cat /tmp/hp.rounds 2>/dev/null || echo 0; }
s=0 hits=0 hits1=0 probes=0 overlap=0
while [ $s -lt "$SESSIONS" ]; do
	s=$((s + 1))
	r0=$(rounds)
	kt_trace_start /tmp/t.out /tmp/t.err --json $funcs
	n=$(sed -n 's/^kinstctl: tracing \([0-9]*\) probe.*/\1/p' /tmp/t.err)
	# 0.1 .. 0.9 s armed: arm and disarm fall anywhere in the loop.
	sleep "0.$(( (s * 7) % 9 + 1 ))"
	kt_trace_stop
	st=$?
	r1=$(rounds)
	[ "$st" = 0 ] || kt_fail "session $s: kinstctl exited $st: $(tail -n 3 /tmp/t.err)"
	kt_trace_summary /tmp/t.err /tmp/t.out
	c1=$(jq -r 'select(.type == "hit" and .cpu == 1) | .cpu' /tmp/t.out | wc -l)
	hits=$((hits + KT_HITS)) hits1=$((hits1 + c1)) probes=$((probes + n))
	[ "$r1" != "$r0" ] && overlap=$((overlap + 1))
	kt_log "session $s: $n probes, $KT_HITS hits ($c1 on cpu1), hotplug rounds $r0..$r1 (informational)"
	# An int3 left behind by a disarm would make the next arm refuse it.
	[ $s = 1 ] && n1=$n
	kt_expect_eq "session $s: probes armed" "$n1" "$n"
done
: >/tmp/hp.stop
kt_wait_pid $hp 120 "the hotplug loop (round $(rounds))"
for f in $funcs; do
	kinst_devtest text "$f" >"/tmp/after.$f" 2>&1 || kt_fail "kinst_devtest text $f"
	cmp -s "/tmp/before.$f" "/tmp/after.$f" || kt_fail "$f text not restored after the sessions"
done
[ ! -e /tmp/hp.fail ] || kt_fail "hotplug loop: $(cat /tmp/hp.fail)"
kt_expect_eq "CPUs online at the end" "0-1" "$(cat /sys/devices/system/cpu/online)"
[ "$(rounds)" -gt 0 ] || kt_fail "no hotplug round completed during $SESSIONS sessions"
kt_log "informational: $SESSIONS sessions armed and disarmed ($probes probes in all), $overlap of them with a hotplug round between arm and disarm; $(rounds) hotplug rounds; $hits hits, $hits1 of them on cpu1"
exit 0
