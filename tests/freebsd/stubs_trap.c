/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The trap-context half of the OS interface (common/kinst_os.h) for test
 * programs that never run the engine: every function aborts, so a test that
 * reaches one fails loudly.
 */
#include <stdio.h>
#include <stdlib.h>

#include "kinst_control.h"
#include "kinst_os.h"

static void
unexpected(const char *what)
{
	fprintf(stderr, "tests/freebsd: unexpected call to %s\n", what);
	abort();
}

uint32_t kinst_os_cpu(void) { unexpected(__func__); return (0); }
uint64_t kinst_os_now_ns(void) { unexpected(__func__); return (0); }
uint64_t kinst_os_local_ns(void) { unexpected(__func__); return (0); }
void kinst_os_thread(int32_t *p, int32_t *t, char c[KINST_COMM_LEN])
{ (void)p; (void)t; (void)c; unexpected(__func__); }
void kinst_os_thread_key(uint64_t k[2])
{ (void)k; unexpected(__func__); }
void kinst_os_wake_deferred(struct kinst_session *s)
{ (void)s; unexpected(__func__); }
int kinst_os_read(uint64_t a, void *b, size_t l)
{ (void)a; (void)b; (void)l; unexpected(__func__); return (-1); }
int kinst_os_read_user(uint64_t a, void *b, size_t l)
{ (void)a; (void)b; (void)l; unexpected(__func__); return (-1); }
int kinst_os_write_stack(uint64_t a, const void *b, size_t l)
{ (void)a; (void)b; (void)l; unexpected(__func__); return (-1); }
uint32_t kinst_os_stack(const struct kinst_regs *r, void *c, uint32_t o,
    uint64_t *p, uint32_t m, bool *t)
{ (void)r; (void)c; (void)o; (void)p; (void)m; (void)t; unexpected(__func__);
  return (0); }
