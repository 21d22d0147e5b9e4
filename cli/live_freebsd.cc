// SPDX-License-Identifier: BSD-2-Clause
// The running FreeBSD kernel: the kernel file (kern.bootfile) and every
// loaded module's file (kldnext/kldstat), read as ELF; module functions are
// placed at their live addresses with kldsym(2).  Function bytes come from
// the files, and so do the types (their .SUNW_ctf, ctf_types.h); an address
// spec is resolved in the same table.  Not testable on the Linux build host;
// compiled only on FreeBSD.
#ifdef __FreeBSD__

#include <sys/param.h>
#include <sys/linker.h>
#include <sys/sysctl.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "elf_image.h"
#include "error.h"
#include "sources.h"
#include "spec.h"

namespace kinst {

void
load_live_symbols(SymbolTable &syms)
{
	char boot[MAXPATHLEN];
	size_t len = sizeof(boot);
	if (sysctlbyname("kern.bootfile", boot, &len, nullptr, 0) != 0)
		throw Error(Exit::live, std::string("sysctl kern.bootfile: ") + strerror(errno) +
		    " (give the kernel file with --kernel)");
	boot[sizeof(boot) - 1] = '\0';
	for (int id = kldnext(0); id > 0; id = kldnext(id)) {
		struct kld_file_stat st;
		memset(&st, 0, sizeof(st));
		st.version = sizeof(st);
		if (kldstat(id, &st) != 0)
			continue;
		if (strcmp(st.name, "kernel") == 0) {
			syms.add(std::make_unique<ElfModule>(std::make_unique<ElfImage>(boot), "kernel"));
			continue;
		}
		std::string name = module_name_from_path(st.name);
		auto m = std::make_unique<ElfModule>(std::make_unique<ElfImage>(st.pathname), name);
		int fid = id;
		m->relocate([fid](const std::string &sym, uint64_t *addr, uint64_t *size) {
			struct kld_sym_lookup l;
			memset(&l, 0, sizeof(l));
			l.version = sizeof(l);
			l.symname = const_cast<char *>(sym.c_str());
			if (kldsym(fid, KLDSYM_LOOKUP, &l) != 0)
				return false;
			*addr = l.symvalue;
			*size = l.symsize;
			return true;
		});
		syms.add(std::move(m));
	}
	if (syms.modules().empty())
		throw Error(Exit::live, "no loaded kernel files found (give them with --kernel/--module)");
}

std::string
live_types_file(const std::string &module)
{
	if (module.empty() || module == "kernel") {
		char boot[MAXPATHLEN];
		size_t len = sizeof(boot);
		if (sysctlbyname("kern.bootfile", boot, &len, nullptr, 0) != 0)
			throw Error(Exit::live, std::string("sysctl kern.bootfile: ") +
			    strerror(errno) + " (give the types with --btf FILE)");
		boot[sizeof(boot) - 1] = '\0';
		return boot;
	}
	for (int id = kldnext(0); id > 0; id = kldnext(id)) {
		struct kld_file_stat st;
		memset(&st, 0, sizeof(st));
		st.version = sizeof(st);
		if (kldstat(id, &st) == 0 && module_name_from_path(st.name) == module) {
			st.pathname[sizeof(st.pathname) - 1] = '\0';
			return st.pathname;
		}
	}
	throw Error(Exit::live, "module " + module + " is not loaded (give the types "
	    "with --btf FILE)");
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

} // namespace kinst

#elif !defined(__linux__)

#include "error.h"
#include "sources.h"
#include "spec.h"

namespace kinst {

void
load_live_symbols(SymbolTable &)
{
	throw Error(Exit::live, "no live kernel support on this OS: give --kernel/--module");
}

Spec
resolve_address(const Spec &sp)
{
	throw Error(Exit::live, sp.text + ": no live kernel support on this OS to resolve it");
}

} // namespace kinst

#endif
