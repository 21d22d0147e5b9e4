#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: many sessions per probe (issue 25): trace ksys_read+OFF and count the whole of ksys_read at the same time, each with its own --if: both see exactly the workload's K reads, debugfs kinst/sites and list-offsets say 2 sessions; kill -9 of either leaves the other's counts exact and its probe armed, the text byte-identical once both are gone; a jump-optimized site shared by two sessions keeps its jump when one exits mid-workload, and a --no-optimize third turns it back into an int3; three sessions on overlapping whole functions count exactly across a CPU going offline and online
# scenario-needs: kinst
# scenario-timeout: 900
#
# The independent evidence: the number of reads the workload makes, the
# text read back from memory (debugfs kinst/read), debugfs kinst/jump.
. /kinst/lib/guest-lib.sh
kt_need_kinst

S=/sys/kernel/debug/kinst/sites
J=/sys/kernel/debug/kinst/jump
[ -r "$S" ] || kt_fail "$S is missing"
jv() { sed -n "s/^$1 //p" "$J"; }
sites() { grep -vc '^#' "$S"; }
# site_sessions FUNC+0xOFF: the sessions debugfs shows for that site (or none).
site_sessions() { awk -v f="$1" '$2 == f { print $4 }' "$S"; }
site_kind() { awk -v f="$1" '$2 == f { print $5 }' "$S"; }

f=ksys_read
off=$(kt_first_traceable "$f") || kt_fail "no traceable instruction in $f"
hoff=$(printf '0x%x' "$off")
W='comm == "syscall_loop"'

funcs="ksys_read vfs_read __x64_sys_read"
for g in $funcs; do
	kt_text_of "$g" >/tmp/before.$g || kt_fail "cannot read the text of $g"
	grep -qv '^ok ' /tmp/before.$g && kt_fail "reading the text of $g: $(grep -v '^ok ' /tmp/before.$g | head -n 1)"
done
text_same() {	# text_same WHEN: every function's text as before
	for g in $funcs; do
		kt_text_of "$g" >/tmp/after.$g
		cmp -s /tmp/before.$g /tmp/after.$g ||
		    kt_fail "$1: the text of $g differs: $(diff /tmp/before.$g /tmp/after.$g | head -n 6)"
	done
}
# The entry offset of FUNC in a count --json output (kt_first_traceable's).
entry_off() { kt_first_traceable "$1"; }

# count_at FILE FUNC OFF: the count row of FUNC+OFF in a count --json output.
count_at() {
	jq -r --arg f "$2" --argjson o "$3" \
	    'select(.type == "count" and .function == $f and .offset == $o) | .count' "$1"
}
reads() { syscall_loop read "$1" 7 >/dev/null || kt_fail "syscall_loop read $1 failed"; }
rnd() { echo $(( $1 + $(od -An -tu2 -N2 /dev/urandom) % $1 )); }

# ---- 1. trace ksys_read+OFF and count ksys_read, together ----
k=$(rnd 100)
kt_log "1. trace $f+$hoff and count $f, each --if comm, K = $k reads"
kt_trace_start /tmp/t.json /tmp/t.err --json --if "$W" "$f+$off"
kt_count_start /tmp/c.json /tmp/c.err --json --if "$W" "$f"
kt_expect_eq "debugfs sites: sessions on $f+$hoff" 2 "$(site_sessions "$f+$hoff")"
kt_expect_eq "debugfs sites: sessions on another instruction of $f" 1 \
    "$(awk -v f="$f+$hoff" '$2 != f && $2 ~ /^ksys_read\+/ { print $4 }' "$S" | sort -u)"
kinstctl list-offsets --json "$f+$off" >/tmp/lo.json || kt_fail "list-offsets $f+$off failed"
kt_expect_eq "list-offsets --json: sessions on $f+$hoff" 2 \
    "$(jq -r 'select(.type == "insn") | .sessions' /tmp/lo.json)"
kinstctl list-offsets "$f+$off" | grep -q 'traced now by 2 sessions' ||
    kt_fail "list-offsets does not say the instruction is traced by 2 sessions"
reads "$k"
kill -INT $KT_COUNT_PID
kt_wait_pid $KT_COUNT_PID 90 "kinstctl count" || kt_fail "kinstctl count failed: $(cat /tmp/c.err)"
kt_trace_stop || kt_fail "kinstctl trace failed: $(cat "$KT_TRACE_ERR")"
cat /tmp/t.err /tmp/c.err
kt_trace_summary /tmp/t.err /tmp/t.json
kt_expect_eq "trace: records" "$k" "$KT_PRINTED"
kt_expect_eq "count: $f+$hoff" "$k" "$(count_at /tmp/c.json "$f" "$off")"
grep -q '^kinstctl: 1 of 1 probe shared with other kinstctl sessions (up to 2 ' /tmp/t.err ||
    kt_fail "trace's summary does not say its probe was shared"
