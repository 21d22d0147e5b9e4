#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: count/hist/latency --by stack --folded: FlameGraph's collapsed format checked by a strict parser (frames without spaces or ';', root first, the probe last, a positive weight), weights adding up to the hits (count, hist) and the workload's K (--if comm); the same stacks as jq folding the --json output of the same workload; --folded=functions names every frame by a kallsyms text symbol; latency's weights are nanoseconds
# scenario-needs: kinst
# scenario-timeout: 400
#
# Issue 26, item 1.  The independent evidence: the workload's read count K,
# the summary's hit count, jq's own folding of --json stacks, /proc/kallsyms.
. /kinst/lib/guest-lib.sh
kt_need_kinst

f=ksys_read
off=$(kt_first_traceable "$f") || kt_fail "no traceable instruction in $f"
hoff=$(printf '0x%x' "$off")
k=$(( 100 + $(od -An -tu2 -N2 /dev/urandom) % 200 ))
kt_log "count --by stack --folded at $f+$off, K = $k reads of 7 bytes"

# strict FILE: every line "frame;frame;... weight", frames non-empty without
# spaces or ';', weight a positive decimal; prints the number of lines.
strict() {
	awk '
	!/^[^ ;]+(;[^ ;]+)* [1-9][0-9]*$/ { print "bad line " NR ": " $0 > "/dev/stderr"; bad = 1 }
	{ n++ }
	END { if (bad) exit 1; print n + 0 }' "$1"
}
wsum() {
	awk '{ s += $NF } END { print s + 0 }' "$1"
}

# 1. Every reader, while the workload reads K times: weights add up to hits.
kinstctl count --by stack --folded "kernel:$f+$off" -- \
    sh -c "syscall_loop read $k 7 >/dev/null" >/tmp/f.txt 2>/tmp/f.err ||
    kt_fail "kinstctl count --by stack --folded failed: $(cat /tmp/f.err)"
cat /tmp/f.err
head -n 5 /tmp/f.txt
n=$(strict /tmp/f.txt) || kt_fail "count --folded is not the collapsed format"
[ "$n" -ge 1 ] || kt_fail "count --folded printed nothing"
hits=$(sed -n 's/^kinstctl: \([0-9]*\) hits, .*/\1/p' /tmp/f.err)
kt_expect_eq "sum of the folded weights == the summary's hits" "$hits" "$(wsum /tmp/f.txt)"
kt_expect_eq "folded lines whose leaf is not $f+$hoff" 0 \
    "$(awk '{ sub(/ [0-9]+$/, ""); m = split($0, a, ";"); if (a[m] != "'"$f+$hoff"'") print }' /tmp/f.txt | grep -c .)"
kt_expect_eq "folded lines, all distinct" "$n" "$(sed 's/ [0-9]*$//' /tmp/f.txt | sort -u | grep -c .)"
grep -q ';do_syscall_64+0x[0-9a-f]*;' /tmp/f.txt || kt_fail "no do_syscall_64 frame in the middle of a stack"

# 2. The workload only: the same stacks as jq folds from --json, weight K.
kinstctl count --by stack --folded --if 'comm == "syscall_loop"' "kernel:$f+$off" -- \
    sh -c "syscall_loop read $k 7 >/dev/null" >/tmp/w.txt 2>/tmp/w.err ||
    kt_fail "kinstctl count --folded --if failed: $(cat /tmp/w.err)"
strict /tmp/w.txt >/dev/null || kt_fail "count --folded --if is not the collapsed format"
kt_expect_eq "--if comm: sum of the weights" "$k" "$(wsum /tmp/w.txt)"
kinstctl count --json --by stack --if 'comm == "syscall_loop"' "kernel:$f+$off" -- \
    sh -c "syscall_loop read $k 7 >/dev/null" >/tmp/w.json 2>/dev/null ||
    kt_fail "kinstctl count --by stack --json failed"
jq -r 'select(.type == "count") | [.stack | reverse | .[] |
    if .function == null then .address
    elif .module == "kernel" then "\(.function)+0x\(.offset | tostring | ltrimstr(""))"
    else "\(.module):\(.function)+0x\(.offset)" end] | join(";")' /tmp/w.json >/tmp/j.raw
