// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input to the raw ioctls of /dev/tiertrain: every rejected call must
 * fail with its documented errno and change nothing. After each one the
 * 4 MiB pattern buffer of the fixture is checked: data intact and every page
 * still on the fast node (move_pages(2)), and at the end the session has
 * counted no migration and holds no registration.
 *
 *   range_checks    zero length, unaligned addr/len, wrap-around and ends
 *                   beyond user space (migrate, register, residency).
 *   holes           a range with an unmapped hole, a fully unmapped range.
 *   pfnmap          a VM_IO | VM_PFNMAP device mapping (/dev/hpet or
 *                   /dev/mem), alone and next to anonymous memory.
 *   file_private    a MAP_PRIVATE file mapping with copied-on-write pages.
 *   shared_anon     MAP_SHARED | MAP_ANONYMOUS.
 *   hugetlb         a hugetlbfs (MAP_HUGETLB) mapping.
 *   bad_nodes       -1, INT_MIN, nr_node_ids, TT_MAX_NODES, 100000.
 *   offline_node    a possible node that is offline or has no memory.
 *   target_full     the target node filled by a bound helper: ENOSPC,
 *                   skipped_no_memory, data intact; succeeds once freed.
 *   unknown_flags   unknown flag bits and non-zero "must be 0" fields.
 *   bad_pointers    NULL/wild argument pointers, bad nr_nodes, unknown ioctl.
 *   inherited_fd    a forked child using the parent's session: EPERM.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tt_harness.h"

#define TT_BUF_LEN	(4 * TT_ST_MIB)
#define TT_SEED		5

FIXTURE(errors)
{
	int fd;
	struct tt_st_topo topo;
	size_t ps;
	char *buf;
	long long hugepages;	/* nr_hugepages to restore, -1: untouched */
	pid_t filler;		/* target_full helper, 0: none */
};

FIXTURE_SETUP(errors)
{
	self->fd = -1;
	self->buf = NULL;
	self->hugepages = -1;
	self->filler = 0;
	self->ps = tt_page_size();
	TT_SETUP_NODES(&self->topo, 1);
	self->fd = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", TT_ST_DEV, strerror(errno));
	self->buf = tt_st_map(TT_BUF_LEN, -1);
	ASSERT_NE(NULL, self->buf);
	tt_st_fill(self->buf, TT_BUF_LEN, TT_SEED);
	TT_ASSERT_PLACED(self->buf, TT_BUF_LEN, self->topo.fast);
}

FIXTURE_TEARDOWN(errors)
{
	char v[32];

	if (self->filler > 0) {
		kill(self->filler, SIGKILL);
		waitpid(self->filler, NULL, 0);
	}
	if (self->hugepages >= 0) {
		snprintf(v, sizeof(v), "%lld", self->hugepages);
		tt_st_write_file("/proc/sys/vm/nr_hugepages", v);
	}
	if (self->buf)
		munmap(self->buf, TT_BUF_LEN);
	if (self->fd >= 0)
		close(self->fd);
}

/* The fixture buffer is as set up: same data, every page on the fast node. */
#define TT_UNCHANGED() do {						\
	TT_ASSERT_PATTERN(self->buf, TT_BUF_LEN, TT_SEED);		\
	TT_ASSERT_PLACED(self->buf, TT_BUF_LEN, self->topo.fast);	\
} while (0)

/* No call of the test got past the checks. */
#define TT_NOTHING_COUNTED() do {					\
	struct tt_ioc_stats _st;					\
	ASSERT_EQ(0, tt_st_ioc_stats(self->fd, &_st));			\
	ASSERT_EQ(0ULL, _st.migrate_calls);				\
	ASSERT_EQ(0ULL, _st.registered_ranges);				\
	ASSERT_EQ(0ULL, _st.total.pages);				\
} while (0)

