// SPDX-License-Identifier: BSD-2-Clause
// Kernel types from CTF (ctf_types.h).  The layout read here is the one
// FreeBSD documents in ctf(5) and sys/sys/ctf.h: a 36-byte header, then
// (possibly zlib-compressed) labels, data objects, functions, types and
// strings, the header's offsets counting from the end of the header.
// Version 2 has 16-bit type ids and kind/vlen packed in 16 bits; version 3
// (FreeBSD 14) 32-bit ids and a 32-bit info word.
#include "debuginfo/ctf_types.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "base/error.h"
#include "base/text.h"

namespace kinst {

namespace {

enum : uint8_t {
	K_UNKNOWN = 0, K_INTEGER, K_FLOAT, K_POINTER, K_ARRAY, K_FUNCTION,
	K_STRUCT, K_UNION, K_ENUM, K_FORWARD, K_TYPEDEF, K_VOLATILE, K_CONST,
	K_RESTRICT,
};

constexpr uint16_t ctf_magic = 0xcff1;
constexpr size_t header_size = 36;	// preamble (4) + 8 words
constexpr uint8_t flag_compress = 0x1;
constexpr uint64_t max_data = 1ull << 30;	// inflated size we accept
constexpr int max_depth = 64;			// type chains we follow

[[noreturn]] void
corrupt(const std::string &why)
{
	throw Error(Exit::live, "corrupt CTF: " + why);
}

std::vector<uint8_t>
inflate_body(const uint8_t *in, size_t inlen, uint64_t want)
{
	std::vector<uint8_t> out(want);
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	if (inflateInit(&zs) != Z_OK)
		throw Error(Exit::internal, "zlib: inflateInit failed");
	zs.next_in = const_cast<Bytef *>(in);
	zs.avail_in = (uInt)inlen;
	zs.next_out = out.data();
	zs.avail_out = (uInt)want;
	int r = inflate(&zs, Z_FINISH);
	uint64_t got = zs.total_out;
	inflateEnd(&zs);
	if (r != Z_STREAM_END || got != want)
		corrupt("the compressed data does not inflate to the " +
		    std::to_string(want) + " bytes the header gives (" +
		    (r == Z_STREAM_END ? std::to_string(got) + " bytes" :
		    std::string("zlib: ") + (zs.msg ? zs.msg : "truncated")) + ")");
	return out;
}

uint32_t
roundup4(uint64_t n)
{
	return (uint32_t)((n + 3) & ~3ull);
}

} // namespace

// Bounds-checked little-endian reads of the inflated body, and its type
// ids: 16 bits in version 2, 32 in version 3.
struct Ctf::Body {
	const std::vector<uint8_t> &d;
	bool v2;
	unsigned idw;		// a type id's bytes
	template <typename W> W get(uint64_t off) const
	{
		if (off + sizeof(W) > d.size())
			corrupt("read past the end at " + hex(off));
		W v;
		memcpy(&v, d.data() + off, sizeof(W));
		return v;
	}
	uint16_t u16(uint64_t off) const { return get<uint16_t>(off); }
	uint32_t u32(uint64_t off) const { return get<uint32_t>(off); }
	uint32_t id_at(uint64_t off) const { return v2 ? u16(off) : u32(off); }
};

void
Ctf::load(const std::vector<uint8_t> &sec, const std::vector<Sym> &syms)
{
	Sections hdr = load_header(sec);
	const bool v2 = version_ == 2;
	const Body b{data_, v2, v2 ? 2u : 4u};

	// The types, in id order from 1.
	types_.assign(1, T{});
	for (uint64_t off = hdr.typeoff; off < stroff_;)
		off = load_type(b, off);
	link_types();
	load_funcs(b, syms, hdr.funcoff, hdr.typeoff);
}

// The header checked, and the body after it (inflated) in data_.
Ctf::Sections
Ctf::load_header(const std::vector<uint8_t> &sec)
{
	if (sec.size() < 4)
		corrupt("too short for a CTF header (" + std::to_string(sec.size()) + " bytes)");
	uint16_t magic;
	memcpy(&magic, sec.data(), 2);
	if (magic == 0xf1cf)
		throw Error(Exit::live, "big-endian CTF, which kinstctl does not read");
	if (magic != ctf_magic)
		throw Error(Exit::live, "not CTF (magic " + hex(magic) + ", not 0xcff1)");
	version_ = sec[2];
	uint8_t flags = sec[3];
	if (version_ != 2 && version_ != 3)
		throw Error(Exit::live, "CTF version " + std::to_string(version_) +
		    ", which kinstctl does not read (it reads versions 2 and 3)");
	if ((flags & ~flag_compress) != 0)
		corrupt("unknown header flags " + hex(flags));
	if (sec.size() < header_size)
		corrupt("too short for a CTF header (" + std::to_string(sec.size()) + " bytes)");
	uint32_t h[8];
	memcpy(h, sec.data() + 4, sizeof(h));
	uint32_t parname = h[1], lbloff = h[2], objtoff = h[3], funcoff = h[4],
	    typeoff = h[5];
	stroff_ = h[6];
	strlen_ = h[7];
	if (parname != 0)
		throw Error(Exit::live, "CTF uniquified against a parent dictionary, "
		    "which kinstctl does not read");
	uint64_t end = (uint64_t)stroff_ + strlen_;
	if (!(lbloff <= objtoff && objtoff <= funcoff && funcoff <= typeoff &&
	    typeoff <= stroff_))
		corrupt("section offsets out of order");
	if (end > max_data)
		corrupt("the data would be " + std::to_string(end) + " bytes");
	if (flags & flag_compress) {
		// zlib cannot expand more than about 1032 times: a header that
		// claims more is corrupt (and is not worth allocating for).
		uint64_t zlen = sec.size() - header_size;
		if (end > zlen * 1032 + 1024)
			corrupt("the header claims " + std::to_string(end) + " bytes from " +
			    std::to_string(zlen) + " compressed ones");
		data_ = inflate_body(sec.data() + header_size, sec.size() - header_size, end);
	} else {
		if (end > sec.size() - header_size)
			corrupt("the string table ends at " + std::to_string(end) +
			    ", past the section's " + std::to_string(sec.size() - header_size) +
			    " bytes");
		data_.assign(sec.begin() + header_size, sec.begin() + header_size + end);
	}
	return Sections{funcoff, typeoff};
}

// The type record at off, appended to types_: the offset of the next.
uint64_t
Ctf::load_type(const Body &b, uint64_t off)
{
	T t;
	uint32_t info, small, inc;
	uint64_t lsize = 0;
	t.name = b.u32(off);
	if (b.v2) {
		info = b.u16(off + 4);
		small = b.u16(off + 6);
		t.kind = (uint8_t)((info & 0xf800) >> 11);
		t.vlen = info & 0x3ff;
		inc = 8;
		if (small == 0xffff) {
			lsize = (uint64_t)b.u32(off + 8) << 32 | b.u32(off + 12);
			inc = 16;
		}
	} else {
		info = b.u32(off + 4);
		small = b.u32(off + 8);
		t.kind = (uint8_t)((info & 0xfc000000u) >> 26);
		t.vlen = info & 0xffffff;
		inc = 12;
		if (small == 0xffffffffu) {
			lsize = (uint64_t)b.u32(off + 12) << 32 | b.u32(off + 16);
			inc = 20;
		}
	}
	bool large = inc == 16 || inc == 20;
	uint64_t size = large ? lsize : small;
	uint64_t p = off + inc;
	uint32_t id = (uint32_t)types_.size();
	uint64_t vbytes = load_type_data(b, t, p, size, small);
	if (p + vbytes > stroff_)
		corrupt("type " + std::to_string(id) + " runs past the type section");
	str(t.name);
	types_.push_back(t);
	return p + vbytes;
}

// What follows the record of t (its kind and vlen read) at p, by kind,
// into t, args_, members_ or enumvals_: its length in bytes.  size and
// small are the record's size (small or large) and its small word.
uint64_t
Ctf::load_type_data(const Body &b, T &t, uint64_t p, uint64_t size, uint32_t small)
{
	uint64_t vbytes = 0;
	switch (t.kind) {
	case K_INTEGER:
	case K_FLOAT:
		t.size = size;
		t.enc = b.u32(p);
		vbytes = 4;
		break;
	case K_ARRAY:
		t.size = size;
		t.ref = b.id_at(p);
		t.nelems = b.u32(p + 2 * b.idw);
		vbytes = b.v2 ? 8 : 12;
		break;
	case K_FUNCTION:
		t.ref = small;
		vbytes = roundup4((uint64_t)b.idw * t.vlen);
		if (p + vbytes > stroff_)
			break;
		t.first = (uint32_t)args_.size();
		for (uint32_t i = 0; i < t.vlen; i++)
			args_.push_back(b.id_at(p + (uint64_t)i * b.idw));
		break;
	case K_STRUCT:
	case K_UNION: {
		t.size = size;
		bool lmem = size >= (b.v2 ? 8192u : 1u << 29);
		unsigned msz = lmem ? 16 : b.v2 ? 8 : 12;
		vbytes = (uint64_t)msz * t.vlen;
		if (p + vbytes > stroff_)
			break;
		t.first = (uint32_t)members_.size();
		for (uint32_t i = 0; i < t.vlen; i++) {
			uint64_t m = p + (uint64_t)i * msz;
			M mm;
			mm.name = b.u32(m);
			mm.type = b.id_at(m + 4);
			if (lmem)
				mm.offset = (uint64_t)b.u32(m + 8) << 32 | b.u32(m + 12);
			else
				mm.offset = b.v2 ? b.u16(m + 6) : b.u32(m + 8);
			members_.push_back(mm);
		}
		break;
	}
	case K_ENUM:
		t.size = size;
		vbytes = 8ull * t.vlen;
		if (p + vbytes > stroff_)
			break;
		t.first = (uint32_t)enumvals_.size();
		for (uint32_t i = 0; i < t.vlen; i++) {
			E e{b.u32(p + 8ull * i), (int32_t)b.u32(p + 8ull * i + 4)};
			str(e.name);	// the name is there
			if (e.value < 0)
				t.negative = true;
			enumvals_.push_back(e);
		}
		break;
	case K_FORWARD:
		t.ref = small;	// the tag's kind
		break;
	case K_UNKNOWN:
		break;
	case K_POINTER:
	case K_TYPEDEF:
	case K_VOLATILE:
	case K_CONST:
	case K_RESTRICT:
		t.ref = small;
		break;
	default:
		corrupt("type " + std::to_string(types_.size()) + " has kind " +
		    std::to_string(t.kind) + ", which CTF does not define");
	}
	return vbytes;
}

// Every reference names a type that exists; the named structs, unions,
// typedefs and integers are indexed by name.
void
Ctf::link_types()
{
	const uint32_t n = (uint32_t)types_.size();
	auto check = [&](uint32_t from, uint32_t to) {
		if (to >= n)
			corrupt("type " + std::to_string(from) + " refers to type " +
			    std::to_string(to) + ", and there are " + std::to_string(n - 1));
	};
	for (uint32_t id = 1; id < n; id++) {
		const T &t = types_[id];
		switch (t.kind) {
		case K_POINTER: case K_TYPEDEF: case K_VOLATILE: case K_CONST:
		case K_RESTRICT: case K_ARRAY:
			check(id, t.ref);
			break;
		case K_FUNCTION:
			check(id, t.ref);
			for (uint32_t i = 0; i < t.vlen; i++)
				check(id, args_[t.first + i]);
			break;
		case K_STRUCT: case K_UNION:
			for (uint32_t i = 0; i < t.vlen; i++) {
				check(id, members_[t.first + i].type);
				str(members_[t.first + i].name);
			}
			break;
		}
		std::string nm = str(t.name);
		if (nm.empty())
			continue;
		if (t.kind == K_STRUCT)
			structs_.emplace(nm, id);
		else if (t.kind == K_UNION)
			unions_.emplace(nm, id);
		else if (t.kind == K_TYPEDEF)
			typedefs_.emplace(nm, id);
		else if (t.kind == K_INTEGER) {
			// Bitfields reuse the name with fewer bits: keep the
			// full-width one.
			auto it = ints_.find(nm);
			bool full = (t.enc & 0xffff) == t.size * 8;
			if (it == ints_.end())
				ints_.emplace(nm, id);
			else if (full && (types_[it->second].enc & 0xffff) !=
			    types_[it->second].size * 8)
				it->second = id;
		}
	}
}

// Functions: one record per STT_FUNC symbol the section covers, in
// symbol-table order; anonymous, undefined and the _START_/_END_ markers
// have none; a symbol without a type has a one-word pad.
void
Ctf::load_funcs(const Body &b, const std::vector<Sym> &syms, uint64_t funcoff,
    uint64_t typeoff)
{
	const uint32_t n = (uint32_t)types_.size();
	uint64_t off = funcoff;
	for (const Sym &s : syms) {
		if (s.name.empty() || s.shndx == 0 /* SHN_UNDEF */ ||
		    s.name == "_START_" || s.name == "_END_")
			continue;
		if (s.type != 2 /* STT_FUNC */ || off >= typeoff)
			continue;
		uint32_t info = b.id_at(off);
		uint32_t kind = b.v2 ? (info & 0xf800) >> 11 : (info & 0xfc000000u) >> 26;
		uint32_t vlen = b.v2 ? info & 0x3ff : info & 0xffffff;
		if (kind == K_UNKNOWN && vlen == 0) {
			off += b.idw;
			continue;
		}
		if (kind != K_FUNCTION)
			corrupt("the function record of " + s.name + " has kind " +
			    std::to_string(kind));
		uint64_t len = b.v2 ? 2ull * (vlen + 2) : roundup4(4ull * (vlen + 2));
		if (off + len > typeoff)
			corrupt("the function record of " + s.name +
			    " runs past the function section");
		F f;
		f.ret = b.id_at(off + b.idw);
		for (uint32_t i = 0; i < vlen; i++)
			f.args.push_back(b.id_at(off + (uint64_t)b.idw * (2 + i)));
		for (uint32_t to : f.args)
			if (to >= n)
				corrupt("the function record of " + s.name + " refers to type " +
				    std::to_string(to) + ", and there are " + std::to_string(n - 1));
		if (f.ret >= n)
			corrupt("the function record of " + s.name + " returns type " +
			    std::to_string(f.ret) + ", and there are " + std::to_string(n - 1));
		f.variadic = !f.args.empty() && f.args.back() == 0;
		if (f.variadic)
			f.args.pop_back();
		funcs_.emplace(s.name, std::move(f));
		off += len;
	}
}

Ctf::Ctf(const std::vector<uint8_t> &section, const std::vector<Sym> &syms,
    const std::string &strtab, const std::string &label)
    : ext_(strtab)
{
	path_ = label;
	try {
		load(section, syms);
	} catch (const Error &e) {
		throw Error(e.code(), label + ": " + e.what());
	}
}

namespace {

struct ElfFile {
	int fd = -1;
	Elf *e = nullptr;
	~ElfFile()
	{
		if (e)
			elf_end(e);
		if (fd >= 0)
			close(fd);
	}
};

// The section called name, or null.
Elf_Scn *
find_section(Elf *e, const char *name)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return nullptr;
	for (Elf_Scn *s = elf_nextscn(e, nullptr); s; s = elf_nextscn(e, s)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(s, &sh))
			continue;
		const char *n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && strcmp(n, name) == 0 && sh.sh_type != SHT_NOBITS)
			return s;
	}
	return nullptr;
}

