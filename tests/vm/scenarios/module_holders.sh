#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: rmmod of a module kinst traces fails (EAGAIN) while two sessions hold it; the kernel log names each session (pid, command, the function) when it starts holding the module, debugfs kinst/holders lists both with their probe counts; once they stop, the log says so, the list is empty and rmmod works; one session over two modules and a kernel function holds each module in its own row with that module's probes alone (counted by sessions of one function each), never the kernel, and lets both go
# scenario-needs: kinst
# scenario-timeout: 300
# scenario-options: -f "$KINST_BUILD/tests/vm/kinst_gprtest.ko" -f "$KINST_BUILD/tests/vm/kinst_lattest.ko"
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

# 2. One session C over two modules and a kernel function; D and E count
# one module's function each (their probe counts are the reference).
kt_testmod kinst_gprtest
kt_testmod kinst_lattest
m2=kinst_lattest
fn2=kinst_lattest_wait
kt_count_start /dev/null /tmp/c.err "$m:$fn" "$m2:$fn2" ksys_read
C=$KT_COUNT_PID
kt_count_start /dev/null /tmp/d.err "$m:$fn"
D=$KT_COUNT_PID
kt_count_start /dev/null /tmp/e.err "$m2:$fn2"
E=$KT_COUNT_PID
cat "$HO"
nd=$(probes_of /tmp/d.err) ne=$(probes_of /tmp/e.err) nc=$(probes_of /tmp/c.err)
[ "$nc" -gt $((nd + ne)) ] || kt_fail "C's $nc probes are not more than $m's $nd and $m2's $ne (ksys_read's are missing)"
kt_expect_eq "C's rows: one per module, each with that module's probes" \
    "$m $C kinstctl $nd|$m2 $C kinstctl $ne" \
    "$(awk -v p=$C '$2 == p' "$HO" | sort | tr '\n' '|' | sed 's/|$//')"
kt_expect_eq "D's row" "$m $D kinstctl $nd" "$(awk -v p=$D '$2 == p' "$HO")"
kt_expect_eq "E's row" "$m2 $E kinstctl $ne" "$(awk -v p=$E '$2 == p' "$HO")"
kt_expect_eq "rows (the kernel is never one)" 4 "$(grep -vc '^#' "$HO")"
kt_expect_eq "the header's count" "# module pid comm probes (4)" "$(head -n 1 "$HO")"
kt_expect_eq "log lines for C (one per module)" 2 "$(dmesg | grep -c "kinst: pid $C (kinstctl) traces ")"
for p in $D $E; do
	kill -INT $p
	kt_wait_pid $p 90 "kinstctl count $p" || kt_fail "kinstctl count $p failed"
done
for mm in $m $m2; do
	rmmod "$mm" 2>/dev/null && kt_fail "rmmod $mm succeeded while C still traced it"
done
kill -INT $C
kt_wait_pid $C 90 "kinstctl count C" || kt_fail "kinstctl count C failed: $(cat /tmp/c.err)"
for mm in $m $m2; do
	dmesg | grep -q "kinst: pid $C (kinstctl) no longer holds module $mm" ||
	    kt_fail "the kernel log does not say pid $C let $mm go"
	rmmod "$mm" || kt_fail "rmmod $mm failed after C stopped"
done
kt_expect_eq "holders at the end (C)" 0 "$(grep -vc '^#' "$HO")"
exit 0
