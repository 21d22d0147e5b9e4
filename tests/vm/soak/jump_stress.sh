#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Jump-probe stress (issue 45, the jump_probes hang): ROUNDS times, count
# every instruction of three busy functions with both CPUs busy reading,
# and kill the counter with SIGKILL 0.3 s after its jumps are installed
# (the disarm then takes every jump out and every int3 after it); after
# each round no jump is left and the text is what it was.  Run two guests
# at once on a 2-core host (README, Soaks): under QEMU's TCG both vCPUs
# of about one guest in five looped for ever on an int3 memory no longer
# held while the control thread, which would have stored the byte again,
# waited for a CPU (docs/engine.md, "Text writes"; issue 45; not in
# tests/run).
# Argument: ROUNDS (default 40).  A hang is caught by the guest's soft-
# lockup panic (every CPU's backtrace on the console) or the time limit.
. /kinst/lib/guest-lib.sh
kt_need_kinst
R=${1:-40}
J=/sys/kernel/debug/kinst/jump
jv() { sed -n "s/^$1 //p" "$J"; }
funcs="vfs_read ksys_read __x64_sys_getpid"
for f in $funcs; do
	kt_text_of "$f" >/tmp/before.$f || kt_fail "cannot read the text of $f"
done
( while :; do cat /proc/self/stat >/dev/null; done ) &
w1=$!
( while :; do dd if=/dev/zero of=/dev/null bs=1 count=200 2>/dev/null; done ) &
w2=$!
r=0
while [ $r -lt "$R" ]; do
	kinstctl count $funcs >/dev/null 2>/tmp/c.err &
	c=$!
	n=0
	until [ "$(jv installed)" -gt 0 ]; do
		n=$((n + 1))
		[ $n -lt 600 ] || kt_fail "round $r: no jump installed in 60 s: $(cat /tmp/c.err)"
		sleep 0.1
	done
	sleep 0.3
	kt_log "round $r: $(jv installed) jumps installed, optimizer running: $(jv optimizing)"
	kill -9 $c
	wait $c 2>/dev/null
	kt_jumps_out "round $r" 60 $funcs
	r=$((r + 1))
done
kill $w1 $w2
wait $w1 $w2 2>/dev/null
kt_log "$R rounds; $(tr '\n' ' ' </sys/kernel/debug/kinst/textsync)"
exit 0
