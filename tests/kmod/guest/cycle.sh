#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# A real arm / hit / read / disarm cycle on syscall handlers.
set -u
kinst_devtest cycle __x64_sys_getpid "${1:-1000}" || exit 1
kinst_devtest cycle __x64_sys_getpid 1 || exit 1
kinst_devtest regs 500 || exit 1