# jq prints offsets in decimal: make them hex as kinstctl writes them.
awk -F';' '{
	out = ""
	for (i = 1; i <= NF; i++) {
		fr = $i
		if (match(fr, /\+0x[0-9]+$/)) {
			d = substr(fr, RSTART + 3)
			fr = substr(fr, 1, RSTART - 1) sprintf("+0x%x", d)
		}
		out = out (i > 1 ? ";" : "") fr
	}
	print out
}' /tmp/j.raw | sort -u >/tmp/j.stacks
sed 's/ [0-9]*$//' /tmp/w.txt | sort -u >/tmp/w.stacks
cmp /tmp/j.stacks /tmp/w.stacks ||
    kt_fail "folded stacks differ from jq's folding of --json: $(diff /tmp/j.stacks /tmp/w.stacks | head -n 6 | tr '\n' ' ')"

# 3. --folded=functions: bare names, each a text symbol of /proc/kallsyms.
kinstctl count --by stack --folded=functions --if 'comm == "syscall_loop"' "kernel:$f+$off" -- \
    sh -c "syscall_loop read $k 7 >/dev/null" >/tmp/n.txt 2>/dev/null ||
    kt_fail "kinstctl count --folded=functions failed"
strict /tmp/n.txt >/dev/null || kt_fail "--folded=functions is not the collapsed format"
kt_expect_eq "--folded=functions: sum of the weights" "$k" "$(wsum /tmp/n.txt)"
grep -q '+0x' /tmp/n.txt && kt_fail "--folded=functions has offsets: $(head -n 2 /tmp/n.txt)"
sed 's/ [0-9]*$//' /tmp/n.txt | tr ';' '\n' | sort -u >/tmp/n.frames
awk '$2 == "t" || $2 == "T" { print $3 }' /proc/kallsyms | sort -u >/tmp/ksyms
kt_expect_eq "--folded=functions frames that are no kallsyms text symbol" 0 \
    "$(grep -v -x -F -f /tmp/ksyms /tmp/n.frames | grep -c .)"
[ "$(grep -c . /tmp/n.frames)" -ge 2 ] || kt_fail "--folded=functions: fewer than 2 distinct frames"
kt_expect_eq "--folded=functions: leaf" "$f" "$(awk '{ sub(/ [0-9]+$/, ""); m = split($0, a, ";"); print a[m] }' /tmp/n.txt | sort -u)"

# 4. hist --by stack --folded: weights are the counts.
kinstctl hist --by stack --folded --value rdx --if 'comm == "syscall_loop"' "kernel:$f+$off" -- \
    sh -c "syscall_loop read $k 7 >/dev/null" >/tmp/h.txt 2>/dev/null ||
    kt_fail "kinstctl hist --by stack --folded failed"
strict /tmp/h.txt >/dev/null || kt_fail "hist --folded is not the collapsed format"
kt_expect_eq "hist --folded: sum of the weights" "$k" "$(wsum /tmp/h.txt)"

# 5. latency --by stack --folded: weights are nanoseconds.  Bounded from
# both sides by facts outside kinstctl: no read(2) of the kernel takes
# less than 100 ns, even on hardware (weights that were call counts, or
# microseconds, sum to far less than 100 * k); and the calls, each inside
# the run, add up to no more than the run's wall time on every CPU
# (/proc/uptime, centiseconds, one added for rounding).
t0=$(sed 's/ .*//; s/\.//' /proc/uptime)
kinstctl latency --by stack --folded --if 'comm == "syscall_loop"' "$f" -- \
    sh -c "syscall_loop read $k 7 >/dev/null" >/tmp/l.txt 2>/tmp/l.err ||
    kt_fail "kinstctl latency --by stack --folded failed: $(cat /tmp/l.err)"
t1=$(sed 's/ .*//; s/\.//' /proc/uptime)
strict /tmp/l.txt >/dev/null || kt_fail "latency --folded is not the collapsed format"
head -n 3 /tmp/l.txt
ws=$(wsum /tmp/l.txt)
[ "$ws" -ge $((100 * k)) ] || kt_fail "latency --folded: $ws ns for $k calls (under 100 ns a call: not nanoseconds)"
wall=$(( (t1 - t0 + 1) * 10000000 * $(nproc) ))
[ "$ws" -le "$wall" ] || kt_fail "latency --folded: $ws ns for $k calls in a run of at most $wall CPU-ns"
kt_log "latency --folded: $(wsum /tmp/l.txt) ns in $(grep -c . /tmp/l.txt) stacks for $k calls"

# 6. Refused: without --by stack, with --json, a bad value.
for bad in "--folded" "--by comm --folded" "--by stack --folded --json" "--by stack --folded=lines"; do
	kinstctl count $bad "kernel:$f+$off" >/dev/null 2>/tmp/b.err
	kt_expect_eq "exit status of count $bad" 2 "$?"
	grep -q -- '--folded' /tmp/b.err || kt_fail "count $bad: no word about --folded: $(cat /tmp/b.err)"
done
exit 0