bool
open_elf(const std::string &path, ElfFile &f)
{
	elf_version(EV_CURRENT);
	f.fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (f.fd < 0)
		return false;
	f.e = elf_begin(f.fd, ELF_C_READ, nullptr);
	return f.e != nullptr && elf_kind(f.e) == ELF_K_ELF;
}

std::vector<uint8_t>
section_bytes(Elf_Scn *s)
{
	std::vector<uint8_t> v;
	for (Elf_Data *d = elf_rawdata(s, nullptr); d; d = elf_rawdata(s, d))
		if (d->d_buf)
			v.insert(v.end(), (const uint8_t *)d->d_buf,
			    (const uint8_t *)d->d_buf + d->d_size);
	return v;
}

} // namespace

bool
ctf_file(const std::string &path)
{
	std::ifstream in(path, std::ios::binary);
	unsigned char m[4] = {0, 0, 0, 0};
	if (!in.read((char *)m, 4))
		return false;
	if ((m[0] | m[1] << 8) == ctf_magic || (m[0] << 8 | m[1]) == ctf_magic)
		return true;
	if (memcmp(m, ELFMAG, SELFMAG) != 0)
		return false;
	ElfFile f;
	return open_elf(path, f) && find_section(f.e, ".SUNW_ctf") != nullptr;
}

