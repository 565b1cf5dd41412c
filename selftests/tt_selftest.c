// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the tiertrain selftests and benchmarks; see
 * tt_selftest.h for the contract of each function.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/mempolicy.h>
#include <linux/netlink.h>

#include "tiertrain.h"
#include "tt_selftest.h"

#define TT_ST_NODE_SYSFS "/sys/devices/system/node"

static size_t tt_st_page(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

int tt_st_read_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	err = errno;
	close(fd);
	if (n < 0)
		return -err;
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return (int)n;
}

int tt_st_write_file(const char *path, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;
	int fd, err;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	err = errno;
	close(fd);
	if (n < 0)
		return -err;
	return (size_t)n == len ? 0 : -EIO;
}

int tt_st_mkdirs(const char *path, char *failed, size_t size)
{
	char *d = strdup(path), *p;
	int ret = 0;

	if (!d)
		return -ENOMEM;
	for (p = d + 1; *p && !ret; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(d, 0755) && errno != EEXIST) {
			ret = -errno;
			if (failed)
				snprintf(failed, size, "%s", d);
		}
		*p = '/';
	}
	free(d);
	return ret;
}

int tt_st_read_ll(const char *path, long long *v)
{
	char buf[64], *end;
	int ret;

	ret = tt_st_read_file(path, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	errno = 0;
	*v = strtoll(buf, &end, 0);
	if (errno || end == buf)
		return -EINVAL;
	return 0;
}

/* The sysfs path of module parameter @name into @path. */
static void tt_st_param_path(const char *name, char *path, size_t size)
{
	snprintf(path, size, TT_ST_PARAMS "/%s", name);
}

int tt_st_param_read_str(const char *name, char *buf, size_t size)
{
	char path[256];

	tt_st_param_path(name, path, sizeof(path));
	return tt_st_read_file(path, buf, size);
}

long long tt_st_param_read(const char *name)
{
	char path[256];
	long long v;
	int ret;

	tt_st_param_path(name, path, sizeof(path));
	ret = tt_st_read_ll(path, &v);
	return ret ? ret : v;
}

int tt_st_param_write_str(const char *name, const char *val)
{
	char path[256];

	tt_st_param_path(name, path, sizeof(path));
	return tt_st_write_file(path, val);
}

int tt_st_param_write(const char *name, long long v)
{
	char val[32];

	snprintf(val, sizeof(val), "%lld", v);
	return tt_st_param_write_str(name, val);
}

int tt_st_read_nodelist(const char *path, unsigned char *set, int max)
{
	char buf[4096], *p;
	int ret, count = 0;

	memset(set, 0, max);
	ret = tt_st_read_file(path, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	p = buf;
	while (*p) {
		long lo, hi;
		char *end;

		lo = strtol(p, &end, 10);
		if (end == p)
			return -EINVAL;
		hi = lo;
		p = end;
		if (*p == '-') {
			p++;
			hi = strtol(p, &end, 10);
			if (end == p)
				return -EINVAL;
			p = end;
		}
		if (lo < 0 || hi >= max || lo > hi)
			return -ERANGE;
		for (; lo <= hi; lo++, count++)
			set[lo] = 1;
		if (*p == ',')
			p++;
		else if (*p)
			return -EINVAL;
	}
	return count;
}

int tt_st_node_mem(int node, uint64_t *free_bytes, uint64_t *total_bytes)
{
	char path[128], line[256];
	unsigned long long kb;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), TT_ST_NODE_SYSFS "/node%d/meminfo", node);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ':');

		if (!p)
			continue;
		if (sscanf(p + 1, "%llu", &kb) != 1)
			continue;
		if (strstr(line, " MemFree:") && free_bytes) {
			*free_bytes = kb * 1024;
			found++;
		} else if (strstr(line, " MemTotal:") && total_bytes) {
			*total_bytes = kb * 1024;
			found++;
		}
	}
	fclose(f);
	return found ? 0 : -ENOENT;
}

static int tt_st_node_cpus(int node, cpu_set_t *set)
{
	char path[128];
	unsigned char *cpus;
	int ret, i;

	cpus = calloc(CPU_SETSIZE, 1);
	if (!cpus)
		return -ENOMEM;
	snprintf(path, sizeof(path), TT_ST_NODE_SYSFS "/node%d/cpulist", node);
	ret = tt_st_read_nodelist(path, cpus, CPU_SETSIZE);
	if (ret >= 0) {
		CPU_ZERO(set);
		for (i = 0; i < CPU_SETSIZE; i++)
			if (cpus[i])
				CPU_SET(i, set);
	}
	free(cpus);
	return ret;
}

int tt_st_run_on_node(int node)
{
	cpu_set_t set;
	int ret;

	ret = tt_st_node_cpus(node, &set);
	if (ret < 0)
		return ret;
	if (ret == 0)
		return -ENODEV;
	if (sched_setaffinity(0, sizeof(set), &set))
		return -errno;
	return 0;
}

