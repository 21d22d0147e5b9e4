// SPDX-License-Identifier: BSD-2-Clause
// The bodies of the kinstctl fuzz targets, shared with the Kyua test that
// replays tests/fuzz/regress/<target>/* (tests/cli/cli_unit_test.cc), so a
// crasher found once is checked on every run without libFuzzer.
#ifndef KINST_FUZZ_CLI_ENTRY_H
#define KINST_FUZZ_CLI_ENTRY_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "device/capture.h"
#include "debuginfo/ctf_types.h"
#include "symbols/disasm.h"
#include "debuginfo/dwarf_loc.h"
#include "symbols/elf_image.h"
#include "base/error.h"
#include "output/hitfmt.h"
#include "symbols/insn_text.h"
#include "symbols/resolver.h"
#include "symbols/returns.h"
#include "base/spec.h"
#include "symbols/symbols.h"

namespace kinst {

// ELF reader, symbol grouping, function walk and spec resolution over an
// arbitrary file image.  Errors are expected; crashes are bugs.
inline void
fuzz_cli_elf_one(const uint8_t *data, size_t size)
{
	try {
		auto img = std::make_unique<ElfImage>("fuzz", data, size);
		SymbolTable syms;
		syms.add(std::make_unique<ElfModule>(std::move(img), ""));
		Disassembler dis(Syntax::att);
		Module &m = syms.module(0);
		size_t n = 0;
		for (const auto &f : m.functions()) {
			if (++n > 64)
				break;
			// Either instruction set, by the file's machine.
			std::vector<Insn> insns = walk(m, f, dis);
			for (const Insn &in : insns) {
				m.relocation(f, in.addr, in.len);
				insn_text(dis, syms, m, f, in);
			}
			return_points(syms, m, f, insns);
			try {
				Spec sp = parse_spec(f.name + "+1");
				resolve_target(sp, syms);
			} catch (const Error &) {
			}
		}
	} catch (const Error &) {
	}
}

// DWARF location compiler (dwarf_loc.h) on operations read from the bytes:
// per operation an atom, two operands (little-endian 8 bytes when the
// atom's high bit of the next byte says so, else that byte), and for
// DW_OP_entry_value one nested operation.  Compiled with a frame base and
// a CFA rule, described, spelled, emitted as bytecode (whatever compiles
// must stay within the verifier's length) and evaluated on a register file.
inline void
fuzz_cli_dwarf_loc_one(const uint8_t *data, size_t size)
{
	size_t i = 0;
	auto byte = [&]() -> uint8_t { return i < size ? data[i++] : 0; };
	auto operand = [&]() -> uint64_t {
		uint8_t b = byte();
		if (!(b & 0x80))
			return b;
		uint64_t v = 0;
		for (int k = 0; k < 8; k++)
			v |= (uint64_t)byte() << (8 * k);
		return v;
	};
	LocExpr e;
	while (i < size && e.size() < 64) {
		LocOp o;
		o.atom = byte();
		o.n1 = operand();
		o.n2 = operand();
		if (o.atom == 0xa3 || o.atom == 0xf3) {	// DW_OP_entry_value, GNU_
			LocOp s;
			s.atom = byte();
			s.n1 = operand();
			o.sub.push_back(s);
		}
		if (o.atom == 0x9e)			// DW_OP_implicit_value
			o.block.assign(o.n1 % 16, 'x');
		e.push_back(o);
	}
	LocExpr fb{LocOp{0x9c, 0, 0, {}, {}}};	// DW_OP_call_frame_cfa
	LocExpr cfa{LocOp{0x77, 8, 0, {}, {}}};	// DW_OP_breg7 8
	LocEnv env;
	env.frame_base = &fb;
	env.cfa = &cfa;
	Location l = compile_location(e, env);
	(void)l.describe();
	(void)l.kind();
	(void)loc_text(e);
	(void)loc_kind(e);
	uint64_t gpr[16] = {0};
	LocState st;
	st.gpr = gpr;
	st.read = [](uint64_t, uint32_t, uint8_t *) { return false; };
	for (const auto &p : l.pieces) {
		if (!p.expr)
			continue;
		uint64_t v;
		std::string why;
		(void)eval_node(*p.expr, st, &v, &why);
		std::vector<LocNodeP> loads;
		node_loads(p.expr, loads);
	}
	for (uint32_t sz : {1u, 4u, 8u}) {
		std::vector<struct kinst_pinsn> code;
		try {
			emit_location_value(l, sz, code);
			if (code.size() > KINST_PROG_MAX_INSNS)
				__builtin_trap();
		} catch (const Error &) {
		}
	}
}

// Spec parser: any string.  A parsed spec must print back consistently.
inline void
fuzz_cli_spec_one(const uint8_t *data, size_t size)
{
	std::string s(reinterpret_cast<const char *>(data), size);
	try {
		Spec sp = parse_spec(s);
		if (sp.is_address == !sp.function.empty())
			__builtin_trap();
		if (sp.function.size() >= 128 || sp.module.size() >= 64)
			__builtin_trap();
	} catch (const Error &e) {
		if (e.code() != Exit::bad_spec)
			__builtin_trap();
	}
}

// CTF reader: any bytes as a .SUNW_ctf section, with a symbol table of
// eight functions.  Loading may fail (Exit::live); a loaded dictionary
// answers every query on every type.
inline void
fuzz_cli_ctf_one(const uint8_t *data, size_t size)
{
	std::vector<Ctf::Sym> syms;
	for (int i = 0; i < 8; i++) {
		Ctf::Sym y;
		y.name = "f" + std::to_string(i);
		y.type = 2;	// STT_FUNC
		y.shndx = 1;
		syms.push_back(y);
	}
	std::vector<uint8_t> sec(data, data + size);
	try {
		Ctf c(sec, syms, std::string("ext\0names\0", 10), "fuzz");
		size_t n = c.type_count() < 4096 ? c.type_count() : 4096;
		for (uint32_t id = 0; id <= n; id++) {
			(void)c.name(id);
			(void)c.size(id);
			(void)c.kind(id);
			(void)c.is_signed(id);
			(void)c.pointee(id);
			(void)c.array_len(id);
			(void)c.member(id, "x");
			(void)c.member_names(id);
		}
		for (const auto &y : syms)
			try {
				Types::Func f = c.func(y.name);
				for (const auto &p : f.params)
					(void)c.name(p.type);
			} catch (const Error &e) {
				if (e.code() != Exit::unknown_function)
					__builtin_trap();
			}
	} catch (const Error &e) {
		if (e.code() != Exit::live)
			__builtin_trap();
	}
}

// A capture file (trace --output) read and printed, text and JSON.
inline void
fuzz_cli_capture_one(const uint8_t *data, size_t size)
{
	try {
		CaptureReader rd(data, size);
		for (int json = 0; json < 2; json++) {
			CaptureReader r2(data, size);
			HitFormat f;
			f.json = json;
			f.regs_all = r2.header().regs_all;
			f.regs_list = r2.header().regs_list;
			f.latency_from = r2.header().latency_from;
			f.capd = r2.header().capd;
			HitFormatter fmt(f, r2.header().probes);
			HitRecord h;
			std::string out;
			for (int i = 0; i < 4096 && r2.next(h); i++) {
				fmt.format(h, out);
				if (out.size() > (1 << 20))
					out.clear();
			}
		}
	} catch (const Error &) {
	}
}

} // namespace kinst

#endif
