/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * FreeBSD exclusions by name and module-name matching
 * (kmod/freebsd/kinst_freebsd.c).
 */
#include <atf-c.h>
#include <string.h>

#include "x86/kinst_classify.h"
#include "kinst_control.h"
#include "kinst_freebsd.h"

ATF_TC_WITHOUT_HEAD(onfault);
ATF_TC_BODY(onfault, tc)
{
	static const char *const names[] = {
		"copyin", "copyout", "copyinstr", "copyin_nosmap_std",
		"copyin_smap_erms", "copyout_nosmap_erms", "copyinstr_smap",
		"fubyte", "fuword", "fuword16", "fuword32", "fuword64",
		"fueword", "fueword32", "fueword64", "subyte", "suword",
		"suword16", "suword32", "suword64", "casueword", "casueword32",
		"casuword32", "rdmsr_safe", "wrmsr_safe", "copyin.cold",
		/* FreeBSD 15.1's other users (issue 41, finding 3). */
		"futex_xchgl_nosmap", "futex_xchgl_smap", "futex_addl_nosmap",
		"futex_addl_smap", "futex_orl_nosmap", "futex_orl_smap",
		"futex_andl_nosmap", "futex_andl_smap", "futex_xorl_nosmap",
		"futex_xorl_smap", "sgx_encls", "efi_rt_arch_call",
		"efi_rt_fault",
	};
	size_t i;

	for (i = 0; i < KINST_NELEM(names); i++)
		ATF_CHECK_EQ_MSG(kinst_fbsd_func_reason(names[i]),
		    KINST_R_ONFAULT, "%s", names[i]);
}

ATF_TC_WITHOUT_HEAD(excluded);
ATF_TC_BODY(excluded, tc)
{
	static const char *const names[] = {
		"Xbpt", "Xpage", "Xtimerint", "Xfast_syscall", "alltraps",
		"alltraps_noen", "calltrap", "doreti", "doreti_iret",
		"doreti_exit", "fast_syscall_common", "nmi_calltrap",
		"fork_trampoline", "handle_ibrs_entry", "handle_ibrs_exit",
		"trap", "trap_check", "trap_fatal", "trap_pfault",
		"dblfault_handler", "ipi_nmi_handler", "nmi_handle_intr",
		"nmi_call_kdb", "cpustop_handler", "mca_intr", "kdb_trap",
		"kdb_enter",
		"db_trap", "db_command", "gdb_trap", "dtrace_probe",
		"dtrace_invop", "kinst_invop", "owner_mtx", "owner_rm",
		"owner_rw", "owner_sx", "cpu_switch", "cpu_throw", "savectx",
		"resumectx", "disable_wp", "restore_wp", "smp_rendezvous",
		"smp_rendezvous_cpus", "smp_rendezvous_action", "binuptime",
		"sbinuptime", "tsc_get_timecount", "tsc_get_timecount_low",
		"tsc_get_timecount_lfence", "hpet_get_timecount",
		"acpi_timer_get_timecount", "acpi_timer_get_timecount_safe",
		"i8254_get_timecount", "kvm_clock_tc_get_timecount",
		"hyperv_get_timecount", "hyperv_tsc_timecount_lfence",
		"hyperv_tsc_timecount_mfence", "hyperv_tc64_tsc_lfence",
		"hyperv_tc64_rdmsr", "xentimer_get_timecount",
		"xen_fetch_vcpu_time", "pvclock_get_timecount",
		"memcpy", "memcpy_erms", "memcpy_std", "memmove", "memset",
		"memset_erms", "bcopy", "bzero", "__memcpy",
	};
	size_t i;

	int r;

	for (i = 0; i < KINST_NELEM(names); i++) {
		r = kinst_fbsd_func_reason(names[i]);
		/* Every one with its class, none a bare excluded-function. */
		ATF_CHECK_MSG(r != KINST_R_NONE && r != KINST_R_EXCLUDED &&
		    strncmp(kinst_reason_name(r), "excluded-function (",
		    19) == 0, "%s: %d (%s)", names[i], r,
		    kinst_reason_name(r));
	}
}

