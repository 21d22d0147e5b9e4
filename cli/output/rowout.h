// SPDX-License-Identifier: BSD-2-Clause
// RowOut: one output row appended to a std::string through a raw cursor.
// list-offsets writes some thirty pieces a row, and std::string::append
// is a call into libstdc++ each: the string grows by what a piece needs
// when it would not fit, and is cut back to what was written when the
// row is done (the destructor).
#ifndef KINSTCTL_ROWOUT_H
#define KINSTCTL_ROWOUT_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "base/text.h"

namespace kinst {

class RowOut {
public:
	explicit RowOut(std::string &s) : s_(s), at_(s.size()) { reserve(256); }
	~RowOut() { s_.resize(at_); }
	RowOut(const RowOut &) = delete;
	RowOut &operator=(const RowOut &) = delete;

	// Where the cursor is: for pad_to.
	size_t mark() const { return at_; }
	// Spaces until width characters have been written since m.
	void pad_to(size_t m, size_t width)
	{
		if (at_ - m >= width)
			return;
		size_t n = width - (at_ - m);
		reserve(n);
		memset(p(), ' ', n);
		at_ += n;
	}

	template <size_t N>
	void lit(const char (&k)[N])
	{
		put(k, N - 1);
	}
	// ,"k":
	template <size_t N>
	void key(const char (&k)[N])
	{
		reserve(N + 3);
		p()[0] = ',';
		p()[1] = '"';
		memcpy(p() + 2, k, N - 1);
		p()[N + 1] = '"';
		p()[N + 2] = ':';
		at_ += N + 3;
	}
	void put(char c)
	{
		reserve(1);
		s_[at_++] = c;
	}
	void put(const char *d, size_t n)
	{
		reserve(n);
		memcpy(p(), d, n);
		at_ += n;
	}
	void put(const std::string &d) { put(d.data(), d.size()); }
	void cstr(const char *d) { put(d, strlen(d)); }
	void quoted(const char *d)	// a name that needs no escape
	{
		put('"');
		put(d, strlen(d));
		put('"');
	}
	void u64(uint64_t v)
	{
		char b[24];
		char *q = u64_digits(b + sizeof(b), v);
		put(q, (size_t)(b + sizeof(b) - q));
	}
	// Lower-case hex digits, at least width of them (zero-filled).
	void hex(uint64_t v, int width)
	{
		char b[16];
		char *q = hex_digits(b + sizeof(b), v, width);
		put(q, (size_t)(b + sizeof(b) - q));
	}
	// The same right-aligned in width columns, spaces before.
	void hex_right(uint64_t v, size_t width)
	{
		char b[16];
		char *q = hex_digits(b + sizeof(b), v, 0);
		size_t n = (size_t)(b + sizeof(b) - q);
		if (n < width) {
			reserve(width - n);
			memset(p(), ' ', width - n);
			at_ += width - n;
		}
		put(q, n);
	}
	void hex0x(uint64_t v)
	{
		char b[18];
		char *q = hex_digits(b + sizeof(b), v, 0);
		*--q = 'x';
		*--q = '0';
		put(q, (size_t)(b + sizeof(b) - q));
	}
	// Each byte as two hex digits, with sep (0: none) between bytes.
	void hex_bytes(const uint8_t *d, size_t n, char sep = 0)
	{
		static const char digits[] = "0123456789abcdef";
		reserve(3 * n);
		char *q = p();
		for (size_t i = 0; i < n; i++) {
			if (sep != 0 && i != 0)
				*q++ = sep;
			*q++ = digits[d[i] >> 4];
			*q++ = digits[d[i] & 15];
		}
		at_ = (size_t)(q - s_.data());
	}
	void json_string(const std::string &d)	// append_json_string()
	{
		reserve(json_string_room(d.size()));
		at_ = (size_t)(json_string_into(p(), d.data(), d.size()) - s_.data());
	}
	void json_as_dump(const std::string &d)	// append_json_as_dump()
	{
		std::string t;
		append_json_as_dump(t, d);
		put(t);
	}

private:
	char *p() { return &s_[at_]; }
	void reserve(size_t n)
	{
		if (s_.size() - at_ < n)
			s_.resize(at_ + n + 256);
	}
	std::string &s_;
	size_t at_;		// the end of what was written
};

} // namespace kinst

#endif
