#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# kinst.ko on arm64 (issue 44): Debian's arm64 kernel under
# qemu-system-aarch64 (TCG, -M virt), the module cross-built against its
# headers (tests/kmod/CMakeLists.txt: kinst_ko_arm64), driven through
# /dev/kinst by a64_devcheck (tests/kmod/a64_devcheck.c) and the scripts
# tests/kmod/guest/a64_*.sh.  run-in-guest --arch arm64 fails a run whose
# kernel log shows BUG, WARNING, Oops or stalls, or that taints the kernel.

KINST_DEFAULT_SRCDIR="@KINST_SRCDIR@"
KINST_DEFAULT_BUILDDIR="@KINST_BUILDDIR@"
KINST_DEFAULT_CACHE="@KINST_CACHE_DEFAULT@"
. "$KINST_DEFAULT_SRCDIR/tests/lib/vm.sh"

a64_run() {
	vm_setup
	command -v qemu-system-aarch64 >/dev/null 2>&1 ||
	    atf_skip "SKIPPED: qemu-system-aarch64 is not installed (apt-get install qemu-system-arm, or run tests/setup): the arm64 guest cannot run"
	ls "$KINST_CACHE"/kernel-arm64/root/boot/vmlinuz-* >/dev/null 2>&1 ||
	    atf_skip "SKIPPED: no Debian arm64 kernel under $KINST_CACHE/kernel-arm64 (run tests/setup): the arm64 guest cannot run"
	[ -x "$KINST_CACHE"/busybox-arm64/root/bin/busybox ] ||
	    atf_skip "SKIPPED: no arm64 busybox under $KINST_CACHE/busybox-arm64 (run tests/setup): the arm64 guest cannot run"
	ko=$KINST_BUILD/kmod-linux-arm64/kinst.ko
	[ -f "$ko" ] ||
	    atf_skip "SKIPPED: $ko is not built (no arm64 headers under $KINST_CACHE/headers-arm64, or no aarch64-linux-gnu-gcc: run tests/setup)"
	dc=$KINST_BUILD/tests/kmod/a64_devcheck
	[ -x "$dc" ] || atf_fail "$dc is missing"
	script=$1
	shift
	vm_run --arch arm64 --require-module --module "$ko" -f "$dc" "$@" \
	    "$top/tests/kmod/guest/$script"
	if [ "$vm_status" != 0 ]; then
		vm_show_logs
		atf_fail "arm64 guest script $script failed (exit $vm_status): $(grep -h '^FAIL' vm.out | head -n 3 | tr '\n' ' ')"
	fi
}

# a64_expect_rc NAME: the check's "RC-NAME 0" line.
a64_expect_rc() {
	grep -q "^RC-$1 0\$" vm.out || atf_fail "check $1: $(grep "^RC-$1 " vm.out || echo 'no result line') $(grep -h '^FAIL' vm.out | head -n 2 | tr '\n' ' ')"
}

atf_test_case basics
basics_head() {
	atf_set descr "arm64: getpid's probe gives exactly one record per call with pc and EL1h; write(2)'s arguments in x0-x2; stacks through the frame records (PAC stripped) at every prologue offset; an exclusive sequence's load and the instruction after it refused; what kinst's handler calls (through the module's PLT on most boots) refused as trap path; two sessions on one instruction, each with every hit; interrupts unmasked again after an out-of-line hit; a program's predicate on x0 and capture of the user buffer at x1; whole busy functions armed under a load that checks its own results; text restored; no kernel trouble"
	atf_set timeout 600
}
basics_body() {
	a64_run a64_basic.sh -t 540
	for c in cycle regs stack-0 stack-8 stack-12 stack-16 stack-24 stack-40 \
	    exclusive trap-path shared masks pred all-getpid all-vfs_read all-ksys_write \
	    all-do_sys_openat2; do
		a64_expect_rc "$c"
	done
	grep -q '^cycle __arm64_sys_getpid: 1000 records of ours, 0 failures' vm.out ||
	    atf_fail "getpid's count"
	grep -q '^regs: 200 writes seen in x0-x2, 0 failures' vm.out ||
	    atf_fail "write(2)'s registers"
	grep -Eq '^shared __arm64_sys_getpid\+(0|0x[0-9a-f]+): 500 and 500 records, 0 failures' vm.out ||
	    atf_fail "two sessions on one instruction"
	grep -Eq '^pred ksys_write\+(0|0x[0-9a-f]+): 100 records of 200 writes to fd [0-9]+, 100 captures, 0 failures' vm.out ||
	    atf_fail "predicate and capture"
	grep -Eq '^all vfs_read: [0-9]+ of [0-9]+ instructions armed' vm.out ||
	    atf_fail "vfs_read not armed whole"
}

