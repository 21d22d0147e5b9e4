#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Issue 15's soak: churn.sh RUNS times in a row in one boot (not in
# tests/run: ~25 minutes under TCG).  churn_soak.sh [RUNS [ROUNDS [EXTRA]]]
#   tests/vm/run-in-guest --require-module -t 3000 \
#       -f build/tests/kmod/kinst_devtest -f tests/kmod/guest/churn.sh \
#       tests/kmod/guest/churn_soak.sh 50 8 0
set -u
n=${1:-50}
i=0
while [ $i -lt "$n" ]; do
	i=$((i + 1))
	echo "=== churn run $i of $n ($(cut -d' ' -f1 /proc/uptime) s)"
	sh /kinst/files/churn.sh "${2:-8}" "${3:-0}" ||
	    { echo "FAIL: churn run $i"; exit 1; }
done
echo "churn_soak: all $n churn runs ok"
