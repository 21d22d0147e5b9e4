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
#include "kinst_control.h"
#include "kinst_os.h"
#include "kinst_prog.h"
#include "kinst_detour.h"

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
		ATF_CHECK_EQ(pi[i].sessions, pi[i].offset == 4 ? 2 : 1);
		ATF_CHECK_EQ(pi[i].sessions_max, pi[i].offset == 4 ? 2 : 1);
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
			return (pi[i].treatment & ~KINST_PI_TREATMENT);
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
	kinst_ctl_jump_enable(&ctl, JHANDLER, 0x1234, false);
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
	kinst_ctl_jump_enable(&ctl, JHANDLER, 0, false);
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

	kinst_ctl_jump_enable(&ctl, JHANDLER, 0, false);
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
	kinst_ctl_jump_enable(&ctl, JHANDLER, 0, true);
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

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, arm_one_disarm_order);
	ATF_TP_ADD_TC(tp, boundaries_never_trusted);
	ATF_TP_ADD_TC(tp, bad_requests);
	ATF_TP_ADD_TC(tp, captures_not_aggregated);
	ATF_TP_ADD_TC(tp, arm_all_and_refusals);
	ATF_TP_ADD_TC(tp, arm_check_only);
	ATF_TP_ADD_TC(tp, probe_limit);
	ATF_TP_ADD_TC(tp, disarm_one_of_group);
	ATF_TP_ADD_TC(tp, name_list);
	ATF_TP_ADD_TC(tp, jump_install_and_remove_order);
	ATF_TP_ADD_TC(tp, jump_undone_by_probe_in_window);
	ATF_TP_ADD_TC(tp, jump_not_installed);
	ATF_TP_ADD_TC(tp, jump_single_insn_only);
	return (atf_no_error());
}
