#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Guest benchmark (not a test: prints figures, never fails on timing):
# issue 43's per-hit cost of reading C variables by name, against a bare
# record and a false --if on the same instruction, same run.  Run:
#
#   tests/vm/run-in-guest --require-module -t 1800 --append idle=poll \
#       -f "$KINST_BUILD/tests/vm/kinst_srctest.ko" \
#       -f tests/vm/testmod/kinst_srctest.c tests/bench/guest_vars_rate.sh [RUNS [R]]
#
# (RUNS writes of the module's "run" per case, default 40, each 1000
# iterations of kinst_srctest_hv's loop: 40,000 hits; R rounds, default 3.)
# The instruction: the line marked hv_body in kinst_srctest_hv, where n is
# in a register, slot in a stack slot found through the CFA, seed an entry
# value (read through a hidden entry probe) and st a 16-byte struct held
# in three registers.  Cases (kinstctl trace ... >/dev/null):
#   none        no probe (the baseline of its round)
#   bare        trace --json (the record per hit)
#   iffalse     --if 'rdi == 0x5a5a5a5a' (a program, never true: no record)
#   var_reg     --var n --json
#   var_cfa     --var slot --json
#   var_entry   --var seed --json (and its hidden entry probe's hits)
#   var_pieces  --var st --json
#   member_if   --if '$st.steps == 0' (a member of the struct in pieces in
#               the program, never true: no record)
# Per case: ns/hit = (loop time - that round's none) / hits, the median
# over rounds, and the median per-round ratio against bare.
. /kinst/lib/guest-lib.sh
kt_need_kinst
runs=${1:-40}
rounds=${2:-3}
case $runs$rounds in *[!0-9]*|'') echo "ERROR: usage: guest_vars_rate.sh [RUNS [R]]" >&2; exit 2 ;; esac
trips=1000
cases="none bare iffalse var_reg var_cfa var_entry var_pieces member_if"
kt_testmod kinst_srctest	# sets ko
src=/kinst/files/kinst_srctest.c
P=/sys/module/kinst_srctest/parameters
L=$(grep -n "L:hv_body " "$src" | cut -d: -f1)
[ -n "$L" ] || { echo "ERROR: no L:hv_body marker in $src" >&2; exit 1; }
S="kinst_srctest_hv:$L"
echo $trips >$P/trips || { echo "ERROR: write trips" >&2; exit 1; }

now_ns() { awk '/^now at / { print $3; exit }' /proc/timer_list; }
work() {
	_i=0
	while [ $_i -lt "$runs" ]; do echo 1 >$P/run || exit 1; _i=$((_i + 1)); done
}

# run_case NAME: one loop of RUNS runs under the case; prints "ns hits".
run_case() {
	case $1 in
	none) _t0=$(now_ns); work; _t1=$(now_ns); echo "$((_t1 - _t0)) 0"; return ;;
	bare) set -- --json ;;
	iffalse) set -- --if 'rdi == 0x5a5a5a5a' ;;
	var_reg) set -- --json --var n ;;
	var_cfa) set -- --json --var slot ;;
	var_entry) set -- --json --var seed ;;
	var_pieces) set -- --json --var st ;;
	member_if) set -- --if '$st.steps == 0' ;;
	esac
	kt_trace_start /tmp/vr.out /tmp/vr.err --debug-file "$ko" "$@" "$S" >/dev/null
	_t0=$(now_ns)
	work
	_t1=$(now_ns)
	kt_trace_stop >/dev/null
	kt_trace_summary /tmp/vr.err /tmp/vr.out >/dev/null
	_h=$((KT_HITS - KT_HIDDEN))
	[ "$_h" -eq $((runs * trips)) ] ||
	    echo "WARNING: $*: $_h hits for $((runs * trips)) iterations" >&2
	case $1 in --json)
		[ "$(grep -c . /tmp/vr.out)" -eq "$_h" ] ||
		    echo "WARNING: $*: $(grep -c . /tmp/vr.out) records for $_h hits" >&2 ;;
	esac
	echo "$((_t1 - _t0)) $_h"
}

# Warm-up, each case's output checked once: the values are there.
runs_saved=$runs
runs=2
for c in $cases; do run_case $c >/dev/null; done
for v in n slot seed st; do
	kt_trace_start /tmp/vr.out /tmp/vr.err --debug-file "$ko" --json --var $v "$S" >/dev/null
	echo 1 >$P/run
	kt_trace_stop >/dev/null
	jq -e --arg v $v '.vars | has($v)' /tmp/vr.out >/dev/null 2>&1 ||
	    { echo "ERROR: --var $v: no value in the records: $(head -c 300 /tmp/vr.out) $(cat /tmp/vr.err)" >&2; exit 1; }
done
runs=$runs_saved

kt_bench_rounds "$rounds" "$cases"
echo "# guest_vars_rate: $S, $runs runs x $trips iterations per case, $rounds rounds (TCG)"
awk '
	{ ns[$1, $2] = $3; hits[$1, $2] = $4; rs[$1] = 1 }
	function median(a, k,    i, j, t) {
		for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
	}
	function per_hit(r, c) { return hits[r, c] > 0 ? (ns[r, c] - ns[r, "none"]) / hits[r, c] : 0 }
	END {
		n = split("bare iffalse var_reg var_cfa var_entry var_pieces member_if", order, " ")
		for (o = 1; o <= n; o++) {
			c = order[o]; k = 0
			for (r in rs) {
				v[++k] = per_hit(r, c)
				b = per_hit(r, "bare")
				rat[k] = b > 0 ? per_hit(r, c) / b : 0
			}
			printf "%-11s %8.0f ns/hit", c, median(v, k)
			if (c != "bare") printf "   / bare: %.2f", median(rat, k)
			printf "\n"
		}
	}' /tmp/res
exit 0
