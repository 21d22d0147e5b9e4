#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The FreeBSD module compiles: kmod/freebsd/*.c, *.S and common/*.c built
# with FreeBSD's kernel-module flags (clang, -Werror) against the
# declaration-only FreeBSD headers of ../shared/freebsd-decls, which sit
# beside the repository on the project's build machines (not in a user's
# clone: there the test is skipped, loudly).

KINST_SRCDIR="@KINST_SRCDIR@"

atf_test_case shim_compiles
shim_compiles_head() {
	atf_set descr "kmod/freebsd and common/ compile with FreeBSD's kernel flags and -Werror"
}
shim_compiles_body() {
	compile=$KINST_SRCDIR/../shared/freebsd-decls/compile
	if [ ! -x "$compile" ]; then
		atf_skip "SKIPPED: $compile is absent (a clone outside the project's build machines): the FreeBSD module was NOT compile-checked"
	fi
	# Declarations the shim uses that the shared set lacks, transcribed
	# from FreeBSD's sys/sys/proc.h (checked against main of 2025):
	# struct thread's td_kstack (vm_offset_t, kernel VA of the kstack) and
	# td_kstack_pages (int), for the stack walk's bounds; struct proc's
	# p_vmspace (struct vmspace *), vmspace0 and P_KPROC (0x00004), for the
	# user read's kernel-thread test (KINST_FBSD_HAS_USER_VM in
	# kmod/freebsd/kinst_fbsd.h, which reads p_vmspace only when P_KPROC
	# is defined).  Added to a copy of the set in this test's work
	# directory, never to the set itself.
	decls=$(dirname "$compile")
	if ! grep -q td_kstack "$decls/sys/proc.h" ||
	    ! grep -q p_vmspace "$decls/sys/proc.h"; then
		echo "NOTE: shared freebsd-decls lack td_kstack/td_kstack_pages or p_vmspace/vmspace0/P_KPROC: adding them (transcribed) to a private copy"
		cp -R "$decls" decls
		if ! grep -q td_kstack decls/sys/proc.h; then
			sed -i 's|^struct thread {$|struct thread {\n\tvm_offset_t td_kstack;\t/* (a) Kernel VA of kstack. */\n\tint td_kstack_pages;\t/* (a) Size of the kstack. */|' decls/sys/proc.h
		fi
		if ! grep -q p_vmspace decls/sys/proc.h; then
			sed -i 's|^struct proc {$|struct vmspace;\nextern struct vmspace vmspace0;\t/* VM space for proc0. */\n#define\tP_KPROC\t\t0x00004\t/* Kernel process. */\nstruct proc {\n\tstruct vmspace *p_vmspace;\t/* (b) Address space. */|' decls/sys/proc.h
		fi
		grep -q td_kstack_pages decls/sys/proc.h ||
		    atf_fail "could not add td_kstack to the private copy of sys/proc.h"
		grep -q 'vmspace \*p_vmspace' decls/sys/proc.h ||
		    atf_fail "could not add p_vmspace to the private copy of sys/proc.h"
		compile=$PWD/decls/compile
	fi
	# Every file the compile script is meant to build: it must report them all.
	want=0
	for f in "$KINST_SRCDIR"/kmod/freebsd/*.c "$KINST_SRCDIR"/kmod/freebsd/*.S \
	    "$KINST_SRCDIR"/common/*.c; do
		[ -f "$f" ] && want=$((want + 1))
	done
	[ "$want" -gt 0 ] || atf_fail "no source files under $KINST_SRCDIR"
	status=0
	"$compile" "$KINST_SRCDIR" >out 2>&1 || status=$?
	cat out
	if [ "$status" = 2 ] && grep -q "clang is not installed" out; then
		atf_skip "SKIPPED: clang is not installed: the FreeBSD module was NOT compile-checked"
	fi
	last=$(tail -n 1 out)
	case $last in
	"fbsd-compile: $want files, 0 failed")
		[ "$status" = 0 ] || atf_fail "compile exited $status after: $last"
		;;
	*)
		atf_fail "FreeBSD compile check failed (exit $status; expected \"fbsd-compile: $want files, 0 failed\", got \"$last\"): $(grep '^FAIL' out | head -n 3 | tr '\n' ' ')"
		;;
	esac
}

atf_init_test_cases() {
	atf_add_test_case shim_compiles
}
