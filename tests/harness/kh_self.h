// SPDX-License-Identifier: BSD-2-Clause
// The test executable's own path, for the harness tests that have kinstctl
// read their own code and DWARF offline (vars_test, latency_test).
#ifndef KH_SELF_H
#define KH_SELF_H

#include <unistd.h>

#include <string>

#include <atf-c++.hpp>

inline std::string
kh_self_path()
{
	char buf[4096];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	ATF_REQUIRE(n > 0);
	buf[n] = 0;
	return buf;
}

#endif
