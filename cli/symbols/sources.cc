// SPDX-License-Identifier: BSD-2-Clause
#include "symbols/sources.h"

#include <sys/stat.h>

#include <set>
#include <utility>

#include "symbols/elf_image.h"
#include "base/error.h"
#include "base/regfile.h"
#include "base/live.h"

namespace kinst {

void
add_source_options(CLI::App *app, SourceOptions &o)
{
	app->add_option("--kernel", o.kernel,
	    "Kernel image to read instead of the running kernel (vmlinux, /boot/kernel/kernel)")
	    ->type_name("FILE");
	app->add_option("--module", o.modules,
	    "Kernel module file (.ko) to read; repeatable")
	    ->type_name("FILE")
	    ->allow_extra_args(false);
}

void
load_symbols(const SourceOptions &o, SymbolTable &syms)
{
	if (!o.offline()) {
		load_live_symbols(syms);
		return;
	}
	if (!o.kernel.empty())
		syms.add(std::make_unique<ElfModule>(std::make_unique<ElfImage>(o.kernel), "kernel"));
	// The same file twice (or by two names) is one module.
	std::set<std::pair<dev_t, ino_t>> seen;
	struct stat st;
	if (!o.kernel.empty() && stat(o.kernel.c_str(), &st) == 0)
		seen.insert({st.st_dev, st.st_ino});
	for (const auto &m : o.modules) {
		if (stat(m.c_str(), &st) == 0 && !seen.insert({st.st_dev, st.st_ino}).second)
			continue;
		syms.add(std::make_unique<ElfModule>(std::make_unique<ElfImage>(m), ""));
	}
	// Only list-offsets and resolve read a file of the other instruction
	// set: what probes is for the kernel kinstctl is built for
	// (regfile.h).
	for (size_t i = 0; i < syms.modules().size() && !o.arm64; i++)
		if (syms.module(i).a64() != regfile.a64)
			throw Error(Exit::unsupported_elf, syms.module(i).path() + ": an " +
			    (syms.module(i).a64() ? "AArch64 (arm64)" : "x86-64") +
			    " file, and this kinstctl is built for " + regfile.isa +
			    "'s kernel: only list-offsets and resolve read it");
	if (syms.nfunctions() == 0)
		throw Error(Exit::no_symbols, (o.modules.size() + !o.kernel.empty() == 1 ?
		    syms.module(0).path() + ": " : std::string()) +
		    "no functions (no sized STT_FUNC symbol in an executable section)");
}

} // namespace kinst