/* Issue 26, item 5: the class says which list, and why. */
ATF_TC_WITHOUT_HEAD(excluded_classes);
ATF_TC_BODY(excluded_classes, tc)
{
	static const struct {
		const char *name;
		int reason;
	} want[] = {
		{ "Xbpt", KINST_R_EXCL_ENTRY },
		{ "doreti_iret", KINST_R_EXCL_ENTRY },
		{ "trap", KINST_R_EXCL_BREAKPOINT },
		{ "trap_check", KINST_R_EXCL_BREAKPOINT },
		{ "nmi_handle_intr", KINST_R_EXCL_NOINSTR },
		{ "cpustop_handler", KINST_R_EXCL_NOINSTR },
		{ "kdb_trap", KINST_R_EXCL_DEBUGGER },
		{ "dtrace_probe", KINST_R_EXCL_DEBUGGER },
		{ "kinst_invop", KINST_R_EXCL_SELF },
		{ "binuptime", KINST_R_EXCL_HANDLER },
		{ "memcpy_erms", KINST_R_EXCL_HANDLER },
		{ "owner_mtx", KINST_R_EXCL_HANDLER },
		{ "cpu_switch", KINST_R_EXCL_SCHED },
		{ "smp_rendezvous_cpus", KINST_R_EXCL_PATCHING },
		{ "disable_wp", KINST_R_EXCL_PATCHING },
	};
	size_t i;

	for (i = 0; i < KINST_NELEM(want); i++)
		ATF_CHECK_EQ_MSG(kinst_fbsd_func_reason(want[i].name),
		    want[i].reason, "%s: %s", want[i].name,
		    kinst_reason_name(kinst_fbsd_func_reason(want[i].name)));
}

/* Ordinary kernel functions, several chosen to sit next to a prefix. */
ATF_TC_WITHOUT_HEAD(traceable);
ATF_TC_BODY(traceable, tc)
{
	static const char *const names[] = {
		"vm_fault", "vm_fault_trap", "malloc", "uma_zalloc_arg",
		"sys_getpid", "amd64_syscall", "trapsignal", "trap_",
		"traps", "dbuf_read", "dbuf_hold", "kdbx", "dtraceall",
		"copy_file_range", "kern_copy_file_range", "copyfd",
		"sched_switch", "mi_switch", "xpt_action", "ipi_bitmap_handler",
		"memcmp", "bcmp", "fuse_vnop_read", "subr_nothing",
		"binuptime_adjust", "tsc_freq_changed", "cpu_idle",
		"ktrsyscall", "sbintime_compute", "getsbinuptime",
		/* Next to the onfault names: no pcb_onfault of their own. */
		"futex_wake", "linux_futex", "sgx_ioctl", "sgx_get_epc_page",
		"efi_call",
	};
	size_t i;

	for (i = 0; i < KINST_NELEM(names); i++)
		ATF_CHECK_EQ_MSG(kinst_fbsd_func_reason(names[i]),
		    KINST_R_NONE, "%s", names[i]);
}

static void
check_list(const char *const *list, size_t n, const char *what)
{
	size_t i, len;
	const char *star;

	ATF_CHECK(n > 0);
	for (i = 0; i < n; i++) {
		len = strlen(list[i]);
		ATF_CHECK_MSG(len > 0, "%s[%zu] is empty", what, i);
		star = strchr(list[i], '*');
		ATF_CHECK_MSG(star == NULL || star == list[i] + len - 1,
		    "%s: '*' not at the end of %s", what, list[i]);
		ATF_CHECK_MSG(strchr(list[i], '.') == NULL,
		    "%s: %s has a '.', which matching ignores", what, list[i]);
	}
}

ATF_TC_WITHOUT_HEAD(lists_well_formed);
ATF_TC_BODY(lists_well_formed, tc)
{
	size_t i;

	size_t j, k;

	check_list(kinst_fbsd_onfault, kinst_fbsd_nonfault, "onfault");
	for (j = 0; j < kinst_fbsd_nexcluded; j++) {
		check_list(kinst_fbsd_excluded[j].names,
		    kinst_fbsd_excluded[j].n, "excluded");
		ATF_CHECK(kinst_fbsd_excluded[j].reason != KINST_R_EXCLUDED);
		/* No onfault function is shadowed into a mere "excluded". */
		for (i = 0; i < kinst_fbsd_nonfault; i++)
			ATF_CHECK_MSG(!kinst_name_listed(kinst_fbsd_onfault[i],
			    kinst_fbsd_excluded[j].names,
			    kinst_fbsd_excluded[j].n),
			    "%s in both lists", kinst_fbsd_onfault[i]);
		/* A name gets the class of its own list, not an earlier one's. */
		for (k = 0; k < kinst_fbsd_excluded[j].n; k++)
			if (strchr(kinst_fbsd_excluded[j].names[k], '*') == NULL)
				ATF_CHECK_EQ_MSG(kinst_fbsd_func_reason(
				    kinst_fbsd_excluded[j].names[k]),
				    kinst_fbsd_excluded[j].reason, "%s",
				    kinst_fbsd_excluded[j].names[k]);
	}
}

