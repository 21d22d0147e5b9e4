#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# One test case per guest scenario, tests/vm/scenarios/NAME.sh (a table: the
# directory is read when Kyua lists the test cases).  A scenario declares
# itself in comment lines at its top:
#
#   # scenario: one-line description                      (required)
#   # scenario-needs: kinst        skip unless kinst.ko and kinstctl are built
#   # scenario-timeout: SECONDS    guest time limit (default 240)
#   # scenario-options: ...        more run-in-guest options, shell-quoted
#                                  (e.g. --allow-dmesg 'kinst: .*refused')
#   # scenario-args: ...           the script's arguments, shell-quoted
#   # scenario-modules: NAME ...   Debian's modules (and their dependencies)
#                                  to copy into the guest's /kinst/modules/
#                                  (run-in-guest --kernel-module NAME), for
#                                  the script to load (kt_load_kernel_module)
#   # scenario-host-check: CMD     after a pass, run CMD on the host (in the
#                                  work directory, with the guest's output in
#                                  vm.out); its failure fails the test, exit
#                                  77 skips it (its "SKIP: reason" line)
#
# The script runs in the guest with run-in-guest; exit 0 passes, 77 skips
# (its "SKIP: reason" line is the reason), anything else fails, as does
# kernel trouble in the guest's log after it (run-in-guest checks that).

KINST_DEFAULT_SRCDIR="@KINST_SRCDIR@"
KINST_DEFAULT_BUILDDIR="@KINST_BUILDDIR@"
KINST_DEFAULT_CACHE="@KINST_CACHE_DEFAULT@"
. "$KINST_DEFAULT_SRCDIR/tests/lib/vm.sh"

# scenario_field FILE FIELD
scenario_field() {
	sed -n "s/^# scenario$2: *//p" "$1" | head -n 1
}

scenario_run() {
	file=$1
	vm_setup
	vm_require_guest
	case " $(scenario_field "$file" -needs) " in
	*" kinst "*) vm_require_kinst ;;
	esac
	t=$(scenario_field "$file" -timeout)
	kmods=
	for m in $(scenario_field "$file" -modules); do
		case $m in *[!A-Za-z0-9_-]*) atf_fail "scenario-modules: bad module name '$m'" ;; esac
		kmods="$kmods --kernel-module $m"
	done
	eval "set -- $(scenario_field "$file" -options)$kmods -t ${t:-240} \"\$file\" $(scenario_field "$file" -args)"
	vm_run "$@"
	case $vm_status in
	0)	hc=$(scenario_field "$file" -host-check)
		[ -n "$hc" ] || return 0
		hs=0
		eval "$hc" >hc.out 2>&1 || hs=$?
		cat hc.out
		case $hs in
		0)	;;
		77)	atf_skip "scenario $(basename "$file"): $(sed -n 's/^SKIP: //p' hc.out | head -n 1)" ;;
		*)	atf_fail "scenario $(basename "$file"): the host check failed (exit $hs): $hc" ;;
		esac ;;
	77)	atf_skip "$(sed -n 's/^SKIP: //p' vm.out | head -n 1)" ;;
	*)	vm_show_logs
		atf_fail "scenario $(basename "$file") failed (exit $vm_status): $(grep -h '^FAIL: ' vm.out vm.err | head -n 3 | tr '\n' ' ')" ;;
	esac
}

atf_init_test_cases() {
	for file in "$KINST_DEFAULT_SRCDIR"/tests/vm/scenarios/*.sh; do
		[ -f "$file" ] || continue
		name=$(basename "$file" .sh | tr -c 'A-Za-z0-9_\n' _)
		t=$(scenario_field "$file" -timeout)
		# atf_test_case defines a default head and body: ours come after.
		atf_test_case "$name"
		eval "${name}_head() {
			atf_set descr \"\$(scenario_field '$file' '')\"
			atf_set timeout $(( ${t:-240} + 180 ))
		}
		${name}_body() {
			scenario_run '$file'
		}"
		atf_add_test_case "$name"
	done
}
