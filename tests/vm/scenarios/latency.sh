#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: return probes and latency on kinst_lattest.ko: count --by '$retval' FUNC:return gives each (negative, signed) return code of an int function its exact count; latency FUNC gives exactly one sample per call, the busy-waiting path and the early-return path each in their own key (--by '$retval') with the right times, and agrees within 25% (fastest call and mean) with the kernel's function_graph tracer timing the same calls; latency FROM TO around the busy-wait call gives its time, once per call; recursion gives one sample per activation keyed by $entry(rdi) (the depth at the entry), the outer ones longer; a pair whose TO never follows FROM yields no sample and counts the starts never closed; a spec naming more than one instruction, $retval off a return point, $entry outside latency are one-line errors; clean kernel log
# scenario-needs: kinst
# scenario-timeout: 420
# scenario-options: -f "$KINST_BUILD/tests/vm/kinst_lattest.ko"
#
# kinst_lattest.c's header says what a round calls.  Its functions have no
# BTF (a test module): their types come from its DWARF (--debug-file).
. /kinst/lib/guest-lib.sh
kt_need_kinst

ko=/kinst/files/kinst_lattest.ko
[ -f "$ko" ] || kt_fail "$ko is missing (built by CMake from tests/vm/testmod)"
insmod "$ko" || kt_fail "insmod kinst_lattest.ko failed"
P=/sys/module/kinst_lattest/parameters
dbg="--debug-file $ko"
wait_us=2000 rec_us=300 rounds=8
echo $wait_us >$P/wait_us || kt_fail "write wait_us"
echo $rec_us >$P/rec_us || kt_fail "write rec_us"
run="echo $rounds >$P/run"

# field JSON KEY FIELD: FIELD of the hist object whose key is KEY.
field() {
	jq -r -s --argjson k "$2" "map(select(.type == \"hist\" and .key == \$k)) | .[0].$3 // \"none\"" "$1"
}
summary() {
	jq -r -s "map(select(.type == \"summary\")) | .[0].$2" "$1"
}

# 1. count --by '$retval' at every return point of an int function.
base=$(sed -n 's/^rounds=//p' $P/run)
kinstctl count --json $dbg --by '$retval' kinst_lattest_err:return -- sh -c "$run" \
    >/tmp/c.json 2>/tmp/c.err || kt_fail "count --by \$retval failed: $(cat /tmp/c.err)"
want=$(i=0; while [ $i -lt $rounds ]; do
	case $(( (base + i) % 4 )) in 0) echo -2 ;; 1) echo -11 ;; 2) echo -4 ;; 3) echo 7 ;; esac
	i=$((i + 1)); done | sort -n | uniq -c | awk '{ print $2 "=" $1 }' | tr '\n' ' ')
got=$(jq -r 'select(.type == "count") | "\(.key)=\(.count)"' /tmp/c.json | sort -n | tr '\n' ' ')
kt_expect_eq "count --by \$retval kinst_lattest_err:return (signed codes)" "$want" "$got"

# 2. latency FUNC, with function_graph timing the same calls.
echo 0 >"$KT_TRACING/tracing_on"
echo nop >"$KT_TRACING/current_tracer"
echo kinst_lattest_wait >"$KT_TRACING/set_ftrace_filter" || kt_fail "set_ftrace_filter"
echo kinst_lattest_wait >"$KT_TRACING/set_graph_function" || kt_fail "set_graph_function"
echo 1 >"$KT_TRACING/max_graph_depth"
echo function_graph >"$KT_TRACING/current_tracer" || kt_fail "no function_graph tracer"
: >"$KT_TRACING/trace"
echo 1 >"$KT_TRACING/tracing_on"
kinstctl latency --json $dbg --by '$retval' kinst_lattest_wait -- sh -c "$run" \
    >/tmp/l.json 2>/tmp/l.err || kt_fail "latency kinst_lattest_wait failed: $(cat /tmp/l.err)"
echo 0 >"$KT_TRACING/tracing_on"
grep -v '^ *#' "$KT_TRACING/trace" | grep 'kinst_lattest_wait' |
    sed -n 's/.*[^0-9.]\([0-9][0-9]*\.[0-9]*\) us .*/\1/p' >/tmp/fg.txt
