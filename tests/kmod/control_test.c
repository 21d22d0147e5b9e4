/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests of common/kinst_control.c, the OS-independent control path both
 * kernel shims use, against a fake OS: "kernel text" is an array here, the
 * text writes, synchronizations, quiescence and trampoline operations are
 * logged, and each test checks the order the design requires:
 *
 *   arm:    seal trampolines < insert in table < int3 written < text sync
 *   disarm: original byte written < text sync < removal from table <
 *           quiesce < trampoline freed / module reference dropped
 *
 * and that every batch of stores is repeated after a synchronization, so that
 * no CPU of an emulator that translates code keeps executing a byte memory
 * no longer holds (the model: xlat[] below; issue 15).
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atf-c.h>

#include "fake_kernel.h"
#include "kinst_freebsd.h"
#include "kinst_control.h"
#include "kinst_os.h"
#include "kinst_prog.h"
#include "x86/kinst_detour.h"

/* ---- tests ---- */

ATF_TC_WITHOUT_HEAD(arm_one_disarm_order);
ATF_TC_BODY(arm_one_disarm_order, tc)
{
	struct sess s;
	struct kinst_arm a;
	struct kinst_disarm d;
	struct kinst_probe *p;

	fake_reset();
	sess_init(&s);
	ATF_REQUIRE_EQ(arm(&s, "f_small", 4, 0, &a), KINST_E_OK);
	ATF_CHECK_EQ(a.narmed, 1);
	ATF_CHECK(a.probe_id != 0 && a.probe_id != KINST_ALL_PROBES);
	ATF_CHECK_EQ(a.addr, TEXT_BASE + 4);
	ATF_CHECK_EQ(a.insn_len, 4);
	ATF_CHECK(memcmp(a.insn, small_code + 4, 4) == 0);
	ATF_CHECK_EQ(text[4], 0xcc);
	ATF_CHECK_STREQ(log_buf, "A R Wcc S Wcc S ");
	p = kinst_ptable_lookup(&engine->table, TEXT_BASE + 4);
	ATF_REQUIRE(p != NULL);
	/* The table holds the site; the session's probe is its one subscriber. */
	ATF_CHECK(p->session == NULL);
	ATF_REQUIRE(p->next != NULL);
	ATF_CHECK(p->next->session == &s.cs.s);
	ATF_CHECK(p->next->next == NULL);
	ATF_CHECK_EQ(p->next->id, a.probe_id);
	ATF_CHECK_EQ(nrefs, 1);

	log_len = 0;
	d.probe_id = a.probe_id;
	ATF_REQUIRE_EQ(kinst_ctl_disarm(&ctl, &s.cs, &d), KINST_E_OK);
	ATF_CHECK_EQ(d.ndisarmed, 1);
	/* byte back, sync, again (probe still in table: checked in text_write), quiesce, free */
	ATF_CHECK_STREQ(log_buf, "W48 S W48 S Q F ");
	check_text_clean();
	ATF_CHECK_EQ(kinst_ctl_disarm(&ctl, &s.cs, &d), KINST_E_NOENT);
	kinst_ctl_session_fini(&ctl, &s.cs);
	check_no_leaks();
}

ATF_TC_WITHOUT_HEAD(boundaries_never_trusted);
ATF_TC_BODY(boundaries_never_trusted, tc)
{
	struct sess s;
	struct kinst_arm a;
	uint32_t off;

	fake_reset();
	sess_init(&s);
	for (off = 0; off < SMALL_SIZE + 3; off++) {
		int r = arm(&s, "f_small", off, 0, &a);

		if (off == 0 || off == 1 || off == 4 || off == 8 || off == 9)
			ATF_CHECK_EQ_MSG(r, KINST_E_OK, "off %u", off);
		else
			ATF_CHECK_EQ_MSG(r, KINST_E_INVAL, "off %u: %d", off, r);
	}
	ATF_CHECK_EQ(ctl.nprobes, 5);
	ATF_CHECK_EQ(arm(&s, "f_small", UINT32_MAX, 0, &a), KINST_E_INVAL);
	kinst_ctl_session_fini(&ctl, &s.cs);
	check_text_clean();
	check_no_leaks();
}

ATF_TC_WITHOUT_HEAD(bad_requests);
ATF_TC_BODY(bad_requests, tc)
{
	struct sess s;
	struct kinst_arm a;
	int r;

	fake_reset();
	sess_init(&s);
	memset(&a, 'x', sizeof(a));
	ATF_CHECK_EQ(kinst_ctl_arm(&ctl, &s.cs, &a), KINST_E_INVAL);
	ATF_CHECK_EQ(arm(&s, "", 0, 0, &a), KINST_E_INVAL);
	ATF_CHECK_EQ(arm(&s, "f_small", 0, 0x80, &a), KINST_E_INVAL);
	ATF_CHECK_EQ(arm(&s, "nope", 0, 0, &a), KINST_E_NOENT);
	memset(&a, 0, sizeof(a));
	strcpy(a.module, "somemod");
	strcpy(a.function, "f_small");
	ATF_CHECK_EQ(kinst_ctl_arm(&ctl, &s.cs, &a), KINST_E_NOENT);
	r = arm(&s, "f_excluded", 0, KINST_ARM_ALL, &a);
	ATF_CHECK_EQ(r, KINST_E_REFUSED);
	ATF_CHECK_EQ(a.refuse_reason, KINST_R_EXCLUDED);
	r = arm(&s, "f_fixup", 1, 0, &a);
	ATF_CHECK_EQ(r, KINST_E_REFUSED);
	ATF_CHECK_EQ(a.refuse_reason, KINST_R_FIXUP);
	/* The last byte is ret; the int3 padding after it is not in f_small. */
	ATF_CHECK_EQ(arm(&s, "f_small", 9, 0, &a), KINST_E_OK);
	ATF_CHECK_EQ(arm(&s, "f_small", 9, 0, &a), KINST_E_EXIST);
	kinst_ctl_session_fini(&ctl, &s.cs);
	check_text_clean();
	check_no_leaks();
}

/*
 * Captures (ABI 1.7): a program with captures gets the session's per-CPU
 * capture buffers at load (freed at close: check_no_leaks), arms for
 * records, and is refused for aggregating probes (they make no record).
 */
ATF_TC_WITHOUT_HEAD(captures_not_aggregated);
ATF_TC_BODY(captures_not_aggregated, tc)
{
	static const struct kinst_pinsn cap[] = {
		{ .op = KINST_OP_REG, .arg = KINST_RDI },
		{ .op = KINST_OP_MEM, .imm = 64 },
		{ .op = KINST_OP_IMM, .imm = 1 },
		{ .op = KINST_OP_RET },
	}, plain[] = {
		{ .op = KINST_OP_IMM, .imm = 1 },
		{ .op = KINST_OP_RET },
	};
	struct kinst_prog_load pl;
	struct kinst_agg_setup as;
	struct kinst_arm a;
	struct sess s;
	uint32_t cap_id, plain_id;

	fake_reset();
	sess_init(&s);
	memset(&pl, 0, sizeof(pl));
	pl.ninsns = 2;
	prog_loading = 1;
	ATF_REQUIRE_EQ(kinst_ctl_prog_load(&ctl, &s.cs, &pl, plain), KINST_E_OK);
	plain_id = pl.prog_id;
	ATF_CHECK(s.cs.s.capbuf == NULL);	/* no captures: no buffers */
	memset(&pl, 0, sizeof(pl));
	pl.ninsns = 4;
	ATF_REQUIRE_EQ(kinst_ctl_prog_load(&ctl, &s.cs, &pl, cap), KINST_E_OK);
	cap_id = pl.prog_id;
	ATF_CHECK(s.cs.s.capbuf != NULL);
	memset(&as, 0, sizeof(as));
	as.kind = KINST_AGG_COUNT;
	as.nslots = 16;
	ATF_REQUIRE_EQ(kinst_ctl_agg_setup(&ctl, &s.cs, &as), KINST_E_OK);
	prog_loading = 0;
	memset(&a, 0, sizeof(a));
	strcpy(a.function, "f_small");
	a.flags = KINST_ARM_PROG | KINST_ARM_AGG;
	a.prog_id = cap_id;
	ATF_CHECK_EQ(kinst_ctl_arm(&ctl, &s.cs, &a), KINST_E_INVAL);
	a.prog_id = plain_id;
	ATF_CHECK_EQ(kinst_ctl_arm(&ctl, &s.cs, &a), KINST_E_OK);
	memset(&a, 0, sizeof(a));
	strcpy(a.function, "f_small");
	a.offset = 9;
	a.flags = KINST_ARM_PROG;
	a.prog_id = cap_id;
	ATF_CHECK_EQ(kinst_ctl_arm(&ctl, &s.cs, &a), KINST_E_OK);
	kinst_ctl_session_fini(&ctl, &s.cs);
	check_text_clean();
	check_no_leaks();
}

