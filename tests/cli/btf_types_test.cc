// SPDX-License-Identifier: BSD-2-Clause
// kinstctl's kernel types (cli/btf_types.cc) and the typed expressions
// (cli/prog_compile.cc): a BTF blob built here with libbpf (functions and
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

#include "btf_types.h"
#include "error.h"
#include "prog_compile.h"

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
	std::string path = write_btf();
	TypeSource src{path, ""};
	TypeEnv env;
	struct kinst_regs regs;

	explicit Fixture(const std::string &func)
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

ATF_TEST_CASE_WITHOUT_HEAD(members_and_casts);
ATF_TEST_CASE_BODY(members_and_casts)
{
	Fixture f("");
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
	const Btf &b = g.src.get("test");
	Btf::Func fn = b.func("ksys_lseek");
	ATF_REQUIRE_EQ(args_text(fn.name, read_args(b, fn, g.regs.gpr)),
	    "ksys_lseek(fd=3, offset=-5, whence=2)");
	Btf::Func vr = b.func("vfs_read");
	std::vector<ArgValue> av = read_args(b, vr, f.regs.gpr);
	ATF_REQUIRE_EQ(av.size(), 4u);
	ATF_REQUIRE(av[0].pointer && av[0].value == FILE_AT);
	ATF_REQUIRE_EQ(av[0].type, "struct file *");
	ATF_REQUIRE_EQ(av[2].type, "size_t");
	ATF_REQUIRE_EQ(args_text("vfs_read", av),
	    "vfs_read(file=0xffffffff82000100, buf=0x7f0000000080, count=7, pos=0x7f0000000040)");
	Btf::Func by = b.func("byval");
	struct kinst_regs r;
	memset(&r, 0, sizeof(r));
	r.gpr[KINST_RSI] = 0x1ff;
	ATF_REQUIRE_EQ(args_text("byval", read_args(b, by, r.gpr)), "byval(o=?, c=255)");
	Btf::Func sv = b.func("seven");
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
	require_has(e.error("count == 1"), "column 1: unknown name 'count' (not at an entry (test))");
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
		require_has(e3.what(), "bad.btf: not a BTF file");
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

ATF_INIT_TEST_CASES(tcs)
{
	ATF_ADD_TEST_CASE(tcs, members_and_casts);
	ATF_ADD_TEST_CASE(tcs, arguments);
	ATF_ADD_TEST_CASE(tcs, errors);
	ATF_ADD_TEST_CASE(tcs, entry_and_suggestions);
}
