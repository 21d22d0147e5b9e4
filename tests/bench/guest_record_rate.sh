#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Guest benchmark of record mode (issue 24; not a test: prints figures,
# never fails on timing or on drops).  Run:
#
#   tests/vm/run-in-guest --require-module -t 1500 --append idle=poll \
#       tests/bench/guest_record_rate.sh [N [CASES]]
#
# With the loaded module's default ring (no reload), it runs each case once
# and prints, per case, the hits, the records delivered and dropped (the
# drop rate) and the records per second the consumer took in while the
# workload ran (delivered / workload seconds):
#
#   write_text, write_json  kinstctl trace [--json] >/dev/null over five
#       whole write-path functions (vfs_write ksys_write do_sys_openat2
#       pipe_write __x64_sys_getppid) under a shell loop of N iterations,
#       each writing a file, a pipe through cat, and a child shell
#   read_text, read_json    kinstctl trace -n 0 [--json] ksys_read (every
#       instruction) under dd bs=1 count=N (default 20000)
#   entry_text, entry_json  kinstctl trace [--json] ksys_read+OFF under the
#       same dd: one record per read(2); OFF: the first traceable
#       instruction after the entry (the entry is ftrace's)
#   kp_entry                the peer of entry_*: a tracefs kprobe event at
#       ksys_read+OFF with the same registers as fetchargs, read from trace_pipe
#       by cat >/dev/null; drops = missed + ring overruns
#   record_entry, record_read  kinstctl trace --output FILE (binary
#       capture), then kinstctl print FILE --json >/dev/null (print's
#       records/s printed apart), if this kinstctl has --output
#
# CASES (a quoted list) picks cases; CASE@read runs CASE with kinstctl
# reading the rings with read(2) instead of mapping them (KINSTCTL_NO_MMAP).  Exit status: 0, or 1 on an ERROR (no
# hits, no summary: the case measured nothing).
. /kinst/lib/guest-lib.sh
kt_need_kinst
n=${1:-20000}
CASES=${2:-"write_text write_json read_text read_json entry_text entry_json kp_entry record_entry record_read"}
case $n in *[!0-9]*|'') echo "ERROR: usage: guest_record_rate.sh [N [CASES]]" >&2; exit 2 ;; esac

T=$KT_TRACING
G=kinstrec
EV=kinstrec_probe
REGS="ax=%ax bx=%bx cx=%cx dx=%dx si=%si di=%di bp=%bp sp=%sp r8=%r8 r9=%r9 r10=%r10 r11=%r11 r12=%r12 r13=%r13 r14=%r14 r15=%r15 ip=%ip flags=%flags cs=%cs ss=%ss"
WRITE_FUNCS="vfs_write ksys_write do_sys_openat2 pipe_write __x64_sys_getppid"

err() {
	echo "ERROR: $*"
	echo "ERROR: $*" >&2
	exit 1
}

now_ms() {
	awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime
}

# The workloads; each sets WL_MS (its wall time in ms, /proc/uptime's).
wl_write() {
	_t0=$(now_ms)
	_i=0
	_w=$((n / 40))
	[ $_w -gt 0 ] || _w=1
	while [ $_i -lt $_w ]; do
		echo "$_i" >/tmp/wl.f
		echo "$_i" | cat >/dev/null
		sh -c 'echo $PPID >/dev/null'
		_i=$((_i + 1))
	done
	WL_MS=$(($(now_ms) - _t0))
}
# The read workload's dd is started first, waiting on a FIFO, so that its
# pid can be traced alone (--pid, and its comm for the kprobe's filter):
# the reads of the script itself and of kt_trace_stop's wait loop, while
# kinstctl formats its backlog, are not part of the figure.
dd_prepare() {
	rm -f /tmp/go
	mkfifo /tmp/go || err "mkfifo failed"
	sh -c 'read _x </tmp/go; exec dd if=/dev/zero of=/dev/null bs=1 count='"$n"' 2>/dev/null' &
	DD_PID=$!
}
wl_read() {
	_t0=$(now_ms)
	echo go >/tmp/go
	wait "$DD_PID" || err "dd failed"
	WL_MS=$(($(now_ms) - _t0))
}

