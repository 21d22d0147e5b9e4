// SPDX-License-Identifier: BSD-2-Clause
// Proof on real data: for every function of a fixed sample of Debian's
// kernel modules (>= 200 .ko files from the linux-image package, Kyua
// config variable kernel_root), the instruction boundaries
// `kinstctl list-offsets --json` reports equal those of `objdump -d` over
// the same byte range; and the engine's decoder delimits every one of them
// itself: no instruction of the sample is undecodable (or after one), and
// no length came from kinstctl's Capstone fallback.  Totals are printed and
// asserted.
#include <atf-c++.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;
using nlohmann::json;

static const size_t kMinModules = 200;

// Runs a command, returns its stdout; fails the test on a non-zero exit.
static std::string
run_cmd(const std::string &cmd)
{
	FILE *p = popen(cmd.c_str(), "r");
	if (p == nullptr)
		ATF_FAIL("popen: " + cmd);
	std::string out;
	char buf[1 << 16];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		out.append(buf, n);
	int st = pclose(p);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		ATF_FAIL("command failed (status " + std::to_string(st) + "): " + cmd.substr(0, 300));
	return out;
}

static std::string
quote(const std::string &s)
{
	std::string r = "'";
	for (char c : s)
		r += c == '\'' ? std::string("'\\''") : std::string(1, c);
	return r + "'";
}

static uint64_t
hexval(const std::string &s)
{
	return std::stoull(s, nullptr, 16);
}

struct Func {
	std::string name, section;
	uint64_t start, size;
	std::set<uint64_t> ours;
};

// objdump -d: section -> instruction start addresses (section-relative in a .ko).
static std::map<std::string, std::map<uint64_t, std::string>>
objdump_boundaries(const std::string &file)
{
	std::map<std::string, std::map<uint64_t, std::string>> r;
	std::string out = run_cmd("objdump -d -z -w --no-show-raw-insn " + quote(file));
	std::string section;
	size_t pos = 0;
	while (pos < out.size()) {
		size_t eol = out.find('\n', pos);
		if (eol == std::string::npos)
			eol = out.size();
		std::string line = out.substr(pos, eol - pos);
		pos = eol + 1;
		const std::string dis = "Disassembly of section ";
		if (line.compare(0, dis.size(), dis) == 0) {
			section = line.substr(dis.size());
			if (!section.empty() && section.back() == ':')
				section.pop_back();
			continue;
		}
		// "   1a:\tmov ..." : an instruction.
		size_t i = line.find_first_not_of(' ');
		size_t colon = line.find(":\t");
		if (i == std::string::npos || colon == std::string::npos || colon <= i)
			continue;
		std::string a = line.substr(i, colon - i);
		if (a.find_first_not_of("0123456789abcdef") != std::string::npos)
			continue;
		r[section][hexval(a)] = line.substr(colon + 2);
	}
	return r;
}

