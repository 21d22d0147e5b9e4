/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The FreeBSD trap-frame arithmetic (kmod/freebsd/kinst_freebsd.c): where a
 * kernel-mode #BP leaves its struct trapframe, where the hook moves it, and
 * which bytes the engine may write for an emulated call/pushf.
 */
#include <atf-c.h>
#include <stdint.h>

#include "kinst_freebsd.h"

/* Interrupted stack pointers of every residue modulo 16, at several places. */
static uint64_t
isp_at(unsigned i)
{
	static const uint64_t bases[] = {
		0xfffffe00deadb000ull, 0xfffffe0123456000ull,
		0xffffffff80123000ull, 0x00007fffffffe000ull,
	};

	return (bases[(i / 16) % 4] + 0x800 + (i % 16));
}

ATF_TC_WITHOUT_HEAD(frame_geometry);
ATF_TC_BODY(frame_geometry, tc)
{
	uint64_t isp, f, m, hw;
	unsigned i;

	/* The hardware part (rip .. ss) is five words at the very top. */
	ATF_CHECK_EQ(KINST_FBSD_TF_SS + 8, KINST_FBSD_TF_SIZE);
	ATF_CHECK_EQ(KINST_FBSD_TF_RIP + 5 * 8, KINST_FBSD_TF_SIZE);
	ATF_CHECK_EQ(KINST_FBSD_TF_ERR + 8, KINST_FBSD_TF_RIP);
	for (i = 0; i < 64; i++) {
		isp = isp_at(i);
		f = kinst_fbsd_frame_at(isp);
		m = kinst_fbsd_moved_frame_at(isp);
		hw = f + KINST_FBSD_TF_RIP;	/* where the CPU's pushes end */
		/* The CPU aligned down to 16, then pushed 5 words. */
		ATF_CHECK_EQ(hw + 40, isp & ~(uint64_t)15);
		/* The frame is 16-aligned: calling C from it keeps the ABI. */
		ATF_CHECK_EQ(f % 16, 0);
		ATF_CHECK_EQ(m % 16, 0);
		/* The frame ends at most 15 bytes below isp. */
		ATF_CHECK(f + KINST_FBSD_TF_SIZE <= isp);
		ATF_CHECK(isp - (f + KINST_FBSD_TF_SIZE) < 16);
		/* After the move, the room below isp is free of the frame. */
		ATF_CHECK(m + KINST_FBSD_TF_SIZE <= isp - KINST_FBSD_STACK_ROOM);
	}
}

ATF_TC_WITHOUT_HEAD(write_room);
ATF_TC_BODY(write_room, tc)
{
	const size_t room = KINST_FBSD_STACK_ROOM;
	uint64_t isp;
	unsigned i;

	for (i = 0; i < 64; i++) {
		isp = isp_at(i);
		/* What the emulator writes: call (8), pushf (8), pushfw (2). */
		ATF_CHECK(kinst_stack_write_ok(isp, isp - 8, 8, room));
		ATF_CHECK(kinst_stack_write_ok(isp, isp - 2, 2, room));
		ATF_CHECK(kinst_stack_write_ok(isp, isp - room, room, room));
		/* At or above isp: the interrupted context's own stack. */
		ATF_CHECK(!kinst_stack_write_ok(isp, isp, 8, room));
		ATF_CHECK(!kinst_stack_write_ok(isp, isp - 4, 8, room));
		ATF_CHECK(!kinst_stack_write_ok(isp, isp + 8, 8, room));
		/* Below the room: where the moved frame may be. */
		ATF_CHECK(!kinst_stack_write_ok(isp, isp - room - 1, 1, room));
		ATF_CHECK(!kinst_stack_write_ok(isp, isp - room - 8, 8, room));
		/* Degenerate sizes. */
		ATF_CHECK(!kinst_stack_write_ok(isp, isp - 8, 0, room));
		ATF_CHECK(!kinst_stack_write_ok(isp, isp - 8, room + 1, room));
		ATF_CHECK(!kinst_stack_write_ok(isp, isp - 8, SIZE_MAX, room));
	}
	/* No wrap-around at either end of the address space. */
	ATF_CHECK(!kinst_stack_write_ok(4, 0, 4, room));
	ATF_CHECK(!kinst_stack_write_ok(0, UINT64_MAX - 7, 8, room));
	ATF_CHECK(kinst_stack_write_ok(UINT64_MAX, UINT64_MAX - 8, 8, room));
	ATF_CHECK(!kinst_stack_write_ok(UINT64_MAX, UINT64_MAX - 7, 8, room));
}

/*
 * A byte-level model of the stack during one emulated call: the frame is
 * laid out as the entry code leaves it, moved the way kinst_hook.S moves
 * it, the 8-byte return address is stored at isp - 8, and the moved frame
 * must still be intact (the store must not have hit it), as must every
 * byte at or above isp.
 */
ATF_TC_WITHOUT_HEAD(model_call);
ATF_TC_BODY(model_call, tc)
{
	static uint8_t stack[4096];
	uint64_t base, isp, f, m, a;
	unsigned i, r, k;
	uint8_t orig[KINST_FBSD_TF_SIZE];

	base = (uint64_t)(uintptr_t)stack;
	for (r = 0; r < 16; r++) {
		for (k = 0; k < sizeof(stack); k++)
			stack[k] = (uint8_t)(k * 7 + 3);
		isp = ((base + 3072) & ~(uint64_t)15) + r;
		f = kinst_fbsd_frame_at(isp);
		m = kinst_fbsd_moved_frame_at(isp);
		for (i = 0; i < KINST_FBSD_TF_SIZE; i++) {
			orig[i] = (uint8_t)(0xa0 + i);
			stack[f - base + i] = orig[i];
		}
		/* kinst_hook.S: copy upwards, 8 bytes at a time. */
		for (i = 0; i < KINST_FBSD_TF_SIZE; i += 8)
			for (k = 0; k < 8; k++)
				stack[m - base + i + k] = stack[f - base + i + k];
		/* The emulated call. */
		a = isp - 8;
		ATF_REQUIRE(kinst_stack_write_ok(isp, a, 8,
		    KINST_FBSD_STACK_ROOM));
		for (k = 0; k < 8; k++)
			stack[a - base + k] = 0x55;
		for (i = 0; i < KINST_FBSD_TF_SIZE; i++)
			ATF_CHECK_EQ_MSG(stack[m - base + i], orig[i],
			    "residue %u: moved frame byte %u clobbered", r, i);
		for (k = (unsigned)(isp - base); k < sizeof(stack); k++)
			ATF_CHECK_EQ_MSG(stack[k], (uint8_t)(k * 7 + 3),
			    "residue %u: byte at isp+%u written", r,
			    (unsigned)(k - (isp - base)));
	}
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, frame_geometry);
	ATF_TP_ADD_TC(tp, write_room);
	ATF_TP_ADD_TC(tp, model_call);
	return (atf_no_error());
}
