#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The FreeBSD module compiles: kmod/freebsd/*.c, *.S and common/*.c built
# with FreeBSD's kernel-module flags (clang, -Werror) against the
# declaration-only FreeBSD headers of ../shared/freebsd-decls, which sit
# beside the repository on the project's build machines (not in a user's
# clone: there the test is skipped, loudly).
#
# kmod/freebsd/kinst_fbsd_vm.c, the VM glue of mapped rings, needs FreeBSD
# VM declarations those headers do not have (vm/vm_page.h, vm/vm_pager.h,
# sys/rwlock.h): shim_compiles checks everything else, vm_glue_compiles
# checks it alone when the declarations are there and is skipped, saying
# so, when they are not.

KINST_SRCDIR="@KINST_SRCDIR@"
VM_GLUE=kinst_fbsd_vm.c
VM_DECLS="vm/vm_page.h vm/vm_pager.h sys/rwlock.h"

# fbsd_compile TREE WANT: run the compile script on TREE, expect WANT files
# and no failure.
fbsd_compile() {
	status=0
	"$compile" "$1" >out 2>&1 || status=$?
	cat out
	if [ "$status" = 2 ] && grep -q "clang is not installed" out; then
		atf_skip "SKIPPED: clang is not installed: the FreeBSD module was NOT compile-checked"
	fi
	last=$(tail -n 1 out)
	case $last in
	"fbsd-compile: $2 files, 0 failed")
		[ "$status" = 0 ] || atf_fail "compile exited $status after: $last"
		;;
	*)
		atf_fail "FreeBSD compile check failed (exit $status; expected \"fbsd-compile: $2 files, 0 failed\", got \"$last\"): $(grep '^FAIL' out | head -n 3 | tr '\n' ' ')"
		;;
	esac
}

need_compile() {
	compile=$KINST_SRCDIR/../shared/freebsd-decls/compile
	if [ ! -x "$compile" ]; then
		atf_skip "SKIPPED: $compile is absent (a clone outside the project's build machines): the FreeBSD module was NOT compile-checked"
	fi
}

atf_test_case shim_compiles
shim_compiles_head() {
	atf_set descr "kmod/freebsd and common/ compile with FreeBSD's kernel flags and -Werror"
}
shim_compiles_body() {
	need_compile
	[ -f "$KINST_SRCDIR/kmod/freebsd/$VM_GLUE" ] || atf_fail "no kmod/freebsd/$VM_GLUE"
	# The tree without the VM glue (vm_glue_compiles').
	mkdir -p t/kmod/freebsd t/common
	cp "$KINST_SRCDIR"/kmod/freebsd/* t/kmod/freebsd/
	cp "$KINST_SRCDIR"/common/*.[ch] t/common/
	rm t/kmod/freebsd/$VM_GLUE
	# Every file the compile script is meant to build: it must report them all.
	want=0
	for f in t/kmod/freebsd/*.c t/kmod/freebsd/*.S t/common/*.c; do
		[ -f "$f" ] && want=$((want + 1))
	done
	[ "$want" -gt 1 ] || atf_fail "no source files under $KINST_SRCDIR"
	fbsd_compile "$PWD/t" "$want"
}

atf_test_case vm_glue_compiles
vm_glue_compiles_head() {
	atf_set descr "kmod/freebsd/$VM_GLUE (mapped rings' VM glue) compiles with FreeBSD's kernel flags and -Werror, when the declarations have the VM headers it needs"
}
vm_glue_compiles_body() {
	need_compile
	decls=$(dirname "$compile")
	missing=
	for h in $VM_DECLS; do
		[ -f "$decls/$h" ] || missing="$missing $h"
	done
	if [ -n "$missing" ]; then
		atf_skip "SKIPPED: ../shared/freebsd-decls has no$missing: kmod/freebsd/$VM_GLUE (mapped rings on FreeBSD) was NOT compile-checked here (it was compiled against FreeBSD 15.1's headers and run live by hand: issue 24's note)"
	fi
	mkdir -p t/kmod/freebsd t/common
	cp "$KINST_SRCDIR"/kmod/freebsd/*.h "$KINST_SRCDIR/kmod/freebsd/$VM_GLUE" t/kmod/freebsd/
	cp "$KINST_SRCDIR"/common/*.h t/common/
	fbsd_compile "$PWD/t" 1
}

atf_init_test_cases() {
	atf_add_test_case shim_compiles
	atf_add_test_case vm_glue_compiles
}
