// SPDX-License-Identifier: BSD-2-Clause
// Variables in scope at an instruction, from DWARF (dwarf_vars.h).
#include "debuginfo/dwarf_vars.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <dwarf.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "base/error.h"
#include "base/regfile.h"
#include "base/text.h"
#include "base/record.h"

namespace kinst {

namespace {

std::string
attr_name(Dwarf_Die *die)
{
	Dwarf_Attribute at;
	const char *n = nullptr;
	if (dwarf_attr_integrate(die, DW_AT_name, &at) != nullptr)
		n = dwarf_formstring(&at);
	return n ? n : "";
}

bool
type_of(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute at;
	return dwarf_attr_integrate(die, DW_AT_type, &at) != nullptr &&
	    dwarf_formref_die(&at, out) != nullptr;
}

// The C spelling of a type: prefix and suffix around a declarator.
void
type_parts(Dwarf_Die *t, std::string &pre, std::string &post, int depth)
{
	if (depth > 16) {
		pre = "...";
		return;
	}
	Dwarf_Die inner;
	bool has = type_of(t, &inner);
	std::string name = attr_name(t);
	switch (dwarf_tag(t)) {
	case DW_TAG_base_type:
	case DW_TAG_typedef:
		pre = name.empty() ? "?" : name;
		return;
	case DW_TAG_structure_type:
		pre = "struct " + (name.empty() ? std::string("<anonymous>") : name);
		return;
	case DW_TAG_union_type:
		pre = "union " + (name.empty() ? std::string("<anonymous>") : name);
		return;
	case DW_TAG_enumeration_type:
		pre = "enum " + (name.empty() ? std::string("<anonymous>") : name);
		return;
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type: {
		std::string p, q;
		if (has)
			type_parts(&inner, p, q, depth + 1);
		else
			p = "void";
		bool fn = !q.empty() && q[0] == '(';
		bool arr = !q.empty() && q[0] == '[';
		if (fn || arr) {
			pre = p + " (*";
			post = ")" + q;
		} else {
			pre = p + " *";
			post = q;
		}
		return;
	}
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
	case DW_TAG_restrict_type:
	case DW_TAG_atomic_type: {
		const char *q = dwarf_tag(t) == DW_TAG_const_type ? "const" :
		    dwarf_tag(t) == DW_TAG_volatile_type ? "volatile" :
		    dwarf_tag(t) == DW_TAG_restrict_type ? "restrict" : "_Atomic";
		std::string p, s;
		if (has)
			type_parts(&inner, p, s, depth + 1);
		else
			p = "void";
		if (!p.empty() && p.back() == '*')
			pre = p + " " + q;
		else
			pre = std::string(q) + " " + p;
		post = s;
		return;
	}
	case DW_TAG_array_type: {
		std::string p, s;
		if (has)
			type_parts(&inner, p, s, depth + 1);
		std::string dims;
		Dwarf_Die sub;
		if (dwarf_child(t, &sub) == 0) {
			do {
				if (dwarf_tag(&sub) != DW_TAG_subrange_type)
					continue;
				Dwarf_Attribute at;
				Dwarf_Word w;
				if (dwarf_attr(&sub, DW_AT_count, &at) && dwarf_formudata(&at, &w) == 0)
					dims += "[" + std::to_string(w) + "]";
				else if (dwarf_attr(&sub, DW_AT_upper_bound, &at) &&
				    dwarf_formudata(&at, &w) == 0)
					dims += "[" + std::to_string(w + 1) + "]";
				else
					dims += "[]";
			} while (dwarf_siblingof(&sub, &sub) == 0);
		}
		pre = p;
		post = dims + s;
		return;
	}
	case DW_TAG_subroutine_type: {
		std::string r, rs;
		if (has)
			type_parts(&inner, r, rs, depth + 1);
		else
			r = "void";
		pre = r;
		post = "(...)" + rs;
		return;
	}
	default:
		pre = name.empty() ? "?" : name;
		return;
	}
}

std::string
type_name(Dwarf_Die *t)
{
	std::string pre, post;
	type_parts(t, pre, post, 0);
	return pre + post;
}

// libdw's operations to dwarf_loc.h's, with entry-value expressions and
// implicit values resolved through the attribute they came from.
LocExpr
convert(Dwarf_Attribute *at, const Dwarf_Op *ops, size_t n, int depth = 0)
{
	LocExpr e;
	for (size_t i = 0; i < n; i++) {
		LocOp o;
		o.atom = ops[i].atom;
		o.n1 = ops[i].number;
		o.n2 = ops[i].number2;
		if ((o.atom == DW_OP_entry_value || o.atom == DW_OP_GNU_entry_value) && depth < 4) {
			Dwarf_Attribute sub;
			Dwarf_Op *sops;
			size_t sn;
			if (dwarf_getlocation_attr(at, &ops[i], &sub) == 0 &&
			    dwarf_getlocation(&sub, &sops, &sn) == 0)
				o.sub = convert(&sub, sops, sn, depth + 1);
		}
		if (o.atom == DW_OP_implicit_value && at != nullptr) {
			Dwarf_Block b;
			if (dwarf_getlocation_implicit_value(at, &ops[i], &b) == 0)
				o.block.assign((const char *)b.data, b.length);
		}
		e.push_back(o);
	}
	return e;
}

// DWARF 5 ops (DW_OP_addrx, DW_OP_constx) that libdw resolves to the
// address itself through .debug_addr: converted to DW_OP_addr/constu so
// that the compiler needs no unit.
void
resolve_indexed(Dwarf_Attribute *at, Dwarf_Op *ops, size_t n, LocExpr &e)
{
	for (size_t i = 0; i < n && i < e.size(); i++) {
		if (e[i].atom != DW_OP_addrx && e[i].atom != DW_OP_GNU_addr_index &&
		    e[i].atom != DW_OP_constx && e[i].atom != DW_OP_GNU_const_index)
			continue;
		Dwarf_Attribute res;
		Dwarf_Word w;
		if (dwarf_getlocation_attr(at, &ops[i], &res) == 0 && dwarf_formudata(&res, &w) == 0) {
			bool addr = e[i].atom == DW_OP_addrx || e[i].atom == DW_OP_GNU_addr_index;
			e[i].atom = addr ? DW_OP_addr : DW_OP_constu;
			e[i].n1 = w;
		}
	}
}

struct Scope {
	Dwarf_Die die;
	std::string label;	// "", "block", inlined function name
};

// The scopes containing pc, innermost first, walked down from the unit
// through the concrete tree (dwarf_getscopes follows an inlined copy into
// its abstract origin and loses the caller's scopes).  f+off: for errors.
std::vector<Scope>
scopes_at(Dwarf_Die *cu, Dwarf_Addr pc, const Function &f, uint32_t off)
{
	std::vector<Scope> sc;
	Dwarf_Die cur = *cu, child;
	for (int guard = 0; guard < 256 && dwarf_child(&cur, &child) == 0; guard++) {
		bool found = false;
		do {
			int tag = dwarf_tag(&child);
			if (tag != DW_TAG_subprogram && tag != DW_TAG_lexical_block &&
			    tag != DW_TAG_inlined_subroutine && tag != DW_TAG_namespace)
				continue;
			if (tag != DW_TAG_namespace) {
				int h = dwarf_haspc(&child, pc);
				if (h < 0)
					throw Error(Exit::bad_elf, f.name + "+" + hex(off) + ": libdw "
					    "cannot read the ranges of a scope: " + dwarf_errmsg(-1));
				if (h == 0)
					continue;
			}
			Scope s;
			s.die = child;
			if (tag == DW_TAG_inlined_subroutine)
				s.label = attr_name(&child);
			else if (tag == DW_TAG_lexical_block)
				s.label = "block";
			if (tag != DW_TAG_namespace)
				sc.insert(sc.begin(), s);	// innermost first
			cur = child;
			found = true;
			break;
		} while (dwarf_siblingof(&child, &child) == 0);
		if (!found)
			break;
	}
	return sc;
}

// What the variables' locations are compiled with at an instruction (pc,
// in the unit's addresses): the frame base and the CFA rule there (env
// points at fb and cfa), and the stack pointer at the function's entry
// (entry_frame; null: entry_why says why).
struct InsnFrame {
	LocExpr fb, cfa;
	LocEnv env;
	LocNodeP entry_frame;
	std::string entry_why;
};

// The frame base: the innermost out-of-line function's.
void
frame_base(std::vector<Scope> &sc, Dwarf_Addr pc, InsnFrame &fr)
{
	for (auto &s : sc) {
		if (dwarf_tag(&s.die) != DW_TAG_subprogram)
			continue;
		Dwarf_Attribute at;
		if (dwarf_attr_integrate(&s.die, DW_AT_frame_base, &at) == nullptr)
			break;
		Dwarf_Op *ops;
		size_t len;
		int k = dwarf_getlocation_addr(&at, pc, &ops, &len, 1);
		if (k > 0) {
			fr.fb = convert(&at, ops, len);
			fr.env.frame_base = &fr.fb;
		} else {
			fr.env.frame_base_why = "the frame base has no location at this instruction";
		}
		break;
	}
}

// The CFA rule at the instruction at addr: .debug_frame's, else .eh_frame's.
void
cfa_rule(Dwfl_Module *dm, uint64_t addr, InsnFrame &fr)
{
	for (int which = 0; which < 2 && fr.env.cfa == nullptr; which++) {
		Dwarf_Addr cbias;
		Dwarf_CFI *cfi = which == 0 ? dwfl_module_dwarf_cfi(dm, &cbias) :
		    dwfl_module_eh_cfi(dm, &cbias);
		if (cfi == nullptr)
			continue;
		Dwarf_Frame *df = nullptr;
		if (dwarf_cfi_addrframe(cfi, addr - cbias, &df) != 0) {
			fr.env.cfa_why = "no call frame information covers this instruction";
			continue;
		}
		Dwarf_Op *ops;
		size_t nops;
		if (dwarf_frame_cfa(df, &ops, &nops) == 0 && nops > 0) {
			fr.cfa = convert(nullptr, ops, nops, 4);
			fr.env.cfa = &fr.cfa;
		} else {
			fr.env.cfa_why = "the CFA is undefined at this instruction";
		}
		free(df);
	}
}

// The stack pointer at the function's entry, as this instruction
// computes it: the CFA less what the call pushed (x86-64's return
// address; nothing on arm64) (entry values).
void
find_entry_frame(InsnFrame &fr)
{
	LocExpr fe;
	LocOp o;
	o.atom = DW_OP_call_frame_cfa;
	fe.push_back(o);
	o.atom = (uint8_t)(DW_OP_lit0 + regfile.call_push);
	fe.push_back(o);
	o.atom = DW_OP_minus;
	fe.push_back(o);
	o.atom = DW_OP_stack_value;
	fe.push_back(o);
	Location fl = compile_location(fe, fr.env);
	if (fl.why.empty() && fl.pieces.size() == 1 && fl.pieces[0].kind == LocPiece::value)
		fr.entry_frame = fl.pieces[0].expr;
	else
		fr.entry_why = fl.why.empty() ? "no CFA" : fl.why;
}

// A variable or parameter DIE's name and type into v (false: not one, a
// declaration, or nameless).
bool
var_of(Dwarf_Die *c, Var &v)
{
	int tag = dwarf_tag(c);
	if (tag != DW_TAG_variable && tag != DW_TAG_formal_parameter)
		return false;
	Dwarf_Attribute at;
	if (dwarf_attr(c, DW_AT_declaration, &at) != nullptr)
		return false;
	v.name = attr_name(c);
	if (v.name.empty())
		return false;
	v.param = tag == DW_TAG_formal_parameter;
	Dwarf_Die t;
	if (type_of(c, &t)) {
		v.type = type_name(&t);
		v.type_die = dwarf_dieoffset(&t);
		Dwarf_Word sz;
		if (dwarf_aggregate_size(&t, &sz) == 0)
			v.size = (int64_t)sz;
	} else {
		v.type = "?";
	}
	return true;
}

// A variable's DW_AT_location (at) at pc, compiled in fr; v.reason says
// why a probe cannot read it there.
void
locate(Dwarf_Attribute *at, Dwarf_Addr pc, const InsnFrame &fr, Var &v)
{
	Dwarf_Op *ops;
	size_t len;
	int k = dwarf_getlocation_addr(at, pc, &ops, &len, 1);
	if (k < 0) {
		v.reason = std::string("unreadable location: ") + dwarf_errmsg(-1);
	} else if (k == 0) {
		v.reason = "not available at this instruction";
	} else {
		LocExpr e = convert(at, ops, len);
		resolve_indexed(at, ops, len, e);
		v.located = true;
		v.dwarf = loc_text(e);
		v.kind = loc_kind(e);
		v.loc = compile_location(e, fr.env);
		if (!v.loc.why.empty())
			v.reason = v.loc.why;
		else if (v.loc.kind() == "empty")
			v.reason = "optimized out here";
		else if (v.loc.entry && !fr.entry_frame)
			v.reason = "an entry value (" + v.loc.describe() + "), and the "
			    "stack pointer at the function's entry is unknown here: " +
			    fr.entry_why;
		else if (v.loc.entry)
			v.entry_frame = fr.entry_frame;
	}
}

// Where a DW_AT_location (at) gives a location in the function at base
// (size bytes; bias: from the unit's addresses to base's), each range
// with its location there.
void
location_ranges(Dwarf_Attribute *at, Dwarf_Addr bias, uint64_t base, uint64_t size,
    std::vector<VarRange> &out)
{
	Dwarf_Addr lbase, start, end;
	Dwarf_Op *lops;
	size_t llen;
	ptrdiff_t o = 0;
	int guard = 0;
	while ((o = dwarf_getlocations(at, o, &lbase, &start, &end, &lops,
	    &llen)) > 0 && guard++ < 100000) {
		uint64_t lo = start + bias, hi = end + bias;
		if (end == (Dwarf_Addr)-1) {
			lo = base;
			hi = base + size;
		}
		if (hi <= base || lo >= base + size || llen == 0)
			continue;
		VarRange r;
		r.lo = (uint32_t)(lo < base ? 0 : lo - base);
		r.hi = (uint32_t)(hi - base > size ? size : hi - base);
		LocExpr e = convert(at, lops, llen);
		resolve_indexed(at, lops, llen, e);
		r.dwarf = loc_text(e);
		out.push_back(r);
	}
}

// A constant (DW_AT_const_value, at): its bytes, little-endian, as wide
// as the type, an implicit value.
void
constant(Dwarf_Attribute *at, const LocEnv &env, Var &v)
{
	Dwarf_Block b;
	Dwarf_Sword sv;
	LocOp op;
	op.atom = DW_OP_implicit_value;
	if (dwarf_formblock(at, &b) == 0) {
		op.block.assign((const char *)b.data, b.length);
	} else if (dwarf_formsdata(at, &sv) == 0) {
		size_t w = v.size > 0 && v.size <= 8 ? (size_t)v.size : 8;
		for (size_t i = 0; i < w; i++)
			op.block.push_back((char)(((uint64_t)sv >> (8 * i)) & 0xff));
	}
	v.located = true;
	v.dwarf = "DW_AT_const_value";
	v.kind = "implicit";
	v.loc = compile_location(LocExpr{op}, env);
}

// Each variable but the innermost of its name is shadowed.
void
mark_shadowed(std::vector<Var> &vars)
{
	std::set<std::string> seen;
	for (auto &v : vars) {
		if (seen.count(v.name))
			v.shadowed = true;
		seen.insert(v.name);
	}
}

} // namespace

bool
vars_at(DebugInfo &d, size_t mi, const Function &f, uint32_t off, const VarQuery &q,
    std::vector<Var> &out)
{
	out.clear();
	Dwfl_Module *dm;
	uint64_t base;
	if (!d.dwarf_function(mi, f, &dm, &base))
		return false;
	uint64_t addr = base + off;
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(dm, addr, &bias);
	if (cu == nullptr)
		return true;	// no unit describes it (assembly)
	Dwarf_Addr pc = addr - bias;
	std::vector<Scope> sc = scopes_at(cu, pc, f, off);
	InsnFrame fr;
	fr.env.addr = q.addr;
	frame_base(sc, pc, fr);
	cfa_rule(dm, addr, fr);
	find_entry_frame(fr);

	unsigned depth = 0;
	for (auto &s : sc) {
		Dwarf_Die c;
		if (dwarf_child(&s.die, &c) != 0) {
			depth++;
			continue;
		}
		do {
			Var v;
			if (!var_of(&c, v))
				continue;
			v.scope = s.label;
			v.depth = depth;
			Dwarf_Attribute at;
			if (dwarf_attr_integrate(&c, DW_AT_location, &at) != nullptr) {
				locate(&at, pc, fr, v);
				if (q.ranges)
					location_ranges(&at, bias, base, f.size, v.ranges);
			} else if (dwarf_attr_integrate(&c, DW_AT_const_value, &at) != nullptr) {
				constant(&at, fr.env, v);
				if (q.ranges)
					v.ranges.push_back(VarRange{0, (uint32_t)f.size, v.dwarf});
			} else {
				v.reason = "optimized out (no location in the DWARF)";
			}
			out.push_back(std::move(v));
		} while (dwarf_siblingof(&c, &c) == 0);
		depth++;
	}
	mark_shadowed(out);
	return true;
}

} // namespace kinst

