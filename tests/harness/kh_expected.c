/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The expected classification of every corpus function: instruction count,
 * out of line (plain, RIP-relative), emulated and refused by kind.  A change
 * in the decoder or classifier that moves an instruction from one class to
 * another must change this table in the same commit.
 *
 * asm_* (corpus_asm.S, explicit encodings) are always compared exactly.  The
 * C corpus lines hold for the compiler named in kh_expected_cc only; under
 * another compiler the harness checks its invariants and the minimums in
 * equivalence_test.c instead (see kh_check_classification).
 *
 * Regenerate (then review the diff):
 *   KH_PRINT_EXPECTED=1 build/tests/harness/equivalence_test whole_function |
 *       sed -n 's/^EXPECTED//p' | sort -u
 */
#include <stddef.h>

#include "kh_core.h"

const char kh_expected_cc[] = "12.2.0";
const struct kh_expect kh_expected[] = {
	{ "asm_atomic", "insns 22 ool 14 riprel 7 emul ret:1 refused -" },
	{ "asm_avx512_riprel", "insns 16 ool 6 riprel 9 emul ret:1 refused -" },
	{ "asm_avx_riprel", "insns 20 ool 8 riprel 11 emul ret:1 refused -" },
	{ "asm_call", "insns 19 ool 9 riprel 3 emul call:2,call-indirect:3,ret:2 refused -" },
	{ "asm_call_mem", "insns 35 ool 16 riprel 4 emul call-indirect:14,ret:1 refused -" },
	{ "asm_jcc32", "insns 56 ool 37 riprel 0 emul jcc:16,ret:1,pushf:1,popf:1 refused -" },
	{ "asm_jcc8", "insns 56 ool 37 riprel 0 emul jcc:16,ret:1,pushf:1,popf:1 refused -" },
	{ "asm_jmp", "insns 29 ool 20 riprel 0 emul jcc:4,jmp:4,ret:1 refused -" },
	{ "asm_jmp_ind", "insns 40 ool 24 riprel 5 emul jmp:3,jmp-indirect:7,ret:1 refused -" },
	{ "asm_loop", "insns 50 ool 36 riprel 0 emul loop:2,loope:2,loopne:2,jrcxz:7,ret:1 refused -" },
	{ "asm_misc", "insns 28 ool 25 riprel 1 emul ret:1 refused endbr:1" },
	{ "asm_prefixes", "insns 48 ool 23 riprel 4 emul jcc:3,jmp:1,call:3,call-indirect:5,jmp-indirect:3,loop:1,ret:2,pushf:2,popf:1 refused -" },
	{ "asm_pushf", "insns 36 ool 24 riprel 3 emul ret:1,pushf:5,popf:3 refused -" },
	{ "asm_refusals", "insns 29 ool 2 riprel 0 emul jmp:1,ret:1 refused int3:1,interrupt:2,iret:1,syscall-sysret:4,far-transfer:3,swapgs:1,xbegin:1,undefined-opcode:2,halt:3,ss-load:1,branch-operand-size:2,segment-override:2,vm-entry:1,sti-shadow:1" },
	{ "asm_ret", "insns 23 ool 12 riprel 0 emul call:5,ret:3,ret-imm:3 refused -" },
	{ "asm_ret_pad", "insns 33 ool 10 riprel 0 emul jcc:2,call:1,ret:4 refused int3:16" },
	{ "asm_riprel", "insns 74 ool 28 riprel 45 emul ret:1 refused -" },
	{ "asm_string", "insns 34 ool 25 riprel 8 emul ret:1 refused -" },
	{ "asm_sub0", "insns 2 ool 1 riprel 0 emul ret:1 refused -" },
	{ "avx2_isum", "insns 47 ool 43 riprel 1 emul jcc:2,ret:1 refused -" },
	{ "avx2_saxpy", "insns 35 ool 31 riprel 1 emul jcc:2,ret:1 refused -" },
	{ "o0_atomics", "insns 44 ool 34 riprel 6 emul jcc:2,call:1,ret:1 refused -" },
	{ "o0_bubble_sort", "insns 102 ool 90 riprel 0 emul jcc:6,jmp:4,call:1,ret:1 refused -" },
	{ "o0_collatz", "insns 38 ool 30 riprel 0 emul jcc:4,jmp:2,call:1,ret:1 refused -" },
	{ "o0_fib_rec", "insns 29 ool 22 riprel 0 emul jcc:2,jmp:1,call:3,ret:1 refused -" },
	{ "o0_fnptr_apply", "insns 51 ool 41 riprel 3 emul jcc:2,jmp:1,call:1,call-indirect:2,ret:1 refused -" },
	{ "o0_globals_rw", "insns 52 ool 35 riprel 13 emul jcc:2,call:1,ret:1 refused -" },
	{ "o0_loop_sum", "insns 31 ool 25 riprel 1 emul jcc:2,jmp:1,call:1,ret:1 refused -" },
	{ "o0_six_args", "insns 71 ool 62 riprel 1 emul jcc:3,jmp:1,call:3,ret:1 refused -" },
	{ "o0_sse_math", "insns 111 ool 89 riprel 9 emul jcc:6,jmp:5,call:1,ret:1 refused -" },
	{ "o0_string_ops", "insns 108 ool 99 riprel 0 emul jcc:4,jmp:3,call:1,ret:1 refused -" },
	{ "o0_switch_dense", "insns 103 ool 81 riprel 3 emul jcc:2,jmp:14,call:1,jmp-indirect:1,ret:1 refused -" },
	{ "o2_atomics", "insns 18 ool 10 riprel 6 emul ret:1 refused endbr:1" },
	{ "o2_bubble_sort", "insns 60 ool 42 riprel 5 emul jcc:9,jmp:1,ret:2 refused endbr:1" },
	{ "o2_collatz", "insns 22 ool 14 riprel 0 emul jcc:5,jmp:1,ret:1 refused endbr:1" },
	{ "o2_fib_rec", "insns 186 ool 161 riprel 0 emul jcc:20,jmp:1,call:1,ret:2 refused endbr:1" },
	{ "o2_fnptr_apply", "insns 43 ool 35 riprel 3 emul jcc:1,call-indirect:2,ret:1 refused endbr:1" },
	{ "o2_globals_rw", "insns 24 ool 13 riprel 8 emul jcc:1,ret:1 refused endbr:1" },
	{ "o2_loop_sum", "insns 25 ool 17 riprel 3 emul jcc:2,ret:2 refused endbr:1" },
	{ "o2_six_args", "insns 43 ool 37 riprel 1 emul jcc:1,call:2,ret:1 refused endbr:1" },
	{ "o2_sse_math", "insns 56 ool 40 riprel 11 emul jcc:2,jmp:1,ret:1 refused endbr:1" },
	{ "o2_string_ops", "insns 65 ool 50 riprel 7 emul jcc:5,jmp:1,ret:1 refused endbr:1" },
	{ "o2_switch_dense", "insns 76 ool 54 riprel 4 emul jcc:1,jmp:14,jmp-indirect:1,ret:1 refused endbr:1" },
	{ "o2np_atomics", "insns 17 ool 10 riprel 6 emul ret:1 refused -" },
	{ "o2np_bubble_sort", "insns 53 ool 40 riprel 1 emul jcc:9,jmp:1,ret:2 refused -" },
	{ "o2np_collatz", "insns 21 ool 14 riprel 0 emul jcc:5,jmp:1,ret:1 refused -" },
	{ "o2np_fib_rec", "insns 199 ool 175 riprel 0 emul jcc:20,jmp:1,call:1,ret:2 refused -" },
	{ "o2np_fnptr_apply", "insns 42 ool 36 riprel 2 emul jcc:1,call-indirect:2,ret:1 refused -" },
	{ "o2np_globals_rw", "insns 22 ool 13 riprel 7 emul jcc:1,ret:1 refused -" },
	{ "o2np_loop_sum", "insns 23 ool 17 riprel 2 emul jcc:2,ret:2 refused -" },
	{ "o2np_six_args", "insns 47 ool 42 riprel 1 emul jcc:1,call:2,ret:1 refused -" },
	{ "o2np_sse_math", "insns 55 ool 41 riprel 10 emul jcc:2,jmp:1,ret:1 refused -" },
	{ "o2np_string_ops", "insns 57 ool 49 riprel 1 emul jcc:5,jmp:1,ret:1 refused -" },
	{ "o2np_switch_dense", "insns 71 ool 51 riprel 3 emul jcc:1,jmp:14,jmp-indirect:1,ret:1 refused -" },
	{ NULL, NULL },
};
