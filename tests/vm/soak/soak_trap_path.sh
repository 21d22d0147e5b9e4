#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: soak (fixed seed, printed; the seed fixes the draw): kernel functions drawn at random among those list-offsets calls traceable, armed whole in batches under a workload with CPU 1 offlined and onlined between batches, for a time budget; text restored, counts balanced, clean log; prints coverage
# scenario-needs: kinst
# scenario-timeout: 1200
# scenario-options: -m 2G -f "$KINST_BUILD/tests/kmod/kinst_devtest" -f "$top/tests/vm/soak/busy-functions.txt"
# scenario-args: 20261130 240 24 420 busy
#
# Issue 8, proof item 3.  Run by hand (README, "Soaks"); a short run of it
# is tests/vm/scenarios/soak_trap_path_short.sh (tests/run).
#
# Arguments: SEED NFUNCS BATCH BUDGET [busy|sample|all|ftrace-list
# [STALL_DEADLINE]].
#
# The draw.  The pool is every function the function tracer can trace
# (available_filter_functions, read only: fixed for a kernel) whose name is
# a unique kernel text symbol (list-offsets reads those by name), sorted;
# awk's generator seeded with SEED shuffles it: SEED fixes the order in
# which every function of the kernel can be drawn.  Then, by mode:
# - busy (the default): keep, in that order, the functions listed in
#   busy-functions.txt (shipped next to this script with -f; one name per
#   line, # comments): the functions that ran during this workload on
#   Debian's 6.1 kernel.  Nothing is patched to choose them, and the draw
#   is fully determined by SEED, the list and the kernel.
# - sample: find busy functions now, with kinst itself: chunks of the
#   shuffled pool are armed at their first traceable instruction only (one
#   probe each) while the workload runs, and the functions hit are kept.
#   For another kernel; slow under TCG (about 2 minutes per 200 functions,
#   1 in 20 of which is busy).
# - all: keep every one (most never run: few hits).
# - ftrace-list: print the functions the function tracer sees during one
#   run of the workload, as "busy-function NAME" lines, and stop: how
#   busy-functions.txt was made (by hand: README, "Soaks").  This
#   enables the function tracer on every function, which patches ~37,000
#   sites with text_poke_bp: under QEMU's multi-threaded TCG that once left
#   a CPU trapping forever on a stale int3 (README, "Soaks"), so no test
#   does it.
# The first NFUNCS in that order that list-offsets calls traceable (at
# least one instruction; the module's check-only arm decides) are chosen.
# The log prints a digest of the chosen list to compare runs.
#
# The run.  BATCH functions at a time are armed whole by one kinstctl
# trace while the workload runs; after each batch: kinstctl's summary
# balances (hits = delivered + dropped), every function's live text
# (kinst_devtest text) equals its text before, the workload's output
# equals the untraced run's; then CPU 1 goes offline and online.  No batch
# starts once BUDGET seconds have passed since the first one started; the
# batches not run are reported (timing never fails the soak).
#
# Telling a hang from slowness.  Every batch start, arm and end goes to
# the kernel console too (/dev/kmsg: "kinst-soak: ..." lines with the
# uptime and the hits), so the console log of a killed guest shows where it
# was and how fast it went.  A watchdog in the guest dumps every CPU's
# backtrace (sysrq l) and the blocked tasks (sysrq w) to the console if a
# batch makes no progress at all (no record, no message, no workload
# output) for STALL_DEADLINE seconds (argument 6, default 240), and the soak then
# fails; a slow batch that still produces records is left alone.  It
# watches a batch only until kinstctl has exited: the checks of the output
# after that (a grep over every record) produce nothing it could see and,
# under a starved TCG, once took longer than the deadline (a false alarm
# with both CPUs in user space).  A CPU
# stuck in the kernel trips the soft-lockup detector (panic, all CPUs'
# backtraces) on its own.
. /kinst/lib/guest-lib.sh
kt_need_kinst
command -v kinst_devtest >/dev/null || kt_fail "kinst_devtest is not in the guest (-f)"

seed=${1:-20261130}
nfuncs=${2:-240}
batch=${3:-24}
budget=${4:-900}
mode=${5:-busy}
deadline=${6:-240}
case $mode in busy|sample|all|ftrace-list) ;; *) kt_fail "mode '$mode': busy, sample, all or ftrace-list" ;; esac
kt_log "soak: seed $seed, $nfuncs functions, batches of $batch, budget ${budget}s, pool: $mode"

up() { cut -d' ' -f1 /proc/uptime; }
# note TEXT: to the script's output and the kernel console
note() {
	kt_log "[$(up)] $*"
	echo "kinst-soak: $*" >/dev/kmsg
}