namespace kinst {

namespace {

bool
die_at(Dwfl_Module *dm, uint64_t off, Dwarf_Die *out)
{
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(dm, &bias);
	return dw != nullptr && off != 0 && dwarf_offdie(dw, off, out) != nullptr;
}

// Through typedefs and qualifiers.
bool
strip(Dwarf_Die *t)
{
	for (int i = 0; i < 32; i++) {
		int tag = dwarf_tag(t);
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
		    tag != DW_TAG_volatile_type && tag != DW_TAG_restrict_type &&
		    tag != DW_TAG_atomic_type)
			return true;
		Dwarf_Die in;
		if (!type_of(t, &in))
			return false;	// void
		*t = in;
	}
	return false;
}

uint64_t
udata(Dwarf_Die *d, unsigned attr, uint64_t dflt)
{
	Dwarf_Attribute at;
	Dwarf_Word w;
	if (dwarf_attr_integrate(d, attr, &at) && dwarf_formudata(&at, &w) == 0)
		return w;
	return dflt;
}

// A member of a struct or union, as fmt_struct (its value) and
// DwarfTypes::members (its Types view) read it.
struct DieMember {
	Dwarf_Die type;
	std::string name;	// "": anonymous
	uint64_t offset;	// bytes (DW_AT_data_member_location)
	uint64_t bits;	// a bitfield's width (0: not one)
	uint64_t bit_offset;	// from the start of the struct or union
};

// The members of a struct or union that have a type, in order.
std::vector<DieMember>
members_of(Dwarf_Die *t)
{
	std::vector<DieMember> out;
	Dwarf_Die m;
	if (dwarf_child(t, &m) != 0)
		return out;
	do {
		if (dwarf_tag(&m) != DW_TAG_member)
			continue;
		DieMember r;
		if (!type_of(&m, &r.type))
			continue;
		r.name = attr_name(&m);
		r.offset = udata(&m, DW_AT_data_member_location, 0);
		r.bits = udata(&m, DW_AT_bit_size, 0);
		r.bit_offset = udata(&m, DW_AT_data_bit_offset, r.offset * 8);
		out.push_back(r);
	} while (dwarf_siblingof(&m, &m) == 0);
	return out;
}

bool
all_known(const VarBytes &b, size_t off, size_t n)
{
	if (off + n > b.bytes.size())
		return false;
	for (size_t i = off; i < off + n; i++)
		if (!b.known[i])
			return false;
	return true;
}

uint64_t
le(const VarBytes &b, size_t off, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n && i < 8; i++)
		v |= (uint64_t)(unsigned char)b.bytes[off + i] << (8 * i);
	return v;
}

