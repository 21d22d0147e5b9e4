// SPDX-License-Identifier: BSD-2-Clause
#include "symbols/kallsyms.h"

#include <algorithm>
#include <sstream>

#include "base/error.h"
#include "base/regfile.h"
#include "base/spec.h"

namespace kinst {

KallsymsParse
parse_kallsyms(std::istream &in)
{
	KallsymsParse p;
	std::string line;
	while (std::getline(in, line)) {
		if (line.empty())
			continue;
		// ADDR SP TYPE SP NAME [TAB "[" MODULE "]"]
		size_t s1 = line.find(' ');
		if (s1 == std::string::npos || s1 == 0 || s1 > 16 || line.size() < s1 + 4 ||
		    line[s1 + 2] != ' ') {
			p.bad_lines++;
			continue;
		}
		uint64_t addr;
		if (!parse_number("0x" + line.substr(0, s1), UINT64_MAX, &addr)) {
			p.bad_lines++;
			continue;
		}
		KallsymsEntry e;
		e.addr = addr;
		e.type = line[s1 + 1];
		std::string rest = line.substr(s1 + 3);
		size_t tab = rest.find('\t');
		if (tab != std::string::npos) {
			std::string m = rest.substr(tab + 1);
			rest.resize(tab);
			if (m.size() < 3 || m.front() != '[' || m.back() != ']') {
				p.bad_lines++;
				continue;
			}
			e.module = m.substr(1, m.size() - 2);
		}
		if (rest.empty() || rest.find(' ') != std::string::npos) {
			p.bad_lines++;
			continue;
		}
		e.name = rest;
		if (addr != 0)
			p.all_zero = false;
		p.entries.push_back(std::move(e));
	}
	return p;
}

KallsymsModule::KallsymsModule(const std::string &name, std::vector<RawSymbol> raw,
    TextFetcher fetch, VerdictFetcher verdict)
    : fetch_(std::move(fetch)), verdict_(std::move(verdict))
{
	name_ = name;
	path_ = "/proc/kallsyms";
	relocatable_ = false;
	a64_ = regfile.a64;	// the running kernel's code is kinstctl's own
	functions_ = group_aliases(std::move(raw));
}

namespace {

struct AddrLess {
	bool operator()(const Function &a, uint64_t b) const { return a.addr < b; }
	bool operator()(uint64_t a, const Function &b) const { return a < b.addr; }
};

} // namespace

Bytes
KallsymsModule::bytes(const Function &f)
{
	auto it = cache_.find(f.addr);
	if (it == cache_.end()) {
		std::vector<uint8_t> b = fetch_(name_, f.name, f.addr);
		it = cache_.emplace(f.addr, std::move(b)).first;
		// The kernel's size is authoritative.  functions_ is in address
		// order (group_aliases: one section, ""), and a size changed
		// here keeps it so: the functions at f.addr by binary search,
		// not a scan of them all for each function fetched.
		auto at = std::equal_range(functions_.begin(), functions_.end(), f.addr,
		    AddrLess{});
		for (auto fn = at.first; fn != at.second; ++fn)
			if (fn->size != it->second.size()) {
				fn->size = it->second.size();
				generation_++;
			}
	}
	return Bytes{it->second.data(), it->second.size()};
}

int
KallsymsModule::kernel_verdict(const Function &f, uint32_t offset, uint32_t *sessions)
{
	if (sessions)
		*sessions = 0;
	return verdict_ ? verdict_(name_, f.name, offset, sessions) : -1;
}

std::vector<std::unique_ptr<Module>>
modules_from_kallsyms(const KallsymsParse &p, TextFetcher fetch, VerdictFetcher verdict)
{
	std::map<std::string, std::vector<const KallsymsEntry *>> by_mod;
	for (const auto &e : p.entries)
		by_mod[e.module].push_back(&e);
	std::vector<std::unique_ptr<Module>> out;
	// The kernel first, then modules in name order.
	std::vector<std::string> names;
	if (by_mod.count(""))
		names.push_back("");
	for (const auto &kv : by_mod)
		if (!kv.first.empty())
			names.push_back(kv.first);
	for (const auto &mn : names) {
		auto v = by_mod[mn];
		std::stable_sort(v.begin(), v.end(), [](const KallsymsEntry *a, const KallsymsEntry *b) {
			return a->addr < b->addr;
		});
		std::vector<RawSymbol> raw;
		for (size_t i = 0; i < v.size(); i++) {
			char t = v[i]->type;
			if (t != 't' && t != 'T' && t != 'W')
				continue;
			uint64_t size = 0;
			for (size_t j = i + 1; j < v.size(); j++)
				if (v[j]->addr > v[i]->addr) {
					size = v[j]->addr - v[i]->addr;
					break;
				}
			raw.push_back(RawSymbol{v[i]->name, v[i]->addr, size, "",
			    t == 'T' || t == 'W', raw.size()});
		}
		if (raw.empty())
			continue;
		out.push_back(std::make_unique<KallsymsModule>(mn.empty() ? "kernel" : mn,
		    std::move(raw), fetch, verdict));
	}
	return out;
}

} // namespace kinst
