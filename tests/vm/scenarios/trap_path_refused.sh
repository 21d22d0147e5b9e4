#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: functions on kinst's own #BP path and on a secondary CPU's bring-up path are refused with the new reasons (list-offsets and trace); every other exclusion names its class (kprobe blacklist, text patching, breakpoint path, idle, entry code, debugger, kinst itself) in the reason and refusal_class; the kernel stays healthy; a CPU offline/online with whole allowed bring-up functions armed
# scenario-needs: kinst
# scenario-timeout: 400
#
# Issue 8, classes 1 and 2.  Before the fix, arming __rcu_read_lock or
# __rcu_read_unlock hung the guest at once, rcu_read_unlock_special
# panicked it under full preemption, and onlining a CPU with start_secondary
# armed triple-faulted it.  Every instruction of each member must be refused
# with the class's reason, by list-offsets (live, the module's check-only
# arm) and by trace (exit 12, the reason in its message).  Then the
# functions that start_secondary calls after rcu_cpu_starting and that the
# module accepts are armed whole while CPU 1 goes offline and online twice.
. /kinst/lib/guest-lib.sh
kt_need_kinst

# Full preemption makes rcu_read_unlock_special run (issue 8).
if [ -w /sys/kernel/debug/sched/preempt ]; then
	echo full >/sys/kernel/debug/sched/preempt
	kt_log "preempt: $(cat /sys/kernel/debug/sched/preempt)"
fi

trap_members="__rcu_read_lock __rcu_read_unlock rcu_read_unlock_special notify_die
    ktime_get_mono_fast_ns search_module_extables irq_work_queue
    kprobe_int3_handler fixup_exception"
bringup_members="start_secondary cr4_init cpu_init_exception_handling
    load_percpu_segment cpu_init rcu_cpu_starting secondary_startup_64"

# check_refused FUNC REASON
check_refused() {
	kinstctl list-offsets --json "$1" >/tmp/lo.json 2>/tmp/lo.err ||
	    kt_fail "kinstctl list-offsets $1 failed: $(cat /tmp/lo.err)"
	n=$(jq -r 'select(.type == "insn") | .offset' /tmp/lo.json | grep -c .)
	[ "$n" -gt 0 ] || kt_fail "$1: no instructions listed"
	# Nothing traceable; function-level refusals all say REASON (the
	# engine's own instruction reasons, int3 padding or ud2, come first).
	bad=$(jq -r --arg r "$2" 'select(.type == "insn" and
	    ((.verdict | startswith("refused") | not) or
	     ((.reason | startswith("excluded-function")) and .reason != $r))) |
	    "\(.offset) \(.verdict) \(.reason)"' /tmp/lo.json | head -n 3)
	[ -z "$bad" ] || kt_fail "$1: not every instruction refused as '$2': $bad"
	n=$(jq -r --arg r "$2" 'select(.type == "insn" and .reason == $r) | .offset' /tmp/lo.json | grep -c .)
	[ "$n" -gt 0 ] || kt_fail "$1: no instruction refused as '$2'"
	kinstctl trace -n 1 "$1" >/tmp/tr.out 2>/tmp/tr.err
	st=$?
	[ "$st" = 12 ] || kt_fail "kinstctl trace $1: exit $st, expected 12 (refused): $(cat /tmp/tr.err)"
	grep -qF "refused: $2" /tmp/tr.err ||
	    kt_fail "kinstctl trace $1: no 'refused: $2': $(cat /tmp/tr.err)"
	kt_log "$1: $n instructions refused: $2; trace refused it"
}

for f in $trap_members; do
	check_refused "$f" "excluded-function (trap path)"
done
for f in $bringup_members; do
	check_refused "$f" "excluded-function (cpu bring-up)"
done