constexpr unsigned max_elems = 16;

static void fmt(Dwarf_Die *type, const VarBytes &b, size_t off, int64_t size, int depth,
    std::string &text, nlohmann::json &j);

// fmt() of a base, enumeration, pointer or reference type: the value (an
// enumerator's name when one matches), hex when wider than 8 bytes.
static void
fmt_scalar(Dwarf_Die &t, int tag, const VarBytes &b, size_t off, int64_t size,
    std::string &text, nlohmann::json &j)
{
	auto unknown = [&]() {
		text = "<optimized out>";
		j = nullptr;
	};
	if (size <= 0 || size > 8 || !all_known(b, off, (size_t)size)) {
		if (size > 8 && all_known(b, off, (size_t)size)) {
			text = "0x";
			for (int64_t i = size; i-- > 0;) {
				char h[3];
				snprintf(h, sizeof(h), "%02x", (unsigned char)b.bytes[off + i]);
				text += h;
			}
			j = text;
			return;
		}
		unknown();
		return;
	}
	uint64_t v = le(b, off, (size_t)size);
	unsigned enc = (unsigned)udata(&t, DW_AT_encoding, DW_ATE_unsigned);
	bool sgn = tag == DW_TAG_base_type && (enc == DW_ATE_signed || enc == DW_ATE_signed_char);
	if (tag == DW_TAG_enumeration_type) {
		Dwarf_Die in;
		if (type_of(&t, &in) && strip(&in))
			sgn = udata(&in, DW_AT_encoding, 0) == DW_ATE_signed;
	}
	int64_t sv = (int64_t)v;
	if (sgn && size < 8) {
		unsigned sh = 64 - 8 * (unsigned)size;
		sv = (int64_t)(v << sh) >> sh;
	}
	if (tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type) {
		text = hex(v);
		j = text;
	} else if (tag == DW_TAG_base_type && enc == DW_ATE_boolean) {
		text = v ? "true" : "false";
		j = v != 0;
	} else if (tag == DW_TAG_base_type && enc == DW_ATE_float && (size == 4 || size == 8)) {
		double d;
		if (size == 4) {
			float f;
			uint32_t u = (uint32_t)v;
			memcpy(&f, &u, 4);
			d = f;
		} else {
			memcpy(&d, &v, 8);
		}
		char buf[40];
		snprintf(buf, sizeof(buf), "%g", d);
		text = buf;
		j = d;
	} else {
		text = sgn ? std::to_string(sv) : std::to_string(v);
		if (sgn)
			j = sv;
		else
			j = v;
		if (tag == DW_TAG_enumeration_type) {
			Dwarf_Die e;
			if (dwarf_child(&t, &e) == 0) {
				do {
					if (dwarf_tag(&e) != DW_TAG_enumerator)
						continue;
					Dwarf_Attribute at;
					Dwarf_Sword cv;
					if (dwarf_attr(&e, DW_AT_const_value, &at) &&
					    dwarf_formsdata(&at, &cv) == 0 &&
					    (uint64_t)cv == (sgn ? (uint64_t)sv : v)) {
						text = attr_name(&e);
						j = text;
						break;
					}
				} while (dwarf_siblingof(&e, &e) == 0);
			}
		}
	}
}

