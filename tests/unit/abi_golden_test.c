/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The ABI, pinned (issue 45).  Everything common/kinst_abi.h puts on the
 * boundary between the module and kinstctl -- every structure's size and
 * every field's offset and size, every ioctl number, every value a field
 * carries -- against numbers written here by hand from the documented
 * layout (kinst(4) ABI LAYOUT, docs/engine.md "ABI"), never computed from
 * the header.  A change that moves a byte, grows a structure (and so
 * changes the ioctl number that encodes its size), renumbers a code or
 * steps the version fails here, so it has to be a deliberate edit of this
 * file too; a kinstctl and a module of different 1.x minors talk only
 * while nothing here changes except by addition.
 *
 * Each structure's fields must also tile it: the hand-written offsets and
 * sizes run from 0 to its size without a gap, so a field (or padding the
 * compiler inserted) that the list misses fails as well.
 */
#include <sys/ioctl.h>

#include <atf-c.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kinst_abi.h"
#include "x86/kinst_classify.h"

/* ---- checking helpers: every failure says expected and got ---- */

#define	PIN(what, got, want)	pin_value(__LINE__, (what),		\
	(unsigned long long)(got), (unsigned long long)(want))

static void
pin_value(int line, const char *what, unsigned long long got,
    unsigned long long want)
{
	ATF_CHECK_MSG(got == want, "line %d: %s: expected %llu (%#llx), got "
	    "%llu (%#llx)", line, what, want, want, got, got);
}

/*
 * One field: its offset and size as the header has them (got_*) and as
 * written here (off, size).
 */
struct field {
	const char	*name;
	size_t		got_off;
	size_t		got_size;
	size_t		off;
	size_t		size;
};

#define	F(type, member, o, s)	{ #member,				\
	offsetof(struct type, member),					\
	sizeof(((struct type *)0)->member), (o), (s) }

static void
pin_struct(const char *name, size_t got_size, size_t size,
    const struct field *f, size_t n)
{
	size_t i, end;

	ATF_CHECK_MSG(got_size == size, "sizeof(struct %s): expected %zu, "
	    "got %zu", name, size, got_size);
	end = 0;
	for (i = 0; i < n; i++) {
		ATF_CHECK_MSG(f[i].got_off == f[i].off, "offsetof(struct %s, "
		    "%s): expected %zu, got %zu", name, f[i].name, f[i].off,
		    f[i].got_off);
		ATF_CHECK_MSG(f[i].got_size == f[i].size, "sizeof(struct %s."
		    "%s): expected %zu, got %zu", name, f[i].name, f[i].size,
		    f[i].got_size);
		/* The test's own table: fields back to back, no gap. */
		ATF_CHECK_MSG(f[i].off == end, "struct %s: the test's layout "
		    "has a gap or overlap before %s (at %zu, previous field "
		    "ends at %zu)", name, f[i].name, f[i].off, end);
		end = f[i].off + f[i].size;
	}
	ATF_CHECK_MSG(end == size, "struct %s: the test's fields end at %zu, "
	    "the structure at %zu", name, end, size);
}

#define	PIN_STRUCT(type, size, ...) do {				\
	static const struct field fields_[] = { __VA_ARGS__ };		\
	pin_struct(#type, sizeof(struct type), (size), fields_,		\
	    sizeof(fields_) / sizeof(fields_[0]));			\
} while (0)

/* ---- the version ---- */

/*
 * kinst(4) IOCTLS: "major 1, minor 15".  A new minor is a deliberate edit
 * here (and in kinst(4), docs/engine.md and kinstctl's feature table).
 */
ATF_TC_WITHOUT_HEAD(version);
ATF_TC_BODY(version, tc)
{
	PIN("KINST_ABI_VERSION_MAJOR", KINST_ABI_VERSION_MAJOR, 1);
	PIN("KINST_ABI_VERSION_MINOR", KINST_ABI_VERSION_MINOR, 15);
	PIN("KINST_ABI_VERSION", KINST_ABI_VERSION, 0x0001000f);
}

/* ---- records: what read(2) and the mapped rings carry ---- */

/*
 * docs/engine.md "ABI": the register file (gpr[16] in x86 order, rip,
 * rflags, cs, ss: 152 bytes), the record header (size, type, flags), the
 * fixed hit record (208 bytes), a section header (uint16 type, uint16
 * flags, uint32 len) and the capture and sample payloads
 * (uint64 addr, uint32 index, uint32 size; uint64 key[2], uint64 value).
 * Offsets and types of the register file's and the hit record's fields:
 * kinst(4) ABI LAYOUT (engine.md names them only in order).
 */
