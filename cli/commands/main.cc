// SPDX-License-Identifier: BSD-2-Clause
// kinstctl: command line, and the one place errors are caught and turned
// into "kinstctl: <what>: <why>" and an exit code (error.h, kinstctl(8)).
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

#include <CLI/CLI.hpp>

#include "commands/commands.h"
#include "base/error.h"
#include "device/session.h"
#include "base/version.h"

#include "base/abi.h"

using namespace kinst;

static std::string
one_line(std::string s)
{
	for (char &c : s)
		if (c == '\n' || c == '\r')
			c = ' ';
	while (!s.empty() && s.back() == ' ')
		s.pop_back();
	return s;
}

int
main(int argc, char **argv)
{
	// SIGINT and SIGTERM are kinstctl's whatever it inherited (session.h);
	// a subcommand that arms probes stops cleanly on them from here on.
	// Which kind of command this is is known before the handler goes in:
	// a signal that found the handler in but the command not yet known
	// took the default action (seen: count, exit 130, in a script that
	// sent SIGINT once the handler showed in /proc/PID/status).
	bool arms = false;
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-')
			continue;
		for (const char *c : { "trace", "count", "hist", "cover", "latency" })
			if (strcmp(argv[i], c) == 0)
				arms = true;
		break;
	}
	own_signals(arms);
	// A closed pipe (kinstctl ... | head) ends output quietly.
	signal(SIGPIPE, SIG_IGN);

	CLI::App app{"kinstctl: trace any instruction of a kernel function (kinst)"};
	app.name("kinstctl");
	app.set_version_flag("--version", std::string("kinstctl ") + KINSTCTL_VERSION +
	    " (kinst ABI " + std::to_string(KINST_ABI_VERSION_MAJOR) + "." +
	    std::to_string(KINST_ABI_VERSION_MINOR) + ")");
	app.require_subcommand(1);
	app.footer(std::string(spec_help) + "\nSee kinstctl(8).");
	Runner run;
	add_list_offsets(app, run);
	add_list_inlines(app, run);
	add_list_vars(app, run);
	add_resolve(app, run);
	add_trace(app, run);
	add_count(app, run);
	add_hist(app, run);
	add_cover(app, run);
	add_latency(app, run);
	add_print(app, run);

	// count/hist/cover ... -- COMMAND ARGS: the command is not for CLI11.
	bool agg = false;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		if (a == "count" || a == "hist" || a == "cover" || a == "latency")
			agg = true;
		if (a == "--" && agg) {
			g_command.assign(argv + i + 1, argv + argc);
			if (g_command.empty()) {
				fprintf(stderr, "kinstctl: usage: -- needs a command to run\n");
				return (int)Exit::usage;
			}
			argc = i;
			break;
		}
	}

	try {
		try {
			app.parse(argc, argv);
		} catch (const CLI::CallForHelp &e) {
			return app.exit(e);
		} catch (const CLI::CallForAllHelp &e) {
			return app.exit(e);
		} catch (const CLI::CallForVersion &e) {
			return app.exit(e);
		} catch (const CLI::ParseError &e) {
			if (e.get_exit_code() == 0)
				return app.exit(e);
			fprintf(stderr, "kinstctl: usage: %s (see kinstctl --help)\n",
			    one_line(e.what()).c_str());
			return (int)Exit::usage;
		}
		if (!run)
			throw Error(Exit::usage, "no subcommand");
		return run();
	} catch (const Error &e) {
		fflush(stdout);
		if (e.code() == Exit::ok)
			return 0;
		fprintf(stderr, "kinstctl: %s\n", one_line(e.what()).c_str());
		return (int)e.code();
	} catch (const std::bad_alloc &) {
		fprintf(stderr, "kinstctl: out of memory\n");
		return (int)Exit::internal;
	} catch (const std::exception &e) {
		fprintf(stderr, "kinstctl: internal error: %s\n", one_line(e.what()).c_str());
		return (int)Exit::internal;
	}
}