grep -q '^kinstctl: 1 of [0-9]* probes shared with other kinstctl sessions (up to 2 ' /tmp/c.err ||
    kt_fail "count's summary does not say one probe was shared"
kt_expect_eq "count --json summary: shared" 1 "$(jq -r 'select(.type == "summary") | .shared' /tmp/c.json)"
kt_expect_eq "sites after both" 0 "$(sites)"
text_same "after both ended"

# ---- 2. kill -9 of either, the other still running ----
for victim in count trace; do
	k1=$(rnd 50) k2=$(rnd 50)
	kt_log "2. kill -9 of $victim mid-way: K1 = $k1 before, K2 = $k2 after"
	kt_trace_start /tmp/t.json /tmp/t.err --json --if "$W" "$f+$off"
	kt_count_start /tmp/c.json /tmp/c.err --json --if "$W" "$f"
	reads "$k1"
	if [ $victim = count ]; then
		kill -9 $KT_COUNT_PID
		wait $KT_COUNT_PID 2>/dev/null
		kt_expect_eq "after kill -9 of count: sites" 1 "$(sites)"
		kt_expect_eq "after kill -9 of count: sessions on $f+$hoff" 1 "$(site_sessions "$f+$hoff")"
		reads "$k2"
		kt_trace_stop || kt_fail "kinstctl trace failed: $(cat /tmp/t.err)"
		kt_trace_summary /tmp/t.err /tmp/t.json
		kt_expect_eq "trace after count's kill -9: records" $((k1 + k2)) "$KT_PRINTED"
	else
		kill -9 $KT_TRACE_PID
		wait $KT_TRACE_PID 2>/dev/null
		kt_expect_eq "after kill -9 of trace: sessions on $f+$hoff" 1 "$(site_sessions "$f+$hoff")"
		kt_expect_eq "after kill -9 of trace: sites (count's own)" \
		    "$(sed -n 's/^kinstctl: ksys_read: \([0-9]*\) instructions armed.*/\1/p' /tmp/c.err)" \
		    "$(sites)"
		reads "$k2"
		kill -INT $KT_COUNT_PID
		kt_wait_pid $KT_COUNT_PID 90 "kinstctl count" || kt_fail "kinstctl count failed: $(cat /tmp/c.err)"
		kt_expect_eq "count after trace's kill -9: $f+$hoff" $((k1 + k2)) \
		    "$(count_at /tmp/c.json "$f" "$off")"
	fi
	kt_expect_eq "sites after both" 0 "$(sites)"
	text_same "after kill -9 of $victim"
done

# ---- 3. a jump site shared: one leaves mid-workload; --no-optimize ----
kt_log "3. jump-optimized $f+$hoff shared by two sessions"
kt_count_start /tmp/c.json /tmp/c.err --json --if "$W" "$f+$off"
n=0
until [ "$(site_kind "$f+$hoff")" = jump ]; do
	n=$((n + 1))
	[ $n -lt 600 ] || kt_fail "$f+$hoff was not jump-optimized in 60 s (is it jump-optimizable? $(cat "$S"))"
	sleep 0.1
done
kt_trace_start /tmp/t.json /tmp/t.err --json --if "$W" "$f+$off"
kt_expect_eq "shared jump site: kind" jump "$(site_kind "$f+$hoff")"
kt_expect_eq "shared jump site: sessions" 2 "$(site_sessions "$f+$hoff")"
h0=$(jv hits)
# The workload: runs of 100 reads until told to stop; /tmp/wl.n counts the
# runs completed (replaced by a rename: never read half written).
rm -f /tmp/wl.stop
echo 0 >/tmp/wl.n
( i=0; while [ ! -e /tmp/wl.stop ]; do syscall_loop read 100 7 >/dev/null || exit 1
	i=$((i + 1)); echo $i >/tmp/wl.n.t; mv /tmp/wl.n.t /tmp/wl.n; done ) &
wl=$!
# count leaves once the workload's reads are coming through the jump...
n=0
until [ $(( $(jv hits) - h0 )) -ge 50 ]; do
	n=$((n + 1))
	[ $n -lt 600 ] || kt_fail "no hit through the jump in 60 s"
	sleep 0.1
done
kill -INT $KT_COUNT_PID
kt_wait_pid $KT_COUNT_PID 90 "kinstctl count" || kt_fail "kinstctl count failed: $(cat /tmp/c.err)"
# ... and the workload goes on: two more runs complete after count is gone.
r0=$(cat /tmp/wl.n)
n=0
until [ "$(cat /tmp/wl.n)" -ge $((r0 + 2)) ]; do
	n=$((n + 1))
	kill -0 $wl 2>/dev/null || kt_fail "the workload stopped: runs $(cat /tmp/wl.n)"
	[ $n -lt 1200 ] || kt_fail "the workload made no progress for 120 s after count left"
	sleep 0.1