ATF_TC_WITHOUT_HEAD(records);
ATF_TC_BODY(records, tc)
{
	PIN_STRUCT(kinst_regs, 152,
	    F(kinst_regs, gpr, 0, 128),
	    F(kinst_regs, rip, 128, 8),
	    F(kinst_regs, rflags, 136, 8),
	    F(kinst_regs, cs, 144, 2),
	    F(kinst_regs, ss, 146, 2),
	    F(kinst_regs, _pad, 148, 4));
	/* gpr[] is indexed by x86 register number. */
	PIN("KINST_RAX", KINST_RAX, 0);
	PIN("KINST_RCX", KINST_RCX, 1);
	PIN("KINST_RDX", KINST_RDX, 2);
	PIN("KINST_RBX", KINST_RBX, 3);
	PIN("KINST_RSP", KINST_RSP, 4);
	PIN("KINST_RBP", KINST_RBP, 5);
	PIN("KINST_RSI", KINST_RSI, 6);
	PIN("KINST_RDI", KINST_RDI, 7);
	PIN("KINST_R8", KINST_R8, 8);
	PIN("KINST_R9", KINST_R9, 9);
	PIN("KINST_R10", KINST_R10, 10);
	PIN("KINST_R11", KINST_R11, 11);
	PIN("KINST_R12", KINST_R12, 12);
	PIN("KINST_R13", KINST_R13, 13);
	PIN("KINST_R14", KINST_R14, 14);
	PIN("KINST_R15", KINST_R15, 15);
	PIN("KINST_NGPR", KINST_NGPR, 16);

	PIN_STRUCT(kinst_rec_hdr, 8,
	    F(kinst_rec_hdr, size, 0, 4),
	    F(kinst_rec_hdr, type, 4, 2),
	    F(kinst_rec_hdr, flags, 6, 2));
	PIN("KINST_REC_PAD", KINST_REC_PAD, 0);
	PIN("KINST_REC_HIT", KINST_REC_HIT, 1);

	PIN("KINST_COMM_LEN", KINST_COMM_LEN, 16);
	PIN_STRUCT(kinst_hit_record, 208,
	    F(kinst_hit_record, hdr, 0, 8),
	    F(kinst_hit_record, cpu, 8, 4),
	    F(kinst_hit_record, probe_id, 12, 4),
	    F(kinst_hit_record, timestamp_ns, 16, 8),
	    F(kinst_hit_record, addr, 24, 8),
	    F(kinst_hit_record, pid, 32, 4),
	    F(kinst_hit_record, tid, 36, 4),
	    F(kinst_hit_record, comm, 40, 16),
	    F(kinst_hit_record, regs, 56, 152));
}

/* docs/engine.md "ABI": the section header, types 1-5, flags 1-16. */
ATF_TC_WITHOUT_HEAD(sections);
ATF_TC_BODY(sections, tc)
{
	PIN_STRUCT(kinst_rec_sec, 8,
	    F(kinst_rec_sec, type, 0, 2),
	    F(kinst_rec_sec, flags, 2, 2),
	    F(kinst_rec_sec, len, 4, 4));
	PIN("KINST_SEC_STACK", KINST_SEC_STACK, 1);
	PIN("KINST_SEC_MEM", KINST_SEC_MEM, 2);
	PIN("KINST_SEC_STR", KINST_SEC_STR, 3);
	PIN("KINST_SEC_VAL", KINST_SEC_VAL, 4);
	PIN("KINST_SEC_AGG", KINST_SEC_AGG, 5);
	PIN("KINST_SECF_TRUNCATED", KINST_SECF_TRUNCATED, 0x0001);
	PIN("KINST_SECF_FAULT", KINST_SECF_FAULT, 0x0002);
	PIN("KINST_SECF_DEREF", KINST_SECF_DEREF, 0x0004);
	PIN("KINST_SECF_NOSTATE", KINST_SECF_NOSTATE, 0x0008);
	PIN("KINST_SECF_OVERFLOW", KINST_SECF_OVERFLOW, 0x0010);
	PIN("KINST_STACK_MAX", KINST_STACK_MAX, 64);

	/* The payload of MEM, STR and VAL sections. */
	PIN_STRUCT(kinst_rec_cap, 16,
	    F(kinst_rec_cap, addr, 0, 8),
	    F(kinst_rec_cap, index, 8, 4),
	    F(kinst_rec_cap, size, 12, 4));
	/* The payload of an AGG section (1.14). */
	PIN_STRUCT(kinst_rec_agg, 24,
	    F(kinst_rec_agg, key, 0, 16),
	    F(kinst_rec_agg, value, 16, 8));
}

/*
 * The mapped ring (1.12).  kinst(4) MMAP names head and tail; the offsets,
 * the page and the stride are in kinst(4) ABI LAYOUT (the docs lacked them
 * before this test: written from the header).
 */
ATF_TC_WITHOUT_HEAD(ring_ctl);
ATF_TC_BODY(ring_ctl, tc)
{
	PIN_STRUCT(kinst_ring_ctl, 128,
	    F(kinst_ring_ctl, head, 0, 8),
	    F(kinst_ring_ctl, size, 8, 4),
	    F(kinst_ring_ctl, cpu, 12, 4),
	    F(kinst_ring_ctl, _pad0, 16, 48),
	    F(kinst_ring_ctl, tail, 64, 8),
	    F(kinst_ring_ctl, _pad1, 72, 56));
	PIN("KINST_MAP_PAGE", KINST_MAP_PAGE, 4096);
	PIN("KINST_MAP_STRIDE", KINST_MAP_STRIDE, 0x8000000);
	PIN("KINST_MAP_CTL(0)", KINST_MAP_CTL(0), 0);
	PIN("KINST_MAP_DATA(0)", KINST_MAP_DATA(0), 0x1000);
	PIN("KINST_MAP_CTL(3)", KINST_MAP_CTL(3), 0x18000000);
	PIN("KINST_MAP_DATA(3)", KINST_MAP_DATA(3), 0x18001000);
}

/* ---- ioctl arguments ---- */

/*
 * VERSION, ARM, DISARM, LIST (and its elements), STATS (and its
 * elements), TEXT, FILTER.  The docs lacked these layouts before this
 * test (kinst(4) IOCTLS names the fields, not where they are): written
 * from the header, now in kinst(4) ABI LAYOUT.
 */