Ctf::Ctf(const std::string &path)
{
	path_ = path;
	try {
		ElfFile f;
		std::vector<uint8_t> sec;
		std::vector<Sym> syms;
		if (open_elf(path, f)) {
			Elf_Scn *c = find_section(f.e, ".SUNW_ctf");
			if (c == nullptr)
				throw Error(Exit::live, "no .SUNW_ctf section (built without CTF)");
			sec = section_bytes(c);
			for (Elf_Scn *s = elf_nextscn(f.e, nullptr); s; s = elf_nextscn(f.e, s)) {
				GElf_Shdr sh;
				if (!gelf_getshdr(s, &sh) || sh.sh_type != SHT_SYMTAB)
					continue;
				Elf_Scn *strs = elf_getscn(f.e, sh.sh_link);
				if (strs) {
					std::vector<uint8_t> st = section_bytes(strs);
					ext_.assign(st.begin(), st.end());
				}
				Elf_Data *d = elf_getdata(s, nullptr);
				size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
				for (size_t i = 0; d && i < count; i++) {
					GElf_Sym gs;
					if (!gelf_getsym(d, (int)i, &gs))
						break;
					Sym y;
					if (gs.st_name != 0 && gs.st_name < ext_.size())
						y.name = ext_.c_str() + gs.st_name;
					y.type = GELF_ST_TYPE(gs.st_info);
					y.shndx = gs.st_shndx;
					y.value = gs.st_value;
					syms.push_back(std::move(y));
				}
				break;
			}
		} else {
			if (f.fd < 0)
				throw Error(Exit::live, errno == ENOENT ? "no such file" :
				    strerror(errno));
			std::ifstream in(path, std::ios::binary);
			sec.assign(std::istreambuf_iterator<char>(in), {});
		}
		load(sec, syms);
	} catch (const Error &e) {
		throw Error(e.code(), path + ": " + e.what());
	}
}

