#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Guest benchmark (not a test: prints figures, never fails on timing):
# issue 27's per-call cost of `kinstctl latency FUNC` against the peers that
# time a function here, in the same guest run.  Run:
#
#   tests/vm/run-in-guest --require-module -t 1200 --append idle=poll \
#       tests/bench/guest_latency_rate.sh [N [R]]
#
# (N getpid calls per run, default 5000; R rounds, default 5.)  idle=poll
# keeps a TCG guest from being stranded in HLT (guest_actions_rate.sh), but
# it distorts one figure here: the idle vCPU's poll loop executes `pause`,
# which QEMU's TCG ends the translated code on, so that vCPU thread takes
# and drops QEMU's global lock (the BQL) over and over, and every HPET read
# of the busy vCPU (an MMIO access, done under that lock) waits for it.
# The guest's clocksource is the HPET under TCG, so `latency` (two
# ktime_get_mono_fast_ns() reads a call) has measured 9,087 ns a call with
# idle=poll and 3,724 without (host perf: futex waits on the BQL from the
# vCPU threads' loop and from the MMIO path), while the tracefs peers on
# "mono", whose reader keeps the other vCPU busy, moved little, and
# latency_local (no HPET read) moved as little as they did (2,675 and
# 3,166).  Run it both ways.
# Function:
# __x64_sys_getpid, under a loop of N getpid(2) calls (syscall_loop, timing
# itself: SYSCALL_LOOP_NS).  Cases:
#   none     nothing armed (the baseline of its round)
#   count    kinstctl count at the function's entry (one probe, a bare
#            in-kernel count: the cost of one kinst hit)
#   count_ret  kinstctl count FUNC:return (a probe on each return point)
#   latency  kinstctl latency __x64_sys_getpid (a start and an end probe, the
#            per-thread state, a histogram in the kernel)
#   latency_local  the same with --clock local (local_clock(): no HPET read
#            where the clocksource is the HPET, as under TCG)
#   kretprobe  a kretprobe event alone (tracefs, trace_pipe read by cat):
#            the peer of count_ret
#   kp_pair  bcc/bpftrace's method with tracefs: a kprobe and a kretprobe on
#            the function, each an event with its timestamp, read from
#            trace_pipe by cat (>/dev/null); the subtraction is left to
#            the reader, as a bpftrace script does in its map
#   fgraph   the function_graph tracer restricted to the function
#            (set_graph_function, max_graph_depth 1), trace_pipe read by cat
#   kp_pair_mono, fgraph_mono  the same two with trace_clock "mono"
#            (ktime_get_mono_fast_ns): the clock kinst's latency reads, and
#            bpftrace's nsecs and bcc's bpf_ktime_get_ns; tracefs's default
#            "local" (sched_clock(), the raw TSC) is cheaper where the
#            clocksource is not the TSC (TCG's HPET), and not kept in step
#            across CPUs there (docs/engine.md, "Which clock")
# Per case and round: ns/call = (loop time - that round's `none`) / N; then
# the median over rounds and the median per-round ratio against latency;
# then count_ret against kretprobe, latency against kp_pair and fgraph, each
# on tracefs's default clock and on "mono", and latency_local against the
# default-clock pair and fgraph.
# The "check:" lines say how many of kinstctl's probes were jump-optimized
# (no trap per hit) and, from debugfs kinst/jump, how many hits came
# through a jump in that warm-up run.
# Where the time goes: under run-in-guest --profile FILE, after the rounds,
# one more loop of P calls (the third argument, default 100000) per case
# but none (or per case of CASES, the fourth argument, quoted: "count
# latency_local"), each in its own sampling window (kt_profile_on CASE): FILE then
# has, per case, the functions and kinst.ko's instructions the vCPUs were
# sampled in.  Those loops are not timed: sampling stops the guest.
. /kinst/lib/guest-lib.sh
kt_need_kinst
n=${1:-5000}
rounds=${2:-5}
pn=${3:-100000}
pcases=${4:-}
case $n$rounds$pn in *[!0-9]*|'') echo "ERROR: usage: guest_latency_rate.sh [N [R [P [CASES]]]]" >&2; exit 2 ;; esac
T=$KT_TRACING
F=__x64_sys_getpid
cases="none count count_ret latency latency_local kretprobe kp_pair fgraph kp_pair_mono fgraph_mono"

