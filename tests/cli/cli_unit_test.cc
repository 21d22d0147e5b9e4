// SPDX-License-Identifier: BSD-2-Clause
// kinstctl internals: the spec parser, the kallsyms parser (fixture files),
// alias grouping, the in-memory ELF reader on crafted bad input, a loaded
// module's placement (live_place.h) on relocatable objects the build links
// (fixtures/place_*.c), the device session's feature names (session.h), the
// reader thread's priority (live.h), address lookups in unlinked modules
// (SymbolTable::containing_from), and the
// replay of every fuzz regression input (tests/fuzz/regress/cli_*).
#include <atf-c++.hpp>

#include <dirent.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "symbols/elf_image.h"
#include "symbols/insn_text.h"
#include "symbols/resolver.h"
#include "base/error.h"
#include "fuzz_cli_entry.h"
#include "symbols/kallsyms.h"
#include "base/live.h"
#include "symbols/live_place.h"
#include "output/perfetto.h"
#include "base/spill.h"
#include "perfetto_dom.h"
#include "base/text.h"
#include "base/record.h"
#include "output/record_text.h"
#include "output/insn_format.h"
#include "symbols/stack_symbols.h"
#include "symbols/resolver.h"
#include "device/session.h"
#include "base/spec.h"
#include "symbols/symbols.h"

using namespace kinst;

static Exit
spec_error(const std::string &s)
{
	try {
		parse_spec(s);
	} catch (const Error &e) {
		return e.code();
	}
	return Exit::ok;
}

ATF_TEST_CASE_WITHOUT_HEAD(spec_forms);
ATF_TEST_CASE_BODY(spec_forms)
{
	Spec s = parse_spec("vm_fault");
	ATF_REQUIRE_EQ(s.function, "vm_fault");
	ATF_REQUIRE(s.module.empty() && !s.has_offset && !s.is_address);

	s = parse_spec("vm_fault+0x1c");
	ATF_REQUIRE(s.has_offset && s.offset == 0x1c && s.function == "vm_fault");
	s = parse_spec("vm_fault+28");
	ATF_REQUIRE(s.has_offset && s.offset == 28);
	s = parse_spec("kernel:vm_fault:28");
	ATF_REQUIRE(s.module == "kernel" && s.function == "vm_fault" && s.offset == 28);
	s = parse_spec("ext4:ext4_sync_fs");
	ATF_REQUIRE(s.module == "ext4" && s.function == "ext4_sync_fs" && !s.has_offset);
	s = parse_spec("ext4:ext4_sync_fs+0x10");
	ATF_REQUIRE(s.module == "ext4" && s.offset == 0x10);
	s = parse_spec("kinst:ext4:ext4_sync_fs:4");
	ATF_REQUIRE(s.module == "ext4" && s.function == "ext4_sync_fs" && s.offset == 4);
	s = parse_spec("kinst:ext4:ext4_sync_fs");
	ATF_REQUIRE(s.module == "ext4" && s.function == "ext4_sync_fs" && !s.has_offset);
	s = parse_spec(":vm_fault:3");
	ATF_REQUIRE(s.module.empty() && s.offset == 3);
	s = parse_spec("foo.isra.0+0");
	ATF_REQUIRE(s.function == "foo.isra.0" && s.has_offset && s.offset == 0);
	s = parse_spec("snd-hda-intel:azx_probe");
	ATF_REQUIRE(s.module == "snd-hda-intel");
	s = parse_spec("0xffffffff81234567");
	ATF_REQUIRE(s.is_address && s.address == 0xffffffff81234567ull && s.function.empty());
	s = parse_spec("f+0xffffffff");
	ATF_REQUIRE(s.offset == 0xffffffffu);
}

ATF_TEST_CASE_WITHOUT_HEAD(spec_errors);
ATF_TEST_CASE_BODY(spec_errors)
{
	const char *bad[] = {"", "+", "f+", "f+x", "f+-1", "f++1", "f+0x", "f+1:2", "a:b:c:d:e",
	    "a:b:", "a:", ":", "::", "1f", "f g", "f\n", "f+4294967296", "f+0x100000000",
	    "f+99999999999999999999999999999", "0x", "0xg", "0x10000000000000000",
	    "m@d:f", "f:1x", "kernel:f+1:2"};
	for (const char *b : bad)
		if (spec_error(b) != Exit::bad_spec)
			ATF_FAIL(std::string("not refused as a bad spec: '") + b + "'");
	ATF_REQUIRE(spec_error(std::string(200, 'f')) == Exit::bad_spec);
	ATF_REQUIRE(spec_error(std::string(100, 'm') + ":f") == Exit::bad_spec);
	ATF_REQUIRE(spec_error(std::string(5000, '1')) == Exit::bad_spec);
	ATF_REQUIRE(spec_error(std::string("f\0g", 3)) == Exit::bad_spec);
	ATF_REQUIRE(spec_error(std::string(127, 'f')) == Exit::ok);
}

ATF_TEST_CASE_WITHOUT_HEAD(numbers);
ATF_TEST_CASE_BODY(numbers)
{
	uint64_t v;
	ATF_REQUIRE(parse_number("0", 10, &v) && v == 0);
	ATF_REQUIRE(parse_number("0x0A", 10, &v) && v == 10);
	ATF_REQUIRE(!parse_number("11", 10, &v));
	ATF_REQUIRE(parse_number("18446744073709551615", UINT64_MAX, &v) && v == UINT64_MAX);
	ATF_REQUIRE(!parse_number("18446744073709551616", UINT64_MAX, &v));
	ATF_REQUIRE(parse_number("0xffffffffffffffff", UINT64_MAX, &v) && v == UINT64_MAX);
	ATF_REQUIRE(!parse_number("0x1ffffffffffffffff", UINT64_MAX, &v));
}

// The scheduler debug file's header as Linux 6.1 writes it ("%-40s: %Ld"),
// and what is not that line.
ATF_TEST_CASE_WITHOUT_HEAD(sched_clock_stable_line);
ATF_TEST_CASE_BODY(sched_clock_stable_line)
{
	const std::string head =
	    "Sched Debug Version: v0.11, 6.1.0-57-amd64 #1\n"
	    "ktime                                   : 20893.415377\n"
	    "sched_clk                               : 20902.271844\n"
	    "cpu_clk                                 : 20893.417226\n"
	    "jiffies                                 : 4300115645\n";
	const std::string tail = "\nsysctl_sched\n  .sysctl_sched_latency : 24.000000\n";
	std::string line = "sched_clock_stable()                    : ";
	ATF_REQUIRE_EQ(sched_clock_stable_in(head + line + "0" + tail), 0);
	ATF_REQUIRE_EQ(sched_clock_stable_in(head + line + "1" + tail), 1);
	ATF_REQUIRE_EQ(sched_clock_stable_in(head + line + "1"), 1);	// last line, no newline
	ATF_REQUIRE_EQ(sched_clock_stable_in("sched_clock_stable():0\n"), 0);
	ATF_REQUIRE_EQ(sched_clock_stable_in(head + tail), -1);		// arm64: no such line
	ATF_REQUIRE_EQ(sched_clock_stable_in(""), -1);
	const char *bad[] = { "2", "10", "01", "", "-1", "0 x", "x" };
	for (const char *b : bad)
		if (sched_clock_stable_in(head + line + b + tail) != -1)
			ATF_FAIL(std::string("value '") + b + "' read as a verdict");
	ATF_REQUIRE_EQ(sched_clock_stable_in(head + "sched_clock_stable()  0\n"), -1);	// no ':'
	// Another line's number is never taken for it.
	ATF_REQUIRE_EQ(sched_clock_stable_in("my_sched_clock_stable() : 0\n" + tail), -1);
	ATF_REQUIRE_EQ(sched_clock_stable_in(tail + "x sched_clock_stable() : 0\n"), -1);
}

static KallsymsParse
fixture(const atf::tests::tc &tc, const char *name)
{
	std::string path = tc.get_config_var("fixtures", FIXTURES_DIR) + "/" + name;
	std::ifstream in(path);
	if (!in)
		ATF_FAIL("cannot open fixture " + path);
	return parse_kallsyms(in);
}

ATF_TEST_CASE_WITHOUT_HEAD(kallsyms_parse);
ATF_TEST_CASE_BODY(kallsyms_parse)
{
	KallsymsParse p = fixture(*this, "kallsyms.txt");
	ATF_REQUIRE_EQ(p.bad_lines, 3u);	// garbage, bad address, unterminated module
	ATF_REQUIRE_EQ(p.entries.size(), 15u);
	ATF_REQUIRE(!p.all_zero);
	ATF_REQUIRE_EQ(p.entries[2].name, "startup_64");
	ATF_REQUIRE_EQ(p.entries[2].addr, 0xffffffff81000010ull);
	ATF_REQUIRE_EQ(p.entries[2].type, 'T');
	ATF_REQUIRE(p.entries[2].module.empty());
	ATF_REQUIRE_EQ(p.entries[10].name, "ext4_sync_fs");
	ATF_REQUIRE_EQ(p.entries[10].module, "ext4");

	KallsymsParse h = fixture(*this, "kallsyms-hidden.txt");
	ATF_REQUIRE(h.all_zero);
	ATF_REQUIRE_EQ(h.entries.size(), 3u);
}

ATF_TEST_CASE_WITHOUT_HEAD(kallsyms_modules);
ATF_TEST_CASE_BODY(kallsyms_modules)
{
	KallsymsParse p = fixture(*this, "kallsyms.txt");
	int fetched = 0;
	TextFetcher fetch = [&fetched](const std::string &m, const std::string &f, uint64_t a) {
		if (f == "e1000_last") {
			ATF_REQUIRE_EQ(m, "e1000");
			return std::vector<uint8_t>(0x20, 0x90);
		}
		fetched++;
		ATF_REQUIRE_EQ(m, "kernel");
		ATF_REQUIRE_EQ(f, "vm_fault");
		ATF_REQUIRE_EQ(a, 0xffffffff81000140ull);
		return std::vector<uint8_t>{0x55, 0xc3};
	};
	SymbolTable syms;
	for (auto &m : modules_from_kallsyms(p, fetch))
		syms.add(std::move(m));
	ATF_REQUIRE_EQ(syms.modules().size(), 3u);
	ATF_REQUIRE_EQ(syms.module(0).name(), "kernel");
	ATF_REQUIRE_EQ(syms.module(1).name(), "e1000");
	ATF_REQUIRE_EQ(syms.module(2).name(), "ext4");
	// Static duplicates stay two functions; aliases are one.
	ATF_REQUIRE_EQ(syms.find("dup_static").size(), 2u);
	auto v = syms.find("vm_fault_alias");
	ATF_REQUIRE_EQ(v.size(), 1u);
	const Function &vf = syms.function(v[0]);
	ATF_REQUIRE_EQ(vf.name, "vm_fault");
	ATF_REQUIRE_EQ(vf.aliases.size(), 1u);
	// Sizes: up to the next symbol of any type (here some_data? no: the
	// next address after 0x140 is dup_static at 0x200).
	ATF_REQUIRE_EQ(vf.size, 0xc0u);
	ATF_REQUIRE_EQ(syms.function(syms.find("dup_static")[1]).size, 0x30u);
	ATF_REQUIRE(syms.find("some_data").empty());		// not text
	ATF_REQUIRE_EQ(syms.find("weak_func").size(), 1u);	// W is text
	ATF_REQUIRE(syms.find("ext4_table").empty());
	ATF_REQUIRE_EQ(syms.function(syms.find("ext4_sync_fs")[0]).size, 0x100u);
	// The last function of a module has no known size until read.
	ATF_REQUIRE_EQ(syms.function(syms.find("e1000_last")[0]).size, 0u);
	ATF_REQUIRE_EQ(syms.find_module("e1000").size(), 1u);
	ATF_REQUIRE_EQ(syms.containing(0xffffffff81000150ull).size(), 1u);

	// Bytes are fetched lazily, once, and the kernel's size wins.
	ATF_REQUIRE_EQ(fetched, 0);
	Bytes b = syms.module(0).bytes(vf);
	ATF_REQUIRE_EQ(b.size, 2u);
	syms.module(0).bytes(vf);
	ATF_REQUIRE_EQ(fetched, 1);
	ATF_REQUIRE_EQ(syms.function(v[0]).size, 2u);
	// The address lookups follow the kernel's sizes (their index is
	// built again): vm_fault no longer holds +0x10, e1000_last now
	// holds +0x10.
	ATF_REQUIRE(syms.containing(0xffffffff81000150ull).empty());
	ATF_REQUIRE(syms.containing(0xffffffffc0001050ull).empty());
	const Function &last = syms.function(syms.find("e1000_last")[0]);
	ATF_REQUIRE_EQ(syms.module(last.module).bytes(last).size, 0x20u);
	auto in_last = syms.containing(0xffffffffc0001050ull);
	ATF_REQUIRE_EQ(in_last.size(), 1u);
	ATF_REQUIRE_EQ(syms.function(in_last[0]).name, "e1000_last");
}