/* KINST_ARM_CHECK: the verdict arming would give, and nothing armed. */
ATF_TC_WITHOUT_HEAD(arm_check_only);
ATF_TC_BODY(arm_check_only, tc)
{
	struct sess s;
	struct kinst_arm a;
	struct kinst_stats st;

	fake_reset();
	sess_init(&s);
	log_len = 0;
	log_buf[0] = '\0';
	ATF_CHECK_EQ(arm(&s, "f_small", 4, KINST_ARM_CHECK, &a), KINST_E_OK);
	ATF_CHECK_EQ(a.refuse_reason, KINST_R_NONE);
	ATF_CHECK_EQ(a.narmed, 0);
	ATF_CHECK_EQ(a.addr, TEXT_BASE + 4);
	ATF_CHECK_EQ(a.insn_len, 4);
	ATF_CHECK(memcmp(a.insn, small_code + 4, 4) == 0);
	ATF_CHECK_EQ(text[4], small_code[4]);		/* nothing written */
	ATF_CHECK(strchr(log_buf, 'W') == NULL && strchr(log_buf, 'A') == NULL);
	/* A refusal is the answer, not an error, and not counted. */
	ATF_CHECK_EQ(arm(&s, "f_fixup", 1, KINST_ARM_CHECK, &a), KINST_E_OK);
	ATF_CHECK_EQ(a.refuse_reason, KINST_R_FIXUP);
	ATF_CHECK_EQ(arm(&s, "f_excluded", 0, KINST_ARM_CHECK, &a), KINST_E_OK);
	ATF_CHECK_EQ(a.refuse_reason, KINST_R_EXCLUDED);
	memset(&st, 0, sizeof(st));
	kinst_ctl_stats(&ctl, &s.cs, NULL, 0, &st);
	ATF_CHECK_EQ(st.refusals, 0);
	/* Boundaries are still checked; CHECK with ALL is malformed. */
	ATF_CHECK_EQ(arm(&s, "f_small", 2, KINST_ARM_CHECK, &a), KINST_E_INVAL);
	ATF_CHECK_EQ(arm(&s, "f_small", 0, KINST_ARM_CHECK | KINST_ARM_ALL, &a),
	    KINST_E_INVAL);
	ATF_CHECK_EQ(ctl.nprobes, 0);
	kinst_ctl_session_fini(&ctl, &s.cs);
	check_text_clean();
	check_no_leaks();
}

ATF_TC_WITHOUT_HEAD(arm_all_and_refusals);
ATF_TC_BODY(arm_all_and_refusals, tc)
{
	struct sess s, s2;
	struct kinst_arm a;
	struct kinst_probe_info pi[8];
	struct kinst_text t;
	uint8_t buf[64];
	uint32_t n;

	fake_reset();
	sess_init(&s);
	sess_init(&s2);
	/* Another session traces offset 4 already: s shares it. */
	ATF_REQUIRE_EQ(arm(&s2, "f_fixup", 4, 0, &a), KINST_E_OK);
	ATF_REQUIRE_EQ(arm(&s, "f_fixup", 0, KINST_ARM_ALL, &a), KINST_E_OK);
	ATF_CHECK_EQ(a.narmed, 4);	/* 0, 4 (shared), 8, 9 */
	ATF_CHECK_EQ(a.nrefused, 1);	/* 1: fixup */
	ATF_CHECK_EQ(text[FIXUP_OFF + 0], 0xcc);
	ATF_CHECK_EQ(text[FIXUP_OFF + 1], 0x48);
	ATF_CHECK_EQ(text[FIXUP_OFF + 4], 0xcc);
	ATF_CHECK_EQ(text[FIXUP_OFF + 8], 0xcc);

	n = kinst_ctl_list(&ctl, &s.cs, pi, 8);
	ATF_CHECK_EQ(n, 4);
	ATF_CHECK_STREQ(pi[0].function, "f_fixup");
	ATF_CHECK_STREQ(pi[0].module, "kernel");
	for (uint32_t i = 0; i < n && i < 8; i++) {
		ATF_CHECK_EQ(KINST_PI_SESSIONS(pi[i].treatment),
		    pi[i].offset == 4 ? 2 : 1);
		ATF_CHECK_EQ(KINST_PI_SESSIONS_MAX(pi[i].treatment),
		    pi[i].offset == 4 ? 2 : 1);
		ATF_CHECK((pi[i].treatment & KINST_PI_TREATMENT) !=
		    KINST_T_REFUSE);
	}
	ATF_CHECK_EQ(kinst_ctl_list(&ctl, &s.cs, pi, 1), 4);

	/* TEXT hides every kinst int3, of any session. */
	memset(&t, 0, sizeof(t));
	strcpy(t.function, "f_fixup");
	ATF_REQUIRE_EQ(kinst_ctl_text(&ctl, &t, buf, sizeof(buf)), KINST_E_OK);
	ATF_CHECK_EQ(t.size, SMALL_SIZE);
	ATF_CHECK(memcmp(buf, small_code, SMALL_SIZE) == 0);

	/* Closing one session leaves the other's probe alone. */
	kinst_ctl_session_fini(&ctl, &s.cs);
	ATF_CHECK_EQ(text[FIXUP_OFF + 0], 0x55);
	ATF_CHECK_EQ(text[FIXUP_OFF + 4], 0xcc);
	ATF_CHECK_EQ(ctl.nprobes, 1);
	kinst_ctl_session_fini(&ctl, &s2.cs);
	check_text_clean();
	check_no_leaks();
}

ATF_TC_WITHOUT_HEAD(probe_limit);
ATF_TC_BODY(probe_limit, tc)
{
	struct sess s;
	struct kinst_arm a;
	struct kinst_stats st;
	struct kinst_cpu_stats cs[2];

	fake_reset();
	sess_init(&s);
	ATF_CHECK_EQ(arm(&s, "f_big", 0, KINST_ARM_ALL, &a), KINST_E_NOSPC);
	ATF_CHECK_EQ(text[BIG_OFF], 0x90);
	ATF_CHECK_EQ(ctl.nprobes, 0);
	ATF_CHECK_EQ(arm(&s, "f_small", 0, KINST_ARM_ALL, &a), KINST_E_OK);
	ATF_CHECK_EQ(a.narmed, 5);
	memset(&st, 0, sizeof(st));
	kinst_ctl_stats(&ctl, &s.cs, cs, 2, &st);
	ATF_CHECK_EQ(st.ncpus, 2);
	ATF_CHECK_EQ(st.nprobes, 5);
	kinst_ctl_session_fini(&ctl, &s.cs);
	check_text_clean();
	check_no_leaks();
}

ATF_TC_WITHOUT_HEAD(disarm_one_of_group);
ATF_TC_BODY(disarm_one_of_group, tc)
{
	struct sess s;
	struct kinst_arm a;
	struct kinst_disarm d;

	fake_reset();
	sess_init(&s);
	ATF_REQUIRE_EQ(arm(&s, "f_small", 0, KINST_ARM_ALL, &a), KINST_E_OK);
	ATF_REQUIRE_EQ(a.narmed, 5);
	log_len = 0;
	d.probe_id = a.probe_id + 2;
	ATF_REQUIRE_EQ(kinst_ctl_disarm(&ctl, &s.cs, &d), KINST_E_OK);
	/* The group's trampoline block stays while other probes use it. */
	ATF_CHECK_STREQ(log_buf, "W48 S W48 S Q ");
	ATF_CHECK_EQ(ntramps, 1);
	log_len = 0;
	d.probe_id = KINST_ALL_PROBES;
	ATF_REQUIRE_EQ(kinst_ctl_disarm(&ctl, &s.cs, &d), KINST_E_OK);
	ATF_CHECK_EQ(d.ndisarmed, 4);
	/* Sites newest first. */
	ATF_CHECK_STREQ(log_buf, "Wc3 W5d W48 W55 S Wc3 W5d W48 W55 S Q F ");
	check_text_clean();
	kinst_ctl_session_fini(&ctl, &s.cs);
	check_no_leaks();
}