atf_test_case kinstctl
kinstctl_head() {
	atf_set descr "arm64: kinstctl cross-built for arm64 against the live kernel: list-offsets with the A64 verdicts and the ret; trace --json with x0-x30, sp, pc, pstate (100 of 100 hits with x2 7, x0 1, pc the address, EL1h); BTF arguments by name; stacks with invoke_syscall as frame 1; count --by x2 exact per key; FUNC:return with \$retval exact; hist of a value; latency with \$entry(x2); a capture printed back; cover: b.cond split from NZCV, cbz/cbnz/tbz/tbnz from their registers, every count equal to what reaches it, a cbz/tbz both ways"
	atf_set timeout 600
}
kinstctl_body() {
	vm_setup
	k=$KINST_BUILD/cli-arm64/kinstctl
	[ -x "$k" ] ||
	    atf_skip "SKIPPED: $k is not built (no arm64 libraries under $KINST_CACHE/arm64-sysroot, or no aarch64-linux-gnu-g++: run tests/setup)"
	a64_run a64_kinstctl.sh -f "$k" -t 540
	for c in list-offsets trace-json trace-args trace-stack count-by \
	    count-return hist latency capture cover; do
		a64_expect_rc "$c"
	done
	# cover's JSON: exact, every instruction of ksys_write but the
	# ftrace nop counted; at least 40 calls through its ret; each b.cond,
	# cbz, cbnz, tbz and tbnz split into taken and not taken adding up to
	# its count; blocks that never ran.
	sed -n 's/^COVER //p' vm.out >cover.json
	jq -e -s 'map(select(.type == "cover_function")) | length == 1 and
	    (.[0].exact and .[0].refused == 1 and .[0].counted == .[0].instructions - 1 and
	     .[0].blocks_executed >= 5 and .[0].never_executed >= 1)' cover.json >/dev/null ||
	    atf_fail "cover: the function's line: $(grep -m 1 cover_function cover.json | cut -c1-300)"
	jq -e -s '[.[] | select(.type == "cover_insn" and .text == "ret")] |
	    length >= 1 and all(.count >= 40)' cover.json >/dev/null ||
	    atf_fail "cover: the ret's count"
	cb='(.text | test("^(b\\.|cbz |cbnz |tbz |tbnz )"))'
	jq -e -s "[.[] | select(.type == \"cover_insn\" and $cb)] |
	    length >= 3 and all(.taken != null and .taken + .not_taken == .count)" \
	    cover.json >/dev/null || atf_fail "cover: a conditional branch's taken and not taken"
	jq -e -s '[.[] | select(.type == "cover_insn" and (.text | test("^(cbz|cbnz|tbz|tbnz) ")))] |
	    length >= 1' cover.json >/dev/null || atf_fail "cover: no cbz/tbz in ksys_write"
	# ...and each side no more than where it goes ran: the target for
	# taken, the next instruction for not taken.
	jq -e -s "[.[] | select(.type == \"cover_insn\")] as \$i |
	    (\$i | map({key: (.offset | tostring), value: .count}) | from_entries) as \$c |
	    [\$i[] | select($cb and .target != null)] |
	    length >= 3 and all((\$c[(.target | tostring)] == null or .taken <= \$c[(.target | tostring)]) and
	    (\$c[((.offset + 4) | tostring)] == null or .not_taken <= \$c[((.offset + 4) | tostring)]))" \
	    cover.json >/dev/null || atf_fail "cover: a branch's side counted more than where it goes ran"
	# Exact means the counts add up: every instruction ran as often as
	# control reached it, from the one before (all of it, a conditional
	# branch's not taken, nothing after b/ret) and from every branch to it
	# (a conditional one's taken); and some cbz/tbz went both ways (the
	# script writes to a read-only descriptor and to a shared file too).
	python3 - cover.json >flow.txt <<'PY' || atf_fail "cover: the counts do not add up: $(cat flow.txt)"
import json, re, sys
ins = [r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "cover_insn"]
cond = re.compile(r"^(b\.|cbz |cbnz |tbz |tbnz )")
into, eff, bad, both = {}, {}, [], 0
for r in ins:
    t = r.get("target")
    if isinstance(t, int) and cond.match(r["text"]):
        into[t] = into.get(t, 0) + r["taken"]
        both += r["text"][0] in "ct" and r["taken"] > 0 and r["not_taken"] > 0
    elif isinstance(t, int) and r["text"].startswith("b "):
        into[t] = into.get(t, 0) + r["count"]
prev = None
for r in ins:
    # An instruction not counted (the ftrace nop) ran as often as the one before.
    eff[r["offset"]] = r["count"] if r["count"] is not None else eff[prev["offset"]]
    if prev is not None:
        if re.match(r"^(b |br |ret|eret|udf|brk)", prev["text"]):
            fall = 0
        elif cond.match(prev["text"]):
            fall = prev["not_taken"]
        else:
            fall = eff[prev["offset"]]
        if eff[r["offset"]] != fall + into.get(r["offset"], 0):
            bad.append("+%d ran %d, reached %d" % (r["offset"], eff[r["offset"]], fall + into.get(r["offset"], 0)))
    prev = r
print("%d instructions, %d cbz/tbz both ways, wrong: %s" % (len(ins), both, bad))
sys.exit(0 if not bad and both >= 1 and len(ins) >= 40 else 1)
PY
	grep -q '^trace-json: 100 hits, x2 7: 100, x0 1: 100, pc the address: 100, EL1h: 100$' vm.out ||
	    atf_fail "trace --json's registers"
	grep -q '^trace-stack: 20 hits, 20 with invoke_syscall below$' vm.out ||
	    atf_fail "stacks"
	grep -q '^capture: 10 of 10 printed back$' vm.out || atf_fail "capture"
}

