// SPDX-License-Identifier: BSD-2-Clause
#include "debuginfo/debuginfo.h"
#include "symbols/returns.h"

#include <sys/stat.h>
#include <sys/utsname.h>
#include <fcntl.h>
#include <unistd.h>

#if KINST_HAVE_LIBDW
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#else
// Built without libdw (KINST_WITH_LIBDW=OFF): the handles ModuleDebug
// names, which is then never made (DebugInfo::module finds no DWARF).
struct Dwfl;
struct Dwarf;
struct Dwarf_Die;
typedef uint64_t Dwarf_Addr;
#endif
#include <gelf.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_map>

#include "symbols/elf_image.h"
#include "base/error.h"
#include "base/text.h"
#include "base/live.h"
#include "symbols/sources.h"

extern "C" {
#include "x86/kinst_decode.h"
}

namespace kinst {

namespace {

#if KINST_HAVE_LIBDW
std::string
hex_id(const std::vector<uint8_t> &id)
{
	static const char d[] = "0123456789abcdef";
	std::string s;
	for (uint8_t b : id) {
		s += d[b >> 4];
		s += d[b & 15];
	}
	return s;
}
#endif

bool
exists(const std::string &p)
{
	struct stat st;
	return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string
base_name(const std::string &p)
{
	size_t s = p.find_last_of('/');
	return s == std::string::npos ? p : p.substr(s + 1);
}

// Where the debug file is looked for: needs libdw (dwelf).
#if KINST_HAVE_LIBDW

// NT_GNU_BUILD_ID in a buffer of ELF notes (/sys/kernel/notes,
// /sys/module/M/notes/.note.gnu.build-id).
std::vector<uint8_t>
build_id_from_notes(const std::vector<uint8_t> &b)
{
	size_t off = 0;
	auto rd = [&](size_t o) {
		uint32_t v;
		memcpy(&v, b.data() + o, 4);
		return v;
	};
	while (off + 12 <= b.size()) {
		uint32_t namesz = rd(off), descsz = rd(off + 4), type = rd(off + 8);
		size_t name = off + 12, desc = name + ((namesz + 3) & ~3u);
		size_t next = desc + ((descsz + 3) & ~3u);
		if (namesz > b.size() || descsz > b.size() || next > b.size() || next <= off)
			break;
		if (type == 3 && namesz == 4 && memcmp(b.data() + name, "GNU", 4) == 0)
			return std::vector<uint8_t>(b.begin() + desc, b.begin() + desc + descsz);
		off = next;
	}
	return {};
}

std::vector<uint8_t>
read_small_file(const std::string &p)
{
	std::ifstream in(p, std::ios::binary);
	if (!in)
		return {};
	std::vector<uint8_t> v((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	if (v.size() > (1u << 20))
		v.clear();
	return v;
}

// The build-id note of an ELF file (empty if none or unreadable).
std::vector<uint8_t>
file_build_id(const std::string &path)
{
	std::vector<uint8_t> id;
	int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return id;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
	if (e != nullptr) {
		const void *p = nullptr;
		ssize_t n = dwelf_elf_gnu_build_id(e, &p);
		if (n > 0 && n <= 64)
			id.assign((const uint8_t *)p, (const uint8_t *)p + n);
		elf_end(e);
	}
	close(fd);
	return id;
}

std::string
kernel_release()
{
	struct utsname u;
	if (uname(&u) != 0)
		return "";
	return u.release;
}

bool
is_freebsd()
{
	struct utsname u;
	return uname(&u) == 0 && strcmp(u.sysname, "FreeBSD") == 0;
}

int
no_separate_debuginfo(Dwfl_Module *, void **, const char *, Dwarf_Addr, const char *,
    const char *, GElf_Word, char **)
{
	return -1;
}

const Dwfl_Callbacks offline_callbacks = {
	dwfl_build_id_find_elf,
	no_separate_debuginfo,
	dwfl_offline_section_address,
	nullptr,
};

#endif

} // namespace

bool
source_file_matches(const std::string &dwarf_name, const std::string &file)
{
	if (file.empty() || dwarf_name.size() < file.size())
		return false;
	if (dwarf_name.compare(dwarf_name.size() - file.size(), file.size(), file) != 0)
		return false;
	return dwarf_name.size() == file.size() || file[0] == '/' ||
	    dwarf_name[dwarf_name.size() - file.size() - 1] == '/';
}

// ---- one module's debug data ----

struct LineRange {
	uint64_t lo, hi;	// debug addresses
	uint32_t file;		// index in files
	uint32_t line;
};

class ModuleDebug {
public:
	ModuleDebug(const std::string &path, Module &m);
	~ModuleDebug();
	bool has_dwarf() const { return dw_ != nullptr; }
	const std::vector<uint8_t> &build_id() const { return build_id_; }
	const std::string &path() const { return path_; }
	Dwfl_Module *dwfl_module() const { return dm_; }

	// Debug address of f's first byte (false if f is not in this file).
	bool base(const Function &f, uint64_t *out);
	// The function containing a debug address, and its base.
	const Function *function_at(uint64_t a, uint64_t *fbase);
	const LineRange *row(uint64_t a);
	const std::string &file(uint32_t i) const { return files_[i]; }
	size_t nfiles() const { return files_.size(); }
	const std::vector<LineRange> &ranges() { load_lines(); return ranges_; }
	std::vector<InlineFrame> chain(uint64_t a);
	// Inlined instances of name: (ranges, entry_pc or 0, call file, line).
	struct RawInline {
		std::vector<std::pair<uint64_t, uint64_t>> ranges;
		bool has_entry_pc = false;
		uint64_t entry_pc = 0;
		std::string call_file;
		unsigned call_line = 0;
	};
	std::vector<RawInline> find_inlines(const std::string &name);

private:
	void load_lines();
	void map_functions();
	std::string path_;
	Module &mod_;
	Dwfl *dwfl_ = nullptr;
	Dwfl_Module *dm_ = nullptr;
	Dwarf *dw_ = nullptr;
	std::vector<uint8_t> build_id_;
	bool lines_loaded_ = false, mapped_ = false;
	std::vector<LineRange> ranges_;
	std::vector<std::string> files_;
	std::unordered_map<const Function *, uint64_t> base_;
	// Every inlined range of the file, by start (chain()'s index).
	struct InlRange { uint64_t lo, hi; int depth; InlineFrame fr; };
	std::vector<InlRange> inl_;
	uint64_t inl_maxlen_ = 0;
	bool inl_loaded_ = false;
	void load_inlines();
	void walk_all(Dwarf_Die *die, Dwarf_Die *cu, Dwarf_Addr bias, int depth);
	struct Span { uint64_t lo, hi; const Function *f; };
	std::vector<Span> spans_;
};

#if KINST_HAVE_LIBDW

ModuleDebug::~ModuleDebug()
{
	if (dwfl_)
		dwfl_end(dwfl_);
}

ModuleDebug::ModuleDebug(const std::string &path, Module &m) : path_(path), mod_(m)
{
	dwfl_ = dwfl_begin(&offline_callbacks);
	if (dwfl_ == nullptr)
		throw Error(Exit::internal, std::string("libdw: ") + dwfl_errmsg(-1));
	dwfl_report_begin(dwfl_);
	dm_ = dwfl_report_offline(dwfl_, m.name().c_str(), path.c_str(), -1);
	dwfl_report_end(dwfl_, nullptr, nullptr);
	if (dm_ == nullptr)
		throw Error(Exit::bad_elf, path + ": cannot read it as debug info: " + dwfl_errmsg(-1));
	const unsigned char *bits = nullptr;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(dm_, &bits, &vaddr);
	if (n > 0)
		build_id_.assign(bits, bits + n);
	Dwarf_Addr bias;
	dw_ = dwfl_module_getdwarf(dm_, &bias);
}

void
ModuleDebug::map_functions()
{
	if (mapped_)
		return;
	mapped_ = true;
	// The debug file's own function symbols, by name.
	struct Sym { uint64_t addr, size; std::string sec; };
	std::unordered_multimap<std::string, Sym> by_name;
	int nsyms = dwfl_module_getsymtab(dm_);
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf;
		Dwarf_Addr bias;
		const char *name = dwfl_module_getsym_info(dm_, i, &sym, &addr, &shndx, &elf, &bias);
		if (name == nullptr || GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_size == 0)
			continue;
		std::string sec;
		Elf_Scn *scn = elf ? elf_getscn(elf, shndx) : nullptr;
		GElf_Shdr sh;
		size_t shstrndx;
		if (scn && gelf_getshdr(scn, &sh) && elf_getshdrstrndx(elf, &shstrndx) == 0) {
			const char *sn = elf_strptr(elf, shstrndx, sh.sh_name);
			if (sn)
				sec = sn;
			// For ET_REL the section-relative value tells duplicates apart.
		}
		by_name.emplace(name, Sym{addr, sym.st_size, sec});
	}
	for (const auto &f : mod_.functions()) {
		std::vector<Sym> cand;
		std::vector<std::string> names{f.name};
		names.insert(names.end(), f.aliases.begin(), f.aliases.end());
		for (const auto &nm : names) {
			auto r = by_name.equal_range(nm);
			for (auto it = r.first; it != r.second; ++it)
				if (f.section.empty() || it->second.sec == f.section)
					cand.push_back(it->second);
			if (!cand.empty())
				break;
		}
		std::sort(cand.begin(), cand.end(), [](const Sym &a, const Sym &b) { return a.addr < b.addr; });
		cand.erase(std::unique(cand.begin(), cand.end(),
		    [](const Sym &a, const Sym &b) { return a.addr == b.addr; }), cand.end());
		// Static duplicates: the size tells them apart, if anything does
		// (live sizes on Linux run to the next symbol, padding included).
		if (cand.size() > 1)
			cand.erase(std::remove_if(cand.begin(), cand.end(),
			    [&](const Sym &c) { return c.size != f.size; }), cand.end());
		if (cand.size() != 1 || cand[0].size > f.size)
			continue;	// not there, or a duplicate we cannot place
		base_[&f] = cand[0].addr;
		spans_.push_back(Span{cand[0].addr, cand[0].addr + cand[0].size, &f});
	}
	std::sort(spans_.begin(), spans_.end(), [](const Span &a, const Span &b) { return a.lo < b.lo; });
}

bool
ModuleDebug::base(const Function &f, uint64_t *out)
{
	map_functions();
	auto it = base_.find(&f);
	if (it == base_.end())
		return false;
	*out = it->second;
	return true;
}

const Function *
ModuleDebug::function_at(uint64_t a, uint64_t *fbase)
{
	map_functions();
	auto it = std::upper_bound(spans_.begin(), spans_.end(), a,
	    [](uint64_t v, const Span &s) { return v < s.lo; });
	if (it == spans_.begin())
		return nullptr;
	--it;
	if (a >= it->hi)
		return nullptr;
	*fbase = it->lo;
	return it->f;
}

void
ModuleDebug::load_lines()
{
	if (lines_loaded_)
		return;
	lines_loaded_ = true;
	std::unordered_map<const char *, uint32_t> by_ptr;
	std::unordered_map<std::string, uint32_t> by_name;
	Dwarf_Die *cu = nullptr;
	Dwarf_Addr bias;
	while ((cu = dwfl_module_nextcu(dm_, cu, &bias)) != nullptr) {
		Dwarf_Lines *lines;
		size_t n;
		if (dwarf_getsrclines(cu, &lines, &n) != 0)
			continue;
		for (size_t i = 0; i + 1 < n; i++) {
			Dwarf_Line *l = dwarf_onesrcline(lines, i), *nx = dwarf_onesrcline(lines, i + 1);
			Dwarf_Addr a, b;
			bool end;
			int ln;
			if (dwarf_lineendsequence(l, &end) != 0 || end)
				continue;
			if (dwarf_lineaddr(l, &a) != 0 || dwarf_lineaddr(nx, &b) != 0 || b <= a)
				continue;
			if (dwarf_lineno(l, &ln) != 0 || ln <= 0)
				continue;
			const char *src = dwarf_linesrc(l, nullptr, nullptr);
			if (src == nullptr)
				continue;
			uint32_t fi;
			auto p = by_ptr.find(src);
			if (p != by_ptr.end()) {
				fi = p->second;
			} else {
				auto q = by_name.find(src);
				if (q == by_name.end()) {
					fi = (uint32_t)files_.size();
					files_.push_back(src);
					by_name.emplace(src, fi);
				} else
					fi = q->second;
				by_ptr.emplace(src, fi);
			}
			ranges_.push_back(LineRange{a + bias, b + bias, fi, (uint32_t)ln});
		}
	}
	std::stable_sort(ranges_.begin(), ranges_.end(),
	    [](const LineRange &x, const LineRange &y) { return x.lo < y.lo; });
}

const LineRange *
ModuleDebug::row(uint64_t a)
{
	load_lines();
	auto it = std::upper_bound(ranges_.begin(), ranges_.end(), a,
	    [](uint64_t v, const LineRange &r) { return v < r.lo; });
	if (it == ranges_.begin())
		return nullptr;
	--it;
	return a < it->hi ? &*it : nullptr;
}

static std::string
die_name(Dwarf_Die *die)
{
	Dwarf_Attribute at;
	const char *n = nullptr;
	if (dwarf_attr_integrate(die, DW_AT_name, &at) != nullptr)
		n = dwarf_formstring(&at);
	return n ? n : "?";
}

static void
call_site(Dwarf_Die *die, Dwarf_Die *cu, std::string *file, unsigned *line)
{
	Dwarf_Attribute at;
	Dwarf_Word w;
	*line = 0;
	file->clear();
	if (dwarf_attr(die, DW_AT_call_line, &at) && dwarf_formudata(&at, &w) == 0)
		*line = (unsigned)w;
	Dwarf_Files *files;
	size_t nf;
	if (dwarf_attr(die, DW_AT_call_file, &at) && dwarf_formudata(&at, &w) == 0 &&
	    dwarf_getsrcfiles(cu, &files, &nf) == 0 && w < nf) {
		const char *f = dwarf_filesrc(files, w, nullptr, nullptr);
		if (f)
			*file = f;
	}
}

// One walk over the DIEs collects every inlined range; chain() then looks
// addresses up in it (dwarf_getscopes would walk the unit at every call).
void
ModuleDebug::walk_all(Dwarf_Die *die, Dwarf_Die *cu, Dwarf_Addr bias, int depth)
{
	if (depth > 64)
		return;
	do {
		int tag = dwarf_tag(die);
		int inner = depth;
		if (tag == DW_TAG_inlined_subroutine) {
			InlineFrame fr;
			fr.function = die_name(die);
			call_site(die, cu, &fr.call_file, &fr.call_line);
			Dwarf_Addr base, s, e;
			ptrdiff_t off = 0;
			while ((off = dwarf_ranges(die, off, &base, &s, &e)) > 0)
				if (e > s) {
					inl_.push_back(InlRange{s + bias, e + bias, depth, fr});
					inl_maxlen_ = std::max<uint64_t>(inl_maxlen_, e - s);
				}
			inner = depth + 1;
		}
		bool scope = tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block ||
		    tag == DW_TAG_inlined_subroutine || tag == DW_TAG_namespace ||
		    tag == DW_TAG_compile_unit || tag == DW_TAG_partial_unit;
		Dwarf_Die child;
		if (scope && dwarf_child(die, &child) == 0)
			walk_all(&child, cu, bias, inner);
	} while (dwarf_siblingof(die, die) == 0);
}

void
ModuleDebug::load_inlines()
{
	if (inl_loaded_)
		return;
	inl_loaded_ = true;
	Dwarf_Die *cu = nullptr;
	Dwarf_Addr bias;
	while ((cu = dwfl_module_nextcu(dm_, cu, &bias)) != nullptr) {
		Dwarf_Die child;
		if (dwarf_child(cu, &child) == 0)
			walk_all(&child, cu, bias, 0);
	}
	std::stable_sort(inl_.begin(), inl_.end(),
	    [](const InlRange &x, const InlRange &y) { return x.lo < y.lo; });
}

std::vector<InlineFrame>
ModuleDebug::chain(uint64_t a)
{
	load_inlines();
	std::vector<const InlRange *> in;
	auto it = std::upper_bound(inl_.begin(), inl_.end(), a,
	    [](uint64_t v, const InlRange &r) { return v < r.lo; });
	while (it != inl_.begin()) {
		--it;
		if (a - it->lo >= inl_maxlen_)
			break;
		if (a < it->hi)
			in.push_back(&*it);
	}
	std::stable_sort(in.begin(), in.end(),
	    [](const InlRange *x, const InlRange *y) { return x->depth > y->depth; });
	std::vector<InlineFrame> out;
	for (const auto *r : in)
		out.push_back(r->fr);
	return out;
}

static void
walk_inlines(Dwarf_Die *die, Dwarf_Die *cu, Dwarf_Addr bias, const std::string &name,
    std::vector<ModuleDebug::RawInline> &out, int depth)
{
	if (depth > 64)
		return;
	do {
		int tag = dwarf_tag(die);
		if (tag == DW_TAG_inlined_subroutine && die_name(die) == name) {
			ModuleDebug::RawInline r;
			Dwarf_Addr base, s, e;
			ptrdiff_t off = 0;
			while ((off = dwarf_ranges(die, off, &base, &s, &e)) > 0)
				if (e > s)
					r.ranges.push_back({s + bias, e + bias});
			Dwarf_Attribute at;
			Dwarf_Addr pc;
			if (dwarf_attr(die, DW_AT_entry_pc, &at) && dwarf_entrypc(die, &pc) == 0) {
				r.has_entry_pc = true;
				r.entry_pc = pc + bias;
			}
			call_site(die, cu, &r.call_file, &r.call_line);
			std::sort(r.ranges.begin(), r.ranges.end());
			if (!r.ranges.empty())
				out.push_back(r);
		}
		bool scope = tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block ||
		    tag == DW_TAG_inlined_subroutine || tag == DW_TAG_compile_unit ||
		    tag == DW_TAG_partial_unit || tag == DW_TAG_namespace;
		Dwarf_Die child;
		if (scope && dwarf_child(die, &child) == 0)
			walk_inlines(&child, cu, bias, name, out, depth + 1);
	} while (dwarf_siblingof(die, die) == 0);
}

std::vector<ModuleDebug::RawInline>
ModuleDebug::find_inlines(const std::string &name)
{
	std::vector<RawInline> out;
	Dwarf_Die *cu = nullptr;
	Dwarf_Addr bias;
	while ((cu = dwfl_module_nextcu(dm_, cu, &bias)) != nullptr) {
		Dwarf_Die child;
		if (dwarf_child(cu, &child) == 0)
			walk_inlines(&child, cu, bias, name, out, 0);
	}
	return out;
}

#else	// !KINST_HAVE_LIBDW: never made (DebugInfo::module returns none).

ModuleDebug::ModuleDebug(const std::string &path, Module &m) : path_(path), mod_(m)
{
	throw Error(Exit::internal, path + ": this kinstctl was built without libdw");
}

ModuleDebug::~ModuleDebug() = default;
bool ModuleDebug::base(const Function &, uint64_t *) { return false; }
const Function *ModuleDebug::function_at(uint64_t, uint64_t *) { return nullptr; }
const LineRange *ModuleDebug::row(uint64_t) { return nullptr; }
std::vector<InlineFrame> ModuleDebug::chain(uint64_t) { return {}; }
std::vector<ModuleDebug::RawInline> ModuleDebug::find_inlines(const std::string &) { return {}; }
void ModuleDebug::load_lines() {}

#endif	// KINST_HAVE_LIBDW

// ---- finding the debug file ----

namespace {

#if KINST_HAVE_LIBDW
// The running or offline image's build-id (empty if unknown).
std::vector<uint8_t>
image_build_id(Module &m)
{
	if (auto *em = dynamic_cast<ElfModule *>(&m))
		return file_build_id(em->path());
	if (is_freebsd())
		return {};
	if (m.name() == "kernel")
		return build_id_from_notes(read_small_file("/sys/kernel/notes"));
	return build_id_from_notes(read_small_file("/sys/module/" + m.name() +
	    "/notes/.note.gnu.build-id"));
}

// modules.dep: the path of NAME.ko under /lib/modules/RELEASE.
std::string
installed_module(const std::string &release, const std::string &name)
{
	std::ifstream in("/lib/modules/" + release + "/modules.dep");
	std::string line, want = name, alt = name;
	std::replace(alt.begin(), alt.end(), '_', '-');
	while (std::getline(in, line)) {
		size_t c = line.find(':');
		if (c == std::string::npos)
			continue;
		std::string p = line.substr(0, c), b = base_name(p);
		size_t dot = b.find(".ko");
		if (dot == std::string::npos)
			continue;
		b.resize(dot);
		std::string bn = b;
		std::replace(bn.begin(), bn.end(), '-', '_');
		if (bn == want || b == alt)
			return p;
	}
	return "";
}

std::vector<std::string>
candidates(Module &m, const std::vector<uint8_t> &id)
{
	std::vector<std::string> c;
	std::string rel = kernel_release();
	auto *em = dynamic_cast<ElfModule *>(&m);
	if (em != nullptr)
		c.push_back(em->path());	// its own DWARF
	if (!id.empty()) {
		std::string h = hex_id(id);
		c.push_back("/usr/lib/debug/.build-id/" + h.substr(0, 2) + "/" + h.substr(2) + ".debug");
	}
	if (em != nullptr)
		return c;
	if (is_freebsd()) {
		if (m.name() == "kernel")
			c.push_back("/usr/lib/debug/boot/kernel/kernel.debug");
		else
			c.push_back("/usr/lib/debug/boot/kernel/" + m.name() + ".ko.debug");
		return c;
	}
	if (m.name() == "kernel") {
		c.push_back("/usr/lib/debug/boot/vmlinux-" + rel);
		c.push_back("/usr/lib/debug/lib/modules/" + rel + "/vmlinux");
		c.push_back("/boot/vmlinux-" + rel);
		return c;
	}
	std::string p = installed_module(rel, m.name());
	if (!p.empty()) {
		std::string full = p[0] == '/' ? p : "/lib/modules/" + rel + "/" + p;
		std::string tail = p[0] == '/' ? p.substr(p.find(rel) == std::string::npos ? 0 :
		    p.find(rel) + rel.size() + 1) : p;
		c.push_back("/usr/lib/debug/lib/modules/" + rel + "/" + tail);
		c.push_back(full);
	} else
		c.push_back("/lib/modules/" + rel + "/modules.dep (no " + m.name() + ".ko listed)");
	return c;
}

// debuginfod through libdw, when DEBUGINFOD_URLS is set: a path in its cache.
std::string
debuginfod_fetch(const std::vector<uint8_t> &id)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (urls == nullptr || *urls == '\0' || id.empty())
		return "";
	Dwfl *d = dwfl_begin(&offline_callbacks);
	if (d == nullptr)
		return "";
	std::string out;
	dwfl_report_begin(d);
	Dwfl_Module *m = dwfl_report_module(d, "debuginfod", 0, 1);
	if (m != nullptr && dwfl_module_report_build_id(m, id.data(), id.size(), 0) == 0) {
		char *name = nullptr;
		int fd = dwfl_build_id_find_debuginfo(m, nullptr, nullptr, 0, nullptr, nullptr, 0, &name);
		if (fd >= 0) {
			if (name != nullptr)
				out = name;
			close(fd);
		}
		free(name);
	}
	dwfl_report_end(d, nullptr, nullptr);
	dwfl_end(d);
	return out;
}

bool
has_debug_info_section(const std::string &path)
{
	int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	bool found = false;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
	size_t shstrndx;
	if (e != nullptr && elf_getshdrstrndx(e, &shstrndx) == 0) {
		for (Elf_Scn *s = elf_nextscn(e, nullptr); s != nullptr && !found; s = elf_nextscn(e, s)) {
			GElf_Shdr sh;
			if (gelf_getshdr(s, &sh) == nullptr || sh.sh_type == SHT_NOBITS)
				continue;
			const char *n = elf_strptr(e, shstrndx, sh.sh_name);
			found = n != nullptr && (strcmp(n, ".debug_info") == 0 ||
			    strcmp(n, ".zdebug_info") == 0);
		}
	}
	if (e != nullptr)
		elf_end(e);
	close(fd);
	return found;
}

#endif	// KINST_HAVE_LIBDW

// The module a --debug-file is for: by name, else by build-id.
std::string
debug_file_module_name(const std::string &path)
{
	std::string b = base_name(path);
	for (const char *sfx : { ".debug", ".ko" })
		if (b.size() > strlen(sfx) && b.compare(b.size() - strlen(sfx), strlen(sfx), sfx) == 0)
			b.resize(b.size() - strlen(sfx));
	if (b.compare(0, 7, "vmlinux") == 0 || b == "kernel")
		return "kernel";
	std::replace(b.begin(), b.end(), '-', '_');
	return b;
}

} // namespace

void
add_debug_options(CLI::App *app, DebugOptions &o)
{
	app->add_option("--debug-file", o.files,
	    "DWARF file to use for source lines and inline functions instead of searching "
	    "(its module by file name, else by build-id); repeatable")
	    ->type_name("FILE")
	    ->allow_extra_args(false);
}

DebugInfo::DebugInfo(SymbolTable &syms, const DebugOptions &o) : syms_(syms), opts_(o)
{
	file_used_.assign(o.files.size(), false);
	for (const auto &f : o.files)
		if (!exists(f))
			throw Error(Exit::file, "--debug-file " + f + ": no such file");
}

DebugInfo::~DebugInfo() = default;

ModuleDebug *
DebugInfo::module(size_t mi)
{
	auto it = mods_.find(mi);
	if (it != mods_.end())
		return it->second.get();
	if (tried_[mi])
		return nullptr;
	tried_[mi] = true;
#if !KINST_HAVE_LIBDW
	if (!opts_.files.empty())
		throw Error(Exit::usage, "--debug-file: this kinstctl was built without "
		    "libdw (KINST_WITH_LIBDW=OFF): it reads no DWARF");
	if (tried_.size() == 1)
		fprintf(stderr, "kinstctl: note: built without libdw: source lines, inline "
		    "functions and variables by name are unavailable\n");
	return nullptr;
#else
	Module &m = syms_.module(mi);
	std::vector<uint8_t> id = image_build_id(m);
	auto check = [&](std::unique_ptr<ModuleDebug> &d, bool explicit_file) {
		if (!id.empty() && !d->build_id().empty() && d->build_id() != id)
			throw Error(Exit::bad_elf, d->path() + ": build-id " + hex_id(d->build_id()) +
			    " is not that of " + m.name() + " (" + hex_id(id) + ")" +
			    (explicit_file ? "" : "; remove the stale file or give the right one with --debug-file") +
			    ": refusing to show wrong source lines");
		if (!d->has_dwarf())
			throw Error(Exit::bad_elf, d->path() + ": no usable DWARF (" + dwfl_errmsg(-1) + ")");
	};
	// --debug-file: by module name, else by build-id.
	std::string modn = m.name();
	std::replace(modn.begin(), modn.end(), '-', '_');
	for (size_t i = 0; i < opts_.files.size(); i++) {
		const std::string &f = opts_.files[i];
		bool byname = debug_file_module_name(f) == modn;
		bool byid = !byname && !id.empty() && file_build_id(f) == id;
		bool only = syms_.modules().size() == 1;
		if (!byname && !byid && !only)
			continue;
		file_used_[i] = true;
		auto d = std::make_unique<ModuleDebug>(f, m);
		check(d, true);
		return (mods_[mi] = std::move(d)).get();
	}
	std::vector<std::string> looked;
	for (const auto &c : candidates(m, id)) {
		looked.push_back(c);
		if (!exists(c) || !has_debug_info_section(c))
			continue;
		auto d = std::make_unique<ModuleDebug>(c, m);
		if (!d->has_dwarf())
			continue;
		check(d, false);
		return (mods_[mi] = std::move(d)).get();
	}
	std::string dfd = debuginfod_fetch(id);
	if (getenv("DEBUGINFOD_URLS") != nullptr && *getenv("DEBUGINFOD_URLS") != '\0')
		looked.push_back("debuginfod");
	if (!dfd.empty()) {
		auto d = std::make_unique<ModuleDebug>(dfd, m);
		check(d, false);
		return (mods_[mi] = std::move(d)).get();
	}
	std::string l;
	for (size_t i = 0; i < looked.size(); i++)
		l += (i ? ", " : "") + looked[i];
	fprintf(stderr, "kinstctl: note: no debug info (DWARF) for %s%s; looked in: %s; "
	    "source lines and inline functions are unavailable (give one with --debug-file)\n",
	    m.name().c_str(), id.empty() ? "" : (" (build-id " + hex_id(id) + ")").c_str(),
	    l.empty() ? "nowhere" : l.c_str());
	return nullptr;
#endif
}

std::string
DebugInfo::debug_path(size_t mi)
{
	ModuleDebug *d = module(mi);
	return d ? d->path() : "";
}

SrcLoc
DebugInfo::where(size_t mi, const Function &f, uint32_t off)
{
	SrcLoc s;
	ModuleDebug *d = module(mi);
	uint64_t b;
	if (d == nullptr || !d->base(f, &b))
		return s;
	const LineRange *r = d->row(b + off);
	if (r == nullptr)
		return s;
	s.known = true;
	s.file = d->file(r->file);
	s.line = r->line;
	s.inl = d->chain(b + off);
	return s;
}

bool
DebugInfo::dwarf_function(size_t mi, const Function &f, Dwfl_Module **dm, uint64_t *base)
{
	ModuleDebug *d = module(mi);
	if (d == nullptr || !d->base(f, base))
		return false;
	*dm = d->dwfl_module();
	return true;
}

std::vector<size_t>
DebugInfo::spec_modules(const Spec &sp)
{
	std::vector<size_t> out;
	if (!sp.module.empty()) {
		out = syms_.find_module(sp.module);
		if (out.empty())
			throw Error(Exit::unknown_function, sp.text + ": no module named '" + sp.module + "'");
		return out;
	}
	for (size_t i = 0; i < syms_.modules().size(); i++) {
		Module &m = syms_.module(i);
		if (dynamic_cast<ElfModule *>(&m) != nullptr || m.name() == "kernel") {
			out.push_back(i);
			continue;
		}
		std::string n = m.name();
		std::replace(n.begin(), n.end(), '-', '_');
		for (const auto &f : opts_.files)
			if (debug_file_module_name(f) == n)
				out.push_back(i);
	}
	return out;
}

namespace {

bool
same_chain(const std::vector<InlineFrame> &a, const std::vector<InlineFrame> &b)
{
	if (a.size() != b.size())
		return false;
	for (size_t i = 0; i < a.size(); i++)
		if (a[i].function != b[i].function || a[i].call_file != b[i].call_file ||
		    a[i].call_line != b[i].call_line)
			return false;
	return true;
}

// Instructions of f where (file in set, line) starts: the instruction's
// row or inline chain differs from the previous instruction's (where
// objdump -dl prints a new line or function).
void
line_starts(ModuleDebug &d, Module &m, size_t mi, const Function &f, uint64_t base,
    const std::set<uint32_t> &files, uint32_t line, Disassembler &dis,
    std::vector<Target> &out)
{
	std::vector<Insn> insns = walk(m, f, dis);
	const LineRange *prev = nullptr;
	std::vector<InlineFrame> prev_chain;
	for (const auto &in : insns) {
		const LineRange *r = d.row(base + in.offset);
		std::vector<InlineFrame> chain;
		if (r != nullptr && r->line == line && files.count(r->file))
			chain = d.chain(base + in.offset);
		bool start = r != nullptr && (prev == nullptr || prev->file != r->file ||
		    prev->line != r->line || !same_chain(prev_chain, chain));
		if (start && r->line == line && files.count(r->file))
			out.push_back(Target{mi, &f, false, in.offset});
		prev = r;
		prev_chain = std::move(chain);
	}
}

std::string
nearest(const std::set<uint32_t> &lines, uint32_t want)
{
	auto hi = lines.upper_bound(want);
	std::string s;
	if (hi != lines.begin()) {
		auto lo = std::prev(hi);
		s = std::to_string(*lo);
	}
	if (hi != lines.end())
		s += (s.empty() ? "" : " and ") + std::to_string(*hi);
	return s.empty() ? "none" : s;
}

} // namespace

std::vector<InlineInstance>
DebugInfo::inlines(size_t mi, const std::string &name, Disassembler &dis)
{
	std::vector<InlineInstance> out;
	ModuleDebug *d = module(mi);
	if (d == nullptr)
		return out;
	Module &m = syms_.module(mi);
	for (const auto &raw : d->find_inlines(name)) {
		uint64_t fb;
		const Function *f = d->function_at(raw.ranges[0].first, &fb);
		if (f == nullptr)
			continue;
		InlineInstance ii;
		ii.function = name;
		ii.module = mi;
		ii.caller = f;
		for (const auto &r : raw.ranges)
			if (r.first >= fb && r.second <= fb + f->size)
				ii.ranges.push_back({(uint32_t)(r.first - fb), (uint32_t)(r.second - fb)});
		if (ii.ranges.empty())
			continue;
		ii.entry = ii.ranges[0].first;
		if (raw.has_entry_pc && raw.entry_pc >= fb && raw.entry_pc < fb + f->size) {
			ii.has_entry_pc = true;
			ii.entry_pc = (uint32_t)(raw.entry_pc - fb);
		}
		ii.call_file = raw.call_file;
		ii.call_line = raw.call_line;
		// Returns: successors of instructions inside that lie outside.
		auto inside = [&](uint64_t o) {
			for (const auto &r : ii.ranges)
				if (o >= r.first && o < r.second)
					return true;
			return false;
		};
		std::vector<Insn> insns = walk(m, *f, dis);
		std::set<uint32_t> starts, rets;
		for (const auto &in : insns)
			starts.insert(in.offset);
		for (const auto &in : insns) {
			if (!inside(in.offset) || in.unreachable || in.dec_status != KINST_DEC_OK)
				continue;
			bool falls = true, jumps = false;
			if (in.cls.treatment == KINST_T_EMULATE) {
				switch (in.cls.emul) {
				case KINST_EM_JMP_REL:
					falls = false;
					jumps = true;
					break;
				case KINST_EM_JCC: case KINST_EM_LOOP: case KINST_EM_LOOPE:
				case KINST_EM_LOOPNE: case KINST_EM_JRCXZ:
					jumps = true;
					break;
				case KINST_EM_RET: case KINST_EM_RET_IMM: case KINST_EM_JMP_IND:
					falls = false;
					break;
				default:
					break;
				}
			} else if (in.cls.treatment == KINST_T_REFUSE && in.len >= 2 &&
			    in.bytes[0] == 0x0f && in.bytes[1] == 0x0b) {
				falls = false;	// ud2
			}
			std::vector<uint64_t> succ;
			if (falls)
				succ.push_back(in.offset + in.len);
			// An unlinked module's jump with a relocation goes elsewhere.
			if (jumps && m.relocation(*f, in.addr, in.len).empty()) {
				struct kinst_insn dd;
				if (kinst_decode(in.bytes, in.len, &dd) == KINST_DEC_OK)
					succ.push_back((uint64_t)((int64_t)in.offset + in.len + dd.imm));
			}
			for (uint64_t s : succ)
				if (s < f->size && !inside(s) && starts.count((uint32_t)s))
					rets.insert((uint32_t)s);
		}
		ii.returns.assign(rets.begin(), rets.end());
		out.push_back(std::move(ii));
	}
	std::sort(out.begin(), out.end(), [](const InlineInstance &a, const InlineInstance &b) {
		return std::make_pair(a.caller->addr, a.entry) < std::make_pair(b.caller->addr, b.entry);
	});
	return out;
}

// FUNC:return of a function out of line: its return points, from its code
// (returns.h); no debug info needed.  False when there is no such function
// (inlined only, perhaps).
bool
DebugInfo::resolve_returns(const Spec &sp, Disassembler &dis, std::vector<Target> &out)
{
	Spec fs = sp;
	fs.kind = SpecKind::symbol;
	fs.text = sp.module.empty() ? sp.function : sp.module + ":" + sp.function;
	Target t;
	try {
		t = resolve_target(fs, syms_);
	} catch (const Error &e) {
		if (e.code() != Exit::unknown_function)
			throw;
		return false;
	}
	Module &m = syms_.module(t.module);
	std::vector<Insn> insns = walk(m, *t.fn, dis);
	for (const auto &r : return_points(syms_, m, *t.fn, insns))
		out.push_back(Target{t.module, t.fn, false, r.offset});
	if (out.empty())
		throw Error(Exit::bad_offset, sp.text + ": " + t.fn->name +
		    " has no return point (no ret, return-thunk jump or tail call: "
		    "it never returns)");
	return true;
}

// INLINE_FUNC:entry and INLINE_FUNC:return: every inlined instance.
void
DebugInfo::resolve_inline(const Spec &sp, const std::vector<size_t> &mods, Disassembler &dis,
    std::vector<Target> &out)
{
	bool any_debug = false;
	size_t n = 0;
	for (size_t mi : mods) {
		if (module(mi) == nullptr)
			continue;
		any_debug = true;
		for (const auto &ii : inlines(mi, sp.function, dis)) {
			n++;
			if (sp.kind == SpecKind::inline_entry)
				out.push_back(Target{mi, ii.caller, false, ii.entry});
			else
				for (uint32_t r : ii.returns)
					out.push_back(Target{mi, ii.caller, false, r});
		}
	}
	if (!any_debug)
		throw Error(Exit::unknown_function, sp.text + ": no debug info to find inlined functions in");
	if (n == 0) {
		std::string msg = sp.text + ": no inlined instance of " + sp.function;
		if (!syms_.find(sp.function).empty())
			msg += " (it exists out of line only: trace it as " + sp.function + ")";
		throw Error(Exit::unknown_function, msg);
	}
	if (out.empty())
		throw Error(Exit::unknown_function, sp.text + ": the " + std::to_string(n) +
		    " inlined instances of " + sp.function + " never return into their callers");
}

// FUNC:LINE: the line's starts in that function.
void
DebugInfo::resolve_func_line(const Spec &sp, Disassembler &dis, std::vector<Target> &out)
{
	Spec fs = sp;
	fs.kind = SpecKind::symbol;
	Target t = resolve_target(fs, syms_);
	ModuleDebug *d = module(t.module);
	uint64_t b;
	if (d == nullptr)
		throw Error(Exit::unknown_function, sp.text + ": no debug info for " +
		    syms_.module(t.module).name() + " (see the note above)");
	if (!d->base(*t.fn, &b))
		throw Error(Exit::unknown_function, sp.text + ": " + t.fn->name +
		    " is not in the debug info " + d->path());
	const LineRange *r0 = d->row(b);
	if (r0 == nullptr)
		throw Error(Exit::unknown_function, sp.text + ": no line information for " + t.fn->name);
	std::set<uint32_t> files{r0->file};
	line_starts(*d, syms_.module(t.module), t.module, *t.fn, b, files, sp.line, dis, out);
	if (out.empty()) {
		std::set<uint32_t> have;
		for (uint64_t o = 0; o < t.fn->size; o++) {
			const LineRange *r = d->row(b + o);
			if (r && r->file == r0->file)
				have.insert(r->line);
		}
		throw Error(Exit::bad_offset, sp.text + ": no code of " + t.fn->name + " starts at line " +
		    std::to_string(sp.line) + " of " + d->file(r0->file) +
		    "; nearest lines with code in it: " + nearest(have, sp.line));
	}
}

// FILE:LINE: the line's starts in every function of every module with it.
void
DebugInfo::resolve_file_line(const Spec &sp, const std::vector<size_t> &mods, Disassembler &dis,
    std::vector<Target> &out)
{
	bool any_debug = false;
	std::set<std::string> matched;
	std::set<uint32_t> near;
	for (size_t mi : mods) {
		ModuleDebug *d = module(mi);
		if (d == nullptr)
			continue;
		any_debug = true;
		Module &m = syms_.module(mi);
		std::set<uint32_t> files;
		const auto &rs = d->ranges();
		for (size_t i = 0; i < d->nfiles(); i++)
			if (source_file_matches(d->file((uint32_t)i), sp.file)) {
				files.insert((uint32_t)i);
				matched.insert(d->file((uint32_t)i));
			}
		if (files.empty())
			continue;
		std::set<const Function *> seen;
		std::vector<std::pair<const Function *, uint64_t>> fns;
		for (const auto &r : rs) {
			if (!files.count(r.file))
				continue;
			near.insert(r.line);
			if (r.line != sp.line)
				continue;
			uint64_t fb;
			const Function *f = d->function_at(r.lo, &fb);
			if (f != nullptr && seen.insert(f).second)
				fns.push_back({f, fb});
		}
		for (const auto &p : fns)
			line_starts(*d, m, mi, *p.first, p.second, files, sp.line, dis, out);
	}
	if (!any_debug)
		throw Error(Exit::unknown_function, sp.text + ": no debug info to find source lines in");
	if (matched.empty())
		throw Error(Exit::unknown_function, sp.text + ": no source file " + sp.file +
		    " in the debug info (FILE must be the file name or its trailing path components)");
	if (out.empty()) {
		std::string files;
		size_t k = 0;
		for (const auto &f : matched)
			files += (k++ ? ", " : "") + f;
		throw Error(Exit::bad_offset, sp.text + ": no code starts at line " + std::to_string(sp.line) +
		    " of " + files + "; nearest lines with code: " + nearest(near, sp.line));
	}
}

std::vector<Target>
DebugInfo::resolve(const Spec &sp, Disassembler &dis)
{
	std::vector<Target> out;
	std::vector<size_t> mods = spec_modules(sp);
	if (sp.kind == SpecKind::inline_return && resolve_returns(sp, dis, out))
		return out;
	if (sp.kind == SpecKind::inline_entry || sp.kind == SpecKind::inline_return)
		resolve_inline(sp, mods, dis, out);
	else if (sp.kind == SpecKind::func_line)
		resolve_func_line(sp, dis, out);
	else
		resolve_file_line(sp, mods, dis, out);
	return out;
}

std::vector<Target>
resolve_targets(const Spec &sp, SymbolTable &syms, DebugInfo &dbg, Disassembler &dis)
{
	if (!sp.is_source())
		return { resolve_target(sp, syms) };
	return dbg.resolve(sp, dis);
}

std::vector<Spec>
expand_source_spec(const Spec &sp, const DebugOptions &o)
{
	SymbolTable syms;
	load_live_symbols(syms);
	DebugInfo dbg(syms, o);
	Disassembler dis(Syntax::att);
	std::vector<Spec> out;
	std::set<std::pair<std::string, uint32_t>> seen;
	std::string skipped;
	for (const auto &t : dbg.resolve(sp, dis)) {
		Module &m = syms.module(t.module);
		std::vector<Insn> insns = walk(m, *t.fn, dis);
		std::string name = probe_name(syms, t, t.offset);
		bool ok = false;
		for (const auto &in : insns)
			if (in.offset == t.offset) {
				int r = m.kernel_verdict(*t.fn, in.offset);
				ok = traceable(in) && r <= KINST_R_NONE;
				if (!ok)
					skipped += (skipped.empty() ? "" : ", ") + name + " (" +
					    (r > KINST_R_NONE && r < KINST_R_COUNT ? kinst_reason_name((uint8_t)r) :
					    reason_name(in)) + ")";
			}
		if (!ok || !seen.insert({m.name() + ":" + t.fn->name, t.offset}).second)
			continue;
		Spec s;
		s.text = sp.text;
		s.module = m.name();
		s.function = t.fn->name;
		s.has_offset = true;
		s.offset = t.offset;
		if (sp.kind == SpecKind::inline_return && t.fn->name == sp.function)
			for (const auto &r : return_points(syms, m, *t.fn, insns))
				if (r.offset == t.offset) {
					s.at_return = true;
					s.ret_if = r.leaves_if;
				}
		out.push_back(s);
	}
	if (!skipped.empty())
		fprintf(stderr, "kinstctl: note: %s: not traceable, left out: %s\n", sp.text.c_str(),
		    skipped.c_str());
	if (out.empty())
		throw Error(Exit::refused, sp.text + ": every instruction it names is refused");
	return out;
}

} // namespace kinst

namespace kinst {

std::string
SourceAnnotator::source_line(const std::string &file, unsigned line)
{
	auto it = cache_.find(file);
	if (it == cache_.end()) {
		std::vector<std::string> lines;
		std::vector<std::string> tries;
		if (!dir_.empty()) {
			// DIR + the longest trailing part of the DWARF name that exists.
			for (size_t p = 0; p != std::string::npos; p = file.find('/', p + 1)) {
				std::string tail = file.substr(p == 0 && file[0] != '/' ? 0 : p + 1);
				if (!tail.empty())
					tries.push_back(dir_ + "/" + tail);
			}
		} else
			tries.push_back(file);
		for (const auto &t : tries) {
			std::ifstream in(t);
			if (!in)
				continue;
			std::string l;
			while (std::getline(in, l))
				lines.push_back(l);
			break;
		}
		it = cache_.emplace(file, std::move(lines)).first;
	}
	if (line == 0 || line > it->second.size())
		return "";
	std::string s = it->second[line - 1];
	for (char &c : s)
		if ((unsigned char)c < 0x20 && c != '\t')
			c = ' ';
	return s;
}

void
SourceAnnotator::text_lines(size_t mi, const Function &f, const Insn &in, std::vector<std::string> &out)
{
	SrcLoc l = dbg_.where(mi, f, in.offset);
	if (!l.known) {
		have_prev_ = false;
		return;
	}
	if (!have_prev_ || !same_chain(prev_.inl, l.inl)) {
		if (!l.inl.empty()) {
			std::string s = "    ; inlined from ";
			for (size_t i = 0; i < l.inl.size(); i++)
				s += (i ? ", from " : "") + l.inl[i].function + "() at " + l.inl[i].call_file +
				    ":" + std::to_string(l.inl[i].call_line);
			out.push_back(s);
		} else if (have_prev_)
			out.push_back("    ; back in " + f.name + "()");
	}
	if (!have_prev_ || prev_.file != l.file || prev_.line != l.line || !same_chain(prev_.inl, l.inl)) {
		std::string src = source_line(l.file, l.line);
		out.push_back("    " + l.file + ":" + std::to_string(l.line) +
		    (src.empty() ? "" : "  " + src));
	}
	prev_ = l;
	have_prev_ = true;
}

void
SourceAnnotator::json_fields(size_t mi, const Function &f, const Insn &in, std::string &obj)
{
	SrcLoc l = dbg_.where(mi, f, in.offset);
	if (!l.known || obj.empty() || obj.back() != '}')
		return;
	obj.pop_back();
	obj += ",\"file\":";
	append_json_string(obj, l.file);
	obj += ",\"line\":" + std::to_string(l.line) + ",\"inline\":[";
	for (size_t i = 0; i < l.inl.size(); i++) {
		obj += i ? ",{\"function\":" : "{\"function\":";
		append_json_string(obj, l.inl[i].function);
		obj += ",\"call_file\":";
		append_json_string(obj, l.inl[i].call_file);
		obj += ",\"call_line\":" + std::to_string(l.inl[i].call_line) + "}";
	}
	obj += "]}";
}

} // namespace kinst
