#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Probe programs against /dev/kinst: hostile PROG_LOAD arguments, random
# bytecode (accepted programs run on getpid's probes), user and faulting
# loads; errnos, per-CPU hits == delivered + dropped + filtered, no oops.
set -u
kinst_devtest progfuzz "${1:-3000}" || exit 1
# The module still works afterwards.
kinst_devtest cycle __x64_sys_getpid 50 || exit 1
