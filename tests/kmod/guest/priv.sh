#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# Who may open /dev/kinst, and a file whose opener dropped its privileges
# (kinst(4)): kinst_devtest priv, run as root.
set -u
kinst_devtest priv "${1:-100}" || exit 1
