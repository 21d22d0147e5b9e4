// SPDX-License-Identifier: BSD-2-Clause
// kinstctl's kernel types (cli/debuginfo/btf_types.cc, cli/debuginfo/ctf_types.cc) and the typed expressions
// (cli/plan/prog_compile.cc): a BTF blob built here with libbpf (functions and
// nested structs, written to a file and read back as --btf would), typed
// expressions compiled, verified by common/kinst_prog.c and run by its
// interpreter against a fake memory image; the values must be the ones the
// image holds, with the right sizes and sign extension.  Errors name the
// column and what was expected.
#include <atf-c++.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <bpf/btf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <zlib.h>

#include <iostream>
#include <sstream>

#include "debuginfo/btf_types.h"
#include "debuginfo/ctf_types.h"
#include "base/error.h"
#include "plan/prog_compile.h"

extern "C" {
#include "kinst_prog.h"

#include "os_mem_window.h"	// kinst_os_read, kinst_os_read_user: umem, kmem

#include "os_stack_none.h"
}

using namespace kinst;

namespace {

// Offsets of the image's objects.
const uint64_t FILE_AT = kbase + 0x100, INODE_AT = kbase + 0x200,
    SB_AT = kbase + 0x300, POS_AT = ubase + 0x40, BUF_AT = ubase + 0x80;

// The test's types, in C:
//   struct super_block { char s_id[32]; long s_magic; };            40
//   struct inode { short i_mode; unsigned char i_flag; int i_count;
//       union { unsigned int i_nlink; unsigned int __i_nlink; };
//       unsigned long i_ino; struct super_block *i_sb; char i_name[8];
//       unsigned int i_bits:3; };                                     48
//   struct fown_struct { long a; short b; };                          16
//   struct file { int f_count; struct inode *f_inode; long f_x;
//       loff_t f_pos; struct fown_struct f_owner; unsigned int f_flags; }; 56
//   ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t *pos);
//   off_t ksys_lseek(unsigned int fd, loff_t offset, unsigned int whence);
//   int seven(int a, int b, int c, int d, int e, int f, int g);
//   int byval(struct fown_struct o, unsigned char c);
std::string
write_btf()
{
	struct btf *b = btf__new_empty();
	ATF_REQUIRE(b != nullptr);
	int t_int = btf__add_int(b, "int", 4, BTF_INT_SIGNED);
	int t_uint = btf__add_int(b, "unsigned int", 4, 0);
	int t_long = btf__add_int(b, "long int", 8, BTF_INT_SIGNED);
	int t_ulong = btf__add_int(b, "long unsigned int", 8, 0);
	int t_char = btf__add_int(b, "char", 1, BTF_INT_SIGNED);
	int t_short = btf__add_int(b, "short int", 2, BTF_INT_SIGNED);
	int t_uchar = btf__add_int(b, "unsigned char", 1, 0);
	int t_loff = btf__add_typedef(b, "loff_t", btf__add_int(b, "long long int", 8,
	    BTF_INT_SIGNED));
	int t_size = btf__add_typedef(b, "size_t", t_ulong);

	int t_sid = btf__add_array(b, t_int, t_char, 32);
	int t_sb = btf__add_struct(b, "super_block", 40);
	btf__add_field(b, "s_id", t_sid, 0, 0);
	btf__add_field(b, "s_magic", t_long, 256, 0);
	int t_sbp = btf__add_ptr(b, t_sb);

	int t_nl = btf__add_union(b, nullptr, 4);
	btf__add_field(b, "i_nlink", t_uint, 0, 0);
	btf__add_field(b, "__i_nlink", t_uint, 0, 0);
	int t_name = btf__add_array(b, t_int, t_char, 8);
	int t_inode = btf__add_struct(b, "inode", 48);
	btf__add_field(b, "i_mode", t_short, 0, 0);
	btf__add_field(b, "i_flag", t_uchar, 16, 0);
	btf__add_field(b, "i_count", t_int, 32, 0);
	btf__add_field(b, nullptr, t_nl, 64, 0);
	btf__add_field(b, "i_ino", t_ulong, 128, 0);
	btf__add_field(b, "i_sb", t_sbp, 192, 0);
	btf__add_field(b, "i_name", t_name, 256, 0);
	btf__add_field(b, "i_bits", t_uint, 320, 3);
	int t_inodep = btf__add_ptr(b, t_inode);

	int t_fown = btf__add_struct(b, "fown_struct", 16);
	btf__add_field(b, "a", t_long, 0, 0);
	btf__add_field(b, "b", t_short, 64, 0);
	int t_file = btf__add_struct(b, "file", 56);
	btf__add_field(b, "f_count", t_int, 0, 0);
	btf__add_field(b, "f_inode", t_inodep, 64, 0);
	btf__add_field(b, "f_x", t_long, 128, 0);
	btf__add_field(b, "f_pos", t_loff, 192, 0);
	btf__add_field(b, "f_owner", t_fown, 256, 0);
	btf__add_field(b, "f_flags", t_uint, 384, 0);
	int t_filep = btf__add_ptr(b, t_file);
	int t_charp = btf__add_ptr(b, t_char);
	int t_loffp = btf__add_ptr(b, t_loff);

	int p = btf__add_func_proto(b, t_long);
	btf__add_func_param(b, "file", t_filep);
	btf__add_func_param(b, "buf", t_charp);
	btf__add_func_param(b, "count", t_size);
	btf__add_func_param(b, "pos", t_loffp);
	btf__add_func(b, "vfs_read", BTF_FUNC_GLOBAL, p);
	p = btf__add_func_proto(b, t_long);
	btf__add_func_param(b, "fd", t_uint);
	btf__add_func_param(b, "offset", t_loff);
	btf__add_func_param(b, "whence", t_uint);
	btf__add_func(b, "ksys_lseek", BTF_FUNC_GLOBAL, p);
	p = btf__add_func_proto(b, t_int);
	for (const char *n : {"a", "b", "c", "d", "e", "f", "g"})
		btf__add_func_param(b, n, t_int);
	btf__add_func(b, "seven", BTF_FUNC_GLOBAL, p);
	p = btf__add_func_proto(b, t_int);
	btf__add_func_param(b, "o", t_fown);
	btf__add_func_param(b, "c", t_uchar);
	int last = btf__add_func(b, "byval", BTF_FUNC_GLOBAL, p);
	ATF_REQUIRE(last > 0);
	// Enumerators; "count" is also vfs_read's argument, which hides it.
	ATF_REQUIRE(btf__add_enum(b, "whence_e", 4) > 0);
	btf__add_enum_value(b, "W_SET", 0);
	btf__add_enum_value(b, "W_CUR", 1);
	btf__add_enum_value(b, "W_END", 2);
	ATF_REQUIRE(btf__add_enum(b, "neg", 4) > 0);
	btf__add_enum_value(b, "N_MINUS", -1);
	btf__add_enum_value(b, "N_ONE", 1);
	ATF_REQUIRE(btf__add_enum(b, "shadow", 4) > 0);
	btf__add_enum_value(b, "count", 99);

	uint32_t size = 0;
	const void *raw = btf__raw_data(b, &size);
	ATF_REQUIRE(raw != nullptr);
	std::string path = "test.btf";
	FILE *f = fopen(path.c_str(), "wb");
	ATF_REQUIRE(f != nullptr);
	ATF_REQUIRE_EQ(fwrite(raw, 1, size, f), size);
	fclose(f);
	btf__free(b);
	return path;
}

template <typename T> void
put(uint64_t at, T v)
{
	if (at >= kbase)
		memcpy(kmem + (at - kbase), &v, sizeof(v));
	else
		memcpy(umem + (at - ubase), &v, sizeof(v));
}

// The image: a file whose inode has a super_block, garbage (0xa5) between
// and around the members so that a wrong size or offset shows.
void
fill_image()
{
	memset(kmem, 0xa5, sizeof(kmem));
	memset(umem, 0x5a, sizeof(umem));
	put<uint64_t>(kbase + 8, FILE_AT);		// a struct file *[1]
	put<int32_t>(FILE_AT + 0, 2);
	put<uint64_t>(FILE_AT + 8, INODE_AT);
	put<int64_t>(FILE_AT + 16, 77);
	put<int64_t>(FILE_AT + 24, -5);			// f_pos
	put<int64_t>(FILE_AT + 32, 1000);		// f_owner.a
	put<int16_t>(FILE_AT + 40, -300);		// f_owner.b
	put<uint32_t>(FILE_AT + 48, 0x8002);		// f_flags
	put<int16_t>(INODE_AT + 0, -16);		// i_mode 0xfff0
	put<uint8_t>(INODE_AT + 2, 0xf0);		// i_flag
	put<int32_t>(INODE_AT + 4, -2);			// i_count
	put<uint32_t>(INODE_AT + 8, 3);			// i_nlink
	put<uint64_t>(INODE_AT + 16, 123456789);	// i_ino
	put<uint64_t>(INODE_AT + 24, SB_AT);		// i_sb
	memcpy(kmem + (INODE_AT + 32 - kbase), "abc\xff", 4);	// i_name
	memcpy(kmem + (SB_AT - kbase), "sda1", 5);	// s_id
	put<int64_t>(SB_AT + 32, 0xef53);		// s_magic
	put<int64_t>(POS_AT, 4096);			// *pos
	memcpy(umem + (BUF_AT - ubase), "hi\x80", 3);
}

struct Fixture {
	std::string path;
	TypeSource src;
	TypeEnv env;
	struct kinst_regs regs;

