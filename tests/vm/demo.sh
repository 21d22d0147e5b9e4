#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Guest side of tests/demo: a live trace of a real kernel function.
set -eu

# A reader the trace can see: dd reading 7-byte blocks (read(2) -> ksys_read).
# (exec: the background job's pid is dd's, for --pid.)
reader() {
	sleep 1
	exec dd if=/dev/zero of=/dev/null bs=7 count="$1" 2>/dev/null
}

echo "== kinstctl list-offsets ksys_read  (the live text: what can be traced, and how)"
kinstctl list-offsets --no-color ksys_read | head -n 16
echo

echo "== kinstctl trace -n 12 ksys_read  (every instruction of the function; dd reads 7 bytes at a time)"
reader 100 &
kinstctl trace --no-color -n 12 --duration 10 ksys_read
wait
echo

# The first instruction after ftrace's patchable entry: %rdx is read(2)'s count.
off=$(kinstctl list-offsets --json ksys_read |
    jq -r 'select(.type == "insn" and .offset > 0 and .verdict != "refused") | .offset' |
    head -n 1)
echo "== kinstctl trace --json --pid DD ksys_read+$off | jq  (count = %rdx: 7)"
reader 50 &
kinstctl trace --json -n 6 --duration 10 --pid $! "ksys_read+$off" |
    jq -M -c '{comm, pid, probe, insn, count: .regs.rdx}'
wait
