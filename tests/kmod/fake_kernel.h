/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fake kernel of the control-path and device-layer tests (control_test,
 * dev_test): common/kinst_os.h's hooks over an array of "kernel text",
 * logging every text write, synchronization, quiescence and trampoline
 * operation, and checking the orders the design requires (fake_kernel.c).
 */
#ifndef KINST_FAKE_KERNEL_H
#define KINST_FAKE_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "kinst_control.h"
#include "kinst_os.h"

/*
 * Functions in fake text: f_small (5 instructions), f_big (9000 one-byte
 * nops: more than KINST_MAX_PROBES), f_excluded, f_fixup (second insn has a
 * "fixup"), f_imm (mov $1,%eax; mov %eax,%ecx; ret).
 */
#define	TEXT_BASE	0xffffffff81000000ull
#define	SMALL_OFF	0
#define	SMALL_SIZE	10
#define	EXCL_OFF	64
#define	IMM_OFF		96
#define	IMM_SIZE	8
#define	FIXUP_OFF	128
#define	BIG_OFF		256
#define	BIG_SIZE	9000

extern uint8_t text[16384];
extern const uint8_t small_code[SMALL_SIZE], imm_code[IMM_SIZE];
extern struct kinst_engine *engine;
extern struct kinst_ctl ctl;
extern int ctl_locked, text_locked;
extern long nalloc, nrefs, ntramps;
extern char log_buf[1 << 16];
extern size_t log_len;
extern uint64_t fixup_addr;
extern uint8_t xlat[sizeof(text)];
extern char hold_log[1024];
extern int pending[sizeof(text)];
/* kinst_os_alloc outside the control lock is allowed (a verifier, a device) */
extern int prog_loading;
/* kinst_os_alloc fails once this many more allocations succeeded (-1: never) */
extern long alloc_fail_after;
extern uint32_t fake_cpu;
/*
 * Trampoline accounting hooks (NULL: none): a test plugs in a shim's
 * (control_test: the FreeBSD cap, kmod/freebsd/kinst_freebsd.c) and the
 * fake calls it where that shim does (kinst_fbsd_os.c): admit before an
 * allocation (false: the allocation fails), retire at a free, cancel at
 * an unused block's return; sizes rounded up to 4 KiB pages.
 */
extern bool (*tramp_admit_hook)(uint64_t size);
extern void (*tramp_retire_hook)(uint64_t size);
extern void (*tramp_cancel_hook)(uint64_t size);

void	tlog(const char *fmt, ...);
void	fake_reset(void);
struct kinst_csite *jump_window_of(uint64_t addr);

struct sess {
	struct kinst_csession cs;
	struct kinst_ring rings[2];
	struct kinst_pcpu_count hits[2];
	uint8_t buf[2][4096];
};

void	sess_init(struct sess *s);
int	arm(struct sess *s, const char *fn, uint32_t off, uint32_t flags,
	    struct kinst_arm *a);
/* arm() of a function in a module ("" or "kernel": the kernel). */
int	arm_in(struct sess *s, const char *module, const char *fn, uint32_t off,
	    uint32_t flags, struct kinst_arm *a);
void	check_text_clean(void);
void	check_no_leaks(void);

#endif /* !KINST_FAKE_KERNEL_H */