ATF_TC_WITHOUT_HEAD(probes);
ATF_TC_BODY(probes, tc)
{
	PIN("KINST_NAME_MAX", KINST_NAME_MAX, 128);
	PIN("KINST_MODNAME_MAX", KINST_MODNAME_MAX, 64);
	PIN("KINST_MAX_PROBES", KINST_MAX_PROBES, 8192);
	PIN("KINST_STATS_MAXCPU", KINST_STATS_MAXCPU, 256);

	PIN_STRUCT(kinst_version, 16,
	    F(kinst_version, abi_version, 0, 4),
	    F(kinst_version, max_probes, 4, 4),
	    F(kinst_version, ncpus, 8, 4),
	    F(kinst_version, record_size, 12, 4));

	/* 248 bytes since 1.0 (prog_id was _pad before 1.5). */
	PIN_STRUCT(kinst_arm, 248,
	    F(kinst_arm, module, 0, 64),
	    F(kinst_arm, function, 64, 128),
	    F(kinst_arm, offset, 192, 4),
	    F(kinst_arm, flags, 196, 4),
	    F(kinst_arm, probe_id, 200, 4),
	    F(kinst_arm, narmed, 204, 4),
	    F(kinst_arm, nrefused, 208, 4),
	    F(kinst_arm, refuse_reason, 212, 4),
	    F(kinst_arm, addr, 216, 8),
	    F(kinst_arm, insn, 224, 16),
	    F(kinst_arm, insn_len, 240, 4),
	    F(kinst_arm, prog_id, 244, 4));
	PIN("KINST_ARM_ALL", KINST_ARM_ALL, 0x0001);
	PIN("KINST_ARM_CHECK", KINST_ARM_CHECK, 0x0002);
	PIN("KINST_ARM_STACK", KINST_ARM_STACK, 0x0004);
	PIN("KINST_ARM_PROG", KINST_ARM_PROG, 0x0010);
	PIN("KINST_ARM_AGG", KINST_ARM_AGG, 0x0020);
	PIN("KINST_ARM_NOOPT", KINST_ARM_NOOPT, 0x0040);

	PIN_STRUCT(kinst_disarm, 8,
	    F(kinst_disarm, probe_id, 0, 4),
	    F(kinst_disarm, ndisarmed, 4, 4));
	PIN("KINST_ALL_PROBES", KINST_ALL_PROBES, 0xffffffff);

	/* 240 bytes since 1.0: LIST's elements. */
	PIN_STRUCT(kinst_probe_info, 240,
	    F(kinst_probe_info, probe_id, 0, 4),
	    F(kinst_probe_info, offset, 4, 4),
	    F(kinst_probe_info, addr, 8, 8),
	    F(kinst_probe_info, hits, 16, 8),
	    F(kinst_probe_info, module, 24, 64),
	    F(kinst_probe_info, function, 88, 128),
	    F(kinst_probe_info, insn, 216, 16),
	    F(kinst_probe_info, insn_len, 232, 4),
	    F(kinst_probe_info, treatment, 236, 4));
	/* treatment: the low 16 bits, JUMP bit 16, sessions 20-25, 26-31. */
	PIN("KINST_PI_TREATMENT", KINST_PI_TREATMENT, 0xffff);
	PIN("KINST_PI_JUMP", KINST_PI_JUMP, 0x10000);
	PIN("KINST_PI_MK_SESSIONS(1, 0)", KINST_PI_MK_SESSIONS(1, 0),
	    0x00100000);
	PIN("KINST_PI_MK_SESSIONS(0, 1)", KINST_PI_MK_SESSIONS(0, 1),
	    0x04000000);
	PIN("KINST_PI_MK_SESSIONS(63, 63)", KINST_PI_MK_SESSIONS(63, 63),
	    0xfff00000);
	PIN("KINST_PI_SESSIONS(0xfe3fffff)", KINST_PI_SESSIONS(0xfe3fffffu),
	    0x23);
	PIN("KINST_PI_SESSIONS_MAX(0xfe3fffff)",
	    KINST_PI_SESSIONS_MAX(0xfe3fffffu), 0x3f);
	PIN("KINST_T_NONE", KINST_T_NONE, 0);
	PIN("KINST_T_OOL", KINST_T_OOL, 1);
	PIN("KINST_T_OOL_RIPREL", KINST_T_OOL_RIPREL, 2);
	PIN("KINST_T_EMULATE", KINST_T_EMULATE, 3);
	PIN("KINST_T_REFUSE", KINST_T_REFUSE, 4);

	PIN_STRUCT(kinst_list, 16,
	    F(kinst_list, buf, 0, 8),
	    F(kinst_list, cap, 8, 4),
	    F(kinst_list, count, 12, 4));

	PIN_STRUCT(kinst_cpu_stats, 24,
	    F(kinst_cpu_stats, hits, 0, 8),
	    F(kinst_cpu_stats, delivered, 8, 8),
	    F(kinst_cpu_stats, dropped, 16, 8));
	PIN_STRUCT(kinst_stats, 32,
	    F(kinst_stats, buf, 0, 8),
	    F(kinst_stats, cap, 8, 4),
	    F(kinst_stats, ncpus, 12, 4),
	    F(kinst_stats, refusals, 16, 8),
	    F(kinst_stats, nprobes, 24, 8));

	PIN_STRUCT(kinst_text, 216,
	    F(kinst_text, module, 0, 64),
	    F(kinst_text, function, 64, 128),
	    F(kinst_text, buf, 192, 8),
	    F(kinst_text, cap, 200, 4),
	    F(kinst_text, size, 204, 4),
	    F(kinst_text, addr, 208, 8));

	PIN_STRUCT(kinst_filter, 16,
	    F(kinst_filter, pid, 0, 4),
	    F(kinst_filter, cpu, 4, 4),
	    F(kinst_filter, exclude_pid, 8, 4),
	    F(kinst_filter, flags, 12, 4));
}

