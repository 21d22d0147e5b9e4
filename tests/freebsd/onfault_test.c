/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kinst_fbsd_arms_onfault() (kmod/freebsd/kinst_freebsd.c): the pcb_onfault
 * scan on hand-assembled code modelled on each of FreeBSD 15.1's users (the
 * instruction pattern of support.S's copyin, linux_support.S's futex
 * helpers, efirt_support.S's efi_rt_arch_call and efi_rt_fault,
 * sgx_support.S's sgx_encls; see docs/freebsd.md section 5), and on the
 * near misses it must not take for an arming store.  The bytes were written
 * from the ISA and checked against GNU as; each line gives the instruction.
 * The offsets are 15.1's: pc_curpcb 0x20, pcb_onfault 0xd0.
 */
#include <atf-c.h>
#include <string.h>

#include "kinst_freebsd.h"

#define	CURPCB	KINST_FBSD_PC_CURPCB_151
#define	ONFAULT	KINST_FBSD_PCB_ONFAULT_151
_Static_assert(CURPCB == 0x20 && ONFAULT == 0xd0, "the offsets in the bytes");

/* A hand-assembled function and what the scan must answer for it. */
struct onf_case {
	const char	*name;
	const uint8_t	*code;
	size_t		len;
	bool		arms;
};
#define	ONF(n, arr, want)	{ n, arr, sizeof(arr), want }

static void
check_cases(const struct onf_case *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		ATF_CHECK_EQ_MSG(kinst_fbsd_arms_onfault(c[i].code, c[i].len,
		    CURPCB, ONFAULT), c[i].arms, "%s: want %s", c[i].name,
		    c[i].arms ? "arms" : "does not arm");
}

/* support.S's COPYIN/COPYOUT pattern: the pcb in %r11. */
static const uint8_t copyin_like[] = {
	0x65, 0x4c, 0x8b, 0x1c, 0x25, 0x20, 0, 0, 0,	/* mov %gs:0x20,%r11 */
	0x49, 0xc7, 0x83, 0xd0, 0, 0, 0,		/* movq $handler,0xd0(%r11) */
	    0x34, 0x12, 0xff, 0x80,
	0x48, 0x85, 0xd2,				/* test %rdx,%rdx */
	0x74, 0x08,					/* je 1f */
	0x0f, 0x01, 0xcb,				/* stac */
	0xf3, 0xa4,					/* rep movsb */
	0x0f, 0x01, 0xca,				/* clac */
	0x31, 0xc0,					/* 1: xor %eax,%eax */
	0x49, 0x89, 0x83, 0xd0, 0, 0, 0,		/* mov %rax,0xd0(%r11) */
	0xc3,						/* ret */
};

/* linux_support.S's futex_xchgl_smap pattern: the pcb in %r8. */
static const uint8_t futex_like[] = {
	0x65, 0x4c, 0x8b, 0x04, 0x25, 0x20, 0, 0, 0,	/* mov %gs:0x20,%r8 */
	0x49, 0xc7, 0x80, 0xd0, 0, 0, 0,		/* movq $handler,0xd0(%r8) */
	    0x40, 0x12, 0xff, 0x80,
	0x48, 0xb8, 0xfc, 0xef, 0xff, 0xff,		/* movabs $0x7fffffffeffc,%rax */
	    0xff, 0x7f, 0, 0,
	0x48, 0x39, 0xc6,				/* cmp %rax,%rsi */
	0x77, 0x13,					/* ja 2f */
	0x0f, 0x01, 0xcb,				/* stac */
	0x87, 0x3e,					/* xchg %edi,(%rsi) */
	0x0f, 0x01, 0xca,				/* clac */
	0x89, 0x3a,					/* mov %edi,(%rdx) */
	0x31, 0xc0,					/* xor %eax,%eax */
	0x49, 0x89, 0x80, 0xd0, 0, 0, 0,		/* mov %rax,0xd0(%r8) */
	0xc3,						/* 2: ret */
};

/*
 * efirt_support.S's efi_rt_arch_call pattern: the pcb loaded into %rsi
 * early, a "call panic" (which a linear walk would see clobber %rsi) that
 * the path to the store jumps over, then the store before the indirect
 * call into the runtime service.
 */
