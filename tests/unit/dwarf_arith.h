// SPDX-License-Identifier: BSD-2-Clause
// The DWARF stack machine's two-operand arithmetic and comparisons, as the
// tests' own DWARF evaluators model them (dwarf_loc_test, the harness's
// vars_test): comparisons signed (DWARF 5, 2.5.1.5); a shift count of 64
// or more gives 0 for shl and shr, and is taken modulo 64 for shra.
#ifndef KINST_TEST_DWARF_ARITH_H
#define KINST_TEST_DWARF_ARITH_H

#include <dwarf.h>

#include <cstdint>

// *r = a OP b; false when atom is not such an operation.
inline bool
dwarf_binop(uint8_t atom, uint64_t a, uint64_t b, uint64_t *r)
{
	switch (atom) {
	case DW_OP_plus: *r = a + b; break;
	case DW_OP_minus: *r = a - b; break;
	case DW_OP_mul: *r = a * b; break;
	case DW_OP_and: *r = a & b; break;
	case DW_OP_or: *r = a | b; break;
	case DW_OP_xor: *r = a ^ b; break;
	case DW_OP_shl: *r = b >= 64 ? 0 : a << b; break;
	case DW_OP_shr: *r = b >= 64 ? 0 : a >> b; break;
	case DW_OP_shra: *r = (uint64_t)((int64_t)a >> (b & 63)); break;
	case DW_OP_eq: *r = a == b; break;
	case DW_OP_ne: *r = a != b; break;
	case DW_OP_lt: *r = (int64_t)a < (int64_t)b; break;
	case DW_OP_le: *r = (int64_t)a <= (int64_t)b; break;
	case DW_OP_gt: *r = (int64_t)a > (int64_t)b; break;
	case DW_OP_ge: *r = (int64_t)a >= (int64_t)b; break;
	default: return false;
	}
	return true;
}

#endif
