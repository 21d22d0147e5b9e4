// SPDX-License-Identifier: BSD-2-Clause
// kinstctl trace.  The module resolves functions and checks offsets itself
// (it never trusts us); here we only name things for the user, print hits,
// and explain refusals.
#include "trace.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "btf_types.h"
#include "debuginfo.h"
#include "error.h"
#include "format.h"
#include "kallsyms.h"
#include "live_device.h"
#include "output.h"
#include "prog_compile.h"
#include "record.h"
#include "spec.h"

extern "C" {
#include "abi.h"
#include "kinst_classify.h"
}

namespace kinst {

// Shared with count/hist (trace.h).
volatile sig_atomic_t g_stop = 0;

namespace {

void
on_signal(int)
{
	g_stop = 1;
}

} // namespace

struct SignalGuard::Impl {
	struct sigaction old_int {}, old_term {}, old_pipe {};
	Impl()
	{
		struct sigaction sa {};
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sa.sa_flags = 0;	// no SA_RESTART: poll() returns EINTR
		sigaction(SIGINT, &sa, &old_int);
		sigaction(SIGTERM, &sa, &old_term);
		struct sigaction ign {};
		ign.sa_handler = SIG_IGN;
		sigaction(SIGPIPE, &ign, &old_pipe);
	}
	~Impl()
	{
		sigaction(SIGINT, &old_int, nullptr);
		sigaction(SIGTERM, &old_term, nullptr);
		sigaction(SIGPIPE, &old_pipe, nullptr);
	}
};

SignalGuard::SignalGuard() : impl_(new Impl) {}
SignalGuard::~SignalGuard() = default;

double
now_s()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void
copy_name(char *dst, size_t cap, const std::string &s, const char *what)
{
	if (s.size() + 1 > cap)
		throw Error(Exit::bad_spec, std::string(what) + " name too long: " + s);
	memset(dst, 0, cap);
	memcpy(dst, s.data(), s.size());
}

// An address spec: find the function that contains it in /proc/kallsyms.
Spec
resolve_address(const Spec &sp)
{
	std::ifstream in("/proc/kallsyms");
	if (!in)
		throw Error(Exit::live, "/proc/kallsyms: cannot read it to resolve " + sp.text);
	KallsymsParse p = parse_kallsyms(in);
	if (p.all_zero)
		throw Error(Exit::live, "/proc/kallsyms: addresses are hidden (kptr_restrict); run as root");
	const KallsymsEntry *best = nullptr;
	for (const auto &e : p.entries) {
		if (e.type != 't' && e.type != 'T')
			continue;
		if (e.addr <= sp.address && (best == nullptr || e.addr > best->addr))
			best = &e;
	}
	if (best == nullptr || sp.address - best->addr >= (1ull << 20))
		throw Error(Exit::unknown_function, sp.text + ": no kernel function contains this address");
	Spec r = sp;
	r.is_address = false;
	r.module = best->module.empty() ? "kernel" : best->module;
	r.function = best->name;
	r.has_offset = true;
	r.offset = (uint32_t)(sp.address - best->addr);
	return r;
}

std::string
spec_label(const Spec &sp)
{
	std::string s = sp.module.empty() ? sp.function : sp.module + ":" + sp.function;
	if (sp.has_offset)
		s += "+" + hex(sp.offset);
	return s;
}

// A device call failed with errno e.  ENODEV: the module is going away
// under us (rmmod -f); it has disarmed our probes and waits for us to close.
[[noreturn]] void
device_failed(const std::string &what, int e)
{
	if (e == ENODEV)
		throw Error(Exit::live, "/dev/kinst: the kinst module is being unloaded (rmmod -f): tracing stopped");
	throw Error(Exit::live, what + ": " + strerror(e));
}

// Reads a function's live text through the device (original bytes).
std::vector<uint8_t>
live_text(int fd, const Spec &sp, uint64_t *addr)
{
	struct kinst_text t;
	std::vector<uint8_t> buf(1 << 20);
	memset(&t, 0, sizeof(t));
	copy_name(t.module, sizeof(t.module), sp.module, "module");
	copy_name(t.function, sizeof(t.function), sp.function, "function");
	t.buf = (uint64_t)(uintptr_t)buf.data();
	t.cap = (uint32_t)buf.size();
	if (ioctl(fd, KINST_IOC_TEXT, &t) != 0)
		return {};
	buf.resize(t.size < t.cap ? t.size : t.cap);
	*addr = t.addr;
	return buf;
}

// Why an explicit offset was rejected, as precisely as we can say it.
[[noreturn]] void
arm_failed(int fd, const Spec &sp, const struct kinst_arm &a, int e)
{
	std::string what = spec_label(sp);
	switch (e) {
	case ENOENT:
		throw Error(Exit::unknown_function, what + ": no such function in the running kernel" +
		    (sp.module.empty() ? std::string() : " (module " + sp.module + ")"));
	case EINVAL:
		if (sp.has_offset) {
			uint64_t addr = 0;
			std::vector<uint8_t> text = live_text(fd, sp, &addr);
			if (!text.empty()) {
				uint32_t prev = 0, next = 0;
				int r = kinst_func_boundary(text.data(), text.size(), sp.offset, &prev, &next);
				if (sp.offset >= text.size())
					throw Error(Exit::bad_offset, what + ": offset beyond the end of the function (" +
					    std::to_string(text.size()) + " bytes)");
				if (r == 0)
					throw Error(Exit::bad_offset, what + ": not an instruction boundary; nearest: " +
					    sp.function + "+" + hex(prev) + " and " + sp.function + "+" + hex(next));
				if (r < 0)
					throw Error(Exit::bad_offset, what + ": the function cannot be decoded up to this offset");
			}
		}
		throw Error(Exit::bad_offset, what + ": rejected by the module: " + strerror(e));
	case EOPNOTSUPP: {
		// FreeBSD copies an ioctl's structure out only on success, so
		// refuse_reason may not have come back: ask again check-only
		// (ABI 1.2), which answers a refusal with success.
		int reason = (int)a.refuse_reason;
		if (reason == KINST_R_NONE && sp.has_offset) {
			struct kinst_arm c = a;
			c.flags = KINST_ARM_CHECK;
			c.offset = sp.offset;
			if (ioctl(fd, KINST_IOC_ARM, &c) == 0)
				reason = (int)c.refuse_reason;
		}
		if (reason == KINST_R_NONE)
			throw Error(Exit::refused, what + ": refused by the kernel");
		throw Error(Exit::refused, what + ": refused: " + kinst_reason_name(reason) +
		    " (see kinstctl list-offsets)");
	}
	case EEXIST:
		throw Error(Exit::refused, what + ": already traced (by this or another kinstctl)");
	case ENOSPC:
		throw Error(Exit::refused, what + ": too many probes armed (at most " +
		    std::to_string(KINST_MAX_PROBES) + ")");
	default:
		device_failed(what + ": arm", e);
	}
}

const char *const no_optimize_help =
    "every hit traps (int3).  Without it the module replaces, in the background, "
    "the int3 of each probe whose instruction window qualifies (kinstctl "
    "list-offsets says which) with a jump to a detour: no trap per hit, the same "
    "record; the summary says how many were";

uint32_t
noopt_flag(uint32_t abi_version, bool no_optimize)
{
	// A module before ABI 1.9 never optimizes, and refuses the flag.
	return no_optimize && (abi_version & 0xffff) >= 9 ? KINST_ARM_NOOPT : 0;
}

namespace {

// KINST_IOC_LIST: every probe of this file.
std::vector<struct kinst_probe_info>
probe_infos(int fd)
{
	std::vector<struct kinst_probe_info> v(256);
	struct kinst_list l;
	for (;;) {
		memset(&l, 0, sizeof(l));
		l.buf = (uint64_t)(uintptr_t)v.data();
		l.cap = (uint32_t)v.size();
		if (ioctl(fd, KINST_IOC_LIST, &l) != 0)
			device_failed("list probes", errno);
		if (l.count <= l.cap)
			break;
		v.resize(l.count);
	}
	v.resize(l.count);
	return v;
}

} // namespace

JumpCounts
jump_probes(int fd)
{
	std::vector<struct kinst_probe_info> v = probe_infos(fd);
	JumpCounts jc;
	jc.total = (uint32_t)v.size();
	for (uint32_t i = 0; i < jc.total; i++) {
		const auto &pi = v[i];
		std::string name = std::string(pi.module, strnlen(pi.module, sizeof(pi.module))) +
		    ":" + std::string(pi.function, strnlen(pi.function, sizeof(pi.function)));
		auto it = jc.per.find(name);
		if (it == jc.per.end()) {
			jc.names.push_back(name);
			it = jc.per.emplace(name, std::make_pair(0u, 0u)).first;
		}
		it->second.first++;
		if (pi.treatment & KINST_PI_JUMP) {
			jc.jump++;
			it->second.second++;
		}
	}
	return jc;
}

void
print_jump_summary(uint32_t abi_version, bool no_optimize, const JumpCounts &jc)
{
	if ((abi_version & 0xffff) < 9 || jc.total == 0)
		return;
	fprintf(stderr, "kinstctl: %u of %u probe%s jump-optimized%s\n", jc.jump, jc.total,
	    jc.total == 1 ? "" : "s",
	    no_optimize ? " (--no-optimize)" : jc.jump ? " (no trap per hit)" : "");
	if (jc.names.size() > 1)
		for (const auto &n : jc.names)
			fprintf(stderr, "  %s: %u of %u jump-optimized\n", n.c_str(),
			    jc.per.at(n).second, jc.per.at(n).first);
}

void
at_entry(int fd, std::vector<Spec> &specs, const std::string &what)
{
	for (auto &sp : specs) {
		uint64_t addr = 0;
		std::vector<uint8_t> text = live_text(fd, sp, &addr);
		if (text.empty())
			throw Error(Exit::unknown_function, spec_label(sp) +
			    ": cannot read the function's text to find its entry (" +
			    strerror(errno) + ")");
		// The ftrace site: the module refuses it as text-patched.
		auto patched = [&](uint32_t off) {
			struct kinst_arm c;
			memset(&c, 0, sizeof(c));
			copy_name(c.module, sizeof(c.module), sp.module, "module");
			copy_name(c.function, sizeof(c.function), sp.function, "function");
			c.offset = off;
			c.flags = KINST_ARM_CHECK;
			return ioctl(fd, KINST_IOC_ARM, &c) == 0 &&
			    c.refuse_reason == KINST_R_TEXT_PATCHED;
		};
		uint32_t e = entry_offset(text.data(), text.size(), patched);
		if (!sp.has_offset) {
			sp.has_offset = true;
			sp.offset = e;
		} else if (sp.offset > e) {
			throw Error(Exit::usage, what + ": " + spec_label(sp) + " is not " +
			    sp.function + "'s entry: the arguments are known only up to " +
			    sp.function + "+" + hex(e) + " (give " + sp.function + " or " +
			    sp.function + "+" + hex(e) + ")");
		}
	}
}

std::map<uint32_t, ProbeDesc>
list_probes(int fd, Disassembler &dis)
{
	std::vector<struct kinst_probe_info> v = probe_infos(fd);
	std::map<uint32_t, ProbeDesc> m;
	for (uint32_t i = 0; i < v.size(); i++) {
		const auto &pi = v[i];
		ProbeDesc d;
		d.module.assign(pi.module, strnlen(pi.module, sizeof(pi.module)));
		d.function.assign(pi.function, strnlen(pi.function, sizeof(pi.function)));
		d.offset = pi.offset;
		d.addr = pi.addr;
		d.name = d.module + ":" + d.function + "+" + hex(pi.offset);
		uint32_t n = pi.insn_len <= sizeof(pi.insn) ? pi.insn_len : sizeof(pi.insn);
		Disassembler::Text t = dis.one(pi.insn, n, pi.addr);
		d.insn = t.len ? t.mnemonic + (t.operands.empty() ? "" : " " + t.operands) : "(bad)";
		m[pi.probe_id] = d;
	}
	return m;
}

namespace {

std::string
comm_of(const struct kinst_hit_record &h)
{
	return std::string(h.comm, strnlen(h.comm, sizeof(h.comm)));
}

// --args: the prototype whose arguments each hit prints.
struct ArgsView {
	const Types *btf = nullptr;
	Types::Func func;
};

void
print_hit(Writer &out, const Style &st, const TraceOptions &o,
    const std::map<uint32_t, ProbeDesc> &probes, const HitRecord &r, StackSymbolizer &sym,
    const std::vector<CaptureDesc> &capd, const ArgsView &av)
{
	const struct kinst_hit_record &h = r.hit;
	auto it = probes.find(h.probe_id);
	ProbeDesc unknown;
	const ProbeDesc &d = it != probes.end() ? it->second : unknown;
	std::string name = it != probes.end() ? d.name : "probe#" + std::to_string(h.probe_id);
	if (o.json) {
		nlohmann::json j;
		j["schema"] = KINST_JSON_SCHEMA;
		j["type"] = "hit";
		j["time_ns"] = h.timestamp_ns;
		j["cpu"] = h.cpu;
		j["pid"] = h.pid;
		j["tid"] = h.tid;
		j["comm"] = comm_of(h);
		j["probe_id"] = h.probe_id;
		j["probe"] = name;
		j["module"] = d.module;
		j["function"] = d.function;
		j["offset"] = d.offset;
		j["address"] = hex(h.addr);
		j["insn"] = d.insn;
		j["regs"] = json_regs(h.regs);
		if (av.btf) {
			nlohmann::json a = nlohmann::json::object();
			for (const auto &v : read_args(*av.btf, av.func, h.regs.gpr)) {
				if (!v.known)
					a[v.name] = nullptr;
				else if (v.pointer)
					a[v.name] = hex(v.value);
				else if (v.sgn)
					a[v.name] = (int64_t)v.value;
				else
					a[v.name] = v.value;
			}
			j["args"] = a;
		}
		if (r.has_stack)
			json_stack(j, r, sym);
		json_captures(j, r, capd);
		out.line(json_line(j));
		return;
	}
	char head[160];
	snprintf(head, sizeof(head), "%llu.%06llu cpu%u %d/%d %-16s ",
	    (unsigned long long)(h.timestamp_ns / 1000000000ull),
	    (unsigned long long)(h.timestamp_ns % 1000000000ull / 1000),
	    h.cpu, h.pid, h.tid, comm_of(h).c_str());
	std::string line = head;
	line += st.paint("1", name) + "  " + d.insn;
	if (av.btf)
		line += "  " + args_text(av.func.name, read_args(*av.btf, av.func, h.regs.gpr));
	if (o.regs_all)
		line += "\n    " + text_regs(h.regs, true);
	else
		line += "  " + text_regs(h.regs, false);
	if (r.has_stack)
		line += text_stack(r, sym);
	line += text_captures(r, capd);
	out.line(line);
}

} // namespace

int
run_trace(const TraceOptions &o)
{
	if (o.specs.empty())
		throw Error(Exit::usage, "trace: give at least one probe spec");
	std::vector<Spec> specs;
	for (const auto &s : o.specs) {
		Spec sp = parse_spec(s);
		if (sp.is_source()) {	// FILE:LINE etc.: their MODULE:FUNC+OFFSET probes
			for (const auto &e : expand_source_spec(sp, DebugOptions{o.debug_files}))
				specs.push_back(e);
			continue;
		}
		if (sp.is_address)
			sp = resolve_address(sp);
		specs.push_back(sp);
	}
	// --if: compiled before the device is opened (a typo is a usage error).
	// --mem/--str: the captures, after it in the same program.
	// Types (BTF) only if --args or an expression needs them.
	TypeSource types(o.btf, specs[0].module);
	TypeEnv env;
	make_type_env(env, types, specs);
	ArgsView av;
	if (o.args) {
		if (env.func.empty())
			throw Error(Exit::usage, "trace --args: the specs must all be one "
			    "function (its entry is traced)");
		av.btf = &types.get("--args");
		av.func = av.btf->func(env.func);
	}
	std::vector<Capture> caps;
	std::vector<CaptureDesc> capd;
	for (const auto &m : o.mems)
		caps.push_back(parse_capture(m, false, &env));
	for (const auto &m : o.strs)
		caps.push_back(parse_capture(m, true, &env));
	for (const auto &c : caps)
		capd.push_back(CaptureDesc{c.expr, c.str, c.len});
	std::vector<struct kinst_pinsn> pred = compile_trace_prog(o.if_expr, caps, &env);
	std::string prog_what = caps.empty() ? "--if" : o.if_expr.empty() ?
	    "--mem/--str" : "--if/--mem/--str";

	Device dev = Device::open_for("trace");
	int fd = dev.fd();
	if (o.args || env.used_args)
		at_entry(fd, specs, o.args ? "--args" : "argument names");
	if (o.stack && (dev.abi_version() & 0xffff) < 4)
		throw Error(Exit::live, "trace --stack: the loaded kinst module (ABI 1." +
		    std::to_string(dev.abi_version() & 0xffff) + ") cannot record stacks; load one of ABI 1.4 or later");
	if (!caps.empty() && (dev.abi_version() & 0xffff) < 7)
		throw Error(Exit::live, "trace --mem/--str: the loaded kinst module (ABI 1." +
		    std::to_string(dev.abi_version() & 0xffff) + ") cannot capture memory; load one of ABI 1.7 or later");
	StackSymbolizer sym;
	if (o.stack)
		sym.load();	// before the first hit: not while the traced code runs
	Disassembler dis(o.syntax);
	Style st = Style::detect(stdout, o.no_color);

	// Filters in the kernel, so that filtered hits cost no ring space; the
	// module already leaves out our own process (our reads of the device
	// would otherwise trace themselves).  The check below stays, for a
	// module without FILTER.
	struct kinst_filter flt;
	memset(&flt, 0, sizeof(flt));
	flt.pid = o.pid >= 0 ? (int32_t)o.pid : -1;
	flt.cpu = o.cpu;
	flt.exclude_pid = (int32_t)getpid();
	if (o.pid > INT32_MAX)
		throw Error(Exit::usage, "trace: --pid " + std::to_string(o.pid) + " is not a process id");
	if (ioctl(fd, KINST_IOC_FILTER, &flt) != 0 && errno != ENOTTY) {
		if (errno == EINVAL && o.cpu >= 0)
			throw Error(Exit::usage, "trace: --cpu " + std::to_string(o.cpu) +
			    ": no such CPU in the running kernel");
		device_failed("filter", errno);
	}

	uint32_t prog_id = pred.empty() ? 0 : load_prog(fd, pred, prog_what);

	// From here on SIGINT and SIGTERM stop the trace cleanly (disarm, drain,
	// summary), also while arming.  Installed before the first probe is
	// armed and so before "tracing" is printed: a signal sent on seeing
	// that line must find the handler.  (Installed after it, a SIGINT in
	// between was lost when the shell had started kinstctl in the
	// background, SIGINT ignored: the trace never stopped.)
	SignalGuard sg;

	// Arm everything first; a refused explicit offset is fatal, refused
	// instructions of a whole function are reported and skipped.  A stop
	// requested while arming arms nothing more.
	uint64_t armed = 0;
	for (const auto &sp : specs) {
		if (g_stop)
			break;
		struct kinst_arm a;
		memset(&a, 0, sizeof(a));
		copy_name(a.module, sizeof(a.module), sp.module, "module");
		copy_name(a.function, sizeof(a.function), sp.function, "function");
		a.offset = sp.has_offset ? sp.offset : 0;
		a.flags = sp.has_offset ? 0 : KINST_ARM_ALL;
		if (prog_id != 0) {
			a.flags |= KINST_ARM_PROG;
			a.prog_id = prog_id;
		}
		if (o.stack)
			a.flags |= KINST_ARM_STACK;
		a.flags |= noopt_flag(dev.abi_version(), o.no_optimize);
		if (ioctl(fd, KINST_IOC_ARM, &a) != 0)
			arm_failed(fd, sp, a, errno);
		armed += a.narmed;
		if (!sp.has_offset)
			fprintf(stderr, "kinstctl: %s: %u instructions armed, %u refused%s\n",
			    spec_label(sp).c_str(), a.narmed, a.nrefused,
			    a.nrefused ? " (kinstctl list-offsets shows why)" : "");
	}
	if (armed == 0 && !g_stop)
		throw Error(Exit::refused, "nothing to trace: every instruction was refused");
	std::map<uint32_t, ProbeDesc> probes = list_probes(fd, dis);
	if (g_stop)
		fprintf(stderr, "kinstctl: stopped while arming (%llu probe%s armed)\n",
		    (unsigned long long)armed, armed == 1 ? "" : "s");
	else
		fprintf(stderr, "kinstctl: tracing %llu probe%s; Ctrl-C to stop\n",
		    (unsigned long long)armed, armed == 1 ? "" : "s");

	Writer out(stdout);
	bool flush_each = out.tty();
	std::vector<uint8_t> buf(1 << 20);
	double t0 = now_s();
	uint64_t printed = 0, filtered = 0;
	bool done = false;

	// Prints the whole records in buf[0, n); sets done at the -n limit.
	auto consume = [&](size_t n) {
		size_t pos = 0;
		while (pos < n && !done) {
			struct kinst_rec_hdr hdr;
			if (n - pos < sizeof(hdr))
				throw Error(Exit::live, "read: truncated record header from the module");
			memcpy(&hdr, buf.data() + pos, sizeof(hdr));
			if (hdr.size < sizeof(hdr) || hdr.size % 8 != 0 || hdr.size > n - pos)
				throw Error(Exit::live, "read: malformed record from the module (size " +
				    std::to_string(hdr.size) + ")");
			if (hdr.type == KINST_REC_HIT && hdr.size >= sizeof(struct kinst_hit_record)) {
				HitRecord r = parse_hit_record(buf.data() + pos, hdr.size);
				const struct kinst_hit_record &h = r.hit;
				if ((o.pid >= 0 && h.pid != o.pid) || (o.cpu >= 0 && (int)h.cpu != o.cpu)) {
					filtered++;
				} else {
					print_hit(out, st, o, probes, r, sym, capd, av);
					printed++;
					if (o.count && printed >= o.count)
						done = true;
				}
			}
			pos += hdr.size;
		}
		if (flush_each || o.json)
			out.flush();
	};

	while (!done && !g_stop) {
		int timeout = 200;
		if (o.duration > 0) {
			double left = o.duration - (now_s() - t0);
			if (left <= 0)
				break;
			if (left * 1000 < timeout)
				timeout = (int)(left * 1000) + 1;
		}
		struct pollfd pfd = { fd, POLLIN, 0 };
		int r = poll(&pfd, 1, timeout);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			throw Error(Exit::live, std::string("poll: ") + strerror(errno));
		}
		if (r == 0)
			continue;
		// POLLERR | POLLHUP: the module is going (the read says so).
		ssize_t n = read(fd, buf.data(), buf.size());
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			device_failed("read", errno);
		}
		consume((size_t)n);
	}

	// How many probes are jump-optimized, while they are still armed.
	JumpCounts jc = jump_probes(fd);

	// Stopped by a signal or --duration: disarm (no new hits), then print
	// what the module had already delivered, so that printed + filtered ==
	// delivered.  At the -n limit the rest is deliberately left unread.
	if (!done) {
		struct kinst_disarm d;
		memset(&d, 0, sizeof(d));
		d.probe_id = KINST_ALL_PROBES;
		if (ioctl(fd, KINST_IOC_DISARM, &d) != 0)
			device_failed("disarm", errno);
		int fl = fcntl(fd, F_GETFL);
		if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0)
			throw Error(Exit::live, std::string("fcntl: ") + strerror(errno));
		while (!done) {
			ssize_t n = read(fd, buf.data(), buf.size());
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && errno == EAGAIN)
				break;
			if (n < 0)
				device_failed("read", errno);
			if (n == 0)
				break;
			consume((size_t)n);
		}
	}
	out.flush();

	// The summary: what the module counted, per CPU.
	std::vector<struct kinst_cpu_stats> cs(KINST_STATS_MAXCPU);
	struct kinst_stats s;
	memset(&s, 0, sizeof(s));
	s.buf = (uint64_t)(uintptr_t)cs.data();
	s.cap = (uint32_t)cs.size();
	if (ioctl(fd, KINST_IOC_STATS, &s) != 0)
		device_failed("stats", errno);
	// With --if, hits == delivered + dropped + not matching, per CPU.
	std::vector<struct kinst_prog_cpu_stats> ps;
	if (prog_id != 0)
		ps = prog_stats(fd);
	uint64_t th = 0, td = 0, tdr = 0, tnm = 0, tft = 0;
	std::string percpu;
	for (uint32_t c = 0; c < s.ncpus && c < s.cap; c++) {
		uint64_t nm = c < ps.size() ? ps[c].filtered : 0;
		th += cs[c].hits;
		td += cs[c].delivered;
		tdr += cs[c].dropped;
		tnm += nm;
		tft += c < ps.size() ? ps[c].faults : 0;
		if (cs[c].hits)
			percpu += "  cpu" + std::to_string(c) + ": hits " + std::to_string(cs[c].hits) +
			    ", delivered " + std::to_string(cs[c].delivered) + ", dropped " +
			    std::to_string(cs[c].dropped) +
			    (prog_id ? ", not matching " + std::to_string(nm) : "") + "\n";
	}
	fprintf(stderr, "kinstctl: %llu hits, %llu delivered, %llu dropped, %llu printed",
	    (unsigned long long)th, (unsigned long long)td, (unsigned long long)tdr,
	    (unsigned long long)printed);
	if (filtered)
		fprintf(stderr, ", %llu filtered out", (unsigned long long)filtered);
	if (prog_id != 0)
		fprintf(stderr, ", %llu not matching --if (%llu of them faulted)",
		    (unsigned long long)tnm, (unsigned long long)tft);
	fprintf(stderr, "\n%s", percpu.c_str());
	print_jump_summary(dev.abi_version(), o.no_optimize, jc);
	if (tdr)
		fprintf(stderr, "kinstctl: WARNING: %llu hits were dropped (the reader fell behind or hits nested)\n",
		    (unsigned long long)tdr);
	// Closing the device disarms every probe (Device's destructor).
	return 0;
}

} // namespace kinst
