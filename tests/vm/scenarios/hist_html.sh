#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: hist --html and latency --html: syscall_loop's reads of 7 and 300 bytes give hist --value rdx at the first traceable instruction of ksys_read --by comm a syscall_loop histogram with at least that many in [4, 8) and [256, 512); latency ksys_read --by comm writes its page too; on the host (tests/vm/hist_html_check.py) each page is strict HTML with no script and no external reference, one SVG bar chart per --json histogram with a bar per bucket holding the JSON's bounds and counts, the syscall_loop numbers at least the workload's reads (not the JSON's), then rendered in headless Chromium: no script error, every non-empty bucket's bar drawn with a length in the order of the counts, a screenshot under the build tree
# scenario-needs: kinst
# scenario-timeout: 300
# scenario-host-check: python3 "$KINST_DEFAULT_SRCDIR/tests/vm/hist_html_check.py" vm.out "$KINST_DEFAULT_BUILDDIR/tests/vm/screenshots"
. /kinst/lib/guest-lib.sh
kt_need_kinst

nr=40
off=$(kt_first_traceable ksys_read) || kt_fail "no traceable instruction in ksys_read"
wl="syscall_loop read2 $nr 7 300 >/dev/null"
kinstctl hist --json --html /tmp/h.html --value rdx --by comm kernel:ksys_read+$off -- sh -c "$wl" \
    >/tmp/h.json 2>/tmp/h.err || kt_fail "kinstctl hist --html failed: $(cat /tmp/h.err)"
[ -s /tmp/h.html ] || kt_fail "hist --html wrote nothing"
for b in 4 256; do
	n=$(jq -r --argjson lo $b 'select(.type == "hist" and .key == "syscall_loop") | .buckets[] | select(.low == $lo) | .count' /tmp/h.json)
	[ "${n:-0}" -ge $nr ] || kt_fail "hist: syscall_loop's bucket from $b holds ${n:-nothing}, want at least $nr"
done
kinstctl latency --json --html /tmp/l.html --by comm kernel:ksys_read -- sh -c "$wl" \
    >/tmp/l.json 2>/tmp/l.err || kt_fail "kinstctl latency --html failed: $(cat /tmp/l.err)"
n=$(jq -r 'select(.type == "hist" and .key == "syscall_loop") | .count' /tmp/l.json)
[ "${n:-0}" -ge $((2 * nr)) ] || kt_fail "latency: syscall_loop has ${n:-no} samples, want at least $((2 * nr))"
# --html with --folded is a usage error, and nothing is written.
kinstctl hist --html /tmp/x.html --folded --by stack --value rdx kernel:ksys_read+$off --duration 0.1 \
    >/dev/null 2>/tmp/x.err && kt_fail "hist --html --folded was accepted"
grep -q -- "--html and --folded exclude each other" /tmp/x.err || kt_fail "hist --html --folded: $(cat /tmp/x.err)"
[ ! -e /tmp/x.html ] || kt_fail "hist --html --folded left /tmp/x.html"

echo "=== workload-begin ==="
echo "nr=$nr"
echo "=== workload-end ==="
for x in hist:h latency:l; do
	echo "=== ${x%%:*}-json-begin ==="
	cat /tmp/${x#*:}.json
	echo "=== ${x%%:*}-json-end ==="
	echo "=== ${x%%:*}-html-begin ==="
	cat /tmp/${x#*:}.html
	echo "=== ${x%%:*}-html-end ==="
done
exit 0