ATF_TEST_CASE_WITHOUT_HEAD(group_aliases);
ATF_TEST_CASE_BODY(group_aliases)
{
	std::vector<RawSymbol> raw = {
	    {"__x64_sys_foo", 0x100, 16, ".text", true, 0},
	    {"sys_foo", 0x100, 16, ".text", true, 1},
	    {"local_foo", 0x100, 16, ".text", false, 2},
	    {"other", 0x100, 16, ".init.text", false, 3},	// other section
	    {"shorter", 0x100, 8, ".text", false, 4},		// other size
	    {"sys_foo", 0x100, 16, ".text", true, 5},		// duplicate entry
	};
	std::vector<Function> f = kinst::group_aliases(raw);
	ATF_REQUIRE_EQ(f.size(), 3u);
	const Function *g = nullptr;
	for (const auto &x : f)
		if (x.size == 16 && x.section == ".text")
			g = &x;
	ATF_REQUIRE(g != nullptr);
	ATF_REQUIRE_EQ(g->name, "sys_foo");	// global, not __-prefixed
	ATF_REQUIRE_EQ(g->aliases.size(), 2u);
}

static Exit
elf_error(const std::vector<uint8_t> &b)
{
	try {
		ElfImage img("mem", b.data(), b.size());
	} catch (const Error &e) {
		return e.code();
	}
	return Exit::ok;
}

ATF_TEST_CASE_WITHOUT_HEAD(elf_memory_errors);
ATF_TEST_CASE_BODY(elf_memory_errors)
{
	ATF_REQUIRE(elf_error({}) == Exit::bad_elf);
	ATF_REQUIRE(elf_error({0x7f, 'E', 'L', 'F'}) == Exit::bad_elf);
	std::vector<uint8_t> h(64, 0);
	h[0] = 0x7f; h[1] = 'E'; h[2] = 'L'; h[3] = 'F';
	h[4] = 2; h[5] = 1; h[6] = 1;
	h[16] = 1;	// ET_REL
	h[18] = 62;	// EM_X86_64
	h[20] = 1;
	ATF_REQUIRE(elf_error(h) == Exit::no_symbols);	// no sections at all
	h[4] = 1;
	ATF_REQUIRE(elf_error(h) == Exit::unsupported_elf);
	h[4] = 2; h[5] = 2;
	ATF_REQUIRE(elf_error(h) == Exit::unsupported_elf);
	h[5] = 1; h[18] = 40;
	ATF_REQUIRE(elf_error(h) == Exit::unsupported_elf);
	h[18] = 62;
	h[0x28] = 0xff; h[0x2f] = 0x7f;	// e_shoff far away
	h[0x3a] = 64; h[0x3c] = 3;	// shentsize, shnum
	ATF_REQUIRE(elf_error(h) == Exit::bad_elf);
}

// ---- placing a loaded module section by section (live_place.h) ----

// The kernel as FreeBSD's link_elf_obj.c loads an object: each section at
// its own address (far apart, in no particular order), and kldsym(2)'s
// answer for a name: its first definition in the symbol table (locals come
// first), a local one only while debug.link_elf_obj_leak_locals is set.
// (The fixtures repeat no name outside their functions, so searching the
// functions is searching the table.)  skew: names answered off by that
// many bytes; size_skew: answered with a wrong size.
struct FakeKernel {
	const ElfImage &img;
	bool leak_locals = false;
	std::map<std::string, uint64_t> skew, size_skew;

	explicit FakeKernel(const ElfImage &i) : img(i) {}
	uint64_t load(uint32_t shndx) const
	{
		return 0xffffffff83000000ull - shndx * 0x200000ull + shndx * 0x40;
	}
	uint64_t live(const ElfFunction &f) const { return load(f.shndx) + f.value; }
	SymbolLookup lookup() const
	{
		return [this](const std::string &name, uint64_t *addr, uint64_t *size) {
			for (const ElfFunction &f : img.functions()) {
				if (f.name != name)
					continue;
				if (!f.global && !leak_locals)
					return false;
				*addr = live(f) + (skew.count(name) ? skew.at(name) : 0);
				*size = f.size + (size_skew.count(name) ? size_skew.at(name) : 0);
				return true;
			}
			return false;
		};
	}
};

static std::unique_ptr<ElfModule>
place_module(const char *file)
{
	return std::make_unique<ElfModule>(
	    std::make_unique<ElfImage>(std::string(PLACE_DIR) + "/" + file), "");
}

static uint32_t
section_index(const ElfImage &img, const std::string &name)
{
	for (uint32_t i = 0; i < img.sections().size(); i++)
		if (img.sections()[i].name == name)
			return i;
	ATF_FAIL("no section " + name);
	return 0;
}

// Every function of m (statics too) at the address the kernel put it.
static void
require_placed(const ElfModule &m, const FakeKernel &k)
{
	ATF_REQUIRE(!m.relocatable());
	ATF_REQUIRE(m.functions().size() >= 7);
	for (const Function &f : m.functions()) {
		ATF_REQUIRE_EQ(f.addr, k.live(m.image().functions().at(f.handle)));
		ATF_REQUIRE(f.section.empty());
	}
}

#ifdef __linux__
// Resident KiB of the mapping that holds p (/proc/self/smaps).
static size_t
mapping_rss_kib(const void *p)
{
	std::ifstream in("/proc/self/smaps");
	std::string line;
	bool here = false;
	while (std::getline(in, line)) {
		unsigned long lo, hi;
		size_t kib;
		if (sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2)
			here = (uintptr_t)p >= lo && (uintptr_t)p < hi;
		else if (here && sscanf(line.c_str(), "Rss: %zu kB", &kib) == 1)
			return kib;
	}
	ATF_FAIL("no mapping holds the image in /proc/self/smaps");
	return 0;
}
#endif

// A listing of a mapped file gives back the pages it has passed
// (ElfImage::drop_behind): of dropbehind.o's 1.5 MB of code and 7.2 MB
// of relocations, under 1 MiB stays resident, after the first lookup
// (which reads every relocation's offset) as after the whole listing,
// and what is read again is the same.
ATF_TEST_CASE_WITHOUT_HEAD(elf_drop_behind);
ATF_TEST_CASE_BODY(elf_drop_behind)
{
#ifndef __linux__
	ATF_SKIP("needs /proc/self/smaps (Linux) to see what is resident");
#else
	ElfImage img(std::string(PLACE_DIR) + "/dropbehind.o");
	std::vector<ElfFunction> fns = img.functions();
	ATF_REQUIRE_EQ(fns.size(), 3000u);
	std::sort(fns.begin(), fns.end(), [](const ElfFunction &a, const ElfFunction &b) {
		return std::tie(a.shndx, a.value) < std::tie(b.shndx, b.value);
	});
	const ElfFunction &f0 = fns.front();
	const uint8_t *p0 = img.bytes(f0);
	auto count = [](const std::string &s) {
		size_t n = 0;
		for (size_t at = s.find("db_external"); at != std::string::npos;
		     at = s.find("db_external", at + 1))
			n++;
		return n;
	};
	const std::string first = img.relocation_at(f0.shndx, f0.value, f0.size);
	ATF_REQUIRE_EQ(count(first), 100u);
	size_t kib = mapping_rss_kib(p0);
	if (kib >= 1024)
		ATF_FAIL("after the first lookup " + std::to_string(kib) + " KiB resident");

	uint64_t sum = 0;
	size_t relocs = 0;
	for (const auto &f : fns) {
		const uint8_t *b = img.bytes(f);
		for (uint64_t i = 0; i < f.size; i++)
			sum += b[i];
		relocs += count(img.relocation_at(f.shndx, f.value, f.size));
	}
	// Each function: 100 calls (0xe8 and a zero rel32) and a ret (0xc3).
	ATF_REQUIRE_EQ(sum, 3000u * (100u * 0xe8 + 0xc3));
	ATF_REQUIRE_EQ(relocs, 300000u);
	kib = mapping_rss_kib(p0);
	if (kib >= 1024)
		ATF_FAIL("after the listing " + std::to_string(kib) + " KiB resident");

	// Back to the start: pages given back read the same again.
	ATF_REQUIRE_EQ(img.relocation_at(f0.shndx, f0.value, f0.size), first);
	const uint8_t *b = img.bytes(f0);
	ATF_REQUIRE_EQ(b[0], 0xe8);
	ATF_REQUIRE_EQ(b[f0.size - 1], 0xc3);
#endif
}

// m was left as read: section-relative, every function at its st_value.
static void
require_unplaced(const ElfModule &m)
{
	ATF_REQUIRE(m.relocatable());
	for (const Function &f : m.functions()) {
		ATF_REQUIRE_EQ(f.addr, m.image().functions().at(f.handle).value);
		ATF_REQUIRE(!f.section.empty());
	}
}

ATF_TEST_CASE_WITHOUT_HEAD(place_static_functions);
ATF_TEST_CASE_BODY(place_static_functions)
{
	// Only globals answer: the statics (two named "twin", one in
	// .text.other) are placed from their sections' globals.
	auto m = place_module("place.o");
	FakeKernel k(m->image());
	ATF_REQUIRE(m->relocate(k.lookup()));
	require_placed(*m, k);
	std::vector<uint64_t> twins;
	for (const Function &f : m->functions())
		if (f.name == "twin")
			twins.push_back(f.addr);
	ATF_REQUIRE_EQ(twins.size(), 2u);
	ATF_REQUIRE(twins[0] != twins[1]);

	// Locals answer too (the default): the same places; the kernel's
	// answer for "twin", the first one, is never taken for the other.
	auto l = place_module("place.o");
	FakeKernel kl(l->image());
	kl.leak_locals = true;
	ATF_REQUIRE(l->relocate(kl.lookup()));
	require_placed(*l, kl);
}

