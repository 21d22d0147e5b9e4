# SPDX-License-Identifier: BSD-2-Clause
# kinstctl fuzz targets (libFuzzer + ASan/UBSan): the ELF reader, the probe
# spec parser, the CTF reader, the DWARF location compiler and capture
# files (trace --output).  The CLI and
# engine sources are compiled again here with the sanitizers so that they
# are instrumented.  Seeds: tests/fuzz/regress/<t>/
# (crashers found and fixed, replayed by tests/cli/cli_unit_test).
if(TARGET kinstctl_core)
  set(_kinst_fuzz_flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -g -O1)
  find_package(nlohmann_json 3 REQUIRED)
  pkg_check_modules(CAPSTONE REQUIRED IMPORTED_TARGET capstone)
  pkg_check_modules(LIBELF REQUIRED IMPORTED_TARGET libelf)
  pkg_check_modules(LIBDW REQUIRED IMPORTED_TARGET libdw)
  pkg_check_modules(ZLIB REQUIRED IMPORTED_TARGET zlib)
  foreach(t fuzz_cli_elf fuzz_cli_spec fuzz_cli_ctf fuzz_cli_dwarf_loc fuzz_cli_capture)
    # kinstctl uses only the decoders and the classifiers from common/
    # (x86-64's, and A64's for arm64 files).
    add_executable(${t} ${CMAKE_CURRENT_LIST_DIR}/${t}.cc ${KINSTCTL_CORE_SOURCES}
      ${CMAKE_SOURCE_DIR}/common/x86/kinst_decode.c ${CMAKE_SOURCE_DIR}/common/x86/kinst_classify.c
      ${CMAKE_SOURCE_DIR}/common/arm64/kinst_a64.c)
    target_include_directories(${t} PRIVATE ${KINSTCTL_INCLUDE_DIRS}
      ${CMAKE_SOURCE_DIR}/common ${CMAKE_CURRENT_LIST_DIR})
    target_compile_options(${t} PRIVATE ${_kinst_fuzz_flags})
    target_compile_definitions(${t} PRIVATE KINST_HAVE_LIBDW=1)
    target_link_options(${t} PRIVATE ${_kinst_fuzz_flags})
    target_link_libraries(${t} PRIVATE kinst_common PkgConfig::CAPSTONE PkgConfig::LIBELF
      PkgConfig::LIBDW PkgConfig::ZLIB nlohmann_json::nlohmann_json)
  endforeach()
endif()
