#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: C variables by name at live hits (DWARF, kinst_srctest.ko): trace --var i --var n --var acc at the loop body gives, on every hit, exactly the loop counter, the parameter and the running value the test computes itself; --vars on every instruction of the function gives only values some iteration has (n, i, acc and the inlined copy's a and b, each known at several hits); --vars at kinst_srctest_point+5 (after the ftrace site) reads a struct passed on the stack (through the CFA) member by member; parameters whose DWARF location is an entry value (DW_OP_entry_value) read through a hidden entry probe equal the rdi and rsi of their call's entry hit, also with the entry not traced; recursion gives each activation its own entry values (depth and tag after the recursive call, three activations a run); a struct local split into pieces (a register and a value computed from an entry value) prints whole; a member through a pointer entry value ($kp->perm) keys count --by; a 16-byte struct held in three registers has its members usable in expressions (list-vars says so; --if '$st.steps == 5' selects one hit a run, count --by '$st.steps' and hist --value '$st.sum' give each value once a run); hist --value '$i' buckets each counter value once per run; a variable not available at an explicit instruction, or not in scope, is a one-line error naming where it is; text output shows name=value; clean kernel log
# scenario-needs: kinst
# scenario-timeout: 300
# scenario-options: -f "$KINST_BUILD/tests/vm/kinst_srctest.ko" -f "$top/tests/vm/testmod/kinst_srctest.c"
#
# kinst_srctest_loop(n): acc = 1; for (i = 0; i < n; i++) { sink = i;
# acc = mix(acc, i) } with mix(a, b) = (a * 3 + b) ^ (b << 2), so at the
# loop body (L:loop_body) of iteration i, acc is known.
# kinst_srctest_set calls kinst_srctest_point({ .x = 5, .y = 9, .tag = 2 }).
. /kinst/lib/guest-lib.sh
kt_need_kinst

kt_testmod kinst_srctest
src=/kinst/files/kinst_srctest.c
P=/sys/module/kinst_srctest/parameters
dbg="--debug-file $ko"
body=$(grep -n "L:loop_body " "$src" | cut -d: -f1)
[ -n "$body" ] || kt_fail "no L:loop_body marker in $src"

# list-vars on the running kernel: the module's live text, its DWARF.
kinstctl list-vars --json $dbg "kinst_srctest_loop:$body" >/tmp/lv.json 2>/tmp/lv.err ||
    kt_fail "list-vars on the live module failed: $(cat /tmp/lv.err)"
kt_expect_eq "list-vars (live): the loop body's readable variables" "acc i n" \
    "$(jq -r '.available[].name' /tmp/lv.json | sort | tr '\n' ' ' | sed 's/ $//')"

trips=6 runs=4
echo $trips >$P/trips || kt_fail "write trips"
kt_trace_start /tmp/v.json /tmp/v.err --json $dbg --var i --var n --var acc \
    "kinst_srctest_loop:$body"
i=0
while [ $i -lt $runs ]; do echo 1 >$P/run || kt_fail "run"; i=$((i + 1)); done
kt_trace_stop
st=$?
[ "$st" = 0 ] || kt_fail "kinstctl trace exited $st: $(cat /tmp/v.err)"
kt_trace_summary /tmp/v.err /tmp/v.json
kt_expect_eq "records dropped" 0 "$KT_DROPPED"
kt_expect_eq "hits at the loop body" $((trips * runs)) "$KT_PRINTED"
# The values the test knows, hit by hit (in time order).
jq -s -r 'sort_by(.time_ns)[] | "\(.vars.i) \(.vars.n) \(.vars.acc)"' /tmp/v.json >/tmp/got.txt
: >/tmp/want.txt
r=0
while [ $r -lt $runs ]; do
	acc=1 i=0
	while [ $i -lt $trips ]; do
		echo "$i $trips $acc" >>/tmp/want.txt
		acc=$(( (acc * 3 + i) ^ (i << 2) ))
		i=$((i + 1))
	done
	r=$((r + 1))