ATF_TC_WITHOUT_HEAD(name_list);
ATF_TC_BODY(name_list, tc)
{
	static const char *const l[] = { "do_int3", "irq_work_*", "x" };

	ATF_CHECK(kinst_name_listed("do_int3", l, 3));
	ATF_CHECK(kinst_name_listed("do_int3.cold", l, 3));
	ATF_CHECK(kinst_name_listed("do_int3.isra.0", l, 3));
	ATF_CHECK(!kinst_name_listed("do_int3x", l, 3));
	ATF_CHECK(!kinst_name_listed("do_int", l, 3));
	ATF_CHECK(kinst_name_listed("irq_work_queue", l, 3));
	ATF_CHECK(kinst_name_listed("irq_work_", l, 3));
	ATF_CHECK(!kinst_name_listed("irq_wor", l, 3));
	ATF_CHECK(kinst_name_listed("x", l, 3));
	ATF_CHECK(!kinst_name_listed("", l, 3));
	ATF_CHECK(!kinst_name_listed("y", l, 3));
	ATF_CHECK(kinst_str_ok("ab", 3));
	ATF_CHECK(!kinst_str_ok("abc", 3));
	ATF_CHECK_STREQ(kinst_ctl_err_name(KINST_E_REFUSED), "EOPNOTSUPP");
}

/* ---- jump-optimized probes (issue 13) ---- */

#define	JHANDLER	(TEXT_BASE + 0x2000000)	/* within rel32 of the detours */

static uint32_t
list_flags(struct sess *s, uint32_t id)
{
	struct kinst_probe_info pi[8];
	uint32_t i, n;

	n = kinst_ctl_list(&ctl, &s->cs, pi, 8);
	for (i = 0; i < n && i < 8; i++)
		if (pi[i].probe_id == id)
			return (pi[i].treatment & ~KINST_PI_TREATMENT &
			    ~KINST_PI_MK_SESSIONS(0x3f, 0x3f));
	atf_tc_fail("probe %u not listed", id);
	return (0);
}

/*
 * f_small+0 (push %rbp; mov %rsp,%rbp; mov 0x8(%rdi),%rax: an 8-byte window)
 * qualifies.  Optimization: detour built and sealed, the int3 path resumes
 * in it, quiesce, wait for tasks, then the rel32 and the opcode, each batch
 * stored twice around a synchronization (the fake checks that bytes 1..4
 * change only under the int3 and with jresume set).  Removal: int3, the
 * original bytes, then the original first byte, quiesce, wait for tasks,
 * free.
 */
ATF_TC_WITHOUT_HEAD(jump_install_and_remove_order);
ATF_TC_BODY(jump_install_and_remove_order, tc)
{
	struct sess s;
	struct kinst_arm a;
	struct kinst_disarm d;
	struct kinst_text t;
	struct kinst_csite *st;
	uint8_t buf[SMALL_SIZE];
	char want[256];
	uint64_t det;
	uint32_t rel;

	fake_reset();
	kinst_ctl_jump_enable(&ctl, JHANDLER, 0x1234, false, 0);
	sess_init(&s);
	ATF_CHECK(!kinst_ctl_opt_pending(&ctl));
	ATF_REQUIRE_EQ(arm(&s, "f_small", 0, 0, &a), KINST_E_OK);
	ATF_CHECK_STREQ(log_buf, "A R Wcc S Wcc S ");
	ATF_CHECK(kinst_ctl_opt_pending(&ctl));
	ATF_CHECK_EQ(list_flags(&s, a.probe_id), 0);

	log_len = 0;
	log_buf[0] = '\0';
	ATF_REQUIRE_EQ(kinst_ctl_optimize(&ctl), 1);
	ATF_CHECK(!kinst_ctl_opt_pending(&ctl));
	st = (struct kinst_csite *)kinst_ptable_lookup(&engine->table,
	    TEXT_BASE);
	ATF_REQUIRE(st != NULL);
	ATF_CHECK_EQ(st->jstate, KINST_JS_JUMP);
	ATF_CHECK_EQ(st->jlen, 8);
	det = st->jdetour;
	ATF_CHECK(st->p.jresume == st->jwindow && st->jwindow > det &&
	    st->jwindow < det + KINST_DETOUR_SIZE);
	rel = (uint32_t)(det - (TEXT_BASE + 5));
	snprintf(want, sizeof(want), "A R Q T W%02x W%02x W%02x W%02x S "
	    "W%02x W%02x W%02x W%02x S We9 S We9 S ", rel & 0xff,
	    (rel >> 8) & 0xff, (rel >> 16) & 0xff, rel >> 24, rel & 0xff,
	    (rel >> 8) & 0xff, (rel >> 16) & 0xff, rel >> 24);
	ATF_CHECK_STREQ(log_buf, want);
	ATF_CHECK_EQ(text[0], 0xe9);
	ATF_CHECK_EQ(text[1] | text[2] << 8 | text[3] << 16 |
	    (uint32_t)text[4] << 24, rel);
	ATF_CHECK(memcmp(text + 5, small_code + 5, SMALL_SIZE - 5) == 0);
	ATF_CHECK_EQ(list_flags(&s, a.probe_id), KINST_PI_JUMP);
	ATF_CHECK_EQ(ctl.njump, 1);
	/* TEXT shows the original bytes. */
	memset(&t, 0, sizeof(t));
	strcpy(t.function, "f_small");
	ATF_REQUIRE_EQ(kinst_ctl_text(&ctl, &t, buf, sizeof(buf)), KINST_E_OK);
	ATF_CHECK(memcmp(buf, small_code, SMALL_SIZE) == 0);
	/* Nothing left to do. */
	log_len = 0;
	log_buf[0] = '\0';
	ATF_CHECK_EQ(kinst_ctl_optimize(&ctl), 0);
	ATF_CHECK_STREQ(log_buf, "");

	log_len = 0;
	log_buf[0] = '\0';
	d.probe_id = a.probe_id;
	ATF_REQUIRE_EQ(kinst_ctl_disarm(&ctl, &s.cs, &d), KINST_E_OK);
	ATF_CHECK_STREQ(log_buf, "Wcc S Wcc S W48 W89 We5 W48 S "
	    "W48 W89 We5 W48 S W55 S W55 S Q T F F ");
	ATF_CHECK_EQ(ctl.njump, 0);
	check_text_clean();
	kinst_ctl_session_fini(&ctl, &s.cs);
	check_no_leaks();
}

/*
 * A new probe inside a jump window (f_small+4, in +0's window): the jump
 * goes back to an int3 first (its detour stays until the group goes); the
 * new probe's own window is then optimized, +0's is not again.
 */
ATF_TC_WITHOUT_HEAD(jump_undone_by_probe_in_window);
ATF_TC_BODY(jump_undone_by_probe_in_window, tc)
{
	struct sess s, s2;
	struct kinst_arm a, b;
	struct kinst_csite *st;

	fake_reset();
	kinst_ctl_jump_enable(&ctl, JHANDLER, 0, false, 0);
	sess_init(&s);
	sess_init(&s2);
	ATF_REQUIRE_EQ(arm(&s, "f_small", 0, 0, &a), KINST_E_OK);
	ATF_REQUIRE_EQ(kinst_ctl_optimize(&ctl), 1);
	ATF_REQUIRE_EQ(text[0], 0xe9);
	log_len = 0;
	log_buf[0] = '\0';
	ATF_REQUIRE_EQ(arm(&s2, "f_small", 4, 0, &b), KINST_E_OK);
	ATF_CHECK_STREQ(log_buf, "A Wcc S Wcc S W48 W89 We5 W48 S "
	    "W48 W89 We5 W48 S R Wcc S Wcc S ");
	st = (struct kinst_csite *)kinst_ptable_lookup(&engine->table,
	    TEXT_BASE);
	ATF_REQUIRE(st != NULL);
	ATF_CHECK_EQ(st->jstate, KINST_JS_NONE);
	ATF_CHECK_EQ(st->p.jresume, 0);
	ATF_CHECK_EQ(text[0], 0xcc);
	ATF_CHECK(memcmp(text + 1, small_code + 1, 3) == 0);
	ATF_CHECK_EQ(text[4], 0xcc);
	ATF_CHECK_EQ(list_flags(&s, a.probe_id), 0);
	/* +4's own window (mov 0x8(%rdi),%rax; pop %rbp) qualifies. */
	ATF_CHECK_EQ(kinst_ctl_optimize(&ctl), 1);
	ATF_CHECK_EQ(text[0], 0xcc);
	ATF_CHECK_EQ(text[4], 0xe9);
	ATF_CHECK_EQ(list_flags(&s2, b.probe_id), KINST_PI_JUMP);
	kinst_ctl_session_fini(&ctl, &s2.cs);
	kinst_ctl_session_fini(&ctl, &s.cs);
	check_text_clean();
	check_no_leaks();
}