std::string
Ctf::str(uint32_t ref) const
{
	uint32_t off = ref & 0x7fffffff;
	if (ref >> 31) {
		if (off >= ext_.size())
			corrupt("name " + hex(ref) + " is past the ELF string table");
		return std::string(ext_.c_str() + off);
	}
	if (off >= strlen_) {
		if (off == 0)
			return "";	// an empty string table
		corrupt("name " + hex(ref) + " is past the string table");
	}
	const char *s = (const char *)data_.data() + stroff_ + off;
	return std::string(s, strnlen(s, strlen_ - off));
}

const Ctf::T &
Ctf::at(uint32_t id) const
{
	if (id >= types_.size())
		throw Error(Exit::internal, "CTF: no type " + std::to_string(id));
	return types_[id];
}

uint32_t
Ctf::resolve(uint32_t id) const
{
	for (int guard = 0; id != 0 && guard < max_depth; guard++) {
		const T &t = at(id);
		if (t.kind != K_TYPEDEF && t.kind != K_VOLATILE && t.kind != K_CONST &&
		    t.kind != K_RESTRICT)
			return id;
		id = t.ref;
	}
	return id;
}

Types::Kind
Ctf::kind(uint32_t id) const
{
	id = resolve(id);
	if (id == 0)
		return Kind::void_;
	switch (at(id).kind) {
	case K_INTEGER: return Kind::integer;
	case K_POINTER: return Kind::pointer;
	case K_ENUM: return Kind::enumeration;
	case K_STRUCT: return Kind::structure;
	case K_UNION: return Kind::union_;
	case K_ARRAY: return Kind::array;
	case K_FUNCTION: return Kind::function;
	case K_FLOAT: return Kind::floating;
	default: return Kind::other;
	}
}

