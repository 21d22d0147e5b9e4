#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Arm and disarm (by SIGKILL of the holder, and by close) every instruction
# of hot functions, ROUNDS times, while both CPUs keep hitting them: probes
# are removed and trampolines freed with hits in flight.  The text must be
# byte-identical afterwards and the kernel log clean (run-in-guest checks).
# churn.sh [ROUNDS [EXTRA]]: EXTRA more getpid spinners (issue 15's variant).
set -u
ROUNDS=${1:-8}
EXTRA=${2:-0}
FUNCS="vfs_read ksys_read __x64_sys_getpid"
for f in $FUNCS; do
	kinst_devtest text $f >/tmp/before.$f || { echo "FAIL: text $f"; exit 1; }
done
( while :; do cat /proc/self/stat >/dev/null; done ) &
w1=$!
( while :; do kinst_devtest bench 2000 >/dev/null 2>&1; done ) &
w2=$!
extra=
i=0
while [ $i -lt "$EXTRA" ]; do
	kinst_devtest spin 100000 & extra="$extra $!"
	i=$((i + 1))
done
r=0
bad=0
while [ $r -lt "$ROUNDS" ]; do
	pids=
	for f in $FUNCS; do
		kinst_devtest hold $f all >/tmp/hold.$f.$r 2>&1 &
		pids="$pids $!"
	done
	sleep 2
	kill -9 $pids
	wait $pids 2>/dev/null
	# And a probe closed normally, while hits fly.
	kinst_devtest cycle ksys_read 0 >/tmp/cycle.$r 2>&1 || { echo "FAIL: cycle on ksys_read:"; cat /tmp/cycle.$r; bad=1; }
	r=$((r + 1))
	echo "round $r done ($(cut -d' ' -f1 /proc/uptime) s)"
done
kill $w1 $w2 $extra
pkill -f "kinst_devtest bench" 2>/dev/null	# the loop's current child
wait 2>/dev/null
cat /tmp/hold.* | sort | uniq -c
for f in $FUNCS; do
	kinst_devtest text $f >/tmp/after.$f
	cmp -s /tmp/before.$f /tmp/after.$f || { echo "FAIL: $f text differs"; bad=1; }
done
[ $bad = 0 ] && echo "churn: $ROUNDS rounds, text restored"
exit $bad
