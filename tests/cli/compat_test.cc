// SPDX-License-Identifier: BSD-2-Clause
// kinstctl's Session against a module of every ABI 1.x minor (issue 45):
// it must either work or refuse with the documented message ("WHAT: the
// loaded kinst module (ABI 1.N) cannot DO; load one of ABI 1.M or later"),
// never send a request of a wrong size, a flag or command the module does
// not know, or show a raw ENOTTY.
//
// The module is faked in this process: open("/dev/kinst") and ioctl(2)
// are this program's own (the executable's definitions win over libc's),
// and the fake answers as a module of minor N would, from the history in
// kinst_abi.h's version comment, kinst(4) and docs/engine.md: the commands
// it has (ENOTTY for the others), the ARM and AGG_SETUP flags it knows
// (EINVAL for the others, as every minor validated its flags), the program
// opcodes it knows (EINVAL, verdict BAD_OP).  Every request's number must
// be one a module takes apart into a known command of the documented size
// and direction (written here by hand from kinst(4) ABI LAYOUT).
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include <atf-c++.hpp>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "plan/prog_compile.h"
#include "device/plan_arm.h"
#include "device/session.h"
#include "plan/planner.h"
#include "base/spec.h"
extern "C" {
#include "x86/kinst_classify.h"
}

using namespace kinst;

// Failures are collected and reported together at the end of a test case
// (finish()), so that one run says everything that differs.
static std::vector<std::string> failures;

static void
finish()
{
	std::string all;
	for (const auto &f : failures)
		all += "\n  " + f;
	size_t n = failures.size();
	failures.clear();
	if (n != 0)
		ATF_FAIL(std::to_string(n) + " failures:" + all);
}

// what: anything an ostream takes ("x, 1." << n).
#define	EXPECT_EQ(got, want, what) do {					\
	auto g_ = (got);						\
	auto w_ = (want);						\
	if (!(g_ == w_)) {						\
		std::ostringstream o_;					\
		o_ << what << ": expected " << w_ << ", got " << g_;	\
		failures.push_back(o_.str());				\
	}								\
} while (0)
#define	EXPECT(cond, what) do {						\
	if (!(cond)) {							\
		std::ostringstream o_;					\
		o_ << what << ": expected " #cond;			\
		failures.push_back(o_.str());				\
	}								\
} while (0)

