/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The A64 engine on real breakpoints: runs the arm64 program a64_harness
 * (cross-built with aarch64-linux-gnu-gcc) under qemu-aarch64, which
 * delivers its brk as SIGTRAP with the whole register file; see
 * a64_harness.c for what it compares.  The program checks every hit
 * itself and exits 1 on a difference; this test also holds its totals
 * to what the corpus must give.
 */

#include <atf-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

ATF_TC(engine_vs_ground_truth);
ATF_TC_HEAD(engine_vs_ground_truth, tc)
{
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(engine_vs_ground_truth, tc)
{
	char cmd[4096], line[1024];
	long fns = -1, bounds = -1, armed = -1, runs = -1, recs = -1, hits = -1;
	long bad = -1, errs = -1, ool = -1, back = -1, r0 = -1, r1 = -1, r2 = -1,
	    r3 = -1;
	bool ok = false;
	FILE *p;
	int st;

	if (access(A64_HARNESS, X_OK) != 0)
		atf_tc_skip("SKIPPED: %s is not built (aarch64-linux-gnu-gcc: "
		    "gcc-aarch64-linux-gnu)", A64_HARNESS);
	if (system("command -v qemu-aarch64 >/dev/null") != 0)
		atf_tc_skip("SKIPPED: qemu-aarch64 is not installed (qemu-user)");
	snprintf(cmd, sizeof(cmd), "qemu-aarch64 %s 2>&1", A64_HARNESS);
	p = popen(cmd, "r");
	ATF_REQUIRE(p != NULL);
	while (fgets(line, sizeof(line), p) != NULL) {
		fputs(line, stdout);
		if (sscanf(line, "a64 harness: %ld functions, %ld boundaries, %ld "
		    "armed, %ld runs, %ld ground-truth records, %ld engine hits, "
		    "%ld mismatches, %ld harness errors", &fns, &bounds, &armed,
		    &runs, &recs, &hits, &bad, &errs) == 8)
			continue;
		if (sscanf(line, "a64 harness: out of line %ld (branched back "
		    "%ld), resumed by variant %ld %ld %ld %ld", &ool, &back, &r0,
		    &r1, &r2, &r3) == 6)
			continue;
		if (strcmp(line, "a64 harness: OK\n") == 0)
			ok = true;
	}
	st = pclose(p);
	ATF_CHECK_MSG(st == 0, "a64_harness exited with status %d", st);
	ATF_CHECK(ok);
	ATF_CHECK_EQ(bad, 0);
	ATF_CHECK_EQ(errs, 0);
	/* The corpus: 10 hand-written functions, 10 C ones twice. */
	ATF_CHECK_EQ(fns, 30);
	ATF_CHECK_MSG(armed >= bounds * 9 / 10, "armed %ld of %ld", armed, bounds);
	/* Every run of the engine hits what the ground truth recorded. */
	ATF_CHECK_EQ(hits, recs * 4);
	/* Four engine runs a ground truth: near and far, masks or not. */
	ATF_CHECK(ool > 0 && back > 0 && r0 > 0 && r3 > 0);
	/* Variant 0 ends in a brk only far away; 1 and 2 need a masked I or F. */
	ATF_CHECK_EQ(r0, back);
	ATF_CHECK_EQ(r1, 0);
	ATF_CHECK_EQ(r2, 0);
	ATF_CHECK_EQ(r3, 2 * back);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, engine_vs_ground_truth);
	return atf_no_error();
}
