// SPDX-License-Identifier: BSD-2-Clause
// kinstctl list-offsets: every instruction of a function with the engine's
// verdict on it.
#include <sys/stat.h>

#include <map>
#include <memory>
#include <cstring>
#include <set>
#include <utility>

#include "commands/commands.h"
#include "debuginfo/debuginfo.h"
#include "base/error.h"
#include "output/insn_format.h"
#include "symbols/resolver.h"
#include "symbols/returns.h"
#include "symbols/sources.h"

namespace kinst {

namespace {

struct ListOffsets {
	std::vector<std::string> specs;
	bool all = false;
	SourceOptions src;
	OutputOptions out;
	bool source = false;		// --source: file:line, source text, inline chain
	std::string source_dir;
	DebugOptions dbg;
	std::unique_ptr<SourceAnnotator> ann;
	InsnText txt_;		// list_one's, refilled per instruction

	int run();
	void list_one(SymbolTable &syms, const Target &t, Disassembler &dis,
	    const Style &st, Writer &w, Tally &total);
};

// A jmp whose target is a retpoline thunk is an indirect jump in disguise
// (kinst_jopt.h, KINST_JOPT_INDIRECT).
bool
thunk_jump(const SymbolTable &syms, Module &m, const Function &fn, const Insn &in)
{
	static const char *const prefixes[] = { "__x86_indirect_thunk", "__x86_indirect_jump_thunk" };
	if (in.cls.treatment != KINST_T_EMULATE || in.cls.emul != KINST_EM_JMP_REL)
		return false;
	uint64_t fn_addr = fn.addr, fn_size = fn.size;
	std::vector<std::string> names;
	// Unlinked: the relocation names the target (insn_text's reloc).
	std::string reloc = m.relocatable() ? m.relocation(fn, in.addr, in.len) : "";
	if (!reloc.empty())
		names.push_back(reloc);
	struct kinst_insn d;
	if (insn_decode(in, &d)) {
		uint64_t target = in.addr + in.len + (uint64_t)d.imm;
		if (target < fn_addr || target >= fn_addr + fn_size)
			for (const auto &r : syms.containing_from(fn, target))
				names.push_back(syms.function(r).name);
	}
	for (const auto &n : names)
		for (const char *p : prefixes)
			if (n.compare(0, strlen(p), p) == 0)
				return true;
	return false;
}

// The instructions of a function for kinst_jopt_qualify_decoded(): the
// walk's own decodes (asked in order: a cursor), and per byte offset the
// refusals only kinstctl knows.
struct JoptInput {
	const std::vector<Insn> &insns;
	std::vector<int> refusal;	// per byte offset
	size_t next = 0;

