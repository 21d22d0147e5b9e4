# SPDX-License-Identifier: BSD-2-Clause
# decode_bench: kinst_decode() vs Capstone throughput on kernel module text.
pkg_check_modules(KINST_BENCH_DECODE_CS REQUIRED IMPORTED_TARGET capstone)
pkg_check_modules(KINST_BENCH_DECODE_ELF REQUIRED IMPORTED_TARGET libelf)
add_executable(decode_bench ${CMAKE_CURRENT_LIST_DIR}/decode_bench.c)
target_link_libraries(decode_bench kinst_common
  PkgConfig::KINST_BENCH_DECODE_CS PkgConfig::KINST_BENCH_DECODE_ELF)
