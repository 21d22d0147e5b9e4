#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: a module's types, /sys/kernel/btf/binfmt_misc split on top of vmlinux (Debian's binfmt_misc.ko): trace --args binfmt_misc:bm_register_write gives each registration's byte count (JSON "args"), binfmt_misc:parse_command's count in text; through put_binfmt_handler's Node *e (a type only the module's BTF has), count --by 'args.e->offset' --value 'args.e->size' gives each entry's magic offset, exec count and magic length, --if 'e->offset == O' keeps exactly one entry's execs (the spec without MODULE:, the module's BTF found among the loaded ones), and remove_binfmt_handler sees each entry once; with --btf /sys/kernel/btf/vmlinux (no module types) the same specs are a one-line error; clean log
# scenario-needs: kinst
# scenario-modules: binfmt_misc
# scenario-timeout: 360
#
# kinstctl reads a module function's types from /sys/kernel/btf/MODULE,
# split BTF whose ids and strings continue vmlinux's (cli/debuginfo/btf_types.cc,
# TypeSource::get); this is the scenario that loads one.  binfmt_misc
# (CONFIG_BINFMT_MISC=m in Debian's 6.1) needs no hardware, and its BTF
# defines the struct every entry lives in, the anonymous "typedef struct
# {...} Node", which vmlinux's does not have.  Signatures in Debian's 6.1
# (the binfmt_misc refcounting fix backported; fs/binfmt_misc.c):
#   bm_register_write(struct file *file, const char __user *buffer,
#                     size_t count, loff_t *ppos)   a write to .../register
#   parse_command(const char __user *buffer, size_t count)
#                                  a write to an entry ("0", "1", "-1")
#   put_binfmt_handler(Node *e)    once per exec that entry e handled
#                                  (load_misc_binary's end)
#   remove_binfmt_handler(Node *e) "-1" written to entry e
# Node: int offset (where the magic is), int size (its length), ...
#
# Entries kt1..ktN, "M" (magic) type: kt$i has its magic, "kinst$i" and
# random letters (never seen in busybox's ELF header, the interpreter's),
# at a random offset, distinct per entry; /tmp/kt$i.bin holds that magic
# at that offset and is run X_i times: binfmt_misc runs /bin/true for it.
. /kinst/lib/guest-lib.sh
kt_need_kinst

kt_load_kernel_module binfmt_misc
[ -r /sys/kernel/btf/binfmt_misc ] ||
    kt_fail "binfmt_misc is loaded but has no /sys/kernel/btf/binfmt_misc (CONFIG_DEBUG_INFO_BTF_MODULES?)"
kt_log "/sys/kernel/btf/binfmt_misc: $(wc -c </sys/kernel/btf/binfmt_misc) bytes (vmlinux's: $(wc -c </sys/kernel/btf/vmlinux))"
bm=/proc/sys/fs/binfmt_misc
mount -t binfmt_misc binfmt_misc $bm || kt_fail "mount -t binfmt_misc failed"
[ -w $bm/register ] || kt_fail "no $bm/register after mounting binfmt_misc"

rnd() {
	echo $(( $(od -An -tu2 -N2 /dev/urandom) % $1 ))
}
letters=abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz
n=5
i=1
regs= execs= offs= sizes= xs=
while [ $i -le $n ]; do
	o=$(( i * 20 + $(rnd 20) ))	# distinct: [20i, 20i + 20)
	l=$(( 3 + $(rnd 30) ))
	r=$(rnd 20)
	m=kinst$i$(echo "$letters" | cut -c$((r + 1))-$((r + l)))
	x=$(( 1 + $(rnd 5) ))
	eval "o$i=$o m$i=$m x$i=$x"
	reg=":kt$i:M:$o:$m::/bin/true:"
	eval "reg$i='$reg'"
	regs="$regs ${#reg}"
	offs="$offs $o" sizes="$sizes ${#m}" xs="$xs $x"
	# The file: $o bytes of padding, then the magic.
	{ head -c "$o" /dev/zero | tr '\0' 'z'; printf '%s\n' "$m"; } >/tmp/kt$i.bin
	chmod +x /tmp/kt$i.bin
	execs="$execs k=0; while [ \$k -lt $x ]; do /tmp/kt$i.bin || exit 1; k=\$((k + 1)); done;"
	kt_log "kt$i: magic '$m' (${#m} bytes) at offset $o, run $x times; registered with '$reg' (${#reg} bytes)"
	i=$((i + 1))
