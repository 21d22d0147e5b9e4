#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: rmmod -f kinst with kinstctl tracing: kinstctl exits 11 saying the module is being unloaded, rmmod completes, the module loads and traces again; with holders that never read, rmmod -f waits until they are killed
# scenario-needs: kinst
# scenario-timeout: 300
# scenario-options: --allow-taint R --expect-dmesg 'kinst: forced unload with [0-9]+ file'
#
# Issue 8, item 4.  Debian's kernel has CONFIG_MODULE_FORCE_UNLOAD=y: a
# forced unload (busybox rmmod -f: delete_module(2) with O_TRUNC) runs the
# module's exit with files open.  kinst_exit now tells the readers to go
# away (read/ioctl ENODEV, poll EPOLLERR|EPOLLHUP), disarms, and waits for
# every file to be closed, so no CPU can run freed module code.  A forced
# unload taints the kernel (R): allowed here, nothing else is.  The
# harness checks the kernel log (no oops, no BUG) and that the kernel
# logged the forced unload.
. /kinst/lib/guest-lib.sh
kt_need_kinst

# A workload that calls vfs_read (head reads with read(2)).
(while :; do head -c 64 /proc/version >/dev/null; sleep 0.1; done) &
wl=$!

# wait_start ERRFILE PID: until kinstctl says it is tracing.
wait_start() {
	_i=0
	while ! grep -q 'tracing [0-9]* probe' "$1"; do
		_i=$((_i + 1))
		[ $_i -le 120 ] || kt_fail "kinstctl did not start tracing: $(cat "$1")"
		kill -0 "$2" 2>/dev/null || kt_fail "kinstctl exited early: $(cat "$1")"
		sleep 0.5
	done
}

# wait_gone PID SECONDS WHAT: PID exits within SECONDS.
wait_gone() {
	_i=0
	while kill -0 "$1" 2>/dev/null; do
		_i=$((_i + 1))
		[ $_i -le $(($2 * 2)) ] || kt_fail "$3 did not finish within $2 s"
		sleep 0.5
	done
}

# 1. A tracer reading: rmmod -f tells it to go away.
kinstctl trace --json vfs_read ksys_read >/tmp/fu.json 2>/tmp/fu.err &
tr=$!
wait_start /tmp/fu.err "$tr"
[ -s /tmp/fu.json ] || sleep 2
rmmod -f kinst >/tmp/rm.out 2>&1 &
rm=$!
wait_gone "$tr" 30 "kinstctl, after rmmod -f,"
wait "$tr"
st=$?
kt_log "kinstctl: exit $st: $(tr '\n' ' ' </tmp/fu.err)"
kt_expect_eq "kinstctl's exit status after rmmod -f (11: live system)" 11 "$st"
grep -q '^kinstctl: .*being unloaded' /tmp/fu.err ||
    kt_fail "kinstctl did not say the module is being unloaded: $(cat /tmp/fu.err)"
wait_gone "$rm" 30 "rmmod -f"
wait "$rm" || kt_fail "rmmod -f failed: $(cat /tmp/rm.out)"
! grep -q '^kinst ' /proc/modules || kt_fail "kinst still in /proc/modules after rmmod -f"
[ ! -e /dev/kinst ] || kt_fail "/dev/kinst still there after rmmod -f"
kt_log "rmmod -f with a reader: done; $(jq -r 'select(.type == "hit") | .probe' /tmp/fu.json | wc -l) hits printed before (informational)"

# 2. The module loads again and traces.
insmod /kinst/modules/kinst.ko || kt_fail "insmod kinst.ko after rmmod -f failed"
timeout 60 kinstctl trace -n 3 --json vfs_read >/tmp/fu2.json 2>/tmp/fu2.err ||
    kt_fail "trace after reload failed: $(cat /tmp/fu2.err)"
kt_expect_eq "hits in vfs_read after reload" 3 "$(jq -r 'select(.type == "hit") | .function' /tmp/fu2.json | grep -c '^vfs_read$')"

# 3. Holders that never read: a kinstctl with probes armed, stopped, and
# a process that only holds the device open.  rmmod -f must wait for them
# (and must not free the module under them) until they are killed.
kinstctl trace vfs_read >/dev/null 2>/tmp/fu3.err &
tr=$!
wait_start /tmp/fu3.err "$tr"
kill -STOP "$tr"
sleep 1000 3</dev/kinst &
holder=$!
# Polled, not slept on: a guest the host holds off its cores can take
# seconds for either step.
i=0
until [ "$(readlink /proc/$holder/fd/3 2>/dev/null)" = /dev/kinst ]; do
	[ $i -lt 300 ] || kt_fail "the holder did not open /dev/kinst in 30 s"
	sleep 0.1; i=$((i + 1))
done
rmmod -f kinst >/tmp/rm.out 2>&1 &
rm=$!
i=0
until grep -q '^kinst .*Unloading' /proc/modules && [ ! -e /dev/kinst ]; do
	kill -0 "$rm" 2>/dev/null || kt_fail "rmmod -f returned with files open: $(cat /tmp/rm.out)"
	[ $i -lt 300 ] || break
	sleep 0.1; i=$((i + 1))
done
sleep 1	# (it must still be waiting a while after)
kill -0 "$rm" 2>/dev/null || kt_fail "rmmod -f returned with files open: $(cat /tmp/rm.out)"
[ ! -e /dev/kinst ] || kt_fail "/dev/kinst still there while the unload waits"
grep -q '^kinst .*Unloading' /proc/modules ||
    kt_fail "kinst is not Unloading in /proc/modules: $(grep '^kinst ' /proc/modules)"
kt_log "rmmod -f waits with two holders: $(grep '^kinst ' /proc/modules)"
kill -9 "$tr"
wait "$tr" 2>/dev/null
sleep 2
kill -0 "$rm" 2>/dev/null || kt_fail "rmmod -f returned while a holder still had the device open"
kill "$holder"
wait "$holder" 2>/dev/null
wait_gone "$rm" 30 "rmmod -f, after the holders were killed,"
wait "$rm" || kt_fail "rmmod -f failed: $(cat /tmp/rm.out)"
! grep -q '^kinst ' /proc/modules || kt_fail "kinst still in /proc/modules"
kt_log "rmmod -f with holders that never read: waited for them, then done"

# 4. And once more: load, trace, normal unload.
insmod /kinst/modules/kinst.ko || kt_fail "insmod kinst.ko again failed"
timeout 60 kinstctl trace -n 1 --json vfs_read >/tmp/fu4.json 2>/tmp/fu4.err ||
    kt_fail "trace after the second forced unload failed: $(cat /tmp/fu4.err)"
kill "$wl"
exit 0
