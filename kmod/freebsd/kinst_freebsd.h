/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The part of the FreeBSD/amd64 shim that includes no FreeBSD header, so
 * that the host tests compile it by path and run it on every build:
 *
 * - the geometry of the kernel-mode #BP trap frame (struct trapframe of
 *   sys/x86/include/frame.h, as amd64/amd64/exception.S leaves it) and the
 *   arithmetic that makes room below the interrupted stack pointer for an
 *   emulated call/pushf (kmod/freebsd/kinst_hook.S moves the frame down);
 * - the functions kinst refuses by name on FreeBSD, and why;
 * - how a module name given by the user matches a linker file name.
 *
 * docs/freebsd.md derives every constant below from FreeBSD's sources.
 * This header is also included by kinst_hook.S: everything outside the
 * !__ASSEMBLER__ block must stay plain #defines.
 */
#ifndef KINST_FREEBSD_H
#define KINST_FREEBSD_H

/*
 * struct trapframe (amd64): byte offsets.  kmod/freebsd/kinst_freebsd_os.c
 * checks every one against the kernel's own header with _Static_assert.
 */
#define	KINST_FBSD_TF_RDI	0x00
#define	KINST_FBSD_TF_RSI	0x08
#define	KINST_FBSD_TF_RDX	0x10
#define	KINST_FBSD_TF_RCX	0x18
#define	KINST_FBSD_TF_R8	0x20
#define	KINST_FBSD_TF_R9	0x28
#define	KINST_FBSD_TF_RAX	0x30
#define	KINST_FBSD_TF_RBX	0x38
#define	KINST_FBSD_TF_RBP	0x40
#define	KINST_FBSD_TF_R10	0x48
#define	KINST_FBSD_TF_R11	0x50
#define	KINST_FBSD_TF_R12	0x58
#define	KINST_FBSD_TF_R13	0x60
#define	KINST_FBSD_TF_R14	0x68
#define	KINST_FBSD_TF_R15	0x70
#define	KINST_FBSD_TF_TRAPNO	0x78	/* uint32_t, then tf_fs, tf_gs (uint16_t) */
#define	KINST_FBSD_TF_ADDR	0x80
#define	KINST_FBSD_TF_FLAGS	0x88	/* uint32_t, then tf_es, tf_ds (uint16_t) */
#define	KINST_FBSD_TF_ERR	0x90
/* From tf_rip up: what the CPU pushed (#BP pushes no error code). */
#define	KINST_FBSD_TF_RIP	0x98
#define	KINST_FBSD_TF_CS	0xa0
#define	KINST_FBSD_TF_RFLAGS	0xa8
#define	KINST_FBSD_TF_RSP	0xb0
#define	KINST_FBSD_TF_SS	0xb8
#define	KINST_FBSD_TF_SIZE	0xc0

/*
 * The hook moves the whole trap frame this many bytes down before it calls
 * the engine.  A multiple of 16, so the frame stays 16-byte aligned (the
 * call into C then sees the ABI's alignment).
 */
#define	KINST_FBSD_FRAME_SHIFT	16

/*
 * Bytes just below the interrupted %rsp that the engine may write (an
 * emulated call pushes 8, a pushf 8 or 2).  Guaranteed free by the shift.
 */
#define	KINST_FBSD_STACK_ROOM	16

#ifndef __ASSEMBLER__

#include "kinst_types.h"

struct kinst_engine;
struct kinst_regs;

_Static_assert(KINST_FBSD_FRAME_SHIFT % 16 == 0, "frame shift keeps alignment");
_Static_assert(KINST_FBSD_STACK_ROOM >= 8, "room for one emulated push");
_Static_assert(KINST_FBSD_FRAME_SHIFT >= KINST_FBSD_STACK_ROOM,
    "the shift frees at least the room");
_Static_assert(KINST_FBSD_TF_SIZE % 16 == 0 && KINST_FBSD_TF_RIP % 16 == 8,
    "trapframe geometry the alignment argument relies on");

