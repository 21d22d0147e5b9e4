/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The A64 emulator against the instructions themselves: runs the arm64
 * program a64_emu_check (cross-built with aarch64-linux-gnu-gcc) under
 * qemu-aarch64, which delivers its brk and faults as signals with the
 * whole register file.
 */

#include <atf-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define	CASES	40000

ATF_TC(emulate_vs_cpu);
ATF_TC_HEAD(emulate_vs_cpu, tc)
{
	atf_tc_set_md_var(tc, "timeout", "300");
}
ATF_TC_BODY(emulate_vs_cpu, tc)
{
	char cmd[4096], line[512];
	long cases = -1, bad = -1, kinds = 0;
	FILE *p;
	int st;

	if (access(A64_EMU_CHECK, X_OK) != 0)
		atf_tc_skip("SKIPPED: %s is not built (aarch64-linux-gnu-gcc: "
		    "gcc-aarch64-linux-gnu)", A64_EMU_CHECK);
	if (system("command -v qemu-aarch64 >/dev/null") != 0)
		atf_tc_skip("SKIPPED: qemu-aarch64 is not installed (qemu-user)");
	snprintf(cmd, sizeof(cmd), "qemu-aarch64 %s %d 2>&1", A64_EMU_CHECK, CASES);
	p = popen(cmd, "r");
	ATF_REQUIRE(p != NULL);
	while (fgets(line, sizeof(line), p) != NULL) {
		char name[64];
		long count;
		fputs(line, stdout);
		if (sscanf(line, "a64 emu: %ld cases, %ld mismatches", &cases, &bad) == 2)
			continue;
		/* "  KIND   COUNT": every kind met often */
		if (sscanf(line, " %63[^0-9] %ld", name, &count) == 2) {
			kinds++;
			ATF_CHECK_MSG(count >= CASES / 20, "%s: %ld cases", name, count);
		}
	}
	st = pclose(p);
	ATF_CHECK_MSG(st == 0, "a64_emu_check exited with status %d", st);
	ATF_CHECK_EQ(cases, CASES);
	ATF_CHECK_EQ(bad, 0);
	ATF_CHECK_EQ(kinds, 17);
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, emulate_vs_cpu);
	return atf_no_error();
}