# loop N: N getpid calls, timed; prints loop_ns.  Sampled, when $prof is
# a case's name (--profile): the window is the loop alone.
prof=
loop() {
	[ -z "$prof" ] || kt_profile_on "$prof"
	kt_loop_ns getpid "$1"
	[ -z "$prof" ] || kt_profile_off
	echo "$KT_LOOP_NS"
}

KJ=/sys/kernel/debug/kinst/jump

tracefs_off() {
	echo 0 >"$T/tracing_on"
	echo local >"$T/trace_clock"
	echo nop >"$T/current_tracer"
	[ ! -d "$T/events/kinstbench" ] || echo 0 >"$T/events/kinstbench/enable"
	: >"$T/kprobe_events"
	: >"$T/set_graph_function"
	: >"$T/set_ftrace_filter"
	: >"$T/trace"
}

# kinst_case WHAT SED ARGS...: one loop of n calls under `kinstctl ARGS`
# (its jump probes settled first); prints its loop_ns; a WARNING when the
# summary (the number SED extracts) counted fewer than n calls (WHAT).
kinst_case() {
	_what=$1 _sed=$2
	shift 2
	kt_armed_start /dev/null /tmp/k.err "$@"
	_p=$KT_COUNT_PID
	kt_jump_settle
	_ns=$(loop "$n")
	kill -INT $_p
	wait $_p
	_got=$(sed -n "$_sed" /tmp/k.err)
	[ "${_got:-0}" -ge "$n" ] || echo "WARNING: kinstctl $1: not $_what: $(cat /tmp/k.err)" >&2
	echo "$_ns"
}

# tracefs_loop: one loop of n calls with tracing on and trace_pipe read
# (to /dev/null, as a tool would read it); prints its loop_ns; tracing off.
tracefs_loop() {
	echo 1 >"$T/tracing_on"
	cat "$T/trace_pipe" >/dev/null &
	_c=$!
	_ns=$(loop "$n")
	kill $_c
	wait $_c 2>/dev/null
	tracefs_off
	echo "$_ns"
}

# run_case NAME: one loop of n calls under case NAME; prints its loop_ns.
run_case() {
	case $1 in
	none)
		loop "$n" ;;
	count)
		kinst_case "$n aggregated" 's/^kinstctl: [0-9]* hits, \([0-9]*\) aggregated.*/\1/p' \
		    count "$F+$entry" ;;
	count_ret)
		kinst_case "$n aggregated" 's/^kinstctl: [0-9]* hits, \([0-9]*\) aggregated.*/\1/p' \
		    count "$F:return" ;;
	latency)
		kinst_case "$n samples" 's/^kinstctl: \([0-9]*\) samples.*/\1/p' latency "$F" ;;
	latency_local)
		kinst_case "$n samples" 's/^kinstctl: \([0-9]*\) samples.*/\1/p' latency --clock local "$F" ;;
	kretprobe)
		tracefs_off
		echo "r:kinstbench/lat_ret $F \$retval" >>"$T/kprobe_events" || { echo "ERROR: kretprobe" >&2; exit 1; }
		echo 1 >"$T/events/kinstbench/enable"
		tracefs_loop ;;
	kp_pair|kp_pair_mono)
		tracefs_off
		[ "$1" = kp_pair ] || echo mono >"$T/trace_clock" || { echo "ERROR: trace_clock mono" >&2; exit 1; }
		echo "p:kinstbench/lat_entry $F" >>"$T/kprobe_events" || { echo "ERROR: kprobe" >&2; exit 1; }
		echo "r:kinstbench/lat_ret $F \$retval" >>"$T/kprobe_events" || { echo "ERROR: kretprobe" >&2; exit 1; }
		echo 1 >"$T/events/kinstbench/enable"
		tracefs_loop ;;
	fgraph|fgraph_mono)
		tracefs_off
		[ "$1" = fgraph ] || echo mono >"$T/trace_clock" || { echo "ERROR: trace_clock mono" >&2; exit 1; }
		# (never unfiltered: the global tracer patches every function,
		# which TCG has been seen not to survive)
		echo "$FT" >"$T/set_ftrace_filter" || { echo "ERROR: set_ftrace_filter $FT" >&2; exit 1; }
		echo "$FT" >"$T/set_graph_function" || { echo "ERROR: set_graph_function $FT" >&2; exit 1; }
		echo 1 >"$T/max_graph_depth"
		echo function_graph >"$T/current_tracer"
		tracefs_loop ;;
	esac
}

