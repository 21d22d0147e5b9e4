#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: kernel types from /sys/kernel/btf/vmlinux: trace --args at ksys_read's entry prints the fd and count a program passed (JSON "args" and text), at the entry list-offsets shows; ksys_lseek's negative offset is printed signed and selected by a signed --if 'offset < 0'; through vfs_read's struct file *, count --by 'args.file->f_pos' is the offset the program lseek'd to and --if 'file->f_inode->i_ino == INO' keeps exactly its reads (INO from stat); __task_pid_nr_ns's type == PIDTYPE_TGID (an enumerator) counts exactly the loop's getpids, and --mem '&args.task->comm:16' reads the caller's name; typos and --args at a non-entry offset are one-line usage errors; clean log
# scenario-needs: kinst
# scenario-timeout: 400
#
# Proof item 2 of issue 12 (BTF).  The program is seek_read FILE OFF BYTES
# N BACK: N times lseek(fd, OFF, SEEK_SET), read(fd, buf, BYTES),
# lseek(fd, -BACK, SEEK_END); it prints its fd.  Signatures in Linux 6.1:
# ksys_read(unsigned int fd, char __user *buf, size_t count),
# ksys_lseek(unsigned int fd, off_t offset, unsigned int whence),
# vfs_read(struct file *file, char __user *buf, size_t count, loff_t *pos)
# (ksys_read passes a copy of f_pos, so file->f_pos is OFF there too).
. /kinst/lib/guest-lib.sh
kt_need_kinst

[ -r /sys/kernel/btf/vmlinux ] || kt_fail "the guest kernel has no /sys/kernel/btf/vmlinux"
dat=/tmp/btf.$(od -An -tx4 -N4 /dev/urandom | tr -d ' ')
dd if=/dev/urandom of="$dat" bs=1024 count=64 2>/dev/null || kt_fail "cannot write $dat"
ino=$(stat -c %i "$dat") || kt_fail "stat $dat"
n=$(( 20 + $(od -An -tu2 -N2 /dev/urandom) % 30 ))
off=$(( 4096 + $(od -An -tu2 -N2 /dev/urandom) % 4096 ))
bytes=$(( 1 + $(od -An -tu2 -N2 /dev/urandom) % 900 ))
back=$(( 1 + $(od -An -tu2 -N2 /dev/urandom) % 1000 ))
kt_log "$dat (inode $ino): $n x (lseek $off, read $bytes, lseek -$back from the end)"
sel='comm == "seek_read"'

# 1. --args at ksys_read's entry, JSON: fd and count as passed.
kinstctl list-offsets --json ksys_read >/tmp/lo.json || kt_fail "list-offsets ksys_read failed"
first=$(jq -r 'select(.type == "insn" and (.verdict | startswith("refused") | not)) | .offset' \
    /tmp/lo.json | head -n 1)
kt_trace_start /tmp/a.json /tmp/a.err --json --args --if "$sel" kernel:ksys_read
fd=$(seek_read "$dat" "$off" "$bytes" "$n" "$back" | sed -n 's/^fd //p') ||
    kt_fail "seek_read failed"
kt_trace_stop
st=$?
[ "$st" = 0 ] || kt_fail "kinstctl trace --args exited $st: $(cat /tmp/a.err)"
cat /tmp/a.err
kt_trace_summary /tmp/a.err /tmp/a.json
kt_expect_eq "records dropped" 0 "$KT_DROPPED"
kt_expect_eq "ksys_read hits of seek_read" "$n" "$KT_PRINTED"
kt_expect_eq "hits at the entry list-offsets shows (first traceable offset)" "$n" \
    "$(jq -c "select(.type == \"hit\" and .offset == $first)" /tmp/a.json | grep -c .)"
