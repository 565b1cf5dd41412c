// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Node lists ("0-3,5", the format of /sys/devices/system/node/{possible,
 * online,has_memory,has_cpu} and of memory tier nodelists) and the node
 * checks of the move_pages backend, which mirror the module's:
 *
 *   EINVAL  node < 0 or node >= nr_node_ids, the kernel's number of possible
 *           nodes (highest node in <dir>/possible, plus one);
 *   ENODEV  the node is not in <dir>/has_memory (offline, or no memory).
 *
 * and the node layout the userspace scheduler places pages by
 * (tt_node_topo_read()): fast nodes have CPUs, slow nodes have memory and no
 * CPUs, and the slow node of a fast node is the nearest one by
 * <dir>/node<N>/distance.
 *
 * A kernel without NUMA support has no <dir>: it has the one node 0, with
 * CPUs and memory. tierctl compiles this file too.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/* Parse a decimal node id at *p, advancing *p; -1 if there is none. */
static long tt_nodelist_number(const char **p)
{
	const char *s = *p;
	long v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	while (*s >= '0' && *s <= '9') {
		v = v * 10 + (*s - '0');
		if (v > INT_MAX)
			return LONG_MAX;
		s++;
	}
	*p = s;
	return v;
}

/**
 * tt_nodelist_parse() - parse a node list such as "0-2,5" into @mask.
 * @str:  the list; may be empty, may end with a newline.
 * @mask: out: the nodes listed.
 *
 * Return: 0; -EINVAL when @str is malformed (the ranges must be ascending
 * pairs of decimal ids separated by commas); -ERANGE when a node id is
 * TT_MAX_NODES or more.
 */
int tt_nodelist_parse(const char *str, struct tt_nodemask *mask)
{
	const char *p = str;

	memset(mask, 0, sizeof(*mask));
	if (*p == '\n')
		p++;
	if (!*p)
		return 0;
	for (;;) {
		long first, last, n;

		first = tt_nodelist_number(&p);
		if (first < 0)
			return -EINVAL;
		last = first;
		if (*p == '-') {
			p++;
			last = tt_nodelist_number(&p);
			if (last < first)
				return -EINVAL;
		}
		if (last >= TT_MAX_NODES)
			return -ERANGE;
		for (n = first; n <= last; n++)
			mask->bits[n / 64] |= 1ULL << (n % 64);
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == '\n')
			p++;
		return *p ? -EINVAL : 0;
	}
}

/* tt_nodemask_test() - whether @node is in @mask; false when out of range. */
bool tt_nodemask_test(const struct tt_nodemask *mask, int node)
{
	if (node < 0 || node >= TT_MAX_NODES)
		return false;
	return mask->bits[node / 64] & (1ULL << (node % 64));
}

/* tt_nodemask_last() - the highest node in @mask, or -1 if it is empty. */
int tt_nodemask_last(const struct tt_nodemask *mask)
{
	int w;

	for (w = TT_NODEMASK_WORDS - 1; w >= 0; w--)
		if (mask->bits[w])
			return w * 64 + 63 - __builtin_clzll(mask->bits[w]);
	return -1;
}

/**
 * tt_nodemask_read() - read a node list file into @mask.
 * @path: e.g. "/sys/devices/system/node/has_memory".
 * @mask: out: the nodes listed.
 *
 * Return: 0, -errno of open()/read(), or tt_nodelist_parse()'s errors.
 */
