// SPDX-License-Identifier: BSD-2-Clause
// The running Linux kernel: symbols from /proc/kallsyms, function bytes from
// the kinst device (KINST_IOC_TEXT).  Only the kallsyms parser
// (kallsyms.cc) is testable off a live system.
#ifdef __linux__

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include "error.h"
#include "kallsyms.h"
#include "live_device.h"
#include "sources.h"

#include "abi.h"

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
	auto dev = std::make_shared<std::unique_ptr<Device>>();
	TextFetcher fetch = [dev](const std::string &module, const std::string &func,
	    uint64_t addr) -> std::vector<uint8_t> {
		if (!*dev)
			*dev = std::make_unique<Device>(Device::open_for("read live kernel text of " + func));
		std::vector<uint8_t> buf(4096);
		for (int tries = 0; tries < 3; tries++) {
			struct kinst_text t;
			memset(&t, 0, sizeof(t));
			snprintf(t.module, sizeof(t.module), "%s", module.c_str());
			snprintf(t.function, sizeof(t.function), "%s", func.c_str());
			t.buf = (uint64_t)(uintptr_t)buf.data();
			t.cap = (uint32_t)buf.size();
			if (ioctl((*dev)->fd(), KINST_IOC_TEXT, &t) != 0)
				throw Error(Exit::live, module + ":" + func + ": reading live text: " +
				    strerror(errno));
			if (t.addr != addr)
				throw Error(Exit::live, module + ":" + func + ": the kernel resolves this name to " +
				    hexs(t.addr) + ", not " + hexs(addr) +
				    " (a static duplicate: its text cannot be read by name; use --kernel/--module)");
			if (t.size <= t.cap) {
				buf.resize(t.size);
				return buf;
			}
			if (t.size > (64u << 20))
				throw Error(Exit::live, module + ":" + func + ": absurd function size " +
				    std::to_string(t.size));
			buf.resize(t.size);
		}
		throw Error(Exit::live, module + ":" + func + ": function size keeps changing");
	};
	// The module's own verdict (KINST_ARM_CHECK, ABI 1.2): nothing is
	// armed; -1 where the module is older or the request is not answerable.
	VerdictFetcher verdict = [dev](const std::string &module, const std::string &func,
	    uint32_t offset) -> int {
		if (!*dev || ((*dev)->abi_version() & 0xffff) < 2)
			return -1;
		struct kinst_arm a;
		memset(&a, 0, sizeof(a));
		snprintf(a.module, sizeof(a.module), "%s", module.c_str());
		snprintf(a.function, sizeof(a.function), "%s", func.c_str());
		a.offset = offset;
		a.flags = KINST_ARM_CHECK;
		if (ioctl((*dev)->fd(), KINST_IOC_ARM, &a) != 0)
			return -1;
		return (int)a.refuse_reason;
	};
	for (auto &m : modules_from_kallsyms(p, fetch, verdict))
		syms.add(std::move(m));
}

} // namespace kinst

#endif /* __linux__ */
