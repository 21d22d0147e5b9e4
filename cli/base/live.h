// SPDX-License-Identifier: BSD-2-Clause
// The running system: everything kinstctl asks of the OS it runs on, one
// implementation per OS (live_linux.cc, live_freebsd.cc; live_other.cc
// where there is no kinst module).  Nothing outside those files tests
// which OS it is compiled for.
#ifndef KINSTCTL_LIVE_H
#define KINSTCTL_LIVE_H

#include <memory>
#include <string>

namespace kinst {

class SymbolTable;
class Types;
struct Spec;

// The running kernel's and loaded modules' functions.  Throws Error.
void load_live_symbols(SymbolTable &syms);

// An address spec (0x...) as the function that contains it in the running
// kernel, at its offset.  Throws Error(Exit::unknown_function) when none does.
Spec resolve_address(const Spec &sp);

// The running kernel's types for a function of module ("" or "kernel":
// the kernel's; "" with func not the kernel's: the loaded module that has
// func, where the OS can tell).  Throws Error naming what it looked for.
std::shared_ptr<Types> live_types(const std::string &module, const std::string &func);
// Their format, for messages: "BTF" (Linux), "CTF" (FreeBSD).
const char *live_types_format();

// The reason /dev/kinst does not exist: the kinst module is not loaded,
// and how to load it on this OS.
const char *live_device_missing_hint();

// Whether the per-CPU clock that kinstctl latency --clock local reads is
// stable here (times durations as well as the global clock): 1 yes, 0 no,
// -1 cannot tell (then nothing is said).  Linux: the value of
// sched_clock_stable() that the scheduler's debug file says (debugfs
// sched/debug; /proc/sched_debug before 5.13): 0 where the TSC is
// unstable, and local_clock() is the TSC kept within a tick of the global
// clock.  FreeBSD: 1 (the same clock as mono).
int live_local_clock_stable();

// Called by the trace reader thread: raise its own scheduling priority
// (only this thread's, never the process's or the traced workload's), as
// far as the OS allows without a realtime class.  Failure is ignored: the
// reader then runs at the process's priority.
void live_raise_reader_priority();

} // namespace kinst

#endif
