// SPDX-License-Identifier: BSD-2-Clause
// Text helpers every layer uses: hex, JSON string literals and lines, the
// register file as text and JSON (the base layer: cli/README.md).
#ifndef KINSTCTL_TEXT_H
#define KINSTCTL_TEXT_H

#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "base/abi.h"

namespace kinst {

constexpr int KINST_JSON_SCHEMA = 5;	// docs/json.md (2: trace --stack; 3: count, hist;
					// 4: trace --mem/--str; 5: count/hist --by stack rows' "stack")

std::string hex(uint64_t v);			// "0x1f"
void append_hex0x(std::string &s, uint64_t v);	// hex(v), appended
// v in lower-case hex, at least width (at most 16) digits, no prefix, appended.
void append_hex(std::string &s, uint64_t v, int width);
std::string hex_bytes(const uint8_t *p, size_t n, const char *sep);

// A JSON string literal (quotes included); bytes >= 0x80 as \u00XX.
void append_json_string(std::string &out, const std::string &s);
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

} // namespace kinst

#endif