	// types: a CTF or BTF file; "": the BTF blob write_btf() makes.
	explicit Fixture(const std::string &func, const std::string &types = "")
	    : path(types.empty() ? write_btf() : types), src(path, "")
	{
		env.types = &src;
		env.func = func;
		if (func.empty())
			env.no_args_why = "not at an entry (test)";
		memset(&regs, 0, sizeof(regs));
		fill_image();
	}

	// Compile, verify, run; the value (a fault fails the test).
	uint64_t eval(const std::string &expr, bool capture = false)
	{
		std::vector<struct kinst_pinsn> code;
		if (capture) {
			Capture c = parse_capture(expr + ":8", false, &env);
			code = compile_trace_prog("", {c}, &env);
		} else
			code = compile_expr(expr, "--if", &env);
		static struct kinst_prog p;
		uint32_t bad;
		int vd = kinst_prog_verify(code.data(), (uint32_t)code.size(), &p, &bad);
		if (vd != KINST_PV_OK)
			ATF_FAIL(expr + ": verifier refused: " + kinst_prog_verdict_name(vd));
		struct kinst_prog_ctx c;
		memset(&c, 0, sizeof(c));
		char comm[KINST_COMM_LEN] = "t";
		c.regs = &regs;
		c.comm = comm;
		uint64_t v = 0;
		struct kinst_cap_set caps;
		caps.n = 0;
		int r = kinst_prog_run_caps(&p, &c, &v, capture ? &caps : nullptr);
		if (r == KINST_PROG_FAULT)
			ATF_FAIL(expr + ": faulted");
		if (capture) {
			ATF_REQUIRE_EQ(caps.n, 1u);
			return caps.req[0].addr;
		}
		return v;
	}

	// The Error's text ("" if it compiled).
	std::string error(const std::string &expr)
	{
		try {
			(void)compile_expr(expr, "--if", &env);
		} catch (const Error &e) {
			ATF_REQUIRE_EQ((int)e.code(), (int)Exit::usage);
			return e.what();
		}
		return "";
	}
};

void
require_has(const std::string &got, const std::string &want)
{
	if (got.find(want) == std::string::npos)
		ATF_FAIL("expected \"" + want + "\" in \"" + got + "\"");
}

} // namespace

// Every member read exactly through the fixture's types (BTF or CTF).
static void
check_members(Fixture &f)
{
	f.regs.gpr[KINST_RDI] = FILE_AT;
	f.regs.gpr[KINST_RSI] = INODE_AT;
	// Sizes, offsets and extension: each member read exactly.
	ATF_REQUIRE_EQ(f.eval("((struct file *)rdi)->f_count"), 2u);
	ATF_REQUIRE_EQ(f.eval("((struct file *)rdi)->f_pos"), (uint64_t)-5);
	ATF_REQUIRE_EQ(f.eval("((struct file *)rdi)->f_flags"), 0x8002u);
	ATF_REQUIRE_EQ(f.eval("((struct file *)rdi)->f_x"), 77u);
	ATF_REQUIRE_EQ(f.eval("((struct inode *)rsi)->i_mode"), (uint64_t)-16);
	ATF_REQUIRE_EQ(f.eval("((struct inode *)rsi)->i_flag"), 0xf0u);
	ATF_REQUIRE_EQ(f.eval("((struct inode *)rsi)->i_count"), (uint64_t)-2);
	ATF_REQUIRE_EQ(f.eval("((struct inode *)rsi)->i_nlink"), 3u);	// anonymous union
	ATF_REQUIRE_EQ(f.eval("((struct inode *)rsi)->__i_nlink"), 3u);
	ATF_REQUIRE_EQ(f.eval("((struct inode *)rsi)->i_name[3]"), (uint64_t)-1);
	// Chains, embedded structs, arrays, a pointer cast's '*'.
	ATF_REQUIRE_EQ(f.eval("((struct file *)rdi)->f_inode->i_ino"), 123456789u);
	ATF_REQUIRE_EQ(f.eval("((struct file *)rdi)->f_inode->i_sb->s_magic"), 0xef53u);
	ATF_REQUIRE_EQ(f.eval("((struct file *)rdi)->f_inode->i_sb->s_id[3]"), (uint64_t)'1');
	ATF_REQUIRE_EQ(f.eval("((struct file *)rdi)->f_owner.a"), 1000u);
	ATF_REQUIRE_EQ(f.eval("((struct file *)rdi)->f_owner.b"), (uint64_t)-300);
	ATF_REQUIRE_EQ(f.eval("(*(struct file *)rdi).f_flags"), 0x8002u);
	ATF_REQUIRE_EQ(f.eval("*(loff_t *)(rdi + 24)"), (uint64_t)-5);
	ATF_REQUIRE_EQ(f.eval("*(unsigned int *)(rdi + 24)"), 0xfffffffbu);
	ATF_REQUIRE_EQ(f.eval("((struct file **)0xffffffff82000008)[0]->f_flags"),
	    f.eval("*(u32)0xffffffff82000130"));
	// Signed types compare signed; untyped ones as before, unsigned.
	ATF_REQUIRE_EQ(f.eval("((struct file *)rdi)->f_pos < 0"), 1u);
	ATF_REQUIRE_EQ(f.eval("*(u64)(rdi + 24) < 0"), 0u);
	ATF_REQUIRE_EQ(f.eval("((struct file *)rdi)->f_flags > 0 - 1"), 0u);
	// Integer casts: truncate and extend.
	f.regs.gpr[KINST_RAX] = 0x12345678fffffff0ull;
	ATF_REQUIRE_EQ(f.eval("(int)rax"), (uint64_t)-16);
	ATF_REQUIRE_EQ(f.eval("(unsigned int)rax"), 0xfffffff0u);
	ATF_REQUIRE_EQ(f.eval("(unsigned char)rax"), 0xf0u);
	ATF_REQUIRE_EQ(f.eval("(short)rax < 0"), 1u);
	ATF_REQUIRE_EQ(f.eval("(long)rax"), 0x12345678fffffff0ull);
	// A capture's address through members (LOADC).
	ATF_REQUIRE_EQ(f.eval("((struct file *)rdi)->f_inode->i_sb", true), SB_AT);
	// A bitfield is refused, not read as its whole word.
	require_has(f.error("((struct inode *)rsi)->i_bits"), "is a bitfield: not supported");
}

