// SPDX-License-Identifier: BSD-2-Clause
// Values as their DWARF types say (cli/debuginfo/dwarf_vars.cc: format_value) and
// DWARF types behind the Types interface (DwarfTypes), on the vars.c
// fixture built -O2 -g: bytes this test writes are printed as C would
// read them (signed and unsigned widths, enums by name, bitfields, char
// arrays as strings, unions, pointers, unknown bytes).
#include <atf-c++.hpp>

#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "debuginfo/debuginfo.h"
#include "debuginfo/dwarf_vars.h"
#include "base/error.h"
#include "symbols/sources.h"
#include "base/spec.h"
#include "symbols/symbols.h"
#include "plan/trace_vars.h"

namespace {

struct Fixture {
	kinst::SymbolTable syms;
	std::unique_ptr<kinst::DebugInfo> dbg;
	std::vector<kinst::Var> vars;
	Dwfl_Module *dm = nullptr;

	Fixture()
	{
		std::string cmd = std::string(C_COMPILER) + " -O2 -g -ffreestanding -fno-pic "
		    "-fno-pie -mcmodel=kernel -mno-red-zone -fcf-protection=none -nostdlib "
		    "-static -no-pie -Wl,-Ttext=0xffffffff81000000 -Wl,-e,vars_start "
		    "-Wl,--build-id=none -o vars " FIXTURES_DIR "/vars.c";
		if (system(cmd.c_str()) != 0)
			ATF_FAIL("cannot build the vars fixture: " + cmd);
		kinst::SourceOptions so;
		so.kernel = "vars";
		kinst::load_symbols(so, syms);
		dbg = std::make_unique<kinst::DebugInfo>(syms, kinst::DebugOptions{});
		auto refs = syms.find("vars_types");
		ATF_REQUIRE_EQ(refs.size(), 1u);
		const kinst::Function &f = syms.function(refs[0]);
		uint64_t base;
		ATF_REQUIRE(dbg->dwarf_function(refs[0].module, f, &dm, &base));
		kinst::VarQuery q;
		ATF_REQUIRE(kinst::vars_at(*dbg, refs[0].module, f, 0, q, vars));
	}
	const kinst::Var &var(const std::string &n)
	{
		for (const auto &v : vars)
			if (v.name == n)
				return v;
		ATF_FAIL("no variable " + n + " at vars_types+0");
	}
	// The type the pointer parameter fp points to: struct vars_flags.
	std::string text(uint64_t type_die, const std::string &bytes,
	    std::vector<bool> known = {})
	{
		kinst::VarBytes b;
		b.bytes = bytes;
		b.known = known.empty() ? std::vector<bool>(bytes.size(), true) : known;
		std::string t;
		nlohmann::json j;
		kinst::format_value(dm, type_die, b, t, j);
		return t;
	}
	std::string json(uint64_t type_die, const std::string &bytes)
	{
		kinst::VarBytes b;
		b.bytes = bytes;
		b.known.assign(bytes.size(), true);
		std::string t;
		nlohmann::json j;
		kinst::format_value(dm, type_die, b, t, j);
		return j.dump();
	}
};

std::string
le(uint64_t v, size_t n)
{
	std::string s;
	for (size_t i = 0; i < n; i++)
		s.push_back((char)((v >> (8 * i)) & 0xff));
	return s;
}

} // namespace