done
if ! cmp -s /tmp/want.txt /tmp/got.txt; then
	kt_log "want (i n acc) | got:"
	paste /tmp/want.txt /tmp/got.txt | head -n 30 >&2
	kt_fail "trace --var: the values differ from the loop's own"
fi
kt_log "trace --var i n acc: $((trips * runs)) hits, every value right"

# Every instruction of the function (and of the inlined copy of
# kinst_srctest_mix in it): wherever the compiler keeps them -- registers,
# computed values, at every instruction where the DWARF says they are
# available -- n is the trip count, i a loop counter value, acc one of the
# loop's running values, and the inlined mix(a, b) has a = acc, b = i.
kt_trace_start /tmp/a.json /tmp/a.err --json $dbg --vars kinst_srctest:kinst_srctest_loop
echo 1 >$P/run || kt_fail "run"
kt_trace_stop
kt_trace_summary /tmp/a.err /tmp/a.json
kt_expect_eq "records dropped (--vars, whole function)" 0 "$KT_DROPPED"
accs=$(awk -v t=$trips 'BEGIN { a = 1; for (i = 0; i <= t; i++) { printf "%d,", a; a = xor(a * 3 + i, i * 4) } }')
jq -c --argjson t $trips --argjson accs "[${accs%,}]" '
    .vars as $v | select(
	($v.n != null and $v.n != $t) or
	($v.i != null and ($v.i < 0 or $v.i > $t)) or
	($v.acc != null and ($accs | index($v.acc)) == null) or
	($v.b != null and ($v.b < 0 or $v.b >= $t)) or
	($v.a != null and ($accs | index($v.a)) == null)) |
    {probe, vars}' /tmp/a.json >/tmp/bad.json
[ -s /tmp/bad.json ] && { head -n 5 /tmp/bad.json >&2; kt_fail "--vars: a value no run of the loop has"; }
for v in n i acc a b; do
	c=$(jq -r --arg v $v 'select(.vars[$v] != null) | .probe' /tmp/a.json | grep -c .)
	[ "$c" -ge $trips ] || kt_fail "--vars: $v known at only $c hits"
done
nv=$(jq -r '.vars | to_entries[] | select(.value != null) | .key' /tmp/a.json | grep -c .)
ni=$(jq -r '.probe' /tmp/a.json | sort -u | grep -c .)
[ "$nv" -gt "$((KT_PRINTED))" ] || kt_fail "--vars: only $nv values in $KT_PRINTED hits"
kt_log "--vars on every instruction: $KT_PRINTED hits at $ni instructions, $nv values, all consistent"

# A struct passed by value, on the stack: read through the CFA.
kt_trace_start /tmp/p.json /tmp/p.err --json $dbg --vars kinst_srctest:kinst_srctest_point+5
echo 1 >$P/run || kt_fail "run"
echo 1 >$P/run || kt_fail "run"
kt_trace_stop
kt_trace_summary /tmp/p.err /tmp/p.json
kt_expect_eq "hits of kinst_srctest_point+5" 2 "$KT_PRINTED"
kt_expect_eq "struct p on the stack, member by member" '{"tag":2,"x":5,"y":9}
{"tag":2,"x":5,"y":9}' "$(jq -c -S '.vars.p' /tmp/p.json)"

# Text: name=value after the registers.
kt_trace_start /tmp/t.txt /tmp/t.err $dbg --var p kinst_srctest:kinst_srctest_point+5
echo 1 >$P/run || kt_fail "run"
kt_trace_stop
grep -q '^    p={x=5, y=9, tag=2}$' /tmp/t.txt || kt_fail "text: $(cat /tmp/t.txt)"

# $variables in expressions, decided in the kernel at each instruction.
kt_trace_start /tmp/w.json /tmp/w.err --json $dbg --if '$i == 2' --var i --var acc \
    "kinst_srctest_loop:$body"
