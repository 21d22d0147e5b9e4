/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The control-path half of the OS interface (common/kinst_os.h) for test
 * programs that link common/kinst_control.c only for kinst_name_listed()
 * and never arm through it: every function aborts, so a test that reaches
 * one fails loudly.
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

void kinst_os_ctl_lock(void) { unexpected(__func__); }
void kinst_os_ctl_unlock(void) { unexpected(__func__); }
void *kinst_os_alloc(size_t s) { (void)s; unexpected(__func__); return (NULL); }
void kinst_os_free(void *p, size_t s) { (void)p; (void)s; unexpected(__func__); }
int kinst_os_func_resolve(const char *m, const char *f, struct kinst_func *k)
{ (void)m; (void)f; (void)k; unexpected(__func__); return (KINST_E_NOENT); }
void kinst_os_func_release(struct kinst_func *f) { (void)f; unexpected(__func__); }
void kinst_os_log_hold(const char *m, int32_t p, const char *c, const char *f,
    bool h)
{ (void)m; (void)p; (void)c; (void)f; (void)h; unexpected(__func__); }
int kinst_os_func_check(const struct kinst_func *f, const char *n)
{ (void)f; (void)n; unexpected(__func__); return (0); }
void kinst_os_text_lock(void) { unexpected(__func__); }
void kinst_os_text_unlock(void) { unexpected(__func__); }
int kinst_os_insn_check(const struct kinst_func *f, uint64_t a, uint32_t l)
{ (void)f; (void)a; (void)l; unexpected(__func__); return (0); }
void kinst_os_text_write(uint64_t a, uint8_t b) { (void)a; (void)b; unexpected(__func__); }
void kinst_os_text_sync(void) { unexpected(__func__); }
void kinst_os_quiesce(void) { unexpected(__func__); }
int kinst_os_jopt_check(const struct kinst_func *f, uint64_t a,
    const uint8_t *b, uint32_t l)
{ (void)f; (void)a; (void)b; (void)l; unexpected(__func__); return (0); }
void kinst_os_sync_tasks(void) { unexpected(__func__); }
void *kinst_os_tramp_alloc(size_t s, uint64_t *a)
{ (void)s; (void)a; unexpected(__func__); return (NULL); }
int kinst_os_tramp_seal(void *m, size_t s) { (void)m; (void)s; unexpected(__func__); return (-1); }
void kinst_os_tramp_free(void *m, size_t s) { (void)m; (void)s; unexpected(__func__); }
void kinst_os_tramp_unused(void *m, size_t s) { (void)m; (void)s; unexpected(__func__); }