ATF_TEST_CASE_WITHOUT_HEAD(scalars);
ATF_TEST_CASE_BODY(scalars)
{
	Fixture fx;
	const kinst::Var &neg = fx.var("neg");
	ATF_REQUIRE_EQ(neg.type, std::string("int"));
	ATF_REQUIRE_EQ(neg.size, 4);
	// An int: sign-extended from its 4 bytes.
	ATF_REQUIRE_EQ(fx.text(neg.type_die, le((uint64_t)-7, 4)), std::string("-7"));
	ATF_REQUIRE_EQ(fx.json(neg.type_die, le((uint64_t)-7, 4)), std::string("-7"));
	// An unsigned long: all 64 bits, unsigned.
	const kinst::Var &big = fx.var("big");
	ATF_REQUIRE_EQ(fx.text(big.type_die, le(~0ull, 8)), std::string("18446744073709551615"));
	// An enum by its enumerator's name, a negative one too; else the number.
	const kinst::Var &c = fx.var("c");
	ATF_REQUIRE_EQ(fx.text(c.type_die, le(2, 4)), std::string("VARS_GREEN"));
	ATF_REQUIRE_EQ(fx.text(c.type_die, le((uint64_t)-3, 4)), std::string("VARS_NEG"));
	ATF_REQUIRE_EQ(fx.text(c.type_die, le(77, 4)), std::string("77"));
	// A pointer in hex (a JSON string).
	const kinst::Var &fp = fx.var("fp");
	ATF_REQUIRE_EQ(fx.text(fp.type_die, le(0xffff888012345678ull, 8)),
	    std::string("0xffff888012345678"));
	ATF_REQUIRE_EQ(fx.json(fp.type_die, le(0xffff888012345678ull, 8)),
	    std::string("\"0xffff888012345678\""));
	// Unknown bytes: optimized out, null.
	ATF_REQUIRE_EQ(fx.text(neg.type_die, le(1, 4), {true, true, false, true}),
	    std::string("<optimized out>"));
}

ATF_TEST_CASE_WITHOUT_HEAD(structs);
ATF_TEST_CASE_BODY(structs)
{
	Fixture fx;
	// struct vars_flags, through DwarfTypes: fp's pointee.
	kinst::DwarfTypes types(fx.dm);
	uint32_t ptr = types.id_of(fx.var("fp").type_die);
	ATF_REQUIRE(types.kind(ptr) == kinst::Types::Kind::pointer);
	uint32_t st = types.pointee(ptr);
	ATF_REQUIRE(types.kind(st) == kinst::Types::Kind::structure);
	ATF_REQUIRE_EQ(types.name(st), std::string("struct vars_flags"));
	int64_t size = types.size(st);
	ATF_REQUIRE(size >= 24);
	kinst::Types::Member m = types.member(st, "s");
	ATF_REQUIRE(m.found);
	ATF_REQUIRE_EQ(m.bit_offset % 16, 0u);	// a short, after the bitfields' byte
	ATF_REQUIRE(m.bit_offset >= 8);
	kinst::Types::Member mb = types.member(st, "b");
	ATF_REQUIRE(mb.found);
	ATF_REQUIRE_EQ(mb.bitfield, 5u);
	ATF_REQUIRE_EQ(mb.bit_offset, 3u);
	ATF_REQUIRE(types.find_tagged("vars_flags", false) == st ||
	    types.resolve(types.find_tagged("vars_flags", false)) == types.resolve(st));
	int64_t ev;
	uint32_t et;
	ATF_REQUIRE(types.enumerator("VARS_NEG", ev, et));
	ATF_REQUIRE_EQ(ev, -3);
	ATF_REQUIRE(types.is_signed(et));

	// The bytes C would have for { .a = 1, .b = 2, .s = -3, .name = "ab",
	// .on = 1, .sc = -4, .u.i = 5, .str = 0xffffffff81001000 }.
	std::string b((size_t)size, '\0');
	b[0] = (char)(1 | (2 << 3));
	int16_t s = -3;
	memcpy(&b[m.bit_offset / 8], &s, 2);
	memcpy(&b[types.member(st, "name").bit_offset / 8], "ab", 3);
	uint32_t on_off = types.member(st, "on").bit_offset / 8;
	uint32_t sc_off = types.member(st, "sc").bit_offset / 8;
	uint32_t u_off = types.member(st, "u").bit_offset / 8;
	uint32_t str_off = types.member(st, "str").bit_offset / 8;
	b[on_off] = 1;
	b[sc_off] = (char)-4;
	int32_t five = 5;
	memcpy(&b[u_off], &five, 4);
	uint64_t sp = 0xffffffff81001000ull;
	memcpy(&b[str_off], &sp, 8);
	// format_value takes the struct's own DIE: find it through a variable
	// of that type (f, the local copy).
	const kinst::Var &f = fx.var("f");
	ATF_REQUIRE_EQ(f.type, std::string("struct vars_flags"));
	std::string t = fx.text(f.type_die, b);
	ATF_REQUIRE_EQ(t, std::string("{a=1, b=2, s=-3, name=\"ab\", on=true, sc=-4, "
	    "u={i=5, bytes=[5, 0, 0, 0]}, str=0xffffffff81001000}"));
	std::string j = fx.json(f.type_die, b);
	ATF_REQUIRE_EQ(j, std::string("{\"a\":1,\"b\":2,\"name\":\"ab\",\"on\":true,\"s\":-3,"
	    "\"sc\":-4,\"str\":\"0xffffffff81001000\",\"u\":{\"bytes\":[5,0,0,0],\"i\":5}}"));
}

