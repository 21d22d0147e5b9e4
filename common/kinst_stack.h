/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Kernel call stacks at a hit (KINST_ARM_STACK).
 *
 * A probe armed with KINST_ARM_STACK carries KINST_PF_STACK; each of its
 * hits appends one KINST_SEC_STACK section to the hit record: frame [0] is
 * the probed instruction itself (regs->rip), then the return addresses of
 * its callers, innermost first, at most KINST_STACK_MAX in all, with
 * KINST_SECF_TRUNCATED when more frames were there.  The callers come from
 * the OS (kinst_os_stack(): the kernel's own unwinder on Linux, a
 * frame-pointer walk on FreeBSD, the instruction set's kinst_fpwalk(),
 * kinst_isa.h).
 *
 * Trap context: no lock, no allocation, bounded work.  The record is built
 * in a buffer on the handler's stack (KINST_STACK_REC_MAX bytes) only for
 * probes that ask for stacks; probes without the flag are unchanged, and
 * only stack probes reserve ring room for the largest section.
 */
#ifndef KINST_STACK_H
#define KINST_STACK_H

#include "kinst_abi.h"
#include "kinst_ring.h"

/* Probe flag (struct kinst_probe.flags): record the stack at each hit. */
#define	KINST_PF_STACK	0x0001u

/* Bytes of a full STACK section, header included. */
#define	KINST_STACK_SEC_MAX	\
	(sizeof(struct kinst_rec_sec) + KINST_STACK_MAX * sizeof(uint64_t))
/* The largest hit record a stack probe writes (the ring room it needs). */
#define	KINST_STACK_REC_MAX	\
	(sizeof(struct kinst_hit_record) + KINST_STACK_SEC_MAX)

/*
 * Write the STACK section for a hit at regs at sec, which has room for
 * KINST_STACK_SEC_MAX bytes.  osctx (the shim's trap context) and offset
 * (the probe's offset in its function) are passed to kinst_os_stack().
 * Returns the section's size in bytes, header included (a multiple of 8).
 */
uint32_t kinst_stack_capture(const struct kinst_regs *regs, void *osctx,
	    uint32_t offset, void *sec);

/*
 * Append a STACK section to the fixed record rec and put the whole record
 * into ring r.  Returns kinst_ring_put()'s result (0: written; -1: dropped
 * and counted).
 */
int	kinst_stack_record(struct kinst_ring *r,
	    const struct kinst_hit_record *rec, const struct kinst_regs *regs,
	    void *osctx, uint32_t offset);

#endif /* !KINST_STACK_H */
