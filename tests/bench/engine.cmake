# SPDX-License-Identifier: BSD-2-Clause
# Engine cost per hit (kinst_engine_hit on a prepared register file, no
# signal delivery).  Run: <builddir>/tests/bench/engine_bench [iterations]
add_executable(engine_bench ${CMAKE_CURRENT_LIST_DIR}/engine_bench.c
  ${CMAKE_CURRENT_LIST_DIR}/../harness/kh_os.c)
target_include_directories(engine_bench PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../harness)
target_compile_definitions(engine_bench PRIVATE _GNU_SOURCE)
target_link_libraries(engine_bench kinst_common)