/* A migration of [a, a + l) to @node fails with @err and changes nothing. */
#define TT_MIGRATE_FAILS(a, l, node, flags, err) do {			\
	int _ret = tt_st_ioc_migrate(self->fd, (a), (l), (node),	\
				     (flags), NULL);			\
	ASSERT_EQ(-(err), _ret)						\
		TH_LOG("migrate addr %#llx len %#llx node %d flags %#x: %s",	\
		       (unsigned long long)(a), (unsigned long long)(l),	\
		       (int)(node), (unsigned int)(flags),		\
		       _ret ? strerror(-_ret) : "success");		\
	TT_UNCHANGED();							\
} while (0)

#define TT_REGISTER_FAILS(a, l, flags, err) do {			\
	int _ret = tt_st_ioc_range(self->fd, TT_IOC_REGISTER, (a), (l),	\
				   0, (flags));				\
	ASSERT_EQ(-(err), _ret)						\
		TH_LOG("register addr %#llx len %#llx flags %#x: %s",	\
		       (unsigned long long)(a), (unsigned long long)(l),	\
		       (unsigned int)(flags),				\
		       _ret ? strerror(-_ret) : "success");		\
	TT_UNCHANGED();							\
} while (0)

#define TT_RESIDENCY_FAILS(a, l, err) do {				\
	uint64_t _b[4];							\
	int _ret = tt_st_ioc_residency(self->fd, (a), (l), _b, 4,	\
				       NULL, NULL);			\
	ASSERT_EQ(-(err), _ret)						\
		TH_LOG("residency addr %#llx len %#llx: %s",		\
		       (unsigned long long)(a), (unsigned long long)(l),	\
		       _ret ? strerror(-_ret) : "success");		\
} while (0)

TEST_F(errors, range_checks)
{
	uint64_t b, ps, beyond = 0xffff800000000000ULL;
	int slow;

	TT_SKIP_IF_SETUP_SKIPPED();
	b = (uintptr_t)self->buf;
	ps = self->ps;
	slow = self->topo.slow;

	TT_MIGRATE_FAILS(b, 0, slow, 0, EINVAL);
	TT_MIGRATE_FAILS(b + 1, ps, slow, 0, EINVAL);
	TT_MIGRATE_FAILS(b + ps / 2, TT_BUF_LEN - ps, slow, 0, EINVAL);
	TT_MIGRATE_FAILS(b, ps + 1, slow, 0, EINVAL);
	TT_MIGRATE_FAILS(b, TT_BUF_LEN - 8, slow, 0, EINVAL);
	/* addr + len wraps around */
	TT_MIGRATE_FAILS(b, -ps, slow, 0, EOVERFLOW);
	TT_MIGRATE_FAILS(b, (uint64_t)-(int64_t)b, slow, 0, EOVERFLOW);
	/* ends beyond the user address space (4- or 5-level paging) */
	TT_MIGRATE_FAILS(b, 1ULL << 62, slow, 0, EOVERFLOW);
	TT_MIGRATE_FAILS(beyond, ps, slow, 0, EOVERFLOW);

	TT_REGISTER_FAILS(b, 0, 0, EINVAL);
	TT_REGISTER_FAILS(b + 8, ps, 0, EINVAL);
	TT_REGISTER_FAILS(b, ps - 8, 0, EINVAL);
	TT_REGISTER_FAILS(b, -ps, 0, EOVERFLOW);
	TT_REGISTER_FAILS(beyond, ps, 0, EOVERFLOW);

	/* residency rounds addr and len to pages, but not 0 or wrap-around */
	TT_RESIDENCY_FAILS(b, 0, EINVAL);
	TT_RESIDENCY_FAILS(b, -ps, EOVERFLOW);
	TT_RESIDENCY_FAILS(beyond, ps, EOVERFLOW);
	TT_NOTHING_COUNTED();
}

