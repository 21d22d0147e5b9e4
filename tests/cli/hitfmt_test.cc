// SPDX-License-Identifier: BSD-2-Clause
// The hit formatter (cli/output/hitfmt.h) against a reference: the DOM-built JSON
// line and the text line trace printed before the formatter wrote them
// directly (kept here, as they were), on random records: random registers
// and ids, process names and probe names with quotes, backslashes, control
// bytes, UTF-8 and invalid UTF-8, --mem/--str captures with every fault
// flag, --latency-from values.  Byte for byte, both outputs.
#include <atf-c++.hpp>

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "device/capture.h"
#include "base/error.h"
#include "base/regfile.h"
#include "base/text.h"
#include "output/hitfmt.h"
#include "base/record.h"
#include "output/record_text.h"
#include "device/session.h"

using namespace kinst;

namespace {

// The reference: trace's print_hit() before cli/output/hitfmt.cc (without --args,
// --var/--vars and --stack, whose members are dump()'s in both).
std::string
reference(const HitFormat &o, const std::map<uint32_t, ProbeDesc> &probes, const HitRecord &full)
{
	const struct kinst_hit_record &h = full.hit;
	auto it = probes.find(h.probe_id);
	ProbeDesc unknown;
	const ProbeDesc &d = it != probes.end() ? it->second : unknown;
	HitRecord user;
	const HitRecord *rp = &full;
	bool has_since = false;
	uint64_t since = 0;
	if (o.latency_from)
		for (const auto &c : full.caps)
			if (c.value && c.index == o.capd.size() && c.bytes.size() == 8 &&
			    (c.flags & KINST_SECF_NOSTATE) == 0) {
				memcpy(&since, c.bytes.data(), 8);
				has_since = true;
			}
	if (o.latency_from) {
		user = full;
		user.caps.clear();
		for (const auto &c : full.caps)
			if (c.index < o.capd.size())
				user.caps.push_back(c);
		rp = &user;
	}
	const HitRecord &r = *rp;
	std::string comm(h.comm, strnlen(h.comm, sizeof(h.comm)));
	std::string name = it != probes.end() ? d.name : "probe#" + std::to_string(h.probe_id);
	if (o.json) {
		nlohmann::json j;
		j["schema"] = KINST_JSON_SCHEMA;
		j["type"] = "hit";
		j["time_ns"] = h.timestamp_ns;
		j["cpu"] = h.cpu;
		j["pid"] = h.pid;
		j["tid"] = h.tid;
		j["comm"] = comm;
		j["probe_id"] = h.probe_id;
		j["probe"] = name;
		j["module"] = d.module;
		j["function"] = d.function;
		j["offset"] = d.offset;
		j["address"] = hex(h.addr);
		j["insn"] = d.insn;
		if (d.branch.set)
			j["target"] = d.branch.json();
		j["regs"] = o.regs_list.empty() ? json_regs(h.regs) : json_regs_list(h.regs, o.regs_list);
		if (o.latency_from)
			j["since_ns"] = has_since ? nlohmann::json(since) : nlohmann::json(nullptr);
		json_captures(j, r, o.capd);
		return json_line(j) + "\n";
	}
	char head[160];
	snprintf(head, sizeof(head), "%llu.%06llu cpu%u %d/%d %-16s ",
	    (unsigned long long)(h.timestamp_ns / 1000000000ull),
	    (unsigned long long)(h.timestamp_ns % 1000000000ull / 1000),
	    h.cpu, h.pid, h.tid, comm.c_str());
	std::string line = head;
	line += o.st.paint("1", name) + "  " + d.insn + d.branch.annotation();
	if (o.latency_from)
		line += has_since ? "  since=" + std::to_string(since) + "ns" : std::string("  since=-");
	if (!o.regs_list.empty())
		line += "  " + text_regs_list(h.regs, o.regs_list);
	else if (o.regs_all)
		line += "\n    " + text_regs(h.regs, true);
	else
		line += "  " + text_regs(h.regs, false);
	line += text_captures(r, o.capd);
	return line + "\n";
}

struct Gen {
	std::mt19937_64 rng{20261203};
	uint64_t u64() { return rng(); }
	uint64_t small(uint64_t n) { return rng() % n; }
	// Mostly plain names; sometimes every kind of byte.
	std::string str(size_t max)
	{
		static const char *const plain[] = {"kernel", "vfs_write", "mov %rdi, %rax",
		    "kernel:ksys_read+0x1c", "", "bash", "kworker/0:1"};
		if (small(3) != 0)
			return plain[small(sizeof(plain) / sizeof(plain[0]))];
		static const char *const odd[] = {"\"", "\\", "\n", "\t", "\x01", "\x7f",
		    "\xc3\xa9", "\xe2\x82\xac", "\xff", "\xc3", "/", "<", "a"};
		std::string s;
		size_t n = small(max + 1);
		for (size_t i = 0; i < n; i++)
			s += odd[small(sizeof(odd) / sizeof(odd[0]))];
		return s.substr(0, max);
	}
};

HitRecord
random_hit(Gen &g, const std::vector<CaptureDesc> &capd, bool latency)
{
	HitRecord r;
	memset(&r.hit, 0, sizeof(r.hit));
	r.hit.cpu = (uint32_t)g.small(300);
	r.hit.probe_id = (uint32_t)g.small(12);	// some not in the map
	r.hit.timestamp_ns = g.small(2) ? g.u64() : g.small(5000000000ull);
	r.hit.addr = g.u64();
	r.hit.pid = (int32_t)g.u64();
	r.hit.tid = (int32_t)g.u64();
	std::string comm = g.str(KINST_COMM_LEN);
	memcpy(r.hit.comm, comm.data(), std::min(comm.size(), sizeof(r.hit.comm)));
	for (int i = 0; i < KINST_NGPR; i++)
		r.hit.regs.gpr[i] = g.small(4) ? g.u64() : g.small(16);
	r.hit.regs.rip = g.u64();
	r.hit.regs.rflags = g.small(0x400000);
	r.hit.regs.cs = g.small(0x100);
	r.hit.regs.ss = g.small(0x100);
	for (uint32_t i = 0; i < capd.size(); i++) {
		if (g.small(4) == 0)
			continue;
		CaptureData c;
		c.index = i;
		c.str = capd[i].str;
		c.address = g.u64();
		static const uint16_t fl[] = {0, 0, KINST_SECF_FAULT, KINST_SECF_DEREF,
		    KINST_SECF_TRUNCATED};
		c.flags = fl[g.small(5)];
		c.bytes = g.str(40);
		r.caps.push_back(c);
	}
	if (latency && g.small(3) != 0) {
		CaptureData c;
		c.index = (uint32_t)capd.size();
		c.value = true;
		uint64_t v = g.u64() >> g.small(64);
		c.bytes.assign((const char *)&v, 8);
		if (g.small(4) == 0)
			c.flags = KINST_SECF_NOSTATE;
		r.caps.push_back(c);
	}
	return r;
}

// A branch target for a third of the probes, unresolved for some, in
// another module for some (fix: the header's strings are UTF-8).
template <class G, class F>
void
random_branch(G &g, ProbeDesc &d, F fix)
{
	uint64_t k = g.small(6);
	if (k > 1)
		return;
	d.branch.set = true;
	d.branch.address = g.u64();
	if (k == 1) {
		d.branch.resolved = true;
		d.branch.function = fix(g.str(20));
		d.branch.offset = g.small(100);
		d.branch.other_module = g.small(2) == 0;
		d.branch.module = d.branch.other_module ? fix(g.str(12)) : d.module;
	}
}

void
compare(bool json, bool regs_all, bool latency, bool color, int n,
    const std::vector<int> &regs_list = {})
{
	Gen g;
	std::map<uint32_t, ProbeDesc> probes;
	for (uint32_t id = 1; id < 9; id++) {
		ProbeDesc d;
		d.module = g.str(12);
		d.function = g.str(20);
		d.offset = (uint32_t)g.small(5000);
		d.insn = g.str(30);
		d.name = d.module + ":" + d.function + "+" + hex(d.offset);
		random_branch(g, d, [](const std::string &x) { return x; });
		probes[id] = d;
	}
	HitFormat f;
	f.json = json;
	f.regs_all = regs_all;
	f.regs_list = regs_list;
	f.latency_from = latency;
	f.st.color = color;
	f.capd = {CaptureDesc{"rsp", false, 16}, CaptureDesc{"rdi", true, 32},
	    CaptureDesc{"*(u64)rsi", false, 8}};
	HitFormatter fmt(f, probes);
	for (int i = 0; i < n; i++) {
		HitRecord r = random_hit(g, f.capd, latency);
		std::string got;
		fmt.format(r, got);
		std::string want = reference(f, probes, r);
		if (got != want)
			ATF_FAIL("record " + std::to_string(i) + ":\n got: " + got + "want: " + want);
		if (json)	// and a line jq can read
			ATF_REQUIRE(!nlohmann::json::parse(got).is_null());
	}
}

} // namespace