entry=$(kt_first_traceable "$F") || { echo "ERROR: $F has no traceable instruction" >&2; exit 1; }
FT=$(kt_ftrace_name "$F")	# the name ftrace knows it by
tracefs_off
# Warm-up (page cache, code paths), then R rounds in a rotated order.
jhits() { sed -n 's/^hits //p' "$KJ" 2>/dev/null | head -n 1; }
for c in $cases; do
	_j0=$(jhits)
	run_case "$c" >/dev/null
	case $c in
	count|count_ret|latency|latency_local)
		_j1=$(jhits)
		echo "check: $c: $(grep 'jump-optimized' /tmp/k.err | head -n 1); hits through a jump: $((${_j1:-0} - ${_j0:-0})) (debugfs)" ;;
	esac
done
kt_bench_rounds "$rounds" "$cases"
echo "# guest_latency_rate: $F, N=$n calls, $rounds rounds (TCG; ns per call over the untraced loop)"
awk -v n="$n" '
	{ ns[$1, $2] = $3; rs[$1] = 1; cs[$2] = 1 }
	function median(a, k,    i, j, t) {
		for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
	}
	END {
		no = split("count count_ret latency latency_local kretprobe kp_pair fgraph kp_pair_mono fgraph_mono", order, " ")
		for (o = 1; o <= no; o++) {
			c = order[o]; k = 0; m = 0
			for (r in rs) {
				per[++k] = (ns[r, c] - ns[r, "none"]) / n
				if (c != "latency") rat[++m] = (ns[r, c] - ns[r, "none"]) / (ns[r, "latency"] - ns[r, "none"])
			}
			printf "%-8s %10.0f ns/call", c, median(per, k)
			if (c != "latency") printf "   %s / latency: %.2f (median of per-round ratios)", c, median(rat, m)
			printf "\n"
		}
		np = split("count_ret kretprobe latency kp_pair latency fgraph latency kp_pair_mono latency fgraph_mono latency_local kp_pair latency_local fgraph", pr, " ")
		for (o = 1; o < np; o += 2) {
			k = 0
			for (r in rs) q[++k] = (ns[r, pr[o]] - ns[r, "none"]) / (ns[r, pr[o + 1]] - ns[r, "none"])
			printf "%s / %s: %.2f (median of per-round ratios)\n", pr[o], pr[o + 1], median(q, k)
		}
	}' /tmp/res
tracefs_off
if [ "${KINST_PROFILE:-0}" = 1 ]; then
	n=$pn
	for c in ${pcases:-$cases}; do
		[ "$c" != none ] || continue
		case " $cases " in *" $c "*) ;; *) echo "ERROR: no case $c (cases: $cases)" >&2; exit 2 ;; esac
		prof=$c
		run_case "$c" >/dev/null
	done
	echo "# profiled: one loop of $pn calls per case (run-in-guest --profile)"
fi
exit 0