ATF_TEST_CASE_WITHOUT_HEAD(place_sections_independent);
ATF_TEST_CASE_BODY(place_sections_independent)
{
	auto m = place_module("place.o");
	const ElfImage &img = m->image();
	FakeKernel k(img);
	uint32_t text = section_index(img, ".text"), other = section_index(img, ".text.other");
	Placement p = place_sections(img, k.lookup());
	ATF_REQUIRE(p.unplaced.empty());
	ATF_REQUIRE_EQ(p.base.size(), 2u);
	ATF_REQUIRE_EQ(p.base.at(text), k.load(text));
	ATF_REQUIRE_EQ(p.base.at(other), k.load(other));
	ATF_REQUIRE(k.load(other) < k.load(text));	// not in file order
}

ATF_TEST_CASE_WITHOUT_HEAD(place_bases_disagree);
ATF_TEST_CASE_BODY(place_bases_disagree)
{
	auto m = place_module("place.o");
	const ElfImage &img = m->image();
	uint32_t text = section_index(img, ".text"), other = section_index(img, ".text.other");
	// place_a and place_b imply one base for .text, place_a2 another:
	// .text is not placed (not even from a local that would answer),
	// .text.other still is, and the module stays section-relative.
	FakeKernel k(img);
	k.leak_locals = true;
	k.skew["place_a2"] = 0x10;
	Placement p = place_sections(img, k.lookup());
	ATF_REQUIRE(p.unplaced == std::vector<uint32_t>{text});
	ATF_REQUIRE_EQ(p.base.count(text), 0u);
	ATF_REQUIRE_EQ(p.base.at(other), k.load(other));
	ATF_REQUIRE(!m->relocate(k.lookup()));
	require_unplaced(*m);
	// A size the file does not have: the answer is for another symbol.
	FakeKernel s(img);
	s.size_skew["place_other"] = 1;
	p = place_sections(img, s.lookup());
	ATF_REQUIRE(p.unplaced == std::vector<uint32_t>{other});
	ATF_REQUIRE(!m->relocate(s.lookup()));
	require_unplaced(*m);
}

ATF_TEST_CASE_WITHOUT_HEAD(place_section_without_globals);
ATF_TEST_CASE_BODY(place_section_without_globals)
{
	// .text.lonely holds one static function: where only globals answer,
	// nothing places it, and the whole module stays section-relative.
	auto m = place_module("place_lonely.o");
	const ElfImage &img = m->image();
	FakeKernel k(img);
	Placement p = place_sections(img, k.lookup());
	ATF_REQUIRE(p.unplaced == std::vector<uint32_t>{section_index(img, ".text.lonely")});
	ATF_REQUIRE_EQ(p.base.size(), 2u);
	ATF_REQUIRE(!m->relocate(k.lookup()));
	require_unplaced(*m);
	// Where locals answer, its static places it.  The static place_b
	// that shadows the global one answers for "place_b", and the twins
	// for "twin": names defined twice are never anchors.
	FakeKernel kl(img);
	kl.leak_locals = true;
	ATF_REQUIRE(m->relocate(kl.lookup()));
	require_placed(*m, kl);
}

static std::vector<std::string>
files_in(const std::string &dir)
{
	std::vector<std::string> r;
	DIR *d = opendir(dir.c_str());
	if (d == nullptr)
		return r;
	while (struct dirent *e = readdir(d))
		if (e->d_name[0] != '.')
			r.push_back(dir + "/" + e->d_name);
	closedir(d);
	return r;
}