ATF_TEST_CASE_WITHOUT_HEAD(members_and_casts);
ATF_TEST_CASE_BODY(members_and_casts)
{
	Fixture f("");
	check_members(f);
	// Plain expressions never needed the types.
	TypeSource none("/nonexistent/btf", "");
	TypeEnv plain;
	plain.types = &none;
	(void)compile_expr("rdi + *(u32)rsi == 3", "--if", &plain);
	ATF_REQUIRE(!none.loaded());
}

ATF_TEST_CASE_WITHOUT_HEAD(arguments);
ATF_TEST_CASE_BODY(arguments)
{
	Fixture f("vfs_read");
	f.regs.gpr[KINST_RDI] = FILE_AT;
	f.regs.gpr[KINST_RSI] = BUF_AT;
	f.regs.gpr[KINST_RDX] = 7;
	f.regs.gpr[KINST_RCX] = POS_AT;
	ATF_REQUIRE_EQ(f.eval("count"), 7u);
	ATF_REQUIRE_EQ(f.eval("args.count == 7"), 1u);
	ATF_REQUIRE(f.env.used_args);
	ATF_REQUIRE_EQ(f.eval("args.file->f_inode->i_ino"), 123456789u);
	ATF_REQUIRE_EQ(f.eval("file->f_pos"), (uint64_t)-5);
	ATF_REQUIRE_EQ(f.eval("*args.pos"), 4096u);
	ATF_REQUIRE_EQ(f.eval("*pos + count"), 4103u);
	ATF_REQUIRE_EQ(f.eval("args.buf[1]"), (uint64_t)'i');
	ATF_REQUIRE_EQ(f.eval("buf[2]"), (uint64_t)-128);	// char is signed here
	ATF_REQUIRE_EQ(f.eval("args.buf", true), BUF_AT);
	ATF_REQUIRE_EQ(f.eval("rdx == count"), 1u);

	// Narrow arguments: the register's upper half is not the argument's.
	Fixture g("ksys_lseek");
	g.regs.gpr[KINST_RDI] = 0xdeadbeef00000003ull;
	g.regs.gpr[KINST_RSI] = (uint64_t)-5;
	g.regs.gpr[KINST_RDX] = 0xffffffff00000002ull;
	ATF_REQUIRE_EQ(g.eval("fd"), 3u);
	ATF_REQUIRE_EQ(g.eval("fd == 3 && whence == 2"), 1u);
	ATF_REQUIRE_EQ(g.eval("offset < 0"), 1u);
	ATF_REQUIRE_EQ(g.eval("offset"), (uint64_t)-5);

	// --args' view of the same registers.
	const Types &b = g.src.get("test");
	Types::Func fn = b.func("ksys_lseek");
	ATF_REQUIRE_EQ(args_text(fn.name, read_args(b, fn, g.regs.gpr)),
	    "ksys_lseek(fd=3, offset=-5, whence=2)");
	Types::Func vr = b.func("vfs_read");
	std::vector<ArgValue> av = read_args(b, vr, f.regs.gpr);
	ATF_REQUIRE_EQ(av.size(), 4u);
	ATF_REQUIRE(av[0].pointer && av[0].value == FILE_AT);
	ATF_REQUIRE_EQ(av[0].type, "struct file *");
	ATF_REQUIRE_EQ(av[2].type, "size_t");
	ATF_REQUIRE_EQ(args_text("vfs_read", av),
	    "vfs_read(file=0xffffffff82000100, buf=0x7f0000000080, count=7, pos=0x7f0000000040)");
	Types::Func by = b.func("byval");
	struct kinst_regs r;
	memset(&r, 0, sizeof(r));
	r.gpr[KINST_RSI] = 0x1ff;
	ATF_REQUIRE_EQ(args_text("byval", read_args(b, by, r.gpr)), "byval(o=?, c=255)");
	Types::Func sv = b.func("seven");
	r.gpr[KINST_R9] = 0xffffffff;
	ATF_REQUIRE_EQ(args_text("seven", read_args(b, sv, r.gpr)),
	    "seven(a=0, b=511, c=0, d=0, e=0, f=-1, g=?)");
}

ATF_TEST_CASE_WITHOUT_HEAD(errors);
ATF_TEST_CASE_BODY(errors)
{
	Fixture f("vfs_read");
	require_has(f.error("args.file->f_poss == 1"),
	    "--if: column 12: no member 'f_poss' in struct file; did you mean f_pos?");
	require_has(f.error("args.fil"),
	    "column 6: vfs_read has no argument 'fil'; did you mean file? (its arguments: "
	    "file, buf, count, pos)");
	require_has(f.error("cnt == 1"), "column 1: unknown name 'cnt': vfs_read has no argument 'cnt'");
	require_has(f.error("file->f_inode->i_bits"),
	    "column 16: member 'i_bits' of struct inode is a bitfield: not supported");
	require_has(f.error("file->f_owner == 1"),
	    "a struct fown_struct is not a number");
	require_has(f.error("args.file.f_pos"), "column 10: '.' needs a struct or union "
	    "(this is a struct file *: use '->')");
	require_has(f.error("rdi->f_pos"), "column 4: '->' needs a pointer to a struct or "
	    "union: cast the address, e.g. ((struct file *)rdi)->f_pos");
	require_has(f.error("count->x"), "'->' needs a pointer to a struct or union (this is a size_t)");
	require_has(f.error("((struct nosuch *)rdi)->x"), "column 3: no struct nosuch in the kernel's types");
	require_has(f.error("(struct file)rdi"), "column 1: cannot cast to struct file");
	require_has(f.error("file->f_count[1]"), "'[' needs a pointer or an array (this is an int)");
	require_has(f.error("*(void *)rdi"), "cannot read through a void pointer");
	require_has(f.error("((struct file *)rdi)->"), "column 23: expected a member name");

	Fixture s("seven");
	require_has(s.error("g == 1"), "argument 'g' is the 7th: only the first six");
	Fixture v("byval");
	require_has(v.error("o"), "argument 'o' is a struct fown_struct: only integers and pointers");
	Fixture n("nosuch");
	try {
		(void)n.eval("x == 1");
		ATF_FAIL("an argument of a function without BTF compiled");
	} catch (const Error &e) {
		require_has(e.what(), "nosuch: no function of that name in the kernel's types");
	}
	Fixture e("");
	require_has(e.error("cnt == 1"), "column 1: unknown name 'cnt' (not at an entry (test))");
	require_has(e.error("args.count"), "column 6: args.count: not at an entry (test)");

	// No types at all: a clear error, only when an expression needs them.
	TypeSource none("/nonexistent/btf", "");
	TypeEnv env;
	env.types = &none;
	try {
		(void)compile_expr("((struct file *)rdi)->f_pos", "--if", &env);
		ATF_FAIL("compiled without types");
	} catch (const Error &e2) {
		ATF_REQUIRE_EQ((int)e2.code(), (int)Exit::live);
		require_has(e2.what(), "--if needs kernel types (BTF): /nonexistent/btf: no such file");
	}
	// A typo at an entry on a kernel without types: still a usage error.
	env.func = "vfs_read";
	try {
		(void)compile_expr("foo == 1", "--if", &env);
		ATF_FAIL("compiled an unknown name");
	} catch (const Error &e4) {
		ATF_REQUIRE_EQ((int)e4.code(), (int)Exit::usage);
		require_has(e4.what(), "column 1: unknown name 'foo' (and no argument names: "
		    "--if needs kernel types (BTF): /nonexistent/btf: no such file)");
	}
	// Not a BTF file.
	FILE *bad = fopen("bad.btf", "w");
	fputs("not btf at all\n", bad);
	fclose(bad);
	TypeSource badsrc("bad.btf", "");
	try {
		(void)badsrc.get("--args");
		ATF_FAIL("read a text file as BTF");
	} catch (const Error &e3) {
		require_has(e3.what(), "bad.btf: neither BTF nor CTF");
	}
}

