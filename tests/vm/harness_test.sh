#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Tests of the QEMU guest harness itself (tests/vm/run-in-guest): the guest
# boots and runs a script, its exit status comes back, tracefs works in it,
# and the harness fails runs that time out, panic, or leave kernel trouble
# in the log.  Each boot costs 5-15 s under TCG, so a test checks several
# things per boot.

KINST_DEFAULT_SRCDIR="@KINST_SRCDIR@"
KINST_DEFAULT_BUILDDIR="@KINST_BUILDDIR@"
KINST_DEFAULT_CACHE="@KINST_CACHE_DEFAULT@"
. "$KINST_DEFAULT_SRCDIR/tests/lib/vm.sh"

atf_test_case exit_status
exit_status_head() {
	atf_set descr "A script runs in the guest booted as a boot loader would (bzImage), sees its arguments, and its non-zero exit status is run-in-guest's"
	atf_set timeout 600
}
exit_status_body() {
	vm_setup
	vm_require_guest
	cat >script.sh <<'EOF'
echo "args: <$1> <$2> <$#>"
echo "kernel: $(uname -r)"
echo "pid1: $(cat /proc/1/comm)"
echo "cmdline: $(cat /proc/cmdline)"
echo "no newline at the end" | tr -d '\n'
exit 42
EOF
	vm_run --bzimage script.sh "two words" "it's \$HOME"
	vm_expect_status 42
	vm_expect_out "^args: <two words> <it's \\\$HOME> <2>\$"
	kver=$(basename "$(ls "$KINST_CACHE"/kernel/root/boot/vmlinuz-* | sort -V | tail -n 1)")
	vm_expect_out "^kernel: ${kver#vmlinuz-}\$"
	vm_expect_out "^pid1: init\$"
	vm_expect_out "^no newline at the end\$"
	vm_expect_out "^cmdline: .*panic=-1"
	vm_expect_err "\(bzImage"
	vm_expect_err "guest script exit status: 42"
	# The console log was kept and is the kernel's.
	grep -q "Linux version" guest/console.log ||
	    atf_fail "guest/console.log has no kernel banner"
	grep -q "KINST-GUEST-EXIT .* 42" guest/console.log ||
	    atf_fail "no exit marker on the console"
}

atf_test_case guest_environment
guest_environment_head() {
	atf_set descr "The guest panics on a soft lockup; it has proc, sysfs, devtmpfs, debugfs, tracefs (kprobe events, hist triggers, function tracer), jq and kinstctl on PATH, and reports exit status 0"
	atf_set timeout 600
}
guest_environment_body() {
	vm_setup
	vm_require_guest
	cat >script.sh <<'EOF'
set -e
. /kinst/lib/guest-lib.sh
for fs in proc:/proc sysfs:/sys devtmpfs:/dev debugfs:/sys/kernel/debug \
    tracefs:/sys/kernel/tracing tmpfs:/tmp; do
	grep -q "^[^ ]* ${fs#*:} ${fs%%:*} " /proc/mounts || kt_fail "${fs#*:} is not ${fs%%:*}"
done
echo "mounts: ok"
[ "$(echo '{"a":[1,2,3]}' | jq -c '.a | add')" = 6 ] || kt_fail "jq does not work"
echo "jq: ok"
T=/sys/kernel/tracing
grep -qw function $T/available_tracers || kt_fail "no function tracer"
grep -q 'kprobe_events' $T/README || kt_fail "no kprobe_events in this kernel"
grep -q 'hist trigger' $T/README || kt_fail "no hist triggers in this kernel"
[ -e $T/function_profile_enabled ] && echo "function profiler: yes" || echo "function profiler: no"
# A kprobe event that counts, per pid: syscall_loop makes exactly 3 getpids.
kt_counter_kprobe env_getpid __x64_sys_getpid
pid=$(syscall_loop getpid 3)
kt_expect_eq "kprobe hits by $pid" 3 "$(kt_count kinst_test/env_getpid "$pid")"
kt_counter_remove kinst_test/env_getpid
echo "tracefs: ok"
# A livelock must end the run with stacks, not at the time limit (issue 15).
echo "softlockup_panic: $(cat /proc/sys/kernel/softlockup_panic)" \
    "all_cpu_backtrace: $(cat /proc/sys/kernel/softlockup_all_cpu_backtrace)"
if [ "$KINST_MODULE_LOADED" = 1 ]; then
	[ -c /dev/kinst ] || kt_fail "module loaded but no /dev/kinst"
	echo "module: loaded, /dev/kinst mode $(stat -c %a /dev/kinst)"
else
	[ ! -e /dev/kinst ] || kt_fail "/dev/kinst without the module"
	echo "module: not loaded"
fi
if command -v kinstctl >/dev/null; then
	kinstctl --help >/dev/null 2>&1 || kinstctl --version >/dev/null 2>&1 ||
	    kt_fail "kinstctl does not run (libraries?)"
	echo "kinstctl: runs"
else
	echo "kinstctl: not built"
fi
exit 0
EOF
	vm_run script.sh
	vm_expect_status 0
	vm_expect_out "^mounts: ok\$"
	vm_expect_out "^jq: ok\$"
	vm_expect_out "^tracefs: ok\$"
	vm_expect_out "^softlockup_panic: 1 all_cpu_backtrace: 1\$"
	if [ -f "$top/kmod/linux/kinst.ko" ]; then
		vm_expect_out "^module: loaded, /dev/kinst mode 600\$"
	else
		vm_expect_out "^module: not loaded\$"
		vm_expect_err "NOTE: .*kinst.ko is not built"
	fi
	if [ -x "$KINST_BUILD/cli/kinstctl" ]; then
		vm_expect_out "^kinstctl: runs\$"
	else
		vm_expect_out "^kinstctl: not built\$"
	fi
}

