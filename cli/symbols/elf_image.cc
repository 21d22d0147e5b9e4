// SPDX-License-Identifier: BSD-2-Clause
#include "symbols/elf_image.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <unordered_set>

#include "base/error.h"

namespace kinst {

namespace {

struct ElfCloser {
	void operator()(Elf *e) const { elf_end(e); }
};
using ElfPtr = std::unique_ptr<Elf, ElfCloser>;

struct Fd {
	int fd;
	explicit Fd(int f) : fd(f) {}
	~Fd() { if (fd >= 0) close(fd); }
	Fd(const Fd &) = delete;
	Fd &operator=(const Fd &) = delete;
};

void
init_libelf()
{
	static const bool ok = elf_version(EV_CURRENT) != EV_NONE;
	if (!ok)
		throw Error(Exit::internal, std::string("libelf: ") + elf_errmsg(-1));
}

[[noreturn]] void
corrupt(const std::string &path, const std::string &why)
{
	throw Error(Exit::bad_elf, path + ": corrupt ELF: " + why);
}

// The names the symbol table d (strings in section strndx) defines more
// than once: what a by-name lookup, which finds the first definition
// (FreeBSD's link_elf_obj.c), may answer for another symbol.
std::unordered_set<std::string>
repeated_names(Elf *e, Elf_Data *d, size_t nsym, size_t strndx)
{
	std::unordered_set<std::string> seen, repeated;
	for (size_t i = 1; i < nsym; i++) {
		GElf_Sym sym;
		if (gelf_getsym(d, (int)i, &sym) == nullptr || sym.st_shndx == SHN_UNDEF)
			continue;
		const char *nm = elf_strptr(e, strndx, sym.st_name);
		if (nm != nullptr && *nm != '\0' && !seen.insert(nm).second)
			repeated.insert(nm);
	}
	return repeated;
}

} // namespace

struct ElfImage::Impl {
	ElfPtr elf;
};

ElfImage::ElfImage(const std::string &path) : path_(path), impl_(new Impl)
{
	struct stat st;
	Fd f(open(path.c_str(), O_RDONLY | O_CLOEXEC));
	if (f.fd < 0)
		throw Error(Exit::file, path + ": " + strerror(errno));
	if (fstat(f.fd, &st) != 0)
		throw Error(Exit::file, path + ": " + strerror(errno));
	if (S_ISDIR(st.st_mode))
		throw Error(Exit::file, path + ": is a directory");
	if (!S_ISREG(st.st_mode))
		throw Error(Exit::file, path + ": not a regular file");
	if (st.st_size > (off_t)4 << 30)
		throw Error(Exit::file, path + ": file too large (over 4 GiB)");
	size_ = (size_t)st.st_size;
	if (size_ > 0) {
		// Private and writable: libelf may write to its image; only the
		// pages we touch (headers, symbols, code) become resident.
		void *p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, f.fd, 0);
		if (p == MAP_FAILED)
			throw Error(Exit::file, path + ": " + strerror(errno));
		map_ = p;
		data_ = static_cast<uint8_t *>(p);
	}
	try {
		parse();
	} catch (...) {
		impl_.reset();
		if (map_ != nullptr)
			munmap(map_, size_);
		map_ = nullptr;
		throw;
	}
}

ElfImage::ElfImage(const std::string &label, const uint8_t *data, size_t size)
    : path_(label), buf_(data, data + size), impl_(new Impl)
{
	data_ = buf_.data();
	size_ = buf_.size();
	parse();
}

ElfImage::~ElfImage()
{
	impl_.reset();		// elf_end() before the image goes away
	if (map_ != nullptr)
		munmap(map_, size_);
}

