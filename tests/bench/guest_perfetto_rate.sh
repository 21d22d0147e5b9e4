#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Guest benchmark (not a test: prints figures, never fails on timing):
# issue 42's cost of `latency --perfetto FILE` against the same latency run
# without it.  Run:
#
#   tests/vm/run-in-guest --require-module -t 1800 --append idle=poll \
#       tests/bench/guest_perfetto_rate.sh [N [R]]
#
# (N reads per run, default 200000; R rounds, default 3.)  Each case is one
# whole `kinstctl latency ... vfs_read -- syscall_loop read N 1` (1-byte
# reads of /dev/zero), timed from start to exit (wall, ms, to 10 ms): what a user
# waits, the file written and closed.  Cases:
#   plain     latency vfs_read (histograms only)
#   perfetto  latency --perfetto FILE vfs_read (one span per call, streamed)
#   stack     latency --perfetto FILE --by stack vfs_read (samples kept
#             until the stack tables are read at the end)
# Per case: the median over rounds, and the median per-round ratio against
# plain; the samples the file has (one per call) are checked.
. /kinst/lib/guest-lib.sh
kt_need_kinst
n=${1:-200000}
rounds=${2:-3}
case $n$rounds in *[!0-9]*|'') echo "ERROR: usage: guest_perfetto_rate.sh [N [R]]" >&2; exit 2 ;; esac
F=vfs_read
cases="plain perfetto stack"

# ms: the uptime in milliseconds (to the 10 ms /proc/uptime has).
ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }

# run_case NAME: one whole run; prints its wall ms.
run_case() {
	case $1 in
	plain) set -- ;;
	perfetto) set -- --perfetto /tmp/pf.json ;;
	stack) set -- --perfetto /tmp/pf.json --by stack ;;
	esac
	rm -f /tmp/pf.json
	_t0=$(ms)
	kinstctl latency "$@" --if 'comm == "syscall_loop"' "$F" -- syscall_loop read "$n" 1 \
	    >/dev/null 2>/tmp/pf.err || { echo "ERROR: kinstctl latency $*: $(cat /tmp/pf.err)" >&2; exit 1; }
	_t1=$(ms)
	if [ $# -gt 0 ]; then
		_w=$(sed -n 's/^kinstctl: \([0-9]*\) samples\{0,1\} written.*/\1/p' /tmp/pf.err)
		[ "${_w:-0}" -ge "$n" ] || echo "WARNING: $*: ${_w:-no} samples written for $n calls: $(cat /tmp/pf.err)" >&2
	fi
	echo $((_t1 - _t0))
}

run_case plain >/dev/null	# warm-up
kt_bench_rounds "$rounds" "$cases"
echo "# guest_perfetto_rate: latency $F, N=$n calls, $rounds rounds (TCG; wall ms of the whole run)"
awk '
	{ ms[$1, $2] = $3; rs[$1] = 1 }
	function median(a, k,    i, j, t) {
		for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
	}
	END {
		split("plain perfetto stack", order, " ")
		for (o = 1; o <= 3; o++) {
			c = order[o]; k = 0
			for (r in rs) {
				v[++k] = ms[r, c]
				rat[k] = ms[r, c] / ms[r, "plain"]
			}
			printf "%-9s %8.0f ms", c, median(v, k)
			if (c != "plain") printf "   %s / plain: %.2f (median of per-round ratios)", c, median(rat, k)
			printf "\n"
		}
	}' /tmp/res
exit 0
