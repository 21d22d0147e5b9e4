// SPDX-License-Identifier: BSD-2-Clause
#include "symbols/disasm.h"

#include <cstring>

#include "base/error.h"
#include "base/text.h"

namespace kinst {

Disassembler::Disassembler(Syntax syntax)
{
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &handle_) != CS_ERR_OK)
		throw Error(Exit::internal, "capstone: cannot open an x86-64 handle");
	cs_option(handle_, CS_OPT_SYNTAX,
	    syntax == Syntax::att ? CS_OPT_SYNTAX_ATT : CS_OPT_SYNTAX_INTEL);
	// No details: a direct branch's target is the engine's (insn_text.cc);
	// Capstone filling them in was a tenth of list-offsets' time.
	cs_option(handle_, CS_OPT_DETAIL, CS_OPT_OFF);
	insn_.reset(cs_malloc(handle_));
	if (!insn_) {
		cs_close(&handle_);
		throw Error(Exit::internal, "capstone: out of memory");
	}
	// mov 0x10(%rip),%rax at two addresses far apart.
	static const uint8_t riprel[] = { 0x48, 0x8b, 0x05, 0x10, 0, 0, 0 };
	Text a = one(riprel, sizeof(riprel), 0x1000);
	Text b = one(riprel, sizeof(riprel), 0xffffffff81000000ull);
	riprel_same_ = a.len == sizeof(riprel) && b.len == a.len && a.mnemonic == b.mnemonic &&
	    a.operands == b.operands;
}

Disassembler::~Disassembler()
{
	insn_.reset();
	cs_close(&handle_);
	if (a64_insn_) {
		a64_insn_.reset();
		cs_close(&a64_);
	}
}

Disassembler::Text
Disassembler::a64(const uint8_t *code, uint64_t addr)
{
	if (!a64_insn_) {
		if (cs_open(CS_ARCH_ARM64, CS_MODE_LITTLE_ENDIAN, &a64_) != CS_ERR_OK)
			throw Error(Exit::internal, "capstone: cannot open an AArch64 handle");
		cs_option(a64_, CS_OPT_DETAIL, CS_OPT_OFF);
		a64_insn_.reset(cs_malloc(a64_));
		if (!a64_insn_) {
			cs_close(&a64_);
			throw Error(Exit::internal, "capstone: out of memory");
		}
	}
	return render(a64_, a64_insn_.get(), code, 4, addr);
}

// One instruction of code[0..avail) at addr, by handle h into in.
Disassembler::Text
Disassembler::render(csh h, cs_insn *in, const uint8_t *code, size_t avail, uint64_t addr)
{
	Text t;
	const uint8_t *p = code;
	size_t n = avail;
	uint64_t a = addr;
	if (cs_disasm_iter(h, &p, &n, &a, in)) {
		t.mnemonic = in->mnemonic;
		t.operands = in->op_str;
		t.len = in->size;
	}
	return t;
}

Disassembler::Text
Disassembler::one(const uint8_t *code, size_t avail, uint64_t addr)
{
	return render(handle_, insn_.get(), code, avail, addr);
}

// The slot these bytes are kept in, *hit when they are there (of the
// kind asked: branch() or same_anywhere()), else the one to replace; null
// when they cannot be kept.  Two-way: the set is picked by FNV-1a over the
// bytes and their length, and a miss replaces the set's least recently
// used slot.
Disassembler::Slot *
Disassembler::slot(const uint8_t *code, size_t len, bool branch, bool *hit)
{
	*hit = false;
	if (len == 0 || len > sizeof(Slot::bytes))
		return nullptr;
	if (!cache_)
		cache_.reset(new Slot[cache_slots]);
	uint32_t h = 2166136261u ^ (uint32_t)len;
	for (size_t i = 0; i < len; i++)
		h = (h ^ code[i]) * 16777619u;
	Slot *set = &cache_[(h % (cache_slots / 2)) * 2];
	for (int j = 0; j < 2; j++) {
		Slot *s = &set[j];
		if (s->len == len && s->branch == branch && memcmp(s->bytes, code, len) == 0) {
			set[0].first_recent = j == 0;
			*hit = true;
			return s;
		}
	}
	Slot *victim = set[0].first_recent ? &set[1] : &set[0];
	set[0].first_recent = victim == &set[0];
	return victim;
}

// Keeps t (its operands unless branch) in s for these bytes, unless the
// text is longer than a slot holds (s then keeps what it held).
void
Disassembler::keep(Slot *s, const uint8_t *code, size_t len, bool branch, const Text &t)
{
	size_t ol = branch ? 0 : t.operands.size();
	if (t.mnemonic.size() + ol > text_cap)
		return;
	s->len = (uint8_t)len;
	s->branch = branch;
	memcpy(s->bytes, code, len);
	s->mlen = (uint8_t)t.mnemonic.size();
	s->olen = (uint8_t)ol;
	memcpy(s->text, t.mnemonic.data(), s->mlen);
	memcpy(s->text + s->mlen, t.operands.data(), ol);
}

Disassembler::TextView
Disassembler::same_anywhere(const uint8_t *code, size_t len, uint64_t addr)
{
	bool hit;
	Slot *s = slot(code, len, false, &hit);
	if (hit)
		return { std::string_view(s->text, s->mlen),
		    std::string_view(s->text + s->mlen, s->olen), (unsigned)len };
	miss_ = one(code, len, addr);
	if (s != nullptr && miss_.len == len)	// else not one instruction of len bytes
		keep(s, code, len, false, miss_);
	return view(miss_);
}

namespace {

// Capstone's operand for a branch to target, when it writes it in hex.
bool
target_text(const std::string &operands, uint64_t target)
{
	char b[18];
	char *p = hex_digits(b + sizeof(b), target, 0);
	*--p = 'x';
	*--p = '0';
	return target >= 0x10 && operands.size() == (size_t)(b + sizeof(b) - p) &&
	    memcmp(operands.data(), p, operands.size()) == 0;
}

} // namespace

Disassembler::TextView
Disassembler::branch(const uint8_t *code, size_t len, uint64_t addr, uint64_t target)
{
	bool hit;
	Slot *s = slot(code, len, true, &hit);
	if (hit && target >= 0x10) {
		miss_.mnemonic.assign(s->text, s->mlen);
		miss_.operands.assign("0x");
		append_hex(miss_.operands, target, 0);
		miss_.len = (unsigned)len;
		return view(miss_);
	}
	miss_ = one(code, len, addr);
	if (s == nullptr || miss_.len != len || !target_text(miss_.operands, target))
		return view(miss_);
	// Bits 12 to 44 changed: a target cut to 16 or 32 bits shows.
	const uint64_t far = 0x123456789000ull;
	Text t = one(code, len, addr + far);
	if (t.len != len || t.mnemonic != miss_.mnemonic || !target_text(t.operands, target + far))
		return view(miss_);
	keep(s, code, len, true, miss_);
	return view(miss_);
}

} // namespace kinst