done
execs="$execs exit 0"

# 1. --args in JSON at bm_register_write: one hit per registration, its
# byte count as written; the pointers as pointers.
kt_trace_start /tmp/r.json /tmp/r.err --json --args binfmt_misc:bm_register_write
i=1
while [ $i -le $n ]; do
	eval "reg=\$reg$i"
	printf '%s' "$reg" >$bm/register || kt_fail "registering '$reg' failed"
	i=$((i + 1))
done
kt_trace_stop
st=$?
[ "$st" = 0 ] || kt_fail "kinstctl trace --args binfmt_misc:bm_register_write exited $st: $(cat /tmp/r.err)"
cat /tmp/r.err
kt_trace_summary /tmp/r.err /tmp/r.json
kt_expect_eq "records dropped" 0 "$KT_DROPPED"
kt_expect_eq "bm_register_write hits" "$n" "$KT_PRINTED"
# (Sorted: records from two CPUs need not come in the order of the writes.)
kt_expect_eq "args.count of the hits (the registrations' lengths)" \
    "$(for r in $regs; do echo "$r"; done | sort -n | tr '\n' ' ')" \
    "$(jq -r 'select(.type == "hit") | .args.count' /tmp/r.json | sort -n | tr '\n' ' ')"
kt_expect_eq "hits whose args are exactly file, buffer, count, ppos, the pointers 0x..." "$n" \
    "$(jq -c 'select(.type == "hit" and (.args | keys) == ["buffer", "count", "file", "ppos"] and
        ([.args.file, .args.buffer, .args.ppos] | all(startswith("0x"))))' /tmp/r.json | grep -c .)"
i=1
while [ $i -le $n ]; do
	[ -e $bm/kt$i ] || kt_fail "entry kt$i was not registered"
	i=$((i + 1))
done

# 2. --args in text at parse_command (its prototype is the module's own):
# "0" (1 byte) disables kt1, "1\n" (2 bytes) enables it again.
kt_trace_start /tmp/p.txt /tmp/p.err --args --no-color binfmt_misc:parse_command
printf 0 >$bm/kt1 || kt_fail "disabling kt1 failed"
grep -qx disabled $bm/kt1 || kt_fail "kt1 is not disabled: $(cat $bm/kt1)"
echo 1 >$bm/kt1 || kt_fail "enabling kt1 failed"
grep -qx enabled $bm/kt1 || kt_fail "kt1 is not enabled: $(cat $bm/kt1)"
kt_trace_stop
st=$?
[ "$st" = 0 ] || kt_fail "kinstctl trace --args binfmt_misc:parse_command exited $st: $(cat /tmp/p.err)"
cat /tmp/p.txt /tmp/p.err
kt_trace_summary /tmp/p.err /tmp/p.txt
kt_expect_eq "parse_command hits" 2 "$KT_PRINTED"
kt_expect_eq "lines parse_command(buffer=0x..., count=N): N" "1 2" \
    "$(sed -n 's/.*parse_command(buffer=0x[0-9a-f]*, count=\([0-9]*\)).*/\1/p' /tmp/p.txt | sort -n | tr '\n' ' ' | sed 's/ $//')"

# 3. Members of the module's Node through put_binfmt_handler's e: one row
# per entry, keyed by its offset, counting its execs, summing its size.
kinstctl count --json --by 'args.e->offset' --value 'args.e->size' \
    binfmt_misc:put_binfmt_handler -- sh -c "$execs" >/tmp/c.json 2>/tmp/c.err ||
    kt_fail "kinstctl count --by 'args.e->offset' binfmt_misc:put_binfmt_handler failed: $(cat /tmp/c.err)"
