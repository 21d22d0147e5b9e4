#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# A real arm / hit / read / disarm cycle on syscall handlers; the register
# file and memory captures in the records; a close path armed whole.
set -u
kinst_devtest cycle __x64_sys_getpid "${1:-1000}" || exit 1
kinst_devtest cycle __x64_sys_getpid 1 || exit 1
kinst_devtest regs 500 || exit 1
kinst_devtest args 500 || exit 1
kinst_devtest closecall 100 || exit 1
kinst_devtest tstate 500 || exit 1