// fmt() of a struct or union: every member, bitfields from their bits.
static void
fmt_struct(Dwarf_Die &t, const VarBytes &b, size_t off, int depth, std::string &text,
    nlohmann::json &j)
{
	text = "{";
	j = nlohmann::json::object();
	bool first = true;
	for (DieMember &m : members_of(&t)) {
		std::string mtext;
		nlohmann::json mj;
		if (m.bits) {
			uint64_t bo = m.bit_offset;
			size_t first_byte = (size_t)(bo / 8), nbytes = (size_t)((bo % 8 + m.bits + 7) / 8);
			if (nbytes <= 8 && all_known(b, off + first_byte, nbytes)) {
				uint64_t v = le(b, off + first_byte, nbytes) >> (bo % 8);
				if (m.bits < 64)
					v &= (1ull << m.bits) - 1;
				mtext = std::to_string(v);
				mj = v;
			} else {
				mtext = "<optimized out>";
				mj = nullptr;
			}
		} else {
			fmt(&m.type, b, off + m.offset, -1, depth + 1, mtext, mj);
		}
		std::string name = m.name.empty() ? "<anonymous>" : m.name;
		text += (first ? "" : ", ") + name + "=" + mtext;
		j[name] = mj;
		first = false;
	}
	text += "}";
}