/*
 * Refusal codes: kinst_arm.refuse_reason carries them, and kinstctl names
 * them with its own table (the names are its JSON), so a module and a
 * kinstctl must agree on every number.  kinstctl(8) REFUSAL REASONS and
 * docs/engine.md list the names, not the numbers: the numbers are in
 * kinst(4) ABI LAYOUT (written from common/kinst_verdict.h).
 */
ATF_TC_WITHOUT_HEAD(refusals);
ATF_TC_BODY(refusals, tc)
{
	static const struct {
		const char	*macro;
		int		got;
		int		code;
		const char	*name;
	} r[] = {
#define	R(m, c, n)	{ #m, m, c, n }
		R(KINST_R_NONE, 0, "none"),
		R(KINST_R_UNDECODABLE, 1, "undecodable"),
		R(KINST_R_INT3, 2, "int3"),
		R(KINST_R_INT, 3, "interrupt"),
		R(KINST_R_IRET, 4, "iret"),
		R(KINST_R_SYSTEM_ENTRY, 5, "syscall-sysret"),
		R(KINST_R_FAR, 6, "far-transfer"),
		R(KINST_R_SWAPGS, 7, "swapgs"),
		R(KINST_R_XBEGIN, 8, "xbegin"),
		R(KINST_R_UD, 9, "undefined-opcode"),
		R(KINST_R_HALT, 10, "halt"),
		R(KINST_R_MOV_SS, 11, "ss-load"),
		R(KINST_R_BRANCH_OPSIZE, 12, "branch-operand-size"),
		R(KINST_R_SEGMENT, 13, "segment-override"),
		R(KINST_R_VMENTRY, 14, "vm-entry"),
		R(KINST_R_RIPREL_RANGE, 15, "riprel-out-of-range"),
		R(KINST_R_FIXUP, 16, "exception-fixup"),
		R(KINST_R_ONFAULT, 17, "onfault-function"),
		R(KINST_R_EXCLUDED, 18, "excluded-function"),
		R(KINST_R_TEXT_PATCHED, 19, "text-patched"),
		R(KINST_R_STI_SHADOW, 20, "sti-shadow"),
		R(KINST_R_ENDBR, 21, "endbr"),
		R(KINST_R_TRAP_PATH, 22, "excluded-function (trap path)"),
		R(KINST_R_CPU_BRINGUP, 23, "excluded-function (cpu bring-up)"),
		R(KINST_R_SHARED_FULL, 24, "shared-by-too-many"),
		R(KINST_R_EXCL_SELF, 25, "excluded-function (kinst itself)"),
		R(KINST_R_EXCL_ENTRY, 26, "excluded-function (entry code)"),
		R(KINST_R_EXCL_NOINSTR, 27,
		    "excluded-function (noinstr: NMI and exception entry)"),
		R(KINST_R_EXCL_IDLE, 28,
		    "excluded-function (idle with interrupts off)"),
		R(KINST_R_EXCL_BLACKLIST, 29,
		    "excluded-function (kprobe blacklist)"),
		R(KINST_R_EXCL_THUNK, 30,
		    "excluded-function (thunks and static calls)"),
		R(KINST_R_EXCL_BREAKPOINT, 31,
		    "excluded-function (breakpoint path)"),
		R(KINST_R_EXCL_DEBUGGER, 32,
		    "excluded-function (oops and debugger)"),
		R(KINST_R_EXCL_HANDLER, 33,
		    "excluded-function (called by kinst's handler)"),
		R(KINST_R_EXCL_FAULT, 34,
		    "excluded-function (page-fault path of a no-fault read)"),
		R(KINST_R_EXCL_PATCHING, 35,
		    "excluded-function (text patching)"),
		R(KINST_R_EXCL_SCHED, 36,
		    "excluded-function (context switch)"),
		R(KINST_R_EXCLUSIVE, 37, "exclusive-monitor"),
		R(KINST_R_SYSREG_WRITE, 38, "system-register-write"),
		R(KINST_R_EXC_GEN, 39, "exception-generating"),
		R(KINST_R_ERET, 40, "exception-return"),
		R(KINST_R_EXC_STATE_READ, 41, "exception-state-read"),
#undef R
	};
	size_t i;

	for (i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		PIN(r[i].macro, r[i].got, r[i].code);
		/* KINST_R_NONE has no name of its own in the table. */
		if (r[i].code == 0)
			continue;
		ATF_CHECK_MSG(strcmp(kinst_reason_name(r[i].code),
		    r[i].name) == 0, "refusal %d: expected name \"%s\", got "
		    "\"%s\"", r[i].code, r[i].name,
		    kinst_reason_name(r[i].code));
	}
	/* One past the last: a new code is a deliberate edit here too. */
	PIN("KINST_R_COUNT", KINST_R_COUNT, 42);
	ATF_CHECK_STREQ(kinst_reason_name(42), "unknown");
}

/*
 * Probe programs (1.5): the instruction (docs/engine.md: 16 bytes, op,
 * arg, off, _pad, imm), PROG_LOAD and PROG_STATS and its elements (the
 * docs lacked these two layouts: written from the header, now in kinst(4)
 * ABI LAYOUT), the opcodes, registers, context items and verdicts (their
 * numbers: written from the header's enums, which count from the first).
 */