// The identification bytes: 64-bit, little-endian (before libelf, whose
// errors would not say which).
void
ElfImage::check_ident() const
{
	if (size_ < 4 || memcmp(data_, ELFMAG, SELFMAG) != 0)
		throw Error(Exit::bad_elf, path_ + ": not an ELF file");
	if (size_ < sizeof(Elf64_Ehdr))
		throw Error(Exit::bad_elf, path_ + ": truncated ELF header");
	switch (data_[EI_CLASS]) {
	case ELFCLASS64:
		break;
	case ELFCLASS32:
		throw Error(Exit::unsupported_elf,
		    path_ + ": 32-bit ELF: only 64-bit x86-64 is supported");
	default:
		corrupt(path_, "bad ELF class " + std::to_string(data_[EI_CLASS]));
	}
	switch (data_[EI_DATA]) {
	case ELFDATA2LSB:
		break;
	case ELFDATA2MSB:
		throw Error(Exit::unsupported_elf,
		    path_ + ": big-endian ELF: only little-endian x86-64 is supported");
	default:
		corrupt(path_, "bad ELF data encoding " + std::to_string(data_[EI_DATA]));
	}
}

// Check the section header table's extent ourselves: libelf quietly
// reports no sections for a table cut off by a truncated file.
void
ElfImage::check_shdr_extent() const
{
	Elf64_Ehdr raw;
	memcpy(&raw, data_, sizeof(raw));
	if (raw.e_shoff != 0) {
		uint64_t n = raw.e_shnum ? raw.e_shnum : 1;
		if (raw.e_shentsize != sizeof(Elf64_Shdr))
			corrupt(path_, "section header size " + std::to_string(raw.e_shentsize));
		if (raw.e_shoff > size_ || n * sizeof(Elf64_Shdr) > size_ - raw.e_shoff)
			corrupt(path_, "section header table beyond end of file (truncated?)");
	}
}

// libelf's view: the machine, the type, the section count (returned) and
// the section name table.
size_t
ElfImage::open_elf(size_t *shstrndx)
{
	impl_->elf.reset(elf_memory(reinterpret_cast<char *>(data_), size_));
	Elf *e = impl_->elf.get();
	if (e == nullptr || elf_kind(e) != ELF_K_ELF)
		corrupt(path_, elf_errmsg(-1));
	GElf_Ehdr eh;
	if (gelf_getehdr(e, &eh) == nullptr)
		corrupt(path_, elf_errmsg(-1));
	if (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64)
		throw Error(Exit::unsupported_elf, path_ + ": ELF machine " +
		    std::to_string(eh.e_machine) + " is neither x86-64 nor AArch64");
	machine_ = eh.e_machine;
	type_ = eh.e_type;
	if (type_ != ET_REL && type_ != ET_EXEC && type_ != ET_DYN)
		throw Error(Exit::unsupported_elf, path_ + ": ELF type " +
		    std::to_string(type_) + " is not an executable, shared object or relocatable object");
	relocatable_ = type_ == ET_REL;

	size_t nsec;
	if (elf_getshdrnum(e, &nsec) != 0)
		corrupt(path_, std::string("section header table: ") + elf_errmsg(-1));
	if (nsec == 0)
		throw Error(Exit::no_symbols, path_ + ": no section headers (no symbol table)");
	if (nsec > 1000000)
		corrupt(path_, "absurd section count " + std::to_string(nsec));
	if (elf_getshdrstrndx(e, shstrndx) != 0)
		corrupt(path_, std::string("section name table: ") + elf_errmsg(-1));
	if (eh.e_shoff > size_ ||
	    nsec * (uint64_t)sizeof(Elf64_Shdr) > size_ - eh.e_shoff)
		corrupt(path_, "section header table beyond end of file");
	return nsec;
}

// Linux .modinfo "name=".
void
ElfImage::note_modinfo(const ElfSection &s)
{
	const char *p = reinterpret_cast<const char *>(s.data);
	size_t n = s.data_size, k = 0;
	while (k < n) {
		size_t len = strnlen(p + k, n - k);
		if (len > 5 && strncmp(p + k, "name=", 5) == 0)
			modinfo_name_.assign(p + k + 5, len - 5);
		k += len + 1;
	}
}