atf_test_case dmesg_checker
dmesg_checker_head() {
	atf_set descr "A WARNING line in the guest's kernel log fails a run whose script succeeded, and is printed; --expect-dmesg allows a line and fails when one is missing"
	atf_set timeout 1000
}
dmesg_checker_body() {
	vm_setup
	vm_require_guest
	cat >script.sh <<'EOF'
echo "WARNING: CPU: 0 PID: 1 at planted/by/kinst_harness_test.c:1" >/dev/kmsg
echo planted
exit 0
EOF
	vm_run script.sh
	vm_expect_status 125
	vm_expect_out "^planted\$"
	vm_expect_err "FAIL: kernel trouble in the guest's log"
	vm_expect_err "! .*WARNING: CPU: 0 PID: 1 at planted/by/kinst_harness_test.c:1"
	vm_expect_err "guest script exit status: 0"

	# The same line expected: it is no longer trouble; a second expected
	# line that never comes fails the run, and says which.
	vm_run --expect-dmesg 'planted/by/kinst' \
	    --expect-dmesg 'never printed by anyone' script.sh
	vm_expect_status 125
	vm_expect_err "expected a kernel log line matching /never printed by anyone/"
	if grep -q "kernel trouble" vm.err; then
		atf_fail "an expected line was reported as trouble"
	fi
}

atf_test_case timeout
timeout_head() {
	atf_set descr "A guest that does not finish in time is killed and reported as timed out (exit 124), not waited for"
	atf_set timeout 300
}
timeout_body() {
	vm_setup
	vm_require_guest
	printf 'echo sleeping\nsleep 1000\necho woke\n' >script.sh
	start=$(date +%s)
	vm_run -t 25 script.sh
	end=$(date +%s)
	vm_expect_status 124
	vm_expect_err "FAIL: timed out after 25s"
	# Where each vCPU was, read through the QEMU monitor before the kill.
	vm_expect_err "where the vCPUs were"
	for c in 0 1; do
		grep -Eq "^  CPU#$c rip:( [0-9a-f]{16}){5}\$" vm.err ||
		    atf_fail "no 5 rip samples of CPU $c in the time-out report"
	done
	if grep -q woke vm.out; then
		atf_fail "the script finished: it was not killed"
	fi
	[ $((end - start)) -lt 100 ] ||
	    atf_fail "run-in-guest took $((end - start)) s to time out after 25 s"
}

