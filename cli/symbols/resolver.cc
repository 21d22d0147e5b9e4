// SPDX-License-Identifier: BSD-2-Clause
#include "symbols/resolver.h"

#include <algorithm>
#include <cstdio>

#include "base/error.h"

namespace kinst {

namespace {

std::string
hex(uint64_t v)
{
	char b[24];
	snprintf(b, sizeof(b), "0x%llx", (unsigned long long)v);
	return b;
}

} // namespace

const char *
verdict_name(const Insn &i)
{
	if (i.unreachable)
		return "refused";
	switch (i.cls.treatment) {
	case KINST_T_OOL:
		return "out-of-line";
	case KINST_T_OOL_RIPREL:
		return "out-of-line-riprel";
	case KINST_T_EMULATE:
		return "emulated";
	default:
		return "refused";
	}
}

const char *
len_from_name(const Insn &i)
{
	switch (i.len_from) {
	case Insn::LenFrom::capstone:
		return "capstone";
	case Insn::LenFrom::one:
		return "one-byte";
	default:
		return "engine";
	}
}

bool
traceable(const Insn &i)
{
	return !i.unreachable && (i.cls.treatment == KINST_T_OOL ||
	    i.cls.treatment == KINST_T_OOL_RIPREL || i.cls.treatment == KINST_T_EMULATE);
}

std::string
reason_name(const Insn &i)
{
	if (i.unreachable)
		return "after-undecodable";
	if (traceable(i))
		return "";
	if (i.cls.treatment != KINST_T_REFUSE)
		return "unclassified";
	if (i.cls.reason >= KINST_R_COUNT)	// a newer module's
		return "reason-" + std::to_string(i.cls.reason);
	const char *n = kinst_reason_name(i.cls.reason);
	return n != nullptr && *n != '\0' ? n : "reason-" + std::to_string(i.cls.reason);
}

std::string
refusal_class(const std::string &reason)
{
	static const std::string excl = "excluded-function";
	if (reason.empty())
		return "";
	if (reason.compare(0, excl.size(), excl) == 0) {
		// "excluded-function (CLASS)": the list or derivation and why.
		size_t o = reason.find('('), c = reason.rfind(')');
		if (o != std::string::npos && c != std::string::npos && c > o)
			return reason.substr(o + 1, c - o - 1);
		return "excluded";
	}
	if (reason == "text-patched" || reason == "exception-fixup" ||
	    reason == "onfault-function")
		return "kernel text";
	if (reason == "shared-by-too-many")
		return "sharing";
	return "instruction";
}

std::string
emulation_name(const Insn &i)
{
	if (i.unreachable || i.cls.treatment != KINST_T_EMULATE)
		return "";
	const char *n = i.a64 ? kinst_a64_emul_name(i.cls.emul) : kinst_emul_name(i.cls.emul);
	return n != nullptr && *n != '\0' ? n : "emul-" + std::to_string(i.cls.emul);
}

bool
insn_decode(const Insn &in, struct kinst_insn *d)
{
	if (in.a64)
		return false;	// not x86-64's
	if (in.dec_status == KINST_DEC_OK && in.dec.len == in.len && in.len != 0) {
		*d = in.dec;
		return true;
	}
	return in.bytes != nullptr && in.len != 0 &&
	    kinst_decode(in.bytes, in.len, d) == KINST_DEC_OK;
}

std::vector<Insn>
walk_function(const Bytes &b, uint64_t addr, Disassembler &dis)
{
	std::vector<Insn> out;
	out.reserve(b.size / 3 + 1);
	bool lost = false;
	size_t off = 0;
	while (off < b.size) {
		Insn in;
		in.offset = (uint32_t)off;
		in.addr = addr + off;
		in.bytes = b.data + off;
		size_t avail = b.size - off;
		struct kinst_insn d;
		in.dec_status = kinst_decode(in.bytes, avail, &d);
		if (in.dec_status == KINST_DEC_OK && d.len >= 1 && d.len <= avail && !lost) {
			in.len = d.len;
			in.dec = d;
			kinst_classify(in.dec_status, &d, in.bytes, &in.cls);
		} else {
			// The engine stops here: refuse this and everything after.
			if (in.dec_status == KINST_DEC_OK)
				in.dec_status = KINST_DEC_INVALID;
			in.cls = {};
			in.cls.treatment = KINST_T_REFUSE;
			in.cls.reason = KINST_R_UNDECODABLE;
			in.unreachable = lost;
			lost = true;
			unsigned l = dis.one(in.bytes, avail, in.addr).len;
			bool cs = l >= 1 && l <= avail;
			in.len = (uint8_t)(cs ? l : 1);
			in.len_from = cs ? Insn::LenFrom::capstone : Insn::LenFrom::one;
		}
		off += in.len;
		out.push_back(in);
	}
	return out;
}

std::vector<Insn>
walk_function_a64(const Bytes &b, uint64_t addr)
{
	size_t n = b.size / 4;
	std::vector<uint32_t> words(n);
	for (size_t i = 0; i < n; i++)
		words[i] = kinst_a64_word(b.data + 4 * i);
	std::vector<Insn> out;
	out.reserve(n + 1);
	for (size_t i = 0; i < n; i++) {
		Insn in;
		in.a64 = true;
		in.offset = (uint32_t)(4 * i);
		in.addr = addr + 4 * i;
		in.bytes = b.data + 4 * i;
		in.len = 4;
		in.dec_status = KINST_DEC_OK;
		kinst_a64_decode(words[i], &in.a64d);
		in.cls.treatment = in.a64d.treatment;
		in.cls.reason = in.a64d.reason;
		in.cls.emul = in.a64d.emul;
		if (in.cls.treatment != KINST_T_REFUSE &&
		    kinst_a64_exclusive(words.data(), n, i)) {
			in.cls.treatment = KINST_T_REFUSE;
			in.cls.reason = KINST_R_EXCLUSIVE;
			in.cls.emul = KINST_A64_EM_NONE;
		}
		out.push_back(in);
	}
	if (b.size % 4 != 0) {
		Insn in;
		in.a64 = true;
		in.offset = (uint32_t)(4 * n);
		in.addr = addr + 4 * n;
		in.bytes = b.data + 4 * n;
		in.len = (uint8_t)(b.size % 4);
		in.len_from = Insn::LenFrom::one;
		in.cls.treatment = KINST_T_REFUSE;
		in.cls.reason = KINST_R_UNDECODABLE;
		out.push_back(in);
	}
	return out;
}

std::vector<Insn>
walk(Module &m, const Function &f, Disassembler &dis)
{
	Bytes b = m.bytes(f);
	return m.a64() ? walk_function_a64(b, f.addr) : walk_function(b, f.addr, dis);
}

std::string
describe_function(const SymbolTable &syms, const Function &f)
{
	std::string s = syms.module(f.module).name() + ":" + f.name + " at ";
	if (!f.section.empty())
		s += f.section + "+";
	s += hex(f.addr) + " (" + std::to_string(f.size) + " bytes, " +
	    (f.global ? "global" : "local") + ")";
	return s;
}

std::string
probe_name(const SymbolTable &syms, const Target &t, uint32_t off)
{
	return syms.module(t.module).name() + ":" + t.fn->name + "+" + hex(off);
}

static void
check_offset(SymbolTable &syms, Target &t, const Spec &sp)
{
	Bytes b = syms.module(t.module).bytes(*t.fn);
	std::string where = syms.module(t.module).name() + ":" + t.fn->name;
	if (t.offset >= b.size)
		throw Error(Exit::bad_offset, sp.text + ": offset " + hex(t.offset) +
		    " is beyond the end of " + where + " (" + std::to_string(b.size) +
		    " bytes, last byte at +" + hex(b.size ? b.size - 1 : 0) + ")");
	uint32_t prev = 0, next = 0;
	int r;
	if (syms.module(t.module).a64()) {	// a word per instruction
		prev = t.offset & ~3u;
		next = prev + 4;
		r = t.offset % 4 == 0 && t.offset + 4 <= b.size;
	} else {
		r = kinst_func_boundary(b.data, b.size, t.offset, &prev, &next);
	}
	if (r == 1)
		return;
	if (r == 0)
		throw Error(Exit::bad_offset, sp.text + ": offset " + hex(t.offset) +
		    " is not an instruction boundary of " + where +
		    "; nearest boundaries are +" + hex(prev) + " and +" + hex(next));
	throw Error(Exit::bad_offset, sp.text + ": offset " + hex(t.offset) + " of " + where +
	    " cannot be checked: the engine cannot decode an instruction before it");
}

Target
resolve_target(const Spec &sp, SymbolTable &syms)
{
	std::vector<size_t> mods;
	if (!sp.module.empty()) {
		mods = syms.find_module(sp.module);
		if (mods.empty()) {
			std::string known;
			for (size_t i = 0; i < syms.modules().size() && i < 8; i++)
				known += (i ? ", " : "") + syms.module(i).name();
			if (syms.modules().size() > 8)
				known += ", ...";
			throw Error(Exit::unknown_function, sp.text + ": no module named '" +
			    sp.module + "' (known: " + known + ")");
		}
	}
	auto in_mods = [&](size_t m) {
		return mods.empty() || std::find(mods.begin(), mods.end(), m) != mods.end();
	};

	std::vector<SymbolTable::Ref> refs;
	Target t;
	if (sp.is_address) {
		for (auto r : syms.containing(sp.address))
			if (in_mods(r.module))
				refs.push_back(r);
		if (refs.empty())
			throw Error(Exit::unknown_function, sp.text + ": address is not inside any known function");
	} else {
		for (auto r : syms.find(sp.function))
			if (in_mods(r.module))
				refs.push_back(r);
		if (refs.empty()) {
			std::string msg = sp.text + ": unknown function '" + sp.function + "'";
			if (!sp.module.empty())
				msg += " in module " + sp.module;
			std::vector<SymbolTable::Ref> clones;
			for (auto r : syms.find_clones(sp.function))
				if (in_mods(r.module))
					clones.push_back(r);
			if (!clones.empty()) {
				msg += "; compiler clones exist: ";
				for (size_t i = 0; i < clones.size() && i < 6; i++)
					msg += (i ? ", " : "") + describe_function(syms, syms.function(clones[i]));
				if (clones.size() > 6)
					msg += ", ...";
			}
			throw Error(Exit::unknown_function, msg);
		}
	}
	if (refs.size() > 1) {
		std::string msg = sp.text + ": ambiguous: " + std::to_string(refs.size()) +
		    " functions match: ";
		for (size_t i = 0; i < refs.size() && i < 12; i++)
			msg += (i ? "; " : "") + describe_function(syms, syms.function(refs[i]));
		if (refs.size() > 12)
			msg += "; ...";
		msg += sp.is_address ? " (name one with MODULE:FUNC+OFFSET)" :
		    " (name one with MODULE:FUNC or by address 0xADDRESS)";
		throw Error(Exit::ambiguous, msg);
	}
	t.module = refs[0].module;
	t.fn = &syms.function(refs[0]);
	if (sp.is_address) {
		t.whole = false;
		t.offset = (uint32_t)(sp.address - t.fn->addr);
	} else if (sp.has_offset) {
		t.whole = false;
		t.offset = sp.offset;
	}
	if (!t.whole)
		check_offset(syms, t, sp);
	return t;
}

} // namespace kinst
