#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: the module's derived trap-path and bring-up exclusion sets (debugfs kinst/excluded, root only) contain the closure of the real paths, recomputed independently in user space with Capstone from the live text
# scenario-needs: kinst
# scenario-timeout: 900
#
# Issue 8, proof item 2.  The module derives its sets at load with its own
# decoder.  This scenario recomputes them another way: kinstctl
# list-offsets --json (Capstone, bytes through the module's TEXT ioctl)
# disassembles each function; every direct call/jmp/jcc whose target lies
# outside the function is resolved to its function through /proc/kallsyms;
# the walk goes on breadth first from the roots of the real #BP path and of
# kinst's handler, with the stop points and leaves the module lists in the
# file's header (each justified in kmod/linux/kinst_linux_trappath.c).
# Every function the independent walk reaches must be in the module's set,
# so a kernel whose notify_die or rcu_read_unlock grew a callee cannot
# reopen the hole silently.  Then the same for start_secondary up to its
# call of rcu_cpu_starting.
. /kinst/lib/guest-lib.sh
kt_need_kinst

X=/sys/kernel/debug/kinst/excluded
[ -r $X ] || kt_fail "$X missing"
kt_expect_eq "mode of $X" 400 "$(stat -c %a $X)"
cp $X /tmp/x
ntrap=$(grep -c '^trap-path ' /tmp/x)
nbring=$(grep -c '^cpu-bringup ' /tmp/x)
kt_log "module's sets: $ntrap trap-path, $nbring cpu-bringup functions"
set -- $(sed -n 's/^# kinst derived exclusions: \([0-9]*\) trap-path, \([0-9]*\) cpu-bringup.*/\1 \2/p' /tmp/x)
kt_expect_eq "header count (trap path)" "$1" "$ntrap"
kt_expect_eq "header count (bring-up)" "$2" "$nbring"
dmesg | grep -q "kinst: refused as trap path: $ntrap functions; as cpu bring-up: $nbring functions" ||
    kt_fail "load message does not match the list: $(dmesg | grep 'kinst: refused')"
[ "$ntrap" -gt 20 ] || kt_fail "trap-path set implausibly small ($ntrap)"
cut=$(sed -n 's/^# cut: //p' /tmp/x)
leaf=$(sed -n 's/^# leaf: //p' /tmp/x)

# Text symbols, fixed-width lowercase hex (so string order is address order).
# Module symbols as MODULE:NAME, which is how list-offsets takes them.
awk '$2 ~ /^[tT]$/ { n = $3; if ($4 != "") { m = $4; gsub(/[][]/, "", m); n = m ":" $3 }
    print $1, 0, n }' /proc/kallsyms | sort -k1,1 >/tmp/syms

# listed NAME PATTERNS...: is NAME (compiler suffix ignored) matched by a
# pattern ("x*" is a prefix)?
listed() {
	_n=${1%%.*}
	shift
	for _p in "$@"; do
		case $_n in
		$_p) return 0 ;;
		esac
	done
	return 1
}

# Names that are not unique among text symbols: list-offsets cannot read
# those live by name (kinstctl(8)); the walk counts and skips them.
awk '$2 ~ /^[tT]$/ { n = $3; if ($4 != "") { m = $4; gsub(/[][]/, "", m); n = m ":" $3 }
    c[n]++ } END { for (n in c) if (c[n] > 1) print n }' /proc/kallsyms | sort >/tmp/dups