ATF_TEST_CASE_WITHOUT_HEAD(entry_and_suggestions);
ATF_TEST_CASE_BODY(entry_and_suggestions)
{
	auto no = [](uint32_t) { return false; };
	auto yes = [](uint32_t) { return true; };
	const uint8_t ibt[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x0f, 0x1f, 0x44, 0x00, 0x00, 0x55};
	const uint8_t nop[] = {0x0f, 0x1f, 0x44, 0x00, 0x00, 0x55};
	const uint8_t call[] = {0xf3, 0x0f, 0x1e, 0xfa, 0xe8, 1, 2, 3, 4, 0x55};
	const uint8_t plain[] = {0x55, 0x48, 0x89, 0xe5};
	ATF_REQUIRE_EQ(entry_offset(ibt, sizeof(ibt), no), 9u);
	ATF_REQUIRE_EQ(entry_offset(nop, sizeof(nop), no), 5u);
	ATF_REQUIRE_EQ(entry_offset(call, sizeof(call), yes), 9u);
	ATF_REQUIRE_EQ(entry_offset(call, sizeof(call), no), 4u);	// a real call
	ATF_REQUIRE_EQ(entry_offset(plain, sizeof(plain), yes), 0u);
	ATF_REQUIRE_EQ(did_you_mean("f_poss", {"f_count", "f_pos", "f_flags"}), "f_pos");
	ATF_REQUIRE_EQ(did_you_mean("i_inode", {"i_ino", "i_mode"}), "i_ino");
	ATF_REQUIRE_EQ(did_you_mean("zzzzzz", {"f_pos"}), "");
}


// Enumerators by name, and '&' (the address of what an expression reads),
// through the fixture's types.
static void
check_enums_and_addresses(const std::string &types)
{
	Fixture g("ksys_lseek", types);
	g.regs.gpr[KINST_RDX] = 2;
	ATF_REQUIRE_EQ(g.eval("W_END"), 2u);
	ATF_REQUIRE_EQ(g.eval("args." + std::string(types.empty() ? "whence" : "arg2") +
	    " == W_END"), 1u);
	ATF_REQUIRE_EQ(g.eval("N_MINUS"), (uint64_t)-1);
	ATF_REQUIRE_EQ(g.eval("N_MINUS < 0"), 1u);	// a signed enum compares signed
	ATF_REQUIRE_EQ(g.eval("W_CUR < N_ONE + 1"), 1u);
	require_has(g.error("W_ENDD == 1"), "unknown name 'W_ENDD'");
	Fixture f(types.empty() ? "vfs_read" : "", types);
	f.regs.gpr[KINST_RDX] = 7;
	if (types.empty())
		ATF_REQUIRE_EQ(f.eval("count"), 7u);	// the argument, not the enumerator
	else
		ATF_REQUIRE_EQ(f.eval("count"), 99u);	// no argument names in CTF

	Fixture a("", types);
	a.regs.gpr[KINST_RDI] = FILE_AT;
	a.regs.gpr[KINST_RSI] = INODE_AT;
	ATF_REQUIRE_EQ(a.eval("&((struct file *)rdi)->f_pos"), FILE_AT + 24);
	ATF_REQUIRE_EQ(a.eval("*&((struct file *)rdi)->f_pos"), (uint64_t)-5);
	ATF_REQUIRE_EQ(a.eval("&((struct file *)rdi)->f_owner"), FILE_AT + 32);
	ATF_REQUIRE_EQ(a.eval("(&((struct file *)rdi)->f_owner)->b"), (uint64_t)-300);
	ATF_REQUIRE_EQ(a.eval("&((struct file *)rdi)->f_inode->i_name[2]"), INODE_AT + 34);
	ATF_REQUIRE_EQ(a.eval("&((struct inode *)rsi)->i_sb->s_magic"), SB_AT + 32);
	ATF_REQUIRE_EQ(a.eval("&*(u32)rdi"), FILE_AT);
	ATF_REQUIRE_EQ(a.eval("&(((struct file *)rdi)->f_flags) - rdi"), 48u);
	ATF_REQUIRE_EQ(a.eval("&((struct file *)rdi)->f_inode->i_sb", true), INODE_AT + 24);
	// Still a binary AND, and still a logical one.
	ATF_REQUIRE_EQ(a.eval("rdi & 0xff"), FILE_AT & 0xff);
	ATF_REQUIRE_EQ(a.eval("rdi && rsi"), 1u);
	require_has(a.error("&rdi"), "column 1: '&' needs an object in memory");
	require_has(a.error("&W_END"), "'&' needs an object in memory");
	require_has(a.error("&(((struct file *)rdi)->f_count + 1)"), "'&' needs an object in memory");
}

ATF_TEST_CASE_WITHOUT_HEAD(enums_and_address_of);
ATF_TEST_CASE_BODY(enums_and_address_of)
{
	check_enums_and_addresses("");
}

// ---- CTF (cli/debuginfo/ctf_types.cc) ----
//
// The same types as write_btf(), written as FreeBSD's CTF (ctf(5), version
// 2 or 3, raw or zlib-compressed) into the .SUNW_ctf section of an ELF file
// whose .symtab orders the function records, as ctfconvert/ctfmerge lay
// them out.  Written here from the format's definition; the reader must
// give the same answers as libbpf's BTF for every member and prototype.

namespace {

template <typename A, typename B> void
require_eq(const A &a, const B &b, const std::string &what)
{
	if (!(a == b)) {
		std::ostringstream o;
		o << what << ": " << a << " != " << b;
		ATF_FAIL(o.str());
	}
}

struct CtfWriter {
	int v;
	std::vector<uint8_t> types;
	std::string strs = std::string(1, '\0');
	uint32_t next = 1;
	struct FuncRec {
		std::string name;
		bool typed;
		uint32_t ret;
		std::vector<uint32_t> args;
		bool varargs;
	};
	std::vector<FuncRec> funcs;

