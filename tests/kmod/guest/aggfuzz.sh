#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Aggregation against /dev/kinst: hostile AGG_* arguments, then a real
# in-kernel count of a child's getpid(2)s on every instruction of
# __x64_sys_getpid, and by stack at its entry (AGG_STACKS: hostile
# arguments, every entry's hash names one stack starting at the probe);
# errnos, counts exact, no record, no oops.
set -u
kinst_devtest aggfuzz "${1:-2000}" || exit 1
# The module still works afterwards.
kinst_devtest cycle __x64_sys_getpid 50 || exit 1