int tt_st_topo_read(struct tt_st_topo *t)
{
	unsigned char possible[TT_ST_MAX_NODES], online[TT_ST_MAX_NODES];
	unsigned char mem[TT_ST_MAX_NODES], cpu[TT_ST_MAX_NODES];
	uint64_t best_free = 0, least_total = UINT64_MAX;
	int ret, n, cur;

	t->nr_node_ids = 0;
	t->nr_mem_nodes = 0;
	t->fast = t->slow = t->small = t->offline = -1;
	ret = tt_st_read_nodelist(TT_ST_NODE_SYSFS "/possible", possible,
				  TT_ST_MAX_NODES);
	if (ret < 0)
		return ret;
	ret = tt_st_read_nodelist(TT_ST_NODE_SYSFS "/online", online,
				  TT_ST_MAX_NODES);
	if (ret < 0)
		return ret;
	ret = tt_st_read_nodelist(TT_ST_NODE_SYSFS "/has_memory", mem,
				  TT_ST_MAX_NODES);
	if (ret < 0)
		return ret;
	ret = tt_st_read_nodelist(TT_ST_NODE_SYSFS "/has_cpu", cpu,
				  TT_ST_MAX_NODES);
	if (ret < 0)
		return ret;

	cur = -1;
	if (syscall(SYS_getcpu, NULL, &cur, NULL) || cur < 0 || !mem[cur])
		cur = -1;
	for (n = 0; n < TT_ST_MAX_NODES; n++) {
		uint64_t fr = 0, tot = 0;

		if (!possible[n])
			continue;
		t->nr_node_ids = n + 1;
		if (!online[n] || !mem[n]) {
			if (t->offline < 0)
				t->offline = n;
			continue;
		}
		t->nr_mem_nodes++;
		if (cpu[n]) {
			if (t->fast < 0)
				t->fast = n;
			continue;
		}
		if (tt_st_node_mem(n, &fr, &tot))
			continue;
		if (t->slow < 0 || fr > best_free) {
			best_free = fr;
			t->slow = n;
		}
	}
	if (cur >= 0 && cpu[cur])
		t->fast = cur;
	/* the smallest memory-only node that is not @slow */
	for (n = 0; n < t->nr_node_ids; n++) {
		uint64_t tot = 0;

		if (n == t->slow || !possible[n] || !online[n] || !mem[n] ||
		    cpu[n] || tt_st_node_mem(n, NULL, &tot))
			continue;
		if (tot < least_total) {
			least_total = tot;
			t->small = n;
		}
	}
	return 0;
}

bool tt_st_kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

void *tt_st_map(size_t len, int thp)
{
	size_t extra = thp > 0 ? TT_ST_THP_SIZE : 0;
	char *p, *a;

	p = mmap(NULL, len + extra, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	a = p;
	if (extra) {
		a = (char *)(((uintptr_t)p + TT_ST_THP_SIZE - 1) &
			     ~(TT_ST_THP_SIZE - 1));
		if (a > p)
			munmap(p, a - p);
		if (a + len < p + len + extra)
			munmap(a + len, p + len + extra - (a + len));
	}
	if (thp && madvise(a, len, thp > 0 ? MADV_HUGEPAGE : MADV_NOHUGEPAGE)) {
		int err = errno;

		munmap(a, len);
		errno = err;
		return NULL;
	}
	return a;
}

void *tt_st_map_thp(size_t len, uint64_t seed)
{
	char *b = tt_st_map(len, 1);

	if (!b)
		return NULL;
	tt_st_fill(b, len, seed);
	if (tt_st_smaps_kb(b, len, "AnonHugePages") < (long long)(len / 1024)) {
		munmap(b, len);
		errno = ENOMEM;
		return NULL;
	}
	return b;
}

int tt_st_bind(void *addr, size_t len, int node)
{
	unsigned long mask[TT_ST_MAX_NODES / (8 * sizeof(unsigned long))];

	if (node < 0 || node >= TT_ST_MAX_NODES)
		return -EINVAL;
	memset(mask, 0, sizeof(mask));
	mask[node / (8 * sizeof(unsigned long))] |=
		1UL << (node % (8 * sizeof(unsigned long)));
	if (syscall(SYS_mbind, addr, len, MPOL_BIND, mask,
		    (unsigned long)TT_ST_MAX_NODES + 1, 0))
		return -errno;
	return 0;
}

long long tt_st_zoneinfo_sum(int node, const char *key)
{
	char line[256], fmt[48];
	long long v, sum = 0;
	int n, in_node = 0;
	FILE *f = fopen("/proc/zoneinfo", "re");

	if (!f)
		return -1;
	snprintf(fmt, sizeof(fmt), " %s %%lld", key);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Node %d, zone", &n) == 1)
			in_node = n == node;
		else if (in_node && sscanf(line, fmt, &v) == 1)
			sum += v;
	}
	fclose(f);
	return sum;
}

/*
 * The sum of the min watermarks of @node's zones, in bytes (0 when
 * /proc/zoneinfo cannot be read): free memory below it is the kernel's, and
 * a process bound to the node that faults past it is OOM-killed.
 */