# Issue 26, item 5: the other exclusions name their class too (which list
# or derivation, and why), in the reason and in refusal_class.
for fc in "nmi_cpu_backtrace:kprobe blacklist" "do_user_addr_fault:kprobe blacklist" \
    "text_poke:text patching" "do_int3:breakpoint path" \
    "default_idle:idle with interrupts off" "entry_SYSCALL_64:entry code" \
    "die:oops and debugger" "smp_call_function_single:text patching" \
    "kinst:kinst_engine_hit:kinst itself"; do
	f=${fc%:*} c=${fc##*:}
	check_refused "$f" "excluded-function ($c)"
	kt_expect_eq "$f: refusal_class of its excluded-function rows" "$c" \
	    "$(jq -r 'select(.type == "insn" and (.reason | startswith("excluded-function"))) | .refusal_class' /tmp/lo.json | sort -u)"
done
# Every refused row has a class; none is a bare excluded-function.
kinstctl list-offsets --json ksys_read vfs_read nmi_cpu_backtrace exc_int3 start_secondary >/tmp/lo.json ||
    kt_fail "list-offsets of a sample failed"
kt_expect_eq "refused rows without refusal_class" 0 \
    "$(jq -c 'select(.type == "insn" and (.verdict | startswith("refused")) and .refusal_class == null)' /tmp/lo.json | grep -c .)"
kt_expect_eq "rows refused as a bare excluded-function" 0 \
    "$(jq -c 'select(.type == "insn" and .reason == "excluded-function")' /tmp/lo.json | grep -c .)"
kt_expect_eq "refusal_class of int3 padding" instruction \
    "$(jq -r 'select(.type == "insn" and .reason == "int3") | .refusal_class' /tmp/lo.json | sort -u)"

# The kernel is healthy: a workload runs, syscalls are traceable.
kt_trace_start /tmp/h.out /tmp/h.err -n 5 ksys_read
i=0
while kill -0 $KT_TRACE_PID 2>/dev/null && [ $i -lt 100 ]; do cat /proc/version >/dev/null; i=$((i + 1)); done
kt_trace_stop || kt_fail "tracing ksys_read after the refusals failed: $(cat /tmp/h.err)"
kt_expect_eq "records from ksys_read" 5 "$(grep -c 'ksys_read' /tmp/h.out)"

# CPU hotplug with start_secondary's later callees armed whole.
cpu=/sys/devices/system/cpu/cpu1/online
[ -w $cpu ] || kt_skip "CPU 1 cannot be taken offline here"
allowed=""
for f in smp_callin notify_cpu_starting set_cpu_sibling_map check_tsc_sync_target \
    lapic_online speculative_store_bypass_ht_init smp_store_cpu_info \
    cpuhp_online_idle; do
	grep -q " [tT] $f$" /proc/kallsyms || continue
	n=$(kinstctl list-offsets --json "$f" 2>/dev/null | jq -r 'select(.type == "insn" and
	    (.verdict | startswith("refused") | not)) | .offset' | grep -c .)
	[ "$n" -gt 0 ] && allowed="$allowed $f"
done
[ -n "$allowed" ] || kt_fail "no allowed function among start_secondary's later callees"
kt_log "armed across hotplug:$allowed"
echo 0 >$cpu || kt_fail "offline CPU 1"
kt_trace_start /tmp/hp.json /tmp/hp.err --json $allowed
for r in 1 2; do
	echo 1 >$cpu || kt_fail "online CPU 1 (round $r)"
	kt_expect_eq "CPU 1 online (round $r)" 1 "$(cat $cpu)"
	sleep 1
	[ $r = 2 ] || echo 0 >$cpu || kt_fail "offline CPU 1 (round $r)"
done
kt_trace_stop
st=$?
cat /tmp/hp.err
[ "$st" = 0 ] || kt_fail "kinstctl trace exited $st: $(cat /tmp/hp.err)"
sum=$(grep -E '^kinstctl: [0-9]+ hits, [0-9]+ delivered, [0-9]+ dropped' /tmp/hp.err) ||
    kt_fail "no summary from kinstctl trace"
set -- $(echo "$sum" | tr -c '0-9\n' ' ')
[ "$1" = $(( $2 + $3 )) ] || kt_fail "hits $1 != delivered $2 + dropped $3"
on1=$(jq -r 'select(.cpu == 1) | .function' /tmp/hp.json | sort -u | tr '\n' ' ')
kt_log "hits $1; functions hit on the incoming CPU 1: $on1"
[ -n "$on1" ] || kt_fail "no hit on CPU 1 while it came online"
kt_expect_eq "CPUs online" "0-1" "$(cat /sys/devices/system/cpu/online)"
exit 0
