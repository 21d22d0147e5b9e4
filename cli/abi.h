// SPDX-License-Identifier: BSD-2-Clause
// kinst_abi.h for C++: the header is C11 and uses _Static_assert, which
// C++ spells static_assert.  Include this instead of kinst_abi.h in cli/.
#ifndef KINSTCTL_ABI_H
#define KINSTCTL_ABI_H

#include <sys/ioctl.h>

#ifndef _Static_assert
#define _Static_assert static_assert
#define KINSTCTL_UNDEF_STATIC_ASSERT
#endif
extern "C" {
#include "kinst_abi.h"
}
#ifdef KINSTCTL_UNDEF_STATIC_ASSERT
#undef _Static_assert
#undef KINSTCTL_UNDEF_STATIC_ASSERT
#endif

#endif
