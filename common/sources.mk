# SPDX-License-Identifier: BSD-2-Clause
# The portable engine's sources: the one list that every build reads
# (common/CMakeLists.txt, kmod/linux/Makefile and Kbuild, Makefile.kmod).
# KINST_COMMON_SRCS is the ISA-neutral engine; KINST_ISA_SRCS the
# instruction set behind kinst_isa.h (x86-64's, the only one so far),
# paths relative to common/; every file name is unique across both lists
# (bsd.kmod.mk builds them in one object directory).
# Plain "NAME = words" lines with "\" continuations only: GNU make, bmake
# and CMake's parser in common/CMakeLists.txt all read it.
KINST_COMMON_SRCS = \
	kinst_probe.c kinst_ring.c kinst_engine.c kinst_prepare.c \
	kinst_control.c kinst_ctltext.c kinst_joptctl.c kinst_hitctl.c \
	kinst_stack.c kinst_prog.c kinst_progctl.c kinst_agg.c kinst_agghit.c \
	kinst_aggctl.c kinst_agggeom.c kinst_progname.c \
	kinst_dev.c kinst_tstate.c kinst_tstatectl.c kinst_verdict.c
KINST_ISA_SRCS = \
	x86/kinst_decode.c x86/kinst_classify.c x86/kinst_relocate.c \
	x86/kinst_emulate.c x86/kinst_detour.c x86/kinst_jopt.c \
	x86/kinst_fpwalk.c x86/kinst_callgraph.c x86/kinst_isa.c
# The part of x86-64's that does not need its register file: what
# kinstctl built for an arm64 host links to list x86-64 files.
KINST_X86_SRCS = \
	x86/kinst_decode.c x86/kinst_classify.c x86/kinst_relocate.c \
	x86/kinst_jopt.c x86/kinst_fpwalk.c x86/kinst_callgraph.c
# arm64 (issue 44): the A64 classifier and trampolines, also built for the
# host (kinstctl's list-offsets of arm64 files; tests/decoder: a64_test),
# and the whole instruction set behind kinst_isa.h, which the arm64 shim
# will build with KINST_COMMON_SRCS (common/CMakeLists.txt cross-compiles
# both for aarch64 to keep them so).
KINST_A64_SRCS = \
	arm64/kinst_a64.c arm64/kinst_a64_tramp.c
KINST_ISA_ARM64_SRCS = \
	arm64/kinst_a64.c arm64/kinst_a64_tramp.c arm64/kinst_a64_isa.c