static uint64_t tt_st_node_min_wmark(int node)
{
	long long pages = tt_st_zoneinfo_sum(node, "min");

	return pages > 0 ? (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

static void tt_st_hog_child(int node, uint64_t leave, int wfd)
{
	size_t chunk = TT_ST_MIB, held = 0;
	uint64_t fr = 0, tot = 0;
	char *m;

	if (tt_st_node_mem(node, &fr, &tot))
		_exit(2);
	leave += tt_st_node_min_wmark(node);
	m = mmap(NULL, tot, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED || madvise(m, tot, MADV_NOHUGEPAGE) ||
	    tt_st_bind(m, tot, node))
		_exit(3);
	while (held + chunk <= tot && !tt_st_node_mem(node, &fr, NULL) &&
	       fr > leave) {
		memset(m + held, 0x5a, chunk);
		held += chunk;
	}
	if (write(wfd, &held, sizeof(held)) != sizeof(held))
		_exit(4);
	for (;;)
		pause();
}

int tt_st_hog_node(int node, uint64_t leave, size_t *held)
{
	int p[2], err;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = errno;
		close(p[0]);
		close(p[1]);
		return -err;
	}
	if (!pid) {
		close(p[0]);
		tt_st_hog_child(node, leave, p[1]);
	}
	close(p[1]);
	n = read(p[0], held, sizeof(*held));
	close(p[0]);
	if (n != sizeof(*held)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -EIO;
	}
	return pid;
}

static inline uint64_t tt_st_word(uint64_t seed, uint64_t i)
{
	uint64_t x = (seed + 1) * 0x9E3779B97F4A7C15ULL ^ (i + 1);

	x ^= x >> 31;
	x *= 0xBF58476D1CE4E5B9ULL;
	return x ^ (x >> 29);
}

void tt_st_fill(void *buf, size_t len, uint64_t seed)
{
	uint64_t *w = buf;
	size_t i, n = len / sizeof(*w);

	for (i = 0; i < n; i++)
		w[i] = tt_st_word(seed, i);
}

long long tt_st_check(const void *buf, size_t len, uint64_t seed)
{
	const uint64_t *w = buf;
	size_t i, n = len / sizeof(*w);

	for (i = 0; i < n; i++)
		if (w[i] != tt_st_word(seed, i))
			return (long long)(i * sizeof(*w));
	return -1;
}

long long tt_st_check_sample(const void *buf, size_t len, uint64_t seed)
{
	const uint64_t *w = buf;
	size_t per = tt_st_page() / sizeof(*w);
	size_t i, n = len / sizeof(*w);

	for (i = 0; i + per <= n; i += per) {
		if (w[i] != tt_st_word(seed, i))
			return (long long)(i * sizeof(*w));
		if (w[i + per - 1] != tt_st_word(seed, i + per - 1))
			return (long long)((i + per - 1) * sizeof(*w));
	}
	return -1;
}

/* Page pointer array for [addr, addr + len): NULL on ENOMEM. */
static void **tt_st_pages(const void *addr, size_t len, size_t *n)
{
	size_t ps = tt_st_page(), i;
	void **pages;

	*n = (len + ps - 1) / ps;
	pages = malloc(*n * sizeof(*pages) + 1);
	if (!pages)
		return NULL;
	for (i = 0; i < *n; i++)
		pages[i] = (char *)addr + i * ps;
	return pages;
}

int tt_st_place(const void *addr, size_t len, struct tt_st_place *p)
{
	size_t n, i;
	void **pages;
	int *status, ret = 0;

	memset(p, 0, sizeof(*p));
	pages = tt_st_pages(addr, len, &n);
	status = malloc(n * sizeof(*status) + 1);
	if (!pages || !status) {
		ret = -ENOMEM;
		goto out;
	}
	if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0)) {
		ret = -errno;
		goto out;
	}
	p->pages = n;
	for (i = 0; i < n; i++) {
		int s = status[i];

		if (s >= 0 && s < TT_ST_MAX_NODES) {
			p->on_node[s]++;
		} else if (s == -ENOENT) {
			p->absent++;
		} else if (s == -EFAULT) {
			p->faulted++;
		} else {
			if (!p->other)
				p->first_other = s;
			p->other++;
		}
	}
out:
	free(pages);
	free(status);
	return ret;
}

int tt_st_place_settled(const void *addr, size_t len, int node,
			uint64_t want, struct tt_st_place *p)
{
	int tries, ret;

	for (tries = 0; tries < 100; tries++) {
		ret = tt_st_place(addr, len, p);
		if (ret || p->on_node[node] == want ||
		    !(p->absent + p->faulted))
			return ret;
		usleep(10000);
	}
	return 0;
}

const char *tt_st_place_str(const struct tt_st_place *p, char *buf,
			    size_t size)
{
	size_t off = 0;
	int n;

	buf[0] = '\0';
	for (n = 0; n < TT_ST_MAX_NODES && off < size; n++)
		if (p->on_node[n])
			off += snprintf(buf + off, size - off, "node%d=%llu ", n,
					(unsigned long long)p->on_node[n]);
	if (off < size)
		snprintf(buf + off, size - off,
			 "enoent=%llu efault=%llu other=%llu (first %d) of %llu pages",
			 (unsigned long long)p->absent,
			 (unsigned long long)p->faulted,
			 (unsigned long long)p->other, p->first_other,
			 (unsigned long long)p->pages);
	return buf;
}

long long tt_st_mincore(const void *addr, size_t len)
{
	size_t ps = tt_st_page(), n = (len + ps - 1) / ps, i;
	unsigned char *vec;
	long long count = 0;

	vec = malloc(n + 1);
	if (!vec)
		return -ENOMEM;
	if (mincore((void *)addr, len, vec)) {
		int err = errno;

		free(vec);
		return -err;
	}
	for (i = 0; i < n; i++)
		count += vec[i] & 1;
	free(vec);
	return count;
}

long long tt_st_pages_on(const void *addr, size_t len, int node)
{
	struct tt_st_place *p;
	long long ret;

	if (node < 0 || node >= TT_ST_MAX_NODES)
		return -EINVAL;
	p = malloc(sizeof(*p));
	if (!p)
		return -ENOMEM;
	ret = tt_st_place(addr, len, p);
	if (!ret)
		ret = (long long)p->on_node[node];
	free(p);
	return ret;
}

int tt_st_move_pages(void *addr, size_t len, int node, int *nr_failed)
{
	size_t n, i;
	void **pages;
	int *nodes, *status, ret = 0;
	long r;

	pages = tt_st_pages(addr, len, &n);
	nodes = malloc(n * sizeof(*nodes) + 1);
	status = malloc(n * sizeof(*status) + 1);
	if (!pages || !nodes || !status) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		nodes[i] = node;
	r = syscall(SYS_move_pages, 0, n, pages, nodes, status, MPOL_MF_MOVE);
	if (r < 0)
		ret = -errno;
	else if (nr_failed)
		*nr_failed = (int)r;
out:
	free(pages);
	free(nodes);
	free(status);
	return ret;
}

