/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nsclock: print CLOCK_MONOTONIC in nanoseconds (busybox date has no %N);
 * for timing in guest scripts and benchmarks.
 */
#include <stdio.h>
#include <time.h>

int
main(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) {
		perror("nsclock: clock_gettime");
		return (1);
	}
	printf("%lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	return (0);
}
