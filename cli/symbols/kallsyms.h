// SPDX-License-Identifier: BSD-2-Clause
// Linux /proc/kallsyms: parsing (portable, tested with fixtures) and the
// Module it describes.  kallsyms has no sizes: a function's size is the
// distance to the next symbol of its module until the kinst device says
// better (KINST_IOC_TEXT returns the kernel's own size and bytes).
#ifndef KINSTCTL_KALLSYMS_H
#define KINSTCTL_KALLSYMS_H

#include <cstdint>
#include <functional>
#include <istream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "symbols/symbols.h"

namespace kinst {

struct KallsymsEntry {
	uint64_t addr;
	char type;		// nm-style: t/T text, ...
	std::string name;
	std::string module;	// "" for the kernel itself
};

struct KallsymsParse {
	std::vector<KallsymsEntry> entries;
	size_t bad_lines = 0;
	bool all_zero = true;	// kptr_restrict: every address reads as 0
};

// Parses "ADDR TYPE NAME[\t[MODULE]]" lines.  Malformed lines are counted,
// not fatal.
KallsymsParse parse_kallsyms(std::istream &in);

// Reads a function's bytes from the running kernel: (module, function,
// expected address) -> bytes; the function's size is bytes.size().
using TextFetcher = std::function<std::vector<uint8_t>(const std::string &module,
    const std::string &function, uint64_t addr)>;

// Asks the running kernel for its verdict on (module, function, offset):
// a KINST_R_* reason, or -1 if it cannot say; *sessions (when not null):
// how many kinst sessions trace the instruction now.
using VerdictFetcher = std::function<int(const std::string &module,
    const std::string &function, uint32_t offset, uint32_t *sessions)>;

class KallsymsModule : public Module {
public:
	KallsymsModule(const std::string &name, std::vector<RawSymbol> raw, TextFetcher fetch,
	    VerdictFetcher verdict = nullptr);
	Bytes bytes(const Function &f) override;
	int kernel_verdict(const Function &f, uint32_t offset, uint32_t *sessions) override;

private:
	TextFetcher fetch_;
	VerdictFetcher verdict_;
	std::map<uint64_t, std::vector<uint8_t>> cache_;
};

// One Module per kallsyms module ("kernel" for the core kernel), text
// symbols only, sizes from the next symbol.
std::vector<std::unique_ptr<Module>> modules_from_kallsyms(const KallsymsParse &p,
    TextFetcher fetch, VerdictFetcher verdict = nullptr);

} // namespace kinst

#endif