/*
 * What is never optimized: KINST_ARM_NOOPT; a window holding another probe
 * (every instruction of f_small armed); a function with a fixup; a group
 * whose session closed before the worker ran; a shim without jumps.
 */
ATF_TC_WITHOUT_HEAD(jump_not_installed);
ATF_TC_BODY(jump_not_installed, tc)
{
	struct sess s;
	struct kinst_arm a;

	fake_reset();
	sess_init(&s);
	ATF_REQUIRE_EQ(arm(&s, "f_small", 0, 0, &a), KINST_E_OK);
	ATF_CHECK(!kinst_ctl_opt_pending(&ctl));	/* not enabled */
	kinst_ctl_session_fini(&ctl, &s.cs);

	kinst_ctl_jump_enable(&ctl, JHANDLER, 0, false, 0);
	sess_init(&s);
	ATF_REQUIRE_EQ(arm(&s, "f_small", 0, KINST_ARM_NOOPT, &a), KINST_E_OK);
	ATF_CHECK(!kinst_ctl_opt_pending(&ctl));
	ATF_CHECK_EQ(kinst_ctl_optimize(&ctl), 0);
	kinst_ctl_session_fini(&ctl, &s.cs);

	sess_init(&s);
	ATF_REQUIRE_EQ(arm(&s, "f_small", 0, KINST_ARM_ALL, &a), KINST_E_OK);
	ATF_CHECK_EQ(a.narmed, 5);
	log_len = 0;
	log_buf[0] = '\0';
	ATF_CHECK_EQ(kinst_ctl_optimize(&ctl), 0);
	ATF_CHECK_STREQ(log_buf, "");
	kinst_ctl_session_fini(&ctl, &s.cs);

	sess_init(&s);
	ATF_REQUIRE_EQ(arm(&s, "f_fixup", 0, 0, &a), KINST_E_OK);
	ATF_CHECK_EQ(kinst_ctl_optimize(&ctl), 0);
	ATF_CHECK_EQ(text[FIXUP_OFF], 0xcc);
	kinst_ctl_session_fini(&ctl, &s.cs);

	/* Closed while queued (kill -9 before the worker ran). */
	sess_init(&s);
	ATF_REQUIRE_EQ(arm(&s, "f_small", 0, 0, &a), KINST_E_OK);
	ATF_CHECK(kinst_ctl_opt_pending(&ctl));
	kinst_ctl_session_fini(&ctl, &s.cs);
	ATF_CHECK(!kinst_ctl_opt_pending(&ctl));
	ATF_CHECK_EQ(kinst_ctl_optimize(&ctl), 0);
	check_text_clean();
	check_no_leaks();
}

/*
 * A shim that cannot wait for tasks (FreeBSD) optimizes only windows of one
 * instruction: f_small+0's window is three instructions, f_imm+0's one.
 */
ATF_TC_WITHOUT_HEAD(jump_single_insn_only);
ATF_TC_BODY(jump_single_insn_only, tc)
{
	struct sess s;
	struct kinst_arm a, b;

	fake_reset();
	kinst_ctl_jump_enable(&ctl, JHANDLER, 0, true, 0);
	sess_init(&s);
	ATF_REQUIRE_EQ(arm(&s, "f_small", 0, 0, &a), KINST_E_OK);
	ATF_REQUIRE_EQ(arm(&s, "f_imm", 0, 0, &b), KINST_E_OK);
	ATF_CHECK_EQ(kinst_ctl_optimize(&ctl), 1);
	ATF_CHECK_EQ(list_flags(&s, a.probe_id), 0);
	ATF_CHECK_EQ(list_flags(&s, b.probe_id), KINST_PI_JUMP);
	ATF_CHECK_EQ(text[IMM_OFF], 0xe9);
	ATF_CHECK_EQ(text[SMALL_OFF], 0xcc);
	kinst_ctl_session_fini(&ctl, &s.cs);
	check_text_clean();
	ATF_CHECK(memcmp(text + IMM_OFF, imm_code, IMM_SIZE) == 0);
	check_no_leaks();
}

/* The sessions tracing f_small+off (a check-only arm from a new session). */
static uint32_t
sessions_at(uint32_t off)
{
	struct kinst_arm a;
	struct sess q;

	sess_init(&q);
	ATF_REQUIRE_EQ(arm(&q, "f_small", off, KINST_ARM_CHECK, &a),
	    KINST_E_OK);
	kinst_ctl_session_fini(&ctl, &q.cs);
	return (a.narmed);
}

/* The probe ids of the records in s's CPU 0 ring, in order; how many. */
static uint32_t
ring_ids(struct sess *s, uint32_t *ids, uint32_t cap)
{
	static uint8_t buf[4096];
	struct kinst_hit_record rec;
	size_t len, off;
	uint32_t n;

	len = kinst_ring_get(&s->rings[0], buf, sizeof(buf));
	n = 0;
	for (off = 0; off + sizeof(rec) <= len; off += rec.hdr.size) {
		memcpy(&rec, buf + off, sizeof(rec));
		ATF_REQUIRE(rec.hdr.size >= sizeof(rec));
		ATF_CHECK_EQ(rec.addr, TEXT_BASE + SMALL_OFF + 4);
		if (n < cap)
			ids[n] = rec.probe_id;
		n++;
	}
	return (n);
}

/* A hit at f_small+4 with rdi (the engine as the trap handler calls it). */
static int
hit4(uint64_t rdi)
{
	struct kinst_regs r;

	memset(&r, 0, sizeof(r));
	r.rip = TEXT_BASE + SMALL_OFF + 4;
	r.gpr[KINST_RDI] = rdi;
	r.gpr[KINST_RSP] = 0x1000;
	return (kinst_engine_hit(engine, &r));
}

/*
 * Issue 25: two sessions on one instruction.  One site, patched once; a
 * hit records in each session's ring with that session's probe id, each
 * subscriber's predicate deciding for its own session only; the first
 * session leaving writes nothing to the text (the other still traces);
 * the last one restores it.
 */
