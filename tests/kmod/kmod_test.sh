#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# kmod_run SCRIPT [run-in-guest options] [-- script arguments]
#
# kinst.ko in Debian's kernel under QEMU, driven through /dev/kinst by
# kinst_devtest (tests/kmod/kinst_devtest.c) and the scripts in
# tests/kmod/guest/.  run-in-guest fails a run whose kernel log shows BUG,
# WARNING, Oops, general protection or RCU stall lines.

KINST_DEFAULT_SRCDIR="@KINST_SRCDIR@"
KINST_DEFAULT_BUILDDIR="@KINST_BUILDDIR@"
KINST_DEFAULT_CACHE="@KINST_CACHE_DEFAULT@"
. "$KINST_DEFAULT_SRCDIR/tests/lib/vm.sh"

kmod_run() {
	vm_setup
	vm_require_guest
	[ -f "$top/kmod/linux/kinst.ko" ] ||
	    atf_skip "SKIPPED: kmod/linux/kinst.ko is not built (make -C kmod/linux): the module tests cannot run"
	devtest=$KINST_BUILD/tests/kmod/kinst_devtest
	[ -x "$devtest" ] || atf_fail "$devtest is missing"
	script=$1
	shift
	# run-in-guest options, then "--" and the script's arguments.
	opts=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts="$opts '$1'"
		shift
	done
	[ $# -gt 0 ] && shift
	eval "vm_run --require-module -f \"\$devtest\" $opts \
	    \"\$top/tests/kmod/guest/\$script\" \"\$@\""
	if [ "$vm_status" = 77 ]; then
		atf_skip "$(sed -n 's/^SKIP: //p' vm.out | head -n 1)"
	fi
	if [ "$vm_status" != 0 ]; then
		vm_show_logs
		atf_fail "guest script $script failed (exit $vm_status): $(grep -h '^FAIL' vm.out | head -n 3 | tr '\n' ' ')"
	fi
}

atf_test_case ioctl_fuzz
ioctl_fuzz_head() {
	atf_set descr "malformed ioctl structures (random and boundary), bad requests: errnos, no oops; rmmod refused while armed, the device working after it"
	atf_set timeout 400
}
ioctl_fuzz_body() {
	kmod_run fuzz.sh -t 300
	vm_expect_out '^fuzz: [0-9]+ iterations, 0 failures'
	vm_expect_out '^refuse: 0 failures'
	vm_expect_out '^unload refused while armed: '
	vm_expect_out '^unload: 0 failures'
}

atf_test_case prog_fuzz
prog_fuzz_head() {
	atf_set descr "probe programs: hostile PROG_LOAD arguments and random bytecode through the raw ioctl, user and faulting loads on getpid's probes: errnos, counts add up, no oops"
	atf_set timeout 400
}
prog_fuzz_body() {
	kmod_run progfuzz.sh -t 300
	vm_expect_out '^progfuzz: user load of a variable: [0-9]+ hits, all matched'
	vm_expect_out '^progfuzz: [0-9]+ programs, [0-9]+ accepted, [0-9]+ refused, 0 failures'
}

atf_test_case agg_fuzz
agg_fuzz_head() {
	atf_set descr "aggregation: hostile AGG_SETUP/READ/CLEAR/STATS/STACKS arguments and random structures, ARM_AGG misuse; getpid's probes counted in the kernel exactly, no record; getpid counted by stack (every entry names one stack starting at the probe): errnos, no oops"
	atf_set timeout 400
}
agg_fuzz_body() {
	kmod_run aggfuzz.sh -t 300
	vm_expect_out '^aggfuzz: 1000 getpid calls counted by stack'
	vm_expect_out '^aggfuzz: [0-9]+ probes x 1000 calls counted in the kernel, 0 failures'
}

atf_test_case arm_hit_read_disarm
arm_hit_read_disarm_head() {
	atf_set descr "arm getpid's second instruction, K calls give exactly K records of the caller, disarm restores; ksys_write records carry write(2)'s arguments, and memory captures at __x64_sys_write its pt_regs, the user buffer and a fault; all of __fput armed runs exactly once per close; per-thread state carries write(2)'s entry registers from one probe to the next, exactly, and counts them"
	atf_set timeout 400
}
arm_hit_read_disarm_body() {
	kmod_run cycle.sh -t 300
	vm_expect_out '^hits [0-9]+ delivered [0-9]+ dropped 0 ours 1000$'
	vm_expect_out '^cycle: 0 failures'
	vm_expect_out '^regs: ksys_write\+0x[0-9a-f]+: 500 records, 500 with fd/buf/len in rdi/rsi/rdx; 0 failures'
	vm_expect_out "^args: __x64_sys_write\\+0x[0-9a-f]+: 500 records, 500 with write\\(2\\)'s arguments captured from kernel memory, the user buffer, and a faulting capture flagged; 0 failures"
	vm_expect_out '^closecall: __fput: [0-9]+ probes, entry 100 times, [0-9]+ indirect calls through memory run [0-9]+ times; 0 failures'
	vm_expect_out '^tstate: __x64_sys_write\+0x[0-9a-f]+ -> \+0x[0-9a-f]+ \(rsp moved -?[0-9]+\): 500 calls, 500 activations read back exactly, wrong frame missed, TS_STATS exact; 0 failures'
}

atf_test_case kill9_restores_text
kill9_restores_text_head() {
	atf_set descr "whole busy functions armed, holders killed with SIGKILL under load: text restored, rmmod refused then clean"
	atf_set timeout 600
}
kill9_restores_text_body() {
	kmod_run kill9.sh -t 480
	vm_expect_out '^rmmod refused while armed'
	vm_expect_out '^rmmod ok'
}

atf_test_case module_function
module_function_head() {
	atf_set descr "module:function resolves in its module, probes hold the module, kill -9 restores and releases it"
	atf_set timeout 400
}
module_function_body() {
	vm_setup
	loop_ko=$(ls "$KINST_CACHE"/kernel/root/lib/modules/*/kernel/drivers/block/loop.ko 2>/dev/null | head -n 1)
	[ -n "$loop_ko" ] ||
	    atf_skip "SKIPPED: no loop.ko in Debian's kernel package under $KINST_CACHE/kernel: no module to probe"
	kmod_run modfunc.sh -t 300 -f "$loop_ko"
	vm_expect_out '^rmmod loop refused while probed'
	vm_expect_out '^loop text restored'
}

atf_test_case disarm_with_hits_in_flight
disarm_with_hits_in_flight_head() {
	atf_set descr "hot functions armed whole and disarmed (SIGKILL and close) repeatedly while both CPUs hit them: text restored, log clean"
	atf_set timeout 600
}
disarm_with_hits_in_flight_body() {
	kmod_run churn.sh -t 480 -- 6
	vm_expect_out '^churn: 6 rounds, text restored'
}

atf_test_case rearm_under_hits
rearm_under_hits_head() {
	atf_set descr "issue 15: whole hot functions armed and disarmed 60 times while three processes execute them: no removed int3 keeps trapping (livelock), text restored"
	atf_set timeout 600
}
rearm_under_hits_body() {
	kmod_run flip.sh -t 500 -- 60 __x64_sys_getpid ksys_read
	vm_expect_out '^flip __x64_sys_getpid: 60 rounds, [0-9]+ probes armed and disarmed; 0 failures$'
	vm_expect_out '^flip ksys_read: 60 rounds, [0-9]+ probes armed and disarmed; 0 failures$'
	vm_expect_out '^flip: 60 rounds of __x64_sys_getpid ksys_read, text restored$'
}

atf_test_case full_ring_drops
full_ring_drops_head() {
	atf_set descr "a full ring drops and counts: hits == delivered + dropped per CPU, read(2) returns the delivered records; mapped rings: hostile mappings refused, each session maps only its own, a consumer through the mapping under overflow takes exactly the delivered records, intact, and a garbage tail only drops"
	atf_set timeout 400
}
full_ring_drops_body() {
	kmod_run drops.sh -t 300
	vm_expect_out '^drops: .*; 0 failures'
	vm_expect_out '^mmap: hits [0-9]+ delivered [0-9]+ dropped [1-9][0-9]* taken'
	vm_expect_out '^mmap: 0 failures'
	vm_expect_out '^ring_size=1000 refused'
}

atf_test_case kprobe_coexistence
kprobe_coexistence_head() {
	atf_set descr "a function holding a kprobe is refused as a whole; a kprobe elsewhere does not disturb kinst"
	atf_set timeout 400
}
kprobe_coexistence_body() {
	kmod_run kprobe.sh -t 300
	vm_expect_out '^function with a kprobe refused'
	vm_expect_out '^entry kprobe first: function refused'
	vm_expect_out '^entry kprobe after kinst: accepted'
	vm_expect_out '^kprobe coexistence ok'
}

atf_test_case open_privilege
open_privilege_head() {
	atf_set descr "who may open /dev/kinst: uid 65534 refused by the node's mode (EACCES), uid 0 without CAP_SYS_ADMIN and CAP_PERFMON refused by the module (EPERM), either capability alone enough; a file opened by root keeps working (VERSION, ARM, records) after its opener dropped both capabilities, and after setuid(65534)"
	atf_set timeout 300
}
open_privilege_body() {
	kmod_run priv.sh -t 200
	vm_expect_out '^priv: uid 65534: open Permission denied \(the node.s mode\)$'
	vm_expect_out '^priv: uid 0 with CAP_SYS_ADMIN, without CAP_PERFMON: open succeeds$'
	vm_expect_out '^priv: uid 0 with CAP_PERFMON, without CAP_SYS_ADMIN: open succeeds$'
	vm_expect_out '^priv: uid 0 without CAP_SYS_ADMIN and CAP_PERFMON: open Operation not permitted$'
	vm_expect_out '^priv: opened before dropping both capabilities: VERSION, ARM [_a-z0-9]+\+0x[0-9a-f]+, 100 of 100 calls recorded$'
	vm_expect_out '^priv: opened by root before setuid\(65534\): VERSION, ARM [_a-z0-9]+\+0x[0-9a-f]+, 100 of 100 calls recorded$'
	vm_expect_out '^priv: 0 failures$'
}

atf_init_test_cases() {
	atf_add_test_case open_privilege
	atf_add_test_case kprobe_coexistence
	atf_add_test_case full_ring_drops
	atf_add_test_case disarm_with_hits_in_flight
	atf_add_test_case rearm_under_hits
	atf_add_test_case module_function
	atf_add_test_case ioctl_fuzz
	atf_add_test_case agg_fuzz
	atf_add_test_case prog_fuzz
	atf_add_test_case arm_hit_read_disarm
	atf_add_test_case kill9_restores_text
}
