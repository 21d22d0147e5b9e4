/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * syscall_loop: a guest workload for the scenario tests (linked -static, so
 * it needs nothing in the initramfs).
 *
 *	syscall_loop getpid COUNT	COUNT getpid(2) calls
 *	syscall_loop write COUNT BYTES	COUNT write(2)s of BYTES bytes to /dev/null
 *	syscall_loop read COUNT BYTES	COUNT read(2)s of BYTES bytes from /dev/zero
 *	syscall_loop read2 COUNT B1 B2	COUNT read(2)s of B1 bytes and COUNT of B2,
 *					alternating, from /dev/zero
 *	syscall_loop open COUNT FILE...	open(2) (openat) and close each of the
 *					COUNT FILEs once, in order
 *
 * Prints its own pid first, then makes exactly COUNT system calls of that
 * kind and no other of that kind: the pid comes from /proc/self, not
 * getpid(2), and is written with writev(2), not write(2).  With
 * SYSCALL_LOOP_NS set in the environment, it then prints a second line,
 * "loop_ns NS": the CLOCK_MONOTONIC nanoseconds the COUNT calls took (for
 * benchmarks: no process start in the figure).  Exit status 0, or 1 with a
 * message.
 */
#include <sys/syscall.h>
#include <sys/uio.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char buf[1 << 20];

static long long
now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) {
		perror("syscall_loop: clock_gettime");
		exit(1);
	}
	return ((long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
}

static void
usage(void)
{
	fprintf(stderr, "usage: syscall_loop getpid COUNT\n"
	    "       syscall_loop read|write COUNT BYTES\n"
	    "       syscall_loop read2 COUNT BYTES1 BYTES2\n"
	    "       syscall_loop open COUNT FILE...\n");
	exit(1);
}

static long
number(const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno != 0 || *s == '\0' || *end != '\0' || v < 0 || v > max) {
		fprintf(stderr, "syscall_loop: bad number: %s\n", s);
		exit(1);
	}
	return (v);
}

int
main(int argc, char **argv)
{
	struct iovec iov;
	char self[32];
	ssize_t n;
	long long t0;
	long count, bytes, bytes2, i;
	int fd, len;

	if (argc < 3)
		usage();
	count = number(argv[2], LONG_MAX);
	bytes = bytes2 = 0;
	if (strcmp(argv[1], "read2") == 0) {
		if (argc != 5)
			usage();
		bytes = number(argv[3], (long)sizeof(buf));
		bytes2 = number(argv[4], (long)sizeof(buf));
	} else if (strcmp(argv[1], "open") == 0) {
		if (count != argc - 3)
			usage();
	} else if (strcmp(argv[1], "getpid") != 0) {
		if (argc != 4)
			usage();
		bytes = number(argv[3], (long)sizeof(buf));
	} else if (argc != 3)
		usage();

	n = readlink("/proc/self", self, sizeof(self) - 1);
	if (n <= 0) {
		perror("syscall_loop: readlink /proc/self");
		return (1);
	}
	self[n] = '\n';
	iov.iov_base = self;
	iov.iov_len = (size_t)n + 1;
	if (writev(STDOUT_FILENO, &iov, 1) != (ssize_t)iov.iov_len) {
		perror("syscall_loop: writev");
		return (1);
	}

	t0 = now_ns();
	if (strcmp(argv[1], "getpid") == 0) {
		for (i = 0; i < count; i++)
			(void)syscall(SYS_getpid);
	} else if (strcmp(argv[1], "write") == 0) {
		if ((fd = open("/dev/null", O_WRONLY)) < 0) {
			perror("syscall_loop: /dev/null");
			return (1);
		}
		for (i = 0; i < count; i++)
			if (write(fd, buf, (size_t)bytes) != (ssize_t)bytes) {
				perror("syscall_loop: write");
				return (1);
			}
	} else if (strcmp(argv[1], "read") == 0) {
		if ((fd = open("/dev/zero", O_RDONLY)) < 0) {
			perror("syscall_loop: /dev/zero");
			return (1);
		}
		for (i = 0; i < count; i++)
			if (read(fd, buf, (size_t)bytes) != (ssize_t)bytes) {
				perror("syscall_loop: read");
				return (1);
			}
	} else if (strcmp(argv[1], "read2") == 0) {
		if ((fd = open("/dev/zero", O_RDONLY)) < 0) {
			perror("syscall_loop: /dev/zero");
			return (1);
		}
		for (i = 0; i < 2 * count; i++)
			if (read(fd, buf, (size_t)(i % 2 ? bytes2 : bytes)) !=
			    (ssize_t)(i % 2 ? bytes2 : bytes)) {
				perror("syscall_loop: read");
				return (1);
			}
	} else if (strcmp(argv[1], "open") == 0) {
		for (i = 0; i < count; i++) {
			if ((fd = open(argv[3 + i], O_RDONLY)) < 0) {
				perror(argv[3 + i]);
				return (1);
			}
			close(fd);
		}
	} else
		usage();
	if (getenv("SYSCALL_LOOP_NS") != NULL) {
		len = snprintf(self, sizeof(self), "loop_ns %lld\n", now_ns() - t0);
		iov.iov_base = self;
		iov.iov_len = (size_t)len;
		if (writev(STDOUT_FILENO, &iov, 1) != (ssize_t)iov.iov_len) {
			perror("syscall_loop: writev");
			return (1);
		}
	}
	return (0);
}