kt_expect_eq "hits whose args are {fd: $fd, count: $bytes} and buf a pointer" "$n" \
    "$(jq -c "select(.type == \"hit\" and .args.fd == $fd and .args.count == $bytes and
        (.args.buf | startswith(\"0x\")) and (.args | length) == 3)" /tmp/a.json | grep -c .)"

# 2. --args text at ksys_lseek, a signed argument, filtered by a signed
# comparison in the kernel (the SEEK_SET calls have offset $off > 0).
kt_trace_start /tmp/l.txt /tmp/l.err --args --no-color --if "$sel && offset < 0" kernel:ksys_lseek
seek_read "$dat" "$off" "$bytes" "$n" "$back" >/dev/null || kt_fail "seek_read failed"
kt_trace_stop
st=$?
[ "$st" = 0 ] || kt_fail "kinstctl trace --args ksys_lseek exited $st: $(cat /tmp/l.err)"
kt_trace_summary /tmp/l.err /tmp/l.txt
kt_expect_eq "ksys_lseek hits with offset < 0" "$n" "$KT_PRINTED"
kt_expect_eq "not matching (the SEEK_SET calls, and other processes')" 1 \
    "$([ "$KT_NOMATCH" -ge "$n" ] && echo 1 || echo 0)"
kt_expect_eq "lines showing ksys_lseek(fd=$fd, offset=-$back, whence=2)" "$n" \
    "$(grep -cF "ksys_lseek(fd=$fd, offset=-$back, whence=2)" /tmp/l.txt)"

# 3. Members through vfs_read's struct file *: the position is the offset
# lseek set, and the inode number selects exactly this file's reads.
kinstctl count --json --by 'args.file->f_pos' --value '*args.pos' \
    --if "$sel && file->f_inode->i_ino == $ino" kernel:vfs_read -- \
    sh -c "exec seek_read $dat $off $bytes $n $back >/dev/null" >/tmp/c.json 2>/tmp/c.err ||
    kt_fail "kinstctl count --by args.file->f_pos failed: $(cat /tmp/c.err)"
cat /tmp/c.err
kt_expect_eq "count rows" 1 "$(jq -c 'select(.type == "count")' /tmp/c.json | grep -c .)"
kt_expect_eq "reads at f_pos $off" "$n" \
    "$(jq -r "select(.type == \"count\" and .key == $off) | .count" /tmp/c.json)"
kt_expect_eq "*pos (loff_t) summed over the reads" $((n * off)) \
    "$(jq -r "select(.type == \"count\" and .key == $off) | .sum" /tmp/c.json)"
kinstctl count --json --if "$sel && file->f_inode->i_ino == $ino + 1" kernel:vfs_read -- \
    sh -c "exec seek_read $dat $off $bytes $n $back >/dev/null" >/tmp/c2.json 2>/tmp/c2.err ||
    kt_fail "kinstctl count --if i_ino failed: $(cat /tmp/c2.err)"
kt_expect_eq "reads of inode $((ino + 1))" 0 \
    "$(jq -r 'select(.type == "count") | .count' /tmp/c2.json | awk '{ s += $1 } END { print s + 0 }')"

# 3b. An enumerator and '&' through vmlinux's BTF.  getpid(2) is
# task_tgid_vnr(current): __task_pid_nr_ns(task, PIDTYPE_TGID, NULL).  The
# loop's calls with type == PIDTYPE_TGID, counted twice with g and 2g
# getpids: the difference is exactly g (what the process does besides its
# loop is the same both times), and 'type' is the key 1 (PIDTYPE_TGID's
# value in 6.1) only; PIDTYPE_MAX matches nothing.
g=$(( 10 + $(od -An -tu2 -N2 /dev/urandom) % 20 ))
pidcount() {
	kinstctl count --json --by 'args.type' \
	    --if "comm == \"syscall_loop\" && type == $1" kernel:__task_pid_nr_ns -- \
	    sh -c "exec syscall_loop getpid $2 >/dev/null" >/tmp/g.json 2>/tmp/g.err ||
	    kt_fail "kinstctl count --if 'type == $1' __task_pid_nr_ns failed: $(cat /tmp/g.err)"
	jq -r 'select(.type == "count") | "\(.key):\(.count)"' /tmp/g.json >/tmp/g.rows ||
	    kt_fail "count --json output is not JSON lines: $(head -c 300 /tmp/g.json)"
	grep -q '"type": *"summary"' /tmp/g.json ||
	    kt_fail "count --json printed no summary: $(head -c 300 /tmp/g.json)"
	cat /tmp/g.rows
}
r1=$(pidcount PIDTYPE_TGID "$g")
r2=$(pidcount PIDTYPE_TGID $((2 * g)))
kt_log "__task_pid_nr_ns with type == PIDTYPE_TGID: $r1 ($g getpids), $r2 ($((2 * g)))"
kt_expect_eq "keys (type) of the PIDTYPE_TGID calls" "1 1" "${r1%%:*} ${r2%%:*}"
kt_expect_eq "PIDTYPE_TGID calls of 2g getpids minus those of g" "$g" $(( ${r2#*:} - ${r1#*:} ))
kt_expect_eq "calls with type == PIDTYPE_MAX" "" "$(pidcount PIDTYPE_MAX "$g")"
# &args.task->comm: the address of the task's comm, read as 16 bytes.
kt_trace_start /tmp/m.json /tmp/m.err --json -n 1 --mem '&args.task->comm:16' \
    --if 'comm == "syscall_loop" && type == PIDTYPE_TGID' kernel:__task_pid_nr_ns
syscall_loop getpid "$g" >/dev/null || kt_fail "syscall_loop failed"
kt_trace_stop
st=$?
[ "$st" = 0 ] || kt_fail "kinstctl trace --mem '&args.task->comm:16' exited $st: $(cat /tmp/m.err)"
want=$(printf 'syscall_loop' | od -An -tx1 | tr -d ' \n')00000000
kt_expect_eq "the 16 bytes at &args.task->comm" "$want" \
    "$(jq -r 'select(.type == "hit") | .mem[0].bytes' /tmp/m.json)"

# 4. Errors: one line, exit 2 (usage), nothing armed.
expect_usage() {
	_want=$1
	shift
	kinstctl "$@" >/tmp/e.out 2>/tmp/e.err
	_st=$?
	kt_expect_eq "exit status of kinstctl $*" 2 "$_st"
	kt_expect_eq "stderr lines of kinstctl $*" 1 "$(grep -c . /tmp/e.err)"
	grep -qF "$_want" /tmp/e.err || kt_fail "kinstctl $*: expected '$_want' in: $(cat /tmp/e.err)"
}
expect_usage "no member 'f_poss' in struct file; did you mean f_pos?" \
    trace --if 'args.file->f_poss == 1' kernel:vfs_read
expect_usage "ksys_read has no argument 'cnt'; did you mean count?" \
    trace --if 'args.cnt == 1' kernel:ksys_read
expect_usage "is not ksys_read's entry" trace --args "kernel:ksys_read+$(jq -r \
    "select(.type == \"insn\" and .offset > $first) | .offset" /tmp/lo.json | head -n 1)"