i=0
while [ $i -lt $runs ]; do echo 1 >$P/run || kt_fail "run"; i=$((i + 1)); done
kt_trace_stop
kt_trace_summary /tmp/w.err /tmp/w.json
kt_expect_eq "hits with --if '\$i == 2' (one per run)" $runs "$KT_PRINTED"
kt_expect_eq "not matching --if" $(( (trips - 1) * runs )) "$KT_NOMATCH"
kt_expect_eq "i and acc of the hits with i == 2" "$(yes '2 14' | head -n $runs)" \
    "$(jq -r '"\(.vars.i) \(.vars.acc)"' /tmp/w.json)"
# A struct member in --if, and its address in --mem (bytes of p.y).
kt_trace_start /tmp/m.json /tmp/m.err --json $dbg --if '$p.x == 5 && $p.tag == 2' \
    --mem '&$p.y:8' kinst_srctest:kinst_srctest_point+5
echo 1 >$P/run || kt_fail "run"
kt_trace_stop
kt_trace_summary /tmp/m.err /tmp/m.json
kt_expect_eq "hits of --if '\$p.x == 5 && \$p.tag == 2'" 1 "$KT_PRINTED"
kt_expect_eq "--mem &\$p.y:8" 0900000000000000 "$(jq -r '.mem[0].bytes' /tmp/m.json)"
# count --by '$i': one key per loop counter value, each once per run.
cat >/tmp/cw.sh <<WL
i=0; while [ \$i -lt $runs ]; do echo 1 >$P/run || exit 1; i=\$((i + 1)); done
WL
kinstctl count --json $dbg --by '$i' "kinst_srctest_loop:$body" -- sh /tmp/cw.sh \
    >/tmp/c.json 2>/tmp/c.err || kt_fail "count --by '\$i' failed: $(cat /tmp/c.err)"
want=
i=0
while [ $i -lt $trips ]; do want="$want$i $runs
"; i=$((i + 1)); done
kt_expect_eq "count --by '\$i': key count" "$(printf '%s' "$want")" \
    "$(jq -r 'select(.type == "count") | "\(.key) \(.count)"' /tmp/c.json | sort -n)"

# Entry values: where val and kp (kinst_srctest_set's parameters) live only
# as "rdi/rsi at the entry" (DW_OP_entry_value), a hidden probe at the
# entry saved them.  Traced with the instruction after the ftrace site,
# where val is still in rdi (that probe's own program saves them): each
# later hit shows exactly the rdi and rsi of its call's entry hit, while
# its own rdi holds something else.
ev=$(kinstctl list-vars --json $dbg kinst_srctest_set 2>/tmp/ev.err |
    jq -r 'select([.available[] | select(.name == "val" and .kind == "entry_value")] | length > 0) | .offset' |
    head -n 1)
[ -n "$ev" ] || kt_fail "no instruction of kinst_srctest_set where val is an entry value: $(cat /tmp/ev.err)"
kt_trace_start /tmp/ev.json /tmp/ev.err --json $dbg --var val --var kp \
    kinst_srctest:kinst_srctest_set+5 "kinst_srctest:kinst_srctest_set+$ev"
i=0
while [ $i -lt $runs ]; do echo 1 >$P/run || kt_fail "run"; i=$((i + 1)); done
kt_trace_stop
kt_trace_summary /tmp/ev.err /tmp/ev.json
kt_expect_eq "hits at the entry and at +$ev" $((2 * runs)) "$KT_PRINTED"
kt_expect_eq "entry values equal the entry's rdi and rsi" "$(yes ok | head -n $runs)" \
    "$(jq -rs --argjson ev "$ev" '. as $a | range(0; length) | select($a[.].offset == $ev) |
        . as $k | $a[$k - 1] as $e |
        if $e.offset == 5 and $e.tid == $a[$k].tid and $a[$k].vars.val == $e.regs.rdi and
           $a[$k].vars.kp == $e.regs.rsi and $a[$k].regs.rdi != $e.regs.rdi then "ok"
        else "bad: \($e) \($a[$k])" end' /tmp/ev.json)"
