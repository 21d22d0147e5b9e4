#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Every instruction of busy functions armed by processes that are then
# killed with SIGKILL while a workload runs (each holder must have armed
# and seen hits before the kill): every original byte comes back
# (TEXT before vs after, with no kinst probe left to mask anything), rmmod
# is refused while a holder lives and succeeds after, the module reloads
# and works.
set -u
FUNCS="vfs_read ksys_write do_sys_openat2 schedule_timeout copy_page_to_iter __handle_mm_fault"
bad=0
for f in $FUNCS; do
	kinst_devtest text $f >/tmp/before.$f || { echo "FAIL: text $f"; exit 1; }
done
pids=
for f in $FUNCS; do
	kinst_devtest hold $f all >/tmp/hold.$f 2>&1 &
	pids="$pids $!"
done
# Wait until every holder has armed (big functions take a while under TCG).
for i in $(seq 1 120); do
	n=$(cat /tmp/hold.* | grep -c '^armed')
	[ "$n" -eq 6 ] && break
	sleep 1
done
cat /tmp/hold.*
[ "$n" -eq 6 ] || { echo "FAIL: only $n of 6 holders armed"; bad=1; }
for i in 1 2; do
	ls -lR /sys/kernel/mm >/dev/null 2>&1
	dd if=/dev/zero of=/tmp/z bs=4k count=64 2>/dev/null
	md5sum /tmp/z /proc/self/maps >/dev/null
done
# Every holder's probes must have been hit before the kill (kinst_devtest
# hold prints "hits N" each second the total changed).  The workload goes
# on until they have.
for i in $(seq 1 60); do
	nhit=0
	for f in $FUNCS; do
		grep -q '^hits [1-9]' /tmp/hold.$f && nhit=$((nhit + 1))
	done
	[ "$nhit" -eq 6 ] && break
	dd if=/dev/zero of=/tmp/z bs=4k count=64 2>/dev/null
	cat /tmp/z /proc/self/maps >/dev/null
	sleep 1
done
for f in $FUNCS; do
	echo "$f: $(grep '^hits' /tmp/hold.$f | tail -n 1) before the kill"
done
[ "$nhit" -eq 6 ] || { echo "FAIL: only $nhit of 6 holders saw hits before the kill"; bad=1; }
if rmmod kinst 2>/dev/null; then
	echo "FAIL: rmmod succeeded while probes were armed"
	exit 1
fi
echo "rmmod refused while armed"
kill -9 $pids
wait
for f in $FUNCS; do
	kinst_devtest text $f >/tmp/after.$f
	if cmp -s /tmp/before.$f /tmp/after.$f; then
		echo "$f: text restored"
	else
		echo "FAIL: $f: text differs after kill -9"
		bad=1
	fi
done
rmmod kinst || { echo "FAIL: rmmod after the holders died"; exit 1; }
echo "rmmod ok"
insmod "$(find /kinst -name kinst.ko | head -n 1)" || { echo "FAIL: insmod again"; exit 1; }
kinst_devtest cycle __x64_sys_getpid 100 || bad=1
exit $bad
