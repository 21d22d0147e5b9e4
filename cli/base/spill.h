// SPDX-License-Identifier: BSD-2-Clause
// Spill<T>: records of a trivially copyable type kept in order on disk
// instead of in memory, for a run of unbounded length that can only write
// them out at its end (latency --perfetto --by stack: the stack tables are
// read after the run).  Memory: one 1 MiB stdio buffer, whatever the count.
// The file is created beside a path the caller names (the output it is
// writing: the same disk, which that output fills at least as fast; else
// $TMPDIR or /tmp) and unlinked at once, so nothing is left behind by a
// crash.
#ifndef KINSTCTL_SPILL_H
#define KINSTCTL_SPILL_H

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "base/error.h"

namespace kinst {

template <typename T>
class Spill {
	static_assert(std::is_trivially_copyable<T>::value, "Spill<T>: T is written as bytes");

public:
	// beside: a file path whose directory holds the spill ("" or no
	// directory part: the current directory).  what: for messages.
	// Where that directory takes no file (beside is /dev/stdout, say): in
	// $TMPDIR, or /tmp.
	Spill(const std::string &beside, const std::string &what) : what_(what)
	{
		size_t slash = beside.rfind('/');
		std::string dir = slash == std::string::npos ? "." :
		    slash == 0 ? "/" : beside.substr(0, slash);
		const char *tmp = getenv("TMPDIR");
		std::string other = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
		int fd = make(dir);
		if (fd < 0 && other != dir) {
			int e = errno;
			fd = make(other);
			if (fd < 0)
				errno = e;
		}
		if (fd < 0)
			throw Error(Exit::file, what_ + ": a spill file in " + dir + " or " + other +
			    ": " + strerror(errno));
		f_ = fdopen(fd, "w+");
		if (f_ == nullptr) {
			int e = errno;
			close(fd);
			throw Error(Exit::file, what_ + ": " + strerror(e));
		}
		setvbuf(f_, nullptr, _IOFBF, 1 << 20);
	}
	~Spill()
	{
		if (f_ != nullptr)
			fclose(f_);
	}
	Spill(const Spill &) = delete;
	Spill &operator=(const Spill &) = delete;

	void push(const T &v)
	{
		if (fwrite(&v, sizeof(v), 1, f_) != 1)
			throw Error(Exit::file, what_ + ": writing the spill file: " + strerror(errno));
		n_++;
	}
	uint64_t size() const { return n_; }
	bool empty() const { return n_ == 0; }
	// fn(const T &) on each record, in the order pushed; then the spill is empty.
	template <typename Fn>
	void drain(Fn fn)
	{
		if (fflush(f_) != 0 || fseek(f_, 0, SEEK_SET) != 0)
			throw Error(Exit::file, what_ + ": the spill file: " + strerror(errno));
		std::vector<T> chunk(4096);
		uint64_t left = n_;
		while (left > 0) {
			size_t want = (size_t)std::min<uint64_t>(left, chunk.size());
			size_t got = fread(chunk.data(), sizeof(T), want, f_);
			if (got == 0)
				throw Error(Exit::file, what_ + ": reading the spill file back: " +
				    (ferror(f_) ? strerror(errno) : "short"));
			for (size_t i = 0; i < got; i++)
				fn(chunk[i]);
			left -= got;
		}
		n_ = 0;
		if (fseek(f_, 0, SEEK_SET) != 0 || ftruncate(fileno(f_), 0) != 0)
			throw Error(Exit::file, what_ + ": the spill file: " + strerror(errno));
	}

private:
	// An unlinked file in dir, or -1 (errno).
	static int make(const std::string &dir)
	{
		std::string tmpl = dir + "/.kinstctl-spill-XXXXXX";
		std::vector<char> p(tmpl.begin(), tmpl.end());
		p.push_back('\0');
		int fd = mkstemp(p.data());
		if (fd >= 0)
			unlink(p.data());
		return fd;
	}

	std::string what_;
	FILE *f_ = nullptr;
	uint64_t n_ = 0;
};

} // namespace kinst

#endif