ATF_TC_WITHOUT_HEAD(programs);
ATF_TC_BODY(programs, tc)
{
	PIN_STRUCT(kinst_pinsn, 16,
	    F(kinst_pinsn, op, 0, 1),
	    F(kinst_pinsn, arg, 1, 1),
	    F(kinst_pinsn, off, 2, 2),
	    F(kinst_pinsn, _pad, 4, 4),
	    F(kinst_pinsn, imm, 8, 8));
	PIN_STRUCT(kinst_prog_load, 32,
	    F(kinst_prog_load, insns, 0, 8),
	    F(kinst_prog_load, ninsns, 8, 4),
	    F(kinst_prog_load, flags, 12, 4),
	    F(kinst_prog_load, prog_id, 16, 4),
	    F(kinst_prog_load, verdict, 20, 4),
	    F(kinst_prog_load, error_pc, 24, 4),
	    F(kinst_prog_load, _pad, 28, 4));
	PIN_STRUCT(kinst_prog_cpu_stats, 16,
	    F(kinst_prog_cpu_stats, filtered, 0, 8),
	    F(kinst_prog_cpu_stats, faults, 8, 8));
	PIN_STRUCT(kinst_prog_stats, 16,
	    F(kinst_prog_stats, buf, 0, 8),
	    F(kinst_prog_stats, cap, 8, 4),
	    F(kinst_prog_stats, ncpus, 12, 4));

	PIN("KINST_OP_IMM", KINST_OP_IMM, 1);
	PIN("KINST_OP_REG", KINST_OP_REG, 2);
	PIN("KINST_OP_CTX", KINST_OP_CTX, 3);
	PIN("KINST_OP_LOAD", KINST_OP_LOAD, 4);
	PIN("KINST_OP_ADD", KINST_OP_ADD, 5);
	PIN("KINST_OP_SUB", KINST_OP_SUB, 6);
	PIN("KINST_OP_MUL", KINST_OP_MUL, 7);
	PIN("KINST_OP_AND", KINST_OP_AND, 8);
	PIN("KINST_OP_OR", KINST_OP_OR, 9);
	PIN("KINST_OP_XOR", KINST_OP_XOR, 10);
	PIN("KINST_OP_SHL", KINST_OP_SHL, 11);
	PIN("KINST_OP_SHR", KINST_OP_SHR, 12);
	PIN("KINST_OP_EQ", KINST_OP_EQ, 13);
	PIN("KINST_OP_NE", KINST_OP_NE, 14);
	PIN("KINST_OP_LTU", KINST_OP_LTU, 15);
	PIN("KINST_OP_LEU", KINST_OP_LEU, 16);
	PIN("KINST_OP_GTU", KINST_OP_GTU, 17);
	PIN("KINST_OP_GEU", KINST_OP_GEU, 18);
	PIN("KINST_OP_LTS", KINST_OP_LTS, 19);
	PIN("KINST_OP_LES", KINST_OP_LES, 20);
	PIN("KINST_OP_GTS", KINST_OP_GTS, 21);
	PIN("KINST_OP_GES", KINST_OP_GES, 22);
	PIN("KINST_OP_LNOT", KINST_OP_LNOT, 23);
	PIN("KINST_OP_NEG", KINST_OP_NEG, 24);
	PIN("KINST_OP_BNOT", KINST_OP_BNOT, 25);
	PIN("KINST_OP_JA", KINST_OP_JA, 26);
	PIN("KINST_OP_JZ", KINST_OP_JZ, 27);
	PIN("KINST_OP_JNZ", KINST_OP_JNZ, 28);
	PIN("KINST_OP_RET", KINST_OP_RET, 29);
	PIN("KINST_OP_KEY", KINST_OP_KEY, 30);		/* 1.6 */
	PIN("KINST_OP_VALUE", KINST_OP_VALUE, 31);	/* 1.6 */
	PIN("KINST_OP_MEM", KINST_OP_MEM, 32);		/* 1.7 */
	PIN("KINST_OP_STR", KINST_OP_STR, 33);		/* 1.7 */
	PIN("KINST_OP_LOADC", KINST_OP_LOADC, 34);	/* 1.7 */
	PIN("KINST_OP_TS_PUSH", KINST_OP_TS_PUSH, 35);	/* 1.10 */
	PIN("KINST_OP_TS_GET", KINST_OP_TS_GET, 36);	/* 1.10 */
	PIN("KINST_OP_VAL", KINST_OP_VAL, 37);		/* 1.10 */
	PIN("KINST_OP_COUNT_", KINST_OP_COUNT_, 38);

	PIN("KINST_PREG_RIP", KINST_PREG_RIP, 16);
	PIN("KINST_PREG_RFLAGS", KINST_PREG_RFLAGS, 17);
	PIN("KINST_PREG_COUNT", KINST_PREG_COUNT, 18);
	PIN("KINST_PCTX_PID", KINST_PCTX_PID, 0);
	PIN("KINST_PCTX_TID", KINST_PCTX_TID, 1);
	PIN("KINST_PCTX_CPU", KINST_PCTX_CPU, 2);
	PIN("KINST_PCTX_COMM0", KINST_PCTX_COMM0, 3);
	PIN("KINST_PCTX_COMM8", KINST_PCTX_COMM8, 4);
	PIN("KINST_PCTX_COUNT", KINST_PCTX_COUNT, 5);

	PIN("KINST_PV_OK", KINST_PV_OK, 0);
	PIN("KINST_PV_EMPTY", KINST_PV_EMPTY, 1);
	PIN("KINST_PV_TOO_LONG", KINST_PV_TOO_LONG, 2);
	PIN("KINST_PV_BAD_OP", KINST_PV_BAD_OP, 3);
	PIN("KINST_PV_BAD_ARG", KINST_PV_BAD_ARG, 4);
	PIN("KINST_PV_NONZERO", KINST_PV_NONZERO, 5);
	PIN("KINST_PV_JUMP_BACK", KINST_PV_JUMP_BACK, 6);
	PIN("KINST_PV_JUMP_OUT", KINST_PV_JUMP_OUT, 7);
	PIN("KINST_PV_UNDERFLOW", KINST_PV_UNDERFLOW, 8);
	PIN("KINST_PV_OVERFLOW", KINST_PV_OVERFLOW, 9);
	PIN("KINST_PV_MISMATCH", KINST_PV_MISMATCH, 10);
	PIN("KINST_PV_UNREACHABLE", KINST_PV_UNREACHABLE, 11);
	PIN("KINST_PV_FALL_OFF", KINST_PV_FALL_OFF, 12);
	PIN("KINST_PV_RET_DEPTH", KINST_PV_RET_DEPTH, 13);
	PIN("KINST_PV_TOO_MANY_LOADS", KINST_PV_TOO_MANY_LOADS, 14);
	PIN("KINST_PV_CAP_LEN", KINST_PV_CAP_LEN, 15);
	PIN("KINST_PV_TOO_MANY_CAPS", KINST_PV_TOO_MANY_CAPS, 16);
	PIN("KINST_PV_CAP_BYTES", KINST_PV_CAP_BYTES, 17);
	PIN("KINST_PV_COUNT_", KINST_PV_COUNT_, 18);

	/* Limits kinst(4) states (PROG_LOAD, captures). */
	PIN("KINST_PROG_MAX_INSNS", KINST_PROG_MAX_INSNS, 256);
	PIN("KINST_PROG_STACK", KINST_PROG_STACK, 16);
	PIN("KINST_PROG_MAX_LOADS", KINST_PROG_MAX_LOADS, 32);
	PIN("KINST_PROG_MAX", KINST_PROG_MAX, 16);
	PIN("KINST_CAP_MAX", KINST_CAP_MAX, 8);
	PIN("KINST_CAP_MEM_MAX", KINST_CAP_MEM_MAX, 512);
	PIN("KINST_CAP_STR_MAX", KINST_CAP_STR_MAX, 256);
	PIN("KINST_CAP_MAX_BYTES", KINST_CAP_MAX_BYTES, 2048);
}