# Alone: the hidden probe's hits are never records.
kt_trace_start /tmp/eh.json /tmp/eh.err --json $dbg --var val "kinst_srctest:kinst_srctest_set+$ev"
i=0
while [ $i -lt $runs ]; do echo 1 >$P/run || kt_fail "run"; i=$((i + 1)); done
kt_trace_stop
kt_trace_summary /tmp/eh.err /tmp/eh.json
kt_expect_eq "records at +$ev alone" $runs "$KT_PRINTED"
kt_expect_eq "entry values read (not null)" $runs \
    "$(jq -r 'select(.vars.val != null and (.vars.val | startswith("0xffff"))) | .offset' /tmp/eh.json | grep -c .)"
grep -q "note: .*kinst_srctest_set.*entry" /tmp/eh.err || kt_fail "no note about the entry probe: $(cat /tmp/eh.err)"
# In the kernel, where kp is an entry value too: count --by '$kp &
# 0xffffff' (low bits: JSON numbers are doubles); a miss would filter the
# hit, never count another value.
ek=$(kinstctl list-vars --json $dbg kinst_srctest_set 2>/tmp/ev.err |
    jq -r 'select([.available[] | select(.name == "kp" and .kind == "entry_value")] | length > 0) | .offset' |
    head -n 1)
[ -n "$ek" ] || kt_fail "no instruction of kinst_srctest_set where kp is an entry value"
kinstctl count --json $dbg --by '$kp & 0xffffff' "kinst_srctest:kinst_srctest_set+$ek" \
    -- sh /tmp/cw.sh >/tmp/ec.json 2>/tmp/ec.err ||
    kt_fail "count --by '\$kp' failed: $(cat /tmp/ec.err)"
kpt=$(jq -r 'select(.offset == 5) | .regs.rsi' /tmp/ev.json | head -n 1 | tail -c 7)
kt_expect_eq "count --by '\$kp & 0xffffff': the entry's rsi, once per run" \
    "$((0x$kpt)) $runs" \
    "$(jq -r 'select(.type == "count") | "\(.key) \(.count)"' /tmp/ec.json)"

# A typed member through a pointer variable that is an entry value there:
# $kp->perm (struct kernel_param, the DWARF's type), a fault-safe load in
# the kernel: the "run" parameter's 0600, once per run.
kinstctl count --json $dbg --by '$kp->perm' "kinst_srctest:kinst_srctest_set+$ek" \
    -- sh /tmp/cw.sh >/tmp/ep.json 2>/tmp/ep.err ||
    kt_fail "count --by '\$kp->perm' failed: $(cat /tmp/ep.err)"
kt_expect_eq "count --by '\$kp->perm': 0600, once per run" "$((0600)) $runs" \
    "$(jq -r 'select(.type == "count") | "\(.key) \(.count)"' /tmp/ep.json)"
kt_expect_eq "count's summary: not matching 0, the entry probe's hits apart ($runs)" "0 $runs" \
    "$(jq -r 'select(.type == "summary") | "\(.filtered) \(.hidden)"' /tmp/ep.json)"
# hist_buckets FILE: a hist's buckets, "LOW:COUNT ..." on one line.
hist_buckets() {
	jq -r 'select(.type == "hist") | .buckets[] | "\(.low):\(.count)"' "$1" | tr '\n' ' ' | sed 's/ $//'
}
# hist --value '$i' at the loop body: each counter value once per run.
kinstctl hist --json $dbg --value '$i' --linear 0,16,1 "kinst_srctest_loop:$body" \
    -- sh /tmp/cw.sh >/tmp/hv.json 2>/tmp/hv.err ||
    kt_fail "hist --value '\$i' failed: $(cat /tmp/hv.err)"
kt_expect_eq "hist --value '\$i': buckets" \
    "$(i=0; while [ $i -lt $trips ]; do printf '%d:%d ' $i $runs; i=$((i + 1)); done | sed 's/ $//')" \
    "$(hist_buckets /tmp/hv.json)"
kt_expect_eq "hist --value '\$i': sum" $((runs * trips * (trips - 1) / 2)) \
    "$(jq -r 'select(.type == "hist") | .sum' /tmp/hv.json)"