atf_test_case kernel_panic
kernel_panic_head() {
	atf_set descr "A kernel panic in the guest ends the run at once with a clear failure (exit 126) and the panic on stderr"
	atf_set timeout 600
}
kernel_panic_body() {
	vm_setup
	vm_require_guest
	printf 'echo crashing\necho c >/proc/sysrq-trigger\nsleep 1000\n' >script.sh
	vm_run script.sh
	vm_expect_status 126
	vm_expect_err "FAIL: the guest ended without reporting a status"
	vm_expect_err "Kernel panic"
	# Dead after /init began: the script's fault, never booted again.
	if grep -q "booting it once more" vm.err; then
		atf_fail "a panic after /init ran was retried"
	fi
}

atf_test_case boot_death_retried_once
boot_death_retried_once_head() {
	atf_set descr "A guest whose kernel dies before /init runs (nothing of kinst's has run) is booted exactly once more, saying so, and then fails (exit 126)"
	atf_set timeout 600
}
boot_death_retried_once_body() {
	vm_setup
	vm_require_guest
	echo 'echo script ran' >script.sh
	# No such init in the initramfs and no root to mount: the kernel
	# panics before anything of the harness runs.
	vm_run --no-module --append "rdinit=/kinst-no-such-init" script.sh
	vm_expect_status 126
	vm_expect_err "FAIL: the guest ended without reporting a status"
	n=$(grep -c "died before /init ran.*booting it once more" vm.err)
	[ "$n" = 1 ] || atf_fail "expected one second boot, saw $n"
	[ -s guest/console.boot1.log ] || atf_fail "the first boot's console was not kept"
	grep -q "Kernel panic" guest/console.boot1.log ||
	    atf_fail "the first boot's console shows no panic"
	grep -q "Kernel panic" guest/console.log ||
	    atf_fail "the second boot's console shows no panic"
	if grep -q "script ran" vm.out; then
		atf_fail "the script ran"
	fi
}