// Every section (sections_); returns the symbol table's index (.symtab,
// else .dynsym).
size_t
ElfImage::read_sections(size_t nsec, size_t shstrndx)
{
	Elf *e = impl_->elf.get();
	sections_.resize(nsec);
	size_t symtab = 0, dynsym = 0;
	for (size_t i = 1; i < nsec; i++) {
		Elf_Scn *scn = elf_getscn(e, i);
		GElf_Shdr sh;
		if (scn == nullptr || gelf_getshdr(scn, &sh) == nullptr)
			corrupt(path_, "section " + std::to_string(i) + ": " + elf_errmsg(-1));
		ElfSection &s = sections_[i];
		const char *nm = elf_strptr(e, shstrndx, sh.sh_name);
		s.name = nm ? nm : "";
		s.addr = sh.sh_addr;
		s.size = sh.sh_size;
		s.type = sh.sh_type;
		s.flags = sh.sh_flags;
		s.data = nullptr;
		s.data_size = 0;
		if (sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL)
			continue;
		if (sh.sh_offset > size_ || sh.sh_size > size_ - sh.sh_offset) {
			// Only fatal if we need the section (code or symbols).
			if ((sh.sh_flags & SHF_EXECINSTR) || sh.sh_type == SHT_SYMTAB ||
			    sh.sh_type == SHT_DYNSYM)
				corrupt(path_, "section " + std::to_string(i) + " (" + s.name +
				    ") extends beyond end of file (truncated?)");
			continue;
		}
		if (sh.sh_type == SHT_SYMTAB && symtab == 0)
			symtab = i;
		if (sh.sh_type == SHT_DYNSYM && dynsym == 0)
			dynsym = i;
		if ((sh.sh_flags & SHF_COMPRESSED) == 0) {
			s.data = data_ + sh.sh_offset;
			s.data_size = sh.sh_size;
		}
		if (s.name == ".modinfo" && s.data != nullptr)
			note_modinfo(s);
	}
	size_t symsec = symtab ? symtab : dynsym;
	if (symsec == 0)
		throw Error(Exit::no_symbols, path_ + ": no symbol table (stripped?)");
	return symsec;
}

// Relocations of executable sections (ET_REL): remembered, decoded only
// when asked for.
void
ElfImage::note_relocations(size_t nsec)
{
	Elf *e = impl_->elf.get();
	rela_for_.assign(nsec, 0);
	rela_sorted_.resize(nsec);
	rela_order_.assign(nsec, RelaOrder::unknown);
	rela_hint_.assign(nsec, 0);
	dropped_.assign(nsec, 0);
	if (!relocatable_)
		return;
	for (size_t i = 1; i < nsec; i++) {
		const ElfSection &r = sections_[i];
		if (r.type != SHT_RELA || r.data == nullptr)
			continue;
		Elf_Scn *rs = elf_getscn(e, i);
		GElf_Shdr rsh;
		if (rs == nullptr || gelf_getshdr(rs, &rsh) == nullptr)
			continue;
		if (rsh.sh_link != symsec_ || rsh.sh_info == 0 || rsh.sh_info >= nsec ||
		    rsh.sh_entsize != sizeof(Elf64_Rela) ||
		    (sections_[rsh.sh_info].flags & SHF_EXECINSTR) == 0)
			continue;
		rela_for_[rsh.sh_info] = (uint32_t)i;
	}
}