# Recursion: kinst_srctest_rec(3, trips) calls itself down to depth 0;
# after each recursive call (L:rec_after) depth and tag are entry values,
# and each activation must read its own: depth 1, 2, 3 in that order, with
# tag 4 * trips + 8, 2 * trips + 3 and trips.
rec=$(grep -n "L:rec_after " "$src" | cut -d: -f1)
kinstctl list-vars --json $dbg "kinst_srctest_rec:$rec" >/tmp/rv.json 2>/tmp/rv.err ||
    kt_fail "list-vars at kinst_srctest_rec:$rec failed: $(cat /tmp/rv.err)"
kt_expect_eq "depth and tag after the recursive call are entry values" "entry_value entry_value" \
    "$(jq -r '[.available[] | select(.name == "depth" or .name == "tag") | .kind] | join(" ")' /tmp/rv.json | head -n 1)"
kt_trace_start /tmp/r.json /tmp/r.err --json $dbg --var depth --var tag "kinst_srctest_rec:$rec"
i=0
while [ $i -lt $runs ]; do echo 1 >$P/run || kt_fail "run"; i=$((i + 1)); done
kt_trace_stop
kt_trace_summary /tmp/r.err /tmp/r.json
kt_expect_eq "hits after the recursive call" $((3 * runs)) "$KT_PRINTED"
kt_expect_eq "each activation's own entry values" \
    "$(i=0; while [ $i -lt $runs ]; do printf '1 %d\n2 %d\n3 %d\n' $((4 * trips + 8)) $((2 * trips + 3)) $trips; i=$((i + 1)); done)" \
    "$(jq -s -r 'sort_by(.time_ns)[] | "\(.vars.depth) \(.vars.tag)"' /tmp/r.json)"
kt_expect_eq "not matching (the hidden entry probe's hits are not counted)" 0 "$KT_NOMATCH"

# A struct local split into pieces (DW_OP_piece: a register and a value
# computed from an entry value), printed whole: kinst_srctest_split(trips,
# 2 * trips) has q = { trips + 1, 2 * trips - 1 } after its call.
spl=$(grep -n "L:split_after " "$src" | cut -d: -f1)
kinstctl list-vars --json $dbg "kinst_srctest_split:$spl" >/tmp/sv.json 2>/tmp/sv.err ||
    kt_fail "list-vars at kinst_srctest_split:$spl failed: $(cat /tmp/sv.err)"
kt_expect_eq "q after the call is in pieces" pieces \
    "$(jq -r '.available[] | select(.name == "q") | .kind' /tmp/sv.json | head -n 1)"
kt_trace_start /tmp/s.json /tmp/s.err --json $dbg --var q --var x --var y "kinst_srctest_split:$spl"
i=0
while [ $i -lt $runs ]; do echo 1 >$P/run || kt_fail "run"; i=$((i + 1)); done
kt_trace_stop
kt_trace_summary /tmp/s.err /tmp/s.json
kt_expect_eq "the split struct, whole, and the parameters, every hit" \
    "$(yes "{\"hi\":$((2 * trips - 1)),\"lo\":$((trips + 1))} $trips $((2 * trips))" | head -n $runs)" \
    "$(jq -r '"\(.vars.q | tojson) \(.vars.x) \(.vars.y)"' /tmp/s.json)"
kt_trace_start /tmp/s.txt /tmp/s.err $dbg --var q "kinst_srctest_split:$spl"
echo 1 >$P/run || kt_fail "run"
kt_trace_stop
grep -q "^    q={lo=$((trips + 1)), hi=$((2 * trips - 1))}\$" /tmp/s.txt || kt_fail "text: $(cat /tmp/s.txt)"
# Its member in an expression: .hi is read in the kernel from the piece
# that holds it (issue 43: members of a struct in pieces).
kinstctl count --json $dbg --by '$q.hi' "kinst_srctest:kinst_srctest_split+$(jq -r .offset /tmp/sv.json | head -n 1)" \
    -- sh /tmp/cw.sh >/tmp/sq.json 2>/tmp/sq.err ||
    kt_fail "count --by '\$q.hi' failed: $(cat /tmp/sq.err)"
kt_expect_eq "count --by '\$q.hi' (a struct in registers)" "$((2 * trips - 1)) $runs" \
    "$(jq -r 'select(.type == "count") | "\(.key) \(.count)"' /tmp/sq.json)"

