# SPDX-License-Identifier: BSD-2-Clause
# `make bench-cli`: kinstctl list-offsets vs objdump -d (tests/bench/cli-list-offsets).
if(TARGET kinstctl)
  add_custom_target(bench-cli
    COMMAND env KINST_BUILD=${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_LIST_DIR}/cli-list-offsets
      $<TARGET_FILE:kinstctl>
    DEPENDS kinstctl
    USES_TERMINAL
    COMMENT "kinstctl list-offsets vs objdump -d over Debian's kernel modules")
endif()

# `make bench-cli-source`: DWARF lines, kinstctl vs objdump -dl / addr2line
# (tests/bench/cli-source).
if(TARGET kinstctl)
  add_custom_target(bench-cli-source
    COMMAND env KINST_BUILD=${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_LIST_DIR}/cli-source
      "" $<TARGET_FILE:kinstctl>
    DEPENDS kinstctl
    USES_TERMINAL
    COMMENT "kinstctl source lines vs objdump -dl and addr2line")
endif()