cat /tmp/c.json /tmp/c.err
kt_expect_eq "count rows (one per entry)" "$n" "$(jq -c 'select(.type == "count")' /tmp/c.json | grep -c .)"
i=1
while [ $i -le $n ]; do
	eval "o=\$o$i m=\$m$i x=\$x$i"
	kt_expect_eq "kt$i: execs handled with e->offset == $o" "$x" \
	    "$(jq -r "select(.type == \"count\" and .key == $o) | .count" /tmp/c.json)"
	kt_expect_eq "kt$i: e->size (its magic's length, ${#m}) summed over them" $((x * ${#m})) \
	    "$(jq -r "select(.type == \"count\" and .key == $o) | .sum" /tmp/c.json)"
	i=$((i + 1))
done

# 4. A member in --if, compared in the kernel: exactly kt3's execs.  The
# spec does not name the module: kinstctl finds the loaded module whose
# BTF has the function.
kinstctl count --json --if "e->offset == $o3 && e->size == ${#m3}" \
    put_binfmt_handler -- sh -c "$execs" >/tmp/f.json 2>/tmp/f.err ||
    kt_fail "kinstctl count --if 'e->offset == $o3' failed: $(cat /tmp/f.err)"
cat /tmp/f.err
kt_expect_eq "put_binfmt_handler hits with e->offset == $o3 && e->size == ${#m3} (kt3's execs)" "$x3" \
    "$(jq -r 'select(.type == "count") | .count' /tmp/f.json | awk '{ s += $1 } END { print s + 0 }')"

# 5. remove_binfmt_handler: "-1" to each entry removes it, once each.
rm_all=
i=1
while [ $i -le $n ]; do
	rm_all="$rm_all echo -1 >$bm/kt$i || exit 1;"
	i=$((i + 1))
done
kinstctl count --json --by 'args.e->offset' binfmt_misc:remove_binfmt_handler -- \
    sh -c "$rm_all exit 0" >/tmp/d.json 2>/tmp/d.err ||
    kt_fail "kinstctl count binfmt_misc:remove_binfmt_handler failed: $(cat /tmp/d.err)"
cat /tmp/d.err
kt_expect_eq "remove_binfmt_handler keys (e->offset), once each" \
    "$(for o in $offs; do echo "$o:1"; done | sort | tr '\n' ' ')" \
    "$(jq -r 'select(.type == "count") | "\(.key):\(.count)"' /tmp/d.json | sort | tr '\n' ' ')"
i=1
while [ $i -le $n ]; do
	[ ! -e $bm/kt$i ] || kt_fail "entry kt$i is still there after -1"
	i=$((i + 1))
done

# 6. Errors: a typo in a member of the module's struct names the members
# the module's BTF has; vmlinux's types alone (--btf) have none of the
# module's functions.  One line each, a non-zero status, no crash.
expect_error() {
	_want=$1 _code=$2
	shift 2
	kinstctl "$@" >/tmp/e.out 2>/tmp/e.err
	_st=$?
	kt_expect_eq "exit status of kinstctl $*" "$_code" "$_st"
	kt_expect_eq "stderr lines of kinstctl $*" 1 "$(grep -c . /tmp/e.err)"
	grep -qF "$_want" /tmp/e.err || kt_fail "kinstctl $*: expected '$_want' in: $(cat /tmp/e.err)"
	kt_log "kinstctl $*: $(cat /tmp/e.err)"
}
expect_error "did you mean offset?" 2 \
    count --by 'args.e->ofset' binfmt_misc:put_binfmt_handler -- true
expect_error "put_binfmt_handler: no function of that name in the kernel's types (/sys/kernel/btf/vmlinux" 8 \
    trace --btf /sys/kernel/btf/vmlinux --args binfmt_misc:put_binfmt_handler
expect_error "parse_command: no function of that name in the kernel's types (/sys/kernel/btf/vmlinux" 8 \
    count --btf /sys/kernel/btf/vmlinux --by 'args.count' binfmt_misc:parse_command -- true
umount $bm || kt_fail "umount $bm failed"
kt_log "binfmt_misc: split BTF types held"