static int tt_st_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

int tt_st_ioc_migrate(int fd, uint64_t addr, uint64_t len, int node,
		      uint32_t flags, struct tt_migrate_result *res)
{
	struct tt_ioc_migrate m = {
		.addr = addr, .len = len, .node = node, .flags = flags,
	};
	int ret;

	ret = tt_st_ioctl(fd, TT_IOC_MIGRATE, &m);
	if (res)
		*res = m.result;
	return ret;
}

int tt_st_ioc_range(int fd, unsigned long cmd, uint64_t addr, uint64_t len,
		    uint32_t layer, uint32_t flags)
{
	struct tt_ioc_range r = {
		.addr = addr, .len = len, .layer = layer, .flags = flags,
	};

	return tt_st_ioctl(fd, cmd, &r);
}

int tt_st_ioc_residency(int fd, uint64_t addr, uint64_t len,
			uint64_t *bytes, uint32_t nr_nodes,
			uint64_t *not_present, uint64_t *other)
{
	struct tt_ioc_residency r = {
		.addr = addr, .len = len, .bytes_ptr = (uintptr_t)bytes,
		.nr_nodes = nr_nodes,
	};
	int ret;

	ret = tt_st_ioctl(fd, TT_IOC_RESIDENCY, &r);
	if (not_present)
		*not_present = r.not_present_bytes;
	if (other)
		*other = r.other_bytes;
	return ret;
}

int tt_st_ioc_stats(int fd, struct tt_ioc_stats *st)
{
	memset(st, 0, sizeof(*st));
	return tt_st_ioctl(fd, TT_IOC_STATS, st);
}

int tt_st_ioc_flush(int fd)
{
	return tt_st_ioctl(fd, TT_IOC_FLUSH, NULL);
}

/* Parse a smaps VMA header "start-end perms ...": 1 if it is one. */
static int tt_st_vma_header(const char *line, uintptr_t *start,
			    uintptr_t *end)
{
	unsigned long s, e;
	char c;

	if (sscanf(line, "%lx-%lx %c", &s, &e, &c) != 3)
		return 0;
	*start = s;
	*end = e;
	return 1;
}

long long tt_st_smaps_kb(const void *addr, size_t len, const char *field)
{
	uintptr_t a = (uintptr_t)addr, s, e;
	size_t flen = strlen(field);
	long long sum = 0;
	char line[512];
	int in = 0, found = 0;
	FILE *f;

	f = fopen("/proc/self/smaps", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		long long kb;

		if (tt_st_vma_header(line, &s, &e)) {
			in = s < a + len && e > a;
			continue;
		}
		if (!in || strncmp(line, field, flen) || line[flen] != ':')
			continue;
		if (sscanf(line + flen + 1, "%lld", &kb) == 1) {
			sum += kb;
			found = 1;
		}
	}
	fclose(f);
	return found ? sum : -ENOENT;
}

int tt_st_vmflags(const void *addr, char *buf, size_t size)
{
	uintptr_t a = (uintptr_t)addr, s, e;
	char line[512];
	int in = 0, ret = -ENOENT;
	FILE *f;

	f = fopen("/proc/self/smaps", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (tt_st_vma_header(line, &s, &e)) {
			in = s <= a && a < e;
			continue;
		}
		if (in && !strncmp(line, "VmFlags:", 8)) {
			snprintf(buf, size, "%s", line + 8);
			buf[strcspn(buf, "\n")] = '\0';
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

int tt_st_nr_vmas(const void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, s, e;
	char line[512];
	int n = 0;
	FILE *f;

	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (tt_st_vma_header(line, &s, &e) && s < a + len && e > a)
			n++;
	fclose(f);
	return n;
}

long long tt_st_vmstat(const char *name)
{
	size_t nlen = strlen(name);
	long long v, ret = -ENOENT;
	char line[256];
	FILE *f;

	f = fopen("/proc/vmstat", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, name, nlen) && line[nlen] == ' ' &&
		    sscanf(line + nlen + 1, "%lld", &v) == 1) {
			ret = v;
			break;
		}
	}
	fclose(f);
	return ret;
}

#define TT_ST_KHUGEPAGED_SLEEP \
	"/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs"

int tt_st_khugepaged_pause(long long *saved)
{
	int ret;

	ret = tt_st_read_ll(TT_ST_KHUGEPAGED_SLEEP, saved);
	if (ret)
		return ret;
	ret = tt_st_write_file(TT_ST_KHUGEPAGED_SLEEP, "86400000");
	/* let a scan in progress, and the one the write wakes, finish */
	usleep(200000 * tt_st_time_mul());
	return ret;
}

int tt_st_khugepaged_resume(long long saved)
{
	char v[32];

	snprintf(v, sizeof(v), "%lld", saved);
	return tt_st_write_file(TT_ST_KHUGEPAGED_SLEEP, v);
}

uint64_t tt_st_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Where the compute passes' sums go, so that they are not optimised out. */
static volatile uint64_t tt_st_sink;

bool tt_st_in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	while (p && n && (p = strstr(p, name))) {
		if ((p == list || p[-1] == ' ' || p[-1] == '\n') &&
		    (p[n] == ' ' || p[n] == '\n' || !p[n]))
			return true;
		p += n;
	}
	return false;
}