static const uint8_t efi_like[] = {
	0x55,						/* push %rbp */
	0x48, 0x89, 0xe5,				/* mov %rsp,%rbp */
	0x48, 0x89, 0x5f, 0x08,				/* mov %rbx,0x8(%rdi) */
	0x65, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0,	/* mov %gs:0x0,%rax (curthread) */
	0x48, 0x89, 0xb8, 0xa8, 0x04, 0, 0,		/* mov %rdi,0x4a8(%rax) */
	0x65, 0x48, 0x8b, 0x34, 0x25, 0x20, 0, 0, 0,	/* mov %gs:0x20,%rsi */
	0x8b, 0x4f, 0x40,				/* mov 0x40(%rdi),%ecx */
	0x83, 0xf9, 0x00,				/* cmp $0x0,%ecx */
	0x74, 0x0c,					/* je 3f */
	0x48, 0xc7, 0xc7, 0x00, 0x13, 0xff, 0x80,	/* mov $str,%rdi */
	0xe8, 0xfb, 0xff, 0xff, 0xff,			/* call panic */
	0x48, 0x8b, 0x47, 0x38,				/* 3: mov 0x38(%rdi),%rax */
	0x48, 0xc7, 0x86, 0xd0, 0, 0, 0,		/* movq $handler,0xd0(%rsi) */
	    0x40, 0x13, 0xff, 0x80,
	0xff, 0xd0,					/* call *%rax */
	0x5d,						/* pop %rbp */
	0xc3,						/* ret */
};

/* sgx_support.S's sgx_encls pattern: arm, encls, disarm with $0. */
static const uint8_t sgx_like[] = {
	0x55,						/* push %rbp */
	0x48, 0x89, 0xe5,				/* mov %rsp,%rbp */
	0x53,						/* push %rbx */
	0x65, 0x4c, 0x8b, 0x04, 0x25, 0x20, 0, 0, 0,	/* mov %gs:0x20,%r8 */
	0x89, 0xf8,					/* mov %edi,%eax */
	0x48, 0x89, 0xf3,				/* mov %rsi,%rbx */
	0x48, 0x87, 0xd1,				/* xchg %rdx,%rcx */
	0x49, 0xc7, 0x80, 0xd0, 0, 0, 0,		/* movq $handler,0xd0(%r8) */
	    0x80, 0x13, 0xff, 0x80,
	0x0f, 0x01, 0xcf,				/* encls */
	0x49, 0xc7, 0x80, 0xd0, 0, 0, 0, 0, 0, 0, 0,	/* movq $0,0xd0(%r8) */
	0x5b,						/* pop %rbx */
	0x5d,						/* pop %rbp */
	0xc3,						/* ret */
};

/*
 * efirt_support.S's efi_rt_fault (and support.S's fusufault) pattern: a
 * fresh load and a store from a register only (here zero).
 */
static const uint8_t fault_like[] = {
	0x31, 0xc0,					/* xor %eax,%eax */
	0x65, 0x48, 0x8b, 0x34, 0x25, 0x20, 0, 0, 0,	/* mov %gs:0x20,%rsi */
	0x48, 0x89, 0x86, 0xd0, 0, 0, 0,		/* mov %rax,0xd0(%rsi) */
	0xc3,						/* ret */
};

/* What a compiler could make of "curpcb->pcb_onfault = label". */
static const uint8_t c_like[] = {
	0x48, 0x8d, 0x05, 0x04, 0, 0, 0,		/* lea 0x4(%rip),%rax */
	0x65, 0x48, 0x8b, 0x0c, 0x25, 0x20, 0, 0, 0,	/* mov %gs:0x20,%rcx */
	0x48, 0x89, 0x81, 0xd0, 0, 0, 0,		/* mov %rax,0xd0(%rcx) */
	0xc3,						/* ret */
};

ATF_TC_WITHOUT_HEAD(freebsd_users);
ATF_TC_BODY(freebsd_users, tc)
{
	static const struct onf_case c[] = {
		ONF("copyin", copyin_like, true),
		ONF("futex_xchgl_smap", futex_like, true),
		ONF("efi_rt_arch_call", efi_like, true),
		ONF("sgx_encls", sgx_like, true),
		ONF("efi_rt_fault", fault_like, true),
		ONF("C store from a register", c_like, true),
	};

	check_cases(c, KINST_NELEM(c));
}