/*
 * Where the #BP entry of a kernel-mode trap leaves the struct trapframe,
 * given the interrupted stack pointer isp: the CPU aligns %rsp down to 16
 * bytes and pushes ss, rsp, rflags, cs, rip (5 words); the entry code
 * (IDTVEC(bpt): subq $TF_RIP, %rsp) reserves the software part below.
 */
uint64_t kinst_fbsd_frame_at(uint64_t isp);

/* The same frame after the hook moved it down by KINST_FBSD_FRAME_SHIFT. */
uint64_t kinst_fbsd_moved_frame_at(uint64_t isp);

/*
 * May the engine write [addr, addr + len) during the trap whose interrupted
 * stack pointer is isp?  Only within room bytes below isp, never at or
 * above it, never wrapping.  (Also usable by any shim with a stack gap.)
 */
bool	kinst_stack_write_ok(uint64_t isp, uint64_t addr, size_t len,
	    size_t room);

/*
 * The C side of the #BP hook without its FreeBSD calls: tf is the (moved)
 * struct trapframe of a kernel-mode #BP, accessed as 64-bit words at the
 * KINST_FBSD_TF_* offsets (the shim asserts them against machine/frame.h).
 * Converts it to registers (rip = tf_rip - 1: #BP is a trap), runs the
 * engine with *trap_sp (this CPU's "interrupted %rsp of the trap being
 * handled", which kinst_os_write_stack() bounds writes by) set to tf_rsp and
 * restored afterwards (nested traps), and writes the result back.  Returns
 * 1 when the frame was rewritten (return through doreti), 0 when the trap
 * is not kinst's or its emulation faulted (frame untouched; *faults counts
 * the latter).
 */
int	kinst_fbsd_hit(struct kinst_engine *e, void *tf, uint64_t *trap_sp,
	    uint64_t *faults);

/* Frame <-> registers (cs and ss are never written back). */
void	kinst_fbsd_frame_to_regs(const void *tf, struct kinst_regs *r);
void	kinst_fbsd_regs_to_frame(const struct kinst_regs *r, void *tf);

/*
 * Function-level refusal on FreeBSD by name: KINST_R_ONFAULT (runs with
 * pcb_onfault armed), an excluded-function class (KINST_R_EXCL_*: entry
 * code, breakpoint path, debugger, what the handler calls, ...), or
 * KINST_R_NONE.
 */
int	kinst_fbsd_func_reason(const char *name);

/*
 * Does the function whose code is code[0 .. len) arm pcb_onfault?  True
 * when, decoding from its first byte, an instruction loads a register from
 * %gs:curpcb_off ("mov %gs:off, %reg": 8B with mod != 3, or A1 for %rax;
 * any base or operand size) and a later one stores to [that register +
 * onfault_off] ("mov %reg, m" 89 or "mov $imm32, m" C7 /0, 4 or 8 bytes, no
 * index register), i.e. FreeBSD's "movq PCPU(CURPCB),%reg" and "movq
 * $handler,PCB_ONFAULT(%reg)".  The shim passes offsetof(struct pcpu,
 * pc_curpcb) and offsetof(struct pcb, pcb_onfault).
 *
 * How strict, and why: refusing too much is safe, too little is not.
 * - "Later" is in address order, and a register stays marked once loaded:
 *   writes to it in between are not tracked.  Address order is not the
 *   order of execution, and tracking writes would miss efi_rt_arch_call,
 *   whose store follows a "call panic" (clobbering the register, for a
 *   linear walk) that the path to the store jumps over.  So a function
 *   that reuses the register for something else and then stores to the
 *   same displacement is refused too.
 * - Any value counts, including 0: a function that only disarms after a
 *   fresh load (FreeBSD's fault handlers fusufault, efi_rt_fault) is
 *   refused, which is right for them: they run with pcb_onfault still set.
 * - A byte the decoder cannot decode is skipped and decoding goes on at
 *   the next one (a misaligned walk can only add matches).  A whole-function
 *   arm of such a function is refused as undecodable anyway.
 * - Not seen: a store through a copy of the register (mov %r8, %r9, then
 *   a store through %r9), a pcb reached another way (curthread->td_pcb),
 *   and arming done by a callee.  FreeBSD 15.1 has none of these (every
 *   user is assembly in the pattern above); the name list
 *   kinst_fbsd_onfault[] stays for them.
 * The live text may hold int3s of armed probes, which the walk decodes as
 * they are; no probe is ever armed in a function this refuses.
 */
