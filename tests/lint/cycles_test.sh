#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Kyua plain test: tests/lint/cycles_check.py over the engine (common/) and
# each kernel shim (kmod/linux: registration -> control context -> trap
# context, kmod/linux/kinst_linux.h; kmod/freebsd), each on its own: the
# engine calls a shim through common/kinst_os.h, which the shim implements,
# so the two are one layer each, not one graph.  The floors are a little
# under today's counts: fewer means the scan broke.
rc=0
python3 "@KINST_SRCDIR@/tests/lint/cycles_check.py" "@KINST_SRCDIR@" common || rc=1
python3 "@KINST_SRCDIR@/tests/lint/cycles_check.py" --floor 6,12 "@KINST_SRCDIR@" kmod/linux || rc=1
python3 "@KINST_SRCDIR@/tests/lint/cycles_check.py" --floor 4,4 "@KINST_SRCDIR@" kmod/freebsd || rc=1
exit $rc
