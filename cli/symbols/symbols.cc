// SPDX-License-Identifier: BSD-2-Clause
#include "symbols/symbols.h"

#include <algorithm>
#include <tuple>

#include <elf.h>

#include "symbols/elf_image.h"
#include "base/error.h"
#include "symbols/live_place.h"

namespace kinst {

std::string
module_name_from_path(const std::string &path)
{
	std::string b = path;
	size_t slash = b.find_last_of('/');
	if (slash != std::string::npos)
		b = b.substr(slash + 1);
	if (b.size() > 3 && b.compare(b.size() - 3, 3, ".ko") == 0)
		b.resize(b.size() - 3);
	return b;
}

std::vector<Function>
group_aliases(std::vector<RawSymbol> raw)
{
	std::sort(raw.begin(), raw.end(), [](const RawSymbol &a, const RawSymbol &b) {
		return std::tie(a.section, a.addr, a.size) < std::tie(b.section, b.addr, b.size);
	});
	auto better = [](const RawSymbol &a, const RawSymbol &b) {
		// true if a is a better canonical name than b
		if (a.global != b.global)
			return a.global;
		bool au = a.name.compare(0, 2, "__") == 0, bu = b.name.compare(0, 2, "__") == 0;
		if (au != bu)
			return !au;
		if (a.name.size() != b.name.size())
			return a.name.size() < b.name.size();
		return a.name < b.name;
	};
	std::vector<Function> out;
	out.reserve(raw.size());	// at most one each: no doubling past it (peak RSS)
	for (size_t i = 0; i < raw.size();) {
		size_t j = i;
		size_t best = i;
		while (j < raw.size() && raw[j].section == raw[i].section &&
		    raw[j].addr == raw[i].addr && raw[j].size == raw[i].size) {
			if (better(raw[j], raw[best]))
				best = j;
			j++;
		}
		Function f;
		f.name = raw[best].name;
		f.addr = raw[i].addr;
		f.size = raw[i].size;
		f.section = raw[i].section;
		f.global = raw[best].global;
		f.handle = raw[best].handle;
		for (size_t k = i; k < j; k++)
			if (raw[k].name != f.name &&
			    std::find(f.aliases.begin(), f.aliases.end(), raw[k].name) == f.aliases.end())
				f.aliases.push_back(raw[k].name);
		std::sort(f.aliases.begin(), f.aliases.end());
		out.push_back(std::move(f));
		i = j;
	}
	return out;
}

ElfModule::ElfModule(std::unique_ptr<ElfImage> img, const std::string &name)
    : img_(std::move(img))
{
	path_ = img_->path();
	relocatable_ = img_->relocatable();
	a64_ = img_->machine() == EM_AARCH64;
	if (!name.empty())
		name_ = name;
	else if (img_->type() == 2 /* ET_EXEC */)
		name_ = "kernel";
	else if (!img_->modinfo_name().empty())
		name_ = img_->modinfo_name();
	else
		name_ = module_name_from_path(path_);
	const auto &fs = img_->functions();
	const auto &secs = img_->sections();
	std::vector<RawSymbol> raw;
	raw.reserve(fs.size());
	for (size_t i = 0; i < fs.size(); i++)
		raw.push_back(RawSymbol{fs[i].name, img_->address(fs[i]), fs[i].size,
		    relocatable_ ? secs[fs[i].shndx].name : std::string(), fs[i].global, i});
	functions_ = group_aliases(std::move(raw));
}

ElfModule::~ElfModule() = default;

Bytes
ElfModule::bytes(const Function &f)
{
	const ElfFunction &ef = img_->functions().at(f.handle);
	return Bytes{img_->bytes(ef), (size_t)ef.size};
}

std::string
ElfModule::relocation(const Function &f, uint64_t addr, size_t len)
{
	if (!relocatable_)
		return "";
	const ElfFunction &ef = img_->functions().at(f.handle);
	return img_->relocation_at(ef.shndx, addr, len);
}

// All or nothing: relocatable() says, for the whole module, whether its
// addresses are section-relative (every consumer reads them so: listings,
// relocation names, address lookups), so a module with one section that
// cannot be placed keeps them all section-relative, never a mix in which
// a section-relative address could pass for a live one.
bool
ElfModule::relocate(const SymbolLookup &lookup)
{
	Placement p = place_sections(*img_, lookup);
	if (!p.unplaced.empty())
		return false;
	for (Function &f : functions_) {
		const ElfFunction &ef = img_->functions().at(f.handle);
		f.addr = p.base.at(ef.shndx) + ef.value;
		f.section.clear();
	}
	relocatable_ = false;
	generation_++;
	return true;
}

static std::string
norm_modname(std::string s)
{
	std::replace(s.begin(), s.end(), '-', '_');
	return s;
}

void
SymbolTable::add(std::unique_ptr<Module> m)
{
	size_t mi = modules_.size();
	for (size_t i = 0; i < m->functions_.size(); i++) {
		Function &f = m->functions_[i];
		f.module = mi;
	}
	by_addr_.emplace_back();
	modules_.push_back(std::move(m));
}

std::vector<size_t>
SymbolTable::find_module(const std::string &name) const
{
	std::vector<size_t> r;
	std::string n = norm_modname(name);
	for (size_t i = 0; i < modules_.size(); i++)
		if (norm_modname(modules_[i]->name()) == n)
			r.push_back(i);
	return r;
}

std::vector<SymbolTable::Ref>
SymbolTable::find(const std::string &name) const
{
	// The modules added since the last look, in order: a name's
	// functions stay in (module, index) order.
	for (; named_ < modules_.size(); named_++) {
		const auto &fs = modules_[named_]->functions();
		for (size_t i = 0; i < fs.size(); i++) {
			by_name_[fs[i].name].push_back(Ref{named_, i});
			for (const auto &a : fs[i].aliases)
				by_name_[a].push_back(Ref{named_, i});
		}
	}
	auto it = by_name_.find(name);
	if (it == by_name_.end())
		return {};
	return it->second;
}

std::vector<SymbolTable::Ref>
SymbolTable::find_clones(const std::string &name) const
{
	std::vector<Ref> r;
	std::string p = name + ".";
	for (size_t mi = 0; mi < modules_.size(); mi++) {
		const auto &fs = modules_[mi]->functions();
		for (size_t i = 0; i < fs.size(); i++)
			if (fs[i].name.compare(0, p.size(), p) == 0)
				r.push_back(Ref{mi, i});
	}
	return r;
}

const SymbolTable::AddrIndex &
SymbolTable::addr_index(size_t mi) const
{
	const Module &m = *modules_[mi];
	AddrIndex &x = by_addr_[mi];
	if (x.built && x.generation == m.generation())
		return x;
	const auto &fs = m.functions();
	x.ix.clear();
	x.ix.reserve(fs.size());
	for (size_t i = 0; i < fs.size(); i++)
		x.ix.push_back(Reach{i, 0});
	std::sort(x.ix.begin(), x.ix.end(), [&fs](const Reach &a, const Reach &b) {
		return std::tie(fs[a.index].section, fs[a.index].addr, a.index) <
		    std::tie(fs[b.index].section, fs[b.index].addr, b.index);
	});
	x.sections.clear();
	for (size_t k = 0; k < x.ix.size(); k++) {
		const Function &f = fs[x.ix[k].index];
		uint64_t end = f.addr + f.size < f.addr ? UINT64_MAX : f.addr + f.size;
		bool same = k > 0 && fs[x.ix[k - 1].index].section == f.section;
		if (!same)
			x.sections.push_back(k);
		x.ix[k].reach = same ? std::max(x.ix[k - 1].reach, end) : end;
	}
	x.sections.push_back(x.ix.size());
	x.built = true;
	x.generation = m.generation();
	return x;
}

void
SymbolTable::containing_in(size_t mi, size_t lo, size_t hi, uint64_t addr,
    std::vector<Ref> &r) const
{
	const auto &fs = modules_[mi]->functions();
	const auto &ix = by_addr_[mi].ix;
	// The first entry past addr, then back while one can reach it.
	auto first = ix.begin() + (ptrdiff_t)lo;
	auto it = std::upper_bound(first, ix.begin() + (ptrdiff_t)hi, addr,
	    [&fs](uint64_t a, const Reach &e) { return a < fs[e.index].addr; });
	while (it != first) {
		--it;
		if (it->reach <= addr)
			break;
		const Function &f = fs[it->index];
		if (addr - f.addr < f.size)
			r.push_back(Ref{mi, it->index});
	}
}

// r[n..] (one module's) in index order.
static void
sort_by_index(std::vector<SymbolTable::Ref> &r, size_t n)
{
	std::sort(r.begin() + (ptrdiff_t)n, r.end(),
	    [](const SymbolTable::Ref &a, const SymbolTable::Ref &b) { return a.index < b.index; });
}

std::vector<SymbolTable::Ref>
SymbolTable::containing(uint64_t addr) const
{
	std::vector<Ref> r;
	for (size_t mi = 0; mi < modules_.size(); mi++) {
		const AddrIndex &x = addr_index(mi);
		size_t n = r.size();
		for (size_t k = 0; k + 1 < x.sections.size(); k++)
			containing_in(mi, x.sections[k], x.sections[k + 1], addr, r);
		sort_by_index(r, n);
	}
	return r;
}

std::vector<SymbolTable::Ref>
SymbolTable::containing_from(const Function &from, uint64_t addr) const
{
	if (from.module >= modules_.size() || !modules_[from.module]->relocatable())
		return containing(addr);
	const AddrIndex &x = addr_index(from.module);
	const auto &fs = modules_[from.module]->functions();
	std::vector<Ref> r;
	// The run of from's section (the last entry of sections is the end).
	auto last = x.sections.end() - 1;
	auto s = std::lower_bound(x.sections.begin(), last, from.section,
	    [&](size_t k, const std::string &sec) { return fs[x.ix[k].index].section < sec; });
	if (s != last && fs[x.ix[*s].index].section == from.section)
		containing_in(from.module, *s, *(s + 1), addr, r);
	sort_by_index(r, 0);
	return r;
}

size_t
SymbolTable::nfunctions() const
{
	size_t n = 0;
	for (const auto &m : modules_)
		n += m->functions().size();
	return n;
}

} // namespace kinst