echo nop >"$KT_TRACING/current_tracer"
: >"$KT_TRACING/set_graph_function"
: >"$KT_TRACING/set_ftrace_filter"
kt_log "latency kinst_lattest_wait: $(tail -n 1 /tmp/l.err)"
kt_expect_eq "latency: samples (two calls a round)" $((2 * rounds)) "$(summary /tmp/l.json samples)"
kt_expect_eq "latency: starts" $((2 * rounds)) "$(summary /tmp/l.json starts)"
kt_expect_eq "latency: ends without a start" 0 "$(summary /tmp/l.json ends_without_start)"
kt_expect_eq "latency: starts never closed" 0 "$(summary /tmp/l.json starts_never_closed)"
kt_expect_eq "latency: busy-waiting calls (\$retval $wait_us)" $rounds "$(field /tmp/l.json $wait_us count)"
kt_expect_eq "latency: early returns (\$retval -22)" $rounds "$(field /tmp/l.json -22 count)"
slow_min=$(field /tmp/l.json $wait_us min) slow_mean=$(field /tmp/l.json $wait_us mean)
fast_max=$(field /tmp/l.json -22 max)
# udelay may wait a little less than asked (its calibration): 90%.
[ "$slow_min" -ge $((wait_us * 900)) ] ||
    kt_fail "latency: the fastest busy-waiting call took $slow_min ns, under 90% of udelay's $wait_us us"
[ "$fast_max" -lt "$slow_min" ] ||
    kt_fail "latency: an early return ($fast_max ns) as slow as a busy wait ($slow_min ns)"
# function_graph: the calls over 1 ms are the busy-waiting ones.
fg_n=$(awk '$1 >= 1000' /tmp/fg.txt | wc -l)
kt_expect_eq "function_graph: busy-waiting calls" $rounds "$fg_n"
fg_min=$(awk '$1 >= 1000 { v = $1 * 1000; if (m == "" || v < m) m = v } END { printf "%d", m }' /tmp/fg.txt)
fg_mean=$(awk '$1 >= 1000 { s += $1 * 1000; n++ } END { printf "%d", s / n }' /tmp/fg.txt)
kt_log "busy-waiting calls: kinst min $slow_min ns, mean $slow_mean ns; function_graph min $fg_min ns, mean $fg_mean ns"
awk -v a="$slow_min" -v b="$fg_min" -v c="$slow_mean" -v d="$fg_mean" 'BEGIN {
	r1 = a / b; r2 = c / d
	exit !(r1 > 0.75 && r1 < 1.25 && r2 > 0.75 && r2 < 1.25) }' ||
    kt_fail "latency and function_graph disagree by more than 25%: min $slow_min/$fg_min ns, mean $slow_mean/$fg_mean ns"
# The text form: a histogram, then count/min/max/mean/percentiles.
kinstctl latency $dbg kinst_lattest_wait -- sh -c "echo 2 >$P/run" >/tmp/lt.txt 2>/tmp/lt.err ||
    kt_fail "latency (text) failed: $(cat /tmp/lt.err)"
grep -q '^count 4, min [0-9]* ns, max [0-9]* ns, mean [0-9]* ns, p50 ~[0-9]* ns, p90 ~[0-9]* ns, p99 ~[0-9]* ns$' /tmp/lt.txt ||
    kt_fail "latency text output: $(cat /tmp/lt.txt)"

# 3. latency FROM TO around the busy-wait call (the function's only call
# but __fentry__'s, a nop when live).
kinstctl list-offsets --json kinst_lattest_wait >/tmp/lo.json || kt_fail "list-offsets kinst_lattest_wait"
from=$(jq -r 'select(.type == "insn" and .offset > 0 and .emulation == "call") | .offset' /tmp/lo.json | head -n 1)
len=$(jq -r "select(.type == \"insn\" and .offset == ${from:-0}) | .length" /tmp/lo.json)
[ -n "$from" ] && [ -n "$len" ] || kt_fail "no call to udelay in kinst_lattest_wait: $(head -c 600 /tmp/lo.json)"
to=$((from + len))
kinstctl latency --json "kinst_lattest_wait+$from" "kinst_lattest_wait+$to" -- sh -c "$run" \
    >/tmp/ft.json 2>/tmp/ft.err || kt_fail "latency FROM TO failed: $(cat /tmp/ft.err)"
