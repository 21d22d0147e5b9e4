#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: kinst's own no-fault load (kinst_os_read, an exception-table entry in the module's asm) through the debugfs test hook kinst/read: mapped kernel memory reads right, vmalloc guard pages and a read crossing into one fault and are fixed up, user, non-canonical, vsyscall and wrapping ranges are refused; the fault path is in the derived trap-path set; clean log
# scenario-needs: kinst
# scenario-timeout: 240
#
# Issue 8: kinst_os_read used to call copy_from_kernel_nofault (generic
# kernel code) from the trap handler; it now loads inline with a fixup of
# its own.  The hook runs kinst_os_read itself with interrupts off.  A
# fault that was not fixed up would oops (the harness checks the log).
. /kinst/lib/guest-lib.sh
kt_need_kinst

H=/sys/kernel/debug/kinst/read
[ -w "$H" ] || kt_fail "no $H (debugfs test hook)"

# rd ADDR LEN: the hook's answer
rd() {
	echo "$1 $2" >"$H" || kt_fail "write '$1 $2' to $H failed"
	cat "$H"
}

# hexsub HEX N: HEX - N, for 64-bit addresses (the shell's arithmetic is
# signed 64-bit): on the low 32 bits; empty if that would borrow.
hexsub() {
	_h=${1#0x}
	_hi=${_h%????????} _lo=${_h#"$_hi"}
	[ $((0x$_lo)) -ge "$2" ] || return 0
	printf '%s%08x' "$_hi" $((0x$_lo - $2))
}

# Mapped: linux_banner starts "Linux ve".
a=$(awk '$3 == "linux_banner" { print $1; exit }' /proc/kallsyms)
[ -n "$a" ] || kt_fail "no linux_banner in /proc/kallsyms"
kt_expect_eq "read of linux_banner" "ok 4c 69 6e 75 78 20 76 65" "$(rd "$a" 8)"
kt_expect_eq "read of 1 byte" "ok 4c" "$(rd "$a" 1)"

# Unmapped: the guard page after vmalloc areas.  vmallocinfo prints %pK:
# real addresses for a reader with CAP_SYSLOG only when kptr_restrict is 1
# (0 hashes them).
echo 1 >/proc/sys/kernel/kptr_restrict || kt_fail "cannot set kptr_restrict"
awk 'NR == 1 && $1 !~ /^0xffff/ { exit 1 }' /proc/vmallocinfo ||
    kt_fail "vmallocinfo still hides addresses: $(head -n 1 /proc/vmallocinfo)"
# The size vmallocinfo prints includes the guard page.  Every one of the first 20 must fault.
n=0
for r in $(awk '$1 ~ /^0x/ && $0 ~ /vmalloc/ { print $1 }' /proc/vmallocinfo | head -n 20); do
	end=${r#*-}
	guard=$(hexsub "$end" 4096)
	[ -n "$guard" ] || continue
	kt_expect_eq "read of guard page $guard (area $r)" "fault" "$(rd "$guard" 8)"
	# 4 mapped bytes, then the guard page: fails as a whole.
	kt_expect_eq "read crossing into $guard" "fault" "$(rd "$(hexsub "$end" 4100)" 8)"
	n=$((n + 1))
done
[ "$n" -gt 0 ] || kt_fail "no vmalloc area in /proc/vmallocinfo"
kt_log "$n vmalloc guard pages read: each faulted and was fixed up"

# Refused before any load.  The highest non-canonical address depends on
# the virtual address width (TCG's -cpu max has 5-level paging: 57 bits).
vb=$(sed -n 's/.* \([0-9]*\) bits virtual.*/\1/p' /proc/cpuinfo | head -n 1)
case $vb in
48)	noncanon=ffff7ffffffffff8 ;;
57)	noncanon=fefffffffffffff8
	# canonical with 57 bits, unmapped: a fault, not a refusal
	kt_expect_eq "read of ffff7ffffffffff8 (57-bit)" "fault" "$(rd ffff7ffffffffff8 8)" ;;
*)	kt_fail "virtual address width '$vb' (/proc/cpuinfo)" ;;
esac
kt_log "virtual address bits: $vb"
for x in 1000 7ffffffff000 7fffffffffff 8000000000000000 $noncanon \
    ffffffffff600000 ffffffffff5ffffc; do
	kt_expect_eq "read of $x" "refused" "$(rd "$x" 8)"
done
kt_expect_eq "read wrapping past 2^64" "refused" "$(rd fffffffffffffffc 8)"
# Bad requests: EINVAL, the answer unchanged.
echo "zz" >"$H" 2>/dev/null && kt_fail "'zz' accepted"
echo "$a 0" >"$H" 2>/dev/null && kt_fail "length 0 accepted"
echo "$a 17" >"$H" 2>/dev/null && kt_fail "length 17 accepted"

# The fault path kinst_os_read can take is refused as trap path.
# (kernelmode_fixup_or_oops and the ex_handler_* helpers are inlined in 6.1.)
for f in fixup_exception search_exception_tables search_module_extables; do
	grep -q "^trap-path $f " /sys/kernel/debug/kinst/excluded ||
	    kt_fail "$f is not in the derived trap-path set (debugfs kinst/excluded)"
done
kt_log "fixup_exception, search_exception_tables, search_module_extables: derived trap path"
exit 0