ATF_TC_WITHOUT_HEAD(shared_site);
ATF_TC_BODY(shared_site, tc)
{
	static const struct kinst_pinsn rdi_is_7[] = {
		{ .op = KINST_OP_REG, .arg = KINST_RDI },
		{ .op = KINST_OP_IMM, .imm = 7 },
		{ .op = KINST_OP_EQ },
		{ .op = KINST_OP_RET },
	};
	struct kinst_prog_load pl;
	struct kinst_probe_info pi[2];
	struct kinst_arm a, b, chk;
	struct kinst_disarm d;
	struct kinst_probe *site;
	struct sess s1, s2;
	uint32_t ids[8];

	fake_reset();
	sess_init(&s1);
	sess_init(&s2);
	/* s2's probe has a predicate, rdi == 7; s1's none. */
	memset(&pl, 0, sizeof(pl));
	pl.ninsns = 4;
	prog_loading = 1;
	ATF_REQUIRE_EQ(kinst_ctl_prog_load(&ctl, &s2.cs, &pl, rdi_is_7),
	    KINST_E_OK);
	prog_loading = 0;
	ATF_REQUIRE_EQ(arm(&s1, "f_small", 4, 0, &a), KINST_E_OK);
	ATF_CHECK_EQ(sessions_at(4), 1);
	log_len = 0;
	log_buf[0] = '\0';
	memset(&b, 0, sizeof(b));
	strcpy(b.function, "f_small");
	b.offset = 4;
	b.flags = KINST_ARM_PROG;
	b.prog_id = pl.prog_id;
	ATF_REQUIRE_EQ(kinst_ctl_arm(&ctl, &s2.cs, &b), KINST_E_OK);
	/*
	 * Nothing written to the text: the site is patched already; the
	 * request's trampoline block, which no site took, is given back as
	 * unused (FreeBSD would otherwise keep it mapped, counted against
	 * its cap, for every session that shares).
	 */
	ATF_CHECK(strstr(log_buf, "W") == NULL);
	ATF_CHECK_STREQ(log_buf, "A R U ");
	ATF_CHECK_EQ(sessions_at(4), 2);
	ATF_CHECK_EQ(b.addr, a.addr);
	ATF_CHECK(b.probe_id != a.probe_id);
	ATF_CHECK_EQ(engine->table.count, 1);
	ATF_CHECK_EQ(ctl.nprobes, 2);
	ATF_CHECK_EQ(ctl.nsites, 1);
	site = kinst_ptable_lookup(&engine->table, TEXT_BASE + SMALL_OFF + 4);
	ATF_REQUIRE(site != NULL && site->session == NULL);
	/* The same session twice: refused, as before; its block unused. */
	log_len = 0;
	log_buf[0] = '\0';
	ATF_CHECK_EQ(arm(&s1, "f_small", 4, 0, &chk), KINST_E_EXIST);
	ATF_CHECK_STREQ(log_buf, "A U ");
	/* A check-only request sees the two sessions. */
	ATF_REQUIRE_EQ(arm(&s1, "f_small", 4, KINST_ARM_CHECK, &chk),
	    KINST_E_OK);
	ATF_CHECK_EQ(chk.refuse_reason, KINST_R_NONE);
	ATF_CHECK_EQ(chk.narmed, 2);	/* check-only: the sessions */
	/* ... and none where nobody traces: whatever the caller left there. */
	memset(&chk, 0, sizeof(chk));
	strcpy(chk.function, "f_small");
	chk.offset = 1;
	chk.flags = KINST_ARM_CHECK;
	chk.narmed = 77;
	ATF_REQUIRE_EQ(kinst_ctl_arm(&ctl, &s1.cs, &chk), KINST_E_OK);
	ATF_CHECK_EQ(chk.narmed, 0);

	/* rdi 7: both record; rdi 8: s1 only; each with its own id. */
	ATF_CHECK_EQ(hit4(7), KINST_HIT_REDIRECT);
	ATF_CHECK_EQ(hit4(8), KINST_HIT_REDIRECT);
	ATF_CHECK_EQ(hit4(7), KINST_HIT_REDIRECT);
	ATF_REQUIRE_EQ(ring_ids(&s1, ids, 8), 3);
	ATF_CHECK(ids[0] == a.probe_id && ids[1] == a.probe_id &&
	    ids[2] == a.probe_id);
	ATF_REQUIRE_EQ(ring_ids(&s2, ids, 8), 2);
	ATF_CHECK(ids[0] == b.probe_id && ids[1] == b.probe_id);
	ATF_CHECK_EQ(s1.hits[0].n, 3);
	ATF_CHECK_EQ(s2.hits[0].n, 3);	/* hits == delivered + not matching */
	ATF_CHECK_EQ(kinst_ring_written(&s1.rings[0]), 3);
	ATF_CHECK_EQ(kinst_ring_written(&s2.rings[0]), 2);
	ATF_CHECK_EQ(kinst_probe_hits(site, 2), 3);
	ATF_REQUIRE_EQ(kinst_ctl_list(&ctl, &s2.cs, pi, 2), 1);
	ATF_CHECK_EQ(pi[0].hits, 3);
	ATF_CHECK_EQ(KINST_PI_SESSIONS(pi[0].treatment), 2);
	ATF_CHECK_EQ(KINST_PI_SESSIONS_MAX(pi[0].treatment), 2);

	/* The first session leaves: no text write, s2 still records. */
	log_len = 0;
	log_buf[0] = '\0';
	d.probe_id = a.probe_id;
	ATF_REQUIRE_EQ(kinst_ctl_disarm(&ctl, &s1.cs, &d), KINST_E_OK);
	ATF_CHECK_EQ(d.ndisarmed, 1);
	ATF_CHECK_STREQ(log_buf, "Q ");	/* no text write, no sync: a quiescence */
	ATF_CHECK_EQ(text[SMALL_OFF + 4], 0xcc);
	ATF_CHECK_EQ(engine->table.count, 1);
	ATF_CHECK_EQ(ctl.nprobes, 1);
	ATF_CHECK_EQ(hit4(7), KINST_HIT_REDIRECT);
	ATF_CHECK_EQ(ring_ids(&s1, ids, 8), 0);
	ATF_REQUIRE_EQ(ring_ids(&s2, ids, 8), 1);
	ATF_CHECK_EQ(ids[0], b.probe_id);
	ATF_REQUIRE_EQ(kinst_ctl_list(&ctl, &s2.cs, pi, 2), 1);
	ATF_CHECK_EQ(KINST_PI_SESSIONS(pi[0].treatment), 1);
	ATF_CHECK_EQ(KINST_PI_SESSIONS_MAX(pi[0].treatment), 2);

	/* The last one restores the text. */
	log_len = 0;
	log_buf[0] = '\0';
	kinst_ctl_session_fini(&ctl, &s2.cs);
	ATF_CHECK_STREQ(log_buf, "W48 S W48 S Q F ");	/* the site's block */
	ATF_CHECK_EQ(hit4(7), KINST_HIT_NOT_OURS);
	kinst_ctl_session_fini(&ctl, &s1.cs);
	check_text_clean();
	check_no_leaks();
}

/* hits on CPU 0 then on CPU 1 (the fake kernel's engine has two). */
static void
hits_on_cpus(int n0, int n1)
{
	int i;

	for (i = 0; i < n0 + n1; i++) {
		fake_cpu = i < n0 ? 0 : 1;
		ATF_CHECK_EQ(hit4(7), KINST_HIT_REDIRECT);
	}
	fake_cpu = 0;
}

/*
 * Hit counters per CPU: a site and its subscriber each count on a row of
 * their own per CPU, none in the shared word; LIST and SITES sum them;
 * counters go back with their probes (the chunk with the last), and come
 * out again zeroed, from a chunk with room before a new one; with none to
 * be had, a probe counts in the shared word, and LIST says the same.
 */