// fmt() of an array: a plain char array as text, else its elements (at
// most max_elems).
static void
fmt_array(Dwarf_Die &t, const VarBytes &b, size_t off, int64_t size, int depth,
    std::string &text, nlohmann::json &j)
{
	auto unknown = [&]() {
		text = "<optimized out>";
		j = nullptr;
	};
	Dwarf_Die et;
	if (!type_of(&t, &et)) {
		unknown();
		return;
	}
	Dwarf_Die es = et;
	strip(&es);
	Dwarf_Word esz = 0;
	if (dwarf_aggregate_size(&et, &esz) != 0 || esz == 0 || size <= 0) {
		unknown();
		return;
	}
	uint64_t n = (uint64_t)size / esz;
	// Plain char arrays are text; unsigned/signed char arrays bytes.
	bool is_char = dwarf_tag(&es) == DW_TAG_base_type && esz == 1 &&
	    attr_name(&es) == "char";
	if (is_char && all_known(b, off, (size_t)n)) {
		std::string s = b.bytes.substr(off, (size_t)n);
		s = s.substr(0, s.find('\0'));
		text = c_quote(s);
		j = s;
		return;
	}
	text = "[";
	j = nlohmann::json::array();
	for (uint64_t i = 0; i < n && i < max_elems; i++) {
		std::string et_text;
		nlohmann::json ej;
		fmt(&et, b, off + (size_t)(i * esz), (int64_t)esz, depth + 1, et_text, ej);
		text += (i ? ", " : "") + et_text;
		j.push_back(ej);
	}
	if (n > max_elems)
		text += ", ...";
	text += "]";
}

