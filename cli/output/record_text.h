// SPDX-License-Identifier: BSD-2-Clause
// A hit record's stack and captures as text and JSON (the output layer:
// cli/README.md).
#ifndef KINSTCTL_RECORD_TEXT_H
#define KINSTCTL_RECORD_TEXT_H

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/record.h"
#include "symbols/stack_symbols.h"

namespace kinst {

std::string text_stack(const HitRecord &r, StackSymbolizer &sym);
void json_stack(nlohmann::json &j, const HitRecord &r, StackSymbolizer &sym);

// The captures under a hit: memory as hexdump -C lines, strings quoted
// with C escapes (text); "mem" and "str" arrays (JSON).  exprs[i] names
// capture i, mem says whether it is a --mem (else --str).
std::string text_captures(const HitRecord &r, const std::vector<CaptureDesc> &d);
void json_captures(nlohmann::json &j, const HitRecord &r,
    const std::vector<CaptureDesc> &d);
// Bytes as C would write them in a string literal, quoted.

// "function+0xoff [module]" or "0xaddr [?]".
std::string text_frame(const Frame &f);
// {"address","function","offset","module"} (null when unresolved).
nlohmann::json json_frame(const Frame &f);
// A frame of a folded stack (FlameGraph's collapsed format): no space and
// no ';' in it.  "function+0xoff", or "function" when functions; a
// module's code "module:function..."; unresolved "0xaddr".
std::string folded_frame(const Frame &f, bool functions);

} // namespace kinst

#endif
