// SPDX-License-Identifier: BSD-2-Clause
// Where a direct call or jump outside its function goes, by symbol: what
// list-offsets, cover and trace print after such an instruction
// (text.cc implements it).
#ifndef KINSTCTL_BRANCH_H
#define KINSTCTL_BRANCH_H

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace kinst {

struct BranchTarget {
	bool set = false;		// a direct branch leaving the function
	bool resolved = false;		// a function contains the address
	uint64_t address = 0, offset = 0;
	std::string function, module;
	bool other_module = false;	// not the branch's own module
	// " <function+0xoff>" (<module:function...> in another module; the
	// bare name at offset 0), "" when not set or not resolved.
	std::string annotation() const;
	// {"address","function","offset","module"} (the last three null when
	// not resolved); only meaningful when set.
	nlohmann::json json() const;
};

} // namespace kinst

#endif
