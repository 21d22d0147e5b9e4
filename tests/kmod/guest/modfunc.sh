#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# A function of a loadable module ("loop:lo_release"): it resolves only
# under its module's name, arming every instruction holds the module (rmmod
# refused), and SIGKILL of the holder restores the text and releases it.
set -u
insmod /kinst/files/loop.ko || { echo "FAIL: insmod loop.ko"; exit 1; }
kinst_devtest text loop:lo_release >/tmp/before || { echo "FAIL: text"; exit 1; }
if kinst_devtest text kernel:lo_release >/dev/null; then
	echo "FAIL: kernel:lo_release resolved to a module function"
	exit 1
fi
kinst_devtest hold loop:lo_release all >/tmp/hold 2>&1 &
p=$!
for i in $(seq 1 60); do grep -q '^armed' /tmp/hold && break; sleep 1; done
cat /tmp/hold
grep -q '^armed [1-9]' /tmp/hold || { echo "FAIL: not armed"; exit 1; }
if rmmod loop 2>/dev/null; then
	echo "FAIL: rmmod loop succeeded while its text was probed"
	exit 1
fi
echo "rmmod loop refused while probed"
kill -9 $p
wait
kinst_devtest text loop:lo_release >/tmp/after
cmp -s /tmp/before /tmp/after || { echo "FAIL: loop text differs"; exit 1; }
echo "loop text restored"
rmmod loop || { echo "FAIL: rmmod loop after the holder died"; exit 1; }
echo "rmmod loop ok"
