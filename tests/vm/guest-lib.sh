# SPDX-License-Identifier: BSD-2-Clause
#
# Helpers for guest scripts (busybox sh).  In the guest it is
# /kinst/lib/guest-lib.sh:   . /kinst/lib/guest-lib.sh
#
# Conventions (tests/vm/README.md):
#   exit 0    the scenario's claims held
#   exit 77   skipped; the line "SKIP: reason" says why (kt_skip)
#   other     failed; "FAIL: ..." lines say why (kt_fail)
#
# Independent hit counters come from tracefs (Debian's kernel has no ftrace
# function profiler, CONFIG_FUNCTION_PROFILER is off): a kprobe event or an
# existing trace event, with a hist trigger keyed on the pid, so that the
# count is per process and exact (the trigger runs even with tracing_on 0,
# and its "Dropped" total says whether the table overflowed).

KT_TRACING=/sys/kernel/tracing
KT_GROUP=kinst_test

kt_log() {
	echo "kt: $*"
}

kt_fail() {
	echo "FAIL: $*" >&2
	exit 1
}

kt_skip() {
	echo "SKIP: $*"
	exit 77
}

# kt_need_kinst: skip unless the module is loaded and kinstctl is here.
kt_need_kinst() {
	[ -e /dev/kinst ] || kt_skip "kinst.ko is not loaded (not built? make -C kmod/linux)"
	command -v kinstctl >/dev/null || kt_skip "kinstctl is not built"
}

# kt_load_kernel_module NAME: load Debian's module NAME, which the run
# copied in (run-in-guest --kernel-module NAME; a scenario's
# "# scenario-modules: NAME" header), after the modules it depends on
# (/kinst/modules/NAME.deps, in order; those already loaded are skipped).
# Fails, saying why, if it is not there or does not load.
kt_load_kernel_module() {
	[ -f "/kinst/modules/$1.ko" ] ||
	    kt_fail "/kinst/modules/$1.ko is missing: the run must copy it in (run-in-guest --kernel-module $1, or '# scenario-modules: $1' in a scenario)"
	for _d in $(cat "/kinst/modules/$1.deps" 2>/dev/null); do
		[ -d "/sys/module/${_d%.ko}" ] && continue
		_o=$(insmod "/kinst/modules/$_d" 2>&1) ||
		    kt_fail "insmod $_d (which $1 needs) failed: $_o"
	done
	_o=$(insmod "/kinst/modules/$1.ko" 2>&1) || kt_fail "insmod $1.ko failed: $_o"
	kt_log "loaded Debian's $1.ko"
}

# kt_first_traceable FUNC: print the offset of FUNC's first instruction
# after its entry that list-offsets does not refuse; status 1 (nothing
# printed) if there is none.  off=$(kt_first_traceable f) || kt_fail ...
kt_first_traceable() {
	_o=$(kinstctl list-offsets --json "$1" |
	    jq -r 'select(.type == "insn" and .offset > 0 and
	        (.verdict | startswith("refused") | not)) | .offset' | head -n 1)
	[ -n "$_o" ] || return 1
	echo "$_o"
}

# kt_testmod NAME: load the test module NAME.ko that run-in-guest -f
# shipped (built by CMake from tests/vm/testmod); its path is then $ko.
kt_testmod() {
	ko=/kinst/files/$1.ko
	[ -f "$ko" ] || kt_fail "$ko is missing (built by CMake from tests/vm/testmod)"
	insmod "$ko" || kt_fail "insmod $1.ko failed"
}

# kt_lattest_spin_call: from and to, the offsets in kinst_lattest_wait
# (kinst_lattest.ko) of its call to kinst_lattest_timed_spin, the busy wait
# (its only call but __fentry__'s, a nop when live) and of the instruction
# after it.
kt_lattest_spin_call() {
	kinstctl list-offsets --json kinst_lattest_wait >/tmp/lo.json || kt_fail "list-offsets kinst_lattest_wait"
	from=$(jq -r 'select(.type == "insn" and .offset > 0 and .emulation == "call") | .offset' /tmp/lo.json | head -n 1)
	_len=$(jq -r "select(.type == \"insn\" and .offset == ${from:-0}) | .length" /tmp/lo.json)
	[ -n "$from" ] && [ -n "$_len" ] || kt_fail "no call to kinst_lattest_timed_spin in kinst_lattest_wait: $(head -c 600 /tmp/lo.json)"
	to=$((from + _len))
}

