/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Stand-in for FreeBSD's <sys/linker.h>, for compiling cli/device/live_freebsd.cc
 * on another host only (tests/cli/CMakeLists.txt: live_freebsd_compiles).
 * Only what that file uses, with the types FreeBSD 15.1 declares
 * (sys/sys/linker.h; kldnext(2), kldstat(2), kldsym(2)).  Declarations,
 * no implementation: nothing built with them is linked.
 */
#ifndef KINST_STUB_SYS_LINKER_H
#define KINST_STUB_SYS_LINKER_H

#include <sys/param.h>
#include <sys/types.h>

struct kld_file_stat {
	int	version;		/* sizeof(struct kld_file_stat) */
	char	name[MAXPATHLEN];
	int	refs;
	int	id;
	caddr_t	address;
	size_t	size;
	char	pathname[MAXPATHLEN];
};

struct kld_sym_lookup {
	int	version;		/* sizeof(struct kld_sym_lookup) */
	char	*symname;
	u_long	symvalue;
	size_t	symsize;
};

#define	KLDSYM_LOOKUP	1

#ifdef __cplusplus
extern "C" {
#endif
int	kldnext(int _fileid);
int	kldstat(int _fileid, struct kld_file_stat *_stat);
int	kldsym(int _fileid, int _cmd, void *_data);
#ifdef __cplusplus
}
#endif

#endif