ATF_TEST_CASE_WITHOUT_HEAD(hit_json_matches_dom);
ATF_TEST_CASE_BODY(hit_json_matches_dom)
{
	compare(true, false, false, false, 20000);
	compare(true, false, true, false, 20000);
	// --regs LIST: only those members (sorted by dump(), whatever the order given).
	compare(true, false, false, false, 5000, {KINST_RDI});
	compare(true, true, true, false, 5000, {reg_lookup("ss"), KINST_R15, KINST_PREG_RFLAGS, KINST_RAX, KINST_PREG_RIP});
}

ATF_TEST_CASE_WITHOUT_HEAD(hit_text_matches_reference);
ATF_TEST_CASE_BODY(hit_text_matches_reference)
{
	compare(false, false, false, false, 20000);
	compare(false, true, true, false, 5000);
	compare(false, false, true, true, 5000);
	compare(false, true, false, false, 5000, {KINST_RSI, KINST_PREG_RFLAGS, KINST_RDI, reg_lookup("cs")});
}

// --regs LIST, by hand: one record, every way the list can be written.
ATF_TEST_CASE_WITHOUT_HEAD(regs_list);
ATF_TEST_CASE_BODY(regs_list)
{
	ATF_REQUIRE(parse_reg_list("rdi", "x") == std::vector<int>{KINST_RDI});
	ATF_REQUIRE((parse_reg_list("rip,rax,r15,rflags,cs,ss,rsp", "x") ==
	    std::vector<int>{KINST_PREG_RIP, KINST_RAX, KINST_R15, KINST_PREG_RFLAGS, reg_lookup("cs"), reg_lookup("ss"), KINST_RSP}));
	ATF_REQUIRE((parse_reg_list("rsi,rdi,rsi", "x") == std::vector<int>{KINST_RSI, KINST_RDI}));
	ATF_REQUIRE_EQ(reg_list_text(parse_reg_list("r8,rbp,rip", "x")), "r8,rbp,rip");
	for (const char *bad : {"", ",", "rdi,", ",rdi", "rdi,,rsi", "eax", "RDI", "rdi rsi",
	    "r16", "compact", "all", "rflag"}) {
		try {
			(void)parse_reg_list(bad, "trace: --regs");
			ATF_FAIL(std::string("accepted: \"") + bad + "\"");
		} catch (const Error &e) {
			ATF_REQUIRE_EQ((int)e.code(), (int)Exit::usage);
			ATF_REQUIRE(std::string(e.what()).find("trace: --regs") == 0);
		}
	}

	std::map<uint32_t, ProbeDesc> probes;
	ProbeDesc d;
	d.module = "kernel";
	d.function = "vfs_read";
	d.offset = 0x1c;
	d.insn = "mov %rdi, %rax";
	d.name = "kernel:vfs_read+0x1c";
	probes[7] = d;
	HitRecord r;
	memset(&r.hit, 0, sizeof(r.hit));
	r.hit.probe_id = 7;
	r.hit.cpu = 1;
	r.hit.pid = 42;
	r.hit.tid = 43;
	r.hit.timestamp_ns = 2000001000;
	memcpy(r.hit.comm, "cat", 4);
	for (int g = 0; g < KINST_NGPR; g++)
		r.hit.regs.gpr[g] = 0x100 + g;	// rax 0x100, rcx 0x101, ..., rdi 0x107
	r.hit.regs.rip = 0xffffffff81000010ull;
	r.hit.regs.rflags = 0x246;
	r.hit.regs.cs = 0x10;
	r.hit.regs.ss = 0x18;
	HitFormat f;
	f.regs_list = parse_reg_list("rdi,rflags,rip,cs", "x");
	std::string text;
	HitFormatter(f, probes).format(r, text);
	ATF_REQUIRE_EQ(text, "2.000001 cpu1 42/43 cat              kernel:vfs_read+0x1c  "
	    "mov %rdi, %rax  rdi=0x107 rflags=0x246[PF ZF IF] rip=0xffffffff81000010 cs=0x10\n");
	f.regs_all = true;	// a list wins over all
	text.clear();
	HitFormatter(f, probes).format(r, text);
	ATF_REQUIRE(text.find("  rdi=0x107 rflags=0x246[PF ZF IF] rip=0xffffffff81000010 cs=0x10\n") !=
	    std::string::npos);
	f.json = true;
	std::string js;
	HitFormatter(f, probes).format(r, js);
	nlohmann::json j = nlohmann::json::parse(js);
	ATF_REQUIRE_EQ(j.at("regs").dump(), "{\"cs\":\"0x10\",\"rdi\":\"0x107\","
	    "\"rflags\":\"0x246\",\"rip\":\"0xffffffff81000010\"}");
}