TEST_F(errors, holes)
{
	size_t len = 3 * TT_ST_MIB;
	uint64_t a;
	char *m;
	int slow;

	TT_SKIP_IF_SETUP_SKIPPED();
	slow = self->topo.slow;
	m = tt_st_map(len, -1);
	ASSERT_NE(NULL, m);
	tt_st_fill(m, len, 6);
	ASSERT_EQ(0, munmap(m + TT_ST_MIB, TT_ST_MIB));
	a = (uintptr_t)m;

	TT_MIGRATE_FAILS(a, len, slow, 0, EFAULT);
	TT_MIGRATE_FAILS(a + TT_ST_MIB, TT_ST_MIB, slow, 0, EFAULT);
	TT_MIGRATE_FAILS(a + TT_ST_MIB - self->ps, 2 * self->ps, slow, 0,
			 EFAULT);
	TT_REGISTER_FAILS(a, len, 0, EFAULT);
	TT_RESIDENCY_FAILS(a, len, EFAULT);
	/* the mapped parts around the hole did not move */
	TT_ASSERT_PLACED(m, TT_ST_MIB, self->topo.fast);
	TT_ASSERT_PLACED(m + 2 * TT_ST_MIB, TT_ST_MIB, self->topo.fast);
	TT_ASSERT_PATTERN(m, TT_ST_MIB, 6);
	munmap(m, len);
	/* page 0 is never mapped */
	TT_MIGRATE_FAILS(0, self->ps, slow, 0, EFAULT);
	TT_NOTHING_COUNTED();
}

/*
 * Map one page of a device that gives a VM_IO | VM_PFNMAP mapping at @at
 * (MAP_FIXED) or anywhere (@at NULL). Returns the mapping or NULL, with the
 * reasons for failure in @why.
 */
static void *tt_map_pfnmap(void *at, char *why, size_t size)
{
	static const struct {
		const char *path;
		off_t off;
	} devs[] = {
		{ "/dev/hpet", 0 },	/* HPET registers, vm_iomap_memory() */
		{ "/dev/mem", 0 },	/* first page, remap_pfn_range() */
	};
	size_t off = 0, i;

	for (i = 0; i < ARRAY_SIZE(devs); i++) {
		int fd = open(devs[i].path, O_RDONLY | O_CLOEXEC);
		void *p;

		if (fd < 0) {
			off += snprintf(why + off, size - off, "%s: open: %s; ",
					devs[i].path, strerror(errno));
			continue;
		}
		p = mmap(at, getpagesize(), PROT_READ,
			 MAP_SHARED | (at ? MAP_FIXED : 0), fd, devs[i].off);
		close(fd);
		if (p != MAP_FAILED)
			return p;
		off += snprintf(why + off, size - off, "%s: mmap: %s; ",
				devs[i].path, strerror(errno));
	}
	return NULL;
}

TEST_F(errors, pfnmap)
{
	char why[256], flags[256];
	size_t ps;
	char *m, *pf;
	uint64_t b[4];
	int slow;

	TT_SKIP_IF_SETUP_SKIPPED();
	ps = self->ps;
	slow = self->topo.slow;
	pf = tt_map_pfnmap(NULL, why, sizeof(why));
	if (!pf)
		SKIP(return, "no device gives a VM_PFNMAP mapping here: %s", why);
	ASSERT_EQ(0, tt_st_vmflags(pf, flags, sizeof(flags)));
	ASSERT_NE(NULL, strstr(flags, " io")) TH_LOG("VmFlags:%s", flags);
	ASSERT_NE(NULL, strstr(flags, " pf")) TH_LOG("VmFlags:%s", flags);
	TT_MIGRATE_FAILS((uintptr_t)pf, ps, slow, 0, EOPNOTSUPP);
	TT_MIGRATE_FAILS((uintptr_t)pf, ps, self->topo.fast, 0, EOPNOTSUPP);
	TT_REGISTER_FAILS((uintptr_t)pf, ps, 0, EOPNOTSUPP);
	/* residency accepts any mapping type */
	ASSERT_EQ(0, tt_st_ioc_residency(self->fd, (uintptr_t)pf, ps, b, 4,
					 NULL, NULL));
	munmap(pf, ps);

	/* three anonymous pages followed by the device page */
	m = tt_st_map(4 * ps, -1);
	ASSERT_NE(NULL, m);
	tt_st_fill(m, 3 * ps, 7);
	pf = tt_map_pfnmap(m + 3 * ps, why, sizeof(why));
	ASSERT_EQ(m + 3 * ps, pf) TH_LOG("%s", why);
	TT_MIGRATE_FAILS((uintptr_t)m, 4 * ps, slow, 0, EOPNOTSUPP);
	TT_REGISTER_FAILS((uintptr_t)m, 4 * ps, 0, EOPNOTSUPP);
	TT_ASSERT_PLACED(m, 3 * ps, self->topo.fast);
	TT_ASSERT_PATTERN(m, 3 * ps, 7);
	munmap(m, 4 * ps);
	TT_NOTHING_COUNTED();
}

