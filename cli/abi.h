// SPDX-License-Identifier: BSD-2-Clause
// kinst_abi.h for cli/: the OS's ioctl encoding first (the header defines
// its KINST_IOC_* commands only when _IOWR is known), C linkage.
#ifndef KINSTCTL_ABI_H
#define KINSTCTL_ABI_H

#include <sys/ioctl.h>

extern "C" {
#include "kinst_abi.h"
}

#endif