mkdir -p /tmp/s/in
seq 1 2000 | awk '{ printf "%08d %s\n", ($1 * 7919) % 100003, $1 }' >/tmp/s/in/a
cat >/tmp/s/work.sh <<'WL'
cd /tmp/s/in || exit 1
sort -k2,2n a | md5sum
sort -r a | sha256sum
rm -rf /tmp/s/copy && cp -r /tmp/s/in /tmp/s/copy && md5sum /tmp/s/copy/a
ls -l /proc/self/ >/dev/null
ps >/dev/null
grep -c 7 a
WL
sh /tmp/s/work.sh >/tmp/s/out0 2>&1 || kt_fail "untraced workload failed"

T=/sys/kernel/tracing
awk '$2 ~ /^[tT]$/ && $4 == "" { c[$3]++ } END { for (n in c) if (c[n] == 1) print n }' \
    /proc/kallsyms | sort >/tmp/s/unique
sed 's/ .*//' $T/available_filter_functions | sort -u >/tmp/s/ftraceable
awk 'NR == FNR { u[$1] = 1; next } u[$1]' /tmp/s/unique /tmp/s/ftraceable >/tmp/s/pool
kt_log "pool: $(wc -l </tmp/s/pool) functions (unique kernel text names the function tracer lists; informational)"
[ "$(wc -l </tmp/s/pool)" -gt "$nfuncs" ] || kt_fail "pool too small: $(wc -l </tmp/s/pool) functions"
awk -v seed="$seed" '{ f[NR] = $0 } END {
	srand(seed)
	for (i = NR; i > 1; i--) { j = int(rand() * i) + 1; t = f[i]; f[i] = f[j]; f[j] = t }
	for (i = 1; i <= NR; i++) print f[i]
}' /tmp/s/pool >/tmp/s/shuffled

case $mode in
ftrace-list)
	# By hand only (see the header): the list busy mode reads.
	echo 0 >$T/tracing_on
	echo function >$T/current_tracer || kt_fail "no function tracer"
	echo 4096 >$T/buffer_size_kb
	: >$T/trace
	echo 1 >$T/tracing_on
	sh /tmp/s/work.sh >/dev/null 2>&1
	echo 0 >$T/tracing_on
	sed -n 's/.*: \([A-Za-z_][A-Za-z0-9_.]*\) <-.*/\1/p' $T/trace | sort -u >/tmp/s/busy
	echo nop >$T/current_tracer
	awk 'NR == FNR { u[$1] = 1; next } u[$1] { print "busy-function", $1 }' \
	    /tmp/s/pool /tmp/s/busy
	exit 0
	;;
busy)
	list=/kinst/files/busy-functions.txt
	[ -r $list ] || kt_fail "busy mode needs $list (run-in-guest -f tests/vm/soak/busy-functions.txt)"
	sed 's/#.*//' $list | awk 'NF { print $1 }' | sort -u >/tmp/s/busy
	# Keep the seeded order.
	awk 'NR == FNR { b[$1] = 1; next } b[$1]' /tmp/s/busy /tmp/s/shuffled >/tmp/s/sh.b
	mv /tmp/s/sh.b /tmp/s/shuffled
	kt_log "busy: $(wc -l </tmp/s/shuffled) of the $(wc -l </tmp/s/busy) listed functions are in the pool of this kernel (informational)"
	[ -s /tmp/s/shuffled ] || kt_fail "no function of $list in this kernel's pool"
	;;
esac

