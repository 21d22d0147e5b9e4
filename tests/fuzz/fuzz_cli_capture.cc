// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: capture files (kinstctl trace --output, print).
#include "fuzz_cli_entry.h"

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	kinst::fuzz_cli_capture_one(data, size);
	return 0;
}