# kt_lattest_threads_done: wait until the threads kinst_lattest.ko started
# (its spawn and sleep parameters) have exited.
kt_lattest_threads_done() {
	_n=0
	while [ "$(cat /sys/module/kinst_lattest/parameters/threads)" != 0 ]; do
		_n=$((_n + 1))
		[ $_n -lt 600 ] || kt_fail "the module's threads did not exit"
		sleep 0.1
	done
}

# kt_expect_eq WHAT EXPECTED ACTUAL
kt_expect_eq() {
	if [ "$2" != "$3" ]; then
		kt_fail "$1: expected $2, got $3"
	fi
	kt_log "$1: $3 (as expected)"
}

# kt_run_ok CMD...: run, fail the scenario with its output if it fails.
kt_run_ok() {
	out=$("$@" 2>&1) || kt_fail "$*: exit $?: $out"
	[ -z "$out" ] || echo "$out"
}

# kt_counter_kprobe NAME PROBE [FETCHARG...]: count hits of PROBE (SYMBOL
# or SYMBOL+OFF, kprobe_events syntax) per pid as event kinst_test/NAME;
# FETCHARGs (e.g. count=%dx:u64) become fields for kt_counter_values.
kt_counter_kprobe() {
	_name=$1 _probe=$2
	shift 2
	echo "p:$KT_GROUP/$_name $_probe $*" >>"$KT_TRACING/kprobe_events" ||
	    kt_fail "cannot add kprobe event $_name at $_probe $* (error_log: $(tail -n 3 "$KT_TRACING/error_log" 2>/dev/null))"
	kt_counter_event "$KT_GROUP/$_name"
}

# kt_counter_values SUBSYS/EVENT FIELD: also count, per pid, each value the
# event's FIELD takes (after kt_counter_kprobe/kt_counter_event).
kt_counter_values() {
	echo "hist:keys=common_pid,$2:size=8192" >>"$KT_TRACING/events/$1/trigger" ||
	    kt_fail "cannot add a hist trigger on $1 keyed by $2"
}

# kt_values SUBSYS/EVENT PID FIELD: "VALUE HITS" lines, one per value of
# FIELD that PID's hits had.
kt_values() {
	_hist=$KT_TRACING/events/$1/hist
	_dropped=$(sed -n 's/^ *Dropped: *//p' "$_hist" | sort -n | tail -n 1)
	[ "${_dropped:-0}" = 0 ] || kt_fail "hist of $1 dropped $_dropped entries"
	awk -v pid="$2" -v field="$3" '
		$0 ~ "common_pid: *" pid ", " field ":" {
			v = $0; sub(".*, " field ": *", "", v); sub(/[ }].*/, "", v)
			n = $0; sub(/.*hitcount: */, "", n)
			print v, n + 0
		}' "$_hist"
}

# kt_counter_event SUBSYS/EVENT: count hits of an existing trace event per
# pid (e.g. syscalls/sys_enter_getpid).
kt_counter_event() {
	ev=$KT_TRACING/events/$1
	[ -d "$ev" ] || kt_fail "no trace event $1"
	echo 0 >"$KT_TRACING/tracing_on"
	echo 'hist:keys=common_pid:size=8192' >>"$ev/trigger" ||
	    kt_fail "cannot set a hist trigger on $1"
	echo 1 >"$ev/enable" || kt_fail "cannot enable $1"
}

# kt_count SUBSYS/EVENT PID: hits by PID so far (from the histogram keyed
# by the pid alone).
kt_count() {
	_hist=$KT_TRACING/events/$1/hist
	[ -r "$_hist" ] || kt_fail "no hist for $1"
	_dropped=$(sed -n 's/^ *Dropped: *//p' "$_hist" | sort -n | tail -n 1)
	[ "${_dropped:-0}" = 0 ] || kt_fail "hist of $1 dropped $_dropped entries"
	awk -v pid="$2" '
		/^\{ common_pid: *[0-9]+ \}/ {
			p = $0; sub(/.*common_pid: */, "", p); sub(/ .*/, "", p)
			n = $0; sub(/.*hitcount: */, "", n)
			if (p == pid) c = n + 0
		}
		END { print c + 0 }' "$_hist"
}

# kt_count_total SUBSYS/EVENT: hits by everyone so far.
kt_count_total() {
	awk '/^\{ common_pid: *[0-9]+ \}/ { sub(/.*hitcount: */, ""); t += $1 }
	    END { print t + 0 }' "$KT_TRACING/events/$1/hist"
}