ATF_TC_WITHOUT_HEAD(hit_counters_per_cpu);
ATF_TC_BODY(hit_counters_per_cpu, tc)
{
	static uint64_t *all[KINST_HITC_CHUNKS * KINST_HITC_PER];
	struct kinst_probe_info pi[2];
	struct kinst_site_info si[2];
	struct kinst_probe *site, *sub;
	struct kinst_disarm d;
	struct kinst_arm a;
	struct sess s;
	uint64_t *keep;
	uint32_t i, k;

	fake_reset();
	sess_init(&s);
	ATF_REQUIRE_EQ(arm(&s, "f_small", 4, 0, &a), KINST_E_OK);
	site = kinst_ptable_lookup(&engine->table, TEXT_BASE + SMALL_OFF + 4);
	ATF_REQUIRE(site != NULL && (sub = site->next) != NULL);
	ATF_REQUIRE(site->hitc != NULL && sub->hitc != NULL);
	ATF_CHECK(site->hitc != sub->hitc);
	hits_on_cpus(2, 3);
	ATF_CHECK_EQ(site->hitc[0], 2);
	ATF_CHECK_EQ(site->hitc[KINST_HITC_PER], 3);
	ATF_CHECK_EQ(sub->hitc[0], 2);
	ATF_CHECK_EQ(sub->hitc[KINST_HITC_PER], 3);
	ATF_CHECK_EQ(site->hits, 0);
	ATF_CHECK_EQ(sub->hits, 0);
	/* CPU 1's words are lines away from CPU 0's. */
	ATF_CHECK((uintptr_t)&site->hitc[KINST_HITC_PER] / 64 -
	    (uintptr_t)&site->hitc[0] / 64 >= KINST_HITC_PER / 8 - 1);
	ATF_REQUIRE_EQ(kinst_ctl_list(&ctl, &s.cs, pi, 2), 1);
	ATF_CHECK_EQ(pi[0].hits, 5);
	ATF_REQUIRE_EQ(kinst_ctl_sites(&ctl, si, 2), 1);
	ATF_CHECK_EQ(si[0].hits, 5);

	/* Disarmed: both counters back, and their chunk freed. */
	d.probe_id = a.probe_id;
	ATF_REQUIRE_EQ(kinst_ctl_disarm(&ctl, &s.cs, &d), KINST_E_OK);
	for (k = 0; k < KINST_HITC_CHUNKS; k++)
		ATF_CHECK(ctl.hitc[k] == NULL);
	/*
	 * A counter handed out again starts at 0 on every CPU (its chunk
	 * kept by another counter: the subscriber gets the same word).
	 */
	kinst_os_ctl_lock();
	ATF_REQUIRE((keep = kinst_hitc_get(&ctl)) != NULL);
	ATF_REQUIRE((all[0] = kinst_hitc_get(&ctl)) != NULL);
	all[0][0] = all[0][KINST_HITC_PER] = 99;
	kinst_hitc_put(&ctl, all[0]);
	kinst_os_ctl_unlock();
	ATF_REQUIRE_EQ(arm(&s, "f_small", 4, 0, &a), KINST_E_OK);
	site = kinst_ptable_lookup(&engine->table, TEXT_BASE + SMALL_OFF + 4);
	ATF_REQUIRE(site != NULL && site->hitc != NULL);
	ATF_CHECK(site->next != NULL && site->next->hitc == all[0]);
	ATF_REQUIRE_EQ(kinst_ctl_list(&ctl, &s.cs, pi, 2), 1);
	ATF_CHECK_EQ(pi[0].hits, 0);
	ATF_CHECK_EQ(kinst_probe_hits(site, 2), 0);
	d.probe_id = a.probe_id;
	ATF_REQUIRE_EQ(kinst_ctl_disarm(&ctl, &s.cs, &d), KINST_E_OK);
	kinst_os_ctl_lock();
	kinst_hitc_put(&ctl, keep);
	kinst_os_ctl_unlock();

	/* No memory for a chunk: NULL, nothing kept. */
	kinst_os_ctl_lock();
	alloc_fail_after = 0;
	ATF_CHECK(kinst_hitc_get(&ctl) == NULL);
	alloc_fail_after = 1;
	ATF_CHECK(kinst_hitc_get(&ctl) == NULL);
	alloc_fail_after = -1;
	ATF_CHECK(ctl.hitc[0] == NULL);
	/* Every counter taken: the next is NULL, and each is distinct. */
	for (i = 0; i < KINST_NELEM(all); i++)
		ATF_REQUIRE((all[i] = kinst_hitc_get(&ctl)) != NULL);
	ATF_CHECK(kinst_hitc_get(&ctl) == NULL);
	ATF_CHECK(all[0] != all[1] && all[1] != all[KINST_NELEM(all) - 1]);
	/*
	 * Chunk 0 freed, one counter of chunk 1 back: the next get takes
	 * that one, with no allocation, and leaves slot 0 empty.
	 */
	for (i = 0; i <= KINST_HITC_PER; i++)
		kinst_hitc_put(&ctl, all[i]);
	ATF_CHECK(ctl.hitc[0] == NULL && ctl.hitc[1] != NULL);
	alloc_fail_after = 0;
	ATF_CHECK((all[KINST_HITC_PER] = kinst_hitc_get(&ctl)) != NULL);
	alloc_fail_after = -1;
	ATF_CHECK(ctl.hitc[0] == NULL);
	for (i = 0; i < KINST_HITC_PER; i++)
		ATF_REQUIRE((all[i] = kinst_hitc_get(&ctl)) != NULL);
	ATF_CHECK(kinst_hitc_get(&ctl) == NULL);
	kinst_os_ctl_unlock();
	/* ... so a probe armed now counts in its shared word. */
	ATF_REQUIRE_EQ(arm(&s, "f_small", 4, 0, &a), KINST_E_OK);
	site = kinst_ptable_lookup(&engine->table, TEXT_BASE + SMALL_OFF + 4);
	ATF_REQUIRE(site != NULL && (sub = site->next) != NULL);
	ATF_CHECK(site->hitc == NULL && sub->hitc == NULL);
	hits_on_cpus(1, 2);
	ATF_CHECK_EQ(site->hits, 3);
	ATF_REQUIRE_EQ(kinst_ctl_list(&ctl, &s.cs, pi, 2), 1);
	ATF_CHECK_EQ(pi[0].hits, 3);
	kinst_os_ctl_lock();
	for (i = 0; i < KINST_NELEM(all); i++)
		kinst_hitc_put(&ctl, all[i]);
	kinst_os_ctl_unlock();
	for (k = 0; k < KINST_HITC_CHUNKS; k++)
		ATF_CHECK(ctl.hitc[k] == NULL);
	kinst_ctl_session_fini(&ctl, &s.cs);
	check_no_leaks();
}

/*
 * KINST_SITE_SUBS sessions share a site; one more is refused
 * (shared-by-too-many), also when it asks check-only, and gets in once a
 * session has left.  Whole-function arms skip the full site only.
 */
ATF_TC_WITHOUT_HEAD(shared_site_limit);
ATF_TC_BODY(shared_site_limit, tc)
{
	static struct sess ss[KINST_SITE_SUBS + 1];
	struct kinst_arm a;
	uint32_t i;

	fake_reset();
	for (i = 0; i <= KINST_SITE_SUBS; i++)
		sess_init(&ss[i]);
	for (i = 0; i < KINST_SITE_SUBS; i++) {
		ATF_REQUIRE_EQ(arm(&ss[i], "f_small", 4, 0, &a), KINST_E_OK);
		ATF_CHECK_EQ(sessions_at(4), i + 1);
	}
	ATF_CHECK_EQ(arm(&ss[KINST_SITE_SUBS], "f_small", 4, 0, &a),
	    KINST_E_REFUSED);
	ATF_CHECK_EQ(a.refuse_reason, KINST_R_SHARED_FULL);
	ATF_CHECK_STREQ(kinst_reason_name(KINST_R_SHARED_FULL),
	    "shared-by-too-many");
	ATF_REQUIRE_EQ(arm(&ss[KINST_SITE_SUBS], "f_small", 4, KINST_ARM_CHECK,
	    &a), KINST_E_OK);
	ATF_CHECK_EQ(a.refuse_reason, KINST_R_SHARED_FULL);
	ATF_CHECK_EQ(a.narmed, KINST_SITE_SUBS);
	/* Every instruction but the full one. */
	ATF_REQUIRE_EQ(arm(&ss[KINST_SITE_SUBS], "f_small", 0, KINST_ARM_ALL,
	    &a), KINST_E_OK);
	ATF_CHECK_EQ(a.narmed, 4);
	ATF_CHECK_EQ(a.nrefused, 1);
	kinst_ctl_session_fini(&ctl, &ss[KINST_SITE_SUBS].cs);
	kinst_ctl_session_fini(&ctl, &ss[0].cs);
	ATF_CHECK_EQ(text[SMALL_OFF + 4], 0xcc);
	ATF_REQUIRE_EQ(arm(&ss[KINST_SITE_SUBS], "f_small", 4, 0, &a),
	    KINST_E_OK);
	ATF_CHECK_EQ(sessions_at(4), KINST_SITE_SUBS);
	for (i = 1; i <= KINST_SITE_SUBS; i++) {
		ATF_CHECK_EQ(text[SMALL_OFF + 4], 0xcc);
		kinst_ctl_session_fini(&ctl, &ss[i].cs);
	}
	check_text_clean();
	check_no_leaks();
}

/*
 * A --no-optimize subscriber joining a jump site turns it back into an
 * int3 site; a site a --no-optimize subscriber held is optimized once the
 * last of them has left (requeued), unless it already had a detour.
 */
