#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Malformed ioctls and bad requests against /dev/kinst: errnos, no oops.
set -u
kinst_devtest fuzz "${1:-20000}" || exit 1
kinst_devtest refuse || exit 1
# The module still works afterwards.
kinst_devtest cycle __x64_sys_getpid 50 || exit 1
# Unloading is refused while armed, and the device works after the refusal.
kinst_devtest unload || exit 1
