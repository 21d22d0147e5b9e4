// SPDX-License-Identifier: BSD-2-Clause
// kinst_abi.h for cli/: the OS's ioctl encoding first (the header defines
// its KINST_IOC_* commands only when _IOWR is known), C linkage.
#ifndef KINSTCTL_ABI_H
#define KINSTCTL_ABI_H

#include <sys/ioctl.h>

extern "C" {
#include "kinst_abi.h"
}

#include <cstring>

namespace kinst {

// One probe-program instruction (KINST_OP_*: docs/engine.md).
inline struct kinst_pinsn
make_pinsn(uint8_t op, uint8_t arg = 0, uint64_t imm = 0)
{
	struct kinst_pinsn i;
	memset(&i, 0, sizeof(i));
	i.op = op;
	i.arg = arg;
	i.imm = imm;
	return i;
}

} // namespace kinst

#endif