	explicit CtfWriter(int version) : v(version) {}
	static void u16(std::vector<uint8_t> &b, uint32_t x)
	{
		b.push_back((uint8_t)x);
		b.push_back((uint8_t)(x >> 8));
	}
	static void u32(std::vector<uint8_t> &b, uint32_t x)
	{
		u16(b, x & 0xffff);
		u16(b, x >> 16);
	}
	void id(std::vector<uint8_t> &b, uint32_t x)
	{
		if (v == 2)
			u16(b, x);
		else
			u32(b, x);
	}
	uint32_t str(const std::string &n)
	{
		if (n.empty())
			return 0;
		uint32_t off = (uint32_t)strs.size();
		strs += n;
		strs += '\0';
		return off;
	}
	uint32_t info(int kind, uint32_t vlen)
	{
		return v == 2 ? (uint32_t)kind << 11 | 1u << 10 | vlen :
		    (uint32_t)kind << 26 | 1u << 25 | vlen;
	}
	// The common part; x is a size (is_size) or a type id.
	uint32_t head(const std::string &n, int kind, uint32_t vlen, uint64_t x, bool is_size)
	{
		u32(types, str(n));
		uint64_t sent = v == 2 ? 0xffff : 0xffffffffull;
		if (v == 2)
			u16(types, info(kind, vlen));
		else
			u32(types, info(kind, vlen));
		if (is_size && x >= sent) {
			id(types, (uint32_t)sent);
			u32(types, (uint32_t)(x >> 32));
			u32(types, (uint32_t)x);
		} else
			id(types, (uint32_t)x);
		return next++;
	}
	uint32_t integer(const std::string &n, uint32_t size, bool sgn, uint32_t bits = 0)
	{
		uint32_t t = head(n, 1, 0, size, true);
		u32(types, (sgn ? 1u : 0u) << 24 | (bits ? bits : size * 8));
		return t;
	}
	uint32_t ref(int kind, uint32_t to, const std::string &n = "")
	{
		return head(n, kind, 0, to, false);
	}
	uint32_t array(uint32_t elem, uint32_t index, uint32_t n)
	{
		uint32_t t = head("", 4, 0, 0, true);	// size 0, as ctfconvert writes
		id(types, elem);
		id(types, index);
		u32(types, n);
		return t;
	}
	struct Mem {
		const char *name;
		uint32_t type;
		uint64_t bit;
	};
	uint32_t sou(int kind, const std::string &n, uint64_t size, const std::vector<Mem> &ms)
	{
		uint32_t t = head(n, kind, (uint32_t)ms.size(), size, true);
		bool large = size >= (v == 2 ? 8192u : 1u << 29);
		for (const Mem &m : ms) {
			u32(types, str(m.name));
			id(types, m.type);
			if (large) {
				if (v == 2)
					u16(types, 0);
				u32(types, (uint32_t)(m.bit >> 32));
				u32(types, (uint32_t)m.bit);
			} else
				id(types, (uint32_t)m.bit);
		}
		return t;
	}
	uint32_t enumeration(const std::string &n, std::vector<std::pair<const char *, int32_t>> vals)
	{
		uint32_t t = head(n, 8, (uint32_t)vals.size(), 4, true);
		for (const auto &e : vals) {
			u32(types, str(e.first));
			u32(types, (uint32_t)e.second);
		}
		return t;
	}
	uint32_t functype(uint32_t ret, const std::vector<uint32_t> &args)
	{
		uint32_t t = head("", 5, (uint32_t)args.size(), ret, false);
		for (uint32_t a : args)
			id(types, a);
		if (v == 2 && args.size() % 2)
			u16(types, 0);
		return t;
	}
	void func(const std::string &n, uint32_t ret, std::vector<uint32_t> args,
	    bool varargs = false)
	{
		funcs.push_back(FuncRec{n, true, ret, std::move(args), varargs});
	}
	void untyped(const std::string &n)
	{
		funcs.push_back(FuncRec{n, false, 0, {}, false});
	}
	std::vector<uint8_t> section(bool compress)
	{
		std::vector<uint8_t> fs;
		for (const FuncRec &f : funcs) {
			if (!f.typed) {
				id(fs, 0);
				continue;
			}
			uint32_t n = (uint32_t)f.args.size() + (f.varargs ? 1 : 0);
			id(fs, info(5, n));
			id(fs, f.ret);
			for (uint32_t a : f.args)
				id(fs, a);
			if (f.varargs)
				id(fs, 0);
		}
		std::vector<uint8_t> body = fs;
		body.insert(body.end(), types.begin(), types.end());
		body.insert(body.end(), strs.begin(), strs.end());
		std::vector<uint8_t> out;
		u16(out, 0xcff1);
		out.push_back((uint8_t)v);
		out.push_back(compress ? 1 : 0);
		for (uint32_t w : {0u, 0u, 0u, 0u, 0u, (uint32_t)fs.size(),
		    (uint32_t)(fs.size() + types.size()), (uint32_t)strs.size()})
			u32(out, w);
		if (!compress) {
			out.insert(out.end(), body.begin(), body.end());
			return out;
		}
		uLongf zlen = compressBound(body.size());
		std::vector<uint8_t> z(zlen);
		ATF_REQUIRE_EQ(compress2(z.data(), &zlen, body.data(), body.size(), 9), Z_OK);
		out.insert(out.end(), z.begin(), z.begin() + zlen);
		return out;
	}
};

// A symbol of the test ELF file: STT_* type and whether it is defined.
struct TSym {
	std::string name;
	int type;
	bool defined;
};

// An x86-64 ET_REL file with .text, .SUNW_ctf (unless ctf is empty),
// .symtab and .strtab.
void
write_elf(const std::string &path, const std::vector<uint8_t> &ctf,
    const std::vector<TSym> &syms)
{
	ATF_REQUIRE(elf_version(EV_CURRENT) != EV_NONE);
	int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ATF_REQUIRE(fd >= 0);
	Elf *e = elf_begin(fd, ELF_C_WRITE, nullptr);
	ATF_REQUIRE(e != nullptr);
	Elf64_Ehdr *eh = elf64_newehdr(e);
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_type = ET_REL;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	std::string shstr(1, '\0');
	auto sec = [&](const char *name, uint32_t type, const void *buf, size_t len,
	    size_t entsize) {
		Elf_Scn *s = elf_newscn(e);
		Elf_Data *d = elf_newdata(s);
		d->d_buf = const_cast<void *>(buf);
		d->d_size = len;
		d->d_type = ELF_T_BYTE;
		d->d_align = 8;
		Elf64_Shdr *sh = elf64_getshdr(s);
		sh->sh_name = (uint32_t)shstr.size();
		shstr += name;
		shstr += '\0';
		sh->sh_type = type;
		sh->sh_entsize = entsize;
		return s;
	};
	static const uint8_t text[16] = {0xc3};
	sec(".text", SHT_PROGBITS, text, sizeof(text), 0);	// section 1
	std::string strtab(1, '\0');
	std::vector<Elf64_Sym> st(1);
	memset(&st[0], 0, sizeof(st[0]));
	for (const TSym &y : syms) {
		Elf64_Sym es;
		memset(&es, 0, sizeof(es));
		if (!y.name.empty()) {
			es.st_name = (uint32_t)strtab.size();
			strtab += y.name;
			strtab += '\0';
		}
		es.st_info = ELF64_ST_INFO(STB_GLOBAL, y.type);
		es.st_shndx = y.type == STT_FILE ? SHN_ABS : y.defined ? 1 : SHN_UNDEF;
		st.push_back(es);
	}
	static std::vector<uint8_t> keep_ctf;
	static std::string keep_str;
	static std::vector<Elf64_Sym> keep_st;
	keep_ctf = ctf;
	keep_str = strtab;
	keep_st = st;
	if (!keep_ctf.empty())
		sec(".SUNW_ctf", SHT_PROGBITS, keep_ctf.data(), keep_ctf.size(), 0);
	Elf_Scn *sym = sec(".symtab", SHT_SYMTAB, keep_st.data(),
	    keep_st.size() * sizeof(Elf64_Sym), sizeof(Elf64_Sym));
	Elf_Scn *str = sec(".strtab", SHT_STRTAB, keep_str.data(), keep_str.size(), 0);
	elf64_getshdr(sym)->sh_link = (uint32_t)elf_ndxscn(str);
	elf64_getshdr(sym)->sh_info = 1;
	static std::string keep_sh;
	Elf_Scn *shs = sec(".shstrtab", SHT_STRTAB, nullptr, 0, 0);
	keep_sh = shstr;
	Elf_Data *d = elf_getdata(shs, nullptr);
	d->d_buf = keep_sh.data();
	d->d_size = keep_sh.size();
	eh->e_shstrndx = (uint16_t)elf_ndxscn(shs);
	if (elf_update(e, ELF_C_WRITE) < 0)
		ATF_FAIL(std::string("elf_update: ") + elf_errmsg(-1));
	elf_end(e);
	close(fd);
}

// write_btf()'s types and functions as CTF, plus what only CTF has to get
// right: a struct past the 16-bit size and member-offset limits, enums,
// a forward declaration, qualifiers, a variadic function, and symbols the
// function section skips or pads.  Returns the section; syms gets the
// symbol table that orders it.
std::vector<uint8_t>
build_ctf(int version, bool compress, std::vector<TSym> &syms)
{
	CtfWriter w(version);
	uint32_t t_int = w.integer("int", 4, true);
	uint32_t t_uint = w.integer("unsigned int", 4, false);
	uint32_t t_long = w.integer("long int", 8, true);
	uint32_t t_ulong = w.integer("long unsigned int", 8, false);
	uint32_t t_char = w.integer("char", 1, true);
	uint32_t t_short = w.integer("short int", 2, true);
	uint32_t t_uchar = w.integer("unsigned char", 1, false);
	uint32_t t_loff = w.ref(10, w.integer("long long int", 8, true), "loff_t");
	uint32_t t_size = w.ref(10, t_ulong, "size_t");
	uint32_t t_bits = w.integer("unsigned int", 4, false, 3);	// i_bits:3

	uint32_t t_sid = w.array(t_char, t_int, 32);
	uint32_t t_sb = w.sou(6, "super_block", 40, {{"s_id", t_sid, 0}, {"s_magic", t_long, 256}});
	uint32_t t_sbp = w.ref(3, t_sb);
	uint32_t t_nl = w.sou(7, "", 4, {{"i_nlink", t_uint, 0}, {"__i_nlink", t_uint, 0}});
	uint32_t t_name = w.array(t_char, t_int, 8);
	uint32_t t_inode = w.sou(6, "inode", 48, {{"i_mode", t_short, 0}, {"i_flag", t_uchar, 16},
	    {"i_count", t_int, 32}, {"", t_nl, 64}, {"i_ino", t_ulong, 128}, {"i_sb", t_sbp, 192},
	    {"i_name", t_name, 256}, {"i_bits", t_bits, 320}});
	uint32_t t_inodep = w.ref(3, t_inode);
	uint32_t t_fown = w.sou(6, "fown_struct", 16, {{"a", t_long, 0}, {"b", t_short, 64}});
	uint32_t t_file = w.sou(6, "file", 56, {{"f_count", t_int, 0}, {"f_inode", t_inodep, 64},
	    {"f_x", t_long, 128}, {"f_pos", t_loff, 192}, {"f_owner", t_fown, 256},
	    {"f_flags", t_uint, 384}});
	uint32_t t_filep = w.ref(3, t_file);
	uint32_t t_charp = w.ref(3, t_char);
	uint32_t t_loffp = w.ref(3, t_loff);
	(void)w.functype(t_long, {t_filep, t_charp, t_size, t_loffp});

	// CTF only.
	uint32_t t_pad = w.array(t_char, t_int, 69992);
	(void)w.sou(6, "big", 70000, {{"pad", t_pad, 0}, {"far", t_long, 69992ull * 8}});
	(void)w.enumeration("whence_e", {{"W_SET", 0}, {"W_CUR", 1}, {"W_END", 2}});
	(void)w.enumeration("neg", {{"N_MINUS", -1}, {"N_ONE", 1}});
	(void)w.enumeration("shadow", {{"count", 99}});
	(void)w.enumeration("pos", {{"P_ZERO", 0}, {"P_ONE", 1}});
	(void)w.ref(9, 7, "fwd_only");				// union fwd_only;
	(void)w.ref(10, w.ref(12, w.ref(11, t_int)), "cv_int");	// const volatile int

	syms = {{"t.c", STT_FILE, true}, {"an_object", STT_OBJECT, true}};
	w.untyped("notype_fn");
	syms.push_back({"notype_fn", STT_FUNC, true});
	w.func("vfs_read", t_long, {t_filep, t_charp, t_size, t_loffp});
	syms.push_back({"vfs_read", STT_FUNC, true});
	syms.push_back({"undefined_fn", STT_FUNC, false});	// no record
	syms.push_back({"_START_", STT_FUNC, true});		// no record
	syms.push_back({"", STT_FUNC, true});			// no record
	w.func("ksys_lseek", t_long, {t_uint, t_loff, t_uint});
	syms.push_back({"ksys_lseek", STT_FUNC, true});
	syms.push_back({"another_object", STT_OBJECT, true});
	w.func("seven", t_int, {t_int, t_int, t_int, t_int, t_int, t_int, t_int});
	syms.push_back({"seven", STT_FUNC, true});
	w.func("byval", t_int, {t_fown, t_uchar});
	syms.push_back({"byval", STT_FUNC, true});
	w.func("vfn", t_int, {t_charp}, true);
	syms.push_back({"vfn", STT_FUNC, true});
	return w.section(compress);
}

std::string
write_ctf(int version, bool compress)
{
	std::vector<TSym> syms;
	std::vector<uint8_t> sec = build_ctf(version, compress, syms);
	std::string path = "test" + std::to_string(version) + (compress ? "z" : "") + ".ko";
	write_elf(path, sec, syms);
	return path;
}

} // namespace

