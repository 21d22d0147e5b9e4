#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# A full ring drops and counts, never blocks: reload kinst.ko with a 4 KiB
# ring per CPU, hit a probe many times without reading; then read the rings
# through mmap(2) while they overflow.
set -u
ko=$(find /kinst -name kinst.ko | head -n 1)
rmmod kinst || { echo "FAIL: rmmod"; exit 1; }
insmod "$ko" ring_size=4096 || { echo "FAIL: insmod ring_size=4096"; exit 1; }
kinst_devtest drops 5000 || exit 1
# The same through mapped rings, with hostile mappings first.
kinst_devtest mmap 200000 || exit 1
rmmod kinst && insmod "$ko" ring_size=1000 2>/dev/null &&
    { echo "FAIL: ring_size=1000 (not a power of two) accepted"; exit 1; }
echo "ring_size=1000 refused"