int64_t
Ctf::size_at(uint32_t id, int depth) const
{
	id = resolve(id);
	if (id == 0 || depth > max_depth)
		return -1;
	const T &t = at(id);
	switch (t.kind) {
	case K_INTEGER:
	case K_FLOAT:
	case K_STRUCT:
	case K_UNION:
		return (int64_t)t.size;
	case K_ENUM:
		return t.size ? (int64_t)t.size : 4;
	case K_POINTER:
		return 8;
	case K_ARRAY: {
		if (t.size > 0)
			return (int64_t)t.size;
		int64_t e = size_at(t.ref, depth + 1), n;
		// An element size times a count past int64_t (a corrupt or
		// hostile section): unknown, as a size that cannot be told.
		if (e < 0 || __builtin_mul_overflow(e, (int64_t)t.nelems, &n))
			return -1;
		return n;
	}
	default:
		return -1;
	}
}

int64_t
Ctf::size(uint32_t id) const
{
	return size_at(id, 0);
}

bool
Ctf::is_signed(uint32_t id) const
{
	id = resolve(id);
	if (id == 0)
		return false;
	const T &t = at(id);
	if (t.kind == K_INTEGER)
		return (t.enc >> 24 & 1) != 0;
	if (t.kind == K_ENUM)
		return t.negative;
	return false;
}

