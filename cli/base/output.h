// SPDX-License-Identifier: BSD-2-Clause
// Buffered stdout and the choice of text or JSON, shared by subcommands.
#ifndef KINSTCTL_OUTPUT_H
#define KINSTCTL_OUTPUT_H

#include <cstdio>
#include <string>

namespace kinst {

class Writer {
public:
	explicit Writer(FILE *f = stdout) : f_(f) { buf_.reserve(1 << 16); }
	~Writer() { flush_nothrow(); }
	Writer(const Writer &) = delete;
	Writer &operator=(const Writer &) = delete;
	void put(const std::string &s) { buf_ += s; if (buf_.size() >= (1 << 16)) flush(); }
	void put(const char *s) { buf_ += s; if (buf_.size() >= (1 << 16)) flush(); }
	void line(const std::string &s) { buf_ += s; buf_ += '\n'; if (buf_.size() >= (1 << 16)) flush(); }
	// Appending straight to the buffer: buffer() += ..., then commit().
	std::string &buffer() { return buf_; }
	void commit() { if (buf_.size() >= (1 << 16)) flush(); }
	// Throws Error(Exit::file) on a write error (EPIPE is quiet success).
	void flush();
	// For streams (trace): flush after every record if the output is a TTY.
	bool tty() const;

private:
	void flush_nothrow();
	FILE *f_;
	std::string buf_;
};

// Colour: only when stdout is a terminal, --no-color is not given and
// NO_COLOR is unset.
struct Style {
	bool color = false;
	static Style detect(FILE *f, bool no_color);
	std::string paint(const char *sgr, const std::string &s) const;
};

// --html FILE (cover, hist, latency): checked writable before anything is
// armed (an existing file is left as it is until the end); a file created
// for the run and not written (an error, a signal before the results) is
// removed again.  An empty path does nothing.  Throws Error(Exit::file).
class HtmlFile {
public:
	explicit HtmlFile(const std::string &path);
	~HtmlFile();
	HtmlFile(const HtmlFile &) = delete;
	HtmlFile &operator=(const HtmlFile &) = delete;
	bool wanted() const { return !path_.empty(); }
	void write(const std::string &doc);

private:
	std::string path_;
	bool created_ = false, done_ = false;
};

} // namespace kinst

#endif
