// SPDX-License-Identifier: BSD-2-Clause
// Capture files (trace --output FILE, kinstctl print FILE): the records as
// the module delivered them, after a header that says how to print them.
//
//   bytes 0-7    "KINSTCAP"
//   bytes 8-11   format version (1), little-endian
//   bytes 12-15  H: the header's length in bytes
//   then         H bytes of JSON (the header), zeros up to a multiple of 8
//   then         records, each a struct kinst_rec_hdr and hdr.size bytes
//                in all (a multiple of 8), as read(2) returned them
//   last         (a complete capture) one KINSTCAP_REC_END record: the
//                trace's summary as JSON
//
// The header (docs/kinstctl.8, CAPTURE FILES): {"format": "kinst-capture",
// "version": 1, "kinstctl", "abi", "isa" (the register file's, regfile.h:
// "x86-64" when missing), "host", "options": {"regs_all", "regs"
// (--regs LIST, "rdi,rsi": only when given; a reader that does not know it
// prints every register as regs_all says), "latency_from", "captures":
// [{"expr","str","len"}]}, "probes": [{"id",
// "name","module","function","offset","address","insn"}]}.
//
// The header's strings are JSON's, UTF-8 (an invalid byte in a name would
// come back as U+FFFD; kernel symbols and disassembly are ASCII).
// A capture file is input from anywhere: every length is checked, a bad
// file is an Error naming the byte where it went wrong, never a read out of
// bounds (fuzz target fuzz_cli_capture).
#ifndef KINSTCTL_CAPTURE_H
#define KINSTCTL_CAPTURE_H

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/record.h"
#include "device/session.h"

namespace kinst {

constexpr uint32_t KINSTCAP_VERSION = 1;
// A record type of the file only (never the module's: its types are small).
constexpr uint16_t KINSTCAP_REC_END = 0xcafe;

struct CaptureHeader {
	bool regs_all = false;
	std::vector<int> regs_list;	// --regs LIST (options.regs; none: empty)
	bool latency_from = false;
	std::vector<CaptureDesc> capd;
	std::map<uint32_t, ProbeDesc> probes;
	nlohmann::json raw;	// the whole header, as read
};

// Writes records to FILE.  Throws Error(Exit::file) on any failure.
class CaptureWriter {
public:
	CaptureWriter(const std::string &path, const CaptureHeader &h);
	~CaptureWriter();
	CaptureWriter(const CaptureWriter &) = delete;
	CaptureWriter &operator=(const CaptureWriter &) = delete;
	// One whole record (hdr.size bytes).
	void record(const uint8_t *p, size_t n);
	// The END record (the summary), then flush and close.
	void finish(const nlohmann::json &summary);
	uint64_t records() const { return records_; }

private:
	void put(const void *p, size_t n);
	void flush();
	std::string path_;
	int fd_ = -1;
	std::string buf_;
	uint64_t records_ = 0;
};

// Reads a capture: the header first, then records in order.
class CaptureReader {
public:
	// Throws Error(Exit::file) (cannot open) or Error(Exit::usage) (not a
	// capture, or a bad header).
	explicit CaptureReader(const std::string &path);
	// From memory (the fuzz target).
	CaptureReader(const uint8_t *p, size_t n);
	~CaptureReader();
	CaptureReader(const CaptureReader &) = delete;
	CaptureReader &operator=(const CaptureReader &) = delete;
	const CaptureHeader &header() const { return h_; }
	// The next hit record into r; false at the end.  Records of other
	// types are skipped (the END record is kept: summary()).  Throws
	// Error(Exit::usage) on a malformed record.
	bool next(HitRecord &r);
	// The END record's summary (null if the capture was cut short).
	const nlohmann::json &summary() const { return summary_; }

private:
	void parse_header();
	bool fill(size_t need);		// at least need bytes buffered?
	[[noreturn]] void bad(const std::string &why) const;
	FILE *f_ = nullptr;
	std::string path_;
	std::vector<uint8_t> buf_;
	size_t pos_ = 0;		// in buf_
	uint64_t off_ = 0;		// file offset of buf_[0]
	bool eof_ = false;
	CaptureHeader h_;
	nlohmann::json summary_;
};

} // namespace kinst

#endif