ATF_TC_WITHOUT_HEAD(modname);
ATF_TC_BODY(modname, tc)
{
	ATF_CHECK(kinst_fbsd_modname_match("", "kernel"));
	ATF_CHECK(kinst_fbsd_modname_match("kernel", "kernel"));
	ATF_CHECK(!kinst_fbsd_modname_match("", "zfs.ko"));
	ATF_CHECK(!kinst_fbsd_modname_match("kernel", "zfs.ko"));
	ATF_CHECK(kinst_fbsd_modname_match("zfs", "zfs.ko"));
	ATF_CHECK(kinst_fbsd_modname_match("zfs.ko", "zfs.ko"));
	ATF_CHECK(kinst_fbsd_modname_match("if_em", "if_em.ko"));
	ATF_CHECK(!kinst_fbsd_modname_match("zf", "zfs.ko"));
	ATF_CHECK(!kinst_fbsd_modname_match("zfs.k", "zfs.ko"));
	ATF_CHECK(!kinst_fbsd_modname_match("zfs", "zfsctl.ko"));
	ATF_CHECK(!kinst_fbsd_modname_match("zfs.ko.ko", "zfs.ko"));
	ATF_CHECK(!kinst_fbsd_modname_match("zfs", "kernel"));
	ATF_CHECK(!kinst_fbsd_modname_match("kern", "kernel"));
	ATF_CHECK(kinst_fbsd_modname_match("foo", "foo"));
	ATF_CHECK(kinst_fbsd_is_kernel_file("kernel"));
	ATF_CHECK(!kinst_fbsd_is_kernel_file("kernel.ko"));
	ATF_CHECK(!kinst_fbsd_is_kernel_file(""));
}

ATF_TC_WITHOUT_HEAD(reported_name);
ATF_TC_BODY(reported_name, tc)
{
	char b[KINST_MODNAME_MAX], small[4];

	kinst_fbsd_modname("kernel", b, sizeof(b));
	ATF_CHECK_STREQ(b, "kernel");
	kinst_fbsd_modname("zfs.ko", b, sizeof(b));
	ATF_CHECK_STREQ(b, "zfs");
	kinst_fbsd_modname("if_em.ko", b, sizeof(b));
	ATF_CHECK_STREQ(b, "if_em");
	kinst_fbsd_modname(".ko", b, sizeof(b));
	ATF_CHECK_STREQ(b, ".ko");
	kinst_fbsd_modname("a.ko.ko", b, sizeof(b));
	ATF_CHECK_STREQ(b, "a.ko");
	kinst_fbsd_modname("nodot", b, sizeof(b));
	ATF_CHECK_STREQ(b, "nodot");
	/* Truncated, but always terminated. */
	memset(small, 'x', sizeof(small));
	kinst_fbsd_modname("linux64.ko", small, sizeof(small));
	ATF_CHECK_STREQ(small, "lin");
	/* What is reported names the same file again. */
	kinst_fbsd_modname("zfs.ko", b, sizeof(b));
	ATF_CHECK(kinst_fbsd_modname_match(b, "zfs.ko"));
}

ATF_TP_ADD_TCS(tp)
{
	ATF_TP_ADD_TC(tp, onfault);
	ATF_TP_ADD_TC(tp, excluded);
	ATF_TP_ADD_TC(tp, excluded_classes);
	ATF_TP_ADD_TC(tp, traceable);
	ATF_TP_ADD_TC(tp, lists_well_formed);
	ATF_TP_ADD_TC(tp, modname);
	ATF_TP_ADD_TC(tp, reported_name);
	return (atf_no_error());
}