# exits ADDR16/NAME...: "target16 1 caller" lines for the direct branches
# of those functions that leave them (one kinstctl list-offsets --json for
# all: Capstone over the live text).
exits() {
	_names=""
	for _e in "$@"; do
		if grep -qxF "${_e#*/}" /tmp/dups; then
			echo "${_e#*/}: name not unique" >>/tmp/skipped
			continue
		fi
		_names="$_names ${_e#*/}"
	done
	[ -n "$_names" ] || return 0
	# shellcheck disable=SC2086
	kinstctl list-offsets --json $_names >/tmp/e.json 2>/tmp/e.err ||
	    kt_fail "kinstctl list-offsets failed: $(head -n 3 /tmp/e.err)"
	jq -r 'if .type == "function" then "F \(.address) \(.size) \(.module):\(.function)"
	    elif .type == "insn" and (.mnemonic | test("^(call|jmp|j[a-z]+)q?$"))
	        and (.operands | test("^0x[0-9a-f]+$")) then "I \(.operands)"
	    else empty end' /tmp/e.json |
	while read -r k v w f; do
		if [ "$k" = F ]; then
			_a=$((v)) _e=$((v + w)) _f=${f#kernel:}
			continue
		fi
		[ $((v)) -ge $_a ] && [ $((v)) -lt $_e ] && continue
		printf '%016x 1 %s\n' $((v)) "$_f"
	done
}

# walk CLASS ROOT_ADDRS...: breadth-first closure; writes /tmp/closure.CLASS
# ("name caller" lines).
walk() {
	cls=$1
	shift
	: >/tmp/seen
	: >/tmp/closure.$cls
	: >/tmp/skipped
	frontier=""
	for a in "$@"; do
		echo "${a%%/*}" >>/tmp/seen
		echo "${a%%/*} ${a#*/} (root)" >>/tmp/closure.$cls
		_n=${a#*/}
		listed "${_n#*:}" $leaf || frontier="$frontier $a"
	done
	round=0
	while [ -n "$frontier" ]; do
		round=$((round + 1))
		: >/tmp/targets
		# shellcheck disable=SC2086
		exits $frontier >/tmp/targets
		# Resolve each target to the text symbol at or below it.
		sort -k1,1 -k2,2n /tmp/syms /tmp/targets | awk '
		    $2 == 0 { sa = $1; sn = $3; next }
		    { if (sn != "") print sa, sn, $3 }' | sort -u >/tmp/resolved
		frontier=""
		while read -r sa sn from; do
			grep -qx "$sa" /tmp/seen && continue
			echo "$sa" >>/tmp/seen
			# shellcheck disable=SC2086
			listed "${sn#*:}" $cut && continue
			echo "$sa $sn $from" >>/tmp/closure.$cls
			listed "${sn#*:}" $leaf && continue
			frontier="$frontier $sa/$sn"
		done </tmp/resolved
		kt_log "$cls walk round $round: $(wc -l </tmp/closure.$cls) functions so far"
	done
	kt_log "$cls walk: $(wc -l </tmp/skipped) functions not readable by name (informational): $(cut -d: -f1 /tmp/skipped | tr '\n' ' ')"
}

# root NAME: ADDR16/NAME (kinst's functions as kinst:NAME)
root() {
	a=$(awk -v n="${1#*:}" '$3 == n && $2 ~ /^[tT]$/ { print $1; exit }' /proc/kallsyms)
	[ -n "$a" ] || kt_fail "no text symbol $1"
	echo "$a/$1"
}

# The trap path: the #BP entry, the kernel-fault path a nofault read may
# take, and kinst's handler with the functions it enters through pointers.
roots=""
for f in exc_int3 exc_page_fault kinst:kinst_die_notify kinst:kinst_os_read \
    kinst:kinst_os_write_stack; do
	roots="$roots $(root $f)"
done
walk trap $roots
# Path functions that must be there whatever the walk says.
for f in notify_die __rcu_read_lock __rcu_read_unlock rcu_read_unlock_special \
    irqentry_nmi_enter irqentry_nmi_exit kprobe_int3_handler \
    ktime_get_mono_fast_ns fixup_exception search_exception_tables irq_work_queue; do
	grep -q "^[0-9a-f]* $f " /tmp/closure.trap || kt_fail "independent walk did not reach $f"
done
missing=0
# The address is the last field ("reached-from" may be "func [module]").
awk '$1 ~ /^(trap-path|cpu-bringup)$/ { print $NF }' /tmp/x | sort -u >/tmp/xaddr
while read -r sa name from; do
	grep -qx "$sa" /tmp/xaddr && continue
	# The module's own functions are refused as a whole, not listed.
	case $name in kinst:*) continue ;; esac
	echo "MISSING: $name (called from $from)"
	missing=$((missing + 1))
done </tmp/closure.trap
kt_log "trap path: independent closure $(wc -l </tmp/closure.trap) functions, $missing missing from the module's set"
[ "$missing" = 0 ] || kt_fail "$missing functions on the trap path are not in the module's set"

# Bring-up: start_secondary's calls up to and including rcu_cpu_starting.
kinstctl list-offsets --json start_secondary >/tmp/ss.json || kt_fail "list-offsets start_secondary"
rcs=$(root rcu_cpu_starting)
pre=""
for t in $(jq -r 'select(.type == "insn" and (.mnemonic | test("^callq?$"))
    and (.operands | test("^0x[0-9a-f]+$"))) | .operands' /tmp/ss.json); do
	t=$(printf '%016x' $((t)))
	n=$(awk -v a="$t" '$1 <= a { n = $3 } $1 > a { exit } END { print n }' /tmp/syms)
	pre="$pre $t/$n"
	[ "$t/$n" = "$rcs" ] && break
done
case " $pre " in *" $rcs "*) ;; *) kt_fail "start_secondary does not call rcu_cpu_starting directly: $pre" ;; esac
kt_log "start_secondary's calls up to rcu_cpu_starting: $pre"
walk bringup $pre $(root secondary_startup_64)
for f in cr4_init cpu_init_exception_handling load_percpu_segment rcu_cpu_starting; do
	grep -q "^[0-9a-f]* $f " /tmp/closure.bringup || kt_fail "independent bring-up walk did not reach $f"
done
missing=0
while read -r sa name from; do
	grep -qx "$sa" /tmp/xaddr && continue
	echo "MISSING: $name (called from $from)"
	missing=$((missing + 1))
done </tmp/closure.bringup
kt_log "bring-up: independent closure $(wc -l </tmp/closure.bringup) functions, $missing missing from the module's set"
[ "$missing" = 0 ] || kt_fail "$missing bring-up functions are not in the module's set"
exit 0