// The function symbols of the symbol table that lie in code this image has.
void
ElfImage::read_functions(size_t nsec)
{
	Elf *e = impl_->elf.get();
	Elf_Scn *scn = elf_getscn(e, symsec_);
	GElf_Shdr sh;
	if (scn == nullptr || gelf_getshdr(scn, &sh) == nullptr)
		corrupt(path_, "symbol table: " + std::string(elf_errmsg(-1)));
	if (sh.sh_link == 0 || sh.sh_link >= nsec || sections_[sh.sh_link].type != SHT_STRTAB)
		corrupt(path_, "symbol table has no string table");
	if (sh.sh_entsize != sizeof(Elf64_Sym))
		corrupt(path_, "symbol table entry size " + std::to_string(sh.sh_entsize));
	Elf_Data *d = elf_getdata(scn, nullptr);
	if (d == nullptr || d->d_buf == nullptr)
		corrupt(path_, "symbol table: " + std::string(elf_errmsg(-1)));
	size_t nsym = d->d_size / sizeof(Elf64_Sym);
	if (type_ != ET_EXEC)
		repeated_ = repeated_names(e, d, nsym, sh.sh_link);
	for (size_t i = 1; i < nsym; i++) {
		GElf_Sym sym;
		if (gelf_getsym(d, (int)i, &sym) == nullptr)
			corrupt(path_, "symbol " + std::to_string(i) + ": " + elf_errmsg(-1));
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC)
			continue;
		if (sym.st_size == 0 || sym.st_shndx == SHN_UNDEF ||
		    sym.st_shndx >= SHN_LORESERVE || sym.st_shndx >= nsec) {
			skipped_++;
			continue;
		}
		const ElfSection &s = sections_[sym.st_shndx];
		if (s.type != SHT_PROGBITS || (s.flags & SHF_EXECINSTR) == 0 ||
		    s.data == nullptr) {
			skipped_++;
			continue;
		}
		uint64_t off = relocatable_ ? sym.st_value : sym.st_value - s.addr;
		if ((!relocatable_ && sym.st_value < s.addr) || off > s.data_size ||
		    sym.st_size > s.data_size - off) {
			skipped_++;
			continue;
		}
		const char *nm = elf_strptr(e, sh.sh_link, sym.st_name);
		if (nm == nullptr || *nm == '\0') {
			skipped_++;
			continue;
		}
		int bind = GELF_ST_BIND(sym.st_info);
		functions_.push_back(ElfFunction{nm, sym.st_value, sym.st_size,
		    (uint32_t)sym.st_shndx, bind == STB_GLOBAL || bind == STB_WEAK});
	}
}

void
ElfImage::parse()
{
	init_libelf();
	check_ident();
	check_shdr_extent();
	size_t shstrndx;
	size_t nsec = open_elf(&shstrndx);
	symsec_ = read_sections(nsec, shstrndx);
	note_relocations(nsec);
	read_functions(nsec);
}

const uint8_t *
ElfImage::bytes(const ElfFunction &f) const
{
	const ElfSection &s = sections_.at(f.shndx);
	uint64_t off = relocatable_ ? f.value : f.value - s.addr;
	drop_behind(f.shndx, off);
	return s.data + off;
}

// A listing reads code and relocations in address order, once: the pages
// of a mapped file it has passed are given back (MADV_DONTNEED), so that
// the resident size stays that of a window, not of the whole code and
// relocation sections (amdgpu.ko: 4.5 MB and 3.1 MB).  The mapping stays
// valid: a private file mapping the program never wrote (libelf converts
// nothing of a little-endian file on a little-endian host) reads a page
// given back from the page cache again, the same bytes.  In steps of
// kDropStep, so that a listing makes few calls; a lookup that goes back
// only costs a page fault.
void
ElfImage::drop_behind(size_t shndx, uint64_t off) const
{
	static constexpr uint64_t kDropStep = 256 << 10;
	if (map_ == nullptr || shndx >= dropped_.size())
		return;
	const ElfSection &s = sections_[shndx];
	uint64_t &done = dropped_[shndx];
	if (s.data == nullptr || off > s.data_size || off < done + kDropStep)
		return;
	const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)(s.data + done) + page - 1) & ~(page - 1);
	uintptr_t hi = (uintptr_t)(s.data + off) & ~(page - 1);
	if (hi > lo)
		(void)madvise(reinterpret_cast<void *>(lo), hi - lo, MADV_DONTNEED);
	done = off;
}

