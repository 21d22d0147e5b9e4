#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# The FreeBSD module compiles: kmod/freebsd/*.c, *.S, common/*.c and
# common/x86/*.c (the instruction set's) built with FreeBSD's
# kernel-module flags (clang, -Werror) against the
# declaration-only FreeBSD headers of ../shared/freebsd-decls, which sit
# beside the repository on the project's build machines (not in a user's
# clone: there the test is skipped, loudly).
#
# Files that need FreeBSD declarations those headers do not have (yet) are
# checked alone by gap_compiles, in full when the declarations have them,
# else with the missing headers empty and every diagnostic required to be
# the absence of one of the interfaces listed for the file (anything else
# in it is type-checked); shim_compiles checks everything else:
# - kmod/freebsd/kinst_fbsd_vm.c, the VM glue of mapped rings (vm/vm_page.h,
#   vm/vm_pager.h, sys/rwlock.h; the declarations have them now, from
#   FreeBSD 15.1): vm_glue_compiles;
# - kmod/freebsd/kinst_fbsd_dev.c, the device, whose open calls
#   priv_check(9) (sys/priv.h: priv_check() and PRIV_DTRACE_KERNEL):
#   dev_compiles.

KINST_SRCDIR="@KINST_SRCDIR@"
VM_GLUE=kinst_fbsd_vm.c
VM_DECLS="vm/vm_page.h vm/vm_pager.h sys/rwlock.h"
VM_NAMES="VM_OBJECT_WLOCK VM_OBJECT_WUNLOCK pmap_qenter pmap_qremove
    vm_object_deallocate vm_object_reference vm_page_grab vm_page_lookup
    vm_page_unwire_noq vm_page_valid vm_page_xunbusy vm_pager_allocate
    EACCES OBJT_PHYS VM_ALLOC_NORMAL VM_ALLOC_WAITFAIL VM_ALLOC_WIRED
    VM_ALLOC_ZERO"
DEV=kinst_fbsd_dev.c
DEV_DECLS="sys/priv.h"
DEV_NAMES="priv_check PRIV_DTRACE_KERNEL"

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
	for f in $VM_GLUE $DEV; do
		[ -f "$KINST_SRCDIR/kmod/freebsd/$f" ] || atf_fail "no kmod/freebsd/$f"
	done
	# The tree without the files gap_compiles checks alone (vm_glue_compiles',
	# dev_compiles').
	mkdir -p t/kmod/freebsd t/common/x86
	cp "$KINST_SRCDIR"/kmod/freebsd/* t/kmod/freebsd/
	cp "$KINST_SRCDIR"/common/*.[ch] t/common/
	cp "$KINST_SRCDIR"/common/x86/*.h t/common/x86/
	# The instruction set's sources beside the rest: the compile script
	# builds common/*.c (their names are unique, as bsd.kmod.mk needs).
	cp "$KINST_SRCDIR"/common/x86/*.c t/common/
	rm t/kmod/freebsd/$VM_GLUE t/kmod/freebsd/$DEV
	# Every file the compile script is meant to build: it must report them all.
	want=0
	for f in t/kmod/freebsd/*.c t/kmod/freebsd/*.S t/common/*.c; do
		[ -f "$f" ] && want=$((want + 1))
	done
	[ "$want" -gt 1 ] || atf_fail "no source files under $KINST_SRCDIR"
	fbsd_compile "$PWD/t" "$want"
}

# gap_compiles FILE "HEADERS" "NAMES": compile kmod/freebsd/FILE alone, in
# full when ../shared/freebsd-decls has every header in HEADERS, else with
# the missing ones empty and every diagnostic required to be the absence of
# one of NAMES (the interfaces those headers declare): anything else in the
# file is still type-checked.
gap_compiles() {
	need_compile
	file=$1
	decls=$(dirname "$compile")
	mkdir -p t/kmod/freebsd t/common/x86
	cp "$KINST_SRCDIR"/kmod/freebsd/*.h "$KINST_SRCDIR/kmod/freebsd/$file" t/kmod/freebsd/
	cp "$KINST_SRCDIR"/common/*.h t/common/
	cp "$KINST_SRCDIR"/common/x86/*.h t/common/x86/
	missing=
	for h in $2; do
		[ -f "$decls/$h" ] || missing="$missing $h"
	done
	if [ -z "$missing" ]; then
		fbsd_compile "$PWD/t" 1
		return
	fi
	echo "NOTE: ../shared/freebsd-decls has no$missing: $file is compiled with them empty; only the absence of these interfaces may be diagnosed: $(echo $3)"
	for h in $missing; do
		mkdir -p "t/kmod/freebsd/$(dirname "$h")"
		: >"t/kmod/freebsd/$h"	# found after the declarations' directory
	done
	command -v clang >/dev/null ||
	    atf_skip "SKIPPED: clang is not installed: the FreeBSD module was NOT compile-checked"
	# The compile script's flags, for every diagnostic (it shows 8 lines).
	cf=$(sed -n 's/^CF="\(.*\)"$/\1/p' "$compile")
	[ -n "$cf" ] || atf_fail "cannot read the compile flags of $compile"
	mkdir -p o
	: >o/opt_global.h
	D=$decls M=$PWD/t O=$PWD/o
	eval "cf=\"$cf\""
	status=0
	eval "clang $cf -ferror-limit=0 -c \"$M/kmod/freebsd/$file\" -o o/gap.o" >err 2>&1 || status=$?
	cat err
	[ "$status" != 0 ] || atf_fail "$file compiled without$missing: the list of headers it lacks is out of date"
	grep 'error:' err >errors || true
	[ -s errors ] || atf_fail "clang failed without an error line (exit $status)"
	bad=0
	while IFS= read -r line; do
		name=$(printf '%s\n' "$line" | sed -n "s/.*implicit declaration of function '\([A-Za-z_0-9]*\)'.*/\1/p; s/.*use of undeclared identifier '\([A-Za-z_0-9]*\)'.*/\1/p")
		case " $(echo $3) " in
		*" $name "*) [ -n "$name" ] && continue ;;
		esac
		echo "UNEXPECTED: $line"
		bad=$((bad + 1))
	done <errors
	[ "$bad" = 0 ] || atf_fail "$file: $bad diagnostics other than the missing declarations: $(grep -v -e 'implicit declaration of function' -e 'use of undeclared identifier' errors | head -n 2 | tr '\n' ' ')"
	echo "$file: $(grep -c . errors) diagnostics, all missing declarations"
}

atf_test_case vm_glue_compiles
vm_glue_compiles_head() {
	atf_set descr "kmod/freebsd/$VM_GLUE (mapped rings' VM glue) compiles with FreeBSD's kernel flags and -Werror, when the declarations have the VM headers it needs"
}
vm_glue_compiles_body() {
	gap_compiles "$VM_GLUE" "$VM_DECLS" "$VM_NAMES"
}

atf_test_case dev_compiles
dev_compiles_head() {
	atf_set descr "kmod/freebsd/$DEV (the device, with its priv_check at open) compiles with FreeBSD's kernel flags and -Werror, when the declarations have sys/priv.h"
}
dev_compiles_body() {
	gap_compiles "$DEV" "$DEV_DECLS" "$DEV_NAMES"
}

atf_init_test_cases() {
	atf_add_test_case shim_compiles
	atf_add_test_case vm_glue_compiles
	atf_add_test_case dev_compiles
}