static std::vector<uint8_t>
slurp(const std::string &p)
{
	std::ifstream in(p, std::ios::binary);
	return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

ATF_TEST_CASE_WITHOUT_HEAD(fuzz_regressions);
ATF_TEST_CASE_BODY(fuzz_regressions)
{
	std::string fuzz = FUZZ_DIR;
	size_t n = 0;
	for (const char *t : {"cli_elf", "corpus-elf"}) {
		std::string dir = std::string(t) == "cli_elf" ? fuzz + "/regress/cli_elf" :
		    fuzz + "/corpus/fuzz_cli_elf";
		for (const auto &f : files_in(dir)) {
			auto b = slurp(f);
			fuzz_cli_elf_one(b.data(), b.size());
			n++;
		}
	}
	for (const char *dir : {"/regress/cli_spec", "/corpus/fuzz_cli_spec"})
		for (const auto &f : files_in(fuzz + dir)) {
			auto b = slurp(f);
			fuzz_cli_spec_one(b.data(), b.size());
			n++;
		}
	size_t nctf = 0;
	for (const char *dir : {"/regress/cli_ctf", "/corpus/fuzz_cli_ctf"})
		for (const auto &f : files_in(fuzz + dir)) {
			auto b = slurp(f);
			fuzz_cli_ctf_one(b.data(), b.size());
			nctf++;
		}
	if (nctf == 0)
		ATF_FAIL("no CTF fuzz inputs found under " + fuzz);
	n += nctf;
	if (n == 0)
		ATF_FAIL("no fuzz inputs found under " + fuzz);
	std::cout << "replayed " << n << " fuzz inputs\n";
}

// ---- hit records with sections (trace --stack) ----

namespace {

// A hit record followed by sections: {type, flags, payload words}.
struct Sec {
	uint16_t type, flags;
	std::vector<uint64_t> words;
	int32_t len_delta;	// added to the header's len (malformed records)
};

std::vector<uint8_t>
make_record(const std::vector<Sec> &secs)
{
	std::vector<uint8_t> b(sizeof(struct kinst_hit_record), 0);
	for (const Sec &s : secs) {
		struct kinst_rec_sec h;
		h.type = s.type;
		h.flags = s.flags;
		h.len = (uint32_t)(s.words.size() * 8 + s.len_delta);
		const uint8_t *hp = (const uint8_t *)&h;
		b.insert(b.end(), hp, hp + sizeof(h));
		const uint8_t *wp = (const uint8_t *)s.words.data();
		b.insert(b.end(), wp, wp + s.words.size() * 8);
	}
	struct kinst_hit_record *r = (struct kinst_hit_record *)b.data();
	r->hdr.size = (uint32_t)b.size();
	r->hdr.type = KINST_REC_HIT;
	r->addr = 0xffffffff81000010ull;
	return b;
}

std::string
record_error(const std::vector<uint8_t> &b, size_t size)
{
	try {
		(void)parse_hit_record(b.data(), size);
	} catch (const Error &e) {
		return e.what();
	}
	return "";
}

} // namespace

ATF_TEST_CASE_WITHOUT_HEAD(record_sections);
ATF_TEST_CASE_BODY(record_sections)
{
	// No section: a record of ABI 1.3 and earlier.
	std::vector<uint8_t> b = make_record({});
	HitRecord r = parse_hit_record(b.data(), b.size());
	ATF_REQUIRE(!r.has_stack && r.stack.empty());
	ATF_REQUIRE_EQ(r.hit.addr, 0xffffffff81000010ull);

	// Unknown sections around the stack are skipped.
	b = make_record({{9, 0, {1, 2}, 0}, {KINST_SEC_STACK, 0, {0x10, 0x20, 0x30}, 0},
	    {17, 0, {7}, -3}});
	r = parse_hit_record(b.data(), b.size());
	ATF_REQUIRE(r.has_stack && !r.stack_truncated);
	ATF_REQUIRE(r.stack == std::vector<uint64_t>({0x10, 0x20, 0x30}));
	ATF_REQUIRE_EQ(r.unknown_sections, 2u);

	std::vector<uint64_t> full(KINST_STACK_MAX, 0x42);
	b = make_record({{KINST_SEC_STACK, KINST_SECF_TRUNCATED, full, 0}});
	r = parse_hit_record(b.data(), b.size());
	ATF_REQUIRE(r.stack_truncated);
	ATF_REQUIRE_EQ(r.stack.size(), (size_t)KINST_STACK_MAX);
}

ATF_TEST_CASE_WITHOUT_HEAD(record_malformed);
ATF_TEST_CASE_BODY(record_malformed)
{
	std::vector<uint8_t> b = make_record({{KINST_SEC_STACK, 0, {1, 2}, 0}});
	// Too short for the fixed record; a section header cut short.
	ATF_REQUIRE(record_error(b, sizeof(struct kinst_hit_record) - 8).find("malformed") !=
	    std::string::npos);
	ATF_REQUIRE(record_error(b, sizeof(struct kinst_hit_record) + 4).find("truncated section header") !=
	    std::string::npos);
	// A length past the record's end, and a huge one (no wrap-around).
	b = make_record({{KINST_SEC_STACK, 0, {1, 2}, 8}});
	ATF_REQUIRE(record_error(b, b.size()).find("claims 24 bytes") != std::string::npos);
	b = make_record({{17, 0, {1}, -9}});
	ATF_REQUIRE(record_error(b, b.size()).find("claims") != std::string::npos);
	// Stack sections: not whole frames, empty, over the limit, twice.
	b = make_record({{KINST_SEC_STACK, 0, {1, 2}, -4}});
	ATF_REQUIRE(record_error(b, b.size()).find("stack section of 12 bytes") != std::string::npos);
	b = make_record({{KINST_SEC_STACK, 0, {}, 0}});
	ATF_REQUIRE(record_error(b, b.size()).find("stack section of 0 bytes") != std::string::npos);
	b = make_record({{KINST_SEC_STACK, 0, std::vector<uint64_t>(KINST_STACK_MAX + 1, 1), 0}});
	ATF_REQUIRE(record_error(b, b.size()).find("stack section of 520 bytes") != std::string::npos);
	b = make_record({{KINST_SEC_STACK, 0, {1}, 0}, {KINST_SEC_STACK, 0, {2}, 0}});
	ATF_REQUIRE(record_error(b, b.size()).find("two stack sections") != std::string::npos);
}

// AGG sections (ABI 1.14): the key and value of a sample, its overflow
// flag; a section of another size, twice, or with another flag is a
// malformed record.
ATF_TEST_CASE_WITHOUT_HEAD(record_agg);
ATF_TEST_CASE_BODY(record_agg)
{
	std::vector<uint8_t> b = make_record({{KINST_SEC_AGG, 0, {0x11, 0x22, 12345}, 0}});
	HitRecord r = parse_hit_record(b.data(), b.size());
	ATF_REQUIRE(r.has_agg && !r.agg_overflow);
	ATF_REQUIRE_EQ(r.agg.key[0], 0x11u);
	ATF_REQUIRE_EQ(r.agg.key[1], 0x22u);
	ATF_REQUIRE_EQ(r.agg.value, 12345u);
	ATF_REQUIRE_EQ(r.unknown_sections, 0u);
	b = make_record({{KINST_SEC_STACK, 0, {0x10}, 0},
	    {KINST_SEC_AGG, KINST_SECF_OVERFLOW, {1, 2, 3}, 0}});
	r = parse_hit_record(b.data(), b.size());
	ATF_REQUIRE(r.has_agg && r.agg_overflow && r.has_stack);
	ATF_REQUIRE_EQ(r.agg.value, 3u);
	// Without one: no sample.
	b = make_record({});
	ATF_REQUIRE(!parse_hit_record(b.data(), b.size()).has_agg);
	b = make_record({{KINST_SEC_AGG, 0, {1, 2}, 0}});
	ATF_REQUIRE(record_error(b, b.size()).find("AGG section of 16 bytes") != std::string::npos);
	b = make_record({{KINST_SEC_AGG, 0, {1, 2, 3, 4}, 0}});
	ATF_REQUIRE(record_error(b, b.size()).find("AGG section of 32 bytes") != std::string::npos);
	b = make_record({{KINST_SEC_AGG, 0, {1, 2, 3}, 0}, {KINST_SEC_AGG, 0, {1, 2, 3}, 0}});
	ATF_REQUIRE(record_error(b, b.size()).find("two AGG sections") != std::string::npos);
	b = make_record({{KINST_SEC_AGG, KINST_SECF_TRUNCATED, {1, 2, 3}, 0}});
	ATF_REQUIRE(record_error(b, b.size()).find("AGG section with flags 1") != std::string::npos);
}

ATF_TEST_CASE_WITHOUT_HEAD(stack_frame_text);
ATF_TEST_CASE_BODY(stack_frame_text)
{
	Frame f;
	f.address = 0xffffffff81234567ull;
	ATF_REQUIRE_EQ(text_frame(f), "0xffffffff81234567 [?]");
	ATF_REQUIRE(json_frame(f)["function"].is_null());
	f.resolved = true;
	f.function = "ksys_read";
	f.offset = 0x1c;
	f.module = "kernel";
	ATF_REQUIRE_EQ(text_frame(f), "ksys_read+0x1c [kernel]");
	nlohmann::json j = json_frame(f);
	ATF_REQUIRE_EQ(j["address"], "0xffffffff81234567");
	ATF_REQUIRE_EQ(j["offset"], 0x1c);
	ATF_REQUIRE_EQ(j["module"], "kernel");
}

// MEM/STR sections (ABI 1.7): parsed, shown as hexdump -C lines and quoted
// strings, and as "mem"/"str" JSON; a size that disagrees with its length
// is a malformed record.
namespace {

std::vector<uint8_t>
cap_record(const std::vector<std::tuple<uint16_t, uint16_t, uint32_t, uint64_t, std::string>> &caps)
{
	std::vector<uint8_t> b(sizeof(struct kinst_hit_record), 0);
	for (const auto &c : caps) {
		struct kinst_rec_sec h;
		struct kinst_rec_cap rc;
		const std::string &bytes = std::get<4>(c);
		h.type = std::get<0>(c);
		h.flags = std::get<1>(c);
		h.len = (uint32_t)(sizeof(rc) + bytes.size());
		rc.index = std::get<2>(c);
		rc.addr = std::get<3>(c);
		rc.size = (uint32_t)bytes.size();
		b.insert(b.end(), (const uint8_t *)&h, (const uint8_t *)&h + sizeof(h));
		b.insert(b.end(), (const uint8_t *)&rc, (const uint8_t *)&rc + sizeof(rc));
		b.insert(b.end(), bytes.begin(), bytes.end());
		b.resize((b.size() + 7) & ~(size_t)7, 0);
	}
	struct kinst_hit_record *r = (struct kinst_hit_record *)b.data();
	r->hdr.size = (uint32_t)b.size();
	r->hdr.type = KINST_REC_HIT;
	return b;
}

} // namespace

ATF_TEST_CASE_WITHOUT_HEAD(record_captures);
ATF_TEST_CASE_BODY(record_captures)
{
	std::string mem("Hello, world!\n\x01\xff" "abc", 19);
	std::vector<uint8_t> b = cap_record({
	    {KINST_SEC_MEM, 0, 0, 0xffffffff81000000ull, mem},
	    {KINST_SEC_STR, 0, 1, 0x7ffc0010ull, std::string("/tmp/a \"b\"\\\t\x01", 13)},
	    {KINST_SEC_STR, KINST_SECF_TRUNCATED, 2, 0x7ffc0020ull, "abcd"},
	    {KINST_SEC_MEM, KINST_SECF_FAULT, 3, 0x10, ""},
	    {KINST_SEC_STR, KINST_SECF_DEREF, 4, 0, ""},
	});
	HitRecord r = parse_hit_record(b.data(), b.size());
	ATF_REQUIRE_EQ(r.caps.size(), 5u);
	ATF_REQUIRE_EQ(r.caps[0].bytes, mem);
	ATF_REQUIRE_EQ(r.caps[2].flags, KINST_SECF_TRUNCATED);
	std::vector<CaptureDesc> d = {{"rdi", false, 19}, {"rsi", true, 256},
	    {"rdx", true, 4}, {"0x10", false, 8}, {"*(0x10)", true, 256}};
	std::string t = text_captures(r, d);
	const char *want =
	    "\n    mem rdi @ 0xffffffff81000000: 19 bytes"
	    "\n        00000000  48 65 6c 6c 6f 2c 20 77  6f 72 6c 64 21 0a 01 ff  |Hello, world!...|"
	    "\n        00000010  61 62 63                                          |abc|"
	    "\n    str rsi @ 0x7ffc0010: \"/tmp/a \\\"b\\\"\\\\\\t\\001\""
	    "\n    str rdx @ 0x7ffc0020: \"abcd\"... (cut at 4 bytes)"
	    "\n    mem 0x10 @ 0x10: fault reading the bytes"
	    "\n    str *(0x10): fault computing the address";
	if (t != want)
		ATF_FAIL("text:\n" + t + "\nwanted:\n" + want);
	nlohmann::json j;
	json_captures(j, r, d);
	ATF_REQUIRE_EQ(j["mem"].size(), 2u);
	ATF_REQUIRE_EQ(j["str"].size(), 3u);
	ATF_REQUIRE_EQ(j["mem"][0]["expr"], "rdi");
	ATF_REQUIRE_EQ(j["mem"][0]["address"], "0xffffffff81000000");
	ATF_REQUIRE_EQ(j["mem"][0]["bytes"], "48656c6c6f2c20776f726c64210a01ff616263");
	ATF_REQUIRE_EQ(j["str"][0]["string"], std::string("/tmp/a \"b\"\\\t\x01", 13));
	ATF_REQUIRE_EQ(j["str"][0]["truncated"], false);
	ATF_REQUIRE_EQ(j["str"][1]["truncated"], true);
	ATF_REQUIRE_EQ(j["mem"][1]["fault"], "read");
	ATF_REQUIRE_EQ(j["mem"][1]["address"], "0x10");
	ATF_REQUIRE(!j["mem"][1].contains("bytes"));
	ATF_REQUIRE_EQ(j["str"][2]["fault"], "address");
	ATF_REQUIRE(j["str"][2]["address"].is_null());
	// A capture this trace did not ask for is named by its index.
	ATF_REQUIRE(text_captures(r, {}).find("mem capture#0 @") != std::string::npos);

	// size disagreeing with len, and a size over the limit: malformed.
	b = cap_record({{KINST_SEC_STR, 0, 0, 0x1000, "abc"}});
	struct kinst_rec_cap rc;
	memcpy(&rc, b.data() + sizeof(struct kinst_hit_record) + 8, sizeof(rc));
	rc.size = 4;
	memcpy(b.data() + sizeof(struct kinst_hit_record) + 8, &rc, sizeof(rc));
	ATF_REQUIRE(record_error(b, b.size()).find("malformed") != std::string::npos);
	b = cap_record({{KINST_SEC_STR, 0, 0, 0x1000, std::string(300, 'x')}});
	ATF_REQUIRE(record_error(b, b.size()).find("malformed") != std::string::npos);
	b = cap_record({{KINST_SEC_MEM, 0, 0, 0x1000, std::string(512, 'x')}});
	ATF_REQUIRE_EQ(parse_hit_record(b.data(), b.size()).caps[0].bytes.size(), 512u);
}

// Every feature from the ABI minor that brought it (kinst_abi.h's version
// comment), and the messages a module without it gets (the wording users
// and tests/vm/scenarios see).
// A module made of functions given here (section, address, size), linked
// or not, for SymbolTable's address lookups.
namespace {
class ListModule : public Module {
public:
	ListModule(const std::string &name, bool relocatable,
	    const std::vector<std::tuple<std::string, uint64_t, uint64_t>> &fns)
	{
		name_ = name;
		relocatable_ = relocatable;
		for (const auto &[sec, addr, size] : fns) {
			Function f;
			f.name = name + ":" + sec + "+" + std::to_string(addr) + "/" + std::to_string(size);
			f.section = sec;
			f.addr = addr;
			f.size = size;
			functions_.push_back(f);
		}
	}
	Bytes bytes(const Function &) override { return {}; }
};
} // namespace

// The address lookups against a scan.  containing(): every module's
// functions that contain the address, an unlinked module's in any of its
// sections, in (module, index) order.  containing_from(): in an unlinked
// module, those of the jump's own section of its own module; in a linked
// one, containing().  Nested and overlapping functions are found (each
// index entry's reach is the furthest end before it).
ATF_TEST_CASE_WITHOUT_HEAD(containing_from);
ATF_TEST_CASE_BODY(containing_from)
{
	SymbolTable syms;
	// Unsorted on purpose: add() must not rely on the order it is given.
	std::vector<std::tuple<std::string, uint64_t, uint64_t>> a = {
		{ ".text", 0x40, 0x10 }, { ".text", 0, 0x100 }, { ".text", 0x10, 0x10 },
		{ ".text", 0x10, 0x8 }, { ".init.text", 0, 0x400 }, { ".text", 0x200, 0x20 },
		{ ".text", 0x180, 0 }, { ".text.unlikely", 0x40, 0x40 }, { ".text", 0x210, 0x4 },
	};
	syms.add(std::make_unique<ListModule>("a", true, a));
	syms.add(std::make_unique<ListModule>("b", true,
	    std::vector<std::tuple<std::string, uint64_t, uint64_t>>{ { ".text", 0, 0x1000 } }));
	syms.add(std::make_unique<ListModule>("k", false,
	    std::vector<std::tuple<std::string, uint64_t, uint64_t>>{ { "", 0x40, 0x10 } }));
	auto names = [&syms](const std::vector<SymbolTable::Ref> &rs) {
		std::string s;
		for (const auto &r : rs)
			s += syms.function(r).name + " ";
		return s;
	};
	const auto &fa = syms.module(0).functions();
	for (const Function &from : fa) {
		for (uint64_t addr = 0; addr < 0x500; addr++) {
			std::vector<SymbolTable::Ref> want;
			for (size_t i = 0; i < fa.size(); i++)
				if (fa[i].section == from.section && addr >= fa[i].addr &&
				    addr - fa[i].addr < fa[i].size)
					want.push_back(SymbolTable::Ref{0, i});
			std::string w = names(want), g = names(syms.containing_from(from, addr));
			if (w != g)
				ATF_FAIL("from " + from.name + ", address " + std::to_string(addr) +
				    ": want [" + w + "], got [" + g + "]");
		}
	}
	// containing(): every module's functions, each section's too.
	for (uint64_t addr = 0; addr < 0x1100; addr += 3) {
		std::vector<SymbolTable::Ref> want;
		for (size_t mi = 0; mi < syms.modules().size(); mi++) {
			const auto &fs = syms.module(mi).functions();
			for (size_t i = 0; i < fs.size(); i++)
				if (addr >= fs[i].addr && addr - fs[i].addr < fs[i].size)
					want.push_back(SymbolTable::Ref{mi, i});
		}
		std::string w = names(want), g = names(syms.containing(addr));
		if (w != g)
			ATF_FAIL("containing(" + std::to_string(addr) + "): want [" + w + "], got [" +
			    g + "]");
	}
	// Three .text functions contain 0x14 (one from 0, two from 0x10);
	// .init.text's and module b's are not asked.
	ATF_REQUIRE_EQ(syms.containing_from(fa[0], 0x14).size(), 3u);
	ATF_REQUIRE_EQ(names(syms.containing_from(fa[0], 0x48)), "a:.text+64/16 a:.text+0/256 ");
	// Linked: every module's (containing()).
	const Function &k = syms.module(2).functions()[0];
	ATF_REQUIRE_EQ(names(syms.containing_from(k, 0x48)),
	    names(syms.containing(0x48)));
	ATF_REQUIRE_EQ(syms.containing(0x48).size(), 6u);	// a: 4, b: 1, k: 1
}

// find() by name and alias: the name map is filled lazily, and a module
// added after a find() is found too, in (module, index) order.
ATF_TEST_CASE_WITHOUT_HEAD(find_after_add);
ATF_TEST_CASE_BODY(find_after_add)
{
	SymbolTable syms;
	using Fns = std::vector<std::tuple<std::string, uint64_t, uint64_t>>;
	syms.add(std::make_unique<ListModule>("a", false, Fns{ { "", 0x10, 4 }, { "", 0x20, 4 } }));
	ATF_REQUIRE_EQ(syms.find("a:+16/4").size(), 1u);
	ATF_REQUIRE(syms.find("b:+16/4").empty());
	syms.add(std::make_unique<ListModule>("b", false, Fns{ { "", 0x10, 4 } }));
	auto b = syms.find("b:+16/4");
	ATF_REQUIRE_EQ(b.size(), 1u);
	ATF_REQUIRE_EQ(b[0].module, 1u);
	ATF_REQUIRE_EQ(b[0].index, 0u);
	ATF_REQUIRE_EQ(syms.find("a:+32/4").size(), 1u);
	ATF_REQUIRE_EQ(syms.find("a:+32/4")[0].index, 1u);
}

ATF_TEST_CASE_WITHOUT_HEAD(session_features);
ATF_TEST_CASE_BODY(session_features)
{
	const std::pair<Feature, unsigned> minors[] = {
		{ Feature::filter, 1 }, { Feature::arm_check, 2 }, { Feature::stack, 4 },
		{ Feature::prog, 5 }, { Feature::agg, 6 }, { Feature::mem_capture, 7 },
		{ Feature::agg_stack, 8 }, { Feature::noopt, 9 }, { Feature::thread_state, 10 },
		{ Feature::ring_size, 11 }, { Feature::mmap, 12 }, { Feature::sharing, 13 },
		{ Feature::agg_record, 14 },
	};
	for (const auto &fm : minors) {
		uint32_t v = (1u << 16) | fm.second;
		ATF_REQUIRE_EQ(feature_minor(fm.first), fm.second);
		ATF_REQUIRE(abi_has(v, fm.first));
		ATF_REQUIRE(!abi_has(v - 1, fm.first));
		ATF_REQUIRE(abi_has(KINST_ABI_VERSION, fm.first));
		ATF_REQUIRE(!abi_has(1u << 16, fm.first));
		// Only the minor counts (the major is checked at open).
		ATF_REQUIRE(abi_has((2u << 16) | fm.second, fm.first));
	}
	const struct {
		uint32_t v;
		Feature f;
		const char *what, *msg;
	} missing[] = {
		{ 0x10003, Feature::stack, "trace --stack", "trace --stack: the loaded kinst "
		    "module (ABI 1.3) cannot record stacks; load one of ABI 1.4 or later" },
		{ 0x10006, Feature::mem_capture, "trace --mem/--str", "trace --mem/--str: the "
		    "loaded kinst module (ABI 1.6) cannot capture memory; load one of ABI 1.7 "
		    "or later" },
		{ 0x10005, Feature::agg, "count", "count: the loaded kinst module (ABI 1.5) "
		    "cannot aggregate; load one of ABI 1.6 or later" },
		{ 0x10007, Feature::agg_stack, "hist", "hist: the loaded kinst module (ABI 1.7) "
		    "cannot count by stack; load one of ABI 1.8 or later" },
		{ 0x1000d, Feature::agg_record, "latency --perfetto", "latency --perfetto: the "
		    "loaded kinst module (ABI 1.13) cannot record the samples it aggregates; "
		    "load one of ABI 1.14 or later" },
		{ 0x10009, Feature::thread_state, "latency", "latency: the loaded kinst module "
		    "(ABI 1.9) cannot keep per-thread state or capture values; load one of "
		    "ABI 1.10 or later" },
		{ 0x1000a, Feature::ring_size, "trace --buffer-size", "trace --buffer-size: the "
		    "loaded kinst module (ABI 1.10) cannot size a session's rings "
		    "(--buffer-size); load one of ABI 1.11 or later" },
	};
	for (const auto &m : missing)
		ATF_REQUIRE_EQ(feature_missing(m.v, m.f, m.what), m.msg);
}

// A command that exited is reaped by wait() and forgotten: finish() after
// Ctrl-C must not signal its pid, which another process may have by then.
ATF_TEST_CASE_WITHOUT_HEAD(workload_reaped);
ATF_TEST_CASE_BODY(workload_reaped)
{
	Workload w({ "sh", "-c", "exit 3" }, 0);
	ATF_REQUIRE(!w.running());
	w.start();
	ATF_REQUIRE(w.running());
	w.wait();
	ATF_REQUIRE(!w.running());
	g_stop = 1;
	w.finish();
	g_stop = 0;
	ATF_REQUIRE(!w.running());
	// A command still running when the duration ends stays known.
	Workload v({ "sleep", "5" }, 0.05);
	v.start();
	v.wait();
	ATF_REQUIRE(v.running());
	g_stop = 1;
	v.finish();	// SIGTERM and reap
	g_stop = 0;
	ATF_REQUIRE(!v.running());
}

// done(), the non-blocking wait (latency --perfetto reads records until
// it): false while the command runs, true once it exited (reaped), and
// it stays true; with a duration, true once it is up.
ATF_TEST_CASE_WITHOUT_HEAD(workload_done);
ATF_TEST_CASE_BODY(workload_done)
{
	Workload w({ "sh", "-c", "sleep 0.3; exit 3" }, 0);
	w.start();
	ATF_REQUIRE(!w.done());
	ATF_REQUIRE(w.running());
	int n = 0;
	while (!w.done() && n++ < 500)
		usleep(10000);
	ATF_REQUIRE(w.done());
	ATF_REQUIRE(!w.running());
	ATF_REQUIRE(n > 5);	// it waited for the command
	ATF_REQUIRE(w.done());	// sticky
	Workload d({}, 0.2);
	d.start();
	ATF_REQUIRE(!d.done());
	usleep(250000);
	ATF_REQUIRE(d.done());
	ATF_REQUIRE(d.done());
	w.finish();
	d.finish();
}

// finish()'s SIGTERM right after start(), while the child may not have
// exec'd yet: the command dies of it.  With kinstctl's handler still in
// the child until the exec, the signal only set the child's g_stop and
// was lost; the command then ran its whole 15 s and finish() waited for
// it (seen: 19 of 20 rounds).  Each round must end well before the
// command could on its own (a hang check, not a speed one).
ATF_TEST_CASE_WITHOUT_HEAD(workload_signal_before_exec);
ATF_TEST_CASE_BODY(workload_signal_before_exec)
{
	struct sigaction old_int {}, old_term {};
	sigaction(SIGINT, nullptr, &old_int);
	sigaction(SIGTERM, nullptr, &old_term);
	own_signals(true);
	int slow = 0;
	const int rounds = 4;
	for (int i = 0; i < rounds; i++) {
		Workload w({ "sleep", "15" }, 0);
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		w.start();
		g_stop = 1;
		w.finish();
		g_stop = 0;
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (b.tv_sec - a.tv_sec >= 8)
			slow++;
		ATF_REQUIRE(!w.running());
	}
	sigaction(SIGINT, &old_int, nullptr);
	sigaction(SIGTERM, &old_term, nullptr);
	if (slow != 0)
		ATF_FAIL(std::to_string(slow) + " of " + std::to_string(rounds) +
		    " commands outlived the SIGTERM sent "
		    "right after their start (ran on until their own end)");
}

// The trace reader's priority (live.h): the calling thread's only.  On
// Linux nice -10 for that thread; never the main thread's (a pid given to
// setpriority(2) would renice it, and on FreeBSD the whole process), nor
// inherited by threads the main thread starts later.
ATF_TEST_CASE(reader_priority);
ATF_TEST_CASE_HEAD(reader_priority)
{
	set_md_var("descr", "live_raise_reader_priority() changes the calling thread's priority only");
	set_md_var("require.user", "root");	// a negative nice needs CAP_SYS_NICE
}
ATF_TEST_CASE_BODY(reader_priority)
{
	errno = 0;
	const int before = getpriority(PRIO_PROCESS, 0);
	ATF_REQUIRE(errno == 0);
	int reader = 0, later = 0;
	std::thread t([&] {
		live_raise_reader_priority();
#ifdef __linux__
		reader = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
#endif
	});
	t.join();
	ATF_REQUIRE_EQ(getpriority(PRIO_PROCESS, 0), before);
	std::thread u([&] { later = getpriority(PRIO_PROCESS, 0); });
	u.join();
	ATF_REQUIRE_EQ(later, before);
#ifdef __linux__
	ATF_REQUIRE_EQ(reader, -10);
#endif
}

// trace --perfetto and latency --perfetto with several threads per process
// (the guest scenarios have pid == tid everywhere): every event keeps its
// record's pid and tid, each process is named once (by pid), each thread
// once (by pid and tid), and a span's thread is the record's.
ATF_TEST_CASE_WITHOUT_HEAD(perfetto_threads);
ATF_TEST_CASE_BODY(perfetto_threads)
{
	struct In { int32_t pid, tid; const char *comm; } in[] = {
		{ 100, 100, "main" }, { 100, 101, "worker" }, { 100, 102, "worker" },
		{ 200, 201, "other" }, { 100, 101, "worker" }, { 200, 200, "other" },
	};
	char path[] = "/tmp/kinst_perfetto_XXXXXX";
	int fd = mkstemp(path);
	ATF_REQUIRE(fd >= 0);
	close(fd);
	{
		PerfettoWriter w(path);
		uint64_t t = 1000000;
		for (const auto &i : in) {
			HitRecord r;
			memset(&r.hit, 0, sizeof(r.hit));
			r.hit.pid = i.pid;
			r.hit.tid = i.tid;
			r.hit.timestamp_ns = (t += 1000);
			r.hit.addr = 0xffffffff81000000ull;
			strncpy(r.hit.comm, i.comm, sizeof(r.hit.comm) - 1);
			w.hit(r, nullptr);
			w.span(r.hit, 500, "span", SpanArgs());
		}
		w.finish();
	}
	std::ifstream f(path);
	nlohmann::json j = nlohmann::json::parse(f);
	unlink(path);
	std::vector<std::pair<int32_t, int32_t>> hits, spans;
	std::map<int32_t, int> pnames;
	std::map<std::pair<int32_t, int32_t>, int> tnames;
	for (const auto &e : j.at("traceEvents")) {
		std::string ph = e.at("ph");
		auto pt = std::make_pair(e.at("pid").get<int32_t>(), e.at("tid").get<int32_t>());
		if (ph == "i")
			hits.push_back(pt);
		else if (ph == "X")
			spans.push_back(pt);
		else if (ph == "M" && e.at("name") == "process_name") {
			pnames[pt.first]++;
			ATF_REQUIRE_EQ(pt.second, pt.first);
		} else if (ph == "M" && e.at("name") == "thread_name")
			tnames[pt]++;
	}
	std::vector<std::pair<int32_t, int32_t>> want;
	for (const auto &i : in)
		want.emplace_back(i.pid, i.tid);
	ATF_REQUIRE(hits == want);
	ATF_REQUIRE(spans == want);
	ATF_REQUIRE_EQ(pnames.size(), 2u);
	ATF_REQUIRE_EQ(pnames[100], 1);
	ATF_REQUIRE_EQ(pnames[200], 1);
	ATF_REQUIRE_EQ(tnames.size(), 5u);
	for (const auto &t : tnames)
		ATF_REQUIRE_EQ(t.second, 1);
	ATF_REQUIRE_EQ(tnames.count({ 100, 101 }), 1u);
	ATF_REQUIRE_EQ(tnames.count({ 200, 200 }), 1u);
}

// The streaming Perfetto writer (issue 42: no JSON document per event)
// writes the bytes the DOM writer it replaced wrote: each event as
// nlohmann::json's dump() of the same members (sorted, invalid UTF-8
// replaced), "ts" (and "dur") appended.  The reference (perfetto_dom.h)
// is that DOM writer, written again from the format; records are random, with comms
// and names that need escaping (quotes, control bytes, UTF-8, bytes that
// are not UTF-8).
namespace {

std::string
odd_text(std::mt19937_64 &rng, size_t max)
{
	static const char *const pieces[] = { "a", "dd", "\"", "\\", "\n", "\t", "\x01",
	    "\x7f", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xff", "\xc3", "\x80",
	    "\xe2\x82", "kworker/0:1", " ", "/" };
	std::string s;
	size_t n = rng() % (max + 1);
	while (s.size() < n)
		s += pieces[rng() % (sizeof(pieces) / sizeof(pieces[0]))];
	return s.substr(0, max);
}

} // namespace

ATF_TEST_CASE_WITHOUT_HEAD(perfetto_bytes);
ATF_TEST_CASE_BODY(perfetto_bytes)
{
	std::mt19937_64 rng(42);
	std::vector<ProbeDesc> probes(8);
	for (auto &p : probes) {
		p.name = "kernel:" + odd_text(rng, 20) + "+0x" + std::to_string(rng() % 999);
		p.insn = odd_text(rng, 30);
	}
	char path[] = "/tmp/kinst_perfetto_XXXXXX";
	int fd = mkstemp(path);
	ATF_REQUIRE(fd >= 0);
	close(fd);
	DomPerfetto dom("kinstctl \"x\"\n\xff");
	std::vector<std::string> frames = { "ksys_read+0x5", "do_syscall_64+0x3b", "\xff\"x" };
	{
		PerfettoWriter w(path, "kinstctl \"x\"\n\xff");
		for (int i = 0; i < 20000; i++) {
			HitRecord r;
			memset(&r.hit, 0, sizeof(r.hit));
			struct kinst_hit_record &h = r.hit;
			h.pid = (int32_t)(rng() % 7) - (i % 1000 == 0 ? 10 : 0);
			h.tid = h.pid + (int32_t)(rng() % 3);
			h.cpu = (uint32_t)(rng() % 300);
			h.probe_id = (uint32_t)(rng() % 100000);
			h.addr = rng();
			h.timestamp_ns = i % 777 == 0 ? rng() % 5000 : rng() >> (rng() % 64);
			for (int g = 0; g < KINST_NGPR; g++)
				h.regs.gpr[g] = rng() >> (rng() % 64);
			h.regs.rip = rng();
			h.regs.rflags = rng() % 0x1000;
			std::string c = odd_text(rng, sizeof(h.comm) - 1);
			memcpy(h.comm, c.data(), c.size());
			const ProbeDesc *p = rng() % 5 ? &probes[rng() % probes.size()] : nullptr;
			uint64_t dur = rng() % 3 ? rng() % 100000000 : rng();
			std::string name = odd_text(rng, 25), by = odd_text(rng, 12),
			    end = odd_text(rng, 25);
			SpanArgs a;
			a.cpu = h.cpu;
			a.latency_ns = dur;
			a.end = end;
			nlohmann::json args = {{"cpu", h.cpu}, {"latency_ns", dur}, {"end", end}};
			if (rng() % 2) {
				a.by = &by;
				args["by"] = by;
			}
			switch (rng() % 4) {
			case 0: break;
			case 1:
				a.stack_unknown = true;
				args["stack"] = nlohmann::json::array();
				args["stack_unknown"] = true;
				break;
			default:
				a.stack = &frames;
				a.stack_truncated = rng() % 2;
				args["stack"] = frames;
				args["stack_truncated"] = a.stack_truncated;
				break;
			}
			if (rng() % 3 == 0) {
				a.overflow = true;
				args["overflow"] = true;
			}
			w.hit(r, p);
			dom.hit(h, p);
			w.span(h, dur, name, a);
			dom.span(h, dur, name, args);
		}
		ATF_REQUIRE_EQ(w.events(), 40000u);
		w.finish();
	}
	dom.finish();
	std::ifstream f(path, std::ios::binary);
	std::string got((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
	unlink(path);
	if (got != dom.out) {
		size_t i = 0;
		while (i < got.size() && i < dom.out.size() && got[i] == dom.out[i])
			i++;
		size_t from = i > 200 ? i - 200 : 0;
		ATF_FAIL("first difference at byte " + std::to_string(i) + ": written ..." +
		    got.substr(from, 300) + "... DOM ..." + dom.out.substr(from, 300));
	}
	ATF_REQUIRE(nlohmann::json::parse(got).at("traceEvents").size() > 40000u);	// and it is JSON
}

// Spill<T> (latency --perfetto --by stack): records back in the order
// pushed, all of them, across its chunk size, and again after a drain.
ATF_TEST_CASE_WITHOUT_HEAD(spill_order);
ATF_TEST_CASE_BODY(spill_order)
{
	struct S { uint64_t a; uint32_t b; char c[20]; };
	char dir[] = "/tmp/kinst_spill_XXXXXX";
	ATF_REQUIRE(mkdtemp(dir) != nullptr);
	Spill<S> sp(std::string(dir) + "/x.json", "test");
	for (int round = 0; round < 2; round++) {
		uint64_t n = round ? 3 : 10007;
		for (uint64_t i = 0; i < n; i++) {
			S s;
			memset(&s, 0, sizeof(s));
			s.a = i * 7 + round;
			s.b = (uint32_t)i;
			snprintf(s.c, sizeof(s.c), "n%" PRIu64, i);
			sp.push(s);
		}
		ATF_REQUIRE_EQ(sp.size(), n);
		uint64_t k = 0;
		sp.drain([&](const S &s) {
			ATF_REQUIRE_EQ(s.a, k * 7 + round);
			ATF_REQUIRE_EQ(s.b, (uint32_t)k);
			ATF_REQUIRE_EQ(std::string(s.c), "n" + std::to_string(k));
			k++;
		});
		ATF_REQUIRE_EQ(k, n);
		ATF_REQUIRE(sp.empty());
	}
	// No file is left beside the path (it is unlinked at once).
	ATF_REQUIRE_EQ(rmdir(dir), 0);
	// A path whose directory takes no file (latency --perfetto
	// /dev/stdout): $TMPDIR instead, the same records back.
	char tdir[] = "/tmp/kinst_spill_XXXXXX";
	ATF_REQUIRE(mkdtemp(tdir) != nullptr);
	setenv("TMPDIR", tdir, 1);
	{
		Spill<S> other("/nonexistent-dir/x.json", "test");
		S s;
		memset(&s, 0, sizeof(s));
		s.a = 99;
		other.push(s);
		uint64_t got = 0;
		other.drain([&](const S &r) { got = r.a; });
		ATF_REQUIRE_EQ(got, 99u);
	}
	unsetenv("TMPDIR");
	ATF_REQUIRE_EQ(rmdir(tdir), 0);
}

// A refusal code this kinstctl does not know (a newer module's, beyond
// KINST_R_COUNT) is named reason-N and never taken for traceable; known
// codes keep their names (issue 45: reason-N had no test).
ATF_TEST_CASE_WITHOUT_HEAD(reason_from_newer_module);
ATF_TEST_CASE_BODY(reason_from_newer_module)
{
	Insn i;
	i.cls.treatment = KINST_T_REFUSE;
	i.cls.reason = KINST_R_COUNT + 3;
	ATF_REQUIRE(!traceable(i));
	ATF_REQUIRE_EQ(reason_name(i), "reason-" + std::to_string(KINST_R_COUNT + 3));
	ATF_REQUIRE(!refusal_class(reason_name(i)).empty());	// refused all the same
	i.cls.reason = 255;
	ATF_REQUIRE_EQ(reason_name(i), "reason-255");
	i.cls.reason = KINST_R_INT3;
	ATF_REQUIRE_EQ(reason_name(i), std::string(kinst_reason_name(KINST_R_INT3)));
}

// Capstone's text of an instruction whose bytes were rendered before comes
// from Disassembler::same_anywhere's cache, but only when the text cannot
// depend on the address: each relative branch and xbegin below sits at two
// addresses and must read differently there,
// each repeated instruction must read as Capstone reads it, and a full
// cache (more distinct instructions than slots) must answer the same.
ATF_TEST_CASE_WITHOUT_HEAD(insn_text_cache);
ATF_TEST_CASE_BODY(insn_text_cache)
{
	static const std::vector<std::vector<uint8_t>> moved = {
		{ 0xeb, 0x10 },					// jmp rel8
		{ 0xe9, 0x10, 0, 0, 0 },			// jmp rel32
		{ 0xe8, 0x10, 0, 0, 0 },			// call
		{ 0x70, 0x10 }, { 0x74, 0x10 }, { 0x7f, 0x10 },	// jo, je, jg rel8
		{ 0x0f, 0x80, 0x10, 0, 0, 0 },			// jo rel32
		{ 0x0f, 0x84, 0x10, 0, 0, 0 },			// je rel32
		{ 0x0f, 0x8f, 0x10, 0, 0, 0 },			// jg rel32
		{ 0xe2, 0x10 }, { 0xe1, 0x10 }, { 0xe0, 0x10 },	// loop, loope, loopne
		{ 0xe3, 0x10 },					// jrcxz
		{ 0xc7, 0xf8, 0x10, 0, 0, 0 },			// xbegin
	};
	// Capstone writes RIP-relative operands as displacements (the cache
	// keeps them when the Disassembler's own probe says so): each must
	// read as Capstone reads it, wherever it is.
	static const std::vector<std::vector<uint8_t>> riprel = {
		{ 0x48, 0x8b, 0x05, 0x10, 0, 0, 0 },		// mov 0x10(%rip),%rax
		{ 0xff, 0x25, 0x10, 0, 0, 0 },			// jmp *0x10(%rip)
	};
	static const std::vector<std::vector<uint8_t>> same = {
		{ 0x55 }, { 0xc3 }, { 0x48, 0x89, 0xe5 }, { 0x31, 0xc0 },
		{ 0xc7, 0x07, 0x10, 0, 0, 0 },			// movl $0x10,(%rdi): c7, not xbegin
		{ 0x48, 0x8b, 0x04, 0x25, 0x10, 0, 0, 0 },	// mov 0x10,%rax (absolute)
		{ 0xff, 0xe0 },					// jmp *%rax
	};
	for (Syntax syn : { Syntax::att, Syntax::intel }) {
		Disassembler dis(syn), ref(syn);
		auto text_at = [&](const std::vector<uint8_t> &b, uint64_t addr) {
			std::vector<Insn> v = walk_function(Bytes{b.data(), b.size()}, addr, dis);
			ATF_REQUIRE_EQ(v.size(), (size_t)1);
			std::string t = insn_text(dis, v[0]).text;
			Disassembler::Text r = ref.one(b.data(), b.size(), addr);
			ATF_REQUIRE_EQ(t, r.operands.empty() ? r.mnemonic : r.mnemonic + " " + r.operands);
			return t;
		};
		for (int round = 0; round < 2; round++) {
			for (const auto &b : moved)
				ATF_REQUIRE(text_at(b, 0x1000) != text_at(b, 0x2000));
			for (const auto &b : riprel)
				text_at(b, 0x1000 + 0x1000 * round);
		}
		// Fill every slot many times over with distinct instructions
		// (mov $imm32,%eax), then the repeated ones again.
		for (int round = 0; round < 2; round++) {
			for (const auto &b : same)
				ATF_REQUIRE_EQ(text_at(b, 0x1000), text_at(b, 0x2000));
			for (uint32_t i = 0; i < 40000; i += 7) {
				std::vector<uint8_t> b = { 0xb8, (uint8_t)i, (uint8_t)(i >> 8), 0, 0 };
				text_at(b, 0x3000 + i);
			}
		}
		ATF_REQUIRE(dis.riprel_same_anywhere());	// Debian's Capstone 4
		// Direct branches come from the cache with their operand
		// written for each target: Capstone's text at every address,
		// targets it writes in decimal (below 10) and wrapping ones
		// too, and operand-size prefixed jumps, whose targets it cuts
		// to 16 bits.  0x1000 first: the slot is filled there.
		static const std::vector<std::vector<uint8_t>> branches = {
			{ 0xe8, 0, 0, 0, 0 }, { 0xeb, 0xfe }, { 0x74, 0x80 }, { 0xe3, 0x05 },
			{ 0x66, 0xe9, 0x10, 0 }, { 0x66, 0xeb, 0x10 }, { 0xf2, 0xe9, 0, 0, 0, 0 },
			{ 0x0f, 0x84, 0xf0, 0xff, 0xff, 0xff }, { 0xe2, 0xfb },
		};
		static const uint64_t addrs[] = { 0x1000, 0, 2, 4, 5, 9, 10, 0x10, 0xfff0,
			0x12345678, 0xfffffffffffffff0ull, 0xffffffff81000000ull,
			0x7ffffffffffffffeull, 0x8000000000000000ull, 0xffffffffc0a01234ull };
		for (int round = 0; round < 2; round++)
			for (const auto &b : branches)
				for (uint64_t a : addrs)
					text_at(b, a);
	}
}

// list-offsets --json writes a branch's "target" object by hand: it must be
// the bytes json_line(BranchTarget::json()) writes -- resolved or not,
// names that need escapes, invalid UTF-8, offsets 0 and 2^64-1.
ATF_TEST_CASE_WITHOUT_HEAD(insn_json_target);
ATF_TEST_CASE_BODY(insn_json_target)
{
	static const uint8_t call[] = { 0xe8, 0, 0, 0, 0 };
	Insn in;
	in.offset = 4;
	in.addr = 0xffffffff81000004ull;
	in.len = sizeof(call);
	in.bytes = call;
	in.dec_status = kinst_decode(call, sizeof(call), &in.dec);
	InsnText t;
	t.mnemonic = "call";
	t.operands = "0x1234";
	t.text = "call 0x1234";
	t.disasm_len = in.len;
	std::string bare;
	append_json_insn(bare, "{\"p\":1", in, t);
	ATF_REQUIRE(bare.find("\"target\"") == std::string::npos);
	ATF_REQUIRE_EQ(bare.back(), '}');
	const std::string names[] = { "vfs_read", "", "a\"b\\c", "tab\there", "\xff\xfe bad utf-8",
	    "caf\xc3\xa9", "ctl\x01\x1f\x7f" };
	int checked = 0;
	for (bool resolved : { false, true })
		for (const auto &fn : names)
			for (uint64_t off : { (uint64_t)0, (uint64_t)0x1c, ~(uint64_t)0 }) {
				t.target = BranchTarget();
				t.target.set = true;
				t.target.resolved = resolved;
				t.target.address = 0xffffffffc0001000ull + off;
				t.target.offset = off;
				t.target.function = fn;
				t.target.module = fn.empty() ? "kernel" : "mod_" + fn;
				std::string got;
				append_json_insn(got, "{\"p\":1", in, t);
				std::string want = bare.substr(0, bare.size() - 1) + ",\"target\":" +
				    json_line(t.target.json()) + "}";
				ATF_REQUIRE_EQ(got, want);
				checked++;
			}
	ATF_REQUIRE_EQ(checked, 42);
}

// list-offsets --json writes each row through a raw cursor (RowOut): every
// row, appended after text of any length and with strings long enough to
// grow the buffer mid-row, must leave that text alone and parse to the
// values it was given (bytes >= 0x80 of the text as \u00XX: U+0080..U+00FF).
// An instruction of 15 random bytes b at offset off, address addr: the
// engine's decode and verdict, or refused with a random length.
static Insn
random_insn(std::mt19937_64 &rng, uint8_t (&b)[15], uint64_t off, uint64_t addr)
{
	for (auto &x : b)
		x = (uint8_t)rng();
	Insn in;
	in.offset = (uint32_t)off;
	in.addr = addr;
	in.bytes = b;
	in.dec_status = kinst_decode(b, sizeof(b), &in.dec);
	in.len = in.dec_status == KINST_DEC_OK ? in.dec.len : (uint8_t)(1 + rng() % 15);
	if (in.dec_status == KINST_DEC_OK)
		kinst_classify(in.dec_status, &in.dec, b, &in.cls);
	else
		in.cls.treatment = KINST_T_REFUSE;
	in.jopt = (uint8_t)(rng() % 3);
	return in;
}

// Up to max bytes for a JSON string: one in `spread` each a quote, a
// backslash, a control byte, a byte of 0x7f and above; letters otherwise.
static std::string
random_json_text(std::mt19937_64 &rng, size_t max, unsigned spread)
{
	std::string t(rng() % (max + 1), ' ');
	for (auto &c : t) {
		unsigned r = (unsigned)(rng() % spread);
		c = r == 0 ? '"' : r == 1 ? '\\' : r == 2 ? (char)(rng() % 0x20) :
		    r == 3 ? (char)(0x7f + rng() % 0x81) : (char)('a' + rng() % 26);
	}
	return t;
}

// A module of nothing but a name, a path and flags.
class NamedModule : public Module {
public:
	NamedModule(const std::string &name, const std::string &path, bool rel, bool a64)
	{
		name_ = name;
		path_ = path;
		relocatable_ = rel;
		a64_ = a64;
	}
	Bytes bytes(const Function &) override { return Bytes{}; }
};

// list-offsets --json's function and summary lines, written without a
// json value, against the json values they were (the reference below is
// the code they replaced), dumped as json_line() dumps: byte for byte,
// names with quotes, control bytes and invalid UTF-8 included.
ATF_TEST_CASE_WITHOUT_HEAD(json_function_summary_lines);
ATF_TEST_CASE_BODY(json_function_summary_lines)
{
	using nlohmann::json;
	std::mt19937_64 rng(7);
	auto text = [&rng](size_t max) { return random_json_text(rng, max, 12); };
	const char *reasons[] = {"ftrace-site", "int3", "fixup", "\xff\"odd", "rep"};
	SymbolTable syms;
	for (int i = 0; i < 8; i++)
		syms.add(std::make_unique<NamedModule>(text(12), text(40), i % 2 == 0, i % 3 == 0));
	int lines = 0;
	for (int i = 0; i < 2000; i++) {
		Function f;
		f.name = text(30);
		for (size_t k = rng() % 4; k > 0; k--)
			f.aliases.push_back(text(10));
		f.addr = rng() >> (rng() % 64);
		f.size = rng() % 5000;
		f.section = rng() % 2 ? text(12) : "";
		f.global = rng() % 2;
		f.module = rng() % syms.modules().size();
		const Module &m = syms.module(f.module);
		json fj = {{"schema", KINST_JSON_SCHEMA}, {"type", "function"}, {"module", m.name()},
		    {"function", f.name}, {"aliases", f.aliases}, {"address", hex(f.addr)},
		    {"size", f.size}, {"global", f.global}, {"relocatable", m.relocatable()},
		    {"file", m.path()}};
		if (!f.section.empty())
			fj["section"] = f.section;
		if (m.a64())
			fj["arch"] = "arm64";
		std::string got = "prefix";
		append_json_function(got, syms, f);
		ATF_REQUIRE_EQ(got, "prefix" + json_line(fj));

		Tally t;
		t.functions = rng() % 100;
		t.instructions = rng();
		t.ool = rng() % 1000;
		t.ool_riprel = rng() % 1000;
		t.emulated = rng() % 1000;
		t.refused = rng() % 1000;
		t.length_fallbacks = rng() % 3;
		t.jopt_known = rng() % 2;
		t.jump_optimizable = rng() % 1000;
		for (size_t k = rng() % 4; k > 0; k--)
			t.by_reason[reasons[rng() % 5]] = rng() % 50;
		const bool total = i % 5 == 0;
		json sj = {{"schema", KINST_JSON_SCHEMA}, {"type", total ? "total" : "summary"},
		    {"instructions", t.instructions}, {"traceable", t.traceable()},
		    {"out_of_line", t.ool}, {"out_of_line_riprel", t.ool_riprel},
		    {"emulated", t.emulated}, {"refused", t.refused},
		    {"refused_by_reason", t.by_reason},
		    {"length_fallbacks", t.length_fallbacks}};
		if (t.jopt_known)
			sj["jump_optimizable"] = t.jump_optimizable;
		if (!total) {
			sj["module"] = m.name();
			sj["function"] = f.name;
		} else {
			sj["functions"] = t.functions;
		}
		got.clear();
		append_json_summary(got, total ? nullptr : &syms, total ? nullptr : &f, t);
		ATF_REQUIRE_EQ(got, json_line(sj));
		lines += 2;
	}
	ATF_REQUIRE_EQ(lines, 4000);
}

ATF_TEST_CASE_WITHOUT_HEAD(insn_json_rows);
ATF_TEST_CASE_BODY(insn_json_rows)
{
	std::mt19937_64 rng(42);
	auto text = [&rng](size_t max) { return random_json_text(rng, max, 16); };
	auto latin1 = [](const std::string &t) {	// what \u00XX parses to
		std::string u;
		for (unsigned char c : t)
			if (c < 0x80) {
				u += (char)c;
			} else {
				u += (char)(0xc0 | (c >> 6));
				u += (char)(0x80 | (c & 0x3f));
			}
		return u;
	};
	int rows = 0, long_rows = 0;
	for (int i = 0; i < 3000; i++) {
		uint8_t b[15];
		Insn in = random_insn(rng, b, rng(), rng());
		InsnText t;
		bool big = i % 10 == 0;
		t.mnemonic = text(big ? 600 : 8);
		t.operands = text(big ? 3000 : 30);
		t.text = text(big ? 900 : 40);
		t.reloc = rng() % 4 == 0 ? text(20) : "";
		t.disasm_len = (unsigned)(rng() % 16);
		std::string out = text(i % 3 == 0 ? 2000 : 100);
		std::string before = out;
		append_json_insn(out, "{\"p\":" + std::to_string(i), in, t);
		ATF_REQUIRE_EQ(out.compare(0, before.size(), before), 0);
		nlohmann::json j = nlohmann::json::parse(out.substr(before.size()));
		ATF_REQUIRE_EQ(j["p"].get<int>(), i);
		ATF_REQUIRE_EQ(j["offset"].get<uint64_t>(), in.offset);
		ATF_REQUIRE_EQ(j["address"].get<std::string>(), hex(in.addr));
		ATF_REQUIRE_EQ(j["length"].get<unsigned>(), in.len);
		ATF_REQUIRE_EQ(j["bytes"].get<std::string>(), hex_bytes(b, in.len, ""));
		ATF_REQUIRE_EQ(j["mnemonic"].get<std::string>(), latin1(t.mnemonic));
		ATF_REQUIRE_EQ(j["operands"].get<std::string>(), latin1(t.operands));
		ATF_REQUIRE_EQ(j["text"].get<std::string>(), latin1(t.text));
		ATF_REQUIRE_EQ(j["verdict"].get<std::string>(), verdict_name(in));
		ATF_REQUIRE_EQ(j["riprel"].get<bool>(), (in.cls.flags & KINST_CF_RIPREL) != 0);
		ATF_REQUIRE_EQ(j.contains("reloc"), !t.reloc.empty());
		if (!t.reloc.empty())
			ATF_REQUIRE_EQ(j["reloc"].get<std::string>(), latin1(t.reloc));
		if (!traceable(in)) {
			ATF_REQUIRE_EQ(j["reason"].get<std::string>(), reason_name(in));
			ATF_REQUIRE_EQ(j["refusal_class"].get<std::string>(),
			    refusal_class(reason_name(in)));
		} else if (in.jopt != 0) {
			ATF_REQUIRE_EQ(j["probe"].get<std::string>(),
			    in.jopt == KINST_JQ_YES ? "jump" : "trap");
			ATF_REQUIRE_EQ(j.contains("jump_refusal"), in.jopt != KINST_JQ_YES);
		}
		ATF_REQUIRE_EQ(j.contains("disasm_length"), t.disasm_len != in.len);
		if (t.disasm_len != in.len)
			ATF_REQUIRE_EQ(j["disasm_length"].get<unsigned>(), t.disasm_len);
		rows++;
		long_rows += out.size() - before.size() > 1024;
	}
	ATF_REQUIRE_EQ(rows, 3000);
	ATF_REQUIRE(long_rows >= 250);	// rows that grew the buffer several times
}

// list-offsets' text row against a reference written here from the
// format kinstctl(8) shows: "  +0xOFF" (offset left-aligned in 5), the
// address (8 columns right-aligned when section-relative, else 16 digits),
// the bytes (24 columns), the text with its annotations (40 columns), the
// verdict (painted when colour is on).  Appended after text of any length,
// with pieces long enough to grow the buffer mid-row.
ATF_TEST_CASE_WITHOUT_HEAD(text_row_columns);
ATF_TEST_CASE_BODY(text_row_columns)
{
	std::mt19937_64 rng(7);
	auto word = [&rng](size_t max) {
		std::string t(rng() % (max + 1), 'x');
		for (auto &c : t)
			c = (char)('a' + rng() % 26);
		return t;
	};
	auto ljust = [](std::string t, size_t w) {
		if (t.size() < w)
			t.append(w - t.size(), ' ');
		return t;
	};
	int rows = 0, long_rows = 0, relocatable_rows = 0, short_addr = 0;
	for (int i = 0; i < 4000; i++) {
		uint8_t b[15];
		uint64_t off = rng() % 4 == 0 ? rng() : rng() % 0x3000;
		Insn in = random_insn(rng, b, off, rng() % 3 == 0 ? rng() : rng() % 0x100000);
		InsnText t;
		bool big = i % 10 == 0;
		t.text = word(big ? 3000 : 45);
		t.reloc = rng() % 4 == 0 ? word(20) : "";
		t.disasm_len = (unsigned)(rng() % 16);
		if (rng() % 4 == 0) {
			t.target.set = t.target.resolved = true;
			t.target.function = word(12);
			t.target.offset = rng() % 3 == 0 ? 0 : rng() % 0x400;
		}
		bool relocatable = rng() % 2 == 0;
		Style st;
		st.color = rng() % 3 == 0;

		char a[40];
		std::string ref = "  +0x";
		snprintf(a, sizeof(a), "%-5llx ", (unsigned long long)in.offset);
		ref += a;
		snprintf(a, sizeof(a), relocatable ? "%8llx" : "%016llx",
		    (unsigned long long)in.addr);
		ref += a;
		std::string bytes;
		for (unsigned k = 0; k < in.len; k++) {
			snprintf(a, sizeof(a), k ? " %02x" : "%02x", b[k]);
			bytes += a;
		}
		ref += "  " + ljust(bytes, 24) + "  ";
		std::string txt = t.text;
		if (t.target.set) {
			txt += " <" + t.target.function;
			if (t.target.offset) {
				snprintf(a, sizeof(a), "+0x%llx", (unsigned long long)t.target.offset);
				txt += a;
			}
			txt += ">";
		}
		if (t.disasm_len != in.len && t.disasm_len != 0)
			txt += " [capstone: " + std::to_string(t.disasm_len) + " bytes]";
		if (!t.reloc.empty())
			txt += " <" + t.reloc + ">";
		ref += ljust(txt, 40) + " ";
		std::string sgr, v;
		const char *jump = in.jopt == KINST_JQ_YES ? " (jump-optimizable)" : "";
		if (!traceable(in)) {
			sgr = "31";
			v = "refused: " + reason_name(in);
		} else if (in.cls.treatment == KINST_T_EMULATE) {
			sgr = "36";
			v = "emulated: " + emulation_name(in) + jump;
		} else {
			sgr = "32";
			v = std::string(in.cls.treatment == KINST_T_OOL ? "out-of-line" :
			    "out-of-line-riprel") + jump;
		}
		ref += st.color ? "\033[" + sgr + "m" + v + "\033[0m" : v;

		std::string out = word(i % 3 == 0 ? 2000 : 100);
		std::string before = out;
		append_text_insn_row(out, in, t, relocatable, st);
		ATF_REQUIRE_EQ(out.compare(0, before.size(), before), 0);
		ATF_REQUIRE_EQ(out.substr(before.size()), ref);
		ATF_REQUIRE_EQ(text_insn_row(in, t, relocatable, st), ref);
		rows++;
		long_rows += ref.size() > 1024;
		relocatable_rows += relocatable;
		short_addr += relocatable && in.addr < 0x10000000;
	}
	ATF_REQUIRE_EQ(rows, 4000);
	ATF_REQUIRE(long_rows >= 200);	// rows that grew the buffer mid-row
	ATF_REQUIRE(short_addr >= 1000);	// padded on the left
	ATF_REQUIRE(relocatable_rows < rows);
}

ATF_INIT_TEST_CASES(tcs)
{
	ATF_ADD_TEST_CASE(tcs, sched_clock_stable_line);
	ATF_ADD_TEST_CASE(tcs, text_row_columns);
	ATF_ADD_TEST_CASE(tcs, insn_json_rows);
	ATF_ADD_TEST_CASE(tcs, json_function_summary_lines);
	ATF_ADD_TEST_CASE(tcs, insn_json_target);
	ATF_ADD_TEST_CASE(tcs, insn_text_cache);
	ATF_ADD_TEST_CASE(tcs, record_sections);
	ATF_ADD_TEST_CASE(tcs, record_malformed);
	ATF_ADD_TEST_CASE(tcs, record_agg);
	ATF_ADD_TEST_CASE(tcs, workload_done);
	ATF_ADD_TEST_CASE(tcs, workload_signal_before_exec);
	ATF_ADD_TEST_CASE(tcs, perfetto_threads);
	ATF_ADD_TEST_CASE(tcs, perfetto_bytes);
	ATF_ADD_TEST_CASE(tcs, spill_order);
	ATF_ADD_TEST_CASE(tcs, reason_from_newer_module);
	ATF_ADD_TEST_CASE(tcs, record_captures);
	ATF_ADD_TEST_CASE(tcs, stack_frame_text);
	ATF_ADD_TEST_CASE(tcs, spec_forms);
	ATF_ADD_TEST_CASE(tcs, spec_errors);
	ATF_ADD_TEST_CASE(tcs, numbers);
	ATF_ADD_TEST_CASE(tcs, kallsyms_parse);
	ATF_ADD_TEST_CASE(tcs, kallsyms_modules);
	ATF_ADD_TEST_CASE(tcs, group_aliases);
	ATF_ADD_TEST_CASE(tcs, elf_memory_errors);
	ATF_ADD_TEST_CASE(tcs, elf_drop_behind);
	ATF_ADD_TEST_CASE(tcs, place_static_functions);
	ATF_ADD_TEST_CASE(tcs, place_sections_independent);
	ATF_ADD_TEST_CASE(tcs, place_bases_disagree);
	ATF_ADD_TEST_CASE(tcs, place_section_without_globals);
	ATF_ADD_TEST_CASE(tcs, fuzz_regressions);
	ATF_ADD_TEST_CASE(tcs, containing_from);
	ATF_ADD_TEST_CASE(tcs, find_after_add);
	ATF_ADD_TEST_CASE(tcs, session_features);
	ATF_ADD_TEST_CASE(tcs, workload_reaped);
	ATF_ADD_TEST_CASE(tcs, reader_priority);
}
