// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: kinstctl's CTF reader (cli/debuginfo/ctf_types.cc).
#include "fuzz_cli_entry.h"

extern "C" int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	kinst::fuzz_cli_ctf_one(data, size);
	return 0;
}
