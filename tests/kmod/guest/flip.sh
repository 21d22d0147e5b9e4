#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Issue 15: arm and disarm every instruction of hot functions as fast as
# possible while both CPUs (and a third busy process) execute them.  Under
# QEMU's multi-threaded TCG a translation of a removed int3 made while it was
# being removed used to survive and trap forever (both CPUs stuck in exc_int3,
# soft lockup).  Prints each step so a timeout says where it stopped; the
# text must be byte-identical afterwards and the kernel log clean.
# flip.sh [ROUNDS [FUNC...]]
set -u
ROUNDS=${1:-300}
[ $# -gt 0 ] && shift
FUNCS=${*:-__x64_sys_getpid ksys_read vfs_read}
for f in $FUNCS; do
	kinst_devtest text $f >/tmp/before.$f || { echo "FAIL: text $f"; exit 1; }
done
kinst_devtest spin 100000 & s1=$!
kinst_devtest spin 100000 & s2=$!
( while :; do cat /proc/self/stat >/dev/null; done ) & s3=$!
( while :; do sleep 10; echo "flip: uptime $(cut -d' ' -f1 /proc/uptime) s, still running"; done ) & hb=$!
echo "flip: load started"
bad=0
pids=
for f in $FUNCS; do
	( kinst_devtest flip $f "$ROUNDS"; echo $? >/tmp/rc.$f ) &
	pids="$pids $!"
done
wait $pids
kill $s1 $s2 $s3 $hb
wait 2>/dev/null
for f in $FUNCS; do
	[ "$(cat /tmp/rc.$f 2>/dev/null)" = 0 ] || { echo "FAIL: flip $f"; bad=1; }
	kinst_devtest text $f >/tmp/after.$f
	cmp -s /tmp/before.$f /tmp/after.$f || { echo "FAIL: $f text differs"; bad=1; }
done
[ $bad = 0 ] && echo "flip: $ROUNDS rounds of $FUNCS, text restored"
exit $bad
