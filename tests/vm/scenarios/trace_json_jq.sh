#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: kinstctl trace --json | jq: one object per line, every field present with its type (hex strings for addresses and registers, integers for offset/cpu/pid), .regs.rdi readable
# scenario-needs: kinst
# scenario-timeout: 240
#
# Proof item 4 of issue 4.  A program loops on read(2) of /dev/zero; kinst
# traces ksys_read's first traceable instruction after the entry (its
# arguments still in %rdi/%rsi/%rdx) for that pid, -n N, straight into jq.
. /kinst/lib/guest-lib.sh
kt_need_kinst

f=ksys_read
kinstctl list-offsets --json "$f" >/tmp/lo.json || kt_fail "list-offsets $f failed"
off=$(jq -r 'select(.type == "insn" and .offset > 0 and
    (.verdict | startswith("refused") | not)) | .offset' /tmp/lo.json | head -n 1)
[ -n "$off" ] || kt_fail "no traceable instruction in $f after its entry"
faddr=$(jq -r 'select(.type == "function") | .address' /tmp/lo.json)
n=20
b=$(( 2 * ($(od -An -tu2 -N2 /dev/urandom) % 1000) + 1 ))

syscall_loop read 100000000 "$b" >/tmp/loop.pid &
loop=$!
kt_log "tracing $f+$off, -n $n, pid $loop reading $b bytes a time"
# Both ends of the pipe are checked: kinstctl's status is saved from inside
# the pipeline (busybox sh has no PIPESTATUS), jq's is the pipeline's.
rm -f /tmp/kinstctl.st
{ timeout 120 kinstctl trace --json -n "$n" --pid "$loop" "kernel:$f+$off" 2>/tmp/trace.err
  echo $? >/tmp/kinstctl.st; } |
    tee /tmp/trace.json | jq -c . >/tmp/jq.out
jst=$?
kst=$(cat /tmp/kinstctl.st 2>/dev/null)
kill "$loop" 2>/dev/null
wait "$loop" 2>/dev/null
cat /tmp/trace.err
kt_expect_eq "kinstctl trace exit status" 0 "$kst"
kt_expect_eq "jq exit status" 0 "$jst"
sum=$(grep -E '^kinstctl: [0-9]+ hits, [0-9]+ delivered, [0-9]+ dropped, [0-9]+ printed' /tmp/trace.err) ||
    kt_fail "no summary from kinstctl trace: $(cat /tmp/trace.err)"
set -- $(echo "$sum" | tr -c '0-9\n' ' ')
# -n leaves the rest of the ring unread on purpose: printed is exactly n.
kt_expect_eq "records printed (summary)" "$n" "$4"

# One object per line: jq -c writes one line per JSON value, so the two
# line counts agree only if every line held exactly one object.
kt_expect_eq "lines of kinstctl output" "$n" "$(grep -c . /tmp/trace.json)"
kt_expect_eq "JSON values jq read" "$n" "$(grep -c . /tmp/jq.out)"
kt_expect_eq "lines that are each one JSON object" "$n" \
    "$(while IFS= read -r l; do printf '%s\n' "$l" | jq -e -s 'length == 1 and (.[0] | type) == "object"' >/dev/null && echo ok; done </tmp/trace.json | grep -c ok)"