bool tt_st_left_out(const char *fixture, const char *test)
{
	const char *only;
	char name[256];

	if (snprintf(name, sizeof(name), "%s.%s", fixture, test) >= (int)sizeof(name))
		return false;
	if (tt_st_in_list(getenv("TT_ST_LEAVE_OUT"), name))
		return true;
	only = getenv("TT_ST_ONLY");
	return only && *only && !tt_st_in_list(only, name);
}

/* The factor in environment variable @name: 1..100, else 1. */
static unsigned int tt_st_env_factor(const char *name)
{
	const char *e = getenv(name);
	unsigned long v = e ? strtoul(e, NULL, 10) : 1;

	return v >= 1 && v <= 100 ? v : 1;
}

unsigned int tt_st_time_mul(void)
{
	return tt_st_env_factor("TT_ST_TIME_MUL");
}

unsigned int tt_st_count(unsigned int n)
{
	unsigned int div = tt_st_env_factor("TT_ST_COUNT_DIV");

	return n / div ? n / div : 1;
}

/* The calibrated factor (tt_st_calibrate()); 1 until a calibration. */
static double tt_st_calib_factor = 1.0;

/*
 * Milliseconds of one migration of [buf, buf + len) to @node queued with
 * TT_MIGRATE_ASYNC on the libtiertrain session @s and waited for with
 * tt_flush(): the path the tests' own sessions' moves take (the engine's
 * worker taking it up, and the session's mover threads for what the
 * module gives them, base pages with the setting mover_base), and the
 * move itself.
 */
static int tt_st_timed_move(struct tt_session *s, void *buf, size_t len,
			    int node, double *ms, int *finished_sync)
{
	uint64_t t0 = tt_st_now_ns();
	int ret;

	ret = tt_migrate_ex(s, buf, len, node, TT_MIGRATE_ASYNC, NULL) ?
	      -errno : 0;
	if (!ret)
		ret = tt_flush(s) ? -errno : 0;
	/*
	 * An asynchronous move makes one pass: a page busy for a moment (in
	 * another CPU's LRU batch) stays. The synchronous call's passes move
	 * what stayed, inside the timed move: what is timed is the whole move.
	 */
	if (!ret &&
	    tt_st_pages_on(buf, len, node) != (long long)(len / tt_st_page())) {
		(*finished_sync)++;
		ret = tt_migrate(s, buf, len, node) ? -errno : 0;
	}
	*ms = (tt_st_now_ns() - t0) / 1e6;
	if (ret)
		return ret;
	/* every page there: else what was timed was not the whole move */
	return tt_st_pages_on(buf, len, node) == (long long)(len / tt_st_page()) ?
	       0 : -EIO;
}

static int tt_st_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int tt_st_calibrate(int fast, int slow, size_t len, struct tt_st_calib *c)
{
	double ms[TT_ST_CALIB_ROUNDS], to_slow, to_fast;
	struct tt_session *ts;
	int ret = 0, n;
	uint64_t t0;
	void *buf;

	memset(c, 0, sizeof(*c));
	/* a kernel-backend session with the library's default movers */
	unsetenv("TIERTRAIN_BACKEND");
	ts = tt_open();
	if (!ts)
		return -errno;
	if (strcmp(tt_backend(ts), "kernel")) {
		tt_close(ts);
		return -ENODEV;
	}
	buf = tt_st_map(len, -1);
	if (!buf) {
		ret = -errno;
		goto out;
	}
	tt_st_fill(buf, len, 0xca1);
	/* start from @fast (the first touch may have been elsewhere) */
	ret = tt_st_timed_move(ts, buf, len, fast, &to_fast,
			       &c->finished_sync);
	t0 = tt_st_now_ns();
	for (n = 0; !ret && n < TT_ST_CALIB_ROUNDS; n++) {
		/* a slow node (CXL: seconds a round): three rounds are enough */
		if (n >= 3 && tt_st_now_ns() - t0 > TT_ST_CALIB_LONG_MS * 1000000ULL)
			break;
		ret = tt_st_timed_move(ts, buf, len, slow, &to_slow,
				       &c->finished_sync);
		if (!ret)
			ret = tt_st_timed_move(ts, buf, len, fast,
					       &to_fast, &c->finished_sync);
		/* the slower direction of the round, per MiB */
		ms[n] = (to_slow > to_fast ? to_slow : to_fast) * TT_ST_MIB / len;
	}
	/* the data after the round trips: EBADMSG names a lost byte */
	if (!ret && tt_st_check(buf, len, 0xca1) != -1)
		ret = -EBADMSG;
	munmap(buf, len);
	if (ret)
		goto out;
	qsort(ms, n, sizeof(ms[0]), tt_st_cmp_double);
	c->rounds = n;
	c->ms_per_mib = ms[n - 2];
	c->min_ms_per_mib = ms[0];
	c->max_ms_per_mib = ms[n - 1];
	c->factor = c->ms_per_mib / TT_ST_REF_MS_PER_MIB;
	if (c->factor < 1)
		c->factor = 1;
	if (c->factor > TT_ST_CALIB_MAX)
		c->factor = TT_ST_CALIB_MAX;
	tt_st_calib_factor = c->factor;
	c->scale = tt_st_time_scale();
out:
	tt_close(ts);
	return ret;
}

static void *tt_st_busy_run(void *arg)
{
	struct tt_st_busy *b = arg;
	uint64_t sum = 0;
	size_t i;

	while (!b->stop)
		for (i = 0; i < b->len && !b->stop; i += 64)
			sum += *(volatile const uint64_t *)((const char *)b->buf + i);
	tt_st_sink += sum;
	return NULL;
}

