# SPDX-License-Identifier: BSD-2-Clause
# Trap-path costs of the ring (put/get per hit record) and of probe table
# lookups (hit/miss, 8192 probes).  Run: <builddir>/tests/bench/ring_bench [iterations]
add_executable(ring_bench ${CMAKE_CURRENT_LIST_DIR}/ring_bench.c)
target_link_libraries(ring_bench kinst_common)