bool	kinst_fbsd_arms_onfault(const uint8_t *code, size_t len,
	    uint32_t curpcb_off, uint32_t onfault_off);

/*
 * The two offsets in FreeBSD 15.1-RELEASE amd64, from its declarations:
 * pc_curpcb is the fifth pointer of struct pcpu (sys/sys/pcpu.h);
 * pcb_onfault follows 21 register_t, three packed 10-byte struct
 * region_descriptor, a uint16_t, a u_int and a uint16_t in struct pcb
 * (amd64/include/pcb.h), aligned to 8.  The shim uses offsetof(); these
 * are for the host tests, and for the compile check against transcribed
 * declarations that have no machine/pcb.h.
 */
#define	KINST_FBSD_PC_CURPCB_151	0x20
#define	KINST_FBSD_PCB_ONFAULT_151	0xd0

/* One list of excluded names and the refusal (class) it gives. *//* One list of excluded names and the refusal (class) it gives. */
struct kinst_fbsd_excl {
	const char *const *names;
	size_t		n;
	int		reason;
};

/* The name lists behind kinst_fbsd_func_reason (for tests and docs). */
extern const char *const kinst_fbsd_onfault[];
extern const size_t kinst_fbsd_nonfault;
extern const struct kinst_fbsd_excl kinst_fbsd_excluded[];
extern const size_t kinst_fbsd_nexcluded;

/*
 * Does the module name the user gave (kinst_arm.module) name the linker
 * file called filename ("kernel", "zfs.ko", ...)?  "" and "kernel" name
 * the kernel; "zfs" and "zfs.ko" both name zfs.ko.
 */
bool	kinst_fbsd_modname_match(const char *want, const char *filename);

/*
 * The module name kinst reports for a linker file (kinst_func.module, LIST):
 * the file name without a trailing ".ko", as kinstctl names modules
 * ("kernel", "zfs").  Always NUL-terminated within size (> 0) bytes.
 */
void	kinst_fbsd_modname(const char *filename, char *out, size_t size);

/* Is this the kernel's own linker file name? */
bool	kinst_fbsd_is_kernel_file(const char *filename);

/*
 * The file layer's own ioctls (sys/filio.h), which reach every character
 * device: fcntl(F_SETFL) hands the file's new O_NONBLOCK to the driver as
 * FIONBIO and its O_ASYNC as FIOASYNC (kern_descrip.c, through devfs to
 * d_ioctl), and fails the fcntl when the driver refuses either.  Given the
 * command taken apart as sys/ioccom.h encodes it (group, number, length,
 * direction KINST_DEV_IN/OUT) and its int argument:
 * - FIONBIO: 0.  Nothing to do: devfs passes O_NONBLOCK to d_read in
 *   ioflag, and kinst_read() honours it.
 * - FIOASYNC: 0 to turn it off, KINST_EINVAL to turn it on (kinst sends no
 *   SIGIO).
 * - anything else: -1 (not the file layer's: the device protocol's).
 */
#define	KINST_FBSD_FIO_GROUP	'f'
#define	KINST_FBSD_FIONBIO_NR	126
#define	KINST_FBSD_FIOASYNC_NR	125
int	kinst_fbsd_file_ioctl(uint32_t group, uint32_t nr, uint32_t size,
	    uint32_t dir, const void *data);


