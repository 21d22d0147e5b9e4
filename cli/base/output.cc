// SPDX-License-Identifier: BSD-2-Clause
#include "base/output.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "base/error.h"

namespace kinst {

void
Writer::flush()
{
	if (buf_.empty())
		return;
	size_t n = fwrite(buf_.data(), 1, buf_.size(), f_);
	buf_.clear();
	if (n == 0 || fflush(f_) != 0) {
		if (errno == EPIPE)
			throw Error(Exit::ok, "");
		throw Error(Exit::file, std::string("standard output: ") + strerror(errno));
	}
}

void
Writer::flush_nothrow()
{
	if (!buf_.empty())
		fwrite(buf_.data(), 1, buf_.size(), f_);
	buf_.clear();
	fflush(f_);
}

bool
Writer::tty() const
{
	return isatty(fileno(f_)) == 1;
}

Style
Style::detect(FILE *f, bool no_color)
{
	Style s;
	const char *nc = getenv("NO_COLOR");
	const char *term = getenv("TERM");
	s.color = !no_color && (nc == nullptr || *nc == '\0') && isatty(fileno(f)) == 1 &&
	    !(term != nullptr && strcmp(term, "dumb") == 0);
	return s;
}

std::string
Style::paint(const char *sgr, const std::string &s) const
{
	if (!color)
		return s;
	return std::string("\033[") + sgr + "m" + s + "\033[0m";
}

HtmlFile::HtmlFile(const std::string &path) : path_(path)
{
	if (path.empty())
		return;
	int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
	created_ = fd >= 0;
	if (fd < 0 && errno == EEXIST)
		fd = open(path.c_str(), O_WRONLY);
	if (fd < 0)
		throw Error(Exit::file, path + ": cannot write: " + strerror(errno));
	close(fd);
}

HtmlFile::~HtmlFile()
{
	if (created_ && !done_)
		unlink(path_.c_str());
}

void
HtmlFile::write(const std::string &doc)
{
	std::ofstream f(path_, std::ios::out | std::ios::trunc);
	f << doc;
	f.close();
	if (!f)
		throw Error(Exit::file, path_ + ": write failed");
	done_ = true;
}

} // namespace kinst