void
fmt(Dwarf_Die *type, const VarBytes &b, size_t off, int64_t size, int depth,
    std::string &text, nlohmann::json &j)
{
	Dwarf_Die t = *type;
	if (depth > 8 || !strip(&t)) {
		text = "?";
		j = nullptr;
		return;
	}
	Dwarf_Word sz;
	if (size < 0 && dwarf_aggregate_size(&t, &sz) == 0)
		size = (int64_t)sz;
	int tag = dwarf_tag(&t);
	auto unknown = [&]() {
		text = "<optimized out>";
		j = nullptr;
	};
	switch (tag) {
	case DW_TAG_base_type:
	case DW_TAG_enumeration_type:
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
		fmt_scalar(t, tag, b, off, size, text, j);
		return;
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
		fmt_struct(t, b, off, depth, text, j);
		return;
	case DW_TAG_array_type:
		fmt_array(t, b, off, size, depth, text, j);
		return;
	default:
		if (size > 0 && size <= 8 && all_known(b, off, (size_t)size)) {
			text = hex(le(b, off, (size_t)size));
			j = text;
			return;
		}
		unknown();
		return;
	}
}

} // namespace

void
format_value(Dwfl_Module *dm, uint64_t type_die, const VarBytes &b, std::string &text,
    nlohmann::json &j)
{
	Dwarf_Die t;
	if (!die_at(dm, type_die, &t)) {
		text = "?";
		j = nullptr;
		return;
	}
	fmt(&t, b, 0, -1, 0, text, j);
}

