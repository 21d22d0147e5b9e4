#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# kinst.ko on arm64 (issue 44), through /dev/kinst (a64_devcheck): getpid's
# probe counted exactly, write(2)'s arguments in x0-x2, stacks from the
# frame records at every prologue offset, exclusive sequences refused
# (the load-exclusive and the instruction after it), what kinst's handler
# calls refused as trap path, two sessions on one
# instruction, a probe program's predicate on x0 and capture of the user
# buffer x1 points at, whole busy functions armed under
# a load that checks its own results.  Each line "RC-<check> N" is the
# check's exit status; the host asserts each.
set -u
run() {
	name=$1
	shift
	a64_devcheck "$@"
	echo "RC-$name $?"
}
run cycle cycle __arm64_sys_getpid 1000
run regs regs 200
for o in 0 8 12 16 24 40; do
	run stack-$o stack __arm64_sys_getpid $o invoke_syscall 50
done
run exclusive exclusive fput dput __fput alloc_fd try_to_wake_up
# What kinst's handler calls is refused as trap path whether or not
# the module reaches it through its PLT (KASLR puts the module beyond a
# bl's 128 MiB on most boots).  Informational: where it landed.
run trap-path trap-path ktime_get_mono_fast_ns copy_from_user_nofault \
    __check_object_size __memcpy __memset irq_work_queue
echo 0 >/proc/sys/kernel/kptr_restrict
mb=$(( ($(sed -n 's/ T _stext$//p' /proc/kallsyms | sed 's/^/0x/') - \
    $(sed -n 's/^kinst .* \(0x[0-9a-f]*\).*/\1/p' /proc/modules)) >> 20 ))
echo "info: kinst.ko is $mb MiB below _stext ($([ "$mb" -lt 128 ] && echo 'bl reaches the kernel' || echo 'calls go through its PLT'))"
run shared shared 500
run masks masks 500
run pred pred 100
run all-getpid all __arm64_sys_getpid 100
run all-vfs_read all vfs_read 50
run all-ksys_write all ksys_write 50
run all-do_sys_openat2 all do_sys_openat2 30