ATF_TEST_CASE_WITHOUT_HEAD(json_string_escapes);
ATF_TEST_CASE_BODY(json_string_escapes)
{
	// Every single byte, and a few sequences, as dump() writes them.
	for (int c = 0; c < 256; c++) {
		std::string s(1, (char)c), got;
		append_json_as_dump(got, s);
		ATF_REQUIRE_EQ(got, json_line(nlohmann::json(s)));
	}
	for (const char *s : {"", "plain", "a\"b\\c", "\xc3\xa9t\xc3\xa9", "\xe2\x82", "x\x1fy"}) {
		std::string got;
		append_json_as_dump(got, s);
		ATF_REQUIRE_EQ(got, json_line(nlohmann::json(std::string(s))));
	}
}

namespace {

// A capture of n random records (as trace --output writes one), and the
// lines a live trace would have printed for them.
std::vector<uint8_t>
make_capture(size_t n, bool json, bool with_end, std::string &live)
{
	Gen g;
	CaptureHeader ch;
	// The header is JSON: its strings are UTF-8 (invalid bytes would be
	// replaced; symbols and disassembly are ASCII).
	auto utf8 = [](const std::string &x) {
		return nlohmann::json::parse(json_line(nlohmann::json(x))).get<std::string>();
	};
	for (uint32_t id = 1; id < 9; id++) {
		ProbeDesc d;
		d.module = utf8(g.str(12));
		d.function = utf8(g.str(20));
		d.offset = (uint32_t)g.small(5000);
		d.insn = utf8(g.str(30));
		d.name = d.module + ":" + d.function + "+" + hex(d.offset);
		d.addr = g.u64();
		random_branch(g, d, utf8);
		ch.probes[id] = d;
	}
	ch.regs_all = true;
	ch.regs_list = {KINST_RDI, KINST_PREG_RFLAGS, KINST_RSI};	// --regs rdi,rflags,rsi
	ch.capd = {CaptureDesc{"rsp", false, 16}, CaptureDesc{"rdi", true, 32}};
	HitFormat f;
	f.json = json;
	f.regs_all = true;
	f.regs_list = ch.regs_list;
	f.capd = ch.capd;
	HitFormatter fmt(f, ch.probes);
	const char *path = "capture.kinst";
	{
		CaptureWriter w(path, ch);
		for (size_t i = 0; i < n; i++) {
			HitRecord r = random_hit(g, ch.capd, false);
			// The record as the module writes it: MEM/STR sections.
			std::vector<uint8_t> b((const uint8_t *)&r.hit,
			    (const uint8_t *)&r.hit + sizeof(r.hit));
			for (const auto &c : r.caps) {
				struct kinst_rec_sec sec = {};
				sec.type = c.str ? KINST_SEC_STR : KINST_SEC_MEM;
				sec.flags = c.flags;
				struct kinst_rec_cap rc = {};
				rc.index = c.index;
				rc.addr = c.address;
				rc.size = (uint32_t)c.bytes.size();
				std::string payload((const char *)&rc, sizeof(rc));
				payload += c.bytes;
				sec.len = (uint32_t)payload.size();
				b.insert(b.end(), (const uint8_t *)&sec, (const uint8_t *)&sec + sizeof(sec));
				b.insert(b.end(), payload.begin(), payload.end());
				b.resize((b.size() + 7) & ~(size_t)7);
			}
			struct kinst_rec_hdr h = {(uint32_t)b.size(), KINST_REC_HIT, 0};
			memcpy(b.data(), &h, sizeof(h));
			// What a live trace prints: the record as parsed.
			fmt.format(parse_hit_record(b.data(), b.size()), live);
			w.record(b.data(), b.size());
		}
		if (with_end)
			w.finish({{"hits", n + 3}, {"delivered", n}, {"dropped", 3}, {"records", n}});
	}
	FILE *fp = fopen(path, "rb");
	ATF_REQUIRE(fp != nullptr);
	std::vector<uint8_t> file;
	int c;
	while ((c = fgetc(fp)) != EOF)
		file.push_back((uint8_t)c);
	fclose(fp);
	return file;
}

std::string
print_capture(const std::vector<uint8_t> &file, bool json, size_t *n)
{
	CaptureReader rd(file.data(), file.size());
	HitFormat f;
	f.json = json;
	f.regs_all = rd.header().regs_all;
	f.regs_list = rd.header().regs_list;
	f.capd = rd.header().capd;
	HitFormatter fmt(f, rd.header().probes);
	std::string out;
	HitRecord r;
	*n = 0;
	while (rd.next(r)) {
		fmt.format(r, out);
		(*n)++;
	}
	return out;
}

void
same_lines(const std::string &got, const std::string &want)
{
	if (got == want)
		return;
	size_t i = 0;
	while (i < got.size() && i < want.size() && got[i] == want[i])
		i++;
	size_t from = i > 80 ? i - 80 : 0;
	ATF_FAIL("printed != live at byte " + std::to_string(i) + ":\n got: " +
	    got.substr(from, 300) + "\nwant: " + want.substr(from, 300));
}

Exit
capture_error(const std::vector<uint8_t> &file, std::string *msg = nullptr)
{
	try {
		size_t n;
		print_capture(file, true, &n);
	} catch (const Error &e) {
		if (msg)
			*msg = e.what();
		return e.code();
	}
	return Exit::ok;
}

} // namespace

