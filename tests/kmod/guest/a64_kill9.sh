#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# arm64: every instruction of busy functions armed by processes killed with
# SIGKILL under a load, cpu1 taken offline and online twice while they
# hold: the text comes back (TEXT before and after, no probe left to mask
# it), rmmod is refused while a holder lives and succeeds after.
set -u
FUNCS="vfs_read ksys_write do_sys_openat2 copy_page_to_iter"
n_funcs=4
bad=0
for f in $FUNCS; do
	a64_devcheck text $f >/tmp/before.$f || { echo "FAIL: text $f"; exit 1; }
done
pids=
for f in $FUNCS; do
	a64_devcheck hold $f >/tmp/hold.$f 2>&1 &
	pids="$pids $!"
done
n=0
for i in $(seq 1 120); do
	n=$(cat /tmp/hold.* | grep -c '^armed')
	[ "$n" -eq $n_funcs ] && break
	sleep 1
done
cat /tmp/hold.*
[ "$n" -eq $n_funcs ] || { echo "FAIL: only $n of $n_funcs holders armed"; bad=1; }
for i in 1 2 3; do
	ls -lR /sys/kernel/mm >/dev/null 2>&1
	dd if=/dev/zero of=/tmp/z bs=4k count=64 2>/dev/null
	md5sum /tmp/z /proc/self/maps >/dev/null
done
# CPU hotplug with the probes armed (the control path holds it off while
# it writes text; a dying CPU's last code is refused as cpu-dead).
for i in 1 2; do
	echo 0 >/sys/devices/system/cpu/cpu1/online &&
	    md5sum /proc/self/maps >/dev/null &&
	    echo 1 >/sys/devices/system/cpu/cpu1/online ||
	    { echo "FAIL: cpu1 offline/online round $i"; bad=1; }
done
[ "$(cat /sys/devices/system/cpu/online)" = 0-1 ] &&
    echo "cpu1 offline and online twice while armed" ||
    { echo "FAIL: cpus online: $(cat /sys/devices/system/cpu/online)"; bad=1; }
if rmmod kinst 2>/dev/null; then
	echo "FAIL: rmmod succeeded while probes were armed"
	exit 1
fi
echo "rmmod refused while armed"
kill -9 $pids
wait
for f in $FUNCS; do
	a64_devcheck text $f >/tmp/after.$f
	if cmp -s /tmp/before.$f /tmp/after.$f; then
		echo "$f: text restored"
	else
		echo "FAIL: $f: text differs after kill -9"
		bad=1
	fi
done
if rmmod kinst; then
	echo "rmmod after kill -9: ok"
else
	echo "FAIL: rmmod after kill -9"
	bad=1
fi
exit $bad
