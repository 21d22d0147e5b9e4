#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# scenario: short run of the issue 8 soak (tests/vm/soak/soak_trap_path.sh): seed 20261130, 24 busy functions drawn armed whole in batches of 8 under a workload, CPU 1 offline/online between batches, 180 s budget (from the first batch); text restored, counts balanced, clean log
# scenario-needs: kinst
# scenario-timeout: 600
# scenario-options: -m 2G -f "$KINST_BUILD/tests/kmod/kinst_devtest" -f "$top/tests/vm/soak/soak_trap_path.sh" -f "$top/tests/vm/soak/busy-functions.txt"
#
# The long run (hundreds of functions, 15 min budget) is by hand: README,
# "Soaks".  Same script, same checks; only the sizes differ.
[ -r /kinst/files/soak_trap_path.sh ] || { echo "FAIL: soak_trap_path.sh not shipped (-f)"; exit 1; }
exec sh /kinst/files/soak_trap_path.sh 20261130 24 8 180 busy
