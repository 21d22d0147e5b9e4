#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: kinstctl trace refuses bad requests with one clear kinstctl: line and its documented exit code: mid-instruction offset, unknown function, excluded function, refused instruction, module not loaded
# scenario-needs: kinst
# scenario-timeout: 240
#
# Proof item 5 of issue 4, the kinstctl side.  Exit codes: kinstctl(8)
# EXIT STATUS (cli/base/error.h): 8 unknown function, 10 bad offset, 11 live
# system (device/module), 12 explicit probe refused.  The harness's kernel
# log check proves "no oops".
. /kinst/lib/guest-lib.sh
kt_need_kinst

# expect WHAT CODE ERE CMD...: CMD exits CODE within 30 s, its stderr is
# kinstctl: lines only (at least one), matching ERE (grep -E -i), nothing
# on stdout.
expect() {
	_what=$1 _code=$2 _re=$3
	shift 3
	timeout 30 "$@" >/tmp/o 2>/tmp/e
	_st=$?
	kt_log "$_what: exit $_st: $(cat /tmp/e)"
	[ "$_st" = "$_code" ] || kt_fail "$_what: '$*' exited $_st, not $_code: $(cat /tmp/e)"
	[ -s /tmp/e ] || kt_fail "$_what: no message"
	! grep -qv '^kinstctl: ' /tmp/e || kt_fail "$_what: a line not 'kinstctl: ...': $(grep -v '^kinstctl: ' /tmp/e | head -n 3)"
	grep -Eqi "$_re" /tmp/e || kt_fail "$_what: message does not match /$_re/: $(cat /tmp/e)"
	[ ! -s /tmp/o ] || kt_fail "$_what: output on stdout: $(head -c 300 /tmp/o)"
}

f=ksys_write
kinstctl list-offsets --json "$f" >/tmp/lo.json || kt_fail "list-offsets $f failed"
# The first instruction longer than 1 byte after the entry: its offset+1
# is mid-instruction, between boundaries $s and $e.
set -- $(jq -r 'select(.type == "insn" and .length > 1 and .offset > 0) | "\(.offset) \(.length)"' /tmp/lo.json | head -n 1)
s=$1 e=$(( $1 + $2 ))
mid=$(( s + 1 ))
xs=$(printf '0x%x' "$s") xe=$(printf '0x%x' "$e")
expect "mid-instruction $f+$mid" 10 "($s|$xs)[^0-9a-fx].*($e|$xe)([^0-9a-fx]|$)" \
    kinstctl trace "$f+$mid"
expect "unknown function" 8 "kinst_no_such_function" kinstctl trace kinst_no_such_function
# notify_die is on the exclusion list (the trap path itself)
expect "excluded function notify_die+2" 12 "refus|exclu" kinstctl trace notify_die+2
expect "excluded function notify_die (whole)" 12 "refus|exclu" kinstctl trace notify_die
# +0 is the ftrace site (text-patched at boot)
expect "refused instruction $f+0" 12 "refus.*(ftrace|patch)|(ftrace|patch).*refus" kinstctl trace "$f+0"
# ... and the live listing says so too (the module's check-only verdict),
# while the next instruction stays traceable.
kt_expect_eq "list-offsets verdict for $f+0" "refused text-patched" \
    "$(kinstctl list-offsets --json "$f+0" | jq -r 'select(.type == "insn") | "\(.verdict) \(.reason)"')"
v=$(kinstctl list-offsets --json "$f" | jq -r 'select(.type == "insn" and .offset > 0) | .verdict' | head -n 1)
[ "$v" != refused ] || kt_fail "list-offsets: the instruction after $f+0 is refused ($v)"

