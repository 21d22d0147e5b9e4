#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: rmmod of a module kinst traces fails (EAGAIN) while two sessions hold it; the kernel log names each session (pid, command, the function) when it starts holding the module, debugfs kinst/holders lists both with their probe counts; once they stop, the log says so, the list is empty and rmmod works
# scenario-needs: kinst
# scenario-timeout: 300
# scenario-options: -f "$KINST_BUILD/tests/vm/kinst_gprtest.ko"
#
# Issue 26, item 6.  The independent evidence: rmmod's own failure, the
# pids the shell started, kinstctl's own probe counts.
. /kinst/lib/guest-lib.sh
kt_need_kinst

HO=/sys/kernel/debug/kinst/holders
[ -r "$HO" ] || kt_fail "$HO is missing"
kt_testmod kinst_gprtest
m=kinst_gprtest
fn=kinst_gprtest_body
kt_expect_eq "holders before any session" 0 "$(grep -vc '^#' "$HO")"

probes_of() {	# probes_of ERR: "counting N probes"
	sed -n 's/^kinstctl: counting \([0-9]*\) probe.*/\1/p' "$1"
}

dmesg -c >/dev/null
kt_count_start /dev/null /tmp/a.err "$m:$fn"
A=$KT_COUNT_PID
kt_count_start /dev/null /tmp/b.err "$m:$fn+0" "$m:$fn"
B=$KT_COUNT_PID
cat "$HO"
kt_expect_eq "holders of $m" 2 "$(grep -c "^$m " "$HO")"
kt_expect_eq "holder A: pid, command, probes" "$m $A kinstctl $(probes_of /tmp/a.err)" \
    "$(awk -v p=$A '$2 == p' "$HO")"
kt_expect_eq "holder B: pid, command, probes" "$m $B kinstctl $(probes_of /tmp/b.err)" \
    "$(awk -v p=$B '$2 == p' "$HO")"
for p in $A $B; do
	dmesg | grep -q "kinst: pid $p (kinstctl) traces $m:$fn: module $m cannot be unloaded until it stops" ||
	    kt_fail "the kernel log does not name pid $p as holding $m: $(dmesg | grep kinst: | tail -n 3)"
done
kt_expect_eq "log lines for pid $B holding $m (once per session and module)" 1 \
    "$(dmesg | grep -c "kinst: pid $B (kinstctl) traces $m:")"
if rmmod "$m" 2>/tmp/rm.err; then
	kt_fail "rmmod $m succeeded while kinst traced it"
fi
kt_log "rmmod while held: $(cat /tmp/rm.err)"
grep -q "Resource temporarily unavailable\|in use" /tmp/rm.err ||
    kt_fail "rmmod failed otherwise than expected: $(cat /tmp/rm.err)"
kill -INT $A
kt_wait_pid $A 90 "kinstctl count A" || kt_fail "kinstctl count A failed: $(cat /tmp/a.err)"
dmesg | grep -q "kinst: pid $A (kinstctl) no longer holds module $m" ||
    kt_fail "the kernel log does not say pid $A let $m go"
kt_expect_eq "holders after A stopped" "$B" "$(awk -v m=$m '$1 == m { print $2 }' "$HO")"
rmmod "$m" 2>/dev/null && kt_fail "rmmod $m succeeded while B still traced it"
kill -9 $B
wait $B 2>/dev/null
dmesg | grep -q "kinst: pid $B (kinstctl) no longer holds module $m" ||
    kt_fail "the kernel log does not say pid $B (killed) let $m go"
kt_expect_eq "holders at the end" 0 "$(grep -vc '^#' "$HO")"
rmmod "$m" || kt_fail "rmmod $m failed after every session stopped"
exit 0