namespace {

// The module this process pretends to have loaded.
struct Fake {
	bool loaded = false;
	int fd = -1;
	uint32_t major = 1, minor = KINST_ABI_VERSION_MINOR;
	std::vector<std::string> violations;	// requests no module could take
	uint32_t arm_flags = 0;			// of the last ARM
	std::vector<uint32_t> arm_offsets;	// of every ARM but checks, in order
	std::vector<uint32_t> arm_progs;	// their program ids
	std::vector<uint8_t> text;		// TEXT's answer (empty: ENOENT)
	uint32_t refuse = 0;		// KINST_R_*: refuse every ARM so, as
					// FreeBSD answers (no copy-out on error)
} fake;

// The commands (kinst(4) ABI LAYOUT): number, direction (Linux _IOC_READ
// 2, _IOC_WRITE 1), argument size, and the minor that brought it.
const struct Cmd {
	unsigned nr, dir, size, since;
} cmds[] = {
	{ 1, 2, 16, 0 },	// VERSION
	{ 2, 3, 248, 0 },	// ARM
	{ 3, 3, 8, 0 },		// DISARM
	{ 4, 3, 16, 0 },	// LIST
	{ 5, 3, 32, 0 },	// STATS
	{ 6, 3, 216, 0 },	// TEXT
	{ 7, 1, 16, 1 },	// FILTER
	{ 16, 3, 32, 5 },	// PROG_LOAD
	{ 17, 3, 16, 5 },	// PROG_STATS
	{ 18, 3, 48, 6 },	// AGG_SETUP
	{ 19, 3, 24, 6 },	// AGG_READ
	{ 20, 3, 8, 6 },	// AGG_CLEAR
	{ 21, 3, 24, 6 },	// AGG_STATS
	{ 22, 3, 24, 8 },	// AGG_STACKS
	{ 23, 3, 16, 10 },	// TS_SETUP
	{ 24, 2, 96, 10 },	// TS_STATS
	{ 25, 3, 24, 11 },	// RING
	{ 26, 3, 8, 12 },	// WAKE
};

// ARM flags by minor: ALL 1.0, CHECK 1.2, STACK 1.4, PROG 1.5, AGG 1.6,
// NOOPT 1.9.
uint32_t
arm_flags_known(uint32_t minor)
{
	return 0x1 | (minor >= 2 ? 0x2 : 0) | (minor >= 4 ? 0x4 : 0) |
	    (minor >= 5 ? 0x10 : 0) | (minor >= 6 ? 0x20 : 0) | (minor >= 9 ? 0x40 : 0);
}

// AGG_SETUP flags: PROBE 1.6, STACK 1.8, RECORD 1.14.
uint32_t
agg_flags_known(uint32_t minor)
{
	return 0x1 | (minor >= 8 ? 0x2 : 0) | (minor >= 14 ? 0x4 : 0);
}

// The minor that brought an opcode: 1-29 1.5, KEY/VALUE (30, 31) 1.6,
// MEM/STR/LOADC (32-34) 1.7, TS_PUSH/TS_GET/VAL (35-37) 1.10.
uint32_t
op_since(unsigned op)
{
	return op <= 29 ? 5 : op <= 31 ? 6 : op <= 34 ? 7 : op <= 37 ? 10 : 1000;
}

void
violation(const std::string &s)
{
	fake.violations.push_back("module 1." + std::to_string(fake.minor) + ": " + s);
}

int
fake_arm(struct kinst_arm *a)
{
	fake.arm_flags = a->flags;
	uint32_t unknown = a->flags & ~arm_flags_known(fake.minor);
	if (unknown != 0) {
		violation("ARM flags " + std::to_string(unknown) + " unknown");
		return EINVAL;
	}
	if (fake.minor < 5 && a->prog_id != 0) {
		violation("ARM: _pad (prog_id) not 0");
		return EINVAL;
	}
	// The control path's rule (kinst_control.c): a program id needs the flag.
	if ((a->flags & KINST_ARM_PROG) == 0 && a->prog_id != 0) {
		violation("ARM: prog_id without KINST_ARM_PROG");
		return EINVAL;
	}
	if (fake.refuse != 0 && !(a->flags & KINST_ARM_CHECK))
		return EOPNOTSUPP;	// refuse_reason not copied out (FreeBSD)
	if (a->flags & KINST_ARM_CHECK) {
		a->refuse_reason = fake.refuse;
		// 1.13: the sessions tracing it; before, nothing armed.
		a->narmed = fake.minor >= 13 ? 3 : 0;
		return 0;
	}
	fake.arm_offsets.push_back((a->flags & KINST_ARM_ALL) ? UINT32_MAX : a->offset);
	fake.arm_progs.push_back(a->prog_id);
	a->probe_id = 1;
	a->narmed = 1;
	a->nrefused = 0;
	a->addr = 0xffffffff81000001ull;
	a->insn[0] = 0x90;
	a->insn_len = 1;
	return 0;
}

int
fake_prog_load(struct kinst_prog_load *pl)
{
	const struct kinst_pinsn *in = (const struct kinst_pinsn *)(uintptr_t)pl->insns;
	for (uint32_t i = 0; i < pl->ninsns; i++)
		if (op_since(in[i].op) > fake.minor) {
			violation("PROG_LOAD: opcode " + std::to_string(in[i].op) + " unknown");
			pl->verdict = KINST_PV_BAD_OP;
			pl->error_pc = i;
			return EINVAL;
		}
	static uint32_t next_id = 1;
	pl->prog_id = next_id++;
	pl->verdict = KINST_PV_OK;
	return 0;
}

int
fake_agg_setup(struct kinst_agg_setup *su)
{
	uint32_t unknown = su->flags & ~agg_flags_known(fake.minor);
	if (unknown != 0 || (fake.minor < 8 && su->nstacks != 0)) {
		violation("AGG_SETUP flags " + std::to_string(unknown) + " or nstacks unknown");
		return EINVAL;
	}
	su->nbuckets = 0;
	su->entry_size = 56;
	return 0;
}

int
fake_list(struct kinst_list *l)
{
	l->count = 1;
	if (l->cap == 0)
		return 0;
	struct kinst_probe_info *pi = (struct kinst_probe_info *)(uintptr_t)l->buf;
	memset(pi, 0, sizeof(*pi));
	pi->probe_id = 1;
	pi->offset = 1;
	pi->addr = 0xffffffff81000001ull;
	strcpy(pi->function, "f");
	pi->insn[0] = 0x90;
	pi->insn_len = 1;
	pi->treatment = KINST_T_OOL | (fake.minor >= 9 ? KINST_PI_JUMP : 0) |
	    (fake.minor >= 13 ? KINST_PI_MK_SESSIONS(2, 3) : 0);
	return 0;
}

int
fake_ioctl(unsigned long req, void *arg)
{
	const Cmd *c = nullptr;
	for (const auto &k : cmds)
		if (k.nr == _IOC_NR(req))
			c = &k;
	if (_IOC_TYPE(req) != 'K' || c == nullptr || _IOC_SIZE(req) != c->size ||
	    _IOC_DIR(req) != c->dir) {
		char b[64];
		snprintf(b, sizeof(b), "request %#lx: no such command", req);
		violation(b);
		return ENOTTY;
	}
	if (c->since > fake.minor)
		return ENOTTY;	// what a module without it answers
	switch (c->nr) {
	case 1: {
		auto *v = static_cast<struct kinst_version *>(arg);
		v->abi_version = (fake.major << 16) | fake.minor;
		v->max_probes = 8192;
		v->ncpus = 2;
		v->record_size = 208;
		return 0;
	}
	case 2:
		return fake_arm(static_cast<struct kinst_arm *>(arg));
	case 4:
		return fake_list(static_cast<struct kinst_list *>(arg));
	case 5:
		static_cast<struct kinst_stats *>(arg)->ncpus = 2;
		return 0;
	case 6: {
		if (fake.text.empty())
			return ENOENT;
		auto *t = static_cast<struct kinst_text *>(arg);
		memcpy((void *)(uintptr_t)t->buf, fake.text.data(),
		    std::min<size_t>(t->cap, fake.text.size()));
		t->size = (uint32_t)fake.text.size();
		t->addr = 0xffffffff81000000ull;
		return 0;
	}
	case 16:
		return fake_prog_load(static_cast<struct kinst_prog_load *>(arg));
	case 18:
		return fake_agg_setup(static_cast<struct kinst_agg_setup *>(arg));
	case 23: {
		// Flags: none before 1.15, then KINST_TS_LOCAL_CLOCK, said back.
		auto *su = static_cast<struct kinst_ts_setup *>(arg);
		uint32_t unknown = su->flags & ~(fake.minor >= 15 ? KINST_TS_LOCAL_CLOCK : 0u);
		if (unknown != 0) {
			violation("TS_SETUP flags " + std::to_string(unknown) + " unknown");
			return EINVAL;
		}
		su->idle_ns = KINST_TS_IDLE_NS;
		return 0;
	}
	case 25: {
		auto *rs = static_cast<struct kinst_ring_size *>(arg);
		if (rs->size == 0)
			rs->size = 1u << 20;
		rs->min = 4096;
		rs->max = 64u << 20;
		rs->ncpus = 2;
		rs->allocated = 0;
		return 0;
	}
	default:
		return 0;
	}
}

int
real_open(const char *path, int flags, mode_t mode)
{
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

int
fake_open(const char *path, int flags, va_list ap)
{
	mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
	if (fake.loaded && strcmp(path, Session::path) == 0) {
		// A real descriptor, so that close(2) and poll(2) work.
		fake.fd = real_open("/dev/null", O_RDWR | O_CLOEXEC, 0);
		return fake.fd;
	}
	return real_open(path, flags, mode);
}

} // namespace

extern "C" int
open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int fd = fake_open(path, flags, ap);
	va_end(ap);
	return fd;
}