# kinst_case WORKLOAD ARGS...: kinstctl trace ARGS during WORKLOAD; sets
# HITS DELIV DROPS.
kinst_case() {
	_wl=$1
	shift
	if [ "$_wl" = wl_read ]; then
		dd_prepare
		set -- --pid "$DD_PID" "$@"
	fi
	kt_trace_start /dev/null /tmp/r.err "$@"
	sleep 1		# let the jump optimizer settle (not timed)
	"$_wl"
	# Let the reader catch up before the stop: what it took in while
	# the workload ran is what is measured, and it is all delivered.
	sleep 2
	kt_trace_stop || err "kinstctl trace $* failed: $(cat /tmp/r.err)"
	set -- $(grep -E '^kinstctl: [0-9]+ hits' /tmp/r.err | head -n 1 | tr -c '0-9\n' ' ')
	[ $# -ge 3 ] || err "no summary from kinstctl trace: $(cat /tmp/r.err)"
	HITS=$1 DELIV=$2 DROPS=$3
	[ "$HITS" -gt 0 ] || err "kinstctl trace $*: no hits"
	# --pid: the module counts the other processes' hits as hits too
	# (filtered before a record is built): only recorded ones count here.
	HITS=$((DELIV + DROPS))
}

kp_case() {
	echo "p:$G/$EV ksys_read+$OFF $REGS" >>"$T/kprobe_events" ||
	    err "cannot add the kprobe event (error_log: $(tail -n 3 "$T/error_log" 2>/dev/null))"
	_ev=$T/events/$G/$EV
	echo 0 >"$T/tracing_on"
	: >"$T/trace"
	dd_prepare
	echo "common_pid == $DD_PID" >"$_ev/filter" || err "cannot set the filter"
	echo 1 >"$_ev/enable" || err "cannot enable the kprobe event"
	echo 1 >"$T/tracing_on"
	cat "$T/trace_pipe" >/dev/null &
	_rp=$!
	sleep 1
	"$1"
	sleep 2
	echo 0 >"$T/tracing_on"
	kill "$_rp"
	wait "$_rp" 2>/dev/null
	echo 0 >"$_ev/enable"
	set -- $(awk -v e="$EV" '$1 == e || $1 == "'"$G"'/" e { print $2, $3 }' "$T/kprobe_profile")
	[ $# -eq 2 ] || err "no line for $EV in kprobe_profile: $(cat "$T/kprobe_profile")"
	# The filter runs after the probe: kprobe_profile counts every
	# process.  Delivered: the events trace_pipe read (and any left);
	# dropped: kprobe_profile's misses and the buffer's overruns and
	# drops.
	DROPS=$(($2 + $(cat "$T"/per_cpu/cpu*/stats | awk '/^overrun:|^dropped events:/ { o += $NF } END { print o + 0 }')))
	DELIV=$(cat "$T"/per_cpu/cpu*/stats | awk '/^entries:|^read events:/ { e += $NF } END { print e + 0 }')
	HITS=$((DELIV + DROPS))
	echo "-:$G/$EV" >>"$T/kprobe_events" || err "cannot remove the kprobe event"
}

# record_case WORKLOAD ARGS...: trace --output, then print --json.
record_case() {
	_wl=$1
	shift
	kinstctl trace --help 2>&1 | grep -q -- '--output' || {
		echo "bench: $case: this kinstctl has no --output (skipped)"
		return 1
	}
	rm -f /tmp/r.kinst
	kinst_case "$_wl" --output /tmp/r.kinst "$@"
	_t0=$(now_ms)
	kinstctl print --json /tmp/r.kinst >/dev/null 2>/tmp/p.err || err "kinstctl print failed: $(cat /tmp/p.err)"
	PRINT_MS=$(($(now_ms) - _t0))
	echo "bench: $case: kinstctl print --json: $DELIV records in $PRINT_MS ms ($(rate "$DELIV" "$PRINT_MS") records/s)"
}

rate() {
	[ "$2" -gt 0 ] || { echo "-"; return; }
	echo $(( $1 * 1000 / $2 ))
}

echo 0 >"$T/tracing_on" 2>/dev/null
OFF=$(kt_first_traceable ksys_read) || err "no traceable instruction in ksys_read"
echo "bench: ksys_read+$OFF for the entry cases; N = $n; ring_size = $(cat /sys/module/kinst/parameters/ring_size 2>/dev/null) bytes per CPU; $(nproc) CPUs"
printf '%-14s %9s %9s %9s %7s %9s %11s\n' case hits delivered dropped drop% wl_ms delivered/s
for case in $CASES; do
	# CASE@read: the same with kinstctl reading the rings by read(2)
	# (KINSTCTL_NO_MMAP), not through its mapping of them.
	unset KINSTCTL_NO_MMAP
	case $case in *@read) export KINSTCTL_NO_MMAP=1 ;; esac
	PRINT_MS=
	case ${case%@read} in
	write_text) kinst_case wl_write $WRITE_FUNCS ;;
	write_json) kinst_case wl_write --json $WRITE_FUNCS ;;
	read_text) kinst_case wl_read -n 0 ksys_read ;;
	read_json) kinst_case wl_read -n 0 --json ksys_read ;;
	entry_text) kinst_case wl_read ksys_read+$OFF ;;
	entry_json) kinst_case wl_read --json ksys_read+$OFF ;;
	kp_entry) kp_case wl_read ;;
	record_entry) record_case wl_read ksys_read+$OFF || continue ;;
	record_read) record_case wl_read ksys_read || continue ;;
	*) err "unknown case $case" ;;
	esac
	pct=$(awk -v d="$DROPS" -v h="$HITS" 'BEGIN { printf "%.2f", h ? 100 * d / h : 0 }')
	printf '%-14s %9s %9s %9s %7s %9s %11s\n' "$case" "$HITS" "$DELIV" "$DROPS" "$pct" "$WL_MS" "$(rate "$DELIV" "$WL_MS")"
done