	static int
	decode(void *ctx, uint32_t pos, struct kinst_insn *insn, struct kinst_class *cls)
	{
		JoptInput &x = *static_cast<JoptInput *>(ctx);
		while (x.next < x.insns.size() && x.insns[x.next].offset < pos)
			x.next++;
		if (x.next == x.insns.size() || x.insns[x.next].offset != pos)
			return KINST_DEC_INVALID;
		const Insn &in = x.insns[x.next];
		if (in.a64 || in.dec_status != KINST_DEC_OK || in.unreachable ||
		    in.len_from != Insn::LenFrom::engine)
			return KINST_DEC_INVALID;
		*insn = in.dec;
		*cls = in.cls;
		return KINST_DEC_OK;
	}
	static int
	refused(void *ctx, uint32_t off)
	{
		return static_cast<JoptInput *>(ctx)->refusal[off];
	}
};

// Which instructions may take a jump (KINST_JQ_*): with the engine's
// verdicts (insns' cls, before the live kernel's are applied), the
// kernel's refusals (kernel[i] for insns[i]: every instruction of a window
// matters, so they are asked for all of them) and jumps to retpoline thunks.
void
qualify_jopt(const SymbolTable &syms, Module &m, const Function &fn, const Bytes &b,
    std::vector<Insn> &insns, const std::vector<int> &kernel)
{
	if (b.size == 0 || b.size > UINT32_MAX)
		return;
	JoptInput x{insns, std::vector<int>(b.size, KINST_R_NONE)};
	for (size_t i = 0; i < insns.size(); i++) {
		const Insn &in = insns[i];
		if (in.offset >= b.size)
			continue;
		if (!traceable(in))
			x.refusal[in.offset] = in.cls.reason != KINST_R_NONE ? (int)in.cls.reason :
			    (int)KINST_R_UNDECODABLE;
		else if (kernel[i] != KINST_R_NONE)
			x.refusal[in.offset] = kernel[i];
		else if (thunk_jump(syms, m, fn, in))
			x.refusal[in.offset] = KINST_JOPT_INDIRECT;
	}
	std::vector<uint8_t> out(b.size);
	kinst_jopt_qualify_decoded(b.data, (uint32_t)b.size, JoptInput::decode,
	    JoptInput::refused, &x, out.data());
	for (auto &in : insns)
		if (in.offset < b.size && !in.unreachable)
			in.jopt = out[in.offset];
}

void
ListOffsets::list_one(SymbolTable &syms, const Target &t, Disassembler &dis,
    const Style &st, Writer &w, Tally &total)
{
	Module &m = syms.module(t.module);
	Bytes b = m.bytes(*t.fn);
	std::vector<Insn> insns = walk(m, *t.fn, dis);
	// On a live kernel, what only the kernel knows (ftrace sites, fixups,
	// excluded functions...) overrides "traceable".  Asked for every
	// instruction, even with one offset: a jump-optimization window
	// covers the next ones, and a fixup anywhere disqualifies them all.
	// A reason this kinstctl does not know (a newer module's) is still a
	// refusal, shown as reason-N.  Applied after the jump qualification,
	// which wants the engine's own verdicts beside them.
	std::vector<int> kernel(insns.size(), KINST_R_NONE);
	for (size_t i = 0; i < insns.size(); i++) {
		Insn &in = insns[i];
		if (!traceable(in) || in.unreachable)
			continue;
		int r = m.kernel_verdict(*t.fn, in.offset, &in.sessions);
		if (r > KINST_R_NONE && r <= UINT8_MAX)
			kernel[i] = r;
	}
	if (!m.a64())	// no jump-optimized probes on arm64 (yet)
		qualify_jopt(syms, m, *t.fn, b, insns, kernel);
	for (size_t i = 0; i < insns.size(); i++)
		if (kernel[i] != KINST_R_NONE) {
			insns[i].cls.treatment = KINST_T_REFUSE;
			insns[i].cls.emul = KINST_EM_NONE;
			insns[i].cls.reason = (uint8_t)kernel[i];
		}
	std::map<uint32_t, ReturnPoint> rets;
	for (const auto &r : return_points(syms, m, *t.fn, insns))
		rets[r.offset] = r;
	Tally tally;
	tally.functions = 1;
	std::string prefix;
	if (out.json) {
		append_json_function(w.buffer(), syms, *t.fn);
		w.line("");
		prefix = json_insn_prefix(syms, *t.fn);
	} else {
		w.line(text_function_header(syms, *t.fn, st));
	}
	if (ann)
		ann->start_function();
	std::vector<std::string> src_lines;
	for (size_t i = 0; i < insns.size(); i++) {
		const Insn &in = insns[i];
		if (!t.whole && in.offset != t.offset)
			continue;
		// One InsnText for all: its strings keep their capacity.
		insn_text(txt_, dis, syms, m, *t.fn, in);
		const InsnText &txt = txt_;
		tally.add(in);
		if (out.json) {
			// Straight into the output: everything below only
			// appends to this object's end.
			std::string &line = w.buffer();
			append_json_insn(line, prefix, in, txt);
			auto ri = rets.find(in.offset);
			if (ri != rets.end() && !line.empty() && line.back() == '}') {
				line.pop_back();
				line += std::string(",\"return\":\"") + return_kind_name(ri->second.kind) + "\"";
				if (ri->second.cc >= 0)
					line += ",\"return_cc\":" + std::to_string(ri->second.cc);
				if (!ri->second.leaves_if.empty()) {
					line += ",\"return_if\":";
					append_json_string(line, ri->second.leaves_if);
				}
				if (!ri->second.target.empty()) {
					line += ",\"tail_call\":";
					append_json_string(line, ri->second.target);
				}
				line += "}";
			}
			if (in.sessions != 0 && !line.empty() && line.back() == '}') {
				line.pop_back();
				line += ",\"sessions\":" + std::to_string(in.sessions) + "}";
			}
			if (ann)
				ann->json_fields(t.module, *t.fn, in, line);
			line += '\n';
			w.commit();
		} else {
			if (ann) {
				src_lines.clear();
				ann->text_lines(t.module, *t.fn, in, src_lines);
				for (const auto &l : src_lines)
					w.line(l);
			}
			auto ri = rets.find(in.offset);
			std::string &b = w.buffer();
			append_text_insn_row(b, in, txt, m.relocatable(), st);
			if (ri != rets.end())
				b += "  [" + return_text(ri->second) + "]";
			if (in.sessions != 0)
				b += "  [traced now by " + std::to_string(in.sessions) +
				    (in.sessions == 1 ? " session]" : " sessions]");
			b += '\n';
			w.commit();
		}
	}
	if (out.json) {
		append_json_summary(w.buffer(), &syms, t.fn, tally);
		w.line("");
	} else {
		w.line(text_summary(tally, false));
	}
	total.add(tally);
}

int
ListOffsets::run()
{
	if (specs.empty() && !all)
		throw Error(Exit::usage, "list-offsets: give a SPEC or --all");
	if (!specs.empty() && all)
		throw Error(Exit::usage, "list-offsets: --all and a SPEC are exclusive");
	if (!source_dir.empty() && !source)
		throw Error(Exit::usage, "list-offsets: --source-dir needs --source");
	struct stat sd;
	if (!source_dir.empty() && (stat(source_dir.c_str(), &sd) != 0 || !S_ISDIR(sd.st_mode)))
		throw Error(Exit::file, "--source-dir " + source_dir + ": not a directory");
	std::vector<Spec> parsed;
	for (const auto &s : specs)
		parsed.push_back(parse_spec(s));

	Disassembler dis(out.syn());
	txt_.parts = out.json;	// a text row shows the joined text alone
	Style st = Style::detect(stdout, out.no_color || out.json);
	Writer w;
	Tally total;

	if (all && src.offline()) {
		// One file at a time, so that memory stays that of the largest.
		std::vector<SourceOptions> files;
		if (!src.kernel.empty())
			files.push_back(SourceOptions{src.kernel, {}});
		std::set<std::pair<dev_t, ino_t>> seen;
		struct stat sb;
		if (!src.kernel.empty() && stat(src.kernel.c_str(), &sb) == 0)
			seen.insert({sb.st_dev, sb.st_ino});
		for (const auto &m : src.modules)
			if (stat(m.c_str(), &sb) != 0 || seen.insert({sb.st_dev, sb.st_ino}).second)
				files.push_back(SourceOptions{"", {m}});
		for (auto &f : files) {
			f.arm64 = true;
			SymbolTable syms;
			try {
				load_symbols(f, syms);
			} catch (const Error &e) {
				// A data-only module is not an error among many.
				if (e.code() != Exit::no_symbols || files.size() == 1 ||
				    syms.modules().empty())
					throw;
			}
			std::unique_ptr<DebugInfo> di;
			if (source) {
				di = std::make_unique<DebugInfo>(syms, dbg);
				ann = std::make_unique<SourceAnnotator>(*di, source_dir);
			}
			for (size_t mi = 0; mi < syms.modules().size(); mi++)
				for (const auto &fn : syms.module(mi).functions())
					list_one(syms, Target{mi, &fn, true, 0}, dis, st, w, total);
			ann.reset();
		}
	} else {
		SymbolTable syms;
		src.arm64 = true;
		load_symbols(src, syms);
		DebugInfo di(syms, dbg);
		if (source)
			ann = std::make_unique<SourceAnnotator>(di, source_dir);
		std::vector<Target> targets;
		if (all) {
			for (size_t mi = 0; mi < syms.modules().size(); mi++)
				for (const auto &fn : syms.module(mi).functions())
					targets.push_back(Target{mi, &fn, true, 0});
		} else {
			for (const auto &sp : parsed)
				for (const auto &t : resolve_targets(sp, syms, di, dis))
					targets.push_back(t);
		}
		for (const auto &t : targets)
			list_one(syms, t, dis, st, w, total);
	}
	if (total.functions > 1) {
		if (out.json) {
			append_json_summary(w.buffer(), nullptr, nullptr, total);
			w.line("");
		} else {
			w.line(text_summary(total, true));
		}
	}
	w.flush();
	return 0;
}

} // namespace

void
add_list_offsets(CLI::App &app, Runner &run)
{
	auto o = std::make_shared<ListOffsets>();
	CLI::App *sub = app.add_subcommand("list-offsets",
	    "Disassemble functions; say for each instruction whether and how it can be traced");
	sub->add_option("SPEC", o->specs, "Probe spec(s): the function(s) to list; with an "
	    "offset or address, only that instruction");
	sub->add_flag("--all", o->all, "Every function of the given --kernel/--module files");
	sub->add_flag("--source", o->source, "Interleave FILE:LINE and the source text (DWARF), "
	    "and mark inlined code (\"inlined from F() at FILE:LINE\"); --json adds file, line, inline");
	sub->add_option("--source-dir", o->source_dir, "Source tree to read the source text from "
	    "(default: the DWARF's own paths)")->type_name("DIR");
	add_debug_options(sub, o->dbg);
	add_output_options(sub, o->out);
	add_source_options(sub, o->src);
	sub->footer(spec_help);
	sub->callback([o, &run]() { run = [o]() { return o->run(); }; });
}

} // namespace kinst