done
touch /tmp/wl.stop
kt_wait_pid $wl 120 "the workload" || kt_fail "the workload failed"
k1=$(( 100 * $(cat /tmp/wl.n) ))
c1=$(count_at /tmp/c.json "$f" "$off")
kt_log "count left after ${c1:-?} of the workload's $k1 reads (at least 200 after it)"
[ -n "$c1" ] && [ "$c1" -gt 0 ] && [ "$c1" -le $((100 * (r0 + 1))) ] ||
    kt_fail "count's probe: '$c1' hits, the workload $k1 reads, $((100 * (r0 + 1))) at most before count left"
kt_expect_eq "after one left: kind" jump "$(site_kind "$f+$hoff")"
kt_expect_eq "after one left: sessions" 1 "$(site_sessions "$f+$hoff")"
k2=$(rnd 50)
reads "$k2"
# Every read of every process takes the jump, the script's own included.
[ $(( $(jv hits) - h0 )) -ge $((k1 + k2)) ] ||
    kt_fail "hits through the jump: $(( $(jv hits) - h0 )), fewer than the workload's $((k1 + k2)) reads"
# A --no-optimize subscriber: an int3 site for everybody.
kt_count_start /tmp/n.json /tmp/n.err --json --no-optimize --if "$W" "$f+$off"
kt_expect_eq "with a --no-optimize subscriber: kind" int3 "$(site_kind "$f+$hoff")"
kt_expect_eq "with a --no-optimize subscriber: jumps installed" 0 "$(jv installed)"
k3=$(rnd 50)
h0=$(jv hits)
reads "$k3"
kt_expect_eq "hits through a jump with --no-optimize" 0 $(( $(jv hits) - h0 ))
kill -INT $KT_COUNT_PID
kt_wait_pid $KT_COUNT_PID 90 "kinstctl count --no-optimize" || kt_fail "count --no-optimize failed: $(cat /tmp/n.err)"
kt_expect_eq "--no-optimize count" "$k3" "$(count_at /tmp/n.json "$f" "$off")"
kt_trace_stop || kt_fail "kinstctl trace failed: $(cat /tmp/t.err)"
kt_trace_summary /tmp/t.err /tmp/t.json
kt_expect_eq "trace on the shared site: records" $((k1 + k2 + k3)) "$KT_PRINTED"
kt_expect_eq "jumps installed at the end" 0 "$(jv installed)"
kt_expect_eq "sites at the end" 0 "$(sites)"
text_same "after the shared jump site"

# ---- 4. three sessions, overlapping functions, CPU hotplug between ----
CPU=/sys/devices/system/cpu/cpu1/online
[ -w "$CPU" ] || kt_fail "$CPU is not writable (2 CPUs expected)"
kt_log "4. three sessions on overlapping whole functions; cpu1 offline and online between workloads"
kt_count_start /tmp/a.json /tmp/a.err --json --if "$W" ksys_read vfs_read
A=$KT_COUNT_PID
kt_count_start /tmp/b.json /tmp/b.err --json --if "$W" vfs_read __x64_sys_read
B=$KT_COUNT_PID
kt_count_start /tmp/c.json /tmp/c.err --json --if "$W" __x64_sys_read ksys_read
C=$KT_COUNT_PID
kt_expect_eq "sessions on vfs_read's entry" 2 "$(site_sessions "vfs_read+$(printf '0x%x' "$(entry_off vfs_read)")")"
k1=$(rnd 30) k2=$(rnd 30) k3=$(rnd 30)
reads "$k1"
echo 0 >"$CPU" || kt_fail "cpu1 offline failed"
reads "$k2"
echo 1 >"$CPU" || kt_fail "cpu1 online failed"
reads "$k3"
k=$((k1 + k2 + k3))
for p in $A $B $C; do kill -INT $p; done
for p in $A $B $C; do kt_wait_pid $p 90 "kinstctl count" || kt_fail "a kinstctl count failed"; done
for s in a:ksys_read a:vfs_read b:vfs_read b:__x64_sys_read c:__x64_sys_read c:ksys_read; do
	g=${s#*:}
	kt_expect_eq "session ${s%%:*}: $g entry" "$k" "$(count_at /tmp/${s%%:*}.json "$g" "$(entry_off "$g")")"
done
kt_expect_eq "sites at the end" 0 "$(sites)"
text_same "after three sessions and a hotplug"
exit 0
