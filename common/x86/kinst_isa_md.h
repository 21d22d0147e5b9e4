/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * x86-64 behind kinst_isa.h, which includes this header (include that
 * one): the decoder, the classifier, trampolines, emulation, detours and
 * jump windows, the frame-pointer walk.
 */
#ifndef KINST_X86_ISA_MD_H
#define KINST_X86_ISA_MD_H

#include "x86/kinst_decode.h"
#include "x86/kinst_classify.h"
#include "x86/kinst_relocate.h"
#include "x86/kinst_emulate.h"
#include "x86/kinst_detour.h"
#include "x86/kinst_jopt.h"
#include "x86/kinst_fpwalk.h"

#endif /* !KINST_X86_ISA_MD_H */