atf_test_case module_load_failure
module_load_failure_head() {
	atf_set descr "A module that the guest kernel refuses to load fails the run clearly (exit 126) instead of running the script without it"
	atf_set timeout 600
}
module_load_failure_body() {
	vm_setup
	vm_require_guest
	kver=$(basename "$(ls "$KINST_CACHE"/kernel/root/boot/vmlinuz-* | sort -V | tail -n 1)")
	kver=${kver#vmlinuz-}
	# Right vermagic, but not a module: the kernel says ENOEXEC.
	printf 'vermagic=%s SMP preempt mod_unload modversions \0' "$kver" >modinfo
	echo 'int x;' >fake.c
	cc -c fake.c -o fake.o || atf_skip "no C compiler to build the fake module"
	objcopy --add-section .modinfo=modinfo fake.o fake.ko
	echo 'echo script ran' >script.sh
	vm_run --module "$PWD/fake.ko" script.sh
	vm_expect_status 126
	vm_expect_err "FAIL: kinst.ko did not load in the guest"
	vm_expect_out "insmod kinst.ko failed"
	if grep -q "script ran" vm.out; then
		atf_fail "the script ran without its module"
	fi
}

atf_test_case profile
profile_head() {
	atf_set descr "--profile samples the vCPUs only inside the script's windows, and names the kernel's and kinst.ko's functions each window was in, with its own symbols; a script that ends inside a window ends the run"
	atf_set timeout 600
}
profile_body() {
	vm_setup
	vm_require_guest
	vm_require_kinst
	cat >script.sh <<'EOF'
. /kinst/lib/guest-lib.sh
kt_need_kinst
F=__x64_sys_getpid
kinstctl count "$F+$(kt_first_traceable $F)" >/dev/null 2>/tmp/k.err &
p=$!
until grep -q '^kinstctl: counting' /tmp/k.err; do sleep 0.1; done
syscall_loop getpid 2000 >/dev/null	# outside every window
kt_profile_on getpid
syscall_loop getpid 1500000 >/dev/null	# ~3 s under TCG
kt_profile_off
kill -INT $p
wait $p
kt_profile_on idle
sleep 2
kt_profile_off
syscall_loop getpid 2000000 >/dev/null	# outside: a window left open takes it
# The script ends inside a window: sampling goes on until QEMU exits, and
# the run still ends (a write to the monitor's FIFO once QEMU has gone
# blocked for ever).
kt_profile_on open
echo done
EOF
	vm_run --profile "$PWD/prof.txt" script.sh
	vm_expect_status 0
	vm_expect_err "profile: $PWD/prof.txt"
	sed 's/^/  prof| /' prof.txt
	# Three windows, in order, each with its samples.
	[ "$(grep '^== window' prof.txt | cut -d: -f1 | tr '\n' ' ')" = "== window getpid == window idle == window open " ] ||
	    atf_fail "not the windows getpid, idle, open in that order"
	grep -q '^== window getpid: [1-9][0-9]* samples over 2 vCPUs' prof.txt ||
	    atf_fail "no samples of both vCPUs in the window getpid"
	grep -q '^== window idle: [1-9][0-9]* samples' prof.txt ||
	    atf_fail "no samples in the window idle"
	# The getpid window: the probe's functions, named with the symbols
	# saved at kt_profile_on (kinst.ko was loaded then).
	awk '/^== window getpid/ { w = 1; next } /^== window/ { w = 0 }
	    w && /in kinst.ko: [1-9]/ { k = 1 } END { exit !k }' prof.txt ||
	    atf_fail "no kernel samples in kinst.ko in the window getpid"
	grep -Eq '^ +[0-9]+ +[0-9.]+%  [a-z_0-9.]+\+0x[0-9a-f]+$' prof.txt ||
	    atf_fail "no kinst.ko instruction named as FUNC+OFF"
	# The idle window: a guest asleep, its samples halted (and not the
	# loop after it: a window ends at kt_profile_off).
	awk '/^== window idle/ { getline; split($0, a, /[()%]/); exit !(a[2] + 0 >= 90) }' prof.txt ||
	    atf_fail "the idle window is not 90% halted: $(grep -A1 '^== window idle' prof.txt | tail -n 1)"
	# The saved symbols are kept with the logs.
	[ -s guest/profile/getpid.syms ] || atf_fail "guest/profile/getpid.syms was not kept"
	grep -q '[[:space:]]\[kinst\]$' guest/profile/getpid.syms || atf_fail "getpid.syms does not name kinst.ko's functions"
}

atf_test_case bad_usage
bad_usage_head() {
	atf_set descr "Bad command lines, a module built for another kernel and a --kernel-module not in the kernel package are refused with a message, without booting"
}
bad_usage_body() {
	vm_setup
	vm_require_guest
	atf_check -s exit:2 -e match:"usage:" "$vm_runner"
	atf_check -s exit:2 -e match:"no such file" "$vm_runner" /nonexistent/script.sh
	echo 'exit 0' >script.sh
	atf_check -s exit:2 -e match:"unknown option --bogus" "$vm_runner" --bogus script.sh
	atf_check -s exit:2 -e match:"bad timeout" "$vm_runner" -t soon script.sh
	atf_check -s exit:2 -e match:"--profile-ms: a whole number" "$vm_runner" --profile-ms 0 script.sh
	atf_check -s exit:2 -e match:"--profile: amd64 only" \
	    "$vm_runner" --arch arm64 --profile p.txt script.sh
	atf_check -s exit:2 -e match:"--kernel-module: bad module name" \
	    "$vm_runner" --kernel-module '../x' script.sh
	atf_check -s exit:126 -e match:"--kernel-module no_such_mod: no no_such_mod.ko under" \
	    "$vm_runner" --no-module --kernel-module no_such_mod script.sh
	# A "module" whose vermagic names another kernel.
	printf 'vermagic=0.0.1-fake SMP mod_unload\0' >modinfo
	echo 'int x;' >fake.c
	cc -c fake.c -o fake.o || atf_skip "no C compiler to build the fake module"
	objcopy --add-section .modinfo=modinfo fake.o fake.ko
	atf_check -s exit:126 -e match:"built for 0.0.1-fake \(vermagic\)" \
	    "$vm_runner" --module "$PWD/fake.ko" script.sh
	atf_check -s exit:126 -e match:"is not built" \
	    "$vm_runner" --require-module --module "$PWD/none.ko" script.sh
}

atf_init_test_cases() {
	atf_add_test_case exit_status
	atf_add_test_case guest_environment
	atf_add_test_case dmesg_checker
	atf_add_test_case timeout
	atf_add_test_case kernel_panic
	atf_add_test_case boot_death_retried_once
	atf_add_test_case module_load_failure
	atf_add_test_case profile
	atf_add_test_case bad_usage
}
