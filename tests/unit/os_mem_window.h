/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Fake memory for the loads of probe programs in user-space tests: one
 * user page (umem at ubase) and one kernel page (kmem at kbase); any other
 * address faults.  kinst_os_read() and kinst_os_read_user() for programs
 * that link the interpreter, and a fake thread and clock.  Include once per program, at file scope (in
 * C++, inside the extern "C" block of the other kinst_os_* stubs).
 */
#ifndef KINST_TEST_OS_MEM_WINDOW_H
#define KINST_TEST_OS_MEM_WINDOW_H

static uint8_t umem[4096], kmem[4096];
static const uint64_t ubase = 0x7f0000000000ull;
static const uint64_t kbase = 0xffffffff82000000ull;

static int
window(uint64_t base, const uint8_t *m, uint64_t a, void *b, size_t n)
{
	if (a < base || a - base > sizeof(umem) || n > sizeof(umem) - (a - base))
		return -1;
	memcpy(b, m + (a - base), n);
	return 0;
}

int
kinst_os_read(uint64_t a, void *b, size_t n)
{
	return window(kbase, kmem, a, b, n);
}

int
kinst_os_read_user(uint64_t a, void *b, size_t n)
{
	return window(ubase, umem, a, b, n);
}

/*
 * The thread and the clock for KINST_OP_TS_* (per-thread state): a test
 * sets them (fake_key, fake_now) between runs.
 */
static uint64_t fake_key[2] = { 1, 1 };
static uint64_t fake_now;

void
kinst_os_thread_key(uint64_t key[2])
{
	key[0] = fake_key[0];
	key[1] = fake_key[1];
}

uint64_t
kinst_os_now_ns(void)
{
	return fake_now;
}

uint64_t
kinst_os_local_ns(void)
{
	return fake_now;
}

#endif /* !KINST_TEST_OS_MEM_WINDOW_H */