std::string
ElfImage::relocation_at(uint32_t shndx, uint64_t off, size_t len) const
{
	if (shndx >= rela_for_.size() || rela_for_[shndx] == 0)
		return "";
	const ElfSection &r = sections_[rela_for_[shndx]];
	size_t n = r.data_size / sizeof(Elf64_Rela);
	auto r_offset = [&r](size_t i) {
		uint64_t o;
		memcpy(&o, r.data + i * sizeof(Elf64_Rela) + offsetof(Elf64_Rela, r_offset), sizeof(o));
		return o;
	};
	auto &v = rela_sorted_[shndx];
	if (rela_order_[shndx] == RelaOrder::unknown) {
		bool ordered = true;
		for (size_t i = 1; i < n && ordered; i++)
			ordered = r_offset(i - 1) <= r_offset(i);
		if (!ordered) {
			v.reserve(n);
			for (size_t i = 0; i < n; i++)
				v.emplace_back(r_offset(i), (uint32_t)i);
			std::sort(v.begin(), v.end());
		}
		rela_order_[shndx] = ordered ? RelaOrder::in_place : RelaOrder::sorted_copy;
		// The check read every entry: give them all back.
		drop_behind(rela_for_[shndx], r.data_size);
		dropped_[rela_for_[shndx]] = 0;
	}
	// Position p of the order: its r_offset and its entry's index.
	bool in_place = rela_order_[shndx] == RelaOrder::in_place;
	auto key = [&](size_t p) { return in_place ? r_offset(p) : v[p].first; };
	auto index = [&](size_t p) { return in_place ? p : (size_t)v[p].second; };
	// lo: the first position with key >= off.  From the last answer when
	// every key before it is < off (a few steps forward), else searched.
	size_t lo = 0, hi = n;
	size_t &hint = rela_hint_[shndx];
	if (hint <= n && (hint == 0 || key(hint - 1) < off)) {
		lo = hint;
		for (int step = 0; step < 8 && lo < n && key(lo) < off; step++)
			lo++;
		if (lo == n || key(lo) >= off)
			hi = lo;	// found
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (key(mid) < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	hint = lo;
	if (in_place)
		drop_behind(rela_for_[shndx], lo * sizeof(Elf64_Rela));
	if (lo == n || key(lo) >= off + len)
		return "";	// most instructions: asked once each
	const ElfSection &st = sections_[symsec_];
	size_t nsym = st.data ? st.data_size / sizeof(Elf64_Sym) : 0;
	size_t strndx = 0;
	{
		Elf_Scn *scn = elf_getscn(impl_->elf.get(), symsec_);
		GElf_Shdr sh;
		if (scn != nullptr && gelf_getshdr(scn, &sh) != nullptr)
			strndx = sh.sh_link;
	}
	std::string out;
	for (size_t p = lo; p < n && key(p) < off + len; p++) {
		Elf64_Rela rel;
		memcpy(&rel, r.data + index(p) * sizeof(rel), sizeof(rel));
		size_t si = ELF64_R_SYM(rel.r_info);
		std::string name;
		if (si < nsym) {
			Elf64_Sym sym;
			memcpy(&sym, st.data + si * sizeof(sym), sizeof(sym));
			if (ELF64_ST_TYPE(sym.st_info) == STT_SECTION && sym.st_shndx < sections_.size())
				name = sections_[sym.st_shndx].name;
			else if (strndx != 0) {
				const char *p = elf_strptr(impl_->elf.get(), strndx, sym.st_name);
				name = p ? p : "";
			}
		}
		if (name.empty())
			name = "?";
		// PC-relative: the target is S + A + (end of insn - field), so
		// show that offset from the symbol (a call's A of -4 gives S).
		// Wrapping arithmetic: a corrupt addend must not overflow.
		uint64_t uadd = (uint64_t)rel.r_addend;
		uint32_t type = ELF64_R_TYPE(rel.r_info);
		if (type == R_X86_64_PC32 || type == R_X86_64_PLT32)
			uadd += off + len - rel.r_offset;
		int64_t add;
		memcpy(&add, &uadd, sizeof(add));
		char buf[32] = "";
		if (add > 0)
			snprintf(buf, sizeof(buf), "+0x%llx", (unsigned long long)add);
		else if (add < 0)
			snprintf(buf, sizeof(buf), "-0x%llx", (unsigned long long)-(uint64_t)add);
		if (!out.empty())
			out += ", ";
		out += name + buf;
	}
	return out;
}

uint64_t
ElfImage::address(const ElfFunction &f) const
{
	return f.value;
}

} // namespace kinst