extern "C" int open64(const char *path, int flags, ...) __attribute__((alias("open")));

extern "C" int
ioctl(int fd, unsigned long req, ...) noexcept
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (fake.loaded && fd >= 0 && fd == fake.fd) {
		int e = fake_ioctl(req, arg);
		if (e != 0) {
			errno = e;
			return -1;
		}
		return 0;
	}
	return (int)syscall(SYS_ioctl, fd, req, arg);
}

namespace {

// What an operation did against one minor: "" when it worked, else the
// message of the Error it threw.
std::string
outcome(const std::function<void()> &op)
{
	try {
		op();
		return "";
	} catch (const Error &e) {
		return e.what();
	}
}

// A Session on a module of version major.minor; the fake is unloaded after.
void
with_module(uint32_t major, uint32_t minor, const std::function<void(Session &)> &fn)
{
	fake.loaded = true;
	fake.major = major;
	fake.minor = minor;
	fake.fd = -1;
	{
		Session s = Session::open("test");
		fn(s);
	}
	fake.loaded = false;
	fake.fd = -1;
}

// The documented refusal of a missing feature (session.h feature_missing).
std::string
missing(const std::string &what, uint32_t minor, const std::string &can, uint32_t need)
{
	return what + ": the loaded kinst module (ABI 1." + std::to_string(minor) +
	    ") cannot " + can + "; load one of ABI 1." + std::to_string(need) + " or later";
}

void
check_outcome(uint32_t minor, const std::string &op, const std::string &got,
    const std::string &want)
{
	if (got != want)
		failures.push_back("module 1." + std::to_string(minor) + ", " + op +
		    ": expected " + (want.empty() ? std::string("it to work") :
		    "\"" + want + "\"") + ", got " +
		    (got.empty() ? std::string("it worked") : "\"" + got + "\""));
	if (got.find(strerror(ENOTTY)) != std::string::npos)
		failures.push_back("module 1." + std::to_string(minor) + ", " + op +
		    ": raw ENOTTY: " + got);
}

void
check_no_violations()
{
	for (const auto &v : fake.violations)
		failures.push_back("a request the module could not take: " + v);
	fake.violations.clear();
}

// Every feature, the minor that brought it and what a module without it
// cannot do (written from kinst_abi.h's version comment and kinstctl(8)).
const struct {
	Feature f;
	const char *name;
	uint32_t minor;
	const char *can;
} features[] = {
	{ Feature::filter, "filter", 1, "filter hits" },
	{ Feature::arm_check, "arm_check", 2, "check an instruction without arming it" },
	{ Feature::stack, "stack", 4, "record stacks" },
	{ Feature::prog, "prog", 5, "run probe programs" },
	{ Feature::agg, "agg", 6, "aggregate" },
	{ Feature::mem_capture, "mem_capture", 7, "capture memory" },
	{ Feature::agg_stack, "agg_stack", 8, "count by stack" },
	{ Feature::noopt, "noopt", 9, "jump-optimize probes" },
	{ Feature::thread_state, "thread_state", 10, "keep per-thread state or capture values" },
	{ Feature::ring_size, "ring_size", 11, "size a session's rings (--buffer-size)" },
	{ Feature::mmap, "mmap", 12, "map its rings" },
	{ Feature::sharing, "sharing", 13, "share probes between sessions" },
	{ Feature::agg_record, "agg_record", 14, "record the samples it aggregates" },
	{ Feature::ts_clock, "ts_clock", 15, "time with the per-CPU clock" },
};

const auto &
row(Feature x)
{
	for (const auto &ft : features)
		if (ft.f == x)
			return ft;
	ATF_FAIL("no such feature in the test's table");
}

// What a module of minor n answers an operation that needs base and then
// need (the minors of the table above): the refusal of the first it
// lacks, "" when it has both.
std::string
expected(const std::string &what, uint32_t n, Feature base, Feature need)
{
	for (Feature x : { base, need })
		if (n < row(x).minor)
			return missing(what, n, row(x).can, row(x).minor);
	return "";
}

// A program of one opcode's era: op, then IMM 1, RET.
std::vector<struct kinst_pinsn>
program_with(const std::vector<struct kinst_pinsn> &body)
{
	std::vector<struct kinst_pinsn> code = body;
	code.push_back(make_pinsn(KINST_OP_IMM, 0, 1));
	code.push_back(make_pinsn(KINST_OP_RET));
	return code;
}

Spec
spec_f(uint32_t off)
{
	Spec sp;
	sp.function = "f";
	sp.has_offset = true;
	sp.offset = off;
	return sp;
}

} // namespace