int tt_st_busy_start(struct tt_st_busy *b, size_t len)
{
	int ret;

	memset(b, 0, sizeof(*b));
	b->buf = tt_st_map(len, -1);
	if (!b->buf)
		return -errno;
	tt_st_fill(b->buf, len, 0xb5);
	b->len = len;
	ret = pthread_create(&b->thread, NULL, tt_st_busy_run, b);
	if (ret) {
		munmap(b->buf, len);
		b->buf = NULL;
		return -ret;
	}
	b->running = 1;
	return 0;
}

void tt_st_busy_stop(struct tt_st_busy *b)
{
	if (!b->running)
		return;
	b->stop = 1;
	pthread_join(b->thread, NULL);
	munmap(b->buf, b->len);
	b->buf = NULL;
	b->running = 0;
}

double tt_st_time_scale(void)
{
	double mul = tt_st_time_mul();

	return tt_st_calib_factor > mul ? tt_st_calib_factor : mul;
}

unsigned int tt_st_ms(unsigned int ms)
{
	return (unsigned int)(ms * tt_st_time_scale() + 0.5);
}

void tt_st_compute(const void *buf, size_t len, unsigned int ms)
{
	tt_st_compute_from(buf, len, tt_st_now_ns(), ms);
}

void tt_st_compute_from(const void *buf, size_t len, uint64_t t0,
			unsigned int ms)
{
	uint64_t end = t0 + tt_st_ms(ms) * 1000000ULL, now, sum = 0;
	size_t i;

	for (i = 0; i < len; i += 4096)
		sum += *(const uint64_t *)((const char *)buf + i);
	tt_st_sink += sum;
	now = tt_st_now_ns();
	if (now < end)
		usleep((end - now) / 1000);
}

size_t tt_st_scaled(size_t len)
{
	const char *e = getenv("TT_ST_SIZE_DIV");
	unsigned long div = e ? strtoul(e, NULL, 10) : 1;

	if (div > 1)
		len /= div;
	len -= len % TT_ST_THP_SIZE;
	return len ? len : TT_ST_THP_SIZE;
}

/* ---- raw generic netlink of the tiertrain family -------------------------- */

struct nlattr *tt_st_nl_put(struct nlmsghdr *nlh, uint16_t type,
			    const void *data, uint16_t len)
{
	struct nlattr *a = (void *)((char *)nlh + NLMSG_ALIGN(nlh->nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memset((char *)a + NLA_HDRLEN, 0, NLA_ALIGN(len));
	if (len)
		memcpy((char *)a + NLA_HDRLEN, data, len);
	nlh->nlmsg_len = NLMSG_ALIGN(nlh->nlmsg_len) + NLA_ALIGN(a->nla_len);
	return a;
}

struct nlmsghdr *tt_st_nl_msg(struct tt_st_nl *nl, uint16_t type, uint8_t cmd,
			      uint16_t flags)
{
	struct nlmsghdr *nlh = (void *)nl->buf;
	struct genlmsghdr *g;

	memset(nl->buf, 0, 4096);
	nlh->nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = ++nl->seq;
	g = NLMSG_DATA(nlh);
	g->cmd = cmd;
	g->version = 1;
	return nlh;
}

const void *tt_st_nla_data(const struct nlattr *a)
{
	return (const char *)a + NLA_HDRLEN;
}

uint64_t tt_st_nla_u64(const struct nlattr *a)
{
	uint64_t v;

	memcpy(&v, tt_st_nla_data(a), sizeof(v));
	return v;
}

/* The attribute at @a if it is whole within the @rem bytes left, else NULL. */
static const struct nlattr *tt_st_nla_ok(const struct nlattr *a, int rem)
{
	if (rem >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= rem)
		return a;
	return NULL;
}

/* The attribute after @a in a run that ends at @end (NULL if none). */
static const struct nlattr *tt_st_nla_after(const struct nlattr *a,
					    const char *end)
{
	const struct nlattr *next;

	next = (const void *)((const char *)a + NLA_ALIGN(a->nla_len));
	if ((const char *)next >= end)
		return NULL;
	return tt_st_nla_ok(next, end - (const char *)next);
}

const struct nlattr *tt_st_nl_next(const struct nlmsghdr *nlh,
				   const struct nlattr *prev)
{
	const char *end = (const char *)nlh + nlh->nlmsg_len;
	const struct nlattr *first;

	if (prev)
		return tt_st_nla_after(prev, end);
	if (nlh->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
		return NULL;
	first = (const void *)((const char *)NLMSG_DATA(nlh) + GENL_HDRLEN);
	return tt_st_nla_ok(first, end - (const char *)first);
}

const struct nlattr *tt_st_nl_attr(const struct nlmsghdr *nlh, int type)
{
	const struct nlattr *a;

	for (a = tt_st_nl_next(nlh, NULL); a; a = tt_st_nl_next(nlh, a))
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
	return NULL;
}

void tt_st_nl_attrs(const struct nlmsghdr *nlh, const struct nlattr **tb,
		    unsigned int max)
{
	const struct nlattr *a;

	memset(tb, 0, (max + 1) * sizeof(*tb));
	for (a = tt_st_nl_next(nlh, NULL); a; a = tt_st_nl_next(nlh, a))
		if ((a->nla_type & NLA_TYPE_MASK) <= max)
			tb[a->nla_type & NLA_TYPE_MASK] = a;
}

/* The extack message in the TLVs after @hlen bytes of @nlh's payload. */
static void tt_st_nl_extack(const struct nlmsghdr *nlh, size_t hlen, char *buf,
			    size_t len)
{
	const char *end = (const char *)nlh + nlh->nlmsg_len;
	const struct nlattr *a;

	buf[0] = 0;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) ||
	    nlh->nlmsg_len < NLMSG_LENGTH(NLMSG_ALIGN(hlen)))
		return;
	a = (const void *)((const char *)NLMSG_DATA(nlh) + NLMSG_ALIGN(hlen));
	for (a = tt_st_nla_ok(a, end - (const char *)a); a;
	     a = tt_st_nla_after(a, end))
		if (a->nla_type == NLMSGERR_ATTR_MSG)
			snprintf(buf, len, "%s", (const char *)tt_st_nla_data(a));
}

int tt_st_nl_talk(struct tt_st_nl *nl, struct tt_st_nl_reply *rep,
		  tt_st_nl_cb cb, void *arg)
{
	struct nlmsghdr *req = (void *)nl->buf;
	uint32_t seq = req->nlmsg_seq;

	memset(rep, 0, sizeof(*rep));
	if (send(nl->fd, req, req->nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		ssize_t n = recv(nl->fd, nl->buf, TT_ST_NL_BUF, 0);
		struct nlmsghdr *nlh = (void *)nl->buf;

		if (n < 0)
			return -errno;
		rep->parts++;
		for (; NLMSG_OK(nlh, n); nlh = NLMSG_NEXT(nlh, n)) {
			if (nlh->nlmsg_seq != seq)
				continue;
			if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
				rep->intr = true;
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nlh);

				rep->error = e->error;
				tt_st_nl_extack(nlh, sizeof(*e) +
						((nlh->nlmsg_flags & NLM_F_CAPPED) ?
						 0 : e->msg.nlmsg_len - NLMSG_HDRLEN),
						rep->extack, sizeof(rep->extack));
				return 0;
			}
			if (nlh->nlmsg_type == NLMSG_DONE) {
				memcpy(&rep->error, NLMSG_DATA(nlh), sizeof(int));
				tt_st_nl_extack(nlh, sizeof(int), rep->extack,
						sizeof(rep->extack));
				return 0;
			}
			rep->msgs++;
			if (cb)
				cb(nlh, arg);
		}
	}
}

