/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The instruction set behind one interface.  The ISA-neutral engine (the
 * probe table, sites and subscribers, rings, the control path, the device
 * protocol, programs, aggregation, per-thread state) includes this header
 * for everything that knows instructions, never an instruction set's own
 * headers.  Each instruction set lives in its own folder of common/ (x86/:
 * x86-64), selected here by the compiler's target; sources.mk lists its
 * sources as KINST_ISA_SRCS.
 */
#ifndef KINST_ISA_H
#define KINST_ISA_H

#include "kinst_abi.h"

#if defined(__x86_64__) || defined(__amd64__)
#include "x86/kinst_isa_md.h"
#else
#error "kinst: no instruction set for this target (common/kinst_isa.h)"
#endif

#endif /* !KINST_ISA_H */