/*
 * Module load and unload as an explicit sequence of steps (docs/freebsd.md,
 * section 3).  FreeBSD calls MOD_UNLOAD after a failed MOD_LOAD
 * (kern/kern_module.c, module_register_init()) and, with kldunload -f,
 * after a refused MOD_QUIESCE; the state below is what makes both safe:
 *
 * - kinst_fbsd_mod_load() runs setup of steps[0], steps[1], ... in order;
 *   when one fails it runs the teardown of every step already set up, in
 *   reverse order, and returns that step's error with ndone == 0.
 * - kinst_fbsd_mod_unload() with ndone == 0 (never loaded, or the load
 *   failed) returns 0 and calls nothing.  Otherwise it first asks busy():
 *   a non-zero answer is returned as it is and nothing is torn down (busy()
 *   itself must leave everything as it found it when it refuses).  Then it
 *   tears down every step set up, in reverse order; teardowns cannot fail.
 */
struct kinst_fbsd_step {
	const char	*name;
	int		(*setup)(void *ctx);	/* 0 or an errno */
	void		(*teardown)(void *ctx);	/* NULL: nothing to undo */
};

struct kinst_fbsd_mod {
	const struct kinst_fbsd_step *steps;
	uint32_t	nsteps;
	uint32_t	ndone;		/* steps[0 .. ndone) are set up */
	int		(*busy)(void *ctx);	/* 0, or why unload is refused */
	void		*ctx;
	const char	*failed;	/* name of the step that failed last */
};

int	kinst_fbsd_mod_load(struct kinst_fbsd_mod *m);
int	kinst_fbsd_mod_unload(struct kinst_fbsd_mod *m);

/*
 * The trap gate (issue 22, defect 6): what dtrace_trap_func points to while
 * kinst is loaded, built at load into trampoline memory, which is never
 * freed, not even at unload.  trap_check() loads dtrace_trap_func and calls
 * it with interrupts as the trap left them (enabled for most page faults),
 * so a thread can be preempted between the load and the call and make the
 * call after the module is gone.  The gate is
 *
 *	endbr64; pushfq; cli; movabs $word, %rax; movq (%rax), %rax;
 *	testq %rax, %rax; je 1f; call *%rax; popfq; ret;
 *   1:	popfq; xorl %eax, %eax; ret
 *
 * word (8 bytes, also never freed) holds kinst_fbsd_trap_nofault while
 * kinst is loaded.  The unload stores 0 there, then rendezvous: from the
 * load of word to the popfq interrupts are off, so afterwards no CPU is in
 * the handler, and a late caller of the gate finds 0 and returns 0 ("not
 * mine").  The handler (same arguments, rdi and esi untouched) is entered
 * with the stack aligned as after any call.  Returns the bytes written
 * (KINST_FBSD_TRAPGATE_SIZE at most).
 */
#define	KINST_FBSD_TRAPGATE_SIZE	32
size_t	kinst_fbsd_trapgate_build(uint8_t *out, uint64_t word);

/*
 * kinsttrace.ko's second module, named "dtrace" (kinst_fbsd_dev.c).
 * FreeBSD registers a module name once (module_register() fails with
 * EEXIST for a name already registered), so while kinsttrace.ko is loaded
 * dtrace.ko cannot load, and with it neither can any DTrace provider
 * (each depends on module dtrace) nor dtrace(1)'s kldload of dtraceall:
 * DTrace would otherwise take the #BP hook and dtrace_trap_func from under
 * armed probes, and the next hit would panic in trap().  With DTrace
 * already loaded, kinsttrace.ko fails to load the same way.
 *
 * FreeBSD runs a file's MOD_LOADs in SYSINIT order (the guard's is later
 * than kinst's) and its MOD_UNLOADs in reverse order of successful loads
 * (kern_module.c moves each loaded module to the head of its file's
 * list), so the guard's MOD_UNLOAD comes first.  The guard's events:
 * LOAD succeeds only when kinst is set up (else the file would stay
 * loaded with the guard alone after a failed kinst load); UNLOAD is
 * kinst's unload (kinst_fbsd_mod_unload: it refuses, and then nothing is
 * released, or it tears kinst down; kinst's own MOD_UNLOAD then finds
 * nothing set up); QUIESCE and SHUTDOWN are 0 (kinst's own decide).
 */