// trace --output, then print: the lines a live trace printed for the same
// records, text and JSON; the summary comes back.
ATF_TEST_CASE_WITHOUT_HEAD(capture_round_trip);
ATF_TEST_CASE_BODY(capture_round_trip)
{
	for (int json = 0; json < 2; json++) {
		std::string live;
		std::vector<uint8_t> file = make_capture(3000, json, true, live);
		size_t n;
		same_lines(print_capture(file, json, &n), live);
		ATF_REQUIRE_EQ(n, 3000u);
		CaptureReader rd(file.data(), file.size());
		HitRecord r;
		while (rd.next(r))
			;
		ATF_REQUIRE_EQ(rd.summary().at("dropped").get<int>(), 3);
		ATF_REQUIRE_EQ(rd.header().probes.size(), 8u);
	}
	// Without its end record (cut at a record boundary): every record,
	// no summary.
	std::string live;
	std::vector<uint8_t> file = make_capture(100, true, false, live);
	size_t n;
	same_lines(print_capture(file, true, &n), live);
	CaptureReader rd(file.data(), file.size());
	HitRecord r;
	while (rd.next(r))
		;
	ATF_REQUIRE(rd.summary().is_null());
}

// A damaged capture is an error (exit 3) naming what is wrong, never a
// crash: bad magic, version, header length, header, cut records, bad sizes.
ATF_TEST_CASE_WITHOUT_HEAD(capture_damaged);
ATF_TEST_CASE_BODY(capture_damaged)
{
	std::string live;
	std::vector<uint8_t> good = make_capture(20, true, true, live);
	ATF_REQUIRE(capture_error(good) == Exit::ok);
	std::string msg;
	std::vector<uint8_t> f = good;
	f[0] = 'X';
	ATF_REQUIRE(capture_error(f, &msg) == Exit::file);
	ATF_REQUIRE(msg.find("magic") != std::string::npos);
	f = good;
	f[8] = 2;
	ATF_REQUIRE(capture_error(f, &msg) == Exit::file);
	ATF_REQUIRE(msg.find("version 2") != std::string::npos);
	f = good;
	f[15] = 0x7f;	// a header of ~2 GiB
	ATF_REQUIRE(capture_error(f) == Exit::file);
	f = good;
	f[16] = '[';	// not an object
	ATF_REQUIRE(capture_error(f) == Exit::file);
	// Cut anywhere inside the records but at a record boundary: an error.
	uint32_t hlen = good[12] | good[13] << 8 | good[14] << 16 | (uint32_t)good[15] << 24;
	size_t first = (16 + hlen + 7) & ~(size_t)7;
	size_t cuts = 0;
	for (size_t cut = 1; cut < good.size(); cut += 13) {
		f.assign(good.begin(), good.begin() + (ptrdiff_t)cut);
		Exit e = capture_error(f);
		if (cut < first)
			if (e != Exit::file)
				ATF_FAIL("cut at " + std::to_string(cut) + ": no error");
		else if (e != Exit::ok)
			cuts++;
	}
	ATF_REQUIRE(cuts > 0);
	// A record size that is not a multiple of 8, or too small.
	for (uint32_t bad : {0u, 4u, 7u, 12u, 0xffffff00u}) {
		f = good;
		memcpy(&f[first], &bad, 4);
		if (capture_error(f) != Exit::file)
			ATF_FAIL("record size " + std::to_string(bad) + ": no error");
	}
	// A hit record too short for its fixed part.
	f = good;
	uint32_t small = 16;
	memcpy(&f[first], &small, 4);
	ATF_REQUIRE(capture_error(f) == Exit::file);
	// Random bytes flipped: errors or records, never a crash.
	std::mt19937_64 rng(7);
	for (int i = 0; i < 3000; i++) {
		f = good;
		for (int k = 0; k < 4; k++)
			f[rng() % f.size()] = (uint8_t)rng();
		(void)capture_error(f);
	}
}