# Sites the kernel patches at run time, past the ftrace site, are refused
# as text-patched too (the module asks jump_label_text_reserved and
# static_call_text_reserved, per function first and then per
# instruction): a tracepoint's static branch in kmem_cache_alloc (a
# 5-byte nop or a jmp) and a cond_resched() static call in dput (a call).
# patched FUNC MNEMONIC-ERE WHAT: an instruction past +4 of FUNC refused
# text-patched, its mnemonic matching MNEMONIC-ERE; and the same verdict
# when that one offset is asked alone.
patched() {
	kinstctl list-offsets --json "$1" >/tmp/lo.json || kt_fail "list-offsets $1 failed"
	o=$(jq -r --arg re "$2" 'select(.type == "insn" and .offset > 4 and
	    .reason == "text-patched" and (.mnemonic | test($re))) | .offset' /tmp/lo.json | head -n 1)
	[ -n "$o" ] || kt_fail "$1: no $3 (mnemonic /$2/ past +4) refused as text-patched"
	kt_expect_eq "$1+$o ($3) asked alone" "refused text-patched" \
	    "$(kinstctl list-offsets --json "$1+$o" | jq -r 'select(.type == "insn") | "\(.verdict) \(.reason)"')"
	# Neighbours of the site stay traceable: the refusal is by instruction.
	n=$(jq -r 'select(.type == "insn" and (.verdict | startswith("refused") | not)) | .offset' /tmp/lo.json | grep -c .)
	[ "$n" -gt 0 ] || kt_fail "$1: nothing traceable besides the patched site"
	kt_log "$1+$o: $3 refused as text-patched; $n instructions of $1 traceable"
}
patched kmem_cache_alloc '^(nop|jmp)' "jump label site"
patched dput '^call' "static call site"

# SIGINT while arming (kinstctl started with &, so SIGINT is ignored until
# kinstctl installs its handler, as from any script): kinstctl must stop,
# disarm and summarize, not trace on forever.  40 whole syscall handlers
# take seconds to arm under TCG; the signal goes out at the first one.
awk '$2 ~ /^[tT]$/ && $3 ~ /^__x64_sys_/ && $4 == "" { c[$3]++ }
    END { for (n in c) if (c[n] == 1) print n }' /proc/kallsyms | sort | head -n 40 >/tmp/many
[ "$(grep -c . /tmp/many)" = 40 ] || kt_fail "fewer than 40 __x64_sys_ functions in /proc/kallsyms"
# /tmp/e is emptied first: the job's own redirection truncates it only once
# it runs, and the wait below must not read an earlier command's output.
: >/tmp/e
# shellcheck disable=SC2046
kinstctl trace $(cat /tmp/many) >/tmp/o 2>/tmp/e &
pid=$!
end=$(( $(cut -d. -f1 /proc/uptime) + 60 ))
until grep -q 'instructions armed' /tmp/e; do
	kill -0 $pid 2>/dev/null || kt_fail "kinstctl trace exited before arming anything: $(cat /tmp/e)"
	[ "$(cut -d. -f1 /proc/uptime)" -lt $end ] || kt_fail "kinstctl armed nothing in 60 s"
	sleep 0.05
done
kill -INT $pid
kt_wait_pid $pid 60 "kinstctl trace after SIGINT while arming"
st=$?
[ "$st" = 0 ] || kt_fail "kinstctl trace stopped while arming exited $st: $(tail -n 3 /tmp/e)"
kt_trace_summary /tmp/e /tmp/o
if grep -q '^kinstctl: stopped while arming' /tmp/e; then
	kt_log "SIGINT while arming: $(grep -c 'instructions armed' /tmp/e) of 40 functions armed, then stopped; $KT_HITS hits"
else
	kt_log "SIGINT while arming: arming had finished when it arrived (informational): $(grep '^kinstctl: tracing' /tmp/e)"
fi

# Without the module: say what to do (insmod/modprobe), exit 11.
rmmod kinst || kt_fail "rmmod kinst failed"
[ ! -e /dev/kinst ] || kt_fail "/dev/kinst still there after rmmod"
expect "module not loaded" 11 "insmod|modprobe|load" kinstctl trace "$f+$s"
insmod /kinst/modules/kinst.ko || kt_fail "insmod kinst.ko again failed"
# And the module works again after all that.
# (head reads with read(2); busybox cat would use sendfile, no vfs_read)
(while :; do head -c 64 /proc/version >/dev/null; sleep 0.2; done) &
bg=$!
timeout 60 kinstctl trace -n 1 --json vfs_read >/tmp/o 2>/tmp/e
st=$?
kill "$bg"
[ "$st" = 0 ] || kt_fail "trace after reload exited $st: $(cat /tmp/e)"
kt_expect_eq "hits in vfs_read after reload ($(cat /tmp/e | tr "\n" " "))" 1 "$(jq -r 'select(.type == "hit") | .function' /tmp/o | grep -c vfs_read)"
exit 0