enum kinst_fbsd_ev {
	KINST_FBSD_EV_LOAD,
	KINST_FBSD_EV_QUIESCE,
	KINST_FBSD_EV_UNLOAD,
	KINST_FBSD_EV_SHUTDOWN,
	KINST_FBSD_EV_OTHER,
};
int	kinst_fbsd_guard_event(struct kinst_fbsd_mod *kinst,
	    enum kinst_fbsd_ev ev);

/*
 * The open-file gate between d_open and MOD_UNLOAD (a Dekker pair on two
 * words, sequentially consistent): once kinst_fbsd_gate_shut() has
 * succeeded, no file is open and every later kinst_fbsd_gate_enter() fails,
 * so MOD_UNLOAD never waits for an ioctl (which may wait for kld_sx, held
 * by the unloading thread: docs/freebsd.md, defect 3).  A failed shut
 * leaves the gate as it was.
 */
struct kinst_fbsd_gate {
	uint32_t	nfiles;		/* open files whose destructor has not run */
	uint32_t	shut;		/* unload in progress or done */
};

bool	kinst_fbsd_gate_enter(struct kinst_fbsd_gate *g);	/* open */
void	kinst_fbsd_gate_leave(struct kinst_fbsd_gate *g);	/* last close */
bool	kinst_fbsd_gate_shut(struct kinst_fbsd_gate *g);	/* false: files open */
void	kinst_fbsd_gate_reopen(struct kinst_fbsd_gate *g);
uint32_t kinst_fbsd_gate_nfiles(const struct kinst_fbsd_gate *g);

/*
 * The unload check (the shim's busy() step): shut the gate, then look at
 * the probe count (*nprobes, read atomically; no lock, so none is taken
 * under kld_sx) and whether jump-optimized probes were ever installed
 * (*jumps_used: a thread may still be inside a detour, so the module stays
 * loaded for good).  KINST_FBSD_UNLOAD_OK: the gate stays shut, tear down.
 * Otherwise the gate is open again as it was and nothing changed: the
 * device still opens.
 */
enum {
	KINST_FBSD_UNLOAD_OK = 0,
	KINST_FBSD_UNLOAD_FILES_OPEN,
	KINST_FBSD_UNLOAD_PROBES_LEFT,
	KINST_FBSD_UNLOAD_JUMPS_USED,
};
int	kinst_fbsd_unload_check(struct kinst_fbsd_gate *g,
	    const uint32_t *nprobes, const bool *jumps_used);

/*
 * Trampoline lifetime on FreeBSD (issue 10, defect 2; docs/freebsd.md 1.6).
 * A thread can be inside a trampoline with interrupts enabled (trap()
 * re-enables them for a page fault taken there and may sleep in vm_fault),
 * so no quiescence proves a trampoline unused.  Therefore a trampoline block
 * is never unmapped, rewritten or handed out again once it was armed: the
 * shim's kinst_os_tramp_free() only retires it (it stays mapped read+execute,
 * its bytes unchanged) and the allocator (vm_map_find) never returns a
 * range that is still mapped.  Retired blocks are not freed at unload
 * either (a thread may still sleep in one).  The cost is bounded: admit()
 * refuses a new block once live + retired bytes would exceed cap, so the
 * memory kept is at most cap per load of the module.  Control path only
 * (control lock held).
 */
#define	KINST_FBSD_TRAMP_CAP	(32ull << 20)	/* bytes, per module load */

struct kinst_fbsd_tramps {
	uint64_t	cap;		/* bytes; 0 means KINST_FBSD_TRAMP_CAP */
	uint64_t	live;		/* bytes in blocks not yet retired */
	uint64_t	retired;	/* bytes kept mapped, never reused */
	uint64_t	nretired;	/* blocks retired */
	uint64_t	refused;	/* blocks admit() refused */
};

