# SPDX-License-Identifier: BSD-2-Clause
# fuzz_prog: libFuzzer + ASan + UBSan on the probe-program verifier and
# interpreter (common/kinst_prog.c, compiled into the target with the
# checks of tests/unit/prog_check.h).
add_executable(fuzz_prog ${CMAKE_CURRENT_LIST_DIR}/fuzz_prog.c)
target_include_directories(fuzz_prog PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/../../common ${CMAKE_CURRENT_LIST_DIR}/../unit)
target_compile_options(fuzz_prog PRIVATE -g -O1
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
  -fno-omit-frame-pointer)
target_link_options(fuzz_prog PRIVATE
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)
