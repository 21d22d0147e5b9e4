// SPDX-License-Identifier: BSD-2-Clause
// Kernel types from BTF (btf_types.h).
#include "debuginfo/btf_types.h"
#include "debuginfo/ctf_types.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "base/regfile.h"
#include "base/text.h"
#include "base/live.h"
#include "base/spec.h"

#include "base/abi.h"

#ifdef KINST_HAVE_LIBBPF
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#endif

namespace kinst {

#ifdef KINST_HAVE_LIBBPF

namespace {

const struct btf_type *
type_at(const struct btf *b, uint32_t id)
{
	const struct btf_type *t = btf__type_by_id(b, id);
	if (t == nullptr)
		throw Error(Exit::internal, "BTF: no type " + std::to_string(id));
	return t;
}

std::string
str(const struct btf *b, uint32_t off)
{
	const char *s = btf__name_by_offset(b, off);
	return s ? s : "";
}

} // namespace

Btf::Btf(const std::string &path, std::shared_ptr<Btf> base)
    : base_(std::move(base))
{
	path_ = path;
	libbpf_set_print(nullptr);	// its warnings are ours to word
	errno = 0;
	b_ = base_ ? btf__parse_split(path.c_str(), base_->b_) :
	    btf__parse(path.c_str(), nullptr);
	if (b_ == nullptr) {
		// libbpf says ENOENT also for an ELF file without .BTF.
		int e = errno;
		struct stat st;
		if (e == ENOENT && stat(path.c_str(), &st) == 0)
			e = ENODATA;
		throw Error(Exit::live, path + ": " + (e == ENOENT ? "no such file" :
		    e == EINVAL || e == EPROTO || e == ENODATA || e >= 4000 ?
		    "neither BTF nor CTF (nor an ELF file with a .BTF or .SUNW_ctf "
		    "section)" : strerror(e)));
	}
}

Btf::Btf(struct btf *b) : b_(b)
{
	path_ = "(built)";
}

Btf::~Btf()
{
	btf__free(b_);
}

uint32_t
Btf::resolve(uint32_t id) const
{
	for (int guard = 0; id != 0 && guard < 64; guard++) {
		const struct btf_type *t = type_at(b_, id);
		if (!btf_is_typedef(t) && !btf_is_mod(t))
			return id;
		id = t->type;
	}
	return id;
}

Btf::Kind
Btf::kind(uint32_t id) const
{
	id = resolve(id);
	if (id == 0)
		return Kind::void_;
	const struct btf_type *t = type_at(b_, id);
	switch (btf_kind(t)) {
	case BTF_KIND_INT: return Kind::integer;
	case BTF_KIND_PTR: return Kind::pointer;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64: return Kind::enumeration;
	case BTF_KIND_STRUCT: return Kind::structure;
	case BTF_KIND_UNION: return Kind::union_;
	case BTF_KIND_ARRAY: return Kind::array;
	case BTF_KIND_FUNC_PROTO: return Kind::function;
	case BTF_KIND_FLOAT: return Kind::floating;
	default: return Kind::other;
	}
}

int64_t
Btf::size(uint32_t id) const
{
	if (resolve(id) == 0)
		return -1;
	int64_t s = btf__resolve_size(b_, id);
	return s < 0 ? -1 : s;
}

bool
Btf::is_signed(uint32_t id) const
{
	id = resolve(id);
	if (id == 0)
		return false;
	const struct btf_type *t = type_at(b_, id);
	if (btf_is_int(t))
		return (btf_int_encoding(t) & BTF_INT_SIGNED) != 0;
	if (btf_is_any_enum(t))
		return btf_kflag(t);
	return false;
}

uint32_t
Btf::pointee(uint32_t id) const
{
	id = resolve(id);
	if (id == 0)
		return 0;
	const struct btf_type *t = type_at(b_, id);
	if (btf_is_ptr(t))
		return t->type;
	if (btf_is_array(t))
		return btf_array(t)->type;
	return 0;
}

uint32_t
Btf::array_len(uint32_t id) const
{
	const struct btf_type *t = type_at(b_, resolve(id));
	return btf_is_array(t) ? btf_array(t)->nelems : 0;
}

std::string
Btf::name(uint32_t id) const
{
	if (id == 0)
		return "void";
	const struct btf_type *t = type_at(b_, id);
	std::string n = str(b_, t->name_off);
	switch (btf_kind(t)) {
	case BTF_KIND_PTR: {
		std::string in = name(t->type);
		return in + (in.back() == '*' ? "*" : " *");
	}
	case BTF_KIND_CONST: return "const " + name(t->type);
	case BTF_KIND_VOLATILE: return "volatile " + name(t->type);
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG: return name(t->type);
	case BTF_KIND_STRUCT: return "struct " + (n.empty() ? "(anonymous)" : n);
	case BTF_KIND_UNION: return "union " + (n.empty() ? "(anonymous)" : n);
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64: return "enum " + (n.empty() ? "(anonymous)" : n);
	case BTF_KIND_FWD: return (btf_kflag(t) ? "union " : "struct ") + n;
	case BTF_KIND_ARRAY:
		return name(btf_array(t)->type) + "[" +
		    std::to_string(btf_array(t)->nelems) + "]";
	case BTF_KIND_FUNC_PROTO: return "function";
	default: return n.empty() ? "?" : n;
	}
}

Btf::Func
Btf::func(const std::string &fname) const
{
	int id = btf__find_by_name_kind(b_, fname.c_str(), BTF_KIND_FUNC);
	if (id <= 0)
		throw Error(Exit::unknown_function, fname + ": no function of that name in the "
		    "kernel's types (" + path_ + "; inlined functions, and static ones the "
		    "compiler changed, have none)");
	const struct btf_type *proto = type_at(b_, type_at(b_, (uint32_t)id)->type);
	if (!btf_is_func_proto(proto))
		throw Error(Exit::internal, fname + ": BTF FUNC without a prototype");
	Func f;
	f.name = fname;
	f.ret = proto->type;
	const struct btf_param *p = btf_params(proto);
	for (uint16_t i = 0; i < btf_vlen(proto); i++) {
		if (p[i].type == 0 && i + 1 == btf_vlen(proto)) {
			f.variadic = true;
			break;
		}
		std::string pn = str(b_, p[i].name_off);
		if (pn.empty())
			pn = "arg" + std::to_string(i);
		f.params.push_back(Param{pn, p[i].type});
	}
	return f;
}

bool
Btf::has_func(const std::string &fname) const
{
	return btf__find_by_name_kind(b_, fname.c_str(), BTF_KIND_FUNC) > 0;
}

uint32_t
Btf::find_tagged(const std::string &tag, bool is_union) const
{
	int id = btf__find_by_name_kind(b_, tag.c_str(),
	    is_union ? BTF_KIND_UNION : BTF_KIND_STRUCT);
	return id > 0 ? (uint32_t)id : 0;
}

uint32_t
Btf::find_named(const std::string &n) const
{
	for (int k : {BTF_KIND_TYPEDEF, BTF_KIND_INT}) {
		int id = btf__find_by_name_kind(b_, n.c_str(), k);
		if (id > 0)
			return (uint32_t)id;
	}
	return 0;
}

bool
Btf::members(uint32_t id, std::vector<RawMember> &out) const
{
	const struct btf_type *t = type_at(b_, resolve(id));
	if (!btf_is_composite(t))
		return false;
	const struct btf_member *mm = btf_members(t);
	for (uint16_t i = 0; i < btf_vlen(t); i++)
		out.push_back(RawMember{str(b_, mm[i].name_off), mm[i].type,
		    btf_member_bit_offset(t, i), btf_member_bitfield_size(t, i)});
	return true;
}

void
Btf::list_enumerators(Enumerators &out) const
{
	uint32_t count = btf__type_cnt(b_);
	for (uint32_t id = 1; id < count; id++) {
		const struct btf_type *t = btf__type_by_id(b_, id);
		if (btf_is_enum(t)) {
			const struct btf_enum *e = btf_enum(t);
			for (uint16_t i = 0; i < btf_vlen(t); i++)
				out.emplace(str(b_, e[i].name_off), std::make_pair(
				    btf_kflag(t) ? (int64_t)e[i].val :
				    (int64_t)(uint32_t)e[i].val, id));
		} else if (btf_is_enum64(t)) {
			const struct btf_enum64 *e = btf_enum64(t);
			for (uint16_t i = 0; i < btf_vlen(t); i++)
				out.emplace(str(b_, e[i].name_off), std::make_pair(
				    (int64_t)btf_enum64_value(e + i), id));
		}
	}
}

#else /* !KINST_HAVE_LIBBPF */

// Built without libbpf (FreeBSD, whose types are CTF): no BTF reader.
Btf::Btf(const std::string &path, std::shared_ptr<Btf>)
{
	throw Error(Exit::live, path + ": not CTF (raw, or an ELF file with a .SUNW_ctf "
	    "section); this kinstctl, built without libbpf, reads no BTF");
}
Btf::Btf(struct btf *) {}
Btf::~Btf() {}
uint32_t Btf::resolve(uint32_t id) const { return id; }
Btf::Kind Btf::kind(uint32_t) const { return Kind::other; }
int64_t Btf::size(uint32_t) const { return -1; }
bool Btf::is_signed(uint32_t) const { return false; }
uint32_t Btf::pointee(uint32_t) const { return 0; }
uint32_t Btf::array_len(uint32_t) const { return 0; }
std::string Btf::name(uint32_t) const { return "?"; }
Btf::Func Btf::func(const std::string &n) const { return Func{n, 0, {}, false}; }
bool Btf::has_func(const std::string &) const { return false; }
uint32_t Btf::find_tagged(const std::string &, bool) const { return 0; }
uint32_t Btf::find_named(const std::string &) const { return 0; }
bool Btf::members(uint32_t, std::vector<RawMember> &) const { return false; }
void Btf::list_enumerators(Enumerators &) const {}

#endif /* KINST_HAVE_LIBBPF */

// ---- what both formats share ----

namespace {

// Members visited by one lookup through anonymous members (a corrupt CTF
// section or --btf file can make them a cycle, or an exponential diamond),
// and their nesting.
constexpr long max_visits = 1 << 16;
constexpr int max_depth = 64;

} // namespace

bool
Types::find_member(uint32_t id, const std::string &mname, uint64_t off, Member &m,
    int depth, long &budget) const
{
	std::vector<RawMember> ms;
	if (depth > max_depth || !members(id, ms))
		return false;
	for (const RawMember &r : ms) {
		if (--budget <= 0)
			return false;
		uint64_t at = off + r.bit_offset;
		if (r.name == mname) {
			m.found = true;
			m.type = r.type;
			m.bit_offset = (uint32_t)at;
			m.bitfield = r.bitfield;
			return true;
		}
		if (r.name.empty() && find_member(r.type, mname, at, m, depth + 1, budget))
			return true;
	}
	return false;
}

Types::Member
Types::member(uint32_t id, const std::string &mname) const
{
	Member m;
	long budget = max_visits;
	find_member(id, mname, 0, m, 0, budget);
	return m;
}

void
Types::collect(uint32_t id, std::vector<std::string> &out, int depth, long &budget) const
{
	std::vector<RawMember> ms;
	if (depth > max_depth || !members(id, ms))
		return;
	for (const RawMember &r : ms) {
		if (--budget <= 0)
			return;
		if (r.name.empty())
			collect(r.type, out, depth + 1, budget);
		else
			out.push_back(r.name);
	}
}

std::vector<std::string>
Types::member_names(uint32_t id) const
{
	std::vector<std::string> v;
	long budget = max_visits;
	collect(id, v, 0, budget);
	return v;
}

bool
Types::enumerator(const std::string &n, int64_t &value, uint32_t &type) const
{
	if (!enums_made_) {
		enums_made_ = true;
		list_enumerators(enums_);
	}
	auto it = enums_.find(n);
	if (it == enums_.end())
		return false;
	value = it->second.first;
	type = it->second.second;
	return true;
}

const Types &
TypeSource::get(const std::string &why)
{
	if (types_)
		return *types_;
	try {
		if (!file_.empty()) {
			// CTF (raw, or an ELF file with .SUNW_ctf), else BTF.
			if (ctf_file(file_))
				types_ = std::make_shared<Ctf>(file_);
			else
				types_ = std::make_shared<Btf>(file_);
			return *types_;
		}
		types_ = live_types(module_, func_);
	} catch (const Error &e) {
		throw Error(Exit::live, why + " needs kernel types (" + live_types_format() +
		    "): " + e.what());
	}
	return *types_;
}

std::string
did_you_mean(const std::string &w, const std::vector<std::string> &cands)
{
	std::string best;
	size_t bestd = 3;
	for (const auto &c : cands) {
		// Levenshtein distance, one row.
		std::vector<size_t> row(c.size() + 1);
		for (size_t j = 0; j <= c.size(); j++)
			row[j] = j;
		for (size_t i = 1; i <= w.size(); i++) {
			size_t diag = row[0];
			row[0] = i;
			for (size_t j = 1; j <= c.size(); j++) {
				size_t up = row[j];
				row[j] = std::min({row[j] + 1, row[j - 1] + 1,
				    diag + (w[i - 1] == c[j - 1] ? 0 : 1)});
				diag = up;
			}
		}
		size_t d = row[c.size()];
		if (d < bestd) {
			bestd = d;
			best = c;
		}
	}
	if (best.empty())
		for (const auto &c : cands)
			if (w.size() >= 3 && (c.compare(0, w.size(), w) == 0 ||
			    w.compare(0, c.size(), c) == 0))
				return c;
	return best;
}

uint32_t
entry_offset(const uint8_t *t, size_t len,
    const std::function<bool(uint32_t)> &is_patched)
{
	static const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
	static const uint8_t nop5[5] = {0x0f, 0x1f, 0x44, 0x00, 0x00};
	uint32_t off = 0;
	if (len >= 4 && memcmp(t, endbr64, 4) == 0)
		off = 4;
	if (len >= off + 5u && (memcmp(t + off, nop5, 5) == 0 ||
	    (t[off] == 0xe8 && is_patched(off))))
		off += 5;
	return off;
}

int
arg_register(size_t i)
{
	return i < (size_t)regfile.nargs ? regfile.args[i] : -1;
}

uint64_t
arg_value(const Types &b, uint32_t type, uint64_t reg)
{
	int64_t sz = b.size(type);
	if (sz <= 0 || sz >= 8)
		return reg;
	unsigned bits = (unsigned)sz * 8;
	uint64_t v = reg & ((1ull << bits) - 1);
	if (b.is_signed(type) && (v >> (bits - 1)) != 0)
		v |= ~0ull << bits;
	return v;
}

std::vector<ArgValue>
read_args(const Types &b, const Types::Func &f, const uint64_t *gpr)
{
	std::vector<ArgValue> out;
	for (size_t i = 0; i < f.params.size(); i++) {
		ArgValue a;
		uint32_t t = f.params[i].type;
		a.name = f.params[i].name;
		a.type = b.name(t);
		Types::Kind k = b.kind(t);
		int64_t size = b.size(t);
		int reg = arg_register(i);
		a.known = reg >= 0 && size >= 1 && size <= 8 && (k == Types::Kind::integer ||
		    k == Types::Kind::enumeration || k == Types::Kind::pointer);
		if (a.known) {
			a.pointer = k == Types::Kind::pointer;
			a.sgn = b.is_signed(t);
			a.value = arg_value(b, t, gpr[reg]);
		}
		out.push_back(a);
	}
	return out;
}

std::string
args_text(const std::string &func, const std::vector<ArgValue> &v)
{
	std::string s = func + "(";
	for (size_t i = 0; i < v.size(); i++) {
		const ArgValue &a = v[i];
		s += (i ? ", " : "") + a.name + "=";
		if (!a.known)
			s += "?";
		else if (a.pointer)
			s += hex(a.value);
		else if (a.sgn)
			s += std::to_string((int64_t)a.value);
		else
			s += std::to_string(a.value);
	}
	return s + ")";
}

} // namespace kinst
