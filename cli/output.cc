// SPDX-License-Identifier: BSD-2-Clause
#include "output.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "error.h"

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

} // namespace kinst