bool
type_is_signed(Dwfl_Module *dm, uint64_t type_die, int64_t *size)
{
	*size = -1;
	Dwarf_Die t;
	if (!die_at(dm, type_die, &t) || !strip(&t))
		return false;
	Dwarf_Word sz;
	if (dwarf_aggregate_size(&t, &sz) == 0)
		*size = (int64_t)sz;
	if (dwarf_tag(&t) == DW_TAG_enumeration_type) {
		Dwarf_Die in;
		return type_of(&t, &in) && strip(&in) && udata(&in, DW_AT_encoding, 0) == DW_ATE_signed;
	}
	if (dwarf_tag(&t) != DW_TAG_base_type)
		return false;
	unsigned enc = (unsigned)udata(&t, DW_AT_encoding, 0);
	return enc == DW_ATE_signed || enc == DW_ATE_signed_char;
}

} // namespace kinst

namespace kinst {

struct DwarfTypes::Impl {
	Dwfl_Module *dm;
	mutable std::vector<uint64_t> offs{0};	// id -> DIE offset
	mutable std::map<uint64_t, uint32_t> ids;
	mutable bool indexed = false;
	mutable std::map<std::string, uint64_t> tagged, named;	// "struct x" / "union x"; typedefs, base types
	mutable std::map<std::string, uint64_t> funcs;	// subprograms (a definition first)
	bool die(uint32_t id, Dwarf_Die *out) const
	{
		return id != 0 && id < offs.size() && die_at(dm, offs[id], out);
	}
	uint32_t id(Dwarf_Die *d) const
	{
		uint64_t o = dwarf_dieoffset(d);
		auto it = ids.find(o);
		if (it != ids.end())
			return it->second;
		offs.push_back(o);
		return ids[o] = (uint32_t)(offs.size() - 1);
	}
	void index() const
	{
		if (indexed)
			return;
		indexed = true;
		Dwarf_Die *cu = nullptr;
		Dwarf_Addr bias;
		while ((cu = dwfl_module_nextcu(dm, cu, &bias)) != nullptr) {
			Dwarf_Die c;
			if (dwarf_child(cu, &c) != 0)
				continue;
			do {
				int tag = dwarf_tag(&c);
				std::string n = attr_name(&c);
				if (n.empty())
					continue;
				Dwarf_Attribute at;
				bool decl = dwarf_attr(&c, DW_AT_declaration, &at) != nullptr;
				uint64_t o = dwarf_dieoffset(&c);
				if ((tag == DW_TAG_structure_type || tag == DW_TAG_union_type) && !decl)
					tagged.emplace((tag == DW_TAG_union_type ? "union " : "struct ") + n, o);
				else if (tag == DW_TAG_enumeration_type && !decl)
					tagged.emplace("enum " + n, o);
				else if (tag == DW_TAG_typedef || tag == DW_TAG_base_type)
					named.emplace(n, o);
				else if (tag == DW_TAG_subprogram && (!decl || !funcs.count(n)))
					funcs[n] = o;
			} while (dwarf_siblingof(&c, &c) == 0);
		}
	}
};

DwarfTypes::DwarfTypes(Dwfl_Module *dm) : impl_(std::make_unique<Impl>())
{
	impl_->dm = dm;
	path_ = "DWARF";
}

DwarfTypes::~DwarfTypes() = default;

uint32_t
DwarfTypes::id_of(uint64_t die_off) const
{
	Dwarf_Die d;
	if (!die_at(impl_->dm, die_off, &d))
		return 0;
	return impl_->id(&d);
}

uint32_t
DwarfTypes::resolve(uint32_t id) const
{
	Dwarf_Die d;
	if (!impl_->die(id, &d))
		return 0;
	if (!strip(&d))
		return 0;
	return impl_->id(&d);
}

Types::Kind
DwarfTypes::kind(uint32_t id) const
{
	Dwarf_Die d;
	if (!impl_->die(id, &d) || !strip(&d))
		return Kind::void_;
	switch (dwarf_tag(&d)) {
	case DW_TAG_base_type: {
		unsigned enc = (unsigned)udata(&d, DW_AT_encoding, 0);
		return enc == DW_ATE_float ? Kind::floating : Kind::integer;
	}
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type: return Kind::pointer;
	case DW_TAG_enumeration_type: return Kind::enumeration;
	case DW_TAG_structure_type: return Kind::structure;
	case DW_TAG_union_type: return Kind::union_;
	case DW_TAG_array_type: return Kind::array;
	case DW_TAG_subroutine_type: return Kind::function;
	default: return Kind::other;
	}
}

int64_t
DwarfTypes::size(uint32_t id) const
{
	Dwarf_Die d;
	Dwarf_Word w;
	if (!impl_->die(id, &d) || !strip(&d) || dwarf_aggregate_size(&d, &w) != 0)
		return -1;
	return (int64_t)w;
}

bool
DwarfTypes::is_signed(uint32_t id) const
{
	if (id == 0 || id >= impl_->offs.size())
		return false;
	int64_t sz;
	return type_is_signed(impl_->dm, impl_->offs[id], &sz);
}

uint32_t
DwarfTypes::pointee(uint32_t id) const
{
	Dwarf_Die d, in;
	if (!impl_->die(id, &d) || !strip(&d) || !type_of(&d, &in))
		return 0;
	return impl_->id(&in);
}

uint32_t
DwarfTypes::array_len(uint32_t id) const
{
	Dwarf_Die d, sub;
	if (!impl_->die(id, &d) || !strip(&d) || dwarf_tag(&d) != DW_TAG_array_type ||
	    dwarf_child(&d, &sub) != 0)
		return 0;
	do {
		if (dwarf_tag(&sub) != DW_TAG_subrange_type)
			continue;
		uint64_t n = udata(&sub, DW_AT_count, 0);
		if (n == 0) {
			Dwarf_Attribute at;
			Dwarf_Word w;
			if (dwarf_attr(&sub, DW_AT_upper_bound, &at) && dwarf_formudata(&at, &w) == 0)
				n = w + 1;
		}
		return (uint32_t)n;
	} while (dwarf_siblingof(&sub, &sub) == 0);
	return 0;
}

std::string
DwarfTypes::name(uint32_t id) const
{
	Dwarf_Die d;
	if (!impl_->die(id, &d))
		return "void";
	return type_name(&d);
}

Types::Func
DwarfTypes::func(const std::string &name) const
{
	impl_->index();
	auto it = impl_->funcs.find(name);
	Dwarf_Die d, c, t;
	if (it == impl_->funcs.end() || !die_at(impl_->dm, it->second, &d))
		throw Error(Exit::unknown_function, name + ": no such function in the DWARF");
	Func f;
	f.name = name;
	Dwarf_Attribute at;
	if (dwarf_attr_integrate(&d, DW_AT_type, &at) != nullptr && dwarf_formref_die(&at, &t) != nullptr)
		f.ret = impl_->id(&t);
	if (dwarf_child(&d, &c) == 0) {
		do {
			if (dwarf_tag(&c) == DW_TAG_unspecified_parameters)
				f.variadic = true;
			if (dwarf_tag(&c) != DW_TAG_formal_parameter)
				continue;
			Param p;
			p.name = attr_name(&c);
			p.type = 0;
			if (dwarf_attr_integrate(&c, DW_AT_type, &at) != nullptr &&
			    dwarf_formref_die(&at, &t) != nullptr)
				p.type = impl_->id(&t);
			f.params.push_back(p);
		} while (dwarf_siblingof(&c, &c) == 0);
	}
	return f;
}

uint32_t
DwarfTypes::find_tagged(const std::string &tag, bool is_union) const
{
	impl_->index();
	auto it = impl_->tagged.find((is_union ? "union " : "struct ") + tag);
	if (it == impl_->tagged.end())
		return 0;
	return id_of(it->second);
}

uint32_t
DwarfTypes::find_named(const std::string &name) const
{
	impl_->index();
	auto it = impl_->named.find(name);
	if (it == impl_->named.end())
		return 0;
	return id_of(it->second);
}

bool
DwarfTypes::members(uint32_t id, std::vector<RawMember> &out) const
{
	Dwarf_Die d;
	if (!impl_->die(id, &d) || !strip(&d))
		return false;
	int tag = dwarf_tag(&d);
	if (tag != DW_TAG_structure_type && tag != DW_TAG_union_type)
		return false;
	for (DieMember &m : members_of(&d)) {
		RawMember r;
		r.name = m.name;
		r.type = impl_->id(&m.type);
		r.bitfield = (uint32_t)m.bits;
		r.bit_offset = m.bit_offset;
		out.push_back(r);
	}
	return true;
}

void
DwarfTypes::list_enumerators(Enumerators &out) const
{
	impl_->index();
	for (const auto &t : impl_->tagged) {
		if (t.first.compare(0, 5, "enum ") != 0)
			continue;
		Dwarf_Die d, e;
		if (!die_at(impl_->dm, t.second, &d) || dwarf_child(&d, &e) != 0)
			continue;
		uint32_t id = impl_->id(&d);
		do {
			Dwarf_Attribute at;
			Dwarf_Sword v;
			if (dwarf_tag(&e) == DW_TAG_enumerator &&
			    dwarf_attr(&e, DW_AT_const_value, &at) && dwarf_formsdata(&at, &v) == 0)
				out.emplace(attr_name(&e), std::make_pair((int64_t)v, id));
		} while (dwarf_siblingof(&e, &e) == 0);
	}
}

} // namespace kinst
