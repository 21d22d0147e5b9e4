// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: kinstctl's DWARF location compiler (cli/debuginfo/dwarf_loc.cc).
#include "fuzz_cli_entry.h"

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	kinst::fuzz_cli_dwarf_loc_one(data, size);
	return 0;
}
