// SPDX-License-Identifier: BSD-2-Clause
// Capstone, for the text of an instruction.  The engine's decoder decides
// instruction boundaries (what the module will accept); Capstone only
// renders the instruction and, as a cross-check, its own length.
#ifndef KINSTCTL_DISASM_H
#define KINSTCTL_DISASM_H

#include <capstone/capstone.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace kinst {

enum class Syntax { att, intel };

class Disassembler {
public:
	explicit Disassembler(Syntax syntax);
	~Disassembler();
	Disassembler(const Disassembler &) = delete;
	Disassembler &operator=(const Disassembler &) = delete;

	struct Text {
		std::string mnemonic, operands;
		unsigned len = 0;	// Capstone's length; 0 if it cannot decode
	};
	// Disassembles one instruction at code[0..avail) located at addr.
	Text one(const uint8_t *code, size_t avail, uint64_t addr);

private:
	csh handle_ = 0;
	struct InsnFree { void operator()(cs_insn *i) const { cs_free(i, 1); } };
	std::unique_ptr<cs_insn, InsnFree> insn_;
};

} // namespace kinst

#endif
