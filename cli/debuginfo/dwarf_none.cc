// SPDX-License-Identifier: BSD-2-Clause
// dwarf_vars.h for a kinstctl built without libdw (KINST_WITH_LIBDW=OFF):
// DebugInfo never finds DWARF there, so no variable is ever located and
// no DWARF type graph is ever made; the callers already handle "no DWARF"
// (vars_at answering false) as they do for a kernel without debug info.
#include "debuginfo/dwarf_vars.h"

#include "base/error.h"

namespace kinst {

bool
vars_at(DebugInfo &, size_t, const Function &, uint32_t, const VarQuery &,
    std::vector<Var> &out)
{
	out.clear();
	return false;
}

void
format_value(Dwfl_Module *, uint64_t, const VarBytes &, std::string &text, nlohmann::json &j)
{
	text = "?";
	j = nullptr;
}

bool
type_is_signed(Dwfl_Module *, uint64_t, int64_t *size)
{
	*size = -1;
	return false;
}

struct DwarfTypes::Impl {};

DwarfTypes::DwarfTypes(Dwfl_Module *)
{
	throw Error(Exit::internal, "DWARF types: this kinstctl was built without libdw");
}

DwarfTypes::~DwarfTypes() = default;
uint32_t DwarfTypes::id_of(uint64_t) const { return 0; }
uint32_t DwarfTypes::resolve(uint32_t) const { return 0; }
Types::Kind DwarfTypes::kind(uint32_t) const { return Kind::other; }
int64_t DwarfTypes::size(uint32_t) const { return -1; }
bool DwarfTypes::is_signed(uint32_t) const { return false; }
uint32_t DwarfTypes::pointee(uint32_t) const { return 0; }
uint32_t DwarfTypes::array_len(uint32_t) const { return 0; }
std::string DwarfTypes::name(uint32_t) const { return "?"; }
uint32_t DwarfTypes::find_tagged(const std::string &, bool) const { return 0; }
uint32_t DwarfTypes::find_named(const std::string &) const { return 0; }
bool DwarfTypes::members(uint32_t, std::vector<RawMember> &) const { return false; }
void DwarfTypes::list_enumerators(Enumerators &) const {}

Types::Func
DwarfTypes::func(const std::string &name) const
{
	throw Error(Exit::unknown_function, name + ": no DWARF (built without libdw)");
}

} // namespace kinst
