// SPDX-License-Identifier: BSD-2-Clause
// trace --var/--vars (trace_vars.h).
#include "plan/trace_vars.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "base/error.h"
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
// argument registers (entry values are of parameters).
const int entry_regs[KINST_TS_VALS] = { KINST_RDI, KINST_RSI, KINST_RDX, KINST_RCX,
    KINST_R8, KINST_R9 };

// The entry context of an instruction whose stack pointer at the
// function's entry is frame (Var::entry_frame), for the function at addr.
EntryCtx
entry_ctx(uint64_t addr, const LocNodeP &frame)
{
	EntryCtx e;
	e.tag = addr;
	emit_node(*frame, e.frame, false);
	for (int i = 0; i < KINST_TS_VALS; i++)
		e.slot[entry_regs[i]] = i;
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

// The entry probe's program: open an activation framed by rsp (nothing
// before the probe moved it) with the argument registers; no record.
std::vector<struct kinst_pinsn>
entry_push(uint64_t tag)
{
	std::vector<struct kinst_pinsn> code;
	code.push_back(make_pinsn(KINST_OP_REG, KINST_RSP));
	for (int r : entry_regs)
		code.push_back(make_pinsn(KINST_OP_REG, (uint8_t)r));
	code.push_back(make_pinsn(KINST_OP_TS_PUSH, KINST_TS_VALS, tag));
	return code;
}

bool
nop_like(const Insn &in, Disassembler &dis)
{
	InsnText t = insn_text(dis, in);
	return t.mnemonic.rfind("nop", 0) == 0 || t.mnemonic == "endbr64";
}

} // namespace

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
	Disassembler dis(Syntax::att);
	uint32_t user_bytes = 0;
	for (const auto &c : caps)
		user_bytes += c.len;
	std::vector<Spec> out;
	std::set<std::string> programs;	// distinct codes so far
	for (const Spec &sp : specs) {
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
		// DW_OP_addr: the kernel image moved as a whole (KASLR); a module's
		// sections each on their own, which kinstctl cannot place yet.
		VarQuery q;
		q.ranges = sp.has_offset;
		bool kernel = m.name() == "kernel" || m.name() == "vmlinux";
		uint64_t slide = f.addr - base;
		q.addr = [kernel, slide](uint64_t a, uint64_t *o, std::string *why) {
			if (!kernel) {
				*why = "a static address in a module, which kinstctl cannot place";
				return false;
			}
			*o = a + slide;
			return true;
		};
		std::vector<uint32_t> offs;
		if (sp.has_offset) {
			offs.push_back(sp.offset);
		} else {
			for (const Insn &in : walk_function(m.bytes(f), f.addr, dis)) {
				if (!traceable(in) || in.unreachable)
					continue;
				int r = m.kernel_verdict(f, in.offset);
				if (r > KINST_R_NONE)
					continue;
				offs.push_back(in.offset);
			}
		}
		// An offset the user wrote is strict (an unknown or unavailable
		// variable is an error); the instructions of a whole function or a
		// source line print what they cannot read as such.
		bool strict = sp.has_offset;
		try {
			strict = strict && !parse_spec(sp.text).is_source();
		} catch (const Error &) {
		}
		std::set<std::string> seen_names;
		bool fn_uses_entry = false;
		unsigned left_out = 0, short_of_programs = 0;
		std::string first_why;
		size_t before = out.size();
		for (uint32_t off : offs) {
			std::vector<Var> vars;
			vars_at(*dbg_, t.module, f, off, q, vars);
			// $NAME in --if/--mem/--str: this instruction's variables.
			auto &dt = types_[dm];
			if (!dt)
				dt = std::make_unique<DwarfTypes>(dm);
			TypeEnv ienv;
			if (env0)
				ienv = *env0;
			const DwarfTypes *dtp = dt.get();
			ienv.var_types = dtp;
			bool uses_entry = false;
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
				Types::Kind k = dtp->kind(r.type);
				if (k == Types::Kind::structure || k == Types::Kind::union_ ||
				    k == Types::Kind::array) {
					bool in_memory = v->loc.pieces.size() == 1 &&
					    v->loc.pieces[0].kind == LocPiece::memory;
					// Held in registers (pieces), at most 8 bytes: its
					// members are shifted out of its value.
					if (!in_memory && k != Types::Kind::array && v->size >= 1 &&
					    v->size <= 8) {
						emit_location_value(v->loc, (uint32_t)v->size, r.code, ecp);
						r.packed = true;
						return;
					}
					if (!in_memory)
						throw Error(Exit::usage, "the " + dtp->name(r.type) + " is not in "
						    "memory here (" + v->loc.describe() + "): name it with --var");
					emit_node(*v->loc.pieces[0].expr, r.code, false, ecp);
					r.lval = true;
					return;
				}
				if (v->size < 1 || v->size > 8)
					throw Error(Exit::usage, "a " + std::to_string(v->size) +
					    "-byte " + dtp->name(r.type) + " is not a value an expression can use");
				emit_location_value(v->loc, (uint32_t)v->size, r.code, ecp);
			};
			const TypeEnv *env = &ienv;
			// The predicate and the user's captures at this instruction:
			// one that names a $variable not readable here leaves the
			// instruction out (an error at an offset the user wrote).
			if (exprs_) {
				try {
					if (prog)
						(void)prog(env);
					else
						(void)compile_trace_prog(if_expr, caps, env, nullptr);
				} catch (const Error &e) {
					if (strict)
						throw;
					if (left_out++ == 0)
						first_why = e.what();
					continue;
				}
			}
			Plan p;
			std::vector<const Var *> chosen;
			std::vector<std::string> chosen_names;
			if (all_) {
				for (const Var &v : vars)
					if (!v.shadowed) {
						chosen.push_back(&v);
						chosen_names.push_back(v.name);
					}
			}
			for (const auto &n : names_) {
				if (all_)
					break;
				const Var *v = lookup(vars, n);
				if (v == nullptr && strict)
					throw Error(Exit::usage, "--var " + n + ": not in scope at " +
					    spec_label(sp) + "; in scope there: " + names_in_scope(vars));
				if (v && !v->available() && strict)
					throw Error(Exit::usage, "--var " + n + " at " + spec_label(sp) + ": " +
					    v->reason + "; it has a location " + where_available(*v));
				if (v)
					seen_names.insert(n);
				chosen.push_back(v);
				chosen_names.push_back(n);
			}
			uint32_t ncaps = (uint32_t)caps.size(), nbytes = user_bytes;
			for (size_t k = 0; k < chosen.size(); k++) {
				Item it;
				it.name = chosen_names[k];
				it.dm = dm;
				if (chosen[k] == nullptr) {
					it.why = "not in scope here";
					p.items.push_back(it);
					continue;
				}
				it.v = *chosen[k];
				if (!it.v.available()) {
					it.why = it.v.reason;
					p.items.push_back(it);
					continue;
				}
				if (it.v.size <= 0) {
					it.why = "its type has no size";
					p.items.push_back(it);
					continue;
				}
				it.size = (uint32_t)std::min<int64_t>(it.v.size, 4096);
				// The captures this variable needs.
				std::vector<RawCapture> mine;
				bool ok = true;
				EntryCtx ec;
				const EntryCtx *ecp = nullptr;
				if (it.v.entry_frame) {
					ec = entry_ctx(f.addr, it.v.entry_frame);
					ecp = &ec;
				}
				for (const LocPiece &pc : it.v.loc.pieces) {
					int cap = -1;
					if (pc.kind == LocPiece::memory) {
						RawCapture rc;
						try {
							emit_node(*pc.expr, rc.addr, true, ecp);
						} catch (const Error &e) {
							it.why = e.what();
							ok = false;
							break;
						}
						rc.len = std::min<uint32_t>(pc.bits ? pc.src_bytes() : it.size,
						    KINST_CAP_MEM_MAX);
						cap = (int)(ncaps + mine.size());
						mine.push_back(rc);
					} else if (pc.kind == LocPiece::value) {
						std::vector<LocNodeP> loads;
						node_loads(pc.expr, loads);
						for (const auto &ld : loads) {
							RawCapture rc;
							try {
								emit_node(*ld->a, rc.addr, true, ecp);
							} catch (const Error &e) {
								it.why = e.what();
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
							try {
								emit_node(en, rc.addr, true, ecp);
							} catch (const Error &e) {
								it.why = e.what();
								ok = false;
								break;
							}
							rc.len = 8;
							rc.value = true;
							it.entry_caps.push_back({g, (int)(ncaps + mine.size())});
							mine.push_back(rc);
						}
					}
					it.piece_cap.push_back(cap);
				}
				if (!ok) {
					p.items.push_back(it);
					continue;
				}
				uint32_t add = 0;
				for (const auto &rc : mine)
					add += rc.len;
				std::vector<RawCapture> trial = p.caps;
				trial.insert(trial.end(), mine.begin(), mine.end());
				bool fits = ncaps + mine.size() <= KINST_CAP_MAX &&
				    nbytes + add <= KINST_CAP_MAX_BYTES;
				std::vector<struct kinst_pinsn> code;
				if (fits) {
					try {
						code = compile_trace_prog(if_expr, caps, env, &trial);
						fits = verifies(code);
					} catch (const Error &) {
						fits = false;
					}
				}
				if (!fits) {
					it.why = "too many memory reads for one probe (at most " +
					    std::to_string(KINST_CAP_MAX) + " captures, " +
					    std::to_string(KINST_CAP_MAX_BYTES) + " bytes); name fewer with --var";
					it.piece_cap.clear();
					it.load_caps.clear();
					it.entry_caps.clear();
					p.items.push_back(it);
					continue;
				}
				p.caps = trial;
				ncaps += (uint32_t)mine.size();
				nbytes += add;
				if (ecp)
					uses_entry = true;
				p.items.push_back(it);
			}
			p.code = prog ? prog(env) : compile_trace_prog(if_expr, caps, env, &p.caps);
			// The module keeps max_programs_ programs per session: past
			// them, an instruction whose variables need a new one is
			// traced without their captures (said per variable).
			if (!prog && !p.caps.empty() && !programs.count(code_key(p.code)) &&
			    programs.size() >= max_programs_) {
				for (Item &it : p.items)
					if (it.why.empty() && (!it.load_caps.empty() ||
					    std::any_of(it.piece_cap.begin(), it.piece_cap.end(),
					    [](int c) { return c >= 0; }))) {
						it.why = "not read at this instruction: the session's " +
						    std::to_string(max_programs_) + " probe programs are "
						    "taken by other instructions (trace fewer)";
						it.piece_cap.clear();
						it.load_caps.clear();
						it.entry_caps.clear();
					}
				p.caps.clear();
				p.code = compile_trace_prog(if_expr, caps, env, nullptr);
				short_of_programs++;
			}
			if (!p.code.empty())
				programs.insert(code_key(p.code));
			if (uses_entry)
				fn_uses_entry = true;
			Spec s;
			s.text = sp.text;
			s.module = m.name();
			s.function = f.name;
			s.has_offset = true;
			s.offset = off;
			out.push_back(s);
			plans_[{f.name, off}] = std::move(p);
		}
		if (fn_uses_entry && std::none_of(entries_.begin(), entries_.end(),
		    [&](const EntryProbe &e) { return e.function == f.name && e.module == m.name(); })) {
			EntryProbe ep;
			ep.module = m.name();
			ep.function = f.name;
			for (const Insn &in : walk_function(m.bytes(f), f.addr, dis)) {
				if (traceable(in) && !in.unreachable)
					ep.offsets.push_back(in.offset);
				if (!nop_like(in, dis))
					break;
			}
			ep.code = entry_push(f.addr);
			entries_.push_back(ep);
		}
		if (short_of_programs)
			fprintf(stderr, "kinstctl: note: %s: at %u instruction%s, variables in memory "
			    "are not read: more than %u different probe programs would be needed\n",
			    spec_label(sp).c_str(), short_of_programs, short_of_programs == 1 ? "" : "s",
			    max_programs_);
		if (left_out && out.size() == before)
			throw Error(Exit::usage, spec_label(sp) + ": no instruction where the "
			    "expressions can be computed: " + first_why);
		if (left_out)
			fprintf(stderr, "kinstctl: note: %s: %u instruction%s left out: %s\n",
			    spec_label(sp).c_str(), left_out, left_out == 1 ? "" : "s", first_why.c_str());
		if (!strict && !all_ && out.size() > before)
			for (const auto &n : names_)
				if (!seen_names.count(n))
					throw Error(Exit::usage, "--var " + n + ": not in scope at any "
					    "instruction of " + spec_label(sp));
	}
	// An entry probe on an instruction traced anyway: that probe's
	// program pushes first.  Else a hidden probe of its own (arm()).
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
	specs = out;
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
	st.gpr = r.hit.regs.gpr;
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
			put(le8(r.hit.regs.gpr[dwarf_gpr(pc.dwreg)]), pc.bit_offset, pbits);
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