ATF_TC_WITHOUT_HEAD(shared_site_noopt);
ATF_TC_BODY(shared_site_noopt, tc)
{
	struct sess s1, s2;
	struct kinst_arm a, b;
	struct kinst_disarm d;

	fake_reset();
	kinst_ctl_jump_enable(&ctl, JHANDLER, 0, false, 0);
	sess_init(&s1);
	sess_init(&s2);
	ATF_REQUIRE_EQ(arm(&s1, "f_small", 0, 0, &a), KINST_E_OK);
	ATF_REQUIRE_EQ(kinst_ctl_optimize(&ctl), 1);
	ATF_REQUIRE_EQ(text[SMALL_OFF], 0xe9);
	/* An optimizing subscriber keeps the jump. */
	ATF_REQUIRE_EQ(arm(&s2, "f_small", 0, 0, &b), KINST_E_OK);
	ATF_CHECK_EQ(text[SMALL_OFF], 0xe9);
	ATF_CHECK_EQ(kinst_ctl_optimize(&ctl), 0);
	ATF_CHECK_EQ(ctl.njump, 1);
	d.probe_id = b.probe_id;
	ATF_REQUIRE_EQ(kinst_ctl_disarm(&ctl, &s2.cs, &d), KINST_E_OK);
	ATF_CHECK_EQ(text[SMALL_OFF], 0xe9);
	/* A --no-optimize one undoes it, for both. */
	ATF_REQUIRE_EQ(arm(&s2, "f_small", 0, KINST_ARM_NOOPT, &b),
	    KINST_E_OK);
	ATF_CHECK_EQ(text[SMALL_OFF], 0xcc);
	ATF_CHECK(memcmp(text + SMALL_OFF + 1, small_code + 1, 4) == 0);
	ATF_CHECK_EQ(ctl.njump, 0);
	ATF_CHECK_EQ(kinst_ctl_optimize(&ctl), 0);
	kinst_ctl_session_fini(&ctl, &s2.cs);
	/* It had a detour: it stays an int3 site. */
	ATF_CHECK(!kinst_ctl_opt_pending(&ctl));
	ATF_CHECK_EQ(text[SMALL_OFF], 0xcc);
	kinst_ctl_session_fini(&ctl, &s1.cs);
	check_text_clean();

	/* --no-optimize first: the other's group waits for it to leave. */
	sess_init(&s1);
	sess_init(&s2);
	ATF_REQUIRE_EQ(arm(&s2, "f_small", 0, KINST_ARM_NOOPT, &b),
	    KINST_E_OK);
	ATF_REQUIRE_EQ(arm(&s1, "f_small", 0, 0, &a), KINST_E_OK);
	ATF_CHECK_EQ(kinst_ctl_optimize(&ctl), 0);
	ATF_CHECK_EQ(text[SMALL_OFF], 0xcc);
	kinst_ctl_session_fini(&ctl, &s2.cs);
	ATF_CHECK(kinst_ctl_opt_pending(&ctl));
	ATF_CHECK_EQ(kinst_ctl_optimize(&ctl), 1);
	ATF_CHECK_EQ(text[SMALL_OFF], 0xe9);
	kinst_ctl_session_fini(&ctl, &s1.cs);
	check_text_clean();
	check_no_leaks();
}

/*
 * Issue 26, item 6: who holds a module.  A session's first probe in a
 * module is logged (pid, comm, function), its last one's going too; the
 * holders list has one row per (session, module) with its probe count; the
 * kernel itself is never listed.
 */
ATF_TC_WITHOUT_HEAD(module_holders);
ATF_TC_BODY(module_holders, tc)
{
	struct kinst_holder_info h[4];
	struct kinst_arm a;
	struct kinst_disarm d;
	struct sess s1, s2;
	uint32_t id_small;

	fake_reset();
	sess_init(&s1);
	sess_init(&s2);
	s1.cs.pid = 101;
	strcpy(s1.cs.comm, "tracer1");
	s2.cs.pid = 202;
	strcpy(s2.cs.comm, "tracer2");
	ATF_REQUIRE_EQ(arm_in(&s1, "fakemod", "f_small", 0, KINST_ARM_ALL, &a),
	    KINST_E_OK);
	id_small = a.probe_id;
	ATF_CHECK_STREQ(hold_log, "+fakemod 101 tracer1 f_small;");
	/* A second function of the same module: no second line. */
	ATF_REQUIRE_EQ(arm_in(&s1, "fakemod", "f_imm", 0, KINST_ARM_ALL, &a),
	    KINST_E_OK);
	ATF_CHECK_STREQ(hold_log, "+fakemod 101 tracer1 f_small;");
	/* The kernel: never logged, never listed. */
	ATF_REQUIRE_EQ(arm(&s2, "f_fixup", 0, KINST_ARM_ALL, &a), KINST_E_OK);
	ATF_CHECK_STREQ(hold_log, "+fakemod 101 tracer1 f_small;");
	ATF_REQUIRE_EQ(kinst_ctl_holders(&ctl, NULL, h, 4), 1);
	ATF_CHECK_STREQ(h[0].module, "fakemod");
	ATF_CHECK_EQ(h[0].pid, 101);
	ATF_CHECK_STREQ(h[0].comm, "tracer1");
	ATF_CHECK_EQ(h[0].probes, s1.cs.nprobes);
	ATF_CHECK_EQ(kinst_ctl_holders(&ctl, "fakemod", h, 4), 1);
	ATF_CHECK_EQ(kinst_ctl_holders(&ctl, "othermod", h, 4), 0);
	ATF_CHECK_EQ(kinst_ctl_holders(&ctl, "kernel", h, 4), 0);
	/* Dropping one function keeps the module held. */
	d.probe_id = id_small;
	ATF_REQUIRE_EQ(kinst_ctl_disarm(&ctl, &s1.cs, &d), KINST_E_OK);
	ATF_CHECK_STREQ(hold_log, "+fakemod 101 tracer1 f_small;");
	ATF_CHECK_EQ(kinst_ctl_holders(&ctl, "fakemod", h, 4), 1);
	ATF_CHECK_EQ(h[0].probes, s1.cs.nprobes);
	kinst_ctl_session_fini(&ctl, &s1.cs);
	ATF_CHECK_STREQ(hold_log, "+fakemod 101 tracer1 f_small;"
	    "-fakemod 101 tracer1 f_small;");
	ATF_CHECK_EQ(kinst_ctl_holders(&ctl, NULL, h, 4), 0);
	kinst_ctl_session_fini(&ctl, &s2.cs);
	check_text_clean();
	check_no_leaks();
}

/*
 * Holders of two modules at once, with kernel probes in the same session
 * and a second session in one of the modules: one row per (session,
 * module), each with the probes of that session in that module alone.
 */
static const struct kinst_holder_info *
holder_row(const struct kinst_holder_info *h, uint32_t n, const char *module,
    int32_t pid)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (strcmp(h[i].module, module) == 0 && h[i].pid == pid)
			return (&h[i]);
	return (NULL);
}