/* Other encodings of the same two instructions. */
static const uint8_t moffs_load[] = {
	0x65, 0x48, 0xa1, 0x20, 0, 0, 0, 0, 0, 0, 0,	/* movabs %gs:0x20,%rax */
	0x48, 0x89, 0x90, 0xd0, 0, 0, 0,		/* mov %rdx,0xd0(%rax) */
};
static const uint8_t sib_base[] = {
	0x65, 0x4c, 0x8b, 0x24, 0x25, 0x20, 0, 0, 0,	/* mov %gs:0x20,%r12 */
	0x49, 0x89, 0x84, 0x24, 0xd0, 0, 0, 0,		/* mov %rax,0xd0(%r12) */
};
static const uint8_t store32[] = {
	0x65, 0x4c, 0x8b, 0x04, 0x25, 0x20, 0, 0, 0,	/* mov %gs:0x20,%r8 */
	0x41, 0xc7, 0x80, 0xd0, 0, 0, 0, 1, 0, 0, 0,	/* movl $0x1,0xd0(%r8) */
};
/* 0x06 (push %es) is invalid in 64-bit mode: the walk goes on after it. */
static const uint8_t invalid_between[] = {
	0x65, 0x4c, 0x8b, 0x04, 0x25, 0x20, 0, 0, 0,	/* mov %gs:0x20,%r8 */
	0x06,						/* (invalid) */
	0x49, 0x89, 0x80, 0xd0, 0, 0, 0,		/* mov %rax,0xd0(%r8) */
};

ATF_TC_WITHOUT_HEAD(encodings);
ATF_TC_BODY(encodings, tc)
{
	static const struct onf_case c[] = {
		ONF("moffs load into %rax", moffs_load, true),
		ONF("SIB base %r12", sib_base, true),
		ONF("4-byte immediate store", store32, true),
		ONF("invalid byte between", invalid_between, true),
	};

	check_cases(c, KINST_NELEM(c));
}

/* The offsets are the caller's: disp8 forms with other offsets. */
ATF_TC_WITHOUT_HEAD(offsets_are_parameters);
ATF_TC_BODY(offsets_are_parameters, tc)
{
	static const uint8_t disp8[] = {
		0x65, 0x4c, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0,	/* mov %gs:0x28,%r8 */
		0x49, 0xc7, 0x40, 0x40, 1, 0, 0, 0,	/* movq $0x1,0x40(%r8) */
	};

	ATF_CHECK(kinst_fbsd_arms_onfault(disp8, sizeof(disp8), 0x28, 0x40));
	ATF_CHECK(!kinst_fbsd_arms_onfault(disp8, sizeof(disp8), 0x20, 0x40));
	ATF_CHECK(!kinst_fbsd_arms_onfault(disp8, sizeof(disp8), 0x28, 0x48));
	ATF_CHECK(!kinst_fbsd_arms_onfault(copyin_like, sizeof(copyin_like),
	    0x28, ONFAULT));
	ATF_CHECK(!kinst_fbsd_arms_onfault(copyin_like, sizeof(copyin_like),
	    CURPCB, 0xd8));
}