// kinstctl speaks to every module of its major (Session::open), whatever
// the minor, and refuses another major saying both versions.
ATF_TEST_CASE_WITHOUT_HEAD(open_every_minor);
ATF_TEST_CASE_BODY(open_every_minor)
{
	for (uint32_t n = 0; n <= KINST_ABI_VERSION_MINOR + 1; n++)
		with_module(1, n, [&](Session &s) {
			ATF_REQUIRE_EQ(s.abi_version(), (1u << 16) | n);
		});
	for (uint32_t major : { 0u, 2u }) {
		fake.loaded = true;
		fake.major = major;
		fake.minor = 3;
		std::string got = outcome([] { Session s = Session::open("test"); });
		fake.loaded = false;
		check_outcome(3, "open of major " + std::to_string(major), got,
		    "/dev/kinst: module ABI " + std::to_string(major) + ".3, kinstctl speaks 1." +
		    std::to_string(KINST_ABI_VERSION_MINOR) + ": rebuild one of them");
	}
	check_no_violations();
	finish();
}

// Every feature at its boundary: one minor before it the session refuses
// with the message naming both minors; from its minor on it has it.
ATF_TEST_CASE_WITHOUT_HEAD(feature_boundaries);
ATF_TEST_CASE_BODY(feature_boundaries)
{
	for (const auto &ft : features) {
		EXPECT_EQ(feature_minor(ft.f), ft.minor, "feature_minor(" << ft.name << ")");
		const std::string what = std::string("test ") + ft.name;
		with_module(1, ft.minor - 1, [&](Session &s) {
			EXPECT(!s.has(ft.f), ft.name << " at 1." << ft.minor - 1 << " (has)");
			check_outcome(ft.minor - 1, what, outcome([&] { s.require(ft.f, what); }),
			    missing(what, ft.minor - 1, ft.can, ft.minor));
		});
		with_module(1, ft.minor, [&](Session &s) {
			EXPECT(s.has(ft.f), ft.name << " at 1." << ft.minor << " (has)");
			check_outcome(ft.minor, what, outcome([&] { s.require(ft.f, what); }), "");
		});
	}
	// Nothing kinstctl can do is newer than this tree's minor.
	for (const auto &ft : features)
		EXPECT(ft.minor <= KINST_ABI_VERSION_MINOR, ft.name << " newer than this tree");
	check_no_violations();
	finish();
}