# A 16-byte struct in pieces (issue 43): at the line marked hv_body,
# kinst_srctest_hv(trips) has st = { sum, steps, flags } in three
# registers, steps the iteration's number from 1, flags = trips & 3, sum =
# 3 * (steps - 1) * steps / 2 (flags is 2 here).  Its members filter,
# count and sum in the kernel.
hvl=$(grep -n "L:hv_body " "$src" | cut -d: -f1)
[ -n "$hvl" ] || kt_fail "no L:hv_body marker in $src"
kinstctl list-vars --json $dbg "kinst_srctest_hv:$hvl" >/tmp/hl.json 2>/tmp/hl.err ||
    kt_fail "list-vars at kinst_srctest_hv:$hvl failed: $(cat /tmp/hl.err)"
kt_expect_eq "st at hv_body: kind, members usable in expressions" "pieces flags steps sum" \
    "$(jq -r '.available[] | select(.name == "st") | "\(.kind) \(.members_available | sort | join(" "))"' \
    /tmp/hl.json | head -n 1)"
kt_expect_eq "hv: flags" 2 $((trips & 3))
kt_trace_start /tmp/h.json /tmp/h.err --json $dbg --if '$st.steps == 5' --var st \
    "kinst_srctest_hv:$hvl"
i=0
while [ $i -lt $runs ]; do echo 1 >$P/run || kt_fail "run"; i=$((i + 1)); done
kt_trace_stop || kt_fail "trace --if '\$st.steps == 5' failed: $(cat /tmp/h.err)"
kt_trace_summary /tmp/h.err /tmp/h.json
kt_expect_eq "--if '\$st.steps == 5': one hit a run, st whole" \
    "$(yes '{"flags":2,"steps":5,"sum":30}' | head -n $runs)" \
    "$(jq -c '.vars.st' /tmp/h.json)"
kinstctl count --json $dbg --by '$st.steps' "kinst_srctest_hv:$hvl" -- sh /tmp/cw.sh \
    >/tmp/hc.json 2>/tmp/hc.err || kt_fail "count --by '\$st.steps' failed: $(cat /tmp/hc.err)"
kt_expect_eq "count --by '\$st.steps': each step once a run" \
    "$(s=1; while [ $s -le $trips ]; do printf '%d %d\n' $s $runs; s=$((s + 1)); done)" \
    "$(jq -r 'select(.type == "count") | "\(.key) \(.count)"' /tmp/hc.json | sort -n)"
kinstctl hist --json $dbg --value '$st.sum' --linear 0,48,1 "kinst_srctest_hv:$hvl" \
    -- sh /tmp/cw.sh >/tmp/hh.json 2>/tmp/hh.err || kt_fail "hist --value '\$st.sum': $(cat /tmp/hh.err)"
want=
s=1
while [ $s -le $trips ]; do want="$want $((3 * (s - 1) * s / 2)):$runs"; s=$((s + 1)); done
kt_expect_eq "hist --value '\$st.sum': buckets" "${want# }" "$(hist_buckets /tmp/hh.json)"

# Errors, one line each, before anything is armed.
kinstctl trace $dbg --var nosuch kinst_srctest:kinst_srctest_point+5 >/dev/null 2>/tmp/e.txt &&
    kt_fail "an unknown variable was accepted"
grep -q 'not in scope at .*point+0x5; in scope there: a, b, p, r$' /tmp/e.txt || kt_fail "unknown variable: $(cat /tmp/e.txt)"
kt_expect_eq "lines of the unknown-variable error" 1 "$(grep -c . /tmp/e.txt)"
kinstctl trace $dbg --var nosuch "kinst_srctest_loop:$body" >/dev/null 2>/tmp/e.txt &&
    kt_fail "a variable in scope nowhere was accepted"
grep -q 'not in scope at any instruction' /tmp/e.txt || kt_fail "nowhere: $(cat /tmp/e.txt)"

rmmod kinst_srctest || kt_fail "rmmod kinst_srctest failed"
exit 0