/* The near misses: each of these must not count as arming. */
static const uint8_t other_reg[] = {
	0x65, 0x4c, 0x8b, 0x04, 0x25, 0x20, 0, 0, 0,	/* mov %gs:0x20,%r8 */
	0x49, 0xc7, 0x81, 0xd0, 0, 0, 0, 1, 0, 0, 0,	/* movq $0x1,0xd0(%r9) */
};
static const uint8_t store_before_load[] = {
	0x49, 0xc7, 0x80, 0xd0, 0, 0, 0, 1, 0, 0, 0,	/* movq $0x1,0xd0(%r8) */
	0x65, 0x4c, 0x8b, 0x04, 0x25, 0x20, 0, 0, 0,	/* mov %gs:0x20,%r8 */
};
static const uint8_t other_pcpu_field[] = {
	0x65, 0x4c, 0x8b, 0x04, 0x25, 0, 0, 0, 0,	/* mov %gs:0x0,%r8 (curthread) */
	0x49, 0xc7, 0x80, 0xd0, 0, 0, 0, 1, 0, 0, 0,	/* movq $0x1,0xd0(%r8) */
};
/* rdmsr_safe saves the old handler this way before it stores its own. */
static const uint8_t load_not_store[] = {
	0x65, 0x4c, 0x8b, 0x04, 0x25, 0x20, 0, 0, 0,	/* mov %gs:0x20,%r8 */
	0x4d, 0x8b, 0x88, 0xd0, 0, 0, 0,		/* mov 0xd0(%r8),%r9 */
};
static const uint8_t not_gs[] = {
	0x4c, 0x8b, 0x04, 0x25, 0x20, 0, 0, 0,		/* mov 0x20,%r8 */
	0x64, 0x4c, 0x8b, 0x0c, 0x25, 0x20, 0, 0, 0,	/* mov %fs:0x20,%r9 */
	0x49, 0xc7, 0x80, 0xd0, 0, 0, 0, 1, 0, 0, 0,	/* movq $0x1,0xd0(%r8) */
	0x49, 0xc7, 0x81, 0xd0, 0, 0, 0, 1, 0, 0, 0,	/* movq $0x1,0xd0(%r9) */
};
static const uint8_t other_disp[] = {
	0x65, 0x4c, 0x8b, 0x04, 0x25, 0x20, 0, 0, 0,	/* mov %gs:0x20,%r8 */
	0x49, 0xc7, 0x80, 0xd8, 0, 0, 0, 1, 0, 0, 0,	/* movq $0x1,0xd8(%r8) */
};
static const uint8_t indexed[] = {
	0x65, 0x4c, 0x8b, 0x04, 0x25, 0x20, 0, 0, 0,	/* mov %gs:0x20,%r8 */
	0x49, 0x89, 0x84, 0x08, 0xd0, 0, 0, 0,		/* mov %rax,0xd0(%r8,%rcx,1) */
};
static const uint8_t narrow[] = {
	0x65, 0x4c, 0x8b, 0x04, 0x25, 0x20, 0, 0, 0,	/* mov %gs:0x20,%r8 */
	0x66, 0x41, 0x89, 0x80, 0xd0, 0, 0, 0,		/* mov %ax,0xd0(%r8) */
	0x41, 0xc6, 0x80, 0xd0, 0, 0, 0, 0,		/* movb $0x0,0xd0(%r8) */
};
/* mod 00 rm 101 is RIP-relative, SIB base 101 with mod 00 has no base. */
static const uint8_t no_base[] = {
	0x65, 0x48, 0x8b, 0x2c, 0x25, 0x20, 0, 0, 0,	/* mov %gs:0x20,%rbp */
	0x48, 0x89, 0x05, 0xd0, 0, 0, 0,		/* mov %rax,0xd0(%rip) */
	0x48, 0x89, 0x04, 0x25, 0xd0, 0, 0, 0,		/* mov %rax,0xd0 */
};
/* copyin_like cut just before its first store's last byte. */
#define	COPYIN_TRUNC	(9 + 10)

ATF_TC_WITHOUT_HEAD(near_misses);
ATF_TC_BODY(near_misses, tc)
{
	static const struct onf_case c[] = {
		ONF("store through another register", other_reg, false),
		ONF("store before the load", store_before_load, false),
		ONF("%gs load of another pcpu field", other_pcpu_field, false),
		ONF("load of pcb_onfault", load_not_store, false),
		ONF("load without %gs", not_gs, false),
		ONF("store to another member", other_disp, false),
		ONF("store with an index", indexed, false),
		ONF("2- and 1-byte stores", narrow, false),
		ONF("RIP-relative or absolute store", no_base, false),
	};

	check_cases(c, KINST_NELEM(c));
	/* A truncated store is not decoded, so not seen. */
	ATF_CHECK(!kinst_fbsd_arms_onfault(copyin_like, COPYIN_TRUNC, CURPCB,
	    ONFAULT));
	ATF_CHECK(kinst_fbsd_arms_onfault(copyin_like, COPYIN_TRUNC + 1,
	    CURPCB, ONFAULT));
	ATF_CHECK(!kinst_fbsd_arms_onfault(copyin_like, 0, CURPCB, ONFAULT));
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, freebsd_users);
	ATF_TP_ADD_TC(tp, encodings);
	ATF_TP_ADD_TC(tp, offsets_are_parameters);
	ATF_TP_ADD_TC(tp, near_misses);
	return (atf_no_error());
}
