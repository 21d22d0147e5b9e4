#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Coexistence with kprobes: a function holding a kprobe is refused by kinst
# as a whole (its int3 hides instruction boundaries), a kprobe elsewhere
# does not disturb kinst, and kinst leaves the kprobe's text alone.
set -u
T=/sys/kernel/tracing
mount -t tracefs nodev $T 2>/dev/null
[ -w $T/kprobe_events ] || { echo "SKIP: no tracefs kprobe_events"; exit 77; }
echo 'p:kinsttest ksys_read+5' >$T/kprobe_events ||
    { echo "FAIL: cannot place a kprobe at ksys_read+5"; exit 1; }
echo 1 >$T/events/kprobes/kinsttest/enable
kinst_devtest hold ksys_read all >/tmp/h 2>&1 &
p=$!
for i in $(seq 1 30); do grep -q '^armed\|^arm' /tmp/h && break; sleep 1; done
kill -9 $p
wait $p 2>/dev/null
cat /tmp/h
grep -q '^armed 0 refused [1-9]' /tmp/h ||
    { echo "FAIL: kinst armed instructions of a function holding a kprobe"; exit 1; }
echo "function with a kprobe refused"
# A kprobe in another function does not matter.
kinst_devtest cycle __x64_sys_getpid 100 >/tmp/c || { cat /tmp/c; exit 1; }
echo 0 >$T/events/kprobes/kinsttest/enable
echo >$T/kprobe_events
# An entry kprobe (at the ftrace site, offset 0): the order matters
# (kmod/linux/README.md).  Armed first, kinst refuses the whole function.
echo 'p:kinstentry vfs_write' >$T/kprobe_events ||
    { echo "FAIL: cannot place a kprobe at vfs_write's entry"; exit 1; }
kinst_devtest hold vfs_write all >/tmp/h 2>&1 &
p=$!
for i in $(seq 1 30); do grep -q '^armed\|^arm' /tmp/h && break; sleep 1; done
kill -9 $p
wait $p 2>/dev/null
cat /tmp/h
grep -q '^armed 0 refused [1-9]' /tmp/h ||
    { echo "FAIL: kinst armed instructions of a function holding an entry kprobe"; exit 1; }
echo >$T/kprobe_events
echo "entry kprobe first: function refused"
# Armed after kinst traces the function whole, it is accepted and fires.
kinst_devtest hold vfs_write all >/tmp/h 2>&1 &
p=$!
for i in $(seq 1 30); do grep -q '^armed\|^arm' /tmp/h && break; sleep 1; done
cat /tmp/h
grep -q '^armed [1-9]' /tmp/h || { kill -9 $p; echo "FAIL: kinst did not arm vfs_write"; exit 1; }
echo 'p:kinstentry vfs_write' >$T/kprobe_events ||
    { kill -9 $p; echo "FAIL: an entry kprobe after kinst was refused"; exit 1; }
echo 'hist:keys=common_pid' >$T/events/kprobes/kinstentry/trigger
echo 1 >$T/events/kprobes/kinstentry/enable
echo x >/dev/null
echo x >/dev/null
echo 0 >$T/events/kprobes/kinstentry/enable
n=$(awk '/hitcount:/ { sub(/.*hitcount: */, ""); t += $1 } END { print t + 0 }' $T/events/kprobes/kinstentry/hist)
kill -9 $p
wait $p 2>/dev/null
: >$T/events/kprobes/kinstentry/trigger
echo >$T/kprobe_events
[ "$n" -ge 2 ] || { echo "FAIL: the entry kprobe armed after kinst counted $n hits, not at least 2"; exit 1; }
echo "entry kprobe after kinst: accepted, $n hits"
echo "kprobe coexistence ok"