ATF_TC_WITHOUT_HEAD(module_holders_two_modules);
ATF_TC_BODY(module_holders_two_modules, tc)
{
	const struct kinst_holder_info *r;
	struct kinst_holder_info h[8];
	struct kinst_arm a;
	struct sess s1, s2;
	uint32_t n1, n2, nk, m1, before;

	fake_reset();
	sess_init(&s1);
	sess_init(&s2);
	s1.cs.pid = 101;
	strcpy(s1.cs.comm, "tracer1");
	s2.cs.pid = 101;		/* the same pid, another command */
	strcpy(s2.cs.comm, "tracer2");

	/* s1: f_small in fakemod, f_imm in fakemod2, f_fixup in the kernel. */
	ATF_REQUIRE_EQ(arm_in(&s1, "fakemod", "f_small", 0, KINST_ARM_ALL, &a),
	    KINST_E_OK);
	n1 = s1.cs.nprobes;
	before = s1.cs.nprobes;
	ATF_REQUIRE_EQ(arm_in(&s1, "fakemod2", "f_imm", 0, KINST_ARM_ALL, &a),
	    KINST_E_OK);
	n2 = s1.cs.nprobes - before;
	before = s1.cs.nprobes;
	ATF_REQUIRE_EQ(arm(&s1, "f_fixup", 0, KINST_ARM_ALL, &a), KINST_E_OK);
	nk = s1.cs.nprobes - before;
	ATF_REQUIRE(n1 > 0 && n2 > 0 && nk > 0 && n1 != n2);
	ATF_CHECK_STREQ(hold_log, "+fakemod 101 tracer1 f_small;"
	    "+fakemod2 101 tracer1 f_imm;");

	/* s2: f_small in fakemod2 (fakemod's f_small's addresses). */
	ATF_REQUIRE_EQ(arm_in(&s2, "fakemod2", "f_small", 0, KINST_ARM_ALL, &a),
	    KINST_E_OK);
	m1 = s2.cs.nprobes;
	ATF_REQUIRE_EQ(m1, n1);

	ATF_REQUIRE_EQ(kinst_ctl_holders(&ctl, NULL, h, 8), 3);
	r = holder_row(h, 3, "fakemod", 101);
	ATF_REQUIRE(r != NULL);
	ATF_CHECK_STREQ(r->comm, "tracer1");
	ATF_CHECK_EQ(r->probes, n1);
	r = holder_row(h, 3, "fakemod2", 101);
	ATF_REQUIRE(r != NULL);
	/* Two rows for fakemod2 and pid 101: tracer1's and tracer2's. */
	ATF_CHECK_EQ(h[0].probes + h[1].probes + h[2].probes, n1 + n2 + m1);
	{
		uint32_t i, t1 = 0, t2 = 0;

		for (i = 0; i < 3; i++) {
			if (strcmp(h[i].module, "fakemod2") != 0)
				continue;
			if (strcmp(h[i].comm, "tracer1") == 0)
				t1 = h[i].probes;
			else if (strcmp(h[i].comm, "tracer2") == 0)
				t2 = h[i].probes;
		}
		ATF_CHECK_EQ(t1, n2);
		ATF_CHECK_EQ(t2, m1);
	}
	ATF_CHECK_EQ(kinst_ctl_holders(&ctl, "fakemod", h, 8), 1);
	ATF_CHECK_EQ(h[0].probes, n1);
	ATF_CHECK_EQ(kinst_ctl_holders(&ctl, "fakemod2", h, 8), 2);
	ATF_CHECK_EQ(kinst_ctl_holders(&ctl, "kernel", h, 8), 0);
	/* A short buffer: the count of every row, the first cap filled. */
	ATF_CHECK_EQ(kinst_ctl_holders(&ctl, NULL, h, 1), 3);

	/* s1 ends: only s2's row is left, and the log says which went. */
	kinst_ctl_session_fini(&ctl, &s1.cs);
	ATF_CHECK_EQ(kinst_ctl_holders(&ctl, NULL, h, 8), 1);
	ATF_CHECK_STREQ(h[0].module, "fakemod2");
	ATF_CHECK_STREQ(h[0].comm, "tracer2");
	ATF_CHECK_EQ(h[0].probes, m1);
	ATF_CHECK(strstr(hold_log, "-fakemod 101 tracer1 f_small;") != NULL);
	ATF_CHECK(strstr(hold_log, "-fakemod2 101 tracer1 f_imm;") != NULL);
	kinst_ctl_session_fini(&ctl, &s2.cs);
	ATF_CHECK_EQ(kinst_ctl_holders(&ctl, NULL, h, 8), 0);
	check_text_clean();
	check_no_leaks();
}

/*
 * The FreeBSD shim's trampoline cap (kinst_freebsd.c's accounting, wired
 * into the fake where kinst_fbsd_os.c calls it): every ARM request takes a
 * block before it knows whether its probes get new sites; one whose probes
 * all join existing sites gives its block back unused, which on FreeBSD is
 * unmapped and leaves the cap.  Found live on 15.1: retired instead, each
 * such request kept a block forever, and a loop of count sessions over a
 * traced function reached the 32 MiB cap.  Here the cap is three pages and
 * a second session arms and disarms the first's function 200 times.
 */
static struct kinst_fbsd_tramps fbsd_tramps;
static bool fbsd_admit(uint64_t size) { return (kinst_fbsd_tramp_admit(&fbsd_tramps, size)); }
static void fbsd_retire(uint64_t size) { kinst_fbsd_tramp_retire(&fbsd_tramps, size); }
static void fbsd_cancel(uint64_t size) { kinst_fbsd_tramp_cancel(&fbsd_tramps, size); }

ATF_TC_WITHOUT_HEAD(fbsd_tramp_cap_shared_sites);
ATF_TC_BODY(fbsd_tramp_cap_shared_sites, tc)
{
	struct kinst_arm a;
	struct kinst_disarm d;
	struct sess s1, s2;
	uint64_t live;
	int i;

	fake_reset();
	memset(&fbsd_tramps, 0, sizeof(fbsd_tramps));
	fbsd_tramps.cap = 3 * 4096;
	tramp_admit_hook = fbsd_admit;
	tramp_retire_hook = fbsd_retire;
	tramp_cancel_hook = fbsd_cancel;
	sess_init(&s1);
	sess_init(&s2);
	ATF_REQUIRE_EQ(arm(&s1, "f_small", 0, KINST_ARM_ALL, &a), KINST_E_OK);
	live = fbsd_tramps.live;
	ATF_REQUIRE(live > 0 && live <= 4096);
	for (i = 0; i < 200; i++) {
		ATF_REQUIRE_EQ_MSG(arm(&s2, "f_small", 0, KINST_ARM_ALL, &a),
		    KINST_E_OK, "request %d refused (%ju bytes retired, %ju "
		    "live)", i, (uintmax_t)fbsd_tramps.retired,
		    (uintmax_t)fbsd_tramps.live);
		d.probe_id = a.probe_id;
		ATF_REQUIRE_EQ(kinst_ctl_disarm(&ctl, &s2.cs, &d), KINST_E_OK);
	}
	ATF_CHECK_EQ(fbsd_tramps.refused, 0);
	ATF_CHECK_EQ(fbsd_tramps.retired, 0);
	ATF_CHECK_EQ(fbsd_tramps.live, live);
	/* A request with a new site keeps its block; the end retires both. */
	ATF_REQUIRE_EQ(arm(&s2, "f_imm", 0, KINST_ARM_ALL, &a), KINST_E_OK);
	ATF_CHECK_EQ(fbsd_tramps.live, 2 * live);
	kinst_ctl_session_fini(&ctl, &s2.cs);
	kinst_ctl_session_fini(&ctl, &s1.cs);
	ATF_CHECK_EQ(fbsd_tramps.live, 0);
	ATF_CHECK_EQ(fbsd_tramps.nretired, 2);
	ATF_CHECK_EQ(fbsd_tramps.retired, 2 * live);
	/* The cap is real: two of three pages are kept, a second one is not. */
	sess_init(&s1);
	ATF_REQUIRE_EQ(arm(&s1, "f_small", 0, KINST_ARM_ALL, &a), KINST_E_OK);
	ATF_CHECK_EQ(arm(&s1, "f_imm", 0, KINST_ARM_ALL, &a), KINST_E_NOMEM);
	ATF_CHECK_EQ(fbsd_tramps.refused, 1);
	kinst_ctl_session_fini(&ctl, &s1.cs);
	check_text_clean();
	check_no_leaks();
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, arm_one_disarm_order);
	ATF_TP_ADD_TC(tp, module_holders_two_modules);
	ATF_TP_ADD_TC(tp, fbsd_tramp_cap_shared_sites);
	ATF_TP_ADD_TC(tp, boundaries_never_trusted);
	ATF_TP_ADD_TC(tp, bad_requests);
	ATF_TP_ADD_TC(tp, captures_not_aggregated);
	ATF_TP_ADD_TC(tp, arm_all_and_refusals);
	ATF_TP_ADD_TC(tp, arm_check_only);
	ATF_TP_ADD_TC(tp, probe_limit);
	ATF_TP_ADD_TC(tp, disarm_one_of_group);
	ATF_TP_ADD_TC(tp, name_list);
	ATF_TP_ADD_TC(tp, jump_install_and_remove_order);
	ATF_TP_ADD_TC(tp, shared_site);
	ATF_TP_ADD_TC(tp, hit_counters_per_cpu);
	ATF_TP_ADD_TC(tp, shared_site_limit);
	ATF_TP_ADD_TC(tp, shared_site_noopt);
	ATF_TP_ADD_TC(tp, module_holders);
	ATF_TP_ADD_TC(tp, jump_undone_by_probe_in_window);
	ATF_TP_ADD_TC(tp, jump_not_installed);
	ATF_TP_ADD_TC(tp, jump_single_insn_only);
	return (atf_no_error());
}