ATF_TEST_CASE_WITHOUT_HEAD(ctf_members);
ATF_TEST_CASE_BODY(ctf_members)
{
	for (int v : {2, 3})
		for (bool z : {false, true}) {
			std::string path = write_ctf(v, z);
			std::cout << path << "\n";
			Fixture f("", path);
			ATF_REQUIRE_EQ(std::string(f.src.get("test").format()), "CTF");
			check_members(f);
		}
}

ATF_TEST_CASE_WITHOUT_HEAD(ctf_enums_and_address_of);
ATF_TEST_CASE_BODY(ctf_enums_and_address_of)
{
	check_enums_and_addresses(write_ctf(3, true));
	check_enums_and_addresses(write_ctf(2, false));
}

ATF_TEST_CASE_WITHOUT_HEAD(ctf_same_as_btf);
ATF_TEST_CASE_BODY(ctf_same_as_btf)
{
	Btf btf(write_btf());
	for (int v : {2, 3}) {
		Ctf ctf(write_ctf(v, v == 3));
		size_t compared = 0;
		// Every member of every struct, through anonymous members.
		for (const char *tag : {"file", "inode", "super_block", "fown_struct"}) {
			uint32_t b = btf.find_tagged(tag, false), c = ctf.find_tagged(tag, false);
			ATF_REQUIRE(b != 0 && c != 0);
			ATF_REQUIRE_EQ(btf.size(b), ctf.size(c));
			ATF_REQUIRE_EQ(btf.name(b), ctf.name(c));
			std::vector<std::string> names = btf.member_names(b);
			ATF_REQUIRE(names == ctf.member_names(c));
			for (const std::string &m : names) {
				Types::Member bm = btf.member(b, m), cm = ctf.member(c, m);
				ATF_REQUIRE(bm.found && cm.found);
				require_eq(bm.bit_offset, cm.bit_offset, std::string(tag) + "." + m);
				require_eq(bm.bitfield, cm.bitfield, std::string(tag) + "." + m);
				require_eq(btf.name(bm.type), ctf.name(cm.type), std::string(tag) + "." + m);
				require_eq(btf.size(bm.type), ctf.size(cm.type), std::string(tag) + "." + m);
				require_eq((int)btf.kind(bm.type), (int)ctf.kind(cm.type), m);
				require_eq(btf.is_signed(bm.type), ctf.is_signed(cm.type), m);
				ATF_REQUIRE_EQ(btf.array_len(bm.type), ctf.array_len(cm.type));
				ATF_REQUIRE_EQ(btf.name(btf.pointee(bm.type)), ctf.name(ctf.pointee(cm.type)));
				compared++;
			}
			ATF_REQUIRE(!ctf.member(c, "nosuch").found);
		}
		ATF_REQUIRE_EQ(compared, 19u);
		// Prototypes: return and argument types (CTF has no names).
		for (const char *fn : {"vfs_read", "ksys_lseek", "seven", "byval"}) {
			Types::Func bf = btf.func(fn), cf = ctf.func(fn);
			ATF_REQUIRE_EQ(btf.name(bf.ret), ctf.name(cf.ret));
			ATF_REQUIRE_EQ(bf.params.size(), cf.params.size());
			ATF_REQUIRE(!cf.variadic);
			for (size_t i = 0; i < bf.params.size(); i++) {
				ATF_REQUIRE_EQ(btf.name(bf.params[i].type), ctf.name(cf.params[i].type));
				ATF_REQUIRE_EQ(cf.params[i].name, "arg" + std::to_string(i));
			}
		}
		for (const char *n : {"int", "unsigned int", "loff_t", "size_t", "char"}) {
			uint32_t b = btf.find_named(n), c = ctf.find_named(n);
			ATF_REQUIRE(b != 0 && c != 0);
			ATF_REQUIRE_EQ(btf.size(b), ctf.size(c));
			ATF_REQUIRE_EQ(btf.is_signed(b), ctf.is_signed(c));
			ATF_REQUIRE_EQ(btf.name(b), ctf.name(c));
		}
		// The bitfield's 3-bit "unsigned int" does not hide the full one.
		ATF_REQUIRE_EQ(ctf.size(ctf.find_named("unsigned int")), 4);
		ATF_REQUIRE_EQ(ctf.member(ctf.find_named("unsigned int"), "x").found, false);
	}
}