TEST_F(errors, file_private)
{
	char path[] = "/tmp/tt-errors-XXXXXX";
	size_t len = TT_ST_MIB, i;
	char *m, *data;
	int fd;

	TT_SKIP_IF_SETUP_SKIPPED();
	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	unlink(path);
	data = malloc(len);
	ASSERT_NE(NULL, data);
	tt_st_fill(data, len, 8);
	ASSERT_EQ((ssize_t)len, write(fd, data, len));
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, m);
	close(fd);
	/* copy-on-write: every other page becomes an anonymous page */
	for (i = 0; i < len; i += 2 * self->ps)
		m[i] = ~data[i];

	TT_MIGRATE_FAILS((uintptr_t)m, len, self->topo.slow, 0, EOPNOTSUPP);
	TT_MIGRATE_FAILS((uintptr_t)m, self->ps, self->topo.slow, 0,
			 EOPNOTSUPP);
	TT_REGISTER_FAILS((uintptr_t)m, len, 0, EOPNOTSUPP);
	for (i = 0; i < len; i++)
		ASSERT_EQ(i % (2 * self->ps) ? data[i] : (char)~data[i], m[i]);
	munmap(m, len);
	free(data);
	TT_NOTHING_COUNTED();
}

TEST_F(errors, shared_anon)
{
	size_t len = TT_ST_MIB;
	char *m;

	TT_SKIP_IF_SETUP_SKIPPED();
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		 -1, 0);
	ASSERT_NE(MAP_FAILED, m);
	tt_st_fill(m, len, 9);
	TT_MIGRATE_FAILS((uintptr_t)m, len, self->topo.slow, 0, EOPNOTSUPP);
	TT_REGISTER_FAILS((uintptr_t)m, len, 0, EOPNOTSUPP);
	TT_ASSERT_PATTERN(m, len, 9);
	TT_ASSERT_PLACED(m, len, self->topo.fast);
	munmap(m, len);
	TT_NOTHING_COUNTED();
}

TEST_F(errors, hugetlb)
{
	const char *nr = "/proc/sys/vm/nr_hugepages";
	size_t len = TT_ST_THP_SIZE;
	long long have;
	char v[32];
	char *m;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, tt_st_read_ll(nr, &have));
	self->hugepages = have;
	snprintf(v, sizeof(v), "%lld", have + 1);
	ASSERT_EQ(0, tt_st_write_file(nr, v));
	m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (m == MAP_FAILED)
		SKIP(return, "no 2 MiB hugetlb page: mmap(MAP_HUGETLB): %s",
		     strerror(errno));
	tt_st_fill(m, len, 10);
	TT_MIGRATE_FAILS((uintptr_t)m, len, self->topo.slow, 0, EOPNOTSUPP);
	TT_REGISTER_FAILS((uintptr_t)m, len, 0, EOPNOTSUPP);
	TT_ASSERT_PATTERN(m, len, 10);
	munmap(m, len);
	TT_NOTHING_COUNTED();
}