int tt_nodemask_read(const char *path, struct tt_nodemask *mask)
{
	char buf[4096];
	size_t used = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (used < sizeof(buf) - 1) {
		n = read(fd, buf + used, sizeof(buf) - 1 - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		used += n;
	}
	close(fd);
	buf[used] = '\0';
	return tt_nodelist_parse(buf, mask);
}

/*
 * Read <dir>/<file>. A missing <dir> means a kernel without NUMA, where the
 * one node 0 is possible, online, has memory and has CPUs.
 */
static int tt_node_file(const char *dir, const char *file,
			struct tt_nodemask *mask)
{
	char path[PATH_MAX];
	int ret;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	ret = tt_nodemask_read(path, mask);
	if (ret == -ENOENT && access(dir, F_OK) < 0 && errno == ENOENT) {
		memset(mask, 0, sizeof(*mask));
		mask->bits[0] = 1;
		return 0;
	}
	return ret;
}

/**
 * tt_node_check() - the node checks of TT_IOC_MIGRATE.
 * @dir:  the sysfs node directory (TT_SYSFS_NODE_DIR; tests use a copy).
 * @node: the target node.
 *
 * Return: 0 when @node can receive pages, -EINVAL when it is not a possible
 * node id, -ENODEV when it is offline or has no memory, or -errno when sysfs
 * cannot be read.
 */
int tt_node_check(const char *dir, int node)
{
	struct tt_nodemask mask;
	int ret;

	if (node < 0 || node >= TT_MAX_NODES)
		return -EINVAL;
	ret = tt_node_file(dir, "possible", &mask);
	if (ret < 0)
		return ret;
	if (node > tt_nodemask_last(&mask))
		return -EINVAL;
	ret = tt_node_file(dir, "has_memory", &mask);
	if (ret < 0)
		return ret;
	return tt_nodemask_test(&mask, node) ? 0 : -ENODEV;
}

/**
 * tt_node_has_cpus() - whether @node has CPUs (a fast node by default).
 * @dir:  the sysfs node directory.
 * @node: the node.
 *
 * Return: 1 or 0, or -errno when sysfs cannot be read.
 */
int tt_node_has_cpus(const char *dir, int node)
{
	struct tt_nodemask mask;
	int ret;

	ret = tt_node_file(dir, "has_cpu", &mask);
	if (ret < 0)
		return ret;
	return tt_nodemask_test(&mask, node);
}

/* Read the small text file @path into @buf (NUL terminated). */
static int tt_node_read_text(const char *path, char *buf, size_t size)
{
	size_t used = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (used < size - 1) {
		n = read(fd, buf + used, size - 1 - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		used += n;
	}
	close(fd);
	buf[used] = '\0';
	return 0;
}

/*
 * The distances from @node to the online nodes, as <dir>/node<N>/distance
 * lists them (one number per online node, in node order), into @dist
 * (TT_MAX_NODES entries, -1 for nodes not listed).
 */
static int tt_node_distances(const char *dir, int node,
			     const struct tt_nodemask *online, int *dist)
{
	char path[PATH_MAX], buf[8192], *p = buf, *endp;
	int nid;

	if ((size_t)snprintf(path, sizeof(path), "%s/node%d/distance", dir,
			     node) >= sizeof(path))
		return -ENAMETOOLONG;
	nid = tt_node_read_text(path, buf, sizeof(buf));
	if (nid < 0)
		return nid;
	for (nid = 0; nid < TT_MAX_NODES; nid++) {
		long v;

		dist[nid] = -1;
		if (!tt_nodemask_test(online, nid))
			continue;
		errno = 0;
		v = strtol(p, &endp, 10);
		if (endp == p || errno || v < 0 || v > INT_MAX)
			return -EINVAL;
		dist[nid] = (int)v;
		p = endp;
	}
	return 0;
}

/**
 * tt_node_topo_read() - the node layout the scheduler places pages by.
 * @dir:  the sysfs node directory (TT_SYSFS_NODE_DIR; tests use a copy).
 * @fast: the fast node to find the nearest slow node of (-1: none).
 * @t:    out: the layout.
 *
 * A slow node is a node with memory and no CPUs; the nearest one is the one
 * with the smallest distance in <dir>/node<fast>/distance, ties going to
 * the lowest id (the lowest slow node id when that file cannot be read).
 *
 * Return: 0, or -errno when the node masks cannot be read.
 */
int tt_node_topo_read(const char *dir, int fast, struct tt_node_topo *t)
{
	struct tt_nodemask online;
	int *dist = NULL, nid, best = INT_MAX, ret;

	t->nearest_slow = -1;
	ret = tt_node_file(dir, "has_cpu", &t->cpu);
	if (ret < 0)
		return ret;
	ret = tt_node_file(dir, "has_memory", &t->mem);
	if (ret < 0)
		return ret;
	if (fast < 0 || fast >= TT_MAX_NODES)
		return 0;
	if (tt_node_file(dir, "online", &online) == 0) {
		dist = malloc(TT_MAX_NODES * sizeof(*dist));
		if (dist && tt_node_distances(dir, fast, &online, dist) < 0) {
			free(dist);
			dist = NULL;
		}
	}
	for (nid = 0; nid < TT_MAX_NODES; nid++) {
		int d;

		if (!tt_node_is_slow(t, nid))
			continue;
		d = dist ? dist[nid] : 0;
		if (d < 0)
			continue;
		if (d < best) {
			best = d;
			t->nearest_slow = nid;
		}
	}
	free(dist);
	return 0;
}

/* tt_node_is_slow() - whether @nid has memory and no CPUs in @t. */
bool tt_node_is_slow(const struct tt_node_topo *t, int nid)
{
	return tt_nodemask_test(&t->mem, nid) && !tt_nodemask_test(&t->cpu, nid);
}