static void tt_st_nl_family_cb(const struct nlmsghdr *nlh, void *arg)
{
	const struct nlattr *a = tt_st_nl_attr(nlh, CTRL_ATTR_FAMILY_ID);

	if (a)
		memcpy(arg, tt_st_nla_data(a), sizeof(uint16_t));
}

int tt_st_nl_open(struct tt_st_nl *nl)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct tt_st_nl_reply rep;
	struct nlmsghdr *nlh;
	int one = 1, ret;

	memset(nl, 0, sizeof(*nl));
	nl->buf = malloc(TT_ST_NL_BUF);
	nl->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (!nl->buf || nl->fd < 0 ||
	    bind(nl->fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -errno;
	setsockopt(nl->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(nl->fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	nlh = tt_st_nl_msg(nl, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 0);
	tt_st_nl_put(nlh, CTRL_ATTR_FAMILY_NAME, TT_GENL_NAME,
		     sizeof(TT_GENL_NAME));
	ret = tt_st_nl_talk(nl, &rep, tt_st_nl_family_cb, &nl->family);
	if (ret)
		return ret;
	return rep.error ? rep.error : nl->family ? 0 : -ENOENT;
}

void tt_st_nl_close(struct tt_st_nl *nl)
{
	if (nl->fd > 0)
		close(nl->fd);
	free(nl->buf);
	nl->buf = NULL;
	nl->fd = -1;
}

/* The kernel log's last 4 KiB, each line prefixed with "# ". */
static void tt_st_log_kmsg_tail(void)
{
	char *buf = malloc(1 << 16), *p, *l;
	int n;

	if (!buf)
		return;
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, (1 << 16) - 1);
	if (n > 0) {
		buf[n] = '\0';
		p = n > 4096 ? strchr(buf + n - 4096, '\n') : buf;
		fprintf(stderr, "# the kernel log's last lines:\n");
		for (l = strtok(p ? p : buf, "\n"); l; l = strtok(NULL, "\n"))
			fprintf(stderr, "#   %s\n", l);
	}
	free(buf);
}

/*
 * Print the kernel stacks of the other tasks that may hold what a stalled
 * offline waits for: those in the module's code (the tiertrain_*
 * workqueues' kworkers among them) and those in uninterruptible sleep;
 * 32 at most.
 */
static void tt_st_log_other_stacks(void)
{
	char path[64], comm[64], stat[512], buf[4096], *p;
	int n, shown = 0, self = getpid();
	struct dirent *d;
	DIR *dir;

	dir = opendir("/proc");
	if (!dir)
		return;
	while ((d = readdir(dir)) && shown < 32) {
		int pid = atoi(d->d_name), dstate;

		if (pid <= 0 || pid == self)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		if (tt_st_read_file(path, stat, sizeof(stat)) < 0)
			continue;
		p = strrchr(stat, ')');
		dstate = p && p[1] == ' ' && p[2] == 'D';
		snprintf(path, sizeof(path), "/proc/%d/stack", pid);
		n = tt_st_read_file(path, buf, sizeof(buf));
		if (n < 0 || (!dstate && !strstr(buf, "[tiertrain]")))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		if (tt_st_read_file(path, comm, sizeof(comm)) < 0)
			strcpy(comm, "?");
		comm[strcspn(comm, "\n")] = 0;
		fprintf(stderr, "# pid %d (%s)%s:\n", pid, comm,
			dstate ? ", uninterruptible" : "");
		for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n"))
			fprintf(stderr, "#   %s\n", l);
		shown++;
	}
	closedir(dir);
	if (!shown)
		fprintf(stderr, "# no other task is in the module's code or in uninterruptible sleep\n");
}

void tt_st_log_stacks(const char *why)
{
	char path[64], buf[4096];
	struct dirent *d;
	DIR *dir;
	int n;

	fprintf(stderr, "# %s; the test's threads in the kernel:\n", why);
	dir = opendir("/proc/self/task");
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%.16s/stack", d->d_name);
		n = tt_st_read_file(path, buf, sizeof(buf));
		fprintf(stderr, "# task %s:\n", d->d_name);
		if (n < 0)
			continue;
		for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n"))
			fprintf(stderr, "#   %s\n", l);
	}
	closedir(dir);
	tt_st_log_other_stacks();
	tt_st_log_kmsg_tail();
}

size_t tt_st_kmsg_last(const char *const *needles, char *out, size_t size)
{
	char *buf = malloc(1 << 17), *l, *hit = NULL, *next;
	const char *const *nd;
	size_t len = 0;
	int n, more;

	if (size)
		out[0] = '\0';
	if (!buf || !size) {
		free(buf);
		return 0;
	}
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, (1 << 17) - 1);
	if (n <= 0) {
		free(buf);
		return 0;
	}
	buf[n] = '\0';
	for (l = buf; l && *l; l = next) {
		next = strchr(l, '\n');
		if (next)
			*next++ = '\0';
		for (nd = needles; *nd; nd++)
			if (strstr(l, *nd))
				hit = l;
		if (next)
			next[-1] = '\n';
	}
	for (l = hit, more = 3; l && more--; l = next) {
		next = strchr(l, '\n');
		if (next)
			*next++ = '\0';
		n = snprintf(out + len, size - len, "%s%s", len ? " | " : "", l);
		if (n < 0 || (size_t)n >= size - len) {
			len = size - 1;
			break;
		}
		len += n;
	}
	free(buf);
	return len;
}

