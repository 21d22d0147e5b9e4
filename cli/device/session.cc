// SPDX-License-Identifier: BSD-2-Clause
// The device session (session.h).  Every ioctl kinstctl makes is here.
// The module resolves functions and checks offsets itself (it never trusts
// us); here we only fill its structures, name things for the user and
// explain refusals.
#include "device/session.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "debuginfo/btf_types.h"
#include "base/error.h"
#include "base/regfile.h"
#include "base/text.h"
#include "base/live.h"
#include "base/record.h"
#include "symbols/insn_text.h"
#include "symbols/stack_symbols.h"
#include "symbols/sources.h"
#include "base/spec.h"

#include "base/abi.h"

extern "C" {
#include "x86/kinst_classify.h"
#include "kinst_prog.h"
#include "kinst_ring.h"
#include "kinst_agg.h"
}

namespace kinst {

// ---- features ----

namespace {

const struct {
	Feature f;
	unsigned minor;
	const char *can;	// what a module without it cannot do
} feature_table[] = {
	{ Feature::filter, 1, "filter hits" },
	{ Feature::arm_check, 2, "check an instruction without arming it" },
	{ Feature::stack, 4, "record stacks" },
	{ Feature::prog, 5, "run probe programs" },
	{ Feature::agg, 6, "aggregate" },
	{ Feature::mem_capture, 7, "capture memory" },
	{ Feature::agg_stack, 8, "count by stack" },
	{ Feature::noopt, 9, "jump-optimize probes" },
	{ Feature::thread_state, 10, "keep per-thread state or capture values" },
	{ Feature::ring_size, 11, "size a session's rings (--buffer-size)" },
	{ Feature::mmap, 12, "map its rings" },
	{ Feature::sharing, 13, "share probes between sessions" },
	{ Feature::agg_record, 14, "record the samples it aggregates" },
	{ Feature::ts_clock, 15, "time with the per-CPU clock" },
};

const auto &
feature_row(Feature f)
{
	for (const auto &r : feature_table)
		if (r.f == f)
			return r;
	throw Error(Exit::internal, "unknown feature " + std::to_string((int)f));
}

// The feature a program's instruction needs: the minor that brought its
// opcode (kinst_abi.h's enum kinst_op).
Feature
op_feature(uint8_t op)
{
	if (op >= KINST_OP_TS_PUSH)	// TS_PUSH, TS_GET, VAL
		return Feature::thread_state;
	if (op >= KINST_OP_MEM)		// MEM, STR, LOADC
		return Feature::mem_capture;
	if (op >= KINST_OP_KEY)		// KEY, VALUE
		return Feature::agg;
	return Feature::prog;
}

} // namespace

unsigned
feature_minor(Feature f)
{
	return feature_row(f).minor;
}

bool
abi_has(uint32_t abi_version, Feature f)
{
	return (abi_version & 0xffff) >= feature_minor(f);
}

std::string
feature_missing(uint32_t abi_version, Feature f, const std::string &what)
{
	const auto &r = feature_row(f);
	std::string major = std::to_string(KINST_ABI_VERSION_MAJOR);
	return what + ": the loaded kinst module (ABI " + major + "." +
	    std::to_string(abi_version & 0xffff) + ") cannot " + r.can + "; load one of ABI " +
	    major + "." + std::to_string(r.minor) + " or later";
}

void
Session::require(Feature f, const std::string &what) const
{
	if (!has(f))
		throw Error(Exit::live, feature_missing(abi_, f, what));
}

// ---- signals ----

// Shared with count/hist/cover (session.h).
volatile sig_atomic_t g_stop = 0;

namespace {

volatile sig_atomic_t g_defer = 0;

void
on_signal(int sig)
{
	g_stop = 1;
	if (!g_defer) {
		// Not (yet) a command that stops cleanly: the default action.
		signal(sig, SIG_DFL);
		raise(sig);
	}
}

void
catch_stop_signals(int flags, struct sigaction *old_int, struct sigaction *old_term)
{
	struct sigaction sa {};
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = flags;
	sigaction(SIGINT, &sa, old_int);
	sigaction(SIGTERM, &sa, old_term);
}

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

// One element per CPU into v from a request of the buf/cap/ncpus shape
// (STATS, AGG_STATS, PROG_STATS); false, errno set, when the module says no.
template <typename Req, typename Elem>
bool
per_cpu(int fd, unsigned long cmd, std::vector<Elem> &v)
{
	v.assign(KINST_STATS_MAXCPU, Elem());
	Req r;
	memset(&r, 0, sizeof(r));
	r.buf = (uint64_t)(uintptr_t)v.data();
	r.cap = (uint32_t)v.size();
	if (ioctl(fd, cmd, &r) != 0)
		return false;
	v.resize(std::min(r.ncpus, r.cap));
	return true;
}

// The names of a request (kinst_arm, kinst_text).
template <typename T>
void
set_names(T &req, const std::string &module, const std::string &function)
{
	copy_name(req.module, sizeof(req.module), module, "module");
	copy_name(req.function, sizeof(req.function), function, "function");
}

} // namespace

void
own_signals(bool stops_cleanly)
{
	// Before the handler: a signal must never find it in and this unset.
	g_defer = stops_cleanly;
	// Planning reads files: let its system calls restart.
	catch_stop_signals(SA_RESTART, nullptr, nullptr);
}

void
stop_before_arming(const char *cmd)
{
	if (!g_stop)
		return;
	fprintf(stderr, "kinstctl: %s: stopped before arming: nothing was armed\n", cmd);
	throw Error(Exit::ok, "stopped");
}

struct SignalGuard::Impl {
	struct sigaction old_int {}, old_term {}, old_pipe {};
	Impl()
	{
		// No SA_RESTART: poll() returns EINTR.
		catch_stop_signals(0, &old_int, &old_term);
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

SignalGuard::SignalGuard() : impl_(std::make_unique<Impl>()) {}
SignalGuard::~SignalGuard() = default;

// A device call failed with errno e.  ENODEV: the module is going away
// under us (rmmod -f); it has disarmed our probes and waits for us to close.
[[noreturn]] void
device_failed(const std::string &what, int e)
{
	if (e == ENODEV)
		throw Error(Exit::live, "/dev/kinst: the kinst module is being unloaded (rmmod -f): tracing stopped");
	throw Error(Exit::live, what + ": " + strerror(e));
}

// ---- open, version ----

Session
Session::open(const std::string &purpose)
{
	int fd = ::open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		std::string hint;
		if (e == ENOENT)
			hint = live_device_missing_hint();
		else if (e == EACCES)
			hint = "permission denied (the device is root-only: run as root)";
		else if (e == EPERM)
#ifdef __FreeBSD__
			hint = "not permitted (run as root, outside a jail)";
#else
			hint = "not permitted (the module requires CAP_PERFMON or CAP_SYS_ADMIN: kinst(4))";
#endif
		else
			hint = strerror(e);
		throw Error(Exit::live, std::string(path) + ": cannot " + purpose + ": " + hint +
		    "; or give the kernel and modules as files with --kernel/--module");
	}
	Session s(fd, 0);	// closes fd if a check below throws
	struct kinst_version v;
	memset(&v, 0, sizeof(v));
	if (ioctl(fd, KINST_IOC_VERSION, &v) != 0)
		throw Error(Exit::live, std::string(path) + ": version query: " + strerror(errno));
	if ((v.abi_version >> 16) != KINST_ABI_VERSION_MAJOR)
		throw Error(Exit::live, std::string(path) + ": module ABI " +
		    std::to_string(v.abi_version >> 16) + "." + std::to_string(v.abi_version & 0xffff) +
		    ", kinstctl speaks " + std::to_string(KINST_ABI_VERSION_MAJOR) + "." +
		    std::to_string(KINST_ABI_VERSION_MINOR) + ": rebuild one of them");
	s.abi_ = v.abi_version;
	return s;
}

Session::Session(Session &&o) noexcept
    : maps_(std::move(o.maps_)), maps_tried_(o.maps_tried_), fd_(o.fd_),
      abi_(o.abi_), no_optimize_(o.no_optimize_)
{
	o.maps_.clear();
	o.fd_ = -1;
}

Session::~Session()
{
	unmap_rings();
	if (fd_ >= 0)
		close(fd_);
}

// ---- mapped rings (ABI 1.12) ----

void
Session::unmap_rings()
{
	for (auto &m : maps_) {
		if (m.ctl)
			munmap(m.ctl, KINST_MAP_PAGE);
		if (m.data)
			munmap(const_cast<uint8_t *>(m.data), m.size);
	}
	maps_.clear();
}

// Each CPU's ctl page (read-write) and records (read-only).  False, with
// nothing mapped, when the module cannot (before 1.12, no rings yet) or
// KINSTCTL_NO_MMAP is set; a mapping the module refuses is said once.
bool
Session::map_rings()
{
	if (maps_tried_)
		return !maps_.empty();
	maps_tried_ = true;
	const char *no = getenv("KINSTCTL_NO_MMAP");
	if ((no && *no && strcmp(no, "0") != 0) || !has(Feature::mmap))
		return false;
	struct kinst_ring_size rs;
	memset(&rs, 0, sizeof(rs));
	if (ioctl(fd_, KINST_IOC_RING, &rs) != 0 || !rs.allocated)
		return false;
	for (uint32_t c = 0; c < rs.ncpus; c++) {
		MappedRing m = { nullptr, nullptr, rs.size };
		void *v = mmap(nullptr, KINST_MAP_PAGE, PROT_READ | PROT_WRITE,
		    MAP_SHARED, fd_, (off_t)KINST_MAP_CTL(c));
		if (v != MAP_FAILED) {
			m.ctl = static_cast<struct kinst_ring_ctl *>(v);
			v = mmap(nullptr, rs.size, PROT_READ, MAP_SHARED, fd_,
			    (off_t)KINST_MAP_DATA(c));
			if (v != MAP_FAILED)
				m.data = static_cast<const uint8_t *>(v);
		}
		if (!m.data) {
			int e = errno;
			if (m.ctl)
				munmap(m.ctl, KINST_MAP_PAGE);
			unmap_rings();
			fprintf(stderr, "kinstctl: WARNING: cannot map the rings (%s); "
			    "reading them instead\n", strerror(e));
			return false;
		}
		maps_.push_back(m);
	}
	// Woken when a ring holds a quarter of itself (at most 512K), or by
	// the reader's own timeout: not at every record.
	struct kinst_wake w;
	memset(&w, 0, sizeof(w));
	w.bytes = std::min<uint32_t>(rs.size / 4, 512u << 10);
	if (ioctl(fd_, KINST_IOC_WAKE, &w) != 0)
		device_failed("wake-up watermark", errno);
	return true;
}

// The records of a chunk in time order.  Each CPU's ring is in order, but
// a chunk (a read(2), a pass over the mapped rings) holds one ring's
// records after another's: a thread that moved between CPUs, or probes
// hit on several, would print out of order.  Records of another type keep
// their place after the one before them; a malformed chunk is left as it
// is, for consume() to report.
void
order_by_time(uint8_t *buf, size_t n)
{
	struct R { uint64_t t; size_t off; uint32_t size; };
	std::vector<R> v;
	uint64_t last = 0;
	bool sorted = true;
	for (size_t pos = 0; pos < n; ) {
		struct kinst_rec_hdr h;
		if (n - pos < sizeof(h))
			return;
		memcpy(&h, buf + pos, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 != 0 || h.size > n - pos)
			return;
		uint64_t t = last;
		if (h.type == KINST_REC_HIT && h.size >= sizeof(struct kinst_hit_record))
			memcpy(&t, buf + pos + offsetof(struct kinst_hit_record, timestamp_ns),
			    sizeof(t));
		if (t < last)
			sorted = false;
		last = t;
		v.push_back({t, pos, h.size});
		pos += h.size;
	}
	if (sorted)
		return;
	std::stable_sort(v.begin(), v.end(), [](const R &a, const R &b) { return a.t < b.t; });
	std::vector<uint8_t> out(n);
	size_t o = 0;
	for (const R &r : v) {
		memcpy(out.data() + o, buf + r.off, r.size);
		o += r.size;
	}
	memcpy(buf, out.data(), n);
}

// Whole records from every mapped ring into buf, round robin, until they
// are empty or buf is full; the room they took is freed in the rings.
size_t
Session::take_mapped(uint8_t *buf, size_t cap)
{
	size_t got = 0;
	bool progress = true;
	while (progress && cap - got >= sizeof(struct kinst_hit_record)) {
		progress = false;
		for (size_t c = 0; c < maps_.size(); c++) {
			bool bad = false;
			size_t n = kinst_ring_map_get(maps_[c].ctl, maps_[c].data,
			    maps_[c].size, buf + got, cap - got, &bad);
			if (bad)
				throw Error(Exit::live, "the mapped ring of CPU " +
				    std::to_string(c) + " held a malformed record");
			got += n;
			progress |= n != 0;
		}
	}
	return got;
}

// ---- filter, text, check ----

// kinstctl's default ring size per CPU: 32 MiB in all, shared by the
// CPUs, at most 8 MiB each, never below the module's own default.  With
// the module's 512 KiB, a reader held off the CPU for a few scheduler
// ticks lost records under a tight loop (issue 24's measurements:
// docs/kinstctl.8).
static uint32_t
default_ring_size(const struct kinst_ring_size &rs)
{
	uint64_t per = ((uint64_t)32 << 20) / std::max<uint32_t>(rs.ncpus, 1);
	per = std::min<uint64_t>(per, 8u << 20);
	uint64_t p2 = 1;
	while (p2 * 2 <= per)
		p2 *= 2;
	p2 = std::max<uint64_t>(p2, rs.size);
	return (uint32_t)std::min<uint64_t>(std::max<uint64_t>(p2, rs.min), rs.max);
}

uint32_t
Session::ring_size(uint64_t bytes, const std::string &what, uint32_t *ncpus)
{
	struct kinst_ring_size rs;
	memset(&rs, 0, sizeof(rs));
	if (!has(Feature::ring_size)) {
		if (bytes != 0)
			require(Feature::ring_size, what + " --buffer-size");
		return 0;
	}
	if (ioctl(fd_, KINST_IOC_RING, &rs) != 0)
		device_failed("ring size", errno);
	if (ncpus)
		*ncpus = rs.ncpus;
	uint64_t want = bytes ? bytes : default_ring_size(rs);
	if (want < rs.min || want > rs.max || (want & (want - 1)) != 0)
		throw Error(Exit::usage, what + ": --buffer-size " + std::to_string(bytes) +
		    ": must be a power of two from " + std::to_string(rs.min / 1024) + "K to " +
		    std::to_string(rs.max >> 20) + "M (bytes per CPU)");
	rs.size = (uint32_t)want;
	if (ioctl(fd_, KINST_IOC_RING, &rs) != 0)
		device_failed("ring size", errno);
	return rs.size;
}

void
Session::filter(const std::string &cmd, int32_t pid, int cpu)
{
	// The module already leaves out our own process by default (our reads
	// of the device would otherwise trace themselves); said again here.
	struct kinst_filter flt;
	memset(&flt, 0, sizeof(flt));
	flt.pid = pid;
	flt.cpu = cpu;
	flt.exclude_pid = (int32_t)getpid();
	if (ioctl(fd_, KINST_IOC_FILTER, &flt) == 0)
		return;
	if (errno == ENOTTY && !has(Feature::filter))
		return;
	if (errno == EINVAL && cpu >= 0)
		throw Error(Exit::usage, cmd + ": --cpu " + std::to_string(cpu) +
		    ": no such CPU in the running kernel");
	device_failed("filter", errno);
}

bool
Session::text(const std::string &module, const std::string &function,
    std::vector<uint8_t> &buf, uint64_t *addr, uint32_t *size)
{
	struct kinst_text t;
	memset(&t, 0, sizeof(t));
	set_names(t, module, function);
	t.buf = (uint64_t)(uintptr_t)buf.data();
	t.cap = (uint32_t)buf.size();
	if (ioctl(fd_, KINST_IOC_TEXT, &t) != 0)
		return false;
	*addr = t.addr;
	*size = t.size;
	return true;
}

// A function's live text (original bytes), empty when it cannot be read.
std::vector<uint8_t>
Session::live_text(const Spec &sp)
{
	std::vector<uint8_t> buf(1 << 20);
	uint64_t addr = 0;
	uint32_t size = 0;
	if (!text(sp.module, sp.function, buf, &addr, &size))
		return {};
	buf.resize(size < buf.size() ? size : buf.size());
	return buf;
}

int
Session::check(const std::string &module, const std::string &function, uint32_t offset,
    uint32_t *sessions)
{
	// A module before 1.2 would refuse the flag (EINVAL): not asked.
	if (!has(Feature::arm_check))
		return -1;
	struct kinst_arm c;
	memset(&c, 0, sizeof(c));
	set_names(c, module, function);
	c.offset = offset;
	c.flags = KINST_ARM_CHECK;
	if (ioctl(fd_, KINST_IOC_ARM, &c) != 0)
		return -1;
	// Check-only, 1.13: narmed is the sessions tracing the instruction.
	if (sessions)
		*sessions = has(Feature::sharing) ? c.narmed : 0;
	return (int)c.refuse_reason;
}

void
Session::at_entry(std::vector<Spec> &specs, const std::string &what)
{
	for (auto &sp : specs) {
		std::vector<uint8_t> text = live_text(sp);
		if (text.empty())
			throw Error(Exit::unknown_function, spec_label(sp) +
			    ": cannot read the function's text to find its entry (" +
			    strerror(errno) + ")");
		// The ftrace site: the module refuses it as text-patched.
		auto patched = [&](uint32_t off) {
			return check(sp.module, sp.function, off) == KINST_R_TEXT_PATCHED;
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

// ---- arm, disarm ----

Armed
Session::arm(const Spec &sp, uint32_t flags, uint32_t prog)
{
	return arm(sp, sp.module, sp.function, flags, prog);
}

Armed
Session::arm(const Spec &sp, const std::string &module, const std::string &function,
    uint32_t flags, uint32_t prog)
{
	struct kinst_arm a;
	memset(&a, 0, sizeof(a));
	set_names(a, module, function);
	a.offset = sp.has_offset ? sp.offset : 0;
	a.flags = flags | (sp.has_offset ? 0 : KINST_ARM_ALL);
	if (prog != 0) {
		a.flags |= KINST_ARM_PROG;
		a.prog_id = prog;
	}
	if (no_optimize_ && has(Feature::noopt))
		a.flags |= KINST_ARM_NOOPT;
	if (ioctl(fd_, KINST_IOC_ARM, &a) != 0)
		arm_failed(sp, a, errno);
	return Armed{a.narmed, a.nrefused};
}

ArmTotals
Session::arm_specs(const std::vector<Spec> &specs, uint32_t flags, uint32_t prog,
    bool stop_on_signal)
{
	ArmTotals t;
	for (const auto &sp : specs) {
		if (stop_on_signal && g_stop)
			break;
		Armed a = arm(sp, flags, prog);
		t.armed += a.narmed;
		if (!sp.has_offset) {
			t.whole = true;
			fprintf(stderr, "kinstctl: %s: %u instructions armed, %u refused%s\n",
			    spec_label(sp).c_str(), a.narmed, a.nrefused,
			    a.nrefused ? " (kinstctl list-offsets shows why)" : "");
		}
	}
	return t;
}

// Why an explicit offset was rejected, as precisely as we can say it.
[[noreturn]] void
Session::arm_failed(const Spec &sp, const struct kinst_arm &a, int e)
{
	std::string what = spec_label(sp);
	switch (e) {
	case ENOENT:
		throw Error(Exit::unknown_function, what + ": no such function in the running kernel" +
		    (sp.module.empty() ? std::string() : " (module " + sp.module + ")"));
	case EINVAL:
		if (sp.has_offset) {
			std::vector<uint8_t> text = live_text(sp);
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
		if (reason == KINST_R_NONE && sp.has_offset && has(Feature::arm_check)) {
			struct kinst_arm c = a;
			c.flags = KINST_ARM_CHECK;
			c.prog_id = 0;	// without KINST_ARM_PROG: EINVAL
			c.offset = sp.offset;
			if (ioctl(fd_, KINST_IOC_ARM, &c) == 0)
				reason = (int)c.refuse_reason;
		}
		if (reason == KINST_R_NONE)
			throw Error(Exit::refused, what + ": refused by the kernel");
		throw Error(Exit::refused, what + ": refused: " + kinst_reason_name(reason) +
		    " (see kinstctl list-offsets)");
	}
	case EEXIST:
		throw Error(Exit::refused, what + ": already traced by this command (the same instruction twice)");
	case ENOSPC:
		throw Error(Exit::refused, what + ": too many probes armed (at most " +
		    std::to_string(KINST_MAX_PROBES) + " instructions, " +
		    std::to_string(4 * KINST_MAX_PROBES) + " probes of all sessions together)");
	default:
		device_failed(what + ": arm", e);
	}
}

void
Session::disarm_all()
{
	struct kinst_disarm d;
	memset(&d, 0, sizeof(d));
	d.probe_id = KINST_ALL_PROBES;
	if (ioctl(fd_, KINST_IOC_DISARM, &d) != 0)
		device_failed("disarm", errno);
}

// ---- programs ----

uint32_t
Session::load_prog(const std::vector<struct kinst_pinsn> &code, const std::string &what)
{
	// Said before asking: an older module would answer ENOTTY (before
	// 1.5) or refuse the instruction as an unknown opcode.
	require(Feature::prog, what);
	for (const auto &in : code)
		require(op_feature(in.op), what);
	struct kinst_prog_load pl;
	memset(&pl, 0, sizeof(pl));
	pl.insns = (uint64_t)(uintptr_t)code.data();
	pl.ninsns = (uint32_t)code.size();
	if (ioctl(fd_, KINST_IOC_PROG_LOAD, &pl) != 0) {
		int e = errno;
		if (e == EINVAL && pl.verdict == KINST_PV_BAD_OP)
			throw Error(Exit::live, what + ": the loaded kinst module does not "
			    "know an instruction of the program: load this version's module");
		if (e == EINVAL && pl.verdict != KINST_PV_OK)
			throw Error(Exit::internal, what + ": the module refused the "
			    "compiled program: " + kinst_prog_verdict_name(pl.verdict) +
			    " at instruction " + std::to_string(pl.error_pc));
		throw Error(Exit::live, what + ": loading the program: " + strerror(e));
	}
	return pl.prog_id;
}

std::vector<struct kinst_prog_cpu_stats>
Session::prog_stats()
{
	std::vector<struct kinst_prog_cpu_stats> v;
	if (!per_cpu<struct kinst_prog_stats>(fd_, KINST_IOC_PROG_STATS, v))
		throw Error(Exit::live, std::string("program stats: ") + strerror(errno));
	return v;
}

// ---- aggregation, counters ----

uint32_t
agg_slot_limit(struct kinst_agg_setup su, uint32_t ncpus, uint64_t *slot_bytes)
{
	bool stacks = (su.flags & KINST_AGGF_STACK) != 0;
	*slot_bytes = 0;
	for (uint32_t p = KINST_AGG_MAX_SLOTS; p >= 1; p /= 2) {
		struct kinst_agg a;
		su.nslots = p;
		if (stacks)
			su.nstacks = std::min<uint32_t>(p, KINST_AGG_MAX_STACKS);
		if (kinst_agg_geometry(&su, ncpus, &a) == 0) {	// KINST_E_OK
			*slot_bytes = 2 * (uint64_t)ncpus * (a.stride +
			    (stacks && p <= KINST_AGG_MAX_STACKS ?
			    sizeof(struct kinst_agg_stack_slot) : 0));
			return p;
		}
	}
	return 0;
}

// "0-1", "0", "0-3,8-11": the highest id + 1.
static uint32_t
read_possible_cpus()
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	unsigned long hi = 0;
	bool any = false;
	if (f) {
		char buf[256];
		if (fgets(buf, sizeof(buf), f)) {
			for (char *p = buf; *p; ) {
				char *end;
				unsigned long v = strtoul(p, &end, 10);
				if (end == p)
					break;
				hi = std::max(hi, v);
				any = true;
				p = end;
				if (*p == '-' || *p == ',')
					p++;
			}
		}
		fclose(f);
	}
	if (any && hi < 65536)
		return (uint32_t)hi + 1;
	long n = sysconf(_SC_NPROCESSORS_CONF);
	return n > 0 ? (uint32_t)n : 1;
}

uint32_t
possible_cpus()
{
	// Read once: every command's --help asks (kinstctl builds them all).
	static const uint32_t n = read_possible_cpus();
	return n;
}

std::string
slot_limit_help(uint32_t kind, uint32_t flags)
{
	struct kinst_agg_setup su;
	memset(&su, 0, sizeof(su));
	su.kind = kind;
	su.flags = flags;
	uint32_t n = possible_cpus();
	uint64_t b;
	uint32_t max = agg_slot_limit(su, n, &b);
	return "at most " + std::to_string(max) + " on this machine: the module's " +
	    std::to_string(KINST_AGG_MAX_BYTES >> 20) + " MiB of tables, " +
	    std::to_string(b) + " bytes a slot on " + std::to_string(n) + " CPUs";
}

void
Session::agg_setup(struct kinst_agg_setup &su)
{
	if (ioctl(fd_, KINST_IOC_AGG_SETUP, &su) == 0)
		return;
	if (errno == EFBIG) {
		struct kinst_version v;
		memset(&v, 0, sizeof(v));
		uint32_t ncpus = ioctl(fd_, KINST_IOC_VERSION, &v) == 0 && v.ncpus ?
		    v.ncpus : possible_cpus();
		uint64_t b;
		uint32_t max = agg_slot_limit(su, ncpus, &b);
		throw Error(Exit::usage, "--slots " + std::to_string(su.nslots) +
		    ": the tables would exceed the module's " +
		    std::to_string(KINST_AGG_MAX_BYTES >> 20) + " MiB (" + std::to_string(b) +
		    " bytes a slot on " + std::to_string(ncpus) + " CPUs); at most " +
		    std::to_string(max) + " for this command here");
	}
	device_failed("aggregation setup", errno);
}

uint32_t
Session::ts_setup(uint32_t nthreads, const std::string &why, uint32_t flags)
{
	require(Feature::thread_state, why);
	if ((flags & KINST_TS_LOCAL_CLOCK) != 0)
		require(Feature::ts_clock, why + " --clock local");
	if (ts_flags_) {
		// Flags 0 (entry values, --latency-from): any table will do.
		if (flags != 0 && *ts_flags_ != flags)
			throw Error(Exit::internal, why + ": the per-thread table is already set up "
			    "with flags " + hex(*ts_flags_) + ", not " + hex(flags));
		return *ts_flags_;
	}
	struct kinst_ts_setup su;
	memset(&su, 0, sizeof(su));
	su.nthreads = nthreads;
	su.flags = flags;
	if (ioctl(fd_, KINST_IOC_TS_SETUP, &su) != 0)
		device_failed("per-thread state setup", errno);
	ts_flags_ = su.flags;
	return su.flags;
}

struct kinst_ts_stats
Session::ts_stats()
{
	struct kinst_ts_stats st;
	memset(&st, 0, sizeof(st));
	if (ioctl(fd_, KINST_IOC_TS_STATS, &st) != 0)
		memset(&st, 0, sizeof(st));
	return st;
}

uint32_t
Session::agg_read(uint32_t cpu, void *buf, uint32_t cap)
{
	return agg_table(KINST_IOC_AGG_READ, cpu, buf, cap, "aggregation read");
}

uint32_t
Session::agg_stacks(uint32_t cpu, struct kinst_agg_stack *buf, uint32_t cap)
{
	return agg_table(KINST_IOC_AGG_STACKS, cpu, buf, cap, "aggregation stacks read");
}

// AGG_READ and AGG_STACKS: one CPU's table into buf, cap entries.
uint32_t
Session::agg_table(unsigned long cmd, uint32_t cpu, void *buf, uint32_t cap, const char *what)
{
	struct kinst_agg_read rd;
	memset(&rd, 0, sizeof(rd));
	rd.buf = (uint64_t)(uintptr_t)buf;
	rd.cap = cap;
	rd.cpu = cpu;
	if (ioctl(fd_, cmd, &rd) != 0)
		device_failed(what, errno);
	return rd.count;
}

std::vector<struct kinst_agg_cpu_stats>
Session::agg_stats()
{
	std::vector<struct kinst_agg_cpu_stats> v;
	if (!per_cpu<struct kinst_agg_stats>(fd_, KINST_IOC_AGG_STATS, v))
		device_failed("aggregation stats", errno);
	return v;
}

std::vector<struct kinst_cpu_stats>
Session::stats()
{
	std::vector<struct kinst_cpu_stats> v;
	if (!per_cpu<struct kinst_stats>(fd_, KINST_IOC_STATS, v))
		device_failed("stats", errno);
	return v;
}

// ---- probes ----

// KINST_IOC_LIST: every probe of this file.
std::vector<struct kinst_probe_info>
Session::probe_infos()
{
	std::vector<struct kinst_probe_info> v(256);
	struct kinst_list l;
	for (;;) {
		memset(&l, 0, sizeof(l));
		l.buf = (uint64_t)(uintptr_t)v.data();
		l.cap = (uint32_t)v.size();
		if (ioctl(fd_, KINST_IOC_LIST, &l) != 0)
			device_failed("list probes", errno);
		if (l.count <= l.cap)
			break;
		v.resize(l.count);
	}
	v.resize(l.count);
	return v;
}

JumpCounts
Session::jump_probes()
{
	std::vector<struct kinst_probe_info> v = probe_infos();
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
		if (KINST_PI_SESSIONS_MAX(pi.treatment) > 1) {
			jc.shared++;
			jc.max_sessions = std::max(jc.max_sessions,
			    (uint32_t)KINST_PI_SESSIONS_MAX(pi.treatment));
		}
		if (pi.treatment & KINST_PI_JUMP) {
			jc.jump++;
			it->second.second++;
		}
	}
	return jc;
}

void
Session::print_jump_summary(const JumpCounts &jc) const
{
	if (jc.shared != 0)
		fprintf(stderr, "kinstctl: %u of %u probe%s shared with other kinstctl sessions "
		    "(up to %u sessions on one instruction; every count here is this session's own)\n",
		    jc.shared, jc.total, jc.total == 1 ? "" : "s", jc.max_sessions);
	if (!has(Feature::noopt) || jc.total == 0)
		return;
	fprintf(stderr, "kinstctl: %u of %u probe%s jump-optimized%s\n", jc.jump, jc.total,
	    jc.total == 1 ? "" : "s",
	    no_optimize_ ? " (--no-optimize)" : jc.jump ? " (no trap per hit)" : "");
	if (jc.names.size() > 1)
		for (const auto &n : jc.names)
			fprintf(stderr, "  %s: %u of %u jump-optimized\n", n.c_str(),
			    jc.per.at(n).second, jc.per.at(n).first);
}


// A branch's target outside the probe's function, by live kallsyms (not
// set when it stays inside; not resolved when no symbol covers it).
static BranchTarget
branch_of(StackSymbolizer &sym, const ProbeDesc &d, uint64_t target)
{
	BranchTarget bt;
	Frame f;
	try {
		f = sym.frame(target, 0);
	} catch (const Error &) {
		f.resolved = false;
	}
	if (f.resolved && f.function == d.function && f.module == d.module)
		return bt;
	bt.set = true;
	bt.address = target;
	if (f.resolved) {
		bt.resolved = true;
		bt.function = f.function;
		bt.offset = f.offset;
		bt.module = f.module;
		bt.other_module = f.module != d.module;
	}
	return bt;
}

std::map<uint32_t, ProbeDesc>
Session::probes(Disassembler &dis)
{
	StackSymbolizer sym;
	std::vector<struct kinst_probe_info> v = probe_infos();
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
		uint64_t to;
		bool br;
		Disassembler::Text t;
		if (regfile.a64) {	// the running kernel's code is kinstctl's own
			struct kinst_a64_insn a;
			if (n == 4)
				t = dis.a64(pi.insn, pi.addr);
			kinst_a64_decode(kinst_a64_word(pi.insn), &a);
			br = t.len && a64_direct_branch(a, pi.addr, &to);
		} else {
			struct kinst_insn k;
			t = dis.one(pi.insn, n, pi.addr);
			br = t.len && kinst_decode(pi.insn, n, &k) == KINST_DEC_OK && k.len == t.len &&
			    direct_branch(k, pi.addr, &to);
		}
		d.insn = t.len ? t.mnemonic + (t.operands.empty() ? "" : " " + t.operands) : "(bad)";
		if (br)
			d.branch = branch_of(sym, d, to);
		m[pi.probe_id] = d;
	}
	return m;
}

// ---- records ----

// Hands the whole records in buf[0, n) to sink; true when it ends them.
bool
Session::consume(const uint8_t *buf, size_t n, const RecordSink &sink)
{
	size_t pos = 0;
	bool done = false;
	while (pos < n && !done) {
		struct kinst_rec_hdr hdr;
		if (n - pos < sizeof(hdr))
			throw Error(Exit::live, "read: truncated record header from the module");
		memcpy(&hdr, buf + pos, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size % 8 != 0 || hdr.size > n - pos)
			throw Error(Exit::live, "read: malformed record from the module (size " +
			    std::to_string(hdr.size) + ")");
		if (hdr.type == KINST_REC_HIT && hdr.size >= sizeof(struct kinst_hit_record))
			done = sink.raw ? !sink.raw(buf + pos, hdr.size) :
			    !sink.hit(parse_hit_record(buf + pos, hdr.size));
		pos += hdr.size;
	}
	sink.batch();
	return done;
}

// The reader: a thread that only moves records from the device into
// memory, so that the module's rings empty at the speed of read(2), not at
// the speed of formatting; this thread formats.  Records wait in a backlog
// of at most backlog_ bytes; when it is full the reader stops reading and
// the module drops (and counts) what no longer fits in its rings.
namespace {

struct Backlog {
	std::mutex m;
	std::condition_variable data, space;
	std::deque<std::vector<uint8_t>> q;
	size_t bytes = 0;
	size_t peak = 0;
	bool full_once = false;		// the reader waited for space
	bool reader_done = false;
	bool stop = false;		// the consumer is done: reader, go
	std::exception_ptr err;
};

} // namespace

void
Session::reader(void *vb, double duration)
{
	Backlog &b = *static_cast<Backlog *>(vb);
	// Signals are for the consumer thread (g_stop, SignalGuard).
	sigset_t ss;
	sigemptyset(&ss);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &ss, nullptr);
	// Ahead of the formatting thread and of the traced workload: a burst
	// is moved into the backlog while it happens and formatted after.
	live_raise_reader_priority();
	try {
		std::vector<uint8_t> buf(1 << 20);
		double t0 = now_s();
		bool mapped = !maps_.empty();
		for (;;) {
			{
				std::unique_lock<std::mutex> lk(b.m);
				while (!b.stop && !g_stop && b.bytes + buf.size() > backlog_) {
					b.full_once = true;
					b.space.wait_for(lk, std::chrono::milliseconds(100));
				}
				if (b.stop || g_stop)
					break;
			}
			// Mapped: records are taken straight from the rings;
			// poll(2) only waits, woken at the watermark or after
			// 50 ms (what is below it then is taken anyway).
			ssize_t n = mapped ? (ssize_t)take_mapped(buf.data(), buf.size()) : 0;
			if (n == 0) {
				int timeout = mapped ? 50 : 200;
				if (duration > 0) {
					double left = duration - (now_s() - t0);
					if (left <= 0)
						break;
					if (left * 1000 < timeout)
						timeout = (int)(left * 1000) + 1;
				}
				struct pollfd pfd = { fd_, POLLIN, 0 };
				int r = poll(&pfd, 1, timeout);
				if (r < 0) {
					if (errno == EINTR)
						continue;
					throw Error(Exit::live, std::string("poll: ") + strerror(errno));
				}
				// POLLERR | POLLHUP: the module is going (the
				// read says so).
				bool gone = r > 0 && (pfd.revents & (POLLERR | POLLHUP)) != 0;
				if (r == 0 || (mapped && !gone))
					continue;
				n = read(fd_, buf.data(), buf.size());
				if (n < 0) {
					if (errno == EINTR || errno == EAGAIN)
						continue;
					device_failed("read", errno);
				}
				if (n == 0)
					continue;
			}
			std::vector<uint8_t> chunk(buf.begin(), buf.begin() + n);
			std::lock_guard<std::mutex> lk(b.m);
			b.bytes += (size_t)n;
			b.peak = std::max(b.peak, b.bytes);
			b.q.push_back(std::move(chunk));
			b.data.notify_one();
		}
	} catch (...) {
		std::lock_guard<std::mutex> lk(b.m);
		b.err = std::current_exception();
	}
	std::lock_guard<std::mutex> lk(b.m);
	b.reader_done = true;
	b.data.notify_one();
}

bool
Session::stream(double duration, const RecordSink &sink)
{
	Backlog b;
	(void)map_rings();
	std::thread t(&Session::reader, this, &b, duration);
	bool done = false;
	auto stop_reader = [&]() {
		{
			std::lock_guard<std::mutex> lk(b.m);
			b.stop = true;
			b.space.notify_one();
		}
		t.join();
	};
	try {
		for (;;) {
			std::vector<uint8_t> chunk;
			{
				std::unique_lock<std::mutex> lk(b.m);
				// A stop (signal, --duration): what the reader
				// took is printed by drain(), after the disarm,
				// so that no hit is dropped meanwhile.
				while (b.q.empty() && !b.reader_done && !g_stop &&
				    !(sink.stop && sink.stop()))
					b.data.wait_for(lk, std::chrono::milliseconds(100));
				if (b.reader_done || g_stop || (sink.stop && sink.stop()))
					break;
				chunk = std::move(b.q.front());
				b.q.pop_front();
				b.bytes -= chunk.size();
				b.space.notify_one();
			}
			// In time order here, not in the reader: it only copies.
			order_by_time(chunk.data(), chunk.size());
			if (consume(chunk.data(), chunk.size(), sink)) {
				done = true;	// the rest is deliberately left unread
				break;
			}
		}
	} catch (...) {
		stop_reader();
		throw;
	}
	stop_reader();
	backlog_peak_ = b.peak;
	backlog_full_ = b.full_once;
	if (b.err && !done)
		std::rethrow_exception(b.err);
	if (!done)
		for (auto &c : b.q)
			pending_.push_back(std::move(c));
	return done;
}

bool
Session::drain(const RecordSink &sink)
{
	// First what stream() had read and not printed.
	while (!pending_.empty()) {
		std::vector<uint8_t> c = std::move(pending_.front());
		pending_.pop_front();
		order_by_time(c.data(), c.size());
		if (consume(c.data(), c.size(), sink)) {
			pending_.clear();
			return true;
		}
	}
	int fl = fcntl(fd_, F_GETFL);
	if (fl < 0 || fcntl(fd_, F_SETFL, fl | O_NONBLOCK) != 0)
		throw Error(Exit::live, std::string("fcntl: ") + strerror(errno));
	std::vector<uint8_t> buf(1 << 20);
	for (;;) {
		ssize_t n = read(fd_, buf.data(), buf.size());
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return false;
		if (n < 0)
			device_failed("read", errno);
		if (n == 0)
			return false;
		order_by_time(buf.data(), (size_t)n);
		if (consume(buf.data(), (size_t)n, sink))
			return true;
	}
}

// ---- what a run is over ----

uint64_t
hits_at(const std::vector<struct kinst_probe_info> &probes,
    const std::vector<std::pair<std::string, uint32_t>> &places)
{
	uint64_t n = 0;
	for (const auto &pi : probes) {
		std::string fn(pi.function, strnlen(pi.function, sizeof(pi.function)));
		for (const auto &pl : places)
			if (pl.first == fn && pl.second == pi.offset)
				n += pi.hits;
	}
	return n;
}

uint64_t
hits_at(const std::vector<struct kinst_probe_info> &probes, const std::vector<Spec> &specs)
{
	std::vector<std::pair<std::string, uint32_t>> places;
	for (const auto &sp : specs)
		places.emplace_back(sp.function, sp.offset);
	return hits_at(probes, places);
}

void
Workload::start()
{
	t0_ = now_s();
	if (command_.empty())
		return;
	std::vector<char *> argv;
	for (const auto &a : command_)
		argv.push_back(const_cast<char *>(a.c_str()));
	argv.push_back(nullptr);
	fflush(stdout);
	fflush(stderr);
	// SIGINT and SIGTERM held across the fork: in the child, until the
	// default actions are back, a signal (finish()'s SIGTERM, a Ctrl-C to
	// the group) would find kinstctl's handler, only set the child's copy
	// of g_stop, and be lost at the exec; the command would run on and
	// finish() wait for it.  Held, it is delivered after, and kills.
	sigset_t stop, old;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, &old);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		sigprocmask(SIG_SETMASK, &old, nullptr);
		throw Error(Exit::live, std::string("fork: ") + strerror(e));
	}
	if (pid == 0) {
		// kinstctl catches SIGINT and SIGTERM and ignores SIGPIPE; the
		// command gets the defaults back.
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		sigprocmask(SIG_SETMASK, &old, nullptr);
		execvp(argv[0], argv.data());
		fprintf(stderr, "kinstctl: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	sigprocmask(SIG_SETMASK, &old, nullptr);
	child_ = pid;
}

bool
Workload::done()
{
	if (over_)
		return true;
	if (t0_ == 0)
		t0_ = now_s();
	if (child_ > 0) {
		int st;
		pid_t r = waitpid(child_, &st, WNOHANG);
		if (r == child_) {
			if (WIFEXITED(st))
				fprintf(stderr, "kinstctl: %s exited with status %d\n",
				    command_[0].c_str(), WEXITSTATUS(st));
			else if (WIFSIGNALED(st))
				fprintf(stderr, "kinstctl: %s killed by signal %d\n",
				    command_[0].c_str(), WTERMSIG(st));
			// Reaped: its pid is free for another process now.
			child_ = -1;
			over_ = true;
		}
	}
	if (duration_ > 0 && now_s() - t0_ >= duration_)
		over_ = true;
	return over_;
}

void
Workload::wait()
{
	while (!g_stop && !done())
		poll(nullptr, 0, 20);
}

void
Workload::finish()
{
	if (child_ > 0 && g_stop) {
		kill(child_, SIGTERM);
		waitpid(child_, nullptr, 0);
		child_ = -1;
	}
}

} // namespace kinst