# kt_counter_remove SUBSYS/EVENT: disable, drop the trigger (and the kprobe
# event, for ours).
kt_counter_remove() {
	ev=$KT_TRACING/events/$1
	echo 0 >"$ev/enable"
	# Opening trigger with O_TRUNC (>) removes every trigger of the event.
	: >"$ev/trigger"
	case $1 in
	"$KT_GROUP"/*) echo "-:$1" >>"$KT_TRACING/kprobe_events" ;;
	esac
}


# kt_ftrace_start FUNC...: count calls of FUNCs with the function tracer
# (it patches the function's ftrace site, the first instruction, which
# kinst refuses anyway; kinst.ko refuses every instruction of a function
# that holds a kprobe, so inside a traced function count this way or with
# a trace event, not with kt_counter_kprobe).
kt_ftrace_start() {
	echo 0 >"$KT_TRACING/tracing_on"
	echo nop >"$KT_TRACING/current_tracer"
	echo "$*" >"$KT_TRACING/set_ftrace_filter" ||
	    kt_fail "cannot filter the function tracer on $*"
	echo 8192 >"$KT_TRACING/buffer_size_kb"
	echo function >"$KT_TRACING/current_tracer"
	: >"$KT_TRACING/trace"
	echo 1 >"$KT_TRACING/tracing_on"
}

# kt_ftrace_name FUNC: the name ftrace knows FUNC by (available_filter_functions
# lists one name per address: __x64_sys_getpid is __do_sys_getpid there);
# the aliases come from kinstctl list-offsets.
kt_ftrace_name() {
	_aff=$KT_TRACING/available_filter_functions
	for _n in "$1" $(kinstctl list-offsets --json "$1" 2>/dev/null |
	    jq -r 'select(.type == "function") | .aliases[]?' 2>/dev/null); do
		if grep -qx "$_n" "$_aff"; then
			echo "$_n"
			return 0
		fi
	done
	kt_fail "ftrace knows $1 by no name (not in available_filter_functions)"
}

# kt_ftrace_stop: stop recording (the counts stay readable).
kt_ftrace_stop() {
	echo 0 >"$KT_TRACING/tracing_on"
}

# kt_ftrace_count FUNC PID: calls of FUNC by PID recorded since
# kt_ftrace_start; fails if the ring buffer overran (the count would lie).
kt_ftrace_count() {
	for _s in "$KT_TRACING"/per_cpu/cpu*/stats; do
		_o=$(sed -n 's/^overrun: *//p' "$_s")
		[ "${_o:-0}" = 0 ] || kt_fail "the trace buffer overran ($_s: $_o): counts would be short"
	done
	grep -v '^#' "$KT_TRACING/trace" |
	    awk -v pid="$2" -v f="$1" '
		{ split($1, a, "-"); p = a[length(a)] }
		p == pid && $0 ~ (": " f " <-") { c++ }
		END { print c + 0 }'
}

# kt_trace_start OUT ERR ARG...: `kinstctl trace ARG...` in the background,
# stdout to OUT and stderr to ERR; returns once it says it is tracing (its
# "kinstctl: tracing N probes" line), fails the scenario if it exits or
# has not armed within 60 s.  $KT_TRACE_PID is its pid.
kt_trace_start() {
	_out=$1 _err=$2
	KT_TRACE_OUT=$1 KT_TRACE_ERR=$2
	shift 2
	# Emptied here, before the tracer starts: its own redirection
	# truncates them only once the background job runs, and until then the
	# wait below could read an earlier session's "tracing" line.
	: >"$_out"
	: >"$_err"
	kinstctl trace "$@" >"$_out" 2>"$_err" &
	KT_TRACE_PID=$!
	_end=$(( $(cut -d. -f1 /proc/uptime) + 60 ))
	while ! grep -q '^kinstctl: tracing ' "$_err" 2>/dev/null; do
		if ! kill -0 "$KT_TRACE_PID" 2>/dev/null; then
			wait "$KT_TRACE_PID"
			kt_fail "kinstctl trace $* exited ($?) before tracing: $(cat "$_err")"
		fi
		if [ "$(cut -d. -f1 /proc/uptime)" -ge $_end ]; then
			kt_dump_blocked "kinstctl trace (pid $KT_TRACE_PID) not tracing after 60 s"
			kt_fail "kinstctl trace $* did not start in 60 s: $(cat "$_err")"
		fi
		sleep 0.1
	done
}