TEST_F(errors, bad_nodes)
{
	uint64_t b;

	TT_SKIP_IF_SETUP_SKIPPED();
	b = (uintptr_t)self->buf;
	TT_MIGRATE_FAILS(b, TT_BUF_LEN, -1, 0, EINVAL);
	TT_MIGRATE_FAILS(b, TT_BUF_LEN, INT_MIN, 0, EINVAL);
	TT_MIGRATE_FAILS(b, TT_BUF_LEN, self->topo.nr_node_ids, 0, EINVAL);
	TT_MIGRATE_FAILS(b, TT_BUF_LEN, TT_MAX_NODES, 0, EINVAL);
	TT_MIGRATE_FAILS(b, TT_BUF_LEN, 100000, 0, EINVAL);
	TT_MIGRATE_FAILS(b, TT_BUF_LEN, INT_MAX, 0, EINVAL);
	TT_MIGRATE_FAILS(b, TT_BUF_LEN, -1, TT_MIGRATE_ASYNC, EINVAL);
	TT_NOTHING_COUNTED();
}

TEST_F(errors, offline_node)
{
	TT_SKIP_IF_SETUP_SKIPPED();
	if (self->topo.offline < 0)
		SKIP(return, "every possible node (0-%d) is online with memory: no offline or memoryless node to try",
		     self->topo.nr_node_ids - 1);
	TH_LOG("node %d is possible but offline or without memory",
	       self->topo.offline);
	TT_MIGRATE_FAILS((uintptr_t)self->buf, TT_BUF_LEN, self->topo.offline,
			 0, ENODEV);
	TT_MIGRATE_FAILS((uintptr_t)self->buf, TT_BUF_LEN, self->topo.offline,
			 TT_MIGRATE_ASYNC, ENODEV);
	TT_NOTHING_COUNTED();
}

TEST_F_TIMEOUT(errors, target_full, 600)
{
	size_t len = 64 * TT_ST_MIB, pages = len / self->ps, held = 0;
	struct tt_migrate_result r;
	struct tt_st_place *pl;
	uint64_t fr = 0;
	int node, ret;
	char *m;

	TT_SKIP_IF_SETUP_SKIPPED();
	node = self->topo.small >= 0 ? self->topo.small : self->topo.slow;
	m = tt_st_map(len, -1);
	ASSERT_NE(NULL, m);
	tt_st_fill(m, len, 11);

	self->filler = tt_st_hog_node(node, 16 * TT_ST_MIB, &held);
	ASSERT_LT(0, self->filler) TH_LOG("filling node %d: %s", node,
					  strerror(-self->filler));
	ASSERT_EQ(0, tt_st_node_mem(node, &fr, NULL));
	TH_LOG("helper holds %zu MiB on node %d, %llu MiB free there",
	       held / TT_ST_MIB, node, (unsigned long long)fr / TT_ST_MIB);
	ASSERT_LT(fr, len) TH_LOG("node %d could not be filled", node);

	ret = tt_st_ioc_migrate(self->fd, (uintptr_t)m, len, node, 0, &r);
	TH_LOG("moved %llu, skipped_no_memory %llu, busy %llu of %llu pages",
	       (unsigned long long)r.moved,
	       (unsigned long long)r.skipped_no_memory,
	       (unsigned long long)r.skipped_busy,
	       (unsigned long long)r.pages);
	ASSERT_EQ(-ENOSPC, ret) TH_LOG("migrate to a full node: %s",
				       ret ? strerror(-ret) : "success");
	ASSERT_EQ(pages, r.pages);
	ASSERT_GT(r.skipped_no_memory, 0ULL);
	ASSERT_EQ(pages, r.moved + r.skipped_no_memory);
	TT_ASSERT_PATTERN(m, len, 11);
	pl = malloc(sizeof(*pl));
	ASSERT_NE(NULL, pl);
	ASSERT_EQ(0, tt_st_place(m, len, pl));
	ASSERT_EQ(r.moved, pl->on_node[node]);
	ASSERT_EQ(r.skipped_no_memory, pl->on_node[self->topo.fast]);
	free(pl);
	TT_UNCHANGED();

	/* with the node freed the rest follows */
	kill(self->filler, SIGKILL);
	ASSERT_EQ(self->filler, waitpid(self->filler, NULL, 0));
	self->filler = 0;
	ASSERT_EQ(0, tt_st_ioc_migrate(self->fd, (uintptr_t)m, len, node, 0,
				       &r));
	ASSERT_EQ(pages, r.moved + r.already_on_node);
	ASSERT_EQ(0ULL, r.skipped_no_memory);
	TT_ASSERT_PLACED(m, len, node);
	TT_ASSERT_PATTERN(m, len, 11);
	munmap(m, len);
}

