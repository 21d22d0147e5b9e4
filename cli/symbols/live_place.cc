// SPDX-License-Identifier: BSD-2-Clause
// Section placement of a loaded module (live_place.h).
#include "symbols/live_place.h"

#include "symbols/elf_image.h"

namespace kinst {

namespace {

enum class Anchors { none, agree, disagree };

// What the kernel's answers for the anchors among fs (indices into
// img.functions(), all of one section) of this binding say about the
// section's base, stored in *base when they agree.
Anchors
section_base(const ElfImage &img, const std::vector<size_t> &fs, bool global,
    const SymbolLookup &lookup, uint64_t *base)
{
	Anchors r = Anchors::none;
	for (size_t i : fs) {
		const ElfFunction &f = img.functions()[i];
		if (f.global != global || img.name_repeated(f.name))
			continue;
		uint64_t addr = 0, size = 0;
		if (!lookup(f.name, &addr, &size))
			continue;
		if (size != f.size || addr < f.value)
			return Anchors::disagree;
		if (r == Anchors::agree && addr - f.value != *base)
			return Anchors::disagree;
		*base = addr - f.value;
		r = Anchors::agree;
	}
	return r;
}

} // namespace

Placement
place_sections(const ElfImage &img, const SymbolLookup &lookup)
{
	std::map<uint32_t, std::vector<size_t>> by_section;
	for (size_t i = 0; i < img.functions().size(); i++)
		by_section[img.functions()[i].shndx].push_back(i);
	Placement p;
	for (const auto &s : by_section) {
		uint64_t base = 0;
		Anchors a = section_base(img, s.second, true, lookup, &base);
		if (a == Anchors::none)
			a = section_base(img, s.second, false, lookup, &base);
		if (a == Anchors::agree)
			p.base[s.first] = base;
		else
			p.unplaced.push_back(s.first);
	}
	return p;
}

} // namespace kinst