// What the session does on its own (no command's require() first) against
// every minor: each call works or refuses with the documented message, and
// no request is one the module could not take apart.
ATF_TEST_CASE_WITHOUT_HEAD(session_every_minor);
ATF_TEST_CASE_BODY(session_every_minor)
{
	for (uint32_t n = 0; n <= KINST_ABI_VERSION_MINOR + 1; n++) {
		with_module(1, n, [&](Session &s) {
			// FILTER: a module before 1.1 records everything anyway.
			check_outcome(n, "filter", outcome([&] { s.filter("trace", -1, -1); }), "");
			// RING: kinstctl's default only where the module has it.
			check_outcome(n, "ring_size(0)",
			    outcome([&] { (void)s.ring_size(0, "trace"); }), "");
			check_outcome(n, "ring_size(1M)",
			    outcome([&] { (void)s.ring_size(1u << 20, "trace"); }),
			    expected("trace --buffer-size", n, Feature::ring_size,
			    Feature::ring_size));
			// ARM_CHECK: no answer (-1) before 1.2; sessions from 1.13.
			uint32_t sessions = 99;
			int r = s.check("", "f", 1, &sessions);
			EXPECT_EQ(r, n < 2 ? -1 : 0, "check, module 1." << n);
			if (n >= 2)
				EXPECT_EQ(sessions, n >= 13 ? 3u : 0u, "sessions, 1." << n);
			// --no-optimize: NOOPT only to a module that knows it.
			s.no_optimize(true);
			check_outcome(n, "arm --no-optimize",
			    outcome([&] { (void)s.arm(spec_f(1), 0, 0); }), "");
			EXPECT_EQ((fake.arm_flags & KINST_ARM_NOOPT) != 0, n >= 9,
			    "NOOPT sent to 1." << n);
			// Programs: each opcode era refused by name before 1.N.
			const struct {
				const char *what;
				std::vector<struct kinst_pinsn> body;
				Feature need;
			} progs[] = {
				{ "trace --if", {}, Feature::prog },
				{ "count", { make_pinsn(KINST_OP_IMM, 0, 1),
				    make_pinsn(KINST_OP_KEY) }, Feature::agg },
				{ "trace --mem", { make_pinsn(KINST_OP_REG, KINST_RDI),
				    make_pinsn(KINST_OP_MEM, 0, 8) }, Feature::mem_capture },
				{ "trace --var", { make_pinsn(KINST_OP_REG, KINST_RDI),
				    make_pinsn(KINST_OP_VAL) }, Feature::thread_state },
			};
			for (const auto &p : progs)
				check_outcome(n, p.what, outcome([&] {
					(void)s.load_prog(program_with(p.body), p.what);
				}), expected(p.what, n, Feature::prog, p.need));
			// Per-thread state (latency, entry values).
			check_outcome(n, "ts_setup", outcome([&] { s.ts_setup(16, "latency"); }),
			    expected("latency", n, Feature::thread_state, Feature::thread_state));
			// A second setup of the session: the same flags only.
			if (n >= 15)
				check_outcome(n, "ts_setup again, another clock", outcome([&] {
					(void)s.ts_setup(16, "latency", KINST_TS_LOCAL_CLOCK);
				}), "latency: the per-thread table is already set up with flags 0x0, "
				    "not 0x1");
			// Aggregations as count/hist/latency set them up: the
			// command's require() first, then the flags it needs.
			const struct {
				const char *what;
				uint32_t flags;
				Feature need;
			} aggs[] = {
				{ "count", KINST_AGGF_PROBE, Feature::agg },
				{ "count --by stack", KINST_AGGF_STACK, Feature::agg_stack },
				{ "latency --perfetto", KINST_AGGF_RECORD, Feature::agg_record },
			};
			for (const auto &a : aggs)
				check_outcome(n, a.what, outcome([&] {
					s.require(Feature::agg, a.what);
					s.require(a.need, a.what);
					struct kinst_agg_setup su;
					memset(&su, 0, sizeof(su));
					su.kind = KINST_AGG_COUNT;
					su.flags = a.flags;
					su.nslots = 16;
					if (a.flags & KINST_AGGF_STACK)
						su.nstacks = 16;
					s.agg_setup(su);
				}), expected(a.what, n, Feature::agg, a.need));
			// LIST: the treatment's low bits, and its high bits only
			// where the module sets them.
			JumpCounts jc = s.jump_probes();
			EXPECT_EQ(jc.total, 1u, "LIST, 1." << n);
			EXPECT_EQ(jc.jump, n >= 9 ? 1u : 0u, "jump, 1." << n);
			EXPECT_EQ(jc.max_sessions, n >= 13 ? 3u : 0u, "sessions, 1." << n);
			(void)s.probe_infos();
			(void)s.stats();
		});
		check_no_violations();
	}
	finish();
}

