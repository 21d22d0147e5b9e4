// SPDX-License-Identifier: BSD-2-Clause
// The running FreeBSD kernel (live.h): the kernel file (kern.bootfile) and
// every loaded module's file (kldnext/kldstat), read as ELF; each module
// placed at its live addresses from the kernel's kldsym(2) answers by
// live_place.h (portable, tested on any host).  Function bytes come from
// the files, and so do the types (their .SUNW_ctf, ctf_types.h); an
// address spec is resolved in the same table.  Only system calls here.
// Compiled on FreeBSD; on other hosts only against the stand-in
// declarations of tests/cli/freebsd_stubs (KINST_LIVE_FREEBSD_STUBS), to
// check that it compiles.
#if defined(__FreeBSD__) || defined(KINST_LIVE_FREEBSD_STUBS)

#include <sys/param.h>
#include <sys/linker.h>
#include <sys/rtprio.h>
#include <sys/sysctl.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>

#include "debuginfo/ctf_types.h"
#include "symbols/elf_image.h"
#include "base/error.h"
#include "base/live.h"
#include "base/spec.h"
#include "symbols/symbols.h"

namespace kinst {

namespace {

// The kernel's file; give: what to give instead, for the message.
std::string
bootfile(const char *give)
{
	char boot[MAXPATHLEN];
	size_t len = sizeof(boot);
	if (sysctlbyname("kern.bootfile", boot, &len, nullptr, 0) != 0)
		throw Error(Exit::live, std::string("sysctl kern.bootfile: ") + strerror(errno) +
		    " (give " + give + ")");
	boot[sizeof(boot) - 1] = '\0';
	return boot;
}

// Calls fn(id, stat) for every loaded file, in linker order, until it
// returns false.
void
for_each_file(const std::function<bool(int, struct kld_file_stat &)> &fn)
{
	for (int id = kldnext(0); id > 0; id = kldnext(id)) {
		struct kld_file_stat st;
		memset(&st, 0, sizeof(st));
		st.version = sizeof(st);
		if (kldstat(id, &st) != 0)
			continue;
		st.name[sizeof(st.name) - 1] = '\0';
		st.pathname[sizeof(st.pathname) - 1] = '\0';
		if (!fn(id, st))
			return;
	}
}

// What the kernel answers for a name in file fid (link_elf_obj.c: the
// first definition of the name; a local one only while the tunable
// debug.link_elf_obj_leak_locals is set, as it is by default).
SymbolLookup
kldsym_lookup(int fid)
{
	return [fid](const std::string &sym, uint64_t *addr, uint64_t *size) {
		struct kld_sym_lookup l;
		memset(&l, 0, sizeof(l));
		l.version = sizeof(l);
		l.symname = const_cast<char *>(sym.c_str());
		if (kldsym(fid, KLDSYM_LOOKUP, &l) != 0)
			return false;
		*addr = l.symvalue;
		*size = l.symsize;
		return true;
	};
}

// The file whose .SUNW_ctf holds the types of module ("" or "kernel": the
// kernel, kern.bootfile).
std::string
types_file(const std::string &module)
{
	if (module.empty() || module == "kernel")
		return bootfile("the types with --btf FILE");
	std::string path;
	for_each_file([&](int, struct kld_file_stat &st) {
		if (module_name_from_path(st.name) == module)
			path = st.pathname;
		return path.empty();
	});
	if (path.empty())
		throw Error(Exit::live, "module " + module + " is not loaded (give the types "
		    "with --btf FILE)");
	return path;
}

} // namespace

void
load_live_symbols(SymbolTable &syms)
{
	std::string boot = bootfile("the kernel file with --kernel");
	for_each_file([&](int id, struct kld_file_stat &st) {
		if (strcmp(st.name, "kernel") == 0) {
			syms.add(std::make_unique<ElfModule>(std::make_unique<ElfImage>(boot), "kernel"));
			return true;
		}
		auto m = std::make_unique<ElfModule>(std::make_unique<ElfImage>(st.pathname),
		    module_name_from_path(st.name));
		m->relocate(kldsym_lookup(id));
		syms.add(std::move(m));
		return true;
	});
	if (syms.modules().empty())
		throw Error(Exit::live, "no loaded kernel files found (give them with --kernel/--module)");
}

// An address spec: the function that contains it among the loaded files'.
Spec
resolve_address(const Spec &sp)
{
	SymbolTable syms;
	load_live_symbols(syms);
	std::vector<SymbolTable::Ref> in = syms.containing(sp.address);
	if (in.empty())
		throw Error(Exit::unknown_function, sp.text + ": no kernel function contains this address");
	const Function &f = syms.function(in[0]);
	Spec r = sp;
	r.is_address = false;
	r.module = syms.module(in[0].module).name();
	r.function = f.name;
	r.has_offset = true;
	r.offset = (uint32_t)(sp.address - f.addr);
	return r;
}

// The CTF in the kernel's or the module's file.
std::shared_ptr<Types>
live_types(const std::string &module, const std::string &)
{
	return std::make_shared<Ctf>(types_file(module));
}

const char *
live_types_format()
{
	return "CTF";
}

const char *
live_device_missing_hint()
{
	return "the kinst module is not loaded (kldload kinsttrace)";
}

int
live_local_clock_stable()
{
	return 1;	// kinst_os_local_ns() is the timecounter, as mono
}

void
live_raise_reader_priority()
{
	// FreeBSD has no per-thread nice: setpriority(2)'s PRIO_PROCESS
	// takes a pid and would renice every thread of kinstctl (and a
	// workload forked later).  rtprio_thread(2) sets one thread's class
	// and level (lwpid 0: the calling thread).  Chosen: the time-sharing
	// class at its best level, RTP_PRIO_NORMAL 0 (PRI_MIN_TIMESHARE).
	// The kernel asks no privilege for that class, only for the realtime
	// and idle ones (kern_resource.c, sys_rtprio_thread()), and a
	// time-sharing thread cannot starve the system as RTP_PRIO_REALTIME
	// could.  It is a hint, not a reservation: ULE recomputes a
	// time-sharing thread's level from its interactivity and the
	// process's nice each clock tick it runs and each time it is queued
	// (sched_ule.c: sched_priority() from sched_ule_clock() and
	// sched_ule_add()), and the reader, asleep in poll(2) most of the
	// time, scores as interactive, near that level anyway.
	struct rtprio rtp;
	memset(&rtp, 0, sizeof(rtp));
	rtp.type = RTP_PRIO_NORMAL;
	rtp.prio = 0;
	(void)rtprio_thread(RTP_SET, 0, &rtp);
}

} // namespace kinst

#endif