TEST_F(errors, unknown_flags)
{
	uint64_t b, bytes[4];
	struct tt_ioc_residency rs;
	int slow, bit;

	TT_SKIP_IF_SETUP_SKIPPED();
	b = (uintptr_t)self->buf;
	slow = self->topo.slow;
	for (bit = 0; bit < 32; bit++) {
		uint32_t f = 1U << bit;

		if (!(f & TT_MIGRATE_FLAGS_ALL))
			TT_MIGRATE_FAILS(b, TT_BUF_LEN, slow, f, EOPNOTSUPP);
		if (!(f & TT_RANGE_FLAGS_ALL))
			TT_REGISTER_FAILS(b, TT_BUF_LEN, f, EOPNOTSUPP);
	}
	TT_MIGRATE_FAILS(b, TT_BUF_LEN, slow, ~0U, EOPNOTSUPP);
	/* unregister: flags must be 0, even a known range flag */
	ASSERT_EQ(0, tt_st_ioc_range(self->fd, TT_IOC_REGISTER, b, TT_BUF_LEN,
				     1, 0));
	ASSERT_EQ(-EOPNOTSUPP, tt_st_ioc_range(self->fd, TT_IOC_UNREGISTER, b,
					       TT_BUF_LEN, 0,
					       TT_RANGE_PERSISTENT));
	ASSERT_EQ(-EOPNOTSUPP, tt_st_ioc_range(self->fd, TT_IOC_UNREGISTER, b,
					       TT_BUF_LEN, 0, 1U << 31));
	ASSERT_EQ(0, tt_st_ioc_range(self->fd, TT_IOC_UNREGISTER, b,
				     TT_BUF_LEN, 0, 0));
	/* residency: flags must be 0 */
	memset(&rs, 0, sizeof(rs));
	rs.addr = b;
	rs.len = TT_BUF_LEN;
	rs.bytes_ptr = (uintptr_t)bytes;
	rs.nr_nodes = 4;
	rs.flags = 1;
	ASSERT_EQ(-1, ioctl(self->fd, TT_IOC_RESIDENCY, &rs));
	ASSERT_EQ(EOPNOTSUPP, errno);
	TT_UNCHANGED();
	TT_NOTHING_COUNTED();
}

TEST_F(errors, bad_pointers)
{
	struct tt_ioc_residency rs;
	uint64_t bytes[4];

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_EQ(-1, ioctl(self->fd, TT_IOC_MIGRATE, NULL));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(self->fd, TT_IOC_MIGRATE, (void *)8));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(self->fd, TT_IOC_REGISTER, NULL));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(self->fd, TT_IOC_UNREGISTER, NULL));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(self->fd, TT_IOC_STATS, NULL));
	ASSERT_EQ(EFAULT, errno);
	ASSERT_EQ(-1, ioctl(self->fd, TT_IOC_RESIDENCY, NULL));
	ASSERT_EQ(EFAULT, errno);
	/* the argument is read-only memory for an ioctl that writes back */
	ASSERT_EQ(-1, ioctl(self->fd, TT_IOC_STATS, (void *)tt_version()));
	ASSERT_EQ(EFAULT, errno);

	memset(&rs, 0, sizeof(rs));
	rs.addr = (uintptr_t)self->buf;
	rs.len = TT_BUF_LEN;
	rs.bytes_ptr = 8;
	rs.nr_nodes = 4;
	ASSERT_EQ(-1, ioctl(self->fd, TT_IOC_RESIDENCY, &rs));
	ASSERT_EQ(EFAULT, errno);
	rs.bytes_ptr = (uintptr_t)bytes;
	rs.nr_nodes = 0;
	ASSERT_EQ(-1, ioctl(self->fd, TT_IOC_RESIDENCY, &rs));
	ASSERT_EQ(EINVAL, errno);
	rs.nr_nodes = TT_MAX_NODES + 1;
	ASSERT_EQ(-1, ioctl(self->fd, TT_IOC_RESIDENCY, &rs));
	ASSERT_EQ(EINVAL, errno);

	ASSERT_EQ(-1, ioctl(self->fd, _IO(TT_IOC_MAGIC, 0x7f)));
	ASSERT_EQ(ENOTTY, errno);
	ASSERT_EQ(-1, ioctl(self->fd, _IOWR(0x42, 0x03,
					   struct tt_ioc_migrate), NULL));
	ASSERT_EQ(ENOTTY, errno);
	TT_UNCHANGED();
	TT_NOTHING_COUNTED();
}

