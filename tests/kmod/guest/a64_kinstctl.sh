#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# kinstctl on arm64 (issue 44), cross-built (cli/aarch64-linux-gnu.cmake)
# and run in the arm64 guest against the live kernel: list-offsets from
# /proc/kallsyms and the device's text, trace in text and JSON with the
# arm64 register file, a predicate on x2, BTF arguments, stacks, count
# and hist keyed by a register, FUNC:return and $retval (x0), latency,
# a capture printed back.  Each check prints "RC-<check> N" (0: passed)
# and what it saw; the host (a64_guest_test:kinstctl) asserts each, and
# checks cover's JSON (the lines "COVER ...") with jq.
set -u
check() {	# NAME CONDITION-EXIT-STATUS WHAT
	echo "RC-$1 $2"
	[ "$2" = 0 ] || echo "FAIL $1: $3"
}
armed() {	# FILE: wait (up to 120 s) until the kinstctl writing FILE says it traces
	n=0
	while ! grep -q '^kinstctl: tracing ' "$1" 2>/dev/null && [ $n -lt 120 ]; do
		sleep 1
		n=$((n + 1))
	done
}
writes() {	# N TEXT: N write(2)s of TEXT and a newline to /dev/null, one shell
	sh -c "i=0; while [ \$i -lt $1 ]; do echo $2 >/dev/null; i=\$((i + 1)); done"
}

# list-offsets, live: the A64 classifier's verdicts and the return point.
kinstctl list-offsets ksys_write >lo.txt 2>&1
head -n 3 lo.txt
n=$(grep -c 'emulated: ret  \[return\]' lo.txt)
grep -q 'arm64' lo.txt && [ "$n" -ge 1 ]
check list-offsets $? "ksys_write: no arm64 listing or no return point ($n)"

# trace --json: 100 hits of write(2)s of 7 bytes (x2) to fd 1 (x0), pc the
# probe's address, EL1h.
timeout 60 kinstctl trace --json -n 100 --if 'x2 == 7' ksys_write+0 >tj.txt 2>tj.err &
tp=$!
armed tj.err
writes 150 abcdef
wait $tp
n=$(grep -c '"type":"hit"' tj.txt)
x2=$(grep -c '"x2":"0x7"' tj.txt)
x0=$(grep -c '"x0":"0x1"' tj.txt)
pc=$(grep -c '"address":"\(0x[0-9a-f]*\)".*"pc":"\1"' tj.txt)
el=$(grep -c '"pstate":"0x[0-9a-f]*5"' tj.txt)
echo "trace-json: $n hits, x2 7: $x2, x0 1: $x0, pc the address: $pc, EL1h: $el"
[ "$n" = 100 ] && [ "$x2" = 100 ] && [ "$x0" = 100 ] && [ "$pc" = 100 ] && [ "$el" = 100 ]
check trace-json $? "$(head -c 300 tj.err)"

# trace --args (BTF): the arguments by name, a predicate on one.
timeout 60 kinstctl trace --args -n 20 --if 'args.count == 5' ksys_write >ta.txt 2>&1 &
tp=$!
armed ta.txt
writes 30 abcd
wait $tp
n=$(grep -c 'ksys_write(fd=1, buf=0x[0-9a-f]*, count=5)' ta.txt)
echo "trace-args: $n of 20 with fd=1 count=5"
[ "$n" = 20 ]
check trace-args $? "$(grep -m 2 ksys_write ta.txt)"

# trace --stack: frame 1 of getpid's probe is invoke_syscall.
timeout 60 kinstctl trace --stack -n 20 __arm64_sys_getpid+8 >ts.txt 2>&1 &
tp=$!
armed ts.txt
a64_devcheck cycle __arm64_sys_getpid 40 >/dev/null 2>&1
wait $tp
n=$(grep -c '__arm64_sys_getpid+0x8  ' ts.txt)
s=$(grep -c '^        invoke_syscall+0x[0-9a-f]* \[kernel\]$' ts.txt)
echo "trace-stack: $n hits, $s with invoke_syscall below"
[ "$n" = 20 ] && [ "$s" = 20 ]
check trace-stack $? "$(head -n 4 ts.txt)"

# count --by x2: exactly one per write(2), keyed by its length.
kinstctl count --by x2 --if 'x2 == 7 || x2 == 3' ksys_write+0 -- \
    sh -c 'i=0; while [ $i -lt 40 ]; do echo abcdef >/dev/null; echo ab >/dev/null; i=$((i + 1)); done' \
    >cb.txt 2>&1
cat cb.txt
grep -Eq '^ +40 +7$' cb.txt && grep -Eq '^ +40 +3$' cb.txt
check count-by $? "no rows 40 7 and 40 3"

# FUNC:return and $retval (x0 at the ret): one hit per call, the length.
kinstctl count --if '$retval == 6' ksys_write:return -- \
    sh -c 'i=0; while [ $i -lt 50 ]; do echo abcde >/dev/null; i=$((i + 1)); done' >cr.txt 2>&1
cat cr.txt
grep -Eq '^ +50 +kernel:ksys_write\+0x[0-9a-f]+ +ret' cr.txt
check count-return $? "not 50 at the ret"

# hist of a value per key.
kinstctl hist --by x2 --value x2 ksys_write+0 --if 'x2 == 9' -- \
    sh -c 'i=0; while [ $i -lt 25 ]; do echo abcdefgh >/dev/null; i=$((i + 1)); done' >hb.txt 2>&1
cat hb.txt
grep -q '^count 25, sum 225, min 9, max 9' hb.txt
check hist $? "not 25 values of 9"

# latency: entry to the returns, a sample per call.
kinstctl latency ksys_write --if '$entry(x2) == 4' -- \
    sh -c 'i=0; while [ $i -lt 30 ]; do echo abc >/dev/null; i=$((i + 1)); done' >la.txt 2>&1
cat la.txt
grep -q '^count 30, min [0-9]* ns' la.txt
check latency $? "not 30 samples"

# A capture, printed back with the arm64 register file.
timeout 60 kinstctl trace --output cap.kcap -n 10 --if 'x2 == 7' ksys_write+0 2>cap.err &
tp=$!
armed cap.err
writes 20 abcdef
wait $tp
kinstctl print cap.kcap >cp.txt 2>&1
n=$(grep -c 'kernel:ksys_write+0x0 .* pc=0x[0-9a-f]* sp=0x[0-9a-f]* x0=0x1 x1=0x[0-9a-f]* x2=0x7 ' cp.txt)
echo "capture: $n of 10 printed back"
[ "$n" = 10 ]
check capture $? "$(head -n 2 cp.txt) $(head -c 200 cap.err)"

# cover: every instruction of ksys_write counted in the kernel, b.cond's
# taken and not taken from the NZCV key, cbz/tbz's from their registers;
# the JSON goes to the host.
# Besides 40 plain writes: 10 to a read-only descriptor (vfs_write fails:
# the tbnz on the result's sign bit is taken) and 10 to a regular file
# this shell shares with the workload (fdget_pos locks f_pos: the tbnz on
# FDPUT_POS_UNLOCK is taken), so that cbz/tbz go both ways.
exec 4>/tmp/cover-shared
kinstctl cover --json ksys_write -- \
    sh -c 'i=0; while [ $i -lt 40 ]; do echo abcdef >/dev/null; i=$((i + 1)); done
        i=0; while [ $i -lt 10 ]; do echo x 2>/dev/null >&3; echo y >&4; i=$((i + 1)); done' \
    3</dev/null >cv.json 2>cv.err
check cover $? "$(head -c 300 cv.err)"
sed 's/^/COVER /' cv.json
