# SPDX-License-Identifier: BSD-2-Clause
# The portable engine's sources: the one list that every build reads
# (common/CMakeLists.txt, kmod/linux/Makefile and Kbuild, Makefile.kmod).
# Plain "NAME = words" lines with "\" continuations only: GNU make, bmake
# and CMake's parser in common/CMakeLists.txt all read it.
KINST_COMMON_SRCS = \
	kinst_decode.c kinst_classify.c kinst_relocate.c kinst_emulate.c \
	kinst_probe.c kinst_ring.c kinst_engine.c kinst_prepare.c \
	kinst_control.c kinst_ctltext.c kinst_joptctl.c kinst_callgraph.c \
	kinst_stack.c kinst_prog.c kinst_progctl.c kinst_agg.c kinst_agghit.c \
	kinst_aggctl.c kinst_agggeom.c kinst_progname.c kinst_jopt.c \
	kinst_detour.c kinst_dev.c kinst_tstate.c kinst_tstatectl.c
