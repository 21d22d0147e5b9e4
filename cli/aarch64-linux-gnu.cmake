# SPDX-License-Identifier: BSD-2-Clause
# kinstctl cross-built for an arm64 Linux (issue 44), with Debian's
# aarch64-linux-gnu compilers and a sysroot of Debian's arm64 -dev
# packages extracted, not installed (tests/lib/env.sh:
# kinst_fetch_arm64_libs):
#
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cli/aarch64-linux-gnu.cmake \
#     -DKINST_ARM64_SYSROOT=$HOME/.cache/kinst/arm64-sysroot/root \
#     -DKINST_TESTS=OFF -DKINST_KMOD_IN_ALL=OFF -DKINST_STATIC=ON
#   cmake --build build-arm64 --target kinstctl
#
# KINST_STATIC links everything in, for a guest with no libraries.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_ASM_COMPILER aarch64-linux-gnu-gcc)
if(NOT KINST_ARM64_SYSROOT)
  message(FATAL_ERROR "cli/aarch64-linux-gnu.cmake: set KINST_ARM64_SYSROOT "
    "to Debian's arm64 -dev packages extracted (tests/lib/env.sh: kinst_fetch_arm64_libs)")
endif()
# Passed on to try_compile()'s projects.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES KINST_ARM64_SYSROOT)
set(CMAKE_FIND_ROOT_PATH ${KINST_ARM64_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_LIBDIR}
  "${KINST_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${KINST_ARM64_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} ${KINST_ARM64_SYSROOT})
# The sysroot holds only the libraries; the C library is the cross
# compiler's own.
set(CMAKE_C_FLAGS_INIT "-isystem ${KINST_ARM64_SYSROOT}/usr/include")
set(CMAKE_CXX_FLAGS_INIT "-isystem ${KINST_ARM64_SYSROOT}/usr/include")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-L${KINST_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu")
# try_run() checks (Capstone's trimmed archive) run under user-mode QEMU
# (Debian's qemu-user), with the cross compiler's C library.
find_program(KINST_QEMU_AARCH64 qemu-aarch64)
if(KINST_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${KINST_QEMU_AARCH64} -L /usr/aarch64-linux-gnu)
endif()