static void tt_st_noop(int sig)
{
	(void)sig;
}

long tt_st_orphan_thps(void)
{
	/* /proc/kpageflags bits (Documentation/admin-guide/mm/pagemap.rst) */
	const uint64_t lru = 1ULL << 5, mmap = 1ULL << 11, anon = 1ULL << 12,
		       swapcache = 1ULL << 13, head = 1ULL << 15,
		       thp = 1ULL << 22;
	const uint64_t want = thp | head | anon | lru;
	uint64_t *f = malloc(65536 * sizeof(*f));
	long found = 0;
	ssize_t n, i;
	int fd;

	if (!f)
		return -ENOMEM;
	fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(f);
		return -errno;
	}
	while ((n = read(fd, f, 65536 * sizeof(*f))) > 0) {
		for (i = 0; i < n / (ssize_t)sizeof(*f); i++)
			if ((f[i] & want) == want && !(f[i] & (mmap | swapcache)))
				found++;
	}
	if (n < 0)
		found = -errno;
	close(fd);
	free(f);
	return found;
}

/* the writer's kernel stack at its last interruption (tt_st_block_stall()) */
static char tt_st_stall[1024];

const char *tt_st_block_stall(void)
{
	return tt_st_stall;
}

/*
 * The watcher of tt_st_block_write(): after @secs, copy the kernel stack
 * of thread @tid of @pid (still in the write) to @fd, then interrupt it.
 */
static void tt_st_block_watch(pid_t pid, pid_t tid, unsigned int secs, int fd)
{
	char path[64], buf[4096];
	int n;

	sleep(secs);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stack", pid, tid);
	n = tt_st_read_file(path, buf, sizeof(buf));
	if (n > 0 && write(fd, buf, n) != n)
		n = 0;
	syscall(SYS_tgkill, pid, tid, SIGALRM);
	_exit(0);
}

int tt_st_block_write(const char *path, const char *state, unsigned int secs)
{
	struct sigaction sa = { .sa_handler = tt_st_noop }, old;
	pid_t pid = getpid(), tid = syscall(SYS_gettid), w = -1;
	char stack[4096];
	int ret, fd[2], n;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);	/* no SA_RESTART */
	if (!pipe2(fd, O_CLOEXEC)) {
		w = fork();
		if (!w) {
			close(fd[0]);
			tt_st_block_watch(pid, tid, secs, fd[1]);
		}
		close(fd[1]);
	} else {
		fd[0] = -1;
	}
	if (w < 0)
		alarm(secs);
	ret = tt_st_write_file(path, state);
	alarm(0);
	if (w > 0) {
		kill(w, SIGKILL);
		waitpid(w, NULL, 0);
	}
	sigaction(SIGALRM, &old, NULL);
	n = fd[0] >= 0 ? read(fd[0], stack, sizeof(stack) - 1) : -1;
	if (fd[0] >= 0)
		close(fd[0]);
	if (ret == -EINTR) {
		char why[320], *l;
		size_t len = 0;

		/* "[<0>] func+0x1/0x2": the names, innermost first */
		tt_st_stall[0] = '\0';
		stack[n > 0 ? n : 0] = '\0';
		for (l = strtok(stack, "\n"); l; l = strtok(NULL, "\n")) {
			char *f = strstr(l, "] ");
			int k;

			f = f ? f + 2 : l;
			k = snprintf(tt_st_stall + len, sizeof(tt_st_stall) - len,
				     "%s%.*s", len ? " < " : "", (int)strcspn(f, "+"), f);
			if (k < 0 || (size_t)k >= sizeof(tt_st_stall) - len)
				break;
			len += k;
		}
		snprintf(why, sizeof(why), "%s: '%s' not done after %u s, interrupted; the writer was in: %s",
			 path, state, secs, tt_st_stall[0] ? tt_st_stall : "(stack not read)");
		tt_st_log_stacks(why);
	}
	return ret;
}