hex='^0x[0-9a-f]+$'
regs='["rax","rbx","rcx","rdx","rsi","rdi","rbp","rsp","r8","r9","r10","r11","r12","r13","r14","r15","rip","rflags","cs","ss"]'
check=".schema == 5 and .type == \"hit\"
    and (.time_ns | type == \"number\" and . > 0 and floor == .)
    and (.cpu | type == \"number\" and . >= 0 and floor == .)
    and .pid == $loop and .tid == $loop and .comm == \"syscall_loop\"
    and (.probe_id | type == \"number\" and floor == .)
    and (.probe == (\"kernel:$f+\" + ($off | tostring)) or .probe == \"kernel:$f+$(printf '0x%x' "$off")\")
    and .module == \"kernel\" and .function == \"$f\"
    and (.offset | type == \"number\") and .offset == $off
    and (.address | type == \"string\" and test(\"$hex\"))
    and (.insn | type == \"string\" and length > 0)
    and (.regs | type == \"object\")
    and ($regs - (.regs | keys) | length == 0)
    and ([.regs[] | type == \"string\" and test(\"$hex\")] | all)"
bad=$(jq -c "select(($check) | not)" /tmp/trace.json | head -n 2)
[ -z "$bad" ] || kt_fail "objects with a missing or mistyped field: $bad"
kt_expect_eq "hits whose probe is kernel:$f+0x$(printf '%x' "$off")" "$n" \
    "$(jq -r .probe /tmp/trace.json | grep -cx "kernel:$f+$(printf '0x%x' "$off")")"

# address = function + offset, rip = address (the trapped instruction)
a=$(printf '0x%x' $(( faddr + off )))
kt_expect_eq "hits with address $a" "$n" "$(jq -r .address /tmp/trace.json | grep -cx "$a")"
kt_expect_eq "hits with regs.rip $a" "$n" "$(jq -r .regs.rip /tmp/trace.json | grep -cx "$a")"
# jq .regs.rdi: the fd argument, %rdx: the count (ksys_read(fd, buf, count))
fd=$(jq -r .regs.rdi /tmp/trace.json | sort -u)
case $fd in
0x[0-9a-f]*) ;;
*) kt_fail "jq .regs.rdi gave '$fd', not one hex string" ;;
esac
[ $(( fd )) -ge 3 ] && [ $(( fd )) -lt 64 ] || kt_fail "regs.rdi (fd) = $fd, not a small fd"
kt_expect_eq "regs.rdx (count) over the hits" "$(printf '0x%x' "$b")" "$(jq -r .regs.rdx /tmp/trace.json | sort -u)"

# --regs rdx,rip: JSON with only those two registers, the same values; the
# text line with only "rdx=... rip=..." after the instruction.
syscall_loop read 100000000 "$b" >/tmp/loop.pid &
loop=$!
timeout 120 kinstctl trace --json --regs rdx,rip -n 5 --pid "$loop" "kernel:$f+$off" \
    >/tmp/regs.json 2>/tmp/regs.err
kst=$?
timeout 120 kinstctl trace --regs rdx,rip -n 5 --pid "$loop" "kernel:$f+$off" \
    >/tmp/regs.txt 2>>/tmp/regs.err
tst=$?
kill "$loop" 2>/dev/null
wait "$loop" 2>/dev/null
kt_expect_eq "kinstctl trace --json --regs rdx,rip exit status" 0 "$kst"
kt_expect_eq "kinstctl trace --regs rdx,rip exit status" 0 "$tst"
kt_expect_eq "--regs rdx,rip: objects whose regs are exactly {rdx, rip}" 5 \
    "$(jq -c '.regs | keys' /tmp/regs.json | grep -cx '\["rdx","rip"\]')"
kt_expect_eq "--regs rdx,rip: regs.rdx" "$(printf '0x%x' "$b")" "$(jq -r .regs.rdx /tmp/regs.json | sort -u)"
kt_expect_eq "--regs rdx,rip: regs.rip" "$a" "$(jq -r .regs.rip /tmp/regs.json | sort -u)"
kt_expect_eq "--regs rdx,rip: text lines ending in rdx=$(printf '0x%x' "$b") rip=$a" 5 \
    "$(grep -c " rdx=$(printf '0x%x' "$b") rip=$a\$" /tmp/regs.txt)"
kt_expect_eq "--regs rdx,rip: text lines with another register" 0 \
    "$(grep -cE ' (rax|rdi|rsi|rsp)=' /tmp/regs.txt)"
jq -r .regs.rdi /tmp/trace.json | head -n 1
exit 0