# The first nfuncs in that order that list-offsets calls traceable (live:
# the module's check-only arm decides), asked $ask at a time.  In sample
# mode, each chunk's traceable functions are then armed at their first
# traceable instruction only (one probe each, kinst's own arming) while
# the workload runs, and only the functions hit are kept (the function
# tracer is not used: see the header); it looks at no more than $maxlook
# functions.
ask=$nfuncs
[ "$mode" = sample ] && ask=$((nfuncs * 4 > 200 ? nfuncs * 4 : 200))
maxlook=$(wc -l </tmp/s/shuffled)
[ "$mode" = sample ] && maxlook=$((ask * 12))
: >/tmp/s/chosen.n
off=0 total=$(wc -l </tmp/s/shuffled) samples=0 sampled=0
while [ "$(wc -l </tmp/s/chosen.n)" -lt "$nfuncs" ] && [ $off -lt "$total" ] &&
    [ $off -lt "$maxlook" ]; do
	sed -n "$((off + 1)),$((off + ask))p" /tmp/s/shuffled >/tmp/s/ask
	off=$((off + ask))
	# shellcheck disable=SC2046
	kinstctl list-offsets --json $(cat /tmp/s/ask) >/tmp/s/lo.json 2>/tmp/s/lo.err ||
	    kt_fail "kinstctl list-offsets failed: $(head -n 3 /tmp/s/lo.err)"
	jq -r 'select(.type == "insn" and (.verdict | startswith("refused") | not)) |
	    "\(.function) \(.offset)"' /tmp/s/lo.json >/tmp/s/ok.insn
	awk '{ n[$1]++ } END { for (f in n) print f, n[f] }' /tmp/s/ok.insn >/tmp/s/ok.n
	if [ "$mode" = sample ] && [ -s /tmp/s/ok.n ]; then
		# One probe per function: its first traceable instruction.
		awk '!seen[$1]++ { printf "%s+0x%x\n", $1, $2 }' /tmp/s/ok.insn >/tmp/s/entry
		# shellcheck disable=SC2046
		kt_trace_start /tmp/s/e.out /tmp/s/e.err --json $(cat /tmp/s/entry)
		sh /tmp/s/work.sh >/dev/null 2>&1
		kt_trace_stop
		st=$?
		[ "$st" = 0 ] || kt_fail "busy sampling: kinstctl trace exited $st: $(tail -n 3 /tmp/s/e.err)"
		kt_trace_summary /tmp/s/e.err /tmp/s/e.out
		samples=$((samples + 1)) sampled=$((sampled + $(grep -c . /tmp/s/entry)))
		jq -r 'select(.type == "hit") | .function' /tmp/s/e.out | sort -u >/tmp/s/busy
		awk 'NR == FNR { b[$1] = 1; next } b[$1]' /tmp/s/busy /tmp/s/ok.n >/tmp/s/ok.b
		mv /tmp/s/ok.b /tmp/s/ok.n
		note "busy sampling $samples: $(grep -c . /tmp/s/ok.n) of $(grep -c . /tmp/s/entry) functions hit ($KT_HITS hits)"
	fi
	# In draw order.
	awk 'NR == FNR { n[$1] = $2; next } ($1 in n) { print $1, n[$1] }' \
	    /tmp/s/ok.n /tmp/s/ask >>/tmp/s/chosen.n
done
[ "$mode" = sample ] &&
    kt_log "sample: $(wc -l </tmp/s/chosen.n) functions hit by their first traceable instruction among $sampled armed in $samples sampling runs (this run's sample; informational)"
head -n "$nfuncs" /tmp/s/chosen.n >/tmp/s/c && mv /tmp/s/c /tmp/s/chosen.n
cut -d' ' -f1 /tmp/s/chosen.n >/tmp/s/chosen
ninsn=$(awk '{ s += $2 } END { print s + 0 }' /tmp/s/chosen.n)
nchosen=$(wc -l </tmp/s/chosen)
kt_log "drawn: $nchosen functions ($off looked at), $ninsn traceable instructions; draw digest $(md5sum </tmp/s/chosen | cut -c1-12)"
[ "$nchosen" -gt 0 ] || kt_fail "nothing traceable among the drawn functions"

# The watchdog: while a batch traces (/tmp/s/batch.start exists: from its
# start until kinstctl has exited), a batch
# that makes no progress (no byte added to kinstctl's output or messages or
# to the workload's output) for $deadline s is taken for a hang: every
# CPU's backtrace and the blocked tasks go to the console, and the soak
# fails after the batch (or run-in-guest's time limit ends it).  A slow
# batch that still produces records is left alone.
(
	sig= since=$(cut -d. -f1 /proc/uptime)
	while [ ! -e /tmp/s/over ]; do
		sleep 5
		now=$(cut -d. -f1 /proc/uptime)
		if [ ! -e /tmp/s/batch.start ]; then
			sig= since=$now
			continue
		fi
		cur=$(cat /tmp/s/t.out /tmp/s/t.err /tmp/s/out1 2>/dev/null | wc -c)
		if [ "$cur" != "$sig" ]; then
			sig=$cur since=$now
			continue
		fi
		# Looked at again: under a starved TCG this loop can stall
		# between its test above and here while the batch ends.
		if [ $((now - since)) -ge "$deadline" ] && [ -e /tmp/s/batch.start ]; then
			echo "kinst-soak: watchdog: no progress for $((now - since)) s in $(cat /tmp/s/batch.name): backtraces follow" >/dev/kmsg
			echo l >/proc/sysrq-trigger
			echo w >/proc/sysrq-trigger
			: >/tmp/s/watchdog
			since=$now
		fi
	done
) &
wd=$!