// trace --vars' plans (trace_vars.h) on the fixture, offline: what the
// probe captures at each instruction, programs shared, the module's
// program limit, errors.
ATF_TEST_CASE_WITHOUT_HEAD(plans);
ATF_TEST_CASE_BODY(plans)
{
	Fixture fx;	// builds ./vars
	kinst::SourceOptions so;
	so.kernel = "vars";
	std::set<std::string> codes;
	{
		kinst::TraceVars tv({}, true, {}, false, &so);
		std::vector<kinst::Spec> specs{kinst::parse_spec("vars_array")};
		tv.prepare(specs, "", {}, nullptr);
		ATF_REQUIRE(specs.size() > 10);	// every instruction, each its own spec
		ATF_REQUIRE_EQ(specs.size(), tv.nplans());
		unsigned buf_caps = 0;
		for (const auto &sp : specs) {
			const kinst::TraceVars::Plan *p = tv.plan(sp);
			ATF_REQUIRE(p != nullptr);
			for (const auto &it : p->items) {
				if (it.name != "buf" || !it.why.empty())
					continue;
				// long buf[16] on the stack: one 128-byte capture.
				ATF_REQUIRE_EQ(it.piece_cap.size(), 1u);
				ATF_REQUIRE(it.piece_cap[0] >= 0);
				ATF_REQUIRE_EQ(p->caps.at((size_t)it.piece_cap[0]).len, 128u);
				buf_caps++;
			}
			if (!p->code.empty())
				codes.insert(std::string((const char *)p->code.data(),
				    p->code.size() * sizeof(p->code[0])));
		}
		ATF_REQUIRE(buf_caps > 5);
		ATF_REQUIRE(codes.size() >= 2);	// the CFA moves with the stack
		ATF_REQUIRE(codes.size() < specs.size());	// and plans share programs
	}
	{
		// With one program per session, the instructions that would need
		// another say why their variables in memory are not read.
		kinst::TraceVars tv({}, true, {}, false, &so, 1);
		std::vector<kinst::Spec> specs{kinst::parse_spec("vars_array")};
		tv.prepare(specs, "", {}, nullptr);
		std::set<std::string> one;
		unsigned said = 0;
		for (const auto &sp : specs) {
			const kinst::TraceVars::Plan *p = tv.plan(sp);
			if (!p->code.empty())
				one.insert(std::string((const char *)p->code.data(),
				    p->code.size() * sizeof(p->code[0])));
			for (const auto &it : p->items)
				said += it.why.find("probe programs are taken") != std::string::npos;
		}
		ATF_REQUIRE_EQ(one.size(), 1u);
		ATF_REQUIRE(said > 0);
	}
	{
		// An unknown variable at an explicit offset: an error naming those
		// in scope; in a whole function, one in scope nowhere.
		kinst::TraceVars tv({"nosuch"}, false, {}, false, &so);
		std::vector<kinst::Spec> specs{kinst::parse_spec("vars_array+0")};
		try {
			tv.prepare(specs, "", {}, nullptr);
			ATF_FAIL("an unknown variable was accepted");
		} catch (const kinst::Error &e) {
			ATF_REQUIRE(std::string(e.what()).find("in scope there: buf, limit, n") !=
			    std::string::npos);
		}
		kinst::TraceVars tw({"nosuch"}, false, {}, false, &so);
		std::vector<kinst::Spec> whole{kinst::parse_spec("vars_array")};
		try {
			tw.prepare(whole, "", {}, nullptr);
			ATF_FAIL("a variable in scope nowhere was accepted");
		} catch (const kinst::Error &e) {
			ATF_REQUIRE(std::string(e.what()).find("not in scope at any instruction") !=
			    std::string::npos);
		}
	}
}

ATF_INIT_TEST_CASES(tcs)
{
	ATF_ADD_TEST_CASE(tcs, plans);
	ATF_ADD_TEST_CASE(tcs, scalars);
	ATF_ADD_TEST_CASE(tcs, structs);
}