/*
 * Aggregation (1.6; stacks 1.8, sample records 1.14): AGG_SETUP, AGG_READ
 * and its entries (56 bytes, then nbuckets uint64 counters), AGG_STACKS'
 * elements (kinst(4): hash, frame count, flags, 64 frames), AGG_STATS and
 * its elements, AGG_CLEAR.  The docs lacked these layouts before this test
 * (written from the header, now in kinst(4) ABI LAYOUT).
 */
ATF_TC_WITHOUT_HEAD(aggregation);
ATF_TC_BODY(aggregation, tc)
{
	PIN_STRUCT(kinst_agg_setup, 48,
	    F(kinst_agg_setup, kind, 0, 4),
	    F(kinst_agg_setup, flags, 4, 4),
	    F(kinst_agg_setup, nslots, 8, 4),
	    F(kinst_agg_setup, nbuckets, 12, 4),
	    F(kinst_agg_setup, lin_min, 16, 8),
	    F(kinst_agg_setup, lin_max, 24, 8),
	    F(kinst_agg_setup, lin_step, 32, 8),
	    F(kinst_agg_setup, entry_size, 40, 4),
	    F(kinst_agg_setup, nstacks, 44, 4));
	PIN_STRUCT(kinst_agg_entry, 56,
	    F(kinst_agg_entry, key, 0, 16),
	    F(kinst_agg_entry, probe_id, 16, 4),
	    F(kinst_agg_entry, _pad, 20, 4),
	    F(kinst_agg_entry, count, 24, 8),
	    F(kinst_agg_entry, sum, 32, 8),
	    F(kinst_agg_entry, min, 40, 8),
	    F(kinst_agg_entry, max, 48, 8));
	PIN_STRUCT(kinst_agg_read, 24,
	    F(kinst_agg_read, buf, 0, 8),
	    F(kinst_agg_read, cap, 8, 4),
	    F(kinst_agg_read, cpu, 12, 4),
	    F(kinst_agg_read, count, 16, 4),
	    F(kinst_agg_read, flags, 20, 4));
	PIN_STRUCT(kinst_agg_stack, 528,
	    F(kinst_agg_stack, hash, 0, 8),
	    F(kinst_agg_stack, nframes, 8, 4),
	    F(kinst_agg_stack, flags, 12, 4),
	    F(kinst_agg_stack, frames, 16, 512));
	PIN_STRUCT(kinst_agg_cpu_stats, 32,
	    F(kinst_agg_cpu_stats, aggregated, 0, 8),
	    F(kinst_agg_cpu_stats, overflow, 8, 8),
	    F(kinst_agg_cpu_stats, nested, 16, 8),
	    F(kinst_agg_cpu_stats, used, 24, 8));
	PIN_STRUCT(kinst_agg_stats, 24,
	    F(kinst_agg_stats, buf, 0, 8),
	    F(kinst_agg_stats, cap, 8, 4),
	    F(kinst_agg_stats, ncpus, 12, 4),
	    F(kinst_agg_stats, nslots, 16, 4),
	    F(kinst_agg_stats, flags, 20, 4));
	PIN_STRUCT(kinst_agg_clear, 8,
	    F(kinst_agg_clear, flags, 0, 4),
	    F(kinst_agg_clear, _pad, 4, 4));

	PIN("KINST_AGG_COUNT", KINST_AGG_COUNT, 1);
	PIN("KINST_AGG_LOG2", KINST_AGG_LOG2, 2);
	PIN("KINST_AGG_LINEAR", KINST_AGG_LINEAR, 3);
	PIN("KINST_AGG_KIND_COUNT_", KINST_AGG_KIND_COUNT_, 4);
	PIN("KINST_AGGF_PROBE", KINST_AGGF_PROBE, 0x0001);
	PIN("KINST_AGGF_STACK", KINST_AGGF_STACK, 0x0002);
	PIN("KINST_AGGF_RECORD", KINST_AGGF_RECORD, 0x0004);
	PIN("KINST_AGG_MAX_SLOTS", KINST_AGG_MAX_SLOTS, 65536);
	PIN("KINST_AGG_MAX_LINEAR", KINST_AGG_MAX_LINEAR, 1024);
	PIN("KINST_AGG_MAX_BYTES", KINST_AGG_MAX_BYTES, 64u << 20);
	PIN("KINST_AGG_PROBES", KINST_AGG_PROBES, 32);
	PIN("KINST_AGG_LOG2_BUCKETS", KINST_AGG_LOG2_BUCKETS, 65);
	PIN("KINST_AGG_MAX_STACKS", KINST_AGG_MAX_STACKS, 16384);
}