// Session's order_by_time: two rings' records, one ring after the other
// as a read or a pass over the mapping returns them, come out by time,
// equal times in their order, sections kept with their record; a
// malformed chunk is left as it is.
ATF_TEST_CASE_WITHOUT_HEAD(chunk_time_order);
ATF_TEST_CASE_BODY(chunk_time_order)
{
	Gen g;
	for (int round = 0; round < 200; round++) {
		std::vector<std::pair<uint64_t, std::vector<uint8_t>>> recs;
		std::vector<uint8_t> chunk;
		for (int cpu = 0; cpu < 3; cpu++) {
			uint64_t t = g.small(50);
			size_t nr = g.small(20);
			for (size_t i = 0; i < nr; i++) {
				t += g.small(4);	// sorted within a ring, ties too
				struct kinst_hit_record h;
				memset(&h, 0, sizeof(h));
				size_t extra = 8 * g.small(3);
				h.hdr.size = (uint32_t)(sizeof(h) + extra);
				h.hdr.type = KINST_REC_HIT;
				h.cpu = (uint32_t)cpu;
				h.probe_id = (uint32_t)i;
				h.timestamp_ns = t;
				std::vector<uint8_t> b(h.hdr.size, (uint8_t)(cpu * 16 + i));
				memcpy(b.data(), &h, sizeof(h));
				recs.push_back({t, b});
				chunk.insert(chunk.end(), b.begin(), b.end());
			}
		}
		std::stable_sort(recs.begin(), recs.end(),
		    [](const auto &a, const auto &b) { return a.first < b.first; });
		std::vector<uint8_t> want;
		for (const auto &r : recs)
			want.insert(want.end(), r.second.begin(), r.second.end());
		order_by_time(chunk.data(), chunk.size());
		ATF_REQUIRE(chunk == want);
	}
	// Malformed (a size past the end): untouched.
	std::vector<uint8_t> bad(2 * sizeof(struct kinst_hit_record), 0);
	struct kinst_hit_record h;
	memset(&h, 0, sizeof(h));
	h.hdr.size = sizeof(h);
	h.hdr.type = KINST_REC_HIT;
	h.timestamp_ns = 9;
	memcpy(bad.data(), &h, sizeof(h));
	h.hdr.size = 4096;
	h.timestamp_ns = 1;
	memcpy(bad.data() + sizeof(h), &h, sizeof(h));
	std::vector<uint8_t> copy = bad;
	order_by_time(bad.data(), bad.size());
	ATF_REQUIRE(bad == copy);
}

ATF_INIT_TEST_CASES(tcs)
{
	ATF_ADD_TEST_CASE(tcs, chunk_time_order);
	ATF_ADD_TEST_CASE(tcs, capture_round_trip);
	ATF_ADD_TEST_CASE(tcs, capture_damaged);
	ATF_ADD_TEST_CASE(tcs, hit_json_matches_dom);
	ATF_ADD_TEST_CASE(tcs, hit_text_matches_reference);
	ATF_ADD_TEST_CASE(tcs, json_string_escapes);
	ATF_ADD_TEST_CASE(tcs, regs_list);
}