uint32_t
Ctf::pointee(uint32_t id) const
{
	id = resolve(id);
	if (id == 0)
		return 0;
	const T &t = at(id);
	return t.kind == K_POINTER || t.kind == K_ARRAY ? t.ref : 0;
}

uint32_t
Ctf::array_len(uint32_t id) const
{
	const T &t = at(resolve(id));
	return t.kind == K_ARRAY ? t.nelems : 0;
}

std::string
Ctf::spell(uint32_t id, int depth) const
{
	if (id == 0)
		return "void";
	if (depth > max_depth)
		return "?";
	const T &t = at(id);
	std::string n = str(t.name);
	switch (t.kind) {
	case K_POINTER: {
		std::string in = spell(t.ref, depth + 1);
		return in + (in.back() == '*' ? "*" : " *");
	}
	case K_CONST: return "const " + spell(t.ref, depth + 1);
	case K_VOLATILE: return "volatile " + spell(t.ref, depth + 1);
	case K_RESTRICT: return spell(t.ref, depth + 1);
	case K_STRUCT: return "struct " + (n.empty() ? "(anonymous)" : n);
	case K_UNION: return "union " + (n.empty() ? "(anonymous)" : n);
	case K_ENUM: return "enum " + (n.empty() ? "(anonymous)" : n);
	case K_FORWARD:
		return (t.ref == K_UNION ? "union " : t.ref == K_ENUM ? "enum " :
		    "struct ") + n;
	case K_ARRAY:
		return spell(t.ref, depth + 1) + "[" + std::to_string(t.nelems) + "]";
	case K_FUNCTION: return "function";
	default: return n.empty() ? "?" : n;
	}
}

std::string
Ctf::name(uint32_t id) const
{
	return spell(id, 0);
}

Types::Func
Ctf::func(const std::string &fname) const
{
	auto it = funcs_.find(fname);
	if (it == funcs_.end())
		throw Error(Exit::unknown_function, fname + ": no function of that name in the "
		    "kernel's types (" + path_ + (funcs_.empty() ? "; it has no function "
		    "records: raw CTF has none, give the ELF file" : "; inlined functions "
		    "have none; a module's function: give MODULE:FUNC") + ")");
	Func f;
	f.name = fname;
	f.ret = it->second.ret;
	f.variadic = it->second.variadic;
	for (size_t i = 0; i < it->second.args.size(); i++)
		f.params.push_back(Param{"arg" + std::to_string(i), it->second.args[i]});
	return f;
}

uint32_t
Ctf::find_tagged(const std::string &tag, bool is_union) const
{
	const auto &m = is_union ? unions_ : structs_;
	auto it = m.find(tag);
	return it == m.end() ? 0 : it->second;
}

uint32_t
Ctf::find_named(const std::string &n) const
{
	for (const auto *m : {&typedefs_, &ints_}) {
		auto it = m->find(n);
		if (it != m->end())
			return it->second;
	}
	return 0;
}

bool
Ctf::members(uint32_t id, std::vector<RawMember> &out) const
{
	const T &t = at(resolve(id));
	if (t.kind != K_STRUCT && t.kind != K_UNION)
		return false;
	for (uint32_t i = 0; i < t.vlen; i++) {
		const M &mm = members_[t.first + i];
		RawMember r{str(mm.name), mm.type, mm.offset, 0};
		// A bitfield is an integer of fewer bits than its size, its
		// first bit the encoding's offset.
		const T &mt = at(resolve(mm.type));
		if (mt.kind == K_INTEGER && (mt.enc & 0xffff) != mt.size * 8) {
			r.bitfield = mt.enc & 0xffff;
			r.bit_offset += (mt.enc >> 16) & 0xff;
		}
		out.push_back(std::move(r));
	}
	return true;
}

void
Ctf::list_enumerators(Enumerators &out) const
{
	for (uint32_t id = 1; id < types_.size(); id++) {
		const T &t = types_[id];
		if (t.kind != K_ENUM)
			continue;
		for (uint32_t i = 0; i < t.vlen; i++) {
			const E &e = enumvals_[t.first + i];
			out.emplace(str(e.name), std::make_pair((int64_t)e.value, id));
		}
	}
}

} // namespace kinst