// latency --clock local: the per-CPU clock asked of a module that has it
// (and said back in force), refused by name before 1.15 -- the table's
// own refusal before 1.10 -- never sent where the module would not know it.
ATF_TEST_CASE_WITHOUT_HEAD(ts_clock_every_minor);
ATF_TEST_CASE_BODY(ts_clock_every_minor)
{
	for (uint32_t n = 0; n <= KINST_ABI_VERSION_MINOR + 1; n++) {
		with_module(1, n, [&](Session &s) {
			uint32_t got = 99;
			std::string want = n < 10 ?
			    missing("latency", n, row(Feature::thread_state).can, 10) :
			    n < 15 ? missing("latency --clock local", n, row(Feature::ts_clock).can, 15) :
			    "";
			check_outcome(n, "ts_setup --clock local", outcome([&] {
				got = s.ts_setup(16, "latency", KINST_TS_LOCAL_CLOCK);
			}), want);
			if (n >= 15) {
				EXPECT_EQ(got, (uint32_t)KINST_TS_LOCAL_CLOCK, "flags in force, 1." << n);
				// A later user that needs a table, not a clock
				// (entry values): the table as it is.
				got = 99;
				check_outcome(n, "ts_setup again, no flags", outcome([&] {
					got = s.ts_setup(1024, "latency: entry values");
				}), "");
				EXPECT_EQ(got, (uint32_t)KINST_TS_LOCAL_CLOCK, "flags again, 1." << n);
			}
		});
	}
	check_no_violations();
	finish();
}

