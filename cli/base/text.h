// SPDX-License-Identifier: BSD-2-Clause
// Text helpers every layer uses: hex, JSON string literals and lines, the
// register file as text and JSON (the base layer: cli/README.md).
#ifndef KINSTCTL_TEXT_H
#define KINSTCTL_TEXT_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/abi.h"

namespace kinst {

constexpr int KINST_JSON_SCHEMA = 5;	// docs/json.md (2: trace --stack; 3: count, hist;
					// 4: trace --mem/--str; 5: count/hist --by stack rows' "stack")

std::string hex(uint64_t v);			// "0x1f"
void append_hex0x(std::string &s, uint64_t v);	// hex(v), appended
// v in decimal, appended (as a JSON number: what dump() writes).
void append_u64(std::string &out, uint64_t v);
void append_i64(std::string &out, int64_t v);
// v in lower-case hex, at least width (at most 16) digits, no prefix, appended.
void append_hex(std::string &s, uint64_t v, int width);
std::string hex_bytes(const uint8_t *p, size_t n, const char *sep);
void append_hex_bytes(std::string &s, const uint8_t *p, size_t n, const char *sep);

// The digits of v (decimal; lower-case hex, at least width, at most 16,
// digits) written backwards so that they end at end: returns their start.
// end needs 20 (16) bytes before it.
char *u64_digits(char *end, uint64_t v);
char *hex_digits(char *end, uint64_t v, int width);

// A JSON string literal (quotes included); bytes >= 0x80 as \u00XX.
void append_json_string(std::string &out, const std::string &s);
// The same written at p, which has room for json_string_room(n) bytes;
// returns the end of what was written.
constexpr size_t json_string_room(size_t n) { return 6 * n + 2; }
char *json_string_into(char *p, const char *s, size_t n);
std::string json_line(const nlohmann::json &j);
// s as a C string literal (quotes included; \n, \t, \r, \\, \", octal escapes).
std::string c_quote(const std::string &s);

// ---- registers (trace) ----
extern const char *const gpr_names[KINST_NGPR];
// Compact: "rip=... rsp=... rax=... rdi=... rsi=... rdx=... rcx=..." ;
// all: every general register, rflags (decoded), cs, ss.
std::string text_regs(const struct kinst_regs &r, bool all);
std::string text_rflags(uint64_t fl);
nlohmann::json json_regs(const struct kinst_regs &r);

// --regs LIST: registers by name.  A register is a general register's
// enum kinst_gpr index, or one of these.
enum : int { KREG_RIP = -1, KREG_RFLAGS = -2, KREG_CS = -3, KREG_SS = -4 };
uint64_t reg_value(const struct kinst_regs &r, int which);
const char *reg_name(int which);
// "rdi,rsi,rip": those registers, in that order, each once (a repeated
// name is kept where it first stands).  Names: rax .. r15, rip, rflags,
// cs, ss.  Throws Error(Exit::usage), prefixed with what ("trace:
// --regs"), for an empty list or element and for an unknown name.
std::vector<int> parse_reg_list(const std::string &list, const std::string &what);
std::string reg_list_text(const std::vector<int> &l);	// "rdi,rsi,rip"
// "rdi=0x1 rsi=0x2 rflags=0x246[PF ZF IF]": the list's registers, in its order.
std::string text_regs_list(const struct kinst_regs &r, const std::vector<int> &l);
// json_regs() with only the list's members.
nlohmann::json json_regs_list(const struct kinst_regs &r, const std::vector<int> &l);

} // namespace kinst

#endif
