# SPDX-License-Identifier: BSD-2-Clause
# Host-side helpers for atf-sh test programs that drive the QEMU guest
# (tests/vm/run-in-guest).  Sourced by the test program after atf-sh has
# started; call vm_setup first in every body.

# vm_setup: find the source and build trees and the kernel cache from the
# Kyua configuration (tests/run sets srcdir, builddir, cache), falling back
# to the trees this program was configured from.
vm_setup() {
	top=$(atf_config_get srcdir "$KINST_DEFAULT_SRCDIR")
	KINST_BUILD=$(atf_config_get builddir "$KINST_DEFAULT_BUILDDIR")
	KINST_CACHE=$(atf_config_get cache "$KINST_DEFAULT_CACHE")
	export KINST_BUILD KINST_CACHE
	vm_runner=$top/tests/vm/run-in-guest
	[ -x "$vm_runner" ] || atf_fail "$vm_runner is missing"
}

# vm_require_guest: skip, loudly, unless QEMU and Debian's kernel are here.
vm_require_guest() {
	command -v qemu-system-x86_64 >/dev/null 2>&1 ||
	    atf_skip "SKIPPED: qemu-system-x86_64 is not installed (apt-get install qemu-system-x86, or run tests/setup): the guest tests cannot run"
	ls "$KINST_CACHE"/kernel/root/boot/vmlinuz-* >/dev/null 2>&1 ||
	    atf_skip "SKIPPED: no Debian kernel under $KINST_CACHE/kernel/root/boot (run tests/setup, or: top=\$PWD; . tests/lib/env.sh; kinst_fetch_kernel): the guest tests cannot run"
	command -v busybox >/dev/null 2>&1 ||
	    atf_skip "SKIPPED: busybox is not installed (apt-get install busybox-static): the guest tests cannot run"
}

# vm_require_kinst: skip, loudly, unless kinst.ko and kinstctl are built.
vm_require_kinst() {
	[ -f "$top/kmod/linux/kinst.ko" ] ||
	    atf_skip "SKIPPED: kmod/linux/kinst.ko is not built (make -C kmod/linux KDIR=/usr/src/linux-headers-<version>)"
	[ -x "$KINST_BUILD/cli/kinstctl" ] ||
	    atf_skip "SKIPPED: $KINST_BUILD/cli/kinstctl is not built"
}

# vm_run [run-in-guest options] SCRIPT [ARGS]: boot, run; the script's
# output goes to vm.out, run-in-guest's own messages to vm.err (both also
# shown in the test's output), the exit status to $vm_status.  The guest's
# logs are kept in ./guest/ (Kyua keeps the work directory of a failed
# test only while it runs: they are printed on failure by vm_show_logs).
vm_run() {
	vm_status=0
	# A generous default limit, below the test cases' Kyua timeouts (a
	# boot takes 5-15 s on an idle 2-core host, but over a minute when the
	# host is overloaded); a later -t in "$@" wins.
	"$vm_runner" -k "$PWD/guest" -t "${VM_TIMEOUT:-420}" "$@" >vm.out 2>vm.err || vm_status=$?
	echo "--- run-in-guest $* (exit $vm_status)"
	sed 's/^/  out| /' vm.out
	sed 's/^/  err| /' vm.err
}

# vm_show_logs: the tail of the kernel console, for a failure's record.
vm_show_logs() {
	if [ -f guest/console.log ]; then
		echo "--- last 60 lines of the guest's console"
		tr -d '\r' <guest/console.log | tail -n 60
		# A hang the guest script caught (kt_dump_blocked): the dump.
		if grep -q 'blocked tasks and backtraces follow' guest/console.log; then
			echo "--- the guest's hang dump (first 400 lines)"
			tr -d '\r' <guest/console.log |
			    sed -n '/blocked tasks and backtraces follow/,$p' | head -n 400
		fi
	fi
}

# vm_expect_status N: fail (with the logs) unless the run exited N.
vm_expect_status() {
	if [ "$vm_status" != "$1" ]; then
		vm_show_logs
		atf_fail "run-in-guest exited $vm_status, expected $1"
	fi
}

# vm_expect_out ERE / vm_expect_err ERE: the script's output / the
# harness's messages contain a line matching ERE.
vm_expect_out() {
	grep -Eq -- "$1" vm.out || { vm_show_logs; atf_fail "no line matching /$1/ in the guest script's output"; }
}
vm_expect_err() {
	grep -Eq -- "$1" vm.err || { vm_show_logs; atf_fail "no line matching /$1/ in run-in-guest's messages"; }
}
