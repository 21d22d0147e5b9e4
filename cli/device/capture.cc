// SPDX-License-Identifier: BSD-2-Clause
#include "device/capture.h"

#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "base/regfile.h"
#include "base/spec.h"
#include "base/text.h"
#include "base/version.h"

#include "base/abi.h"

namespace kinst {

namespace {

const char magic[8] = {'K', 'I', 'N', 'S', 'T', 'C', 'A', 'P'};
// A header larger than this is not ours (a session has at most a few
// hundred thousand probes; each takes ~200 bytes).
constexpr uint32_t header_max = 256u << 20;

void
put_u32(std::string &s, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		s += (char)(v >> (8 * i));
}

uint32_t
get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

nlohmann::json
header_json(const CaptureHeader &h)
{
	nlohmann::json j;
	j["format"] = "kinst-capture";
	j["version"] = KINSTCAP_VERSION;
	j["kinstctl"] = KINSTCTL_VERSION;
	j["abi"] = std::to_string(KINST_ABI_VERSION_MAJOR) + "." +
	    std::to_string(KINST_ABI_VERSION_MINOR);
	j["isa"] = regfile.isa;
	struct utsname u;
	if (uname(&u) == 0)
		j["host"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
	nlohmann::json o;
	o["regs_all"] = h.regs_all;
	if (!h.regs_list.empty())
		o["regs"] = reg_list_text(h.regs_list);
	o["latency_from"] = h.latency_from;
	o["captures"] = nlohmann::json::array();
	for (const auto &c : h.capd)
		o["captures"].push_back({{"expr", c.expr}, {"str", c.str}, {"len", c.len}});
	j["options"] = o;
	j["probes"] = nlohmann::json::array();
	for (const auto &p : h.probes) {
		nlohmann::json e = {{"id", p.first}, {"name", p.second.name},
		    {"module", p.second.module}, {"function", p.second.function},
		    {"offset", p.second.offset}, {"address", hex(p.second.addr)},
		    {"insn", p.second.insn}};
		if (p.second.branch.set)
			e["target"] = p.second.branch.json();
		j["probes"].push_back(e);
	}
	return j;
}

} // namespace

// ---- writing ----

CaptureWriter::CaptureWriter(const std::string &path, const CaptureHeader &h)
    : path_(path)
{
	fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd_ < 0)
		throw Error(Exit::file, path + ": " + strerror(errno));
	std::string hj = json_line(header_json(h));
	buf_.reserve(1 << 20);
	buf_.append(magic, sizeof(magic));
	put_u32(buf_, KINSTCAP_VERSION);
	put_u32(buf_, (uint32_t)hj.size());
	buf_ += hj;
	buf_.append((8 - buf_.size() % 8) % 8, '\0');
	flush();
}

// Without finish() (an error stopped the trace): the records so far, no
// END record; print warns that the capture was cut short.
CaptureWriter::~CaptureWriter()
{
	if (fd_ < 0)
		return;
	try {
		flush();
	} catch (const Error &) {
	}
	close(fd_);
}

void
CaptureWriter::put(const void *p, size_t n)
{
	buf_.append((const char *)p, n);
	if (buf_.size() >= (1u << 20))
		flush();
}

void
CaptureWriter::flush()
{
	size_t done = 0;
	while (done < buf_.size()) {
		ssize_t w = write(fd_, buf_.data() + done, buf_.size() - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			throw Error(Exit::file, path_ + ": write: " +
			    (w < 0 ? strerror(errno) : "no progress"));
		done += (size_t)w;
	}
	buf_.clear();
}

void
CaptureWriter::record(const uint8_t *p, size_t n)
{
	put(p, n);
	records_++;
}

void
CaptureWriter::finish(const nlohmann::json &summary)
{
	std::string s = json_line(summary);
	struct kinst_rec_hdr hdr;
	size_t len = sizeof(hdr) + s.size();
	len = (len + 7) & ~(size_t)7;
	hdr.size = (uint32_t)len;
	hdr.type = KINSTCAP_REC_END;
	hdr.flags = 0;
	put(&hdr, sizeof(hdr));
	put(s.data(), s.size());
	buf_.append(len - sizeof(hdr) - s.size(), '\0');
	flush();
	if (close(fd_) != 0) {
		fd_ = -1;
		throw Error(Exit::file, path_ + ": close: " + strerror(errno));
	}
	fd_ = -1;
}

// ---- reading ----

CaptureReader::CaptureReader(const std::string &path) : path_(path)
{
	f_ = fopen(path.c_str(), "rb");
	if (f_ == nullptr)
		throw Error(Exit::file, path + ": " + strerror(errno));
	parse_header();
}

CaptureReader::CaptureReader(const uint8_t *p, size_t n)
    : path_("<memory>"), buf_(p, p + n), eof_(true)
{
	parse_header();
}

CaptureReader::~CaptureReader()
{
	if (f_ != nullptr)
		fclose(f_);
}

void
CaptureReader::bad(const std::string &why) const
{
	throw Error(Exit::file, path_ + ": not a valid kinst capture (byte " +
	    std::to_string(off_ + pos_) + "): " + why);
}

bool
CaptureReader::fill(size_t need)
{
	if (buf_.size() - pos_ >= need)
		return true;
	if (eof_)
		return false;
	// Keep what is left, read more.
	buf_.erase(buf_.begin(), buf_.begin() + (ptrdiff_t)pos_);
	off_ += pos_;
	pos_ = 0;
	size_t want = std::max(need, (size_t)1 << 20);
	while (buf_.size() < want && !eof_) {
		size_t have = buf_.size();
		buf_.resize(want);
		size_t got = fread(buf_.data() + have, 1, want - have, f_);
		buf_.resize(have + got);
		if (got == 0) {
			if (ferror(f_))
				throw Error(Exit::file, path_ + ": read: " + strerror(errno));
			eof_ = true;
		}
	}
	return buf_.size() >= need;
}

void
CaptureReader::parse_header()
{
	if (!fill(16) || memcmp(buf_.data(), magic, sizeof(magic)) != 0)
		bad("no KINSTCAP magic (not written by kinstctl trace --output)");
	uint32_t ver = get_u32(&buf_[8]), hlen = get_u32(&buf_[12]);
	if (ver != KINSTCAP_VERSION)
		bad("format version " + std::to_string(ver) + " (this kinstctl reads " +
		    std::to_string(KINSTCAP_VERSION) + ")");
	if (hlen > header_max)
		bad("a header of " + std::to_string(hlen) + " bytes");
	pos_ = 16;
	size_t padded = ((16 + (size_t)hlen + 7) & ~(size_t)7) - 16;
	if (!fill(padded))
		bad("the header is cut short");
	// Parsed through char pointers, not buf_'s uint8_t iterators: that
	// needs std::char_traits<unsigned char>, which libc++ 19 (FreeBSD
	// 15) no longer has.
	const char *h = reinterpret_cast<const char *>(buf_.data()) + pos_;
	nlohmann::json j = nlohmann::json::parse(h, h + hlen, nullptr, false);
	if (j.is_discarded() || !j.is_object())
		bad("the header is not a JSON object");
	try {
		if (j.at("format") != "kinst-capture")
			bad("the header's format is not kinst-capture");
		// Records carry the register file of the kernel that made
		// them; a file without "isa" is from before arm64 (x86-64).
		std::string isa = j.contains("isa") ? j.at("isa").get<std::string>() : "x86-64";
		if (isa != regfile.isa)
			bad("its records are " + isa + "'s and this kinstctl reads " +
			    regfile.isa + "'s: print it with a kinstctl built for " + isa);
		const auto &o = j.at("options");
		h_.regs_all = o.at("regs_all").get<bool>();
		if (o.contains("regs")) {
			try {
				h_.regs_list = parse_reg_list(o.at("regs").get<std::string>(),
				    "--regs");
			} catch (const Error &e) {
				bad(std::string("the header's options.regs: ") + e.what());
			}
		}
		h_.latency_from = o.at("latency_from").get<bool>();
		for (const auto &c : o.at("captures")) {
			CaptureDesc d;
			d.expr = c.at("expr").get<std::string>();
			d.str = c.at("str").get<bool>();
			d.len = c.at("len").get<uint32_t>();
			h_.capd.push_back(d);
		}
		for (const auto &p : j.at("probes")) {
			ProbeDesc d;
			uint32_t id = p.at("id").get<uint32_t>();
			d.name = p.at("name").get<std::string>();
			d.module = p.at("module").get<std::string>();
			d.function = p.at("function").get<std::string>();
			d.offset = p.at("offset").get<uint32_t>();
			std::string a = p.at("address").get<std::string>();
			uint64_t addr;
			if (!parse_number(a, UINT64_MAX, &addr))
				bad("probe " + std::to_string(id) + ": address " + a);
			d.addr = addr;
			d.insn = p.at("insn").get<std::string>();
			// (Captures before branch targets were named have none.)
			if (p.contains("target")) {
				const nlohmann::json &t = p.at("target");
				uint64_t ta;
				std::string tas = t.at("address").get<std::string>();
				if (!parse_number(tas, UINT64_MAX, &ta))
					bad("probe " + std::to_string(id) + ": target address " + tas);
				d.branch.set = true;
				d.branch.address = ta;
				if (!t.at("function").is_null()) {
					d.branch.resolved = true;
					d.branch.function = t.at("function").get<std::string>();
					d.branch.module = t.at("module").get<std::string>();
					d.branch.offset = t.at("offset").get<uint64_t>();
					d.branch.other_module = d.branch.module != d.module;
				}
			}
			if (!h_.probes.emplace(id, d).second)
				bad("probe " + std::to_string(id) + " twice in the header");
		}
	} catch (const nlohmann::json::exception &e) {
		bad(std::string("the header: ") + e.what());
	}
	h_.raw = std::move(j);
	pos_ += padded;
}

bool
CaptureReader::next(HitRecord &r)
{
	for (;;) {
		if (!fill(sizeof(struct kinst_rec_hdr))) {
			if (buf_.size() != pos_)
				bad("a record header cut short");
			return false;
		}
		struct kinst_rec_hdr hdr;
		memcpy(&hdr, &buf_[pos_], sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size % 8 != 0)
			bad("a record of " + std::to_string(hdr.size) + " bytes");
		if (!fill(hdr.size))
			bad("a record cut short (" + std::to_string(hdr.size) + " bytes)");
		const uint8_t *p = &buf_[pos_];
		if (hdr.type == KINST_REC_HIT) {
			try {
				r = parse_hit_record(p, hdr.size);
			} catch (const Error &e) {
				bad(e.what());
			}
			pos_ += hdr.size;
			return true;
		}
		if (hdr.type == KINSTCAP_REC_END) {
			size_t n = hdr.size - sizeof(hdr);
			std::string s((const char *)p + sizeof(hdr), n);
			s.resize(strnlen(s.c_str(), s.size()));
			summary_ = nlohmann::json::parse(s, nullptr, false);
			if (summary_.is_discarded() || !summary_.is_object())
				bad("the summary is not a JSON object");
		}
		pos_ += hdr.size;
	}
}

} // namespace kinst
