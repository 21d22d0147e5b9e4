#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Guest benchmark (not a test: prints figures, never fails on timing): two
# builds of kinst.ko against each other in one guest, each loaded in turn
# (rmmod, insmod), in alternating order, so that both see the same host
# load.  The per-run ratios of guest_latency_rate.sh move by a third from
# one guest to the next; in one guest, in pairs, a change of a fifth shows.
# Run (A the old build, B the new; both must speak the ABI of the guest's
# kinstctl):
#
#   git worktree add /tmp/old REV && make -C /tmp/old/kmod/linux if-kdir BUILD=/tmp/old/build-kmod
#   tests/vm/run-in-guest --require-module -t 1800 \
#       -f /tmp/old/build-kmod/kinst.ko:/kinst/files/a.ko \
#       -f build/kmod-linux/kinst.ko:/kinst/files/b.ko \
#       tests/bench/guest_module_ab.sh [-2] [N [PAIRS [KINSTCTL-ARGS...]]]
#
# N getpid(2) calls per run (default 5000), PAIRS pairs (default 8), each
# run under `kinstctl KINSTCTL-ARGS` (default: latency --clock local
# __x64_sys_getpid; the function must be one getpid calls, such as
# __x64_sys_getpid, and the command one that says "timing" or "counting"
# when armed: latency, count, hist).  A run's ns per call is its loop's time
# less the mean of two untraced loops, one just before and one just after,
# over N.  Prints every run, the median per module, B/A of the medians, and
# in how many pairs B was the faster.
# -2: two CPUs at once.  Every loop, untraced or traced, runs on CPU 0
# while another loop of getpid calls keeps CPU 1 busy in the same
# function (started before it, killed after it): what the probes cost when
# two CPUs hit them together (a counter or a cache line both write, which
# each write takes from the other CPU's cache).  Needs a guest with two
# CPUs (run-in-guest's default).
# Under run-in-guest --profile FILE, each traced loop is a sampling window
# labelled MODULE.PAIR (a.0, b.0, ...): FILE says where each build's time
# went.  The figures of such a run are inflated by the sampling.
. /kinst/lib/guest-lib.sh
kt_need_kinst
both=0
if [ "${1:-}" = -2 ]; then both=1; shift; fi
n=${1:-5000}
pairs=${2:-8}
case $n$pairs in *[!0-9]*|'') echo "ERROR: usage: guest_module_ab.sh [-2] [N [PAIRS [KINSTCTL-ARGS...]]]" >&2; exit 2 ;; esac
if [ $both = 1 ]; then
	[ "$(grep -c '^processor' /proc/cpuinfo)" -ge 2 ] || { echo "ERROR: -2 needs a guest with two CPUs" >&2; exit 2; }
	command -v taskset >/dev/null || { echo "ERROR: -2 needs taskset" >&2; exit 2; }
fi
if [ $# -gt 2 ]; then shift 2; else set -- latency --clock local __x64_sys_getpid; fi
for m in a b; do
	[ -f /kinst/files/$m.ko ] || { echo "ERROR: no /kinst/files/$m.ko (run-in-guest -f BUILD.ko:/kinst/files/$m.ko)" >&2; exit 2; }
done

# loop N: N getpid calls; prints loop_ns.  With -2, on CPU 0 while CPU 1
# calls getpid too (for longer than this loop takes: killed after it).
loop() {
	if [ $both = 0 ]; then
		kt_loop_ns getpid "$1"
		echo "$KT_LOOP_NS"
		return
	fi
	taskset -c 1 syscall_loop getpid $(($1 * 16)) >/dev/null 2>&1 &
	_bg=$!
	sleep 0.2
	taskset -c 0 sh -c ". /kinst/lib/guest-lib.sh; kt_loop_ns getpid $1; echo \$KT_LOOP_NS"
	kill $_bg 2>/dev/null
	wait $_bg 2>/dev/null
}

# load M: kinst.ko replaced by /kinst/files/M.ko.
load() {
	rmmod kinst 2>/dev/null
	insmod "$1" || { echo "ERROR: insmod $1" >&2; exit 1; }
}

# traced LABEL ARGS...: one loop of n calls under `kinstctl ARGS`, once it
# has armed and its jump probes have settled; prints loop_ns.
traced() {
	_label=$1
	shift
	kt_armed_start /dev/null /tmp/k.err "$@"
	_p=$KT_COUNT_PID
	kt_jump_settle
	kt_profile_on "$_label"
	_ns=$(loop "$n")
	kt_profile_off
	kill -INT $_p
	wait $_p
	echo "$_ns"
}

loop "$n" >/dev/null	# warm-up
: >/tmp/ab
p=0
while [ $p -lt "$pairs" ]; do
	if [ $((p % 2)) = 0 ]; then order="a b"; else order="b a"; fi
	for m in $order; do
		load /kinst/files/$m.ko
		b0=$(loop "$n")
		t=$(traced "$m.$p" "$@")
		b1=$(loop "$n")
		echo "$p $m $t $b0 $b1" | awk -v n="$n" '{ printf "%s %s %.0f\n", $1, $2, ($3 - ($4 + $5) / 2) / n }' >>/tmp/ab
	done
	p=$((p + 1))
done
load /kinst/modules/kinst.ko

if [ $both = 1 ]; then cpus="on CPU 0 with CPU 1 calling getpid too"; else cpus="one loop"; fi
echo "# guest_module_ab: kinstctl $*, N=$n getpid calls, $pairs pairs, $cpus (TCG; ns per call over the untraced loops)"
[ "${KINST_PROFILE:-0}" != 1 ] || echo "# sampled (run-in-guest --profile): these figures are inflated by the sampling"
awk '
	function median(a, k,    i, j, t) {
		for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
	}
	{ v[$2, ++k[$2]] = $3; by[$1, $2] = $3; runs[$2] = runs[$2] " " $3; ps[$1] = 1 }
	END {
		for (m = 0; m < 2; m++) {
			name = m ? "b" : "a"
			for (i = 1; i <= k[name]; i++) x[i] = v[name, i]
			med[name] = median(x, k[name])
			printf "%s: %.0f ns/call (median); runs:%s\n", name, med[name], runs[name]
		}
		w = 0; np = 0
		for (p in ps) { np++; if (by[p, "b"] < by[p, "a"]) w++ }
		printf "b/a: %.2f (medians); b faster in %d of %d pairs\n", med["b"] / med["a"], w, np
	}' /tmp/ab
exit 0
