// SPDX-License-Identifier: BSD-2-Clause
// C variables by name at an instruction, from DWARF (libdw): every
// variable and parameter in scope there (the function's, its lexical
// blocks', and those of each inlined copy the instruction lies in), its
// type, and its location at that very instruction, compiled with
// dwarf_loc.h.  The frame base and DW_OP_call_frame_cfa come from the
// call frame information at the instruction (.debug_frame, else
// .eh_frame).
#ifndef KINSTCTL_DWARF_VARS_H
#define KINSTCTL_DWARF_VARS_H

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "debuginfo/btf_types.h"
#include "debuginfo/debuginfo.h"
#include "debuginfo/dwarf_loc.h"

namespace kinst {

// Where a variable has a location: [lo, hi) offsets in the function.
struct VarRange {
	uint32_t lo = 0, hi = 0;
	std::string dwarf;	// the location there (loc_text)
};

struct Var {
	std::string name;
	std::string type;	// C spelling ("const char *"), "?" if none
	int64_t size = -1;	// of the type, bytes (-1: unknown)
	uint64_t type_die = 0;	// the type's DIE (its offset in .debug_info), 0: none
	bool param = false;
	// The scope that declares it: "" (the function), "block" (a lexical
	// block), or the name of the inlined function whose copy it belongs to.
	std::string scope;
	unsigned depth = 0;	// scopes between the instruction and it (0: innermost)
	bool shadowed = false;	// an inner scope declares the same name
	// DWARF locates it here (a location or a constant): dwarf is that
	// location in llvm-dwarfdump's spelling, or "DW_AT_const_value".
	bool located = false;
	std::string dwarf;
	std::string kind;	// loc_kind() of that location ("implicit" for a constant)
	Location loc;
	// Empty: a probe can read it here.  Else why not ("optimized out",
	// "not available at this instruction", a compiler refusal).
	std::string reason;
	std::vector<VarRange> ranges;	// with VarQuery::ranges
	// An entry value (loc.entry): the entry's stack pointer, computed at
	// this instruction (the CFA - 8), which frames the activation a probe
	// at the function's entry saved the registers in (EntryCtx).
	LocNodeP entry_frame;
	bool available() const { return reason.empty(); }
};

struct VarQuery {
	bool ranges = false;	// fill Var::ranges
	// DW_OP_addr's operand (a debug address) to the address the probe
	// reads; unset: as it is (offline).
	std::function<bool(uint64_t, uint64_t *, std::string *)> addr;
};

// The variables at f+off, innermost scope first, in declaration order
// within a scope.  false: no debug info for f (DebugInfo said so once).
// Throws Error(Exit::bad_elf) when libdw cannot read the unit's DWARF.
bool vars_at(DebugInfo &d, size_t mi, const Function &f, uint32_t off,
    const VarQuery &q, std::vector<Var> &out);

// A variable's bytes at a hit (little-endian); known[i]: byte i is (a
// piece that was optimized out, a read that faulted, are not).
struct VarBytes {
	std::string bytes;
	std::vector<bool> known;
};

// Formats b as the DWARF type (type_die in dm's debug info) says: signed
// and unsigned integers of their width, bool, char, enums by name,
// pointers in hex, floating point, structs and unions member by member,
// arrays element by element (at most 16; plain char arrays as strings).  Text:
// "3", "0xffff888003a1c000", "{lo=1, hi=<optimized out>}"; JSON: numbers,
// "0x..." strings for pointers, objects, arrays, null where unknown.
void format_value(Dwfl_Module *dm, uint64_t type_die, const VarBytes &b,
    std::string &text, nlohmann::json &j);

// A module's DWARF types behind the Types interface (btf_types.h), so that
// $var expressions are typed as BTF/CTF ones are: members, pointers,
// arrays, casts by name, enumerators.  Ids stand for DIE offsets (0: void).
class DwarfTypes : public Types {
public:
	explicit DwarfTypes(Dwfl_Module *dm);
	~DwarfTypes() override;
	const char *format() const override { return "DWARF"; }
	// The id of the type at a DIE offset (Var::type_die).
	uint32_t id_of(uint64_t die_off) const;
	KINST_TYPES_READER;

protected:
	void list_enumerators(Enumerators &out) const override;

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

// Whether the type (after typedefs and qualifiers) is a signed integer or
// enum; its size in *size (-1: none).  For $var in expressions.
bool type_is_signed(Dwfl_Module *dm, uint64_t type_die, int64_t *size);

} // namespace kinst

#endif
