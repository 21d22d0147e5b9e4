/* SPDX-License-Identifier: BSD-2-Clause */
#include <atf-c.h>
#include <stddef.h>
#include <sys/ioctl.h>

#include "kinst_abi.h"

ATF_TC_WITHOUT_HEAD(layout);
ATF_TC_BODY(layout, tc)
{
	/* The register file is indexed by x86 register number. */
	ATF_CHECK_EQ(offsetof(struct kinst_regs, gpr[KINST_RSP]), 4 * 8);
	ATF_CHECK_EQ(offsetof(struct kinst_regs, rip), 16 * 8);
	ATF_CHECK_EQ(sizeof(struct kinst_hit_record) % 8, 0);
	ATF_CHECK_EQ(offsetof(struct kinst_hit_record, hdr), 0);
	/* ioctl numbers are distinct and encode the structure size. */
	ATF_CHECK(KINST_IOC_ARM != KINST_IOC_DISARM);
	ATF_CHECK_EQ(_IOC_SIZE(KINST_IOC_ARM), sizeof(struct kinst_arm));
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, layout);
	return (atf_no_error());
}
