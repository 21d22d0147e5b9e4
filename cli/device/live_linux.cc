// SPDX-License-Identifier: BSD-2-Clause
// The running Linux kernel (live.h): symbols from /proc/kallsyms, function
// bytes and the module's verdicts from the kinst device (session.h), types
// from /sys/kernel/btf, the reader thread's nice value.  Only the kallsyms
// parser (kallsyms.cc) is testable off a live system.
#ifdef __linux__

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <dirent.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include "debuginfo/btf_types.h"
#include "base/error.h"
#include "symbols/kallsyms.h"
#include "base/live.h"
#include "device/session.h"
#include "base/spec.h"
#include "base/text.h"

#include "base/abi.h"

namespace kinst {

namespace {

const char *const kallsyms_path = "/proc/kallsyms";

std::string
hexs(uint64_t v)
{
	char b[24];
	snprintf(b, sizeof(b), "0x%llx", (unsigned long long)v);
	return b;
}

// A kallsyms name as the device's request holds it (longer ones cut, as
// the kernel's own buffers would).
std::string
request_name(const std::string &s, size_t cap)
{
	return s.size() < cap ? s : s.substr(0, cap - 1);
}

// The split BTF (on base) of the loaded module that has a function func,
// or null: each of dir's files but vmlinux.
std::shared_ptr<Btf>
module_btf_with(const std::string &dir, const std::shared_ptr<Btf> &base,
    const std::string &func)
{
	DIR *d = opendir(dir.c_str());
	if (d == nullptr)
		return nullptr;
	std::shared_ptr<Btf> found;
	while (struct dirent *de = readdir(d)) {
		std::string m = de->d_name;
		if (m == "." || m == ".." || m == "vmlinux")
			continue;
		try {
			auto mb = std::make_shared<Btf>(dir + m, base);
			if (mb->has_func(func)) {
				found = mb;
				break;
			}
		} catch (const Error &) {
		}
	}
	closedir(d);
	return found;
}

} // namespace

void
load_live_symbols(SymbolTable &syms)
{
	std::ifstream in(kallsyms_path);
	if (!in)
		throw Error(Exit::live, std::string(kallsyms_path) + ": " + strerror(errno) +
		    " (or give the kernel and modules as files with --kernel/--module)");
	KallsymsParse p = parse_kallsyms(in);
	if (p.entries.empty())
		throw Error(Exit::live, std::string(kallsyms_path) + ": no symbols");
	if (p.all_zero)
		throw Error(Exit::live, std::string(kallsyms_path) +
		    ": addresses are hidden (run as root, or lower the kernel.kptr_restrict sysctl)");

	// One device for every module, opened on first use.
	auto dev = std::make_shared<std::unique_ptr<Session>>();
	TextFetcher fetch = [dev](const std::string &module, const std::string &func,
	    uint64_t addr) -> std::vector<uint8_t> {
		if (!*dev)
			*dev = std::make_unique<Session>(Session::open("read live kernel text of " + func));
		std::vector<uint8_t> buf(4096);
		for (int tries = 0; tries < 3; tries++) {
			uint64_t at = 0;
			uint32_t size = 0;
			if (!(*dev)->text(request_name(module, KINST_MODNAME_MAX),
			    request_name(func, KINST_NAME_MAX), buf, &at, &size))
				throw Error(Exit::live, module + ":" + func + ": reading live text: " +
				    strerror(errno));
			if (at != addr)
				throw Error(Exit::live, module + ":" + func + ": the kernel resolves this name to " +
				    hexs(at) + ", not " + hexs(addr) +
				    " (a static duplicate: its text cannot be read by name; use --kernel/--module)");
			if (size <= buf.size()) {
				buf.resize(size);
				return buf;
			}
			if (size > (64u << 20))
				throw Error(Exit::live, module + ":" + func + ": absurd function size " +
				    std::to_string(size));
			buf.resize(size);
		}
		throw Error(Exit::live, module + ":" + func + ": function size keeps changing");
	};
	// The module's own verdict (KINST_ARM_CHECK, ABI 1.2): nothing is
	// armed; -1 where the module is older or the request is not answerable.
	VerdictFetcher verdict = [dev](const std::string &module, const std::string &func,
	    uint32_t offset, uint32_t *sessions) -> int {
		if (!*dev || !(*dev)->has(Feature::arm_check))
			return -1;
		return (*dev)->check(request_name(module, KINST_MODNAME_MAX),
		    request_name(func, KINST_NAME_MAX), offset, sessions);
	};
	for (auto &m : modules_from_kallsyms(p, fetch, verdict))
		syms.add(std::move(m));
}

// An address spec: the function that contains it in /proc/kallsyms.
Spec
resolve_address(const Spec &sp)
{
	std::ifstream in(kallsyms_path);
	if (!in)
		throw Error(Exit::live, "/proc/kallsyms: cannot read it to resolve " + sp.text);
	KallsymsParse p = parse_kallsyms(in);
	if (p.all_zero)
		throw Error(Exit::live, "/proc/kallsyms: addresses are hidden (kptr_restrict); run as root");
	const KallsymsEntry *best = nullptr;
	for (const auto &e : p.entries) {
		if (e.type != 't' && e.type != 'T')
			continue;
		if (e.addr <= sp.address && (best == nullptr || e.addr > best->addr))
			best = &e;
	}
	if (best == nullptr || sp.address - best->addr >= (1ull << 20))
		throw Error(Exit::unknown_function, sp.text + ": no kernel function contains this address");
	Spec r = sp;
	r.is_address = false;
	r.module = best->module.empty() ? "kernel" : best->module;
	r.function = best->name;
	r.has_offset = true;
	r.offset = (uint32_t)(sp.address - best->addr);
	return r;
}

// vmlinux's BTF, or a module's split on top of it.
std::shared_ptr<Types>
live_types(const std::string &module, const std::string &func)
{
	const std::string dir = "/sys/kernel/btf/";
	struct stat st;
	if (stat((dir + "vmlinux").c_str(), &st) != 0)
		throw Error(Exit::live, dir + "vmlinux: not found (a kernel built "
		    "without CONFIG_DEBUG_INFO_BTF); give the types with --btf FILE");
	std::shared_ptr<Btf> base = std::make_shared<Btf>(dir + "vmlinux");
	if (module.empty() || module == "kernel") {
		// A module's function named without MODULE: (the resolver
		// finds it in the module).
		if (module.empty() && !func.empty() && !base->has_func(func))
			if (auto mb = module_btf_with(dir, base, func))
				return mb;
		return base;
	}
	if (stat((dir + module).c_str(), &st) != 0)
		throw Error(Exit::live, dir + module + ": not found (module " +
		    module + " has no BTF, or is not loaded); give --btf FILE");
	return std::make_shared<Btf>(dir + module, base);
}

const char *
live_types_format()
{
	return "BTF";
}

const char *
live_device_missing_hint()
{
	return "the kinst module is not loaded (insmod kinst.ko)";
}

int
live_local_clock_stable()
{
	// The header of the file (the value is in its first lines; the rest,
	// per CPU, can be long).  Root only, debugfs mounted: else -1.
	for (const char *path : { "/sys/kernel/debug/sched/debug", "/proc/sched_debug" }) {
		std::ifstream f(path);
		if (!f)
			continue;
		std::string text(4096, '\0');
		f.read(&text[0], (std::streamsize)text.size());
		text.resize((size_t)f.gcount());
		return sched_clock_stable_in(text);
	}
	return -1;
}

void
live_raise_reader_priority()
{
	// Nice -10 for this thread alone: Linux's PRIO_PROCESS takes a
	// thread id (the process's id would renice its main thread).  Needs
	// CAP_SYS_NICE, which a tracer running as root has; without it the
	// reader runs at the process's priority.
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), -10);
}

} // namespace kinst

#endif /* __linux__ */