/*
 * Per-thread state (1.10), ring size (1.11), wake-up watermark (1.12).
 * The docs lacked these layouts before this test (kinst(4) lists
 * TS_STATS' counters in order): written from the header, now in kinst(4)
 * ABI LAYOUT.
 */
ATF_TC_WITHOUT_HEAD(session);
ATF_TC_BODY(session, tc)
{
	PIN_STRUCT(kinst_ts_setup, 16,
	    F(kinst_ts_setup, nthreads, 0, 4),
	    F(kinst_ts_setup, flags, 4, 4),
	    F(kinst_ts_setup, idle_ns, 8, 8));
	PIN_STRUCT(kinst_ts_stats, 96,
	    F(kinst_ts_stats, pushed, 0, 8),
	    F(kinst_ts_stats, superseded, 8, 8),
	    F(kinst_ts_stats, evicted, 16, 8),
	    F(kinst_ts_stats, flushed, 24, 8),
	    F(kinst_ts_stats, matched, 32, 8),
	    F(kinst_ts_stats, missed, 40, 8),
	    F(kinst_ts_stats, closed, 48, 8),
	    F(kinst_ts_stats, nothread, 56, 8),
	    F(kinst_ts_stats, reclaimed, 64, 8),
	    F(kinst_ts_stats, busy, 72, 8),
	    F(kinst_ts_stats, used, 80, 8),
	    F(kinst_ts_stats, nslots, 88, 8));
	PIN("KINST_TS_DEPTH", KINST_TS_DEPTH, 8);
	PIN("KINST_TS_VALS", KINST_TS_VALS, 6);
	PIN("KINST_TS_MAX_THREADS", KINST_TS_MAX_THREADS, 16384);
	PIN("KINST_TS_PROBES", KINST_TS_PROBES, 8);
	PIN("KINST_TS_ELAPSED", KINST_TS_ELAPSED, 6);
	PIN("KINST_TS_START", KINST_TS_START, 7);
	PIN("KINST_TS_LOCAL_CLOCK", KINST_TS_LOCAL_CLOCK, 1);
	PIN("KINST_TS_FLAGS", KINST_TS_FLAGS, 1);
	PIN("KINST_TSF_ITEM", KINST_TSF_ITEM, 0x0f);
	PIN("KINST_TSF_CLOSE", KINST_TSF_CLOSE, 0x10);
	PIN("KINST_TSF_SOFT", KINST_TSF_SOFT, 0x20);
	PIN("KINST_TS_IDLE_NS", KINST_TS_IDLE_NS, 1000000000ull);

	PIN_STRUCT(kinst_ring_size, 24,
	    F(kinst_ring_size, size, 0, 4),
	    F(kinst_ring_size, flags, 4, 4),
	    F(kinst_ring_size, min, 8, 4),
	    F(kinst_ring_size, max, 12, 4),
	    F(kinst_ring_size, ncpus, 16, 4),
	    F(kinst_ring_size, allocated, 20, 4));
	PIN_STRUCT(kinst_wake, 8,
	    F(kinst_wake, bytes, 0, 4),
	    F(kinst_wake, flags, 4, 4));
}

/* ---- ioctl numbers ---- */

/*
 * Each command: its number in group 'K', the direction (R: the module
 * answers, W: it reads the argument), the size of its argument as
 * written above, and the number that makes on Linux and on FreeBSD.
 * kinst(4) ABI LAYOUT lists them (docs/engine.md gave only 'K' 18-24).
 */
enum { R = 1, W = 2 };
static const struct ioc {
	const char	*name;
	unsigned long	got;		/* this host's (Linux) encoding */
	unsigned	nr;
	unsigned	dir;
	unsigned	size;
	uint32_t	linux_cmd;
	uint32_t	fbsd_cmd;
} iocs[] = {
#define	IOC(c)	#c, c
	{ IOC(KINST_IOC_VERSION),    1, R,     16, 0x80104b01, 0x40104b01 },
	{ IOC(KINST_IOC_ARM),        2, R | W, 248, 0xc0f84b02, 0xc0f84b02 },
	{ IOC(KINST_IOC_DISARM),     3, R | W,  8, 0xc0084b03, 0xc0084b03 },
	{ IOC(KINST_IOC_LIST),       4, R | W, 16, 0xc0104b04, 0xc0104b04 },
	{ IOC(KINST_IOC_STATS),      5, R | W, 32, 0xc0204b05, 0xc0204b05 },
	{ IOC(KINST_IOC_TEXT),       6, R | W, 216, 0xc0d84b06, 0xc0d84b06 },
	{ IOC(KINST_IOC_FILTER),     7, W,     16, 0x40104b07, 0x80104b07 },
	{ IOC(KINST_IOC_PROG_LOAD), 16, R | W, 32, 0xc0204b10, 0xc0204b10 },
	{ IOC(KINST_IOC_PROG_STATS), 17, R | W, 16, 0xc0104b11, 0xc0104b11 },
	{ IOC(KINST_IOC_AGG_SETUP), 18, R | W, 48, 0xc0304b12, 0xc0304b12 },
	{ IOC(KINST_IOC_AGG_READ),  19, R | W, 24, 0xc0184b13, 0xc0184b13 },
	{ IOC(KINST_IOC_AGG_CLEAR), 20, R | W,  8, 0xc0084b14, 0xc0084b14 },
	{ IOC(KINST_IOC_AGG_STATS), 21, R | W, 24, 0xc0184b15, 0xc0184b15 },
	{ IOC(KINST_IOC_AGG_STACKS), 22, R | W, 24, 0xc0184b16, 0xc0184b16 },
	{ IOC(KINST_IOC_TS_SETUP),  23, R | W, 16, 0xc0104b17, 0xc0104b17 },
	{ IOC(KINST_IOC_TS_STATS),  24, R,     96, 0x80604b18, 0x40604b18 },
	{ IOC(KINST_IOC_RING),      25, R | W, 24, 0xc0184b19, 0xc0184b19 },
	{ IOC(KINST_IOC_WAKE),      26, R | W,  8, 0xc0084b1a, 0xc0084b1a },
#undef IOC
};

