# SPDX-License-Identifier: BSD-2-Clause
# fuzz_decode: libFuzzer + ASan + UBSan on the x86-64 decoder.  The decoder
# source is compiled into the target itself so that it is instrumented too.
add_executable(fuzz_decode
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_decode.c
  ${CMAKE_CURRENT_LIST_DIR}/../../common/x86/kinst_decode.c)
target_include_directories(fuzz_decode PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/../../common)
target_compile_options(fuzz_decode PRIVATE -g -O1
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
  -fno-omit-frame-pointer)
target_link_options(fuzz_decode PRIVATE
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)
