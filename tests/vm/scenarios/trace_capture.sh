#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: kinstctl trace --str/--mem while a program opens files whose names the test chose (random suffix): the kernel string (do_filp_open's struct filename name) and the user string (the openat handler's pt_regs si) each show every name exactly once; --mem of linux_banner equals /proc/version's bytes; captures of a vmalloc guard page, of one crossing into it, of 0x10, of 'rdi*0' and through a faulting dereference are fault records; malformed --mem/--str arguments exit 2 with one line naming the column; clean log
# scenario-needs: kinst
# scenario-timeout: 400
#
# Proof item 3 of issue 11 (memory).  The program is syscall_loop open,
# so --if 'comm == "syscall_loop"' keeps only its opens (it is static: the
# checks still count only names under the test's directory); it opens the
# N files named on its command line, once each.
# Layouts checked in Linux 6.1: do_filp_open(int dfd, struct filename
# *pathname, const struct open_flags *op), struct filename's first member
# is const char *name; __x64_sys_openat(const struct pt_regs *regs), and
# pt_regs is r15 r14 r13 r12 bp bx r11 r10 r9 r8 ax cx dx si ...: si at
# 13 * 8 = 0x68.
. /kinst/lib/guest-lib.sh
kt_need_kinst

# first_off FUNC REGS: the first traceable offset > 0 of FUNC with no
# instruction before it naming one of REGS (an egrep pattern).
first_off() {
	kinstctl list-offsets --json "$1" >/tmp/lo.json || kt_fail "list-offsets $1 failed"
	_off=$(jq -r 'select(.type == "insn" and .offset > 0 and
	    (.verdict | startswith("refused") | not)) | .offset' /tmp/lo.json | head -n 1)
	[ -n "$_off" ] || kt_fail "no traceable instruction in $1 after its entry"
	_before=$(jq -r "select(.type == \"insn\" and .offset < $_off) | .text" /tmp/lo.json | tr '\n' ';')
	if echo "$_before" | grep -Eq "$2"; then
		kt_fail "an instruction before $1+$_off may change the argument: $_before"
	fi
	echo "$_off"
}

sfx=$(od -An -tx4 -N4 /dev/urandom | tr -d ' ')
dir=/tmp/kcap.$sfx
mkdir -p "$dir" || kt_fail "mkdir $dir"
n=$(( 20 + $(od -An -tu2 -N2 /dev/urandom) % 20 ))
i=0
names=
while [ $i -lt "$n" ]; do
	f="$dir/f$i.$(od -An -tx2 -N2 /dev/urandom | tr -d ' ')"
	echo "$i" >"$f"
	names="$names $f"
	i=$((i + 1))
done
echo "$names" | tr ' ' '\n' | grep . | sort >/tmp/want.txt
kt_log "$n files in $dir"

