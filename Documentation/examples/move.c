// SPDX-License-Identifier: MIT
/*
 * move.c: the smallest tiertrain program. Fill a buffer, move it to a slow
 * node and back with libtiertrain, and print where its bytes live at every
 * step. `make demo` runs it in the QEMU guest.
 *
 *   cc -O2 -I lib -I uapi Documentation/examples/move.c -L lib -ltiertrain
 *   ./a.out [MiB] [slow-node]      (defaults: 64, the first CPU-less node)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "tiertrain.h"

#define MAX_NODES 64

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* First node with memory and no CPUs, from sysfs; -1 if none. */
static int first_slow_node(void)
{
	for (int n = 0; n < MAX_NODES; n++) {
		char path[96], buf[4096];
		FILE *f;
		size_t len;

		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", n);
		f = fopen(path, "r");
		if (!f)
			continue;
		len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = '\0';
		if (len <= 1)	/* only "\n": no CPUs */
			return n;
	}
	return -1;
}

static int show(struct tt_session *s, const char *when, void *buf, size_t len)
{
	uint64_t bytes[MAX_NODES], absent;
	int ret, n;

	ret = tt_residency_ex(s, buf, len, bytes, MAX_NODES, &absent, NULL);
	if (ret < 0) {
		fprintf(stderr, "tt_residency: %s\n", strerror(-ret));
		return ret;
	}
	printf("  %-22s", when);
	for (n = 0; n < MAX_NODES; n++)
		if (bytes[n])
			printf("  node%d %7.1f MiB", n, bytes[n] / 1048576.0);
	if (absent)
		printf("  not present %.1f MiB", absent / 1048576.0);
	printf("\n");
	return 0;
}

static int move(struct tt_session *s, void *buf, size_t len, int node)
{
	struct tt_migrate_result r;
	double t0 = now_ms(), ms;
	int ret;

	ret = tt_migrate_ex(s, buf, len, node, 0, &r);
	ms = now_ms() - t0;
	if (ret < 0) {
		fprintf(stderr, "tt_migrate to node %d: %s\n", node, strerror(-ret));
		return ret;
	}
	printf("  moved %llu pages to node%d in %.1f ms (%.0f MB/s); already there %llu, skipped: not present %llu, busy %llu, unsupported %llu, no memory %llu\n",
	       (unsigned long long)r.moved, node, ms, len / 1e3 / (ms > 0 ? ms : 1),
	       (unsigned long long)r.already_on_node,
	       (unsigned long long)r.skipped_not_present,
	       (unsigned long long)r.skipped_busy,
	       (unsigned long long)r.skipped_unsupported,
	       (unsigned long long)r.skipped_no_memory);
	return 0;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 64;
	int slow = argc > 2 ? atoi(argv[2]) : first_slow_node();
	size_t len = mib << 20, i;
	struct tt_session *s;
	uint64_t *p;
	int ret = 1;

	if (!mib || slow < 0) {
		fprintf(stderr, "usage: %s [MiB] [slow-node] (no CPU-less node found)\n", argv[0]);
		return 2;
	}
	s = tt_open();
	if (!s) {
		perror("tt_open");
		return 1;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		goto out;
	}
	madvise(p, len, MADV_NOHUGEPAGE);
	for (i = 0; i < len / 8; i++)
		p[i] = i * 0x9e3779b97f4a7c15ULL;

	printf("tiertrain %s, backend %s: %zu MiB buffer, slow node %d\n",
	       tt_version(), tt_backend(s), mib, slow);
	if (show(s, "after fill:", p, len) ||
	    move(s, p, len, slow) || show(s, "after evict:", p, len) ||
	    move(s, p, len, 0) || show(s, "after prefetch:", p, len))
		goto out;
	for (i = 0; i < len / 8; i++) {
		if (p[i] != i * 0x9e3779b97f4a7c15ULL) {
			fprintf(stderr, "data mismatch at byte %zu\n", i * 8);
			goto out;
		}
	}
	printf("  data verified: %zu MiB intact after the round trip\n", mib);
	ret = 0;
out:
	tt_close(s);
	return ret;
}