ATF_TEST_CASE_WITHOUT_HEAD(ctf_only);
ATF_TEST_CASE_BODY(ctf_only)
{
	for (int v : {2, 3}) {
		Ctf c(write_ctf(v, false));
		ATF_REQUIRE_EQ(c.version(), v);
		// Past 0xfffe bytes (the large size form) and 8192 (long members).
		uint32_t big = c.find_tagged("big", false);
		ATF_REQUIRE_EQ(c.size(big), 70000);
		ATF_REQUIRE_EQ(c.member(big, "far").bit_offset, 69992u * 8);
		ATF_REQUIRE_EQ(c.size(c.member(big, "pad").type), 69992);	// array size 0: computed
		ATF_REQUIRE_EQ(c.array_len(c.member(big, "pad").type), 69992u);
		// Enums: signed when a value is negative.
		uint32_t neg = 0, pos = 0, fwd = 0;
		for (uint32_t id = 1; id <= c.type_count(); id++) {
			if (c.name(id) == "enum neg")
				neg = id;
			if (c.name(id) == "enum pos")
				pos = id;
			if (c.name(id) == "union fwd_only")
				fwd = id;
		}
		ATF_REQUIRE(neg && pos && fwd);
		ATF_REQUIRE(c.kind(neg) == Types::Kind::enumeration && c.is_signed(neg));
		ATF_REQUIRE(!c.is_signed(pos) && c.size(pos) == 4);
		ATF_REQUIRE(c.kind(fwd) == Types::Kind::other && c.size(fwd) == -1);
		ATF_REQUIRE_EQ(c.find_tagged("fwd_only", true), 0u);	// a declaration only
		uint32_t cv = c.find_named("cv_int");
		ATF_REQUIRE_EQ(c.name(c.resolve(cv)), "int");
		ATF_REQUIRE(c.kind(cv) == Types::Kind::integer && c.is_signed(cv) && c.size(cv) == 4);
		// The function records: pads, skipped symbols and variadics.
		ATF_REQUIRE_EQ(c.func_count(), 5u);
		Types::Func vf = c.func("vfn");
		ATF_REQUIRE(vf.variadic && vf.params.size() == 1);
		ATF_REQUIRE_EQ(c.name(vf.params[0].type), "char *");
		for (const char *none : {"notype_fn", "undefined_fn", "_START_", "an_object"}) {
			try {
				(void)c.func(none);
				ATF_FAIL(std::string(none) + " has a prototype");
			} catch (const Error &e) {
				ATF_REQUIRE_EQ((int)e.code(), (int)Exit::unknown_function);
			}
		}
		Types::Func s = c.func("seven");
		ATF_REQUIRE_EQ(s.params.size(), 7u);
	}

	// --args through CTF: the registers by position.
	std::string path = write_ctf(3, true);
	Fixture f("vfs_read", path);
	f.regs.gpr[KINST_RDI] = FILE_AT;
	f.regs.gpr[KINST_RDX] = 7;
	f.regs.gpr[KINST_RCX] = POS_AT;
	ATF_REQUIRE_EQ(f.eval("arg2"), 7u);
	ATF_REQUIRE_EQ(f.eval("args.arg0->f_inode->i_ino"), 123456789u);
	ATF_REQUIRE_EQ(f.eval("*args.arg3"), 4096u);
	const Types &t = f.src.get("test");
	Fixture g("ksys_lseek", path);
	g.regs.gpr[KINST_RDI] = 0xdeadbeef00000003ull;
	g.regs.gpr[KINST_RSI] = (uint64_t)-5;
	g.regs.gpr[KINST_RDX] = 0xffffffff00000002ull;
	ATF_REQUIRE_EQ(args_text("ksys_lseek", read_args(t, t.func("ksys_lseek"), g.regs.gpr)),
	    "ksys_lseek(arg0=3, arg1=-5, arg2=2)");
	require_has(f.error("args.file"), "vfs_read has no argument 'file'");

	// Where the types come from: the ELF file's section, raw CTF, neither.
	std::vector<TSym> syms;
	std::vector<uint8_t> raw = build_ctf(2, false, syms);
	FILE *out = fopen("raw.ctf", "wb");
	fwrite(raw.data(), 1, raw.size(), out);
	fclose(out);
	ATF_REQUIRE(ctf_file("raw.ctf") && ctf_file(path));
	TypeSource rs("raw.ctf", "");
	ATF_REQUIRE_EQ(std::string(rs.get("t").format()), "CTF");
	ATF_REQUIRE(rs.get("t").find_tagged("file", false) != 0);
	try {
		(void)rs.get("t").func("vfs_read");
		ATF_FAIL("raw CTF has function records");
	} catch (const Error &e) {
		require_has(e.what(), "raw CTF has none, give the ELF file");
	}
	write_elf("noctf.ko", {}, syms);
	ATF_REQUIRE(!ctf_file("noctf.ko"));
	TypeSource ns("noctf.ko", "");
	try {
		(void)ns.get("--args");
		ATF_FAIL("types from an ELF file with neither");
	} catch (const Error &e) {
		require_has(e.what(), "--args needs kernel types (BTF): noctf.ko: neither BTF nor CTF");
	}
}