kt_log "latency FROM TO: $(tail -n 1 /tmp/ft.err)"
kt_expect_eq "latency FROM TO: samples (the slow call's busy wait)" $rounds "$(summary /tmp/ft.json samples)"
ft_min=$(jq -r 'select(.type == "hist") | .min' /tmp/ft.json)
ft_max=$(jq -r 'select(.type == "hist") | .max' /tmp/ft.json)
[ "$ft_min" -ge $((wait_us * 900)) ] || kt_fail "latency FROM TO: $ft_min ns, under 90% of udelay's $wait_us us"
[ "$ft_max" -lt $((wait_us * 1000 * 3)) ] || kt_fail "latency FROM TO: $ft_max ns, over three times udelay's"

# 4. Recursion: one sample per activation, keyed by the depth at its entry.
kinstctl latency --json $dbg --by '$entry(rdi)' kinst_lattest_rec -- sh -c "$run" \
    >/tmp/r.json 2>/tmp/r.err || kt_fail "latency kinst_lattest_rec failed: $(cat /tmp/r.err)"
kt_log "latency kinst_lattest_rec: $(tail -n 1 /tmp/r.err)"
kt_expect_eq "recursion: samples (four activations a round)" $((4 * rounds)) "$(summary /tmp/r.json samples)"
prev=0
for d in 0 1 2 3; do
	kt_expect_eq "recursion: activations at depth $d" $rounds "$(field /tmp/r.json $d count)"
	mn=$(field /tmp/r.json $d min)
	# Each level adds two busy waits of rec_us to the one below it.
	[ "$mn" -gt "$prev" ] || kt_fail "recursion: depth $d ($mn ns) not longer than the one inside it ($prev ns)"
	[ "$mn" -ge $(( (2 * d + 1) * rec_us * 900 )) ] ||
	    kt_fail "recursion: depth $d took $mn ns, under 90% of its $((2 * d + 1)) busy waits of $rec_us us"
	prev=$mn
done

# 5. A TO that never follows FROM (reading the parameter, which the run
# does not): no sample, every start left open.
kinstctl latency --json kinst_lattest_err+5 kinst_lattest_get+5 -- sh -c "echo 3 >$P/run" \
    >/tmp/n.json 2>/tmp/n.err || kt_fail "latency with a TO that never follows: $(cat /tmp/n.err)"
kt_expect_eq "no sample" 0 "$(summary /tmp/n.json samples)"
kt_expect_eq "starts never closed" 3 "$(summary /tmp/n.json starts_never_closed)"
grep -q '0 samples; 3 starts, .* 3 starts never closed' /tmp/n.err || kt_fail "summary: $(cat /tmp/n.err)"
# A TO in the next round: each round's first wait follows the previous
# round's err (3 rounds: 2 samples; the second wait of a round finds none).
kinstctl latency --json kinst_lattest_err+5 kinst_lattest_wait+5 -- sh -c "echo 3 >$P/run" \
    >/tmp/n2.json 2>/tmp/n2.err || kt_fail "latency err -> wait: $(cat /tmp/n2.err)"
kt_expect_eq "err -> the next round's wait: samples" 2 "$(summary /tmp/n2.json samples)"

# 6. One-line errors.
for args in "latency kinst_lattest_wait+5" "latency kinst_lattest_wait kinst_lattest_rec" \
    "latency kinst_lattest_wait kinst_lattest_wait" "count --by \$retval $dbg kinst_lattest_wait+5" \
    "latency --by \$retval kinst_lattest_wait+5 kinst_lattest_rec+5" "count --by \$entry(rdi) kinst_lattest_wait:return"; do
	# shellcheck disable=SC2086
	kinstctl $args -- true >/tmp/e.out 2>/tmp/e.err && kt_fail "kinstctl $args: accepted"
	[ "$(wc -l </tmp/e.err)" = 1 ] && grep -q '^kinstctl: ' /tmp/e.err ||
	    kt_fail "kinstctl $args: not one error line: $(cat /tmp/e.err)"
	kt_log "kinstctl $args: $(cat /tmp/e.err)"
done

rmmod kinst_lattest || kt_fail "rmmod kinst_lattest (a probe left armed?)"
exit 0
