// SPDX-License-Identifier: BSD-2-Clause
// Where a loaded relocatable module's sections are.  FreeBSD/amd64 loads a
// module, an ET_REL object, section by section (link_elf_obj.c): each
// section gets its own address, and a function lives at its section's
// address plus its st_value.  The kernel tells the address of a name
// (kldsym(2)) but not of every name: it answers for the first definition
// of the name in the file, and for a local (static) one only while the
// tunable debug.link_elf_obj_leak_locals is set (the default); set to 0,
// only STB_GLOBAL names answer.  So a module is placed section by section
// from the names the kernel answers for, never function by function:
//
//   - a section's anchors are its functions whose name the file defines
//     once (a repeated name may answer for its other definition): the
//     global ones; the local ones only if no global one answers;
//   - each anchor that answers implies the section's base (its address
//     minus its st_value) and must have its st_size; every answer must
//     imply the same base, else the section is not placed;
//   - a section no anchor answers for is not placed.
//
// Portable code, no system call: the lookup is the caller's (kldsym in
// live_freebsd.cc, a fake in tests/cli/cli_unit_test.cc).
#ifndef KINSTCTL_LIVE_PLACE_H
#define KINSTCTL_LIVE_PLACE_H

#include <cstdint>
#include <map>
#include <vector>

#include "symbols/symbols.h"

namespace kinst {

class ElfImage;

struct Placement {
	// Section index -> what to add to a st_value of that section to get
	// the live address (for ET_REL, the section's live start).
	std::map<uint32_t, uint64_t> base;
	// Sections holding functions that could not be placed.
	std::vector<uint32_t> unplaced;
};

// Places every section of img that holds a function.
Placement place_sections(const ElfImage &img, const SymbolLookup &lookup);

} // namespace kinst

#endif