namespace {

// Loads a section from memory; "" if it loaded, else the error.
std::string
load_error(const std::vector<uint8_t> &sec, const std::vector<TSym> &tsyms)
{
	std::vector<Ctf::Sym> syms;
	for (const TSym &t : tsyms) {
		Ctf::Sym y;
		y.name = t.name;
		y.type = (uint8_t)t.type;
		y.shndx = t.defined ? 1 : 0;
		syms.push_back(y);
	}
	try {
		Ctf c(sec, syms, "", "mem");
		// Every query on every type must answer without crashing.
		for (uint32_t id = 0; id <= c.type_count() + 1; id++) {
			try {
				(void)c.name(id);
				(void)c.size(id);
				(void)c.kind(id);
				(void)c.is_signed(id);
				(void)c.member_names(id);
				(void)c.member(id, "far");
				(void)c.array_len(id);
				(void)c.pointee(id);
			} catch (const Error &e) {
				if (e.code() != Exit::internal || id <= c.type_count())
					throw;
			}
		}
		for (const char *fn : {"vfs_read", "vfn", "seven"})
			try {
				(void)c.func(fn);
			} catch (const Error &e) {
				ATF_REQUIRE_EQ((int)e.code(), (int)Exit::unknown_function);
			}
		return "";
	} catch (const Error &e) {
		if (e.code() != Exit::live)
			ATF_FAIL(std::string("not a live error: ") + e.what());
		return e.what();
	}
}

template <typename T> void
poke(std::vector<uint8_t> &b, size_t at, T v)
{
	memcpy(b.data() + at, &v, sizeof(v));
}

} // namespace

ATF_TEST_CASE_WITHOUT_HEAD(ctf_corrupt);
ATF_TEST_CASE_BODY(ctf_corrupt)
{
	std::vector<TSym> syms;
	for (int v : {2, 3}) {
		std::vector<uint8_t> good = build_ctf(v, false, syms);
		ATF_REQUIRE_EQ(load_error(good, syms), "");
		auto with = [&](size_t at, auto val) {
			std::vector<uint8_t> b = good;
			poke(b, at, val);
			return load_error(b, syms);
		};
		require_has(with(0, (uint16_t)0xf1cf), "mem: big-endian CTF");
		require_has(with(0, (uint16_t)0x1234), "mem: not CTF (magic 0x1234");
		require_has(with(2, (uint8_t)4), "CTF version 4, which kinstctl does not read");
		require_has(with(3, (uint8_t)0x80), "corrupt CTF: unknown header flags 0x80");
		require_has(with(8, (uint32_t)1), "uniquified against a parent");
		require_has(with(20, (uint32_t)0xffffff), "section offsets out of order");
		require_has(with(32, (uint32_t)0x100000), "the string table ends at");
		require_has(with(32, (uint32_t)0xfffffff0), "the data would be");
		// The first type (typeoff): an undefined kind, a dangling reference.
		uint32_t typeoff;
		memcpy(&typeoff, good.data() + 24, 4);
		size_t t0 = 36 + typeoff;
		if (v == 2)
			require_has(with(t0 + 4, (uint16_t)(31 << 11)), "type 1 has kind 31");
		else
			require_has(with(t0 + 4, (uint32_t)(60u << 26)), "type 1 has kind 60");
		// The loff_t typedef (type 9) to a type that is not there.
		size_t t9 = t0 + (v == 2 ? 8 * 12 : 16 * 8);	// 8 integers before
		if (v == 2)
			require_has(with(t9 + 6, (uint16_t)0x7000), "type 9 refers to type 28672");
		else
			require_has(with(t9 + 8, (uint32_t)0x7000), "type 9 refers to type 28672");
		// vfs_read's record (after notype_fn's one-word pad) returns a
		// type that is not there.
		if (v == 2)
			require_has(with(36 + 2 + 2, (uint16_t)0x7000),
			    "the function record of vfs_read returns type 28672");
		else
			require_has(with(36 + 4 + 4, (uint32_t)0x7000),
			    "the function record of vfs_read returns type 28672");
		// A typedef to itself: resolving ends, the type is "other".
		{
			std::vector<uint8_t> b = good;
			if (v == 2)
				poke(b, t9 + 6, (uint16_t)9);
			else
				poke(b, t9 + 8, (uint32_t)9);
			ATF_REQUIRE_EQ(load_error(b, syms), "");
		}
		// Cut anywhere: an error or a smaller valid dictionary, never a crash.
		size_t errors = 0;
		for (size_t n = 0; n < good.size(); n++) {
			std::vector<uint8_t> b(good.begin(), good.begin() + n);
			if (!load_error(b, syms).empty())
				errors++;
		}
		ATF_REQUIRE_EQ(errors, good.size());	// the string table is last
		// Any byte changed: the same.
		uint32_t seed = 12345;
		for (int i = 0; i < 4000; i++) {
			std::vector<uint8_t> b = good;
			for (int k = 0; k < 3; k++) {
				seed = seed * 1103515245 + 12345;
				b[36 + (seed >> 8) % (b.size() - 36)] ^= (uint8_t)(1 + (seed >> 20) % 255);
			}
			(void)load_error(b, syms);
		}
		// Anonymous members that contain their own struct, 8 to a level:
		// a lookup through them visits a bounded number, and ends.
		{
			CtfWriter w(v);
			(void)w.integer("int", 4, true);
			uint32_t self = w.next;
			std::vector<CtfWriter::Mem> ms(8, CtfWriter::Mem{"", self, 0});
			ms.push_back(CtfWriter::Mem{"x", 1, 0});
			(void)w.sou(6, "loop", 4, ms);
			Ctf c(w.section(false), {}, "", "mem");
			ATF_REQUIRE(c.member(self, "x").found);
			ATF_REQUIRE(!c.member(self, "nosuch").found);
			ATF_REQUIRE(c.member_names(self).size() < 70000u);
		}
		// Compressed: bad zlib data.
		std::vector<uint8_t> z = build_ctf(v, true, syms);
		ATF_REQUIRE_EQ(load_error(z, syms), "");
		std::vector<uint8_t> zb = z;
		zb.resize(zb.size() - 8);
		require_has(load_error(zb, syms), "the compressed data does not inflate");
		std::vector<uint8_t> zc = z;
		zc[40] ^= 0xff;
		require_has(load_error(zc, syms), "corrupt CTF");
		std::vector<uint8_t> zd = z;
		poke(zd, 32, (uint32_t)0x10000000);	// strlen: 256 MiB from 600 bytes
		require_has(load_error(zd, syms), "the header claims 2684");
	}
}

ATF_INIT_TEST_CASES(tcs)
{
	ATF_ADD_TEST_CASE(tcs, members_and_casts);
	ATF_ADD_TEST_CASE(tcs, arguments);
	ATF_ADD_TEST_CASE(tcs, errors);
	ATF_ADD_TEST_CASE(tcs, entry_and_suggestions);
	ATF_ADD_TEST_CASE(tcs, enums_and_address_of);
	ATF_ADD_TEST_CASE(tcs, ctf_members);
	ATF_ADD_TEST_CASE(tcs, ctf_enums_and_address_of);
	ATF_ADD_TEST_CASE(tcs, ctf_same_as_btf);
	ATF_ADD_TEST_CASE(tcs, ctf_only);
	ATF_ADD_TEST_CASE(tcs, ctf_corrupt);
}