bool	kinst_fbsd_tramp_admit(struct kinst_fbsd_tramps *t, uint64_t size);
void	kinst_fbsd_tramp_retire(struct kinst_fbsd_tramps *t, uint64_t size);
/* An admitted block that could not be allocated after all. */
void	kinst_fbsd_tramp_cancel(struct kinst_fbsd_tramps *t, uint64_t size);

/*
 * The no-fault reads' trap decision (kmod/freebsd/kinst_nofault.S, called
 * through dtrace_trap_func from trap_check() before trap(); docs/freebsd.md
 * 1.5 and 4): tf is a struct trapframe (KINST_FBSD_TF_*), trapno its
 * tf_trapno, active this CPU's no-fault count, nf where the two copies are.
 * Nothing is ours unless active and the trap came from kernel mode.
 *  - The kernel copy (kinst_os_read): a page, protection,
 *    segment-not-present or stack fault at a rip in [start, end):
 *    tf_rip = fail.
 *  - The user copy (kinst_os_read_user): only a page fault (T_PAGEFLT),
 *    at a rip in [ustart, uend), whose address (tf_addr, %cr2) is a user
 *    address (below ulimit): tf_rip = ufail and PSL_AC cleared in
 *    tf_rflags (the copy runs with AC set under SMAP; the resumed code
 *    must not).  Any other trap there (a #GP cannot happen after the range
 *    check; a fault on the kernel-side buffer is a bug) goes to trap().
 * Handled: return 1 (trap() never runs, so interrupts stay disabled and
 * vm_fault() is never called).  Anything else: 0, frame untouched.
 * Trap numbers of amd64's machine/trap.h, PSL_AC of machine/psl.h.
 */
#define	KINST_FBSD_T_PROTFLT	9
#define	KINST_FBSD_T_PAGEFLT	12
#define	KINST_FBSD_T_SEGNPFLT	26
#define	KINST_FBSD_T_STKFLT	27
#define	KINST_FBSD_PSL_AC	0x00040000ull

struct kinst_fbsd_nofault {
	uint64_t	start, end, fail;	/* kernel copy */
	uint64_t	ustart, uend, ufail;	/* user copy */
	uint64_t	ulimit;			/* user addresses lie below */
};

int	kinst_fbsd_nofault_fixup(void *tf, uint32_t trapno, uint32_t active,
	    const struct kinst_fbsd_nofault *nf);

/*
 * A user read of len bytes at addr may be attempted: len > 0 and the whole
 * range [addr, addr + len) lies below limit (the end of the lower
 * canonical half), without wrapping.  Below that limit every address is
 * canonical, so the copy can only take page faults.
 */
bool	kinst_fbsd_user_range_ok(uint64_t addr, uint64_t len, uint64_t limit);

/*
 * May kinst_os_read()'s no-fault kernel copy be pointed at [addr, addr +
 * len)?  The whole kernel half (canonical upper half of the paging mode:
 * from 0xffff800000000000 with 4 levels, 0xff00000000000000 with LA57),
 * as DTrace's toxic ranges bound dtrace_copy: not only what lies above
 * VM_MIN_KERNEL_ADDRESS (0xfffffe0000000000; on 15.1 kva_layout.km_low, a
 * variable), but the direct map below it (kva_layout.dmap_low on 15.1,
 * DMAP_MIN_ADDRESS before: 0xfffff80000000000 with 4 levels), where UMA's
 * single-page slabs and small malloc(9) objects live and so the function
 * pointers an emulated "call *disp(%reg)" reads (issue 22, defect 1).  A
 * hole or an unmapped page inside the half faults, and the no-fault copy
 * absorbs that; user addresses and wrapping ranges are refused.
 */
bool	kinst_fbsd_kread_ok(uint64_t addr, uint64_t len, bool la57);

#endif /* !__ASSEMBLER__ */

#endif /* !KINST_FREEBSD_H */
