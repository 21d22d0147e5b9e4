# SPDX-License-Identifier: BSD-2-Clause
# Probe programs: interpreter ns per bytecode instruction executed,
# verifier throughput (programs/s, instructions/s, bytes/s).  Run:
# <builddir>/tests/bench/prog_bench [iterations]
# (prog_bench_steps.c compiles common/kinst_prog.c again, renamed, with a
# step-counting hook.)
add_executable(prog_bench ${CMAKE_CURRENT_LIST_DIR}/prog_bench.c
  ${CMAKE_CURRENT_LIST_DIR}/prog_bench_steps.c
  ${CMAKE_CURRENT_LIST_DIR}/../harness/kh_os.c)
target_include_directories(prog_bench PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../harness
  ${CMAKE_SOURCE_DIR}/common)
target_compile_definitions(prog_bench PRIVATE _GNU_SOURCE)
target_link_libraries(prog_bench kinst_common)