/* Bit i of the child's exit code: call i did not fail with EPERM. */
static int tt_foreign_calls(int fd, uint64_t b)
{
	struct tt_ioc_stats st;
	uint64_t bytes[4];
	int bad = 0;

	if (tt_st_ioc_migrate(fd, b, TT_BUF_LEN, 0, 0, NULL) != -EPERM)
		bad |= 1 << 0;
	if (tt_st_ioc_migrate(fd, b, TT_BUF_LEN, 0, TT_MIGRATE_ASYNC,
			      NULL) != -EPERM)
		bad |= 1 << 1;
	if (tt_st_ioc_range(fd, TT_IOC_REGISTER, b, TT_BUF_LEN, 0, 0) !=
	    -EPERM)
		bad |= 1 << 2;
	if (tt_st_ioc_range(fd, TT_IOC_UNREGISTER, b, TT_BUF_LEN, 0, 0) !=
	    -EPERM)
		bad |= 1 << 3;
	if (tt_st_ioc_residency(fd, b, TT_BUF_LEN, bytes, 4, NULL, NULL) !=
	    -EPERM)
		bad |= 1 << 4;
	if (tt_st_ioc_stats(fd, &st) != -EPERM)
		bad |= 1 << 5;
	if (tt_st_ioc_flush(fd) != -EPERM)
		bad |= 1 << 6;
	return bad;
}

TEST_F(errors, inherited_fd)
{
	struct tt_migrate_result r;
	int status;
	pid_t pid;

	TT_SKIP_IF_SETUP_SKIPPED();
	ASSERT_EQ(0, tt_st_ioc_range(self->fd, TT_IOC_REGISTER,
				     (uintptr_t)self->buf, TT_BUF_LEN, 3, 0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(tt_foreign_calls(self->fd, (uintptr_t)self->buf));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status))
		TH_LOG("calls from the child not refused with EPERM (bit 0 migrate, 1 async, 2 register, 3 unregister, 4 residency, 5 stats, 6 flush): %#x",
		       WEXITSTATUS(status));
	TT_UNCHANGED();

	/* the owner's session is intact: its registration and calls work */
	{
		struct tt_ioc_stats st;

		ASSERT_EQ(0, tt_st_ioc_stats(self->fd, &st));
		ASSERT_EQ(1ULL, st.registered_ranges);
		ASSERT_EQ(0ULL, st.migrate_calls);
	}
	ASSERT_EQ(0, tt_st_ioc_migrate(self->fd, (uintptr_t)self->buf,
				       TT_BUF_LEN, self->topo.slow, 0, &r));
	ASSERT_EQ(TT_BUF_LEN / self->ps, r.moved);
	TT_ASSERT_PATTERN(self->buf, TT_BUF_LEN, TT_SEED);
	TT_ASSERT_PLACED(self->buf, TT_BUF_LEN, self->topo.slow);
	ASSERT_EQ(0, tt_st_ioc_range(self->fd, TT_IOC_UNREGISTER,
				     (uintptr_t)self->buf, TT_BUF_LEN, 0, 0));
}

TEST_HARNESS_MAIN