# kt_trace_stop [SIGNAL]: send SIGNAL (INT) to the tracer and wait for it;
# it must exit 0 (a trace stopped by a signal does), else the scenario
# fails with its last lines: a kinstctl that aborts at the end never
# passes.  KT_TRACE_ANY_STATUS=1: return the status instead (for a caller
# that is failing anyway and has its own message).  A stop is a disarm and
# then the printing of what was already delivered, which under TCG can
# take minutes for a full ring; so only a tracer that makes no progress at
# all (no CPU time, no byte of output) for KT_STOP_WAIT (90) seconds is
# taken for a hang: the blocked tasks and every CPU's backtrace go to the
# kernel console (sysrq w, l) and the script fails, so the log says where
# it hung.
kt_trace_stop() {
	kill -"${1:-INT}" "$KT_TRACE_PID" 2>/dev/null
	kt_wait_pid "$KT_TRACE_PID" "${KT_STOP_WAIT:-90}" "kinstctl trace after SIG${1:-INT}" \
	    "$KT_TRACE_OUT" "$KT_TRACE_ERR"
	_st=$?
	[ "$_st" = 0 ] || [ "${KT_TRACE_ANY_STATUS:-0}" = 1 ] ||
	    kt_fail "kinstctl trace exited $_st after SIG${1:-INT}: $(tail -n 5 "$KT_TRACE_ERR")"
	return "$_st"
}

