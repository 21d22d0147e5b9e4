// SPDX-License-Identifier: BSD-2-Clause
// Text helpers every layer uses: hex, JSON string literals and lines (the
// base layer: cli/README.md; the register file's text is regfile.h's).
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
// The "sched_clock_stable()" line of Linux's scheduler debug file (a
// name, spaces, ':', a number): 1 or 0, or -1 when text has no such
// line or its value is neither.
int sched_clock_stable_in(const std::string &text);

} // namespace kinst

#endif