ATF_TEST_CASE(objdump_boundaries);
ATF_TEST_CASE_HEAD(objdump_boundaries)
{
	set_md_var("descr", "list-offsets boundaries == objdump -d boundaries for every "
	    "function of >= 200 Debian kernel modules");
	set_md_var("timeout", "900");
}
ATF_TEST_CASE_BODY(objdump_boundaries)
{
	std::string root = has_config_var("kernel_root") ? get_config_var("kernel_root") : "";
	if (root.empty())
		ATF_SKIP("kernel_root is not set (run through tests/run, which fetches Debian's "
		    "linux-image package)");
	std::vector<std::string> kos;
	fs::path mods = fs::path(root) / "lib" / "modules";
	std::error_code ec;
	if (!fs::is_directory(mods, ec))
		ATF_SKIP("no " + mods.string() + ": Debian's kernel package is not extracted "
		    "(tests/lib/env.sh kinst_fetch_kernel)");
	for (auto it = fs::recursive_directory_iterator(mods, ec);
	    !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
		if (it->is_regular_file() && it->path().extension() == ".ko")
			kos.push_back(it->path().string());
	if (kos.size() < kMinModules)
		ATF_SKIP("only " + std::to_string(kos.size()) + " .ko files under " + mods.string());
	std::sort(kos.begin(), kos.end());
	// A fixed sample: every k-th module, at least kMinModules of them.
	size_t k = std::max<size_t>(1, kos.size() / (kMinModules + 10));
	std::vector<std::string> sample;
	for (size_t i = 0; i < kos.size(); i += k)
		sample.push_back(kos[i]);

	size_t nfuncs = 0, ninsns = 0, nbad = 0, nmods = 0, nreported = 0;
	size_t nundec = 0, nfallback = 0, ntotal_fallbacks = 0, ntotals = 0;
	const size_t batch = 25;
	for (size_t b = 0; b < sample.size(); b += batch) {
		std::string cmd = std::string(KINSTCTL_PATH) + " list-offsets --json --all";
		for (size_t i = b; i < std::min(sample.size(), b + batch); i++)
			cmd += " --module " + quote(sample[i]);
		std::string out = run_cmd(cmd);
		std::map<std::string, std::vector<Func>> funcs;	// file -> functions
		std::string file;
		size_t pos = 0;
		while (pos < out.size()) {
			size_t eol = out.find('\n', pos);
			if (eol == std::string::npos)
				eol = out.size();
			json j = json::parse(out.begin() + pos, out.begin() + eol);
			pos = eol + 1;
			std::string type = j.at("type");
			if (type == "function") {
				file = j.at("file");
				funcs[file].push_back(Func{j.at("function"), j.value("section", ""),
				    hexval(j.at("address")), j.at("size"), {}});
			} else if (type == "insn") {
				Func &f = funcs[file].back();
				f.ours.insert(f.start + j.at("offset").get<uint64_t>());
				std::string reason = j.value("reason", "");
				bool undec = reason == "undecodable" ||
				    reason == "after-undecodable";
				bool fb = j.contains("length_from");
				nundec += undec;
				nfallback += fb;
				if ((undec || fb) && nreported++ < 20)
					std::cerr << "UNDECODABLE " << file << ": " << f.name
					    << "+" << j.at("offset").get<uint64_t>() << " bytes "
					    << j.value("bytes", "") << " (" << j.value("text", "")
					    << "): reason " << reason << ", length from "
					    << j.value("length_from", "engine") << "\n";
			} else if (type == "total") {
				ntotals++;
				ntotal_fallbacks += j.at("length_fallbacks").get<size_t>();
			}
		}
		for (auto &kv : funcs) {
			nmods++;
			auto od = objdump_boundaries(kv.first);
			for (auto &f : kv.second) {
				nfuncs++;
				ninsns += f.ours.size();
				std::set<uint64_t> theirs;
				const auto &sec = od[f.section];
				for (auto it = sec.lower_bound(f.start);
				    it != sec.end() && it->first < f.start + f.size; ++it)
					theirs.insert(it->first);
				if (theirs == f.ours)
					continue;
				nbad++;
				if (nreported++ < 20) {
					std::vector<uint64_t> d;
					std::set_symmetric_difference(theirs.begin(), theirs.end(),
					    f.ours.begin(), f.ours.end(), std::back_inserter(d));
					uint64_t at = d.empty() ? f.start : d[0];
					auto it = sec.upper_bound(at);
					if (it != sec.begin())
						--it;
					std::cerr << "MISMATCH " << kv.first << ": " << f.name << " ("
					    << f.section << "+0x" << std::hex << f.start << ", " << std::dec
					    << f.size << " bytes): first difference at +0x" << std::hex
					    << (at - f.start) << std::dec << " ("
					    << (f.ours.count(at) ? "kinstctl only" : "objdump only")
					    << "); objdump near it: "
					    << (it != sec.end() ? it->second : std::string("?")) << "\n";
				}
			}
		}
	}
	std::cout << "proof: " << nmods << " modules (of " << kos.size() << "), " << nfuncs
	    << " functions, " << ninsns << " instructions; " << nbad
	    << " functions whose boundaries differ from objdump; " << nundec
	    << " undecodable (or after one), " << nfallback
	    << " lengths from kinstctl's Capstone fallback (totals say "
	    << ntotal_fallbacks << ")\n";
	std::cerr << "proof: " << nmods << " modules, " << nfuncs << " functions, " << ninsns
	    << " instructions, " << nbad << " mismatching functions\n";
	ATF_REQUIRE(nmods >= kMinModules);
	ATF_REQUIRE(nfuncs > 1000);
	ATF_REQUIRE(ntotals > 0);
	ATF_REQUIRE_EQ(ntotal_fallbacks, nfallback);
	if (nundec != 0 || nfallback != 0)
		ATF_FAIL(std::to_string(nundec) + " undecodable instructions (or after one) and " +
		    std::to_string(nfallback) + " lengths from the Capstone fallback in the sample: "
		    "the engine's decoder must delimit every instruction (see stderr)");
	if (nbad != 0)
		ATF_FAIL(std::to_string(nbad) + " of " + std::to_string(nfuncs) +
		    " functions have instruction boundaries that differ from objdump (see stderr)");
}

ATF_INIT_TEST_CASES(tcs)
{
	ATF_ADD_TEST_CASE(tcs, objdump_boundaries);
}
