/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The Capstone architectures kinstctl never opens, kept out of its link.
 *
 * Capstone's static archive brings in every architecture it was built
 * with: cs_open()'s table names each one's <Arch>_global_init() and
 * <Arch>_option(), so the linker pulls each module and, with it, its
 * tables.  Those tables are pointers, which a PIE's start-up relocates
 * page by page: in Debian's 4.0.2, 1.3 MB of .data.rel.ro written at
 * every start, a megabyte of it M68K's instruction table alone.  Defined
 * here, these entry points satisfy that table, so the archive's modules
 * for the other architectures stay out; cs_open() of one of them fails
 * with CS_ERR_ARCH, which kinstctl never asks for (it opens x86-64 and
 * AArch64, disasm.cc).
 *
 * Linked only when cli/CMakeLists.txt finds that a program with these
 * definitions links against the static archive and still opens and
 * disassembles x86-64 and AArch64 (a Capstone whose internals differ
 * keeps every architecture, as before).
 */
#include <stddef.h>

#include <capstone/capstone.h>

#define	KINST_CS_ABSENT(arch)						\
	cs_err arch##_global_init(void *ud);				\
	cs_err arch##_option(void *handle, cs_opt_type type, size_t value); \
	cs_err								\
	arch##_global_init(void *ud)					\
	{								\
		(void)ud;						\
		return CS_ERR_ARCH;					\
	}								\
	cs_err								\
	arch##_option(void *handle, cs_opt_type type, size_t value)	\
	{								\
		(void)handle;						\
		(void)type;						\
		(void)value;						\
		return CS_ERR_OPTION;					\
	}

KINST_CS_ABSENT(ARM)
KINST_CS_ABSENT(EVM)
KINST_CS_ABSENT(M680X)
KINST_CS_ABSENT(M68K)
KINST_CS_ABSENT(Mips)
KINST_CS_ABSENT(PPC)
KINST_CS_ABSENT(Sparc)
KINST_CS_ABSENT(SystemZ)
KINST_CS_ABSENT(TMS320C64x)
KINST_CS_ABSENT(XCore)