cpu=/sys/devices/system/cpu/cpu1/online
hot=no
[ -w $cpu ] && hot=yes
b=0 tot_hits=0 tot_probes=0 funcs_hit=0 tot_funcs=0
awk -v b="$batch" '{ print > sprintf("/tmp/s/batch.%03d", int((NR - 1) / b)) }' /tmp/s/chosen
nb=$(ls /tmp/s/batch.* | wc -l)
skipped=0
# The budget counts from here: the preparation above is bounded by itself.
t0=$(cut -d. -f1 /proc/uptime)
note "preparation done; batches start (budget ${budget}s)"
for bf in /tmp/s/batch.*; do
	if [ $(( $(cut -d. -f1 /proc/uptime) - t0 )) -ge "$budget" ]; then
		skipped=$((skipped + 1))
		continue
	fi
	b=$((b + 1))
	fl=$(tr '\n' ' ' <"$bf")
	kt_log "batch $b/$nb: $fl"
	for f in $fl; do kinst_devtest text "$f" >"/tmp/s/before.$f" 2>&1 || kt_fail "text $f"; done
	rm -f /tmp/s/t.out /tmp/s/t.err /tmp/s/out1
	echo "batch $b/$nb" >/tmp/s/batch.name
	cut -d. -f1 /proc/uptime >/tmp/s/batch.start
	note "batch $b/$nb start: $(echo $fl | wc -w) functions, $tot_hits hits so far"
	kt_trace_start /tmp/s/t.out /tmp/s/t.err --json $fl
	armed=$(sed -n 's/^kinstctl: tracing \([0-9]*\) probes.*/\1/p' /tmp/s/t.err)
	note "batch $b/$nb armed: $armed probes"
	sh /tmp/s/work.sh >/tmp/s/out1 2>&1 || kt_fail "workload failed in batch $b"
	kt_trace_stop
	st=$?
	# The tracer has exited: what follows is this script's own checks of
	# its output (a grep over every line, minutes under a starved TCG),
	# which change none of the files the watchdog watches.
	rm -f /tmp/s/batch.start
	[ "$st" = 0 ] || kt_fail "batch $b: kinstctl trace exited $st: $(tail -n 5 /tmp/s/t.err)"
	cmp -s /tmp/s/out0 /tmp/s/out1 || kt_fail "batch $b: workload output differs when traced"
	kt_trace_summary /tmp/s/t.err /tmp/s/t.out
	hitf=$(grep -o '"function":"[^"]*"' /tmp/s/t.out | sort -u | grep -c .)
	tot_hits=$((tot_hits + KT_HITS)) tot_probes=$((tot_probes + armed)) funcs_hit=$((funcs_hit + hitf))
	tot_funcs=$((tot_funcs + $(echo $fl | wc -w)))
	note "batch $b/$nb done: $armed probes, $KT_HITS hits ($KT_DELIVERED delivered, $KT_DROPPED dropped), $hitf functions hit"
	[ ! -e /tmp/s/watchdog ] || kt_fail "batch $b made no progress for ${deadline}s (watchdog); backtraces in the console log"
	for f in $fl; do
		kinst_devtest text "$f" >"/tmp/s/after.$f" 2>&1 || kt_fail "text $f after"
		cmp -s "/tmp/s/before.$f" "/tmp/s/after.$f" || kt_fail "batch $b: $f text not restored"
	done
	rm -f /tmp/s/t.out
	if [ $hot = yes ]; then
		echo 0 >$cpu || kt_fail "offline CPU 1 after batch $b"
		echo 1 >$cpu || kt_fail "online CPU 1 after batch $b"
	fi
done
: >/tmp/s/over
wait $wd
kt_expect_eq "CPUs online" "0-1" "$(cat /sys/devices/system/cpu/online)"
[ "$b" -gt 0 ] || kt_fail "no batch ran within the budget"
# The text synchronizations: how many found a CPU slow to answer and had to
# store the written bytes again (kinst_linux_os.c, "Text writes").
ts=/sys/kernel/debug/kinst/textsync
[ -r $ts ] && kt_log "text synchronizations: $(tr '\n' ' ' <$ts)(informational)"
note "soak covered: seed $seed ($mode), $tot_funcs functions, $tot_probes probes in $b of $nb batches ($skipped not started: budget ${budget}s), $tot_hits hits, $funcs_hit functions hit, $(( $(cut -d. -f1 /proc/uptime) - t0 )) s of batches; CPU hotplug between batches: $hot (informational)"
exit 0
