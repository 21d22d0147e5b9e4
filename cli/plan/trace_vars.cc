// SPDX-License-Identifier: BSD-2-Clause
// trace --var/--vars (trace_vars.h).
#include "plan/trace_vars.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "base/error.h"
#include "base/regfile.h"
#include "symbols/insn_text.h"
#include "base/text.h"
#include "base/live.h"
#include "base/record.h"
#include "symbols/resolver.h"
#include "symbols/sources.h"

#include "base/abi.h"

namespace kinst {

namespace {

// The variable a name means at an instruction: the innermost declaration.
const Var *
lookup(const std::vector<Var> &vars, const std::string &name)
{
	for (const Var &v : vars)
		if (v.name == name)
			return &v;	// innermost first
	return nullptr;
}

std::string
names_in_scope(const std::vector<Var> &vars)
{
	std::set<std::string> s;
	for (const Var &v : vars)
		s.insert(v.name);
	std::string out;
	for (const auto &n : s)
		out += (out.empty() ? "" : ", ") + n;
	return out.empty() ? "none" : out;
}

std::string
where_available(const Var &v)
{
	std::string s;
	for (const auto &r : v.ranges)
		s += (s.empty() ? "" : ", ") + std::string("+") + hex(r.lo) + "..+" + hex(r.hi);
	return s.empty() ? "at no instruction of the function" : "at " + s;
}

// Within the verifier's limits (kinst_prog.h): length, loads, stack depth
// along the straight line (the predicate's jump keeps its depth).
bool
verifies(const std::vector<struct kinst_pinsn> &code)
{
	if (code.size() > KINST_PROG_MAX_INSNS)
		return false;
	int depth = 0, max = 0, loads = 0;
	for (const auto &in : code) {
		switch (in.op) {
		case KINST_OP_IMM: case KINST_OP_REG: case KINST_OP_CTX:
			depth++;
			break;
		case KINST_OP_LOAD: case KINST_OP_LOADC:
			loads++;
			break;
		case KINST_OP_LNOT: case KINST_OP_NEG: case KINST_OP_BNOT: case KINST_OP_JA:
			break;
		default:	// binary operators, JZ/JNZ, RET, KEY/VALUE, MEM/STR
			depth--;
			break;
		}
		max = std::max(max, depth);
	}
	return max <= KINST_PROG_STACK && loads <= KINST_PROG_MAX_LOADS;
}

// The registers an entry probe saves, in its activation's words: the
// first argument registers (entry values are of parameters).
constexpr int entry_nregs = KINST_TS_VALS;
static_assert(entry_nregs <= 6, "every calling convention has that many");

// The entry context of an instruction whose stack pointer at the
// function's entry is frame (Var::entry_frame), for the function at addr.
EntryCtx
entry_ctx(uint64_t addr, const LocNodeP &frame)
{
	EntryCtx e;
	e.tag = addr;
	emit_node(*frame, e.frame, false);
	for (int i = 0; i < entry_nregs; i++)
		e.slot[regfile.args[i]] = i;
	return e;
}

// The entry registers a tree reads.
void
entry_regs_of(const LocNodeP &n, std::set<int> &out)
{
	if (!n)
		return;
	if (n->kind == LocNode::entry_reg)
		out.insert(n->gpr);
	entry_regs_of(n->a, out);
	entry_regs_of(n->b, out);
}

// The entry probe's program: open an activation framed by the stack
// pointer (nothing before the probe moved it) with the argument
// registers; no record.
std::vector<struct kinst_pinsn>
entry_push(uint64_t tag)
{
	std::vector<struct kinst_pinsn> code;
	code.push_back(make_pinsn(KINST_OP_REG, (uint8_t)regfile.sp));
	for (int i = 0; i < entry_nregs; i++)
		code.push_back(make_pinsn(KINST_OP_REG, (uint8_t)regfile.args[i]));
	code.push_back(make_pinsn(KINST_OP_TS_PUSH, KINST_TS_VALS, tag));
	return code;
}

bool
nop_like(const Insn &in, Disassembler &dis)
{
	InsnText t = insn_text(dis, in);
	return t.mnemonic.rfind("nop", 0) == 0 || t.mnemonic == "endbr64";
}

// DW_OP_addr's operand to the address the probe reads: the kernel image
// moved as a whole (KASLR: slide); a module's sections each on their own,
// which kinstctl cannot place yet.
VarQuery
var_query(bool ranges, bool kernel, uint64_t slide)
{
	VarQuery q;
	q.ranges = ranges;
	q.addr = [kernel, slide](uint64_t a, uint64_t *o, std::string *why) {
		if (!kernel) {
			*why = "a static address in a module, which kinstctl cannot place";
			return false;
		}
		*o = a + slide;
		return true;
	};
	return q;
}

// The instructions a spec plans: the one it names, or each traceable one
// of its function that the kernel does not refuse.
std::vector<uint32_t>
spec_offsets(const Spec &sp, Module &m, const Function &f, Disassembler &dis)
{
	std::vector<uint32_t> offs;
	if (sp.has_offset) {
		offs.push_back(sp.offset);
		return offs;
	}
	for (const Insn &in : walk(m, f, dis)) {
		if (!traceable(in) || in.unreachable)
			continue;
		int r = m.kernel_verdict(f, in.offset);
		if (r > KINST_R_NONE)
			continue;
		offs.push_back(in.offset);
	}
	return offs;
}

// An offset the user wrote is strict (an unknown or unavailable
// variable is an error); the instructions of a whole function or a
// source line print what they cannot read as such.
bool
is_strict(const Spec &sp)
{
	bool strict = sp.has_offset;
	try {
		strict = strict && !parse_spec(sp.text).is_source();
	} catch (const Error &) {
	}
	return strict;
}

// $NAME's code in an expression (r.type: its type): a scalar's value; a
// struct, union or array held in registers or pieces, its members read
// from them (VarRef::bits); one in memory, its address.  Else Error.
void
var_code(const Var &v, const DwarfTypes &dt, const EntryCtx *ecp, VarRef &r)
{
	Types::Kind k = dt.kind(r.type);
	if (k == Types::Kind::structure || k == Types::Kind::union_ ||
	    k == Types::Kind::array) {
		// Held in registers or pieces (of any size, some perhaps
		// optimized out): each member named is read from the pieces
		// that hold it.
		if (!v.loc.in_memory()) {
			if (v.size < 1 || v.size > UINT32_MAX / 8)
				throw Error(Exit::usage, "the " + dt.name(r.type) + " has no size here");
			Location loc = v.loc;
			uint32_t size = (uint32_t)v.size;
			bool has_ec = ecp != nullptr;
			EntryCtx ec = has_ec ? *ecp : EntryCtx{};
			r.bits = [loc, size, has_ec, ec](uint32_t off, uint32_t n,
			    std::vector<struct kinst_pinsn> &code) {
				emit_location_bits(loc, size, off, n, code, has_ec ? &ec : nullptr);
			};
			return;
		}
		emit_node(*v.loc.pieces[0].expr, r.code, false, ecp);
		r.lval = true;
		return;
	}
	if (v.size < 1 || v.size > 8)
		throw Error(Exit::usage, "a " + std::to_string(v.size) +
		    "-byte " + dt.name(r.type) + " is not a value an expression can use");
	emit_location_value(v.loc, (uint32_t)v.size, r.code, ecp);
}

// The environment of --if/--mem/--str at f+off: env0's, with $NAME this
// instruction's variables (vars, typed by dt).  uses_entry is set when
// one is read through its entry value.  vars and uses_entry outlive it.
TypeEnv
insn_env(const TypeEnv *env0, const DwarfTypes *dtp, const std::vector<Var> &vars,
    const Function &f, uint32_t off, bool &uses_entry)
{
	TypeEnv ienv;
	if (env0)
		ienv = *env0;
	ienv.var_types = dtp;
	ienv.var = [&vars, dtp, &f, off, &uses_entry](const std::string &n, VarRef &r) {
		const Var *v = lookup(vars, n);
		if (v == nullptr)
			throw Error(Exit::usage, "not in scope at " + f.name + "+" + hex(off) +
			    "; in scope there: " + names_in_scope(vars));
		if (!v->available())
			throw Error(Exit::usage, "at " + f.name + "+" + hex(off) + ": " + v->reason);
		EntryCtx ec;
		if (v->entry_frame) {
			ec = entry_ctx(f.addr, v->entry_frame);
			uses_entry = true;
		}
		const EntryCtx *ecp = v->entry_frame ? &ec : nullptr;
		r.type = dtp->id_of(v->type_die);
		var_code(*v, *dtp, ecp, r);
	};
	return ienv;
}

// Whether the variable an item names can be read at all (v: null when
// not in scope); else it.why says why not.
bool
readable(TraceVars::Item &it, const Var *v)
{
	if (v == nullptr) {
		it.why = "not in scope here";
		return false;
	}
	it.v = *v;
	if (!it.v.available()) {
		it.why = it.v.reason;
		return false;
	}
	if (it.v.size <= 0) {
		it.why = "its type has no size";
		return false;
	}
	it.size = (uint32_t)std::min<int64_t>(it.v.size, 4096);
	return true;
}

// The code of an address a capture reads (rc.addr), or of an entry
// register's value: false, why saying why, when it cannot be compiled.
bool
capture_code(const LocNode &n, const EntryCtx *ecp, RawCapture &rc, std::string &why)
{
	try {
		emit_node(n, rc.addr, true, ecp);
	} catch (const Error &e) {
		why = e.what();
		return false;
	}
	return true;
}

// The captures a value piece needs (into mine, ranks from ncaps on): each
// load of its computation, then each entry register it reads (its value).
// false, it.why saying why, when one cannot be compiled: the loads, or
// the entry registers, stop there.
bool
value_captures(const LocPiece &pc, const EntryCtx *ecp, uint32_t ncaps,
    TraceVars::Item &it, std::vector<RawCapture> &mine)
{
	bool ok = true;
	std::vector<LocNodeP> loads;
	node_loads(pc.expr, loads);
	for (const auto &ld : loads) {
		RawCapture rc;
		if (!capture_code(*ld->a, ecp, rc, it.why)) {
			ok = false;
			break;
		}
		rc.len = ld->size;
		it.load_caps.push_back((int)(ncaps + mine.size()));
		mine.push_back(rc);
	}
	// Each entry register: its value, captured.
	std::set<int> eregs;
	entry_regs_of(pc.expr, eregs);
	for (int g : eregs) {
		RawCapture rc;
		LocNode en;
		en.kind = LocNode::entry_reg;
		en.gpr = g;
		if (!capture_code(en, ecp, rc, it.why)) {
			ok = false;
			break;
		}
		rc.len = 8;
		rc.value = true;
		it.entry_caps.push_back({g, (int)(ncaps + mine.size())});
		mine.push_back(rc);
	}
	return ok;
}

// The captures an item's pieces need (into mine, ranks from ncaps on),
// it.piece_cap each piece's (-1: none, not in memory).  false, it.why
// saying why, when one cannot be compiled: a memory piece ends the
// pieces there, a value piece goes on to the next.
bool
piece_captures(TraceVars::Item &it, const EntryCtx *ecp, uint32_t ncaps,
    std::vector<RawCapture> &mine)
{
	bool ok = true;
	for (const LocPiece &pc : it.v.loc.pieces) {
		int cap = -1;
		if (pc.kind == LocPiece::memory) {
			RawCapture rc;
			if (!capture_code(*pc.expr, ecp, rc, it.why)) {
				ok = false;
				break;
			}
			rc.len = std::min<uint32_t>(pc.bits ? pc.src_bytes() : it.size,
			    KINST_CAP_MEM_MAX);
			cap = (int)(ncaps + mine.size());
			mine.push_back(rc);
		} else if (pc.kind == LocPiece::value) {
			if (!value_captures(pc, ecp, ncaps, it, mine))
				ok = false;
		}
		it.piece_cap.push_back(cap);
	}
	return ok;
}

// An item no longer read from captures (it.why says why).
void
drop_captures(TraceVars::Item &it)
{
	it.piece_cap.clear();
	it.load_caps.clear();
	it.entry_caps.clear();
}

} // namespace

// The spec of one planned instruction.
Spec
insn_spec(const std::string &text, const std::string &module, const std::string &function,
    uint32_t off)
{
	Spec s;
	s.text = text;
	s.module = module;
	s.function = function;
	s.has_offset = true;
	s.offset = off;
	return s;
}

TraceVars::TraceVars(const std::vector<std::string> &names, bool all,
    const std::vector<std::string> &debug_files, bool exprs, const SourceOptions *offline,
    unsigned max_programs)
    : names_(names), all_(all), exprs_(exprs), offline_(offline), max_programs_(max_programs)
{
	dbg_opts_.files = debug_files;
	for (const auto &n : names_)
		if (n.empty() || !(isalpha((unsigned char)n[0]) || n[0] == '_') ||
		    n.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") !=
		    std::string::npos)
			throw Error(Exit::usage, "--var " + n + ": not a C identifier");
}

TraceVars::~TraceVars() = default;

// One prepare(): what each instruction is planned with (the predicate,
// the user's captures and their bytes, the environment the expressions
// start from, the program to build instead of trace's), and what is
// planned so far.
struct TraceVars::Prep {
	using Prog = std::function<std::vector<struct kinst_pinsn>(const TypeEnv *)>;
	Prep(const std::string &i, const std::vector<Capture> &c, const TypeEnv *e, const Prog &p)
	    : if_expr(i), caps(c), env0(e), prog(p)
	{
		for (const auto &x : caps)
			user_bytes += x.len;
	}
	const std::string &if_expr;
	const std::vector<Capture> &caps;
	const TypeEnv *env0;
	const Prog &prog;
	uint32_t user_bytes = 0;
	Disassembler dis{Syntax::att};
	std::vector<Spec> out;	// one spec per planned instruction
	std::set<std::string> programs;	// distinct codes so far
};

// One spec's function and how its instructions are planned.
struct TraceVars::Site {
	const Spec &sp;
	size_t mi;	// its module: syms_->module(mi)
	Module &m;
	const Function &f;
	Dwfl_Module *dm;
	VarQuery q;	// for vars_at: var_query()
	bool strict;	// is_strict()
};

// What one spec's instructions came to, for its notes and errors.
struct TraceVars::Tally {
	std::set<std::string> seen_names;	// --var names in scope at one
	bool uses_entry = false;	// a plan reads entry values
	unsigned left_out = 0;	// instructions whose expressions cannot be computed
	std::string first_why;	// why the first of them was left out
	unsigned short_of_programs = 0;	// plans without their variables' captures
};

// One instruction's plan in the making: the environment its program is
// compiled in, the captures taken so far (ranks and bytes, the user's
// first), whether it reads entry values (of the function at fn).
struct TraceVars::Making {
	Plan p;
	const TypeEnv *env = nullptr;
	uint64_t fn = 0;
	uint32_t ncaps = 0, nbytes = 0;
	bool uses_entry = false;
};

void
TraceVars::prepare(std::vector<Spec> &specs, const std::string &if_expr,
    const std::vector<Capture> &caps, const TypeEnv *env0,
    const std::function<std::vector<struct kinst_pinsn>(const TypeEnv *)> &prog)
{
	syms_ = std::make_unique<SymbolTable>();
	if (offline_)
		load_symbols(*offline_, *syms_);
	else
		load_live_symbols(*syms_);
	dbg_ = std::make_unique<DebugInfo>(*syms_, dbg_opts_);
	Prep pr(if_expr, caps, env0, prog);
	for (const Spec &sp : specs)
		plan_spec(sp, pr);
	splice_entry_probes();
	specs = pr.out;
}

// Plans each instruction a spec names (into pr.out), with an entry probe
// for its function when their plans read entry values, and says what
// could not be.
void
TraceVars::plan_spec(const Spec &sp, Prep &pr)
{
	Target t = resolve_target(sp, *syms_);
	Module &m = syms_->module(t.module);
	const Function &f = *t.fn;
	if (dbg_->module(t.module) == nullptr)
		throw Error(Exit::unknown_function, spec_label(sp) + ": " + m.name() +
		    " has no debug info (DWARF): --var/--vars cannot name its variables "
		    "(give the debug file with --debug-file)");
	uint64_t base;
	Dwfl_Module *dm;
	if (!dbg_->dwarf_function(t.module, f, &dm, &base))
		throw Error(Exit::unknown_function, spec_label(sp) + ": no debug info describes " +
		    f.name + " (" + dbg_->debug_path(t.module) + ")");
	bool kernel = m.name() == "kernel" || m.name() == "vmlinux";
	VarQuery q = var_query(sp.has_offset, kernel, f.addr - base);
	std::vector<uint32_t> offs = spec_offsets(sp, m, f, pr.dis);
	Site s{sp, t.module, m, f, dm, q, is_strict(sp)};
	Tally tl;
	size_t before = pr.out.size();
	for (uint32_t off : offs)
		plan_insn(s, off, pr, tl);
	if (tl.uses_entry)
		add_entry_probe(m, f, pr.dis);
	report(sp, tl, s.strict, pr.out.size() - before);
}

// Plans one instruction of a spec's function (its spec into pr.out),
// unless the expressions cannot be computed there (counted in tl).
void
TraceVars::plan_insn(const Site &s, uint32_t off, Prep &pr, Tally &tl)
{
	std::vector<Var> vars;
	vars_at(*dbg_, s.mi, s.f, off, s.q, vars);
	// $NAME in --if/--mem/--str: this instruction's variables.
	auto &dt = types_[s.dm];
	if (!dt)
		dt = std::make_unique<DwarfTypes>(s.dm);
	Making mk;
	mk.fn = s.f.addr;
	mk.ncaps = (uint32_t)pr.caps.size();
	mk.nbytes = pr.user_bytes;
	TypeEnv env = insn_env(pr.env0, dt.get(), vars, s.f, off, mk.uses_entry);
	mk.env = &env;
	// The predicate and the user's captures at this instruction:
	// one that names a $variable not readable here leaves the
	// instruction out (an error at an offset the user wrote).
	if (exprs_) {
		try {
			if (pr.prog)
				(void)pr.prog(mk.env);
			else
				(void)compile_trace_prog(pr.if_expr, pr.caps, mk.env, nullptr);
		} catch (const Error &e) {
			if (s.strict)
				throw;
			if (tl.left_out++ == 0)
				tl.first_why = e.what();
			return;
		}
	}
	for (const auto &c : choose(vars, s, tl)) {
		Item it;
		it.name = c.first;
		it.dm = s.dm;
		if (readable(it, c.second))
			take_captures(mk, it, pr);
		mk.p.items.push_back(it);
	}
	mk.p.code = pr.prog ? pr.prog(mk.env) :
	    compile_trace_prog(pr.if_expr, pr.caps, mk.env, &mk.p.caps);
	limit_programs(mk, pr, tl);
	if (!mk.p.code.empty())
		pr.programs.insert(code_key(mk.p.code));
	if (mk.uses_entry)
		tl.uses_entry = true;
	pr.out.push_back(insn_spec(s.sp.text, s.m.name(), s.f.name, off));
	plans_[{s.f.name, off}] = std::move(mk.p);
}

// The variables an instruction's plan reads, each with the name it is
// printed by: every one not shadowed (--vars), or each --var's (null:
// not in scope here).  At an offset the user wrote, a --var not in scope
// or not available is an error.  tl.seen_names: the --vars in scope.
std::vector<std::pair<std::string, const Var *>>
TraceVars::choose(const std::vector<Var> &vars, const Site &s, Tally &tl) const
{
	std::vector<std::pair<std::string, const Var *>> chosen;
	if (all_) {
		for (const Var &v : vars)
			if (!v.shadowed)
				chosen.emplace_back(v.name, &v);
		return chosen;
	}
	for (const auto &n : names_) {
		const Var *v = lookup(vars, n);
		if (v == nullptr && s.strict)
			throw Error(Exit::usage, "--var " + n + ": not in scope at " +
			    spec_label(s.sp) + "; in scope there: " + names_in_scope(vars));
		if (v && !v->available() && s.strict)
			throw Error(Exit::usage, "--var " + n + " at " + spec_label(s.sp) + ": " +
			    v->reason + "; it has a location " + where_available(*v));
		if (v)
			tl.seen_names.insert(n);
		chosen.emplace_back(n, v);
	}
	return chosen;
}

// Takes the captures a readable item needs into the plan, ranks after
// those taken so far, when they fit in one probe program; else it.why
// says why it is not read.
void
TraceVars::take_captures(Making &mk, Item &it, const Prep &pr)
{
	std::vector<RawCapture> mine;
	EntryCtx ec;
	const EntryCtx *ecp = nullptr;
	if (it.v.entry_frame) {
		ec = entry_ctx(mk.fn, it.v.entry_frame);
		ecp = &ec;
	}
	if (!piece_captures(it, ecp, mk.ncaps, mine))
		return;
	uint32_t add = 0;
	for (const auto &rc : mine)
		add += rc.len;
	std::vector<RawCapture> trial = mk.p.caps;
	trial.insert(trial.end(), mine.begin(), mine.end());
	bool fits = mk.ncaps + mine.size() <= KINST_CAP_MAX &&
	    mk.nbytes + add <= KINST_CAP_MAX_BYTES;
	if (fits) {
		try {
			fits = verifies(compile_trace_prog(pr.if_expr, pr.caps, mk.env, &trial));
		} catch (const Error &) {
			fits = false;
		}
	}
	if (!fits) {
		it.why = "too many memory reads for one probe (at most " +
		    std::to_string(KINST_CAP_MAX) + " captures, " +
		    std::to_string(KINST_CAP_MAX_BYTES) + " bytes); name fewer with --var";
		drop_captures(it);
		return;
	}
	mk.p.caps = trial;
	mk.ncaps += (uint32_t)mine.size();
	mk.nbytes += add;
	if (ecp)
		mk.uses_entry = true;
}

// The module keeps max_programs_ programs per session: past them, an
// instruction whose variables need a new one is traced without their
// captures (said per variable).
void
TraceVars::limit_programs(Making &mk, const Prep &pr, Tally &tl) const
{
	Plan &p = mk.p;
	if (!pr.prog && !p.caps.empty() && !pr.programs.count(code_key(p.code)) &&
	    pr.programs.size() >= max_programs_) {
		for (Item &it : p.items)
			if (it.why.empty() && (!it.load_caps.empty() ||
			    std::any_of(it.piece_cap.begin(), it.piece_cap.end(),
			    [](int c) { return c >= 0; }))) {
				it.why = "not read at this instruction: the session's " +
				    std::to_string(max_programs_) + " probe programs are "
				    "taken by other instructions (trace fewer)";
				drop_captures(it);
			}
		p.caps.clear();
		p.code = compile_trace_prog(pr.if_expr, pr.caps, mk.env, nullptr);
		tl.short_of_programs++;
	}
}

// A function's hidden entry probe (once), for plans that read entry
// values: the instructions it may go at, its program.
void
TraceVars::add_entry_probe(Module &m, const Function &f, Disassembler &dis)
{
	if (std::any_of(entries_.begin(), entries_.end(),
	    [&](const EntryProbe &e) { return e.function == f.name && e.module == m.name(); }))
		return;
	EntryProbe ep;
	ep.module = m.name();
	ep.function = f.name;
	for (const Insn &in : walk(m, f, dis)) {
		if (traceable(in) && !in.unreachable)
			ep.offsets.push_back(in.offset);
		if (!nop_like(in, dis))
			break;
	}
	ep.code = entry_push(f.addr);
	entries_.push_back(ep);
}

// What a spec's instructions (planned of them) could not be: notes, or
// an error when none was planned for its expressions, or when a --var is
// in scope at none of a whole function's.
void
TraceVars::report(const Spec &sp, const Tally &tl, bool strict, size_t planned) const
{
	if (tl.short_of_programs)
		fprintf(stderr, "kinstctl: note: %s: at %u instruction%s, variables in memory "
		    "are not read: more than %u different probe programs would be needed\n",
		    spec_label(sp).c_str(), tl.short_of_programs,
		    tl.short_of_programs == 1 ? "" : "s", max_programs_);
	if (tl.left_out && planned == 0)
		throw Error(Exit::usage, spec_label(sp) + ": no instruction where the "
		    "expressions can be computed: " + tl.first_why);
	if (tl.left_out)
		fprintf(stderr, "kinstctl: note: %s: %u instruction%s left out: %s\n",
		    spec_label(sp).c_str(), tl.left_out, tl.left_out == 1 ? "" : "s",
		    tl.first_why.c_str());
	if (!strict && !all_ && planned > 0)
		for (const auto &n : names_)
			if (!tl.seen_names.count(n))
				throw Error(Exit::usage, "--var " + n + ": not in scope at any "
				    "instruction of " + spec_label(sp));
}

// An entry probe on an instruction traced anyway: that probe's
// program pushes first.  Else a hidden probe of its own (arm()).
void
TraceVars::splice_entry_probes()
{
	for (EntryProbe &e : entries_) {
		for (uint32_t o : e.offsets) {
			auto it = plans_.find({e.function, o});
			if (it == plans_.end())
				continue;
			std::vector<struct kinst_pinsn> code = e.code;
			if (it->second.code.empty()) {
				code.push_back(make_pinsn(KINST_OP_IMM, 0, 1));
				code.push_back(make_pinsn(KINST_OP_RET));
			} else
				code.insert(code.end(), it->second.code.begin(), it->second.code.end());
			it->second.code = code;
			e.offsets.clear();	// pushed there
			break;
		}
		if (!e.offsets.empty()) {
			e.code.push_back(make_pinsn(KINST_OP_IMM, 0, 0));
			e.code.push_back(make_pinsn(KINST_OP_RET));
		}
	}
}

const TraceVars::Plan *
TraceVars::plan(const std::string &function, uint32_t offset) const
{
	auto it = plans_.find({function, offset});
	return it == plans_.end() ? nullptr : &it->second;
}

void
TraceVars::bytes_of(const Item &it, const HitRecord &r, VarBytes &b, std::string *why) const
{
	b.bytes.assign(it.size, '\0');
	b.known.assign(it.size, false);
	auto cap = [&](int rank) -> const CaptureData * {
		for (const auto &c : r.caps)
			if ((int)c.index == rank && !(c.flags & (KINST_SECF_FAULT | KINST_SECF_DEREF)))
				return &c;
		return nullptr;
	};
	LocState st;
	st.gpr = reg_words(r.hit.regs);
	st.read = [&](uint64_t a, uint32_t n, uint8_t *out) {
		for (int rank : it.load_caps) {
			const CaptureData *c = cap(rank);
			if (c && c->address == a && c->bytes.size() >= n) {
				memcpy(out, c->bytes.data(), n);
				return true;
			}
		}
		return false;
	};
	// An entry register: its VAL capture (NOSTATE: the entry probe saw no
	// entry of this activation, as when it was armed mid-call).
	const char *not_seen = "entry not seen";
	st.entry = [&](int gpr, uint64_t *v, std::string *w) {
		for (const auto &ec : it.entry_caps) {
			if (ec.first != gpr)
				continue;
			const CaptureData *c = cap(ec.second);
			if (c == nullptr || !c->value || c->bytes.size() != 8)
				break;
			uint64_t x = 0;
			for (int k = 0; k < 8; k++)
				x |= (uint64_t)(unsigned char)c->bytes[k] << (8 * k);
			*v = x;
			return true;
		}
		*w = not_seen;
		return false;
	};
	// Bit by bit: DW_OP_bit_piece puts a piece anywhere.
	uint32_t want = 8 * it.size, off = 0;
	std::vector<bool> bit(want, false), kbit(want, false);
	auto put = [&](const std::string &src, uint32_t from, uint32_t n) {
		for (uint32_t k = 0; k < n && off + k < want; k++) {
			uint32_t sb = from + k;
			if (sb / 8 >= src.size())
				continue;
			bit[off + k] = ((unsigned char)src[sb / 8] >> (sb % 8)) & 1;
			kbit[off + k] = true;
		}
	};
	auto le8 = [](uint64_t v) {
		std::string s(8, '\0');
		for (int k = 0; k < 8; k++)
			s[k] = (char)((v >> (8 * k)) & 0xff);
		return s;
	};
	for (size_t i = 0; i < it.v.loc.pieces.size() && off < want; i++) {
		const LocPiece &pc = it.v.loc.pieces[i];
		uint32_t pbits = std::min(pc.bits ? pc.bits : want, want - off);
		switch (pc.kind) {
		case LocPiece::reg:
			put(le8(reg_words(r.hit.regs)[dwarf_reg(pc.dwreg)]), pc.bit_offset, pbits);
			break;
		case LocPiece::memory: {
			const CaptureData *c = i < it.piece_cap.size() ? cap(it.piece_cap[i]) : nullptr;
			if (c != nullptr && !(c->flags & KINST_SECF_NOSTATE))
				put(c->bytes, pc.bit_offset, pbits);	// else unknown
			else if (c != nullptr)
				*why = not_seen;
			break;
		}
		case LocPiece::value: {
			uint64_t v;
			std::string w;
			if (eval_node(*pc.expr, st, &v, &w))
				put(le8(v), pc.bit_offset, pbits);
			else if (w == not_seen)
				*why = w;
			break;
		}
		case LocPiece::implicit:
			put(pc.bytes, pc.bit_offset, pbits);
			break;
		case LocPiece::empty:
			break;
		}
		off += pbits;
	}
	for (uint32_t k = 0; k < want; k++) {
		if (bit[k])
			b.bytes[k / 8] = (char)((unsigned char)b.bytes[k / 8] | (1u << (k % 8)));
	}
	for (uint32_t by = 0; by < it.size; by++) {
		bool all = true;
		for (uint32_t k = 0; k < 8; k++)
			all = all && kbit[8 * by + k];
		b.known[by] = all;
	}
}

void
TraceVars::value(const Item &it, const HitRecord &r, std::string &text, nlohmann::json &j) const
{
	if (!it.why.empty()) {
		text = "<" + it.why + ">";
		j = nullptr;
		return;
	}
	VarBytes b;
	std::string why;
	bytes_of(it, r, b, &why);
	if (!why.empty() && std::none_of(b.known.begin(), b.known.end(), [](bool k) { return k; })) {
		text = "<" + why + ">";
		j = nullptr;
		return;
	}
	format_value(it.dm, it.v.type_die, b, text, j);
}

std::string
TraceVars::text(const Plan &p, const HitRecord &r) const
{
	std::string s;
	for (const Item &it : p.items) {
		std::string t;
		nlohmann::json j;
		value(it, r, t, j);
		s += (s.empty() ? "" : " ") + it.name + "=" + t;
	}
	return s;
}

nlohmann::json
TraceVars::json(const Plan &p, const HitRecord &r) const
{
	nlohmann::json o = nlohmann::json::object();
	for (const Item &it : p.items) {
		std::string t;
		nlohmann::json j;
		value(it, r, t, j);
		o[it.name] = j;
	}
	return o;
}

DwarfReturnTypes::DwarfReturnTypes(const std::vector<Spec> &specs,
    const std::vector<std::string> &debug_files)
{
	if (debug_files.empty() || specs.empty() || !specs[0].at_return)
		return;
	syms_ = std::make_unique<SymbolTable>();
	load_live_symbols(*syms_);
	dbg_ = std::make_unique<DebugInfo>(*syms_, DebugOptions{debug_files});
	Spec fs = specs[0];
	fs.kind = SpecKind::symbol;
	fs.has_offset = false;
	Target t;
	try {
		t = resolve_target(fs, *syms_);
	} catch (const Error &) {
		return;
	}
	Dwfl_Module *dm;
	uint64_t base;
	if (dbg_->dwarf_function(t.module, *t.fn, &dm, &base))
		types_ = std::make_unique<DwarfTypes>(dm);
}

DwarfReturnTypes::~DwarfReturnTypes() = default;

} // namespace kinst