# 1. Kernel string: do_filp_open's struct filename name, and other captures.
ko=$(first_off do_filp_open '%(r|e)?si|%sil') || exit 1
banner=$(awk '$3 == "linux_banner" { print $1; exit }' /proc/kallsyms)
[ -n "$banner" ] || kt_fail "no linux_banner in /proc/kallsyms"
echo 1 >/proc/sys/kernel/kptr_restrict || kt_fail "cannot set kptr_restrict"
area=$(awk '$1 ~ /^0x/ && $0 ~ /vmalloc/ { print $1; exit }' /proc/vmallocinfo)
[ -n "$area" ] || kt_fail "no vmalloc area in /proc/vmallocinfo"
end=${area#*-}
end=${end#0x}
hi=${end%????????} lo=${end#"$hi"}
[ $((0x$lo)) -ge 4100 ] || kt_fail "vmalloc area $area ends too low for this test"
guard=0x$hi$(printf '%08x' $((0x$lo - 4096)))
cross=0x$hi$(printf '%08x' $((0x$lo - 4100)))
kt_log "do_filp_open+$ko; linux_banner 0x$banner; guard page $guard (area $area)"
kt_trace_start /tmp/k.json /tmp/k.err --json --if 'comm == "syscall_loop"' \
    --str '*(rsi)' --mem "0x$banner:64" --mem "$guard:8" --mem "$cross:8" \
    --mem '0x10:8' --str 'rdi*0' --str '*(0x10)' "kernel:do_filp_open+$ko"
syscall_loop open "$n" $names >/dev/null || kt_fail "syscall_loop open failed"
kt_trace_stop
st=$?
[ "$st" = 0 ] || kt_fail "kinstctl trace exited $st: $(cat /tmp/k.err)"
cat /tmp/k.err
kt_trace_summary /tmp/k.err /tmp/k.json
kt_expect_eq "records dropped" 0 "$KT_DROPPED"
kt_expect_eq "faulted predicate runs" 0 "$KT_FAULTED"
jq -r 'select(.type == "hit") | .str[0].string' /tmp/k.json | grep "^$dir/" | sort >/tmp/got_k.txt
kt_expect_eq "kernel names (do_filp_open) equal to the files opened" \
    "$(cat /tmp/want.txt)" "$(cat /tmp/got_k.txt)"
kt_expect_eq "hits with a kernel string not cut or faulted" "$KT_DELIVERED" \
    "$(jq -c 'select(.type == "hit" and .str[0].truncated == false and (.str[0] | has("string")))' /tmp/k.json | grep -c .)"
want_b=$(head -c 64 /proc/version | od -An -tx1 -v | tr -d ' \n')
kt_expect_eq "length of /proc/version's first 64 bytes" 128 "${#want_b}"
kt_expect_eq "hits whose linux_banner capture is /proc/version's 64 bytes" "$KT_DELIVERED" \
    "$(jq -r 'select(.type == "hit") | .mem[0].bytes' /tmp/k.json | grep -c "^$want_b\$")"
for c in '.mem[1].fault == "read" and .mem[1].address == "'"$guard"'"' \
    '.mem[2].fault == "read" and .mem[2].address == "'"$cross"'"' \
    '.mem[3].fault == "read" and .mem[3].address == "0x10"' \
    '.str[1].fault == "read" and .str[1].address == "0x0"' \
    '.str[2].fault == "address" and .str[2].address == null' \
    '.mem[1].expr == "'"$guard"'" and .str[2].expr == "*(0x10)"'; do
	kt_expect_eq "hits with $c" "$KT_DELIVERED" \
	    "$(jq -c "select(.type == \"hit\" and $c)" /tmp/k.json | grep -c .)"
done
[ "$KT_DELIVERED" -ge "$n" ] || kt_fail "$KT_DELIVERED hits for $n opens"

# The same captures as text: hexdump lines and quoted strings.
kt_trace_start /tmp/kt.txt /tmp/kt.err --if 'comm == "syscall_loop"' \
    --str '*(rsi)' --mem "0x$banner:20" --mem '0x10:8' --str '*(0x10)' \
    "kernel:do_filp_open+$ko"
syscall_loop open 1 "$dir"/f0.* >/dev/null || kt_fail "syscall_loop open failed"
kt_trace_stop
st=$?
[ "$st" = 0 ] || kt_fail "kinstctl trace exited $st: $(cat /tmp/kt.err)"
f0=$(ls "$dir"/f0.*)
grep -qF "    str *(rsi) @ 0x" /tmp/kt.txt || kt_fail "no string line: $(head -n 20 /tmp/kt.txt)"
grep -qF ": \"$f0\"" /tmp/kt.txt || kt_fail "no quoted \"$f0\": $(head -n 20 /tmp/kt.txt)"
grep -qF "        00000000  4c 69 6e 75 78 20 76 65  72 73 69 6f 6e 20 " /tmp/kt.txt ||
    kt_fail "no hexdump line of linux_banner: $(head -n 20 /tmp/kt.txt)"
grep -qF "|Linux version " /tmp/kt.txt || kt_fail "no ASCII column 'Linux version ...': $(head -n 20 /tmp/kt.txt)"
grep -qF "    mem 0x10 @ 0x10: fault reading the bytes" /tmp/kt.txt || kt_fail "no fault line for 0x10"
grep -qF "    str *(0x10): fault computing the address" /tmp/kt.txt || kt_fail "no fault line for *(0x10)"

# 2. User string: the pathname argument of the openat handler, as passed.
uo=$(first_off __x64_sys_openat '%(r|e)?di|%dil') || exit 1
kt_log "__x64_sys_openat+$uo"
kt_trace_start /tmp/u.json /tmp/u.err --json --if 'comm == "syscall_loop"' \
    --str '*(rdi+0x68)' --str '*(rdi+0x68):8' "kernel:__x64_sys_openat+$uo"
syscall_loop open "$n" $names >/dev/null || kt_fail "syscall_loop open failed"
kt_trace_stop
st=$?
[ "$st" = 0 ] || kt_fail "kinstctl trace exited $st: $(cat /tmp/u.err)"
cat /tmp/u.err
kt_trace_summary /tmp/u.err /tmp/u.json
kt_expect_eq "records dropped" 0 "$KT_DROPPED"
jq -r 'select(.type == "hit") | .str[0].string' /tmp/u.json | grep "^$dir/" | sort >/tmp/got_u.txt
kt_expect_eq "user names (openat's pathname) equal to the files opened" \
    "$(cat /tmp/want.txt)" "$(cat /tmp/got_u.txt)"
kt_expect_eq "user strings of our files cut at 8 to their first 8 bytes, marked" "$n" \
    "$(jq -r 'select(.type == "hit" and (.str[0].string | startswith("'"$dir"'/"))) |
        [.str[0].string[0:8], .str[1].string, .str[1].truncated] | @tsv' /tmp/u.json |
        awk -F '\t' '$1 == $2 && $3 == "true"' | grep -c .)"

# 3. Bad input: exit 2, one line, the column named.
bad() {	# bad COLUMN-OR-TEXT ARGS...
	_want=$1
	shift
	kinstctl trace "$@" "kernel:do_filp_open+$ko" >/tmp/b.out 2>/tmp/b.err
	_st=$?
	kt_expect_eq "exit status of trace $*" 2 "$_st"
	kt_expect_eq "lines of the error of trace $*" 1 "$(grep -c . /tmp/b.err)"
	grep -qF -- "$_want" /tmp/b.err || kt_fail "trace $*: no '$_want' in: $(cat /tmp/b.err)"
}
bad "column 5" --mem 'rdi+:8'
bad "column 4" --mem 'rdi'
bad "column 5: LEN must be 1 to 512" --mem 'rdi:0'
bad "column 5: LEN must be 1 to 512" --mem 'rdi:513'
bad "column 5: MAX must be 1 to 256" --str 'rdi:257'
bad "column 5: expected a decimal MAX" --str 'rsi:x'
bad "column 1: empty expression" --str ':8'
exit 0
