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
