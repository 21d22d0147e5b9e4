// SPDX-License-Identifier: BSD-2-Clause
// An OS without a kinst module (live.h): no running kernel to read; every
// command works on files given with --kernel/--module (and --btf).
#if !defined(__linux__) && !defined(__FreeBSD__)

#include "base/error.h"
#include "base/live.h"
#include "base/spec.h"

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

std::shared_ptr<Types>
live_types(const std::string &, const std::string &)
{
	throw Error(Exit::live, "no live kernel support on this OS: give --btf FILE");
}

const char *
live_types_format()
{
	return "BTF or CTF";
}

const char *
live_device_missing_hint()
{
	return "no kinst module exists for this OS";
}

int
live_local_clock_stable()
{
	return -1;
}

void
live_raise_reader_priority()
{
}

} // namespace kinst

#endif
