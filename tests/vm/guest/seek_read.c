/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * seek_read: a guest workload for trace_btf_args (static, like the other
 * guest programs).
 *
 *	seek_read FILE OFF BYTES COUNT BACK
 *
 * Opens FILE read-only, prints "fd N" (the descriptor it got), then COUNT
 * times: lseek(fd, OFF, SEEK_SET), read(fd, buf, BYTES) (BYTES at most
 * 65536), lseek(fd, -BACK, SEEK_END).  Exactly COUNT read(2)s and 2 * COUNT
 * lseek(2)s, nothing else of those kinds.  Exit status 0, or 1 with a
 * message.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char buf[65536];

static long
arg(const char *s, const char *what, long max)
{
	char *e;
	long v;

	errno = 0;
	v = strtol(s, &e, 0);
	if (*s == '\0' || *e != '\0' || errno != 0 || v < 0 || v > max) {
		fprintf(stderr, "seek_read: bad %s: %s\n", what, s);
		exit(1);
	}
	return (v);
}

int
main(int argc, char **argv)
{
	long off, bytes, count, back, i;
	int fd;

	if (argc != 6) {
		fprintf(stderr, "usage: seek_read FILE OFF BYTES COUNT BACK\n");
		return (1);
	}
	off = arg(argv[2], "OFF", 1L << 40);
	bytes = arg(argv[3], "BYTES", (long)sizeof(buf));
	count = arg(argv[4], "COUNT", 1L << 30);
	back = arg(argv[5], "BACK", 1L << 40);
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "seek_read: %s: %s\n", argv[1], strerror(errno));
		return (1);
	}
	printf("fd %d\n", fd);
	fflush(stdout);
	for (i = 0; i < count; i++) {
		if (lseek(fd, (off_t)off, SEEK_SET) != (off_t)off ||
		    read(fd, buf, (size_t)bytes) < 0 ||
		    lseek(fd, -(off_t)back, SEEK_END) < 0) {
			fprintf(stderr, "seek_read: %s: %s\n", argv[1], strerror(errno));
			return (1);
		}
	}
	return (0);
}