/*
 * Linux's asm-generic/ioctl.h: nr bits 0-7, type 8-15, size 16-29 (14
 * bits), direction 30-31 with _IOC_WRITE (the caller writes: the module
 * reads) 1 and _IOC_READ 2.
 */
static uint32_t
linux_ioc(unsigned dir, unsigned group, unsigned nr, unsigned size)
{
	uint32_t d = ((dir & W) != 0 ? 1u : 0) | ((dir & R) != 0 ? 2u : 0);

	return ((d << 30) | ((size & 0x3fffu) << 16) | (group << 8) | nr);
}

/*
 * FreeBSD's sys/sys/ioccom.h: IOC_OUT 0x40000000 (the kernel copies out:
 * the caller reads), IOC_IN 0x80000000, the length in bits 16-28
 * (IOCPARM_MASK, 13 bits: at most 8191 bytes), the group in 8-15, the
 * number in 0-7.  _IOR and _IOW thus swap the two top bits relative to
 * Linux; _IOWR is the same number on both while the size fits.
 */
static uint32_t
fbsd_ioc(unsigned dir, unsigned group, unsigned nr, unsigned size)
{
	uint32_t inout = ((dir & R) != 0 ? 0x40000000u : 0) |
	    ((dir & W) != 0 ? 0x80000000u : 0);

	return (inout | ((size & 0x1fffu) << 16) | (group << 8) | nr);
}

ATF_TC_WITHOUT_HEAD(ioctl_numbers);
ATF_TC_BODY(ioctl_numbers, tc)
{
	size_t i, j;

	for (i = 0; i < sizeof(iocs) / sizeof(iocs[0]); i++) {
		const struct ioc *c = &iocs[i];

		/* The header, on this host. */
		ATF_CHECK_MSG(c->got == c->linux_cmd, "%s: expected %#x, got "
		    "%#lx (size %lu, nr %lu)", c->name, c->linux_cmd, c->got,
		    (unsigned long)_IOC_SIZE(c->got),
		    (unsigned long)_IOC_NR(c->got));
		/* The hand-written numbers agree with their parts. */
		ATF_CHECK_MSG(linux_ioc(c->dir, 'K', c->nr, c->size) ==
		    c->linux_cmd, "%s: the test's Linux number %#x is not "
		    "dir %u nr %u size %u (%#x)", c->name, c->linux_cmd, c->dir,
		    c->nr, c->size, linux_ioc(c->dir, 'K', c->nr, c->size));
		ATF_CHECK_MSG(fbsd_ioc(c->dir, 'K', c->nr, c->size) ==
		    c->fbsd_cmd, "%s: FreeBSD: expected %#x, the formula "
		    "gives %#x", c->name, c->fbsd_cmd,
		    fbsd_ioc(c->dir, 'K', c->nr, c->size));
		/*
		 * The FreeBSD number the same header makes there: this
		 * host's number taken apart and put together the FreeBSD
		 * way (the header uses each OS's own _IO* macros).
		 */
		ATF_CHECK_MSG(fbsd_ioc(((_IOC_DIR(c->got) & _IOC_READ) != 0 ?
		    R : 0) | ((_IOC_DIR(c->got) & _IOC_WRITE) != 0 ? W : 0),
		    _IOC_TYPE(c->got), _IOC_NR(c->got), _IOC_SIZE(c->got)) ==
		    c->fbsd_cmd, "%s: FreeBSD: expected %#x from the header",
		    c->name, c->fbsd_cmd);
		/* Both encodings can carry the size (FreeBSD: 13 bits). */
		ATF_CHECK_MSG(c->size < 8192, "%s: %u bytes do not fit "
		    "FreeBSD's IOCPARM_MASK", c->name, c->size);
		for (j = 0; j < i; j++)
			ATF_CHECK_MSG(iocs[j].nr != c->nr, "%s and %s share "
			    "number %u", iocs[j].name, c->name, c->nr);
	}
	PIN("commands", sizeof(iocs) / sizeof(iocs[0]), 18);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, version);
	ATF_TP_ADD_TC(tp, records);
	ATF_TP_ADD_TC(tp, sections);
	ATF_TP_ADD_TC(tp, ring_ctl);
	ATF_TP_ADD_TC(tp, probes);
	ATF_TP_ADD_TC(tp, refusals);
	ATF_TP_ADD_TC(tp, programs);
	ATF_TP_ADD_TC(tp, aggregation);
	ATF_TP_ADD_TC(tp, session);
	ATF_TP_ADD_TC(tp, ioctl_numbers);
	return (atf_no_error());
}
