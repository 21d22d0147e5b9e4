# SPDX-License-Identifier: BSD-2-Clause
# kinstctl's record consumer (issue 24): records/s through the hit
# formatter (text, JSON), the DOM it replaced, kinstctl print end to end,
# and jq -c . on the same JSON (the floor of JSON processing).
# Run: <builddir>/tests/bench/print_bench [N] (default 300000)
if(TARGET kinstctl_core)
  add_executable(print_bench ${CMAKE_CURRENT_LIST_DIR}/print_bench.cc)
  target_link_libraries(print_bench kinstctl_core)
  target_compile_definitions(print_bench PRIVATE KINSTCTL_PATH="$<TARGET_FILE:kinstctl>")
endif()