atf_test_case vars
vars_head() {
	atf_set descr "arm64: C variables by name at live hits (kinst_srctest.ko's DWARF, AArch64 register numbers): the loop counter and trip count at the loop body exact at each of 24 hits; --vars on every instruction of the loop gives n, i, acc and the inlined mix's b and r only values the loop has, each at 6 hits or more; depth and tag after the recursive call, entry values read through a hidden entry probe, each activation's own; a struct passed by reference, member by member"
	atf_set timeout 600
}
vars_body() {
	vm_setup
	k=$KINST_BUILD/cli-arm64/kinstctl
	m=$KINST_BUILD/testmod-arm64-ko/kinst_srctest.ko
	[ -x "$k" ] ||
	    atf_skip "SKIPPED: $k is not built (no arm64 libraries under $KINST_CACHE/arm64-sysroot, or no aarch64-linux-gnu-g++: run tests/setup)"
	[ -f "$m" ] ||
	    atf_skip "SKIPPED: $m is not built (no arm64 headers or no aarch64-linux-gnu-gcc: run tests/setup)"
	a64_run a64_vars.sh -f "$k" -f "$m" -f "$top/tests/vm/testmod/kinst_srctest.c" -t 540
	for c in LOOP ALL REC PT; do
		a64_expect_rc "$c"
	done
	python3 - vm.out >vars.txt <<'PY' || atf_fail "arm64 variables: $(cat vars.txt)"
import json, sys
rows = {}
for l in open(sys.argv[1]):
    pre, _, rest = l.partition(" ")
    if pre in ("LOOP", "ALL", "REC", "PT") and rest.startswith("{"):
        rows.setdefault(pre, []).append(json.loads(rest))
for k in rows:
    rows[k].sort(key=lambda r: r["time_ns"])
t, bad = 6, []
accs = [1]
for i in range(t):
    accs.append((accs[-1] * 3 + i) ^ (i << 2))
loop = [(r["vars"]["i"], r["vars"]["n"]) for r in rows.get("LOOP", [])]
if loop != [(i, t) for _ in range(4) for i in range(t)]:
    bad.append("loop body (i, n): %s" % loop)
ok = {"n": lambda v: v == t, "i": lambda v: 0 <= v <= t, "acc": lambda v: v in accs,
      "b": lambda v: 0 <= v < t, "r": lambda v: v in [accs[k] * 3 + k for k in range(t)],
      "a": lambda v: v in accs}
known = dict.fromkeys(ok, 0)
for r in rows.get("ALL", []):
    for n, v in r["vars"].items():
        if v is None:
            continue
        if n not in ok or not ok[n](v):
            bad.append("--vars +%#x %s=%s" % (r["offset"], n, v))
        else:
            known[n] += 1
for n in ("n", "i", "acc", "b", "r"):
    if known[n] < t:
        bad.append("--vars: %s known at %d hits" % (n, known[n]))
rec = rows.get("REC", [])
np = len({r["offset"] for r in rec})
want = [(d, {1: 4 * t + 8, 2: 2 * t + 3, 3: t}[d]) for _ in range(2) for d in (1, 2, 3) for _ in range(np)]
got = [(r["vars"]["depth"], r["vars"]["tag"]) for r in rec]
if np < 1 or got != want:
    bad.append("after the recursive call (depth, tag): %s, want %s" % (got, want))
pts = [r["vars"]["p"] for r in rows.get("PT", [])]
good = [p for p in pts if p == {"x": 5, "y": 9, "tag": 2}]
wrong = [p for p in pts if p is not None and p != {"x": 5, "y": 9, "tag": 2} and any(v is not None for v in p.values())]
if len(good) < 4 or wrong:
    bad.append("struct p: %d right, wrong: %s" % (len(good), wrong))
print("loop %d hits, --vars %d hits %s, recursion %d hits at %d probes, p right at %d hits; wrong: %s" %
      (len(loop), len(rows.get("ALL", [])), known, len(rec), np, len(good), bad))
sys.exit(1 if bad else 0)
PY
	cat vars.txt
}

atf_test_case kill9_unload
kill9_unload_head() {
	atf_set descr "arm64: busy functions armed whole by processes killed with SIGKILL under a load, cpu1 offline and online twice while armed: text restored, rmmod refused while armed and done after"
	atf_set timeout 600
}
kill9_unload_body() {
	a64_run a64_kill9.sh -t 540
	grep -q '^cpu1 offline and online twice while armed' vm.out || atf_fail "CPU hotplug while armed"
	grep -q '^rmmod refused while armed' vm.out || atf_fail "rmmod was not refused"
	[ "$(grep -c ': text restored$' vm.out)" -eq 4 ] || atf_fail "text not restored"
	grep -q '^rmmod after kill -9: ok' vm.out || atf_fail "rmmod after kill -9"
}

atf_init_test_cases() {
	atf_add_test_case basics
	atf_add_test_case kinstctl
	atf_add_test_case vars
	atf_add_test_case kill9_unload
}
