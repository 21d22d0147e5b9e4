// SPDX-License-Identifier: BSD-2-Clause
#include "symbols/stack_symbols.h"

#include "base/live.h"
#include "symbols/symbols.h"

namespace kinst {

struct StackSymbolizer::Impl {
	bool loaded = false;
	SymbolTable syms;
};

StackSymbolizer::StackSymbolizer() : impl_(std::make_unique<Impl>()) {}
StackSymbolizer::~StackSymbolizer() = default;

void
StackSymbolizer::load()
{
	if (!impl_->loaded) {
		impl_->loaded = true;
		load_live_symbols(impl_->syms);
	}
}

Frame
StackSymbolizer::frame(uint64_t addr, size_t i)
{
	load();
	Frame f;
	f.address = addr;
	uint64_t look = i > 0 && addr > 0 ? addr - 1 : addr;
	std::vector<SymbolTable::Ref> refs = impl_->syms.containing(look);
	if (refs.empty())
		return f;
	const Function &fn = impl_->syms.function(refs.front());
	f.resolved = true;
	f.function = fn.name;
	f.offset = addr - fn.addr;
	f.module = impl_->syms.module(refs.front().module).name();
	return f;
}

} // namespace kinst