// A refused ARM whose refusal reason did not come back (FreeBSD's ioctl
// layer copies nothing out on an error) is asked again check-only, and
// the message names the reason -- also for an ARM that carried a program
// (trace --if), whose check must not keep the program id without its flag.
ATF_TEST_CASE_WITHOUT_HEAD(refusal_reason_asked_again);
ATF_TEST_CASE_BODY(refusal_reason_asked_again)
{
	with_module(1, KINST_ABI_VERSION_MINOR, [&](Session &s) {
		fake.refuse = KINST_R_INT3;
		std::string want = std::string("f+0x1: refused: ") +
		    kinst_reason_name(KINST_R_INT3) + " (see kinstctl list-offsets)";
		check_outcome(KINST_ABI_VERSION_MINOR, "refused plain arm",
		    outcome([&] { (void)s.arm(spec_f(1), 0, 0); }), want);
		uint32_t prog = s.load_prog(program_with({}), "trace --if");
		check_outcome(KINST_ABI_VERSION_MINOR, "refused arm with a program",
		    outcome([&] { (void)s.arm(spec_f(1), 0, prog); }), want);
		fake.refuse = 0;
	});
	check_no_violations();
	finish();
}

// The planning step (planner.h) and its arming (plan_arm.h): a program
// that names an argument puts a whole function's spec at its entry (past
// endbr64 and the ftrace site), never at every instruction (issue 46: count
// --by 'args.x' FUNC once armed every instruction); a hidden companion is
// armed first, with its own program; a conditional return's group gets a
// program of its own, compiled with its condition.
ATF_TEST_CASE_WITHOUT_HEAD(plan_at_entry);
ATF_TEST_CASE_BODY(plan_at_entry)
{
	// endbr64; nopl 0(%rax,%rax) (the ftrace site); push %rbp; ret
	fake.text = { 0xf3, 0x0f, 0x1e, 0xfa, 0x0f, 0x1f, 0x44, 0x00, 0x00, 0x55, 0xc3 };
	std::vector<std::string> conds;
	PlanRequest req;
	req.specs = { "f" };
	req.what = "test";
	req.program = [&conds](const TypeEnv *e, const std::string &cond) {
		e->used_args = true;	// as compile_expr() does for args.x
		conds.push_back(cond);
		return program_with({});
	};
	// Two hidden groups: one at f+4 (trace --latency-from's, added with
	// the types), one at f's entry once every program is compiled
	// (latency's start: PlanGroup::entry_why moves it there).
	size_t conds_at_programs = 0;
	req.step = [&conds, &conds_at_programs](PlanStep s, Plan &p) {
		PlanGroup g;
		g.hidden = true;
		if (s == PlanStep::types) {
			g.specs.push_back(spec_f(4));
			g.code = program_with({ make_pinsn(KINST_OP_IMM, 0, 7) });
			g.what = "hidden";
		} else if (s == PlanStep::programs) {
			conds_at_programs = conds.size();
			Spec f = spec_f(0);
			f.has_offset = false;
			g.specs.push_back(f);
			g.code = program_with({ make_pinsn(KINST_OP_IMM, 0, 8) });
			g.what = "hidden at the entry";
			g.entry_why = "test";
		} else {
			return;
		}
		p.groups.push_back(g);
	};
	Plan plan;
	make_plan(req, plan);
	ATF_REQUIRE_EQ(plan.entry_why, std::string("argument names"));
	ATF_REQUIRE_EQ(plan.groups.size(), (size_t)3);
	ATF_REQUIRE(plan.groups[0].hidden);
	ATF_REQUIRE(plan.groups[1].hidden);
	ATF_REQUIRE_EQ(conds.size(), (size_t)1);
	ATF_REQUIRE_EQ(conds_at_programs, (size_t)1);	// after the program
	with_module(1, KINST_ABI_VERSION_MINOR, [&](Session &s) {
		fake.arm_offsets.clear();
		fake.arm_progs.clear();
		place_at_entry(s, plan);
		load_programs(s, plan);
		PlanArmed pa = arm_plan(s, plan, false);
		ATF_REQUIRE_EQ(pa.armed, (uint64_t)1);
		ATF_REQUIRE_EQ(pa.prog_id, plan.prog_id);
		ATF_REQUIRE(plan.prog_id != 0);
		ATF_REQUIRE_EQ(fake.arm_offsets.size(), (size_t)3);
		ATF_REQUIRE_EQ(fake.arm_offsets[0], 4u);	// the hidden ones first
		ATF_REQUIRE(fake.arm_progs[0] != plan.prog_id);
		ATF_REQUIRE_EQ(fake.arm_offsets[1], 9u);	// moved to f's entry
		ATF_REQUIRE(fake.arm_progs[1] != plan.prog_id);
		ATF_REQUIRE(fake.arm_progs[1] != fake.arm_progs[0]);
		ATF_REQUIRE_EQ(fake.arm_offsets[2], 9u);	// f's entry, not every instruction
		ATF_REQUIRE_EQ(fake.arm_progs[2], plan.prog_id);
	});
	fake.text.clear();

	// Return points: the plain one with the plan's program, the
	// conditional one with its own, compiled with its condition.
	std::vector<Spec> rs = { spec_f(2), spec_f(3) };
	rs[1].ret_if = "c";
	conds.clear();
	PlanRequest rq;
	rq.resolved = &rs;
	rq.what = "test";
	rq.cond_what = "test at a conditional return";
	rq.program = [&conds](const TypeEnv *, const std::string &cond) {
		conds.push_back(cond);
		return program_with({ make_pinsn(KINST_OP_IMM, 0, cond.size()) });
	};
	Plan rp;
	make_plan(rq, rp);
	ATF_REQUIRE(rp.entry_why.empty());
	ATF_REQUIRE(conds == std::vector<std::string>({ "", "c" }));
	ATF_REQUIRE_EQ(rp.groups.size(), (size_t)2);
	with_module(1, KINST_ABI_VERSION_MINOR, [&](Session &s) {
		fake.arm_offsets.clear();
		fake.arm_progs.clear();
		place_at_entry(s, rp);
		load_programs(s, rp);
		PlanArmed pa = arm_plan(s, rp, false);
		ATF_REQUIRE_EQ(pa.armed, (uint64_t)2);
		ATF_REQUIRE_EQ(pa.prog_id, rp.prog_id);
		ATF_REQUIRE(fake.arm_offsets == std::vector<uint32_t>({ 2, 3 }));
		ATF_REQUIRE_EQ(fake.arm_progs[0], rp.prog_id);
		ATF_REQUIRE(fake.arm_progs[1] != 0 && fake.arm_progs[1] != rp.prog_id);
	});
	check_no_violations();
	finish();
}

ATF_INIT_TEST_CASES(tcs)
{
	ATF_ADD_TEST_CASE(tcs, plan_at_entry);
	ATF_ADD_TEST_CASE(tcs, refusal_reason_asked_again);
	ATF_ADD_TEST_CASE(tcs, open_every_minor);
	ATF_ADD_TEST_CASE(tcs, feature_boundaries);
	ATF_ADD_TEST_CASE(tcs, session_every_minor);
	ATF_ADD_TEST_CASE(tcs, ts_clock_every_minor);
}