# kt_wait_pid PID SECONDS WHAT [FILE...]: wait for the child PID and return
# its exit status.  Without FILEs, if it is still running SECONDS later;
# with FILEs, if for SECONDS neither its CPU time (and its reaped
# children's) nor the size of any FILE changed: dump the blocked tasks and
# backtraces to the console (kt_dump_blocked) and fail: WHAT hung.
kt_wait_pid() {
	_pid=$1 _secs=$2 _what=$3
	shift 3
	_sig=
	_end=$(( $(cut -d. -f1 /proc/uptime) + _secs ))
	while kill -0 "$_pid" 2>/dev/null; do
		if [ $# -gt 0 ]; then
			_now=$(cut -d' ' -f14-17 "/proc/$_pid/stat" 2>/dev/null; wc -c "$@" 2>/dev/null | tail -n 1)
			if [ "$_now" != "$_sig" ]; then
				_sig=$_now
				_end=$(( $(cut -d. -f1 /proc/uptime) + _secs ))
			fi
		fi
		if [ "$(cut -d. -f1 /proc/uptime)" -ge $_end ]; then
			kt_dump_blocked "$_what (pid $_pid) still running, no progress for $_secs s"
			kt_fail "$_what: no progress within $_secs s (blocked tasks and backtraces: kernel console)"
		fi
		sleep 0.2
	done
	wait "$_pid"
}

# kt_dump_blocked WHY: say WHY on the kernel console, then dump the blocked
# tasks (sysrq w) and every CPU's backtrace (sysrq l) there.
kt_dump_blocked() {
	echo "kinst-test: $1: blocked tasks and backtraces follow" >/dev/kmsg 2>/dev/null
	echo w >/proc/sysrq-trigger 2>/dev/null
	echo l >/proc/sysrq-trigger 2>/dev/null
	sleep 1
}

# kt_trace_summary ERR [OUT]: check the summary `kinstctl trace` wrote to ERR
# after it was stopped by a signal or --duration (not -n, which leaves
# records unread on purpose): hits == delivered + dropped (the module's
# counters) and delivered == printed + filtered (every record the module
# delivered reached the output: a read path that loses records fails here);
# with OUT, also that OUT has exactly one line per printed record.  Sets
# KT_HITS, KT_DELIVERED, KT_DROPPED, KT_PRINTED, KT_FILTERED, and with
# --if KT_NOMATCH and KT_FAULTED, and KT_HIDDEN, the hits of hidden entry
# probes (then hits == delivered + dropped + not matching + hidden).
kt_trace_summary() {
	_sum=$(grep -E '^kinstctl: [0-9]+ hits, [0-9]+ delivered, [0-9]+ dropped, [0-9]+ printed' "$1") ||
	    kt_fail "no summary from kinstctl trace: $(cat "$1")"
	# With --if: ", N not matching --if (M of them faulted)" (KT_NOMATCH, KT_FAULTED).
	KT_NOMATCH=$(echo "$_sum" | sed -n 's/.*, \([0-9]*\) not matching --if (\([0-9]*\) of them faulted).*/\1/p')
	KT_FAULTED=$(echo "$_sum" | sed -n 's/.*, \([0-9]*\) not matching --if (\([0-9]*\) of them faulted).*/\2/p')
	KT_HIDDEN=$(echo "$_sum" | sed -n 's/.*, \([0-9]*\) at hidden probes.*/\1/p')
	KT_NOMATCH=${KT_NOMATCH:-0} KT_FAULTED=${KT_FAULTED:-0} KT_HIDDEN=${KT_HIDDEN:-0}
	_sum=$(echo "$_sum" | sed 's/, [0-9]* not matching --if.*//')
	set -- "$1" "${2:-}" $(echo "$_sum" | tr -c '0-9\n' ' ')
	KT_HITS=$3 KT_DELIVERED=$4 KT_DROPPED=$5 KT_PRINTED=$6 KT_FILTERED=${7:-0}
	[ "$KT_HITS" = $((KT_DELIVERED + KT_DROPPED + KT_NOMATCH + KT_HIDDEN)) ] ||
	    kt_fail "summary: hits $KT_HITS != delivered $KT_DELIVERED + dropped $KT_DROPPED + not matching --if $KT_NOMATCH + hidden entry probes $KT_HIDDEN"
	kt_expect_eq "records delivered by the module = printed $KT_PRINTED + filtered $KT_FILTERED" \
	    "$KT_DELIVERED" $((KT_PRINTED + KT_FILTERED))
	if [ -n "$2" ]; then
		kt_expect_eq "lines of kinstctl output in $2" "$KT_PRINTED" "$(grep -c . "$2")"
	fi
}

# kt_jumps_out WHAT SECS FUNC...: wait until no jump is installed and the
# jump optimizer is idle (debugfs kinst/jump), at most SECS seconds, then
# check that the text of each FUNC (kt_text_of) equals /tmp/before.FUNC.
kt_jumps_out() {
	_what=$1 _secs=$2
	shift 2
	_n=0
	until [ "$(sed -n 's/^installed //p' /sys/kernel/debug/kinst/jump)" = 0 ] &&
	    [ "$(sed -n 's/^optimizing //p' /sys/kernel/debug/kinst/jump)" = 0 ]; do
		_n=$((_n + 1))
		[ $_n -lt $((_secs * 10)) ] ||
		    kt_fail "$_what: $(sed -n 's/^installed //p' /sys/kernel/debug/kinst/jump) jumps still installed $_secs s after the kill"
		sleep 0.1
	done
	for _f in "$@"; do
		kt_text_of "$_f" >/tmp/after.$_f
		cmp -s /tmp/before.$_f /tmp/after.$_f ||
		    kt_fail "$_what: the text of $_f differs after the kill: $(diff /tmp/before.$_f /tmp/after.$_f | head -n 6)"
	done
}

# kt_text_of FUNC: FUNC's bytes read from memory itself (debugfs kinst/read,
# 16 bytes at a time, one "ok ..." line each), not through kinst's unpatched
# view; its address and size from `kinstctl list-offsets --json FUNC`,
# asked once and kept in /tmp/kt_fn.FUNC.
kt_text_of() {
	[ -s "/tmp/kt_fn.$1" ] || kinstctl list-offsets --json "$1" >"/tmp/kt_fn.$1" || return 1
	_a=$(jq -r 'select(.type == "function") | .address' "/tmp/kt_fn.$1")
	_n=$(jq -r 'select(.type == "function") | .size' "/tmp/kt_fn.$1")
	_o=0
	while [ $_o -lt "$_n" ]; do
		_l=$(( _n - _o < 16 ? _n - _o : 16 ))
		echo "$(printf '%x' $(( _a + _o ))) $_l" >/sys/kernel/debug/kinst/read || return 1
		cat /sys/kernel/debug/kinst/read
		_o=$(( _o + 16 ))
	done
}

# kt_jump_settle: until the module's count of installed jump probes has
# not changed for a second (5 s at most), so that a benchmark's loop times
# one kind of probe (an armed session's probes become jumps a pass later).
kt_jump_settle() {
	[ -r /sys/kernel/debug/kinst/jump ] || return 0
	_last=x _same=0 _j=0
	while [ $_same -lt 10 ] && [ $_j -lt 50 ]; do
		_now=$(sed -n 's/^installed //p' /sys/kernel/debug/kinst/jump)
		if [ "$_now" = "$_last" ]; then _same=$((_same + 1)); else _same=0; fi
		_last=$_now
		_j=$((_j + 1))
		sleep 0.1
	done
}

# kt_armed_start OUT ERR COMMAND ARGS...: `kinstctl COMMAND ARGS...`
# (count or latency) in the background, stdout to OUT and stderr to ERR;
# returns once it says it is counting or timing, fails the scenario if it
# exits or has not armed within 60 s.  $KT_COUNT_PID is its pid.
kt_armed_start() {
	_o=$1 _e=$2
	shift 2
	# Emptied here, before kinstctl starts: its own redirection truncates
	# them only once the background job runs, and until then the wait
	# below could read an earlier run's line.
	: >"$_e"
	[ "$_o" = /dev/null ] || : >"$_o"
	kinstctl "$@" >"$_o" 2>"$_e" &
	KT_COUNT_PID=$!
	_n=0
	until grep -Eq '^kinstctl: (counting|timing) ' "$_e"; do
		kill -0 $KT_COUNT_PID 2>/dev/null || kt_fail "kinstctl $* exited: $(cat "$_e")"
		_n=$((_n + 1))
		[ $_n -lt 600 ] || kt_fail "kinstctl $* did not start in 60 s"
		sleep 0.1
	done
}

# kt_count_start OUT ERR ARGS...: kt_armed_start OUT ERR count ARGS...
kt_count_start() {
	_co=$1 _ce=$2
	shift 2
	kt_armed_start "$_co" "$_ce" count "$@"
}

# kt_loop_ns SYSCALL N [ARGS...]: `syscall_loop SYSCALL N ARGS...`, timing
# itself (SYSCALL_LOOP_NS=1); $KT_LOOP_NS is the nanoseconds its calls
# took.  Its whole output stays in /tmp/loop.out (the first line: its
# pid).  Fails the scenario when it fails or prints no time.
kt_loop_ns() {
	SYSCALL_LOOP_NS=1 syscall_loop "$@" >/tmp/loop.out || kt_fail "syscall_loop $* failed"
	KT_LOOP_NS=$(sed -n 's/^loop_ns //p' /tmp/loop.out)
	[ -n "$KT_LOOP_NS" ] || kt_fail "syscall_loop $* printed no loop_ns line"
}

# kt_profile_on LABEL ... kt_profile_off: a sampling window of
# run-in-guest --profile (no-ops without it).  Between the two, the host
# reads every vCPU's instruction pointer through QEMU's monitor, without
# the guest's help; the report names each window's functions with the
# kernel's text symbols as they were at kt_profile_on (modules included,
# with their extents from /proc/modules: a module loaded for the window is
# named).  LABEL: [A-Za-z0-9_.-]+, one per window.  The host polls the
# console: each call waits for it.
kt_profile_on() {
	[ "${KINST_PROFILE:-0}" = 1 ] || return 0
	case $1 in ''|*[!A-Za-z0-9_.-]*) kt_fail "kt_profile_on: bad label '$1'" ;; esac
	mkdir -p /tmp/.kinst-profile
	{
		grep ' [tT] ' /proc/kallsyms
		sed 's/^/#module /' /proc/modules
	} >/tmp/.kinst-profile/"$1".syms
	echo "KINST-PROFILE-ON $1" >/dev/console
	sleep 0.5
}

kt_profile_off() {
	[ "${KINST_PROFILE:-0}" = 1 ] || return 0
	echo "KINST-PROFILE-OFF" >/dev/console
	sleep 0.5
}

# kt_bench_rounds ROUNDS CASES: for a benchmark script, ROUNDS rounds of
# its run_case CASE (which prints one figure) over the CASES (one word
# each), each round's order rotated by one from the last; the lines
# "ROUND CASE FIGURE" go to /tmp/res.
kt_bench_rounds() {
	_rounds=$1 _cases=$2
	: >/tmp/res
	_r=0
	while [ $_r -lt "$_rounds" ]; do
		for _c in $(echo $_cases | awk -v r=$_r '{ for (i = 0; i < NF; i++) printf "%s ", $((i + r) % NF + 1) }'); do
			echo "$_r $_c $(run_case "$_c")" >>/tmp/res
		done
		_r=$((_r + 1))
	done
}
