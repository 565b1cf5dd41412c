// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The move_pages backend: tiertrain without the kernel module, in-process,
 * with move_pages(2) (called through syscall(2): no libnuma dependency).
 *
 * It performs the module's argument checks with the module's errors (range.c,
 * maps.c, nodes.c) before doing anything, so a rejected call has changed
 * nothing. Its differences from the kernel backend:
 *   - migrations run synchronously in the calling thread, TT_MIGRATE_ASYNC
 *     included (see tt_mp_migrate());
 *   - registrations are a sorted array in the session; they are not dropped
 *     when their memory is unmapped (ranges_unmapped stays 0);
 *   - the session belongs to the process that opened it (checked by pid);
 *   - pages move with the kernel's migrate_pages(), which keeps transparent
 *     huge pages whole when the target node has a free one: a huge page
 *     partly inside the range moves whole (the module splits it instead);
 *   - on 6.1, pages automatic NUMA balancing has made PROT_NONE are seen
 *     by move_pages(2) as EFAULT: migrations count them as not present and
 *     leave them in place, residency counts them in not_present_bytes;
 *   - scheduler events drive a scheduler in the library (usched.c) with
 *     the module's decisions (core/timeline.c, core/policy.c), executed by
 *     helper threads of the session with move_pages(2).
 *
 * How a migration reads move_pages(2). A chunk of pages is first queried
 * (status query, nodes == NULL) to tell the pages already on the target node
 * and those not present from those to move; only the latter are passed to
 * the move call. That call asks for MPOL_MF_MOVE_ALL, which also moves pages
 * shared with other processes (copy-on-write after fork(), as the module's
 * engine does), and falls back to MPOL_MF_MOVE, which leaves them in place
 * (-EACCES below), when the kernel refuses it for lack of CAP_SYS_NICE.
 * Per page, a status query gives:
 *   node id           resident there: already_on_node if it is the target,
 *                     to move otherwise;
 *   -ENOENT, -EFAULT  not present (never touched, swapped out, the zero
 *                     page): skipped_not_present;
 *   other             skipped_unsupported.
 * and the move call gives (tt_mp_fate()):
 *   the target node   moved;
 *   -EBUSY, -EACCES   the kernel could not isolate the page (pinned, locked,
 *   (-EAGAIN)         mapped by another process, under writeback): busy,
 *                     unless a new query finds it on the target node (tail
 *                     pages of a huge page moved with its head fail to be
 *                     isolated a second time and report -EBUSY);
 *   -ENOENT, -EFAULT  it went away meanwhile: skipped_not_present;
 *   -ENOMEM           no page for it on the target node (6.1 reports that
 *                     for the whole call instead, see below):
 *                     skipped_no_memory, and the call returns ENOSPC;
 *   not written       the kernel stopped early (it returns the count of pages
 *                     not migrated, or fails with ENOMEM, and leaves the
 *                     rest of its batch unwritten): each such page is moved
 *                     again on its own; if that fails with ENOMEM it is
 *                     skipped_no_memory (the call then returns ENOSPC), and
 *                     so is the rest of the chunk's unwritten pages without
 *                     more attempts (the next chunk tries again); if it
 *                     fails otherwise it is skipped_busy;
 *   other             skipped_unsupported.
 */
#include <errno.h>
#include <linux/mempolicy.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/*
 * Pages per move_pages(2) call: 2 MiB with 4 KiB pages. Chunks are aligned
 * to TT_MP_CHUNK pages in the address space, so a PMD-mapped transparent
 * huge page (2 MiB, aligned) is always inside one chunk: move_pages(2) moves
 * it whole when it meets its first page, and the pages of it that a later
 * chunk would see would otherwise count as already on the node.
 */
#define TT_MP_CHUNK	512

/**
 * struct tt_mp_buf - per-call scratch arrays of TT_MP_CHUNK elements
 * @pages:   the chunk's page addresses.
 * @before:  their status before the move.
 * @mpages:  the addresses of the pages to move.
 * @nodes:   the target node, once per page to move.
 * @mstatus: the status the move call wrote.
 * @qpages:  pages whose move status needs a second look.
 * @now:     their status now.
 * @qidx:    index into @mpages of each entry of @qpages.
 */
struct tt_mp_buf {
	void *pages[TT_MP_CHUNK];
	int before[TT_MP_CHUNK];
	void *mpages[TT_MP_CHUNK];
	int nodes[TT_MP_CHUNK];
	int mstatus[TT_MP_CHUNK];
	void *qpages[TT_MP_CHUNK];
	int now[TT_MP_CHUNK];
	size_t qidx[TT_MP_CHUNK];
};

static long tt_move_pages(unsigned long count, void **pages, const int *nodes,
			  int *status, int flags)
{
	return syscall(SYS_move_pages, 0, count, pages, nodes, status, flags);
}

/**
 * tt_mp_move() - the move call of a migration.
 * @count:  pages.
 * @pages:  their addresses.
 * @nodes:  the target node of each.
 * @status: out: their statuses.
 * @mflags: in/out: the MPOL_MF_* flags, MPOL_MF_MOVE_ALL at first; switched
 *          for good to MPOL_MF_MOVE when the kernel refuses MPOL_MF_MOVE_ALL
 *          with EPERM (no CAP_SYS_NICE).
 *
 * Return: what move_pages(2) returns.
 */
long tt_mp_move(unsigned long count, void **pages, const int *nodes,
		       int *status, int *mflags)
{
	long ret;

	ret = tt_move_pages(count, pages, nodes, status, *mflags);
	if (ret < 0 && errno == EPERM && *mflags == MPOL_MF_MOVE_ALL) {
		*mflags = MPOL_MF_MOVE;
		ret = tt_move_pages(count, pages, nodes, status, *mflags);
	}
	return ret;
}

/* Status query of @count pages: 0 or -errno. */
static int tt_mp_query(void **pages, size_t count, int *status)
{
	if (tt_move_pages(count, pages, NULL, status, 0) < 0)
		return -errno;
	return 0;
}

/* tt_mp_owner() - 0 in the session's process, -EPERM in any other. */
int tt_mp_owner(const struct tt_session *s)
{
	return getpid() == s->pid ? 0 : -EPERM;
}

/*
 * The checks migrate and register share, in the module's order: the
 * caller's process, unknown @flags bits (outside @known), the range
 * arithmetic.
 */
static int tt_mp_check_args(const struct tt_session *s, uint32_t flags,
			    uint32_t known, uint64_t addr, uint64_t len)
{
	int ret;

	ret = tt_mp_owner(s);
	if (ret < 0)
		return ret;
	if (flags & ~known)
		return -EOPNOTSUPP;
	return tt_range_check(addr, len);
}

/* tt_now_ns() - CLOCK_MONOTONIC in nanoseconds. */
uint64_t tt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/**
 * tt_mp_account_before() - account a page by its status before the move.
 * @status: its status-query result.
 * @node:   the target node.
 * @r:      the result to count it in, unless it has to move.
 *
 * Return: true when the page has to move (and is not counted yet).
 */
bool tt_mp_account_before(int status, int node, struct tt_migrate_result *r)
{
	if (status == node) {
		r->already_on_node++;
		return false;
	}
	if (status >= 0)
		return true;
	if (status == -ENOENT || status == -EFAULT)
		r->skipped_not_present++;
	else
		r->skipped_unsupported++;
	return false;
}

/**
 * tt_mp_fate() - what happened to a page the move call was given.
 * @move_status: the status the move call left (TT_MP_STATUS_UNSET if none).
 * @now:         its status-query result after the call.
 * @node:        the target node.
 *
 * Return: see enum tt_mp_fate and the file comment.
 */
enum tt_mp_fate tt_mp_fate(int move_status, int now, int node)
{
	if (move_status == node || now == node)
		return TT_MP_MOVED;
	if (move_status == TT_MP_STATUS_UNSET)
		return TT_MP_RETRY;
	if (move_status == -ENOENT || move_status == -EFAULT ||
	    now == -ENOENT || now == -EFAULT)
		return TT_MP_NOT_PRESENT;
	if (move_status == -ENOMEM)
		return TT_MP_NO_MEMORY;
	if (move_status >= 0 || move_status == -EBUSY ||
	    move_status == -EACCES || move_status == -EAGAIN)
		return TT_MP_BUSY;
	return TT_MP_UNSUPPORTED;
}

/* tt_mp_account_fate() - count a page of fate @fate (not TT_MP_RETRY). */
void tt_mp_account_fate(enum tt_mp_fate fate, struct tt_migrate_result *r)
{
	switch (fate) {
	case TT_MP_MOVED:
		r->moved++;
		break;
	case TT_MP_NOT_PRESENT:
		r->skipped_not_present++;
		break;
	case TT_MP_UNSUPPORTED:
		r->skipped_unsupported++;
		break;
	case TT_MP_NO_MEMORY:
		r->skipped_no_memory++;
		break;
	case TT_MP_BUSY:
	case TT_MP_RETRY:
		r->skipped_busy++;
		break;
	}
}

/*
 * Move one page that the kernel did not get to, on its own. Returns 1 when
 * it stayed put because @node had no free page, else 0 or -errno.
 */
static int tt_mp_move_one(void *page, int node, int *mflags,
			  struct tt_migrate_result *r)
{
	int status = TT_MP_STATUS_UNSET;
	int now = TT_MP_STATUS_UNSET;
	long ret;

	ret = tt_mp_move(1, &page, &node, &status, mflags);
	if (ret < 0 && errno != ENOMEM)
		return -errno;
	if (status != node && tt_mp_query(&page, 1, &now) < 0)
		return -errno;
	if (ret < 0 && now != node) {
		r->skipped_no_memory++;
		return 1;
	}
	tt_mp_account_fate(tt_mp_fate(status, now, node), r);
	return 0;
}

/*
 * Migrate the @n pages at @addr (n <= TT_MP_CHUNK), adding to @r and, when
 * @from is not NULL, the bytes found on each node before to @from.
 */
static int tt_mp_move_chunk(struct tt_mp_buf *b, uint64_t addr, size_t n,
			    int node, int *mflags, struct tt_migrate_result *r,
			    uint64_t *from)
{
	size_t ps = tt_page_size();
	size_t i, m = 0, q = 0;
	bool full = false;
	long ret;

	for (i = 0; i < n; i++)
		b->pages[i] = (void *)(uintptr_t)(addr + i * ps);
	ret = tt_mp_query(b->pages, n, b->before);
	if (ret < 0)
		return ret;
	r->pages += n;
	for (i = 0; i < n; i++) {
		if (from && b->before[i] >= 0 && b->before[i] < TT_MAX_NODES)
			from[b->before[i]] += ps;
		if (!tt_mp_account_before(b->before[i], node, r))
			continue;
		b->mpages[m] = b->pages[i];
		b->nodes[m] = node;
		b->mstatus[m] = TT_MP_STATUS_UNSET;
		m++;
	}
	if (!m)
		return 0;
	ret = tt_mp_move(m, b->mpages, b->nodes, b->mstatus, mflags);
	if (ret < 0 && errno != ENOMEM)
		return -errno;
	/* ret > 0 or ENOMEM: the unwritten statuses are retried below. */
	for (i = 0; i < m; i++) {
		if (b->mstatus[i] == node) {
			r->moved++;
			continue;
		}
		b->qpages[q] = b->mpages[i];
		b->qidx[q] = i;
		q++;
	}
	if (!q)
		return 0;
	ret = tt_mp_query(b->qpages, q, b->now);
	if (ret < 0)
		return ret;
	for (i = 0; i < q; i++) {
		enum tt_mp_fate fate;

		fate = tt_mp_fate(b->mstatus[b->qidx[i]], b->now[i], node);
		if (fate != TT_MP_RETRY) {
			tt_mp_account_fate(fate, r);
			continue;
		}
		/* Once the node is full, the rest of the chunk stays put. */
		if (full) {
			r->skipped_no_memory++;
			continue;
		}
		ret = tt_mp_move_one(b->qpages[i], node, mflags, r);
		if (ret < 0)
			return ret;
		full = ret;
	}
	return 0;
}

/* tt_mp_add_result() - add the counts of @r to @sum. */
void tt_mp_add_result(struct tt_migrate_result *sum,
		      const struct tt_migrate_result *r)
{
	sum->pages += r->pages;
	sum->moved += r->moved;
	sum->already_on_node += r->already_on_node;
	sum->skipped_not_present += r->skipped_not_present;
	sum->skipped_busy += r->skipped_busy;
	sum->skipped_unsupported += r->skipped_unsupported;
	sum->skipped_no_memory += r->skipped_no_memory;
	sum->elapsed_ns += r->elapsed_ns;
}

/**
 * tt_mp_move_range() - move the pages of [start, end) to @node.
 * @start: first address, page aligned.
 * @end:   end address, page aligned, > @start.
 * @node:  the target node.
 * @r:     out: what happened, elapsed_ns included; after a failure it covers
 *         the pages handled before it.
 * @from:  NULL, or TT_MAX_NODES counters: the bytes found on each node
 *         before the move are added to them.
 *
 * Return: 0, or the -errno of the move_pages(2) call that failed.
 */
int tt_mp_move_range(uint64_t start, uint64_t end, int node,
		     struct tt_migrate_result *r, uint64_t *from)
{
	uint64_t addr, t0, ps = tt_page_size();
	int mflags = MPOL_MF_MOVE_ALL;
	struct tt_mp_buf *b;
	int ret = 0;

	memset(r, 0, sizeof(*r));
	b = malloc(sizeof(*b));
	if (!b)
		return -ENOMEM;
	t0 = tt_now_ns();
	for (addr = start; addr < end && ret == 0;) {
		uint64_t next = (addr / (TT_MP_CHUNK * ps) + 1) * TT_MP_CHUNK * ps;

		if (next > end)
			next = end;
		ret = tt_mp_move_chunk(b, addr, (next - addr) / ps, node,
				       &mflags, r, from);
		addr = next;
	}
	r->elapsed_ns = tt_now_ns() - t0;
	free(b);
	if (ret < 0)
		r->pages = r->moved + r->already_on_node +
			   r->skipped_not_present + r->skipped_busy +
			   r->skipped_unsupported + r->skipped_no_memory;
	return ret;
}

/* Passes of a migration over its range, at most, and the longest sleep. */
#define TT_MP_PASSES		10
#define TT_MP_BACKOFF_MAX_MS	16

/*
 * tt_mp_move_range() in passes, as the module's TT_IOC_MIGRATE: while a
 * pass leaves pages busy (-EBUSY, -EAGAIN: isolated elsewhere for a
 * moment, in another CPU's LRU batch) and none for lack of room on the
 * node, another pass over the whole range follows, after a sleep growing
 * from 1 ms to TT_MP_BACKOFF_MAX_MS, TT_MP_PASSES at most. @r is the last pass's result, with the pages
 * earlier passes moved (found on the target now) counted as moved.
 */
static int tt_mp_move_passes(uint64_t start, uint64_t end, int node,
			     struct tt_migrate_result *r)
{
	struct tt_migrate_result pass;
	uint64_t t0 = tt_now_ns(), moved, there;
	unsigned int i, ms;
	int ret;

	ret = tt_mp_move_range(start, end, node, r, NULL);
	moved = r->moved;
	for (i = 1; !ret && r->skipped_busy && !r->skipped_no_memory &&
	     i < TT_MP_PASSES; i++) {
		struct timespec ts;

		ms = 1U << (i - 1);
		if (ms > TT_MP_BACKOFF_MAX_MS)
			ms = TT_MP_BACKOFF_MAX_MS;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)ms * 1000000L;
		nanosleep(&ts, NULL);
		ret = tt_mp_move_range(start, end, node, &pass, NULL);
		if (ret < 0)
			break;	/* @r stays the last whole pass's */
		there = pass.moved + pass.already_on_node;
		*r = pass;
		r->moved = pass.moved + moved < there ? pass.moved + moved :
							there;
		r->already_on_node = there - r->moved;
		moved += pass.moved;
	}
	r->elapsed_ns = tt_now_ns() - t0;
	return ret;
}

/*
 * TT_IOC_MIGRATE. Checks in the module's order: flags, range arithmetic,
 * node, mappings. With TT_MIGRATE_ASYNC the migration still runs here and
 * now; like the module's it returns 0 once the checks pass, zeroes the
 * result and adds it to the session totals, and counts as queued and done.
 */
static int tt_mp_migrate(struct tt_session *s, struct tt_ioc_migrate *m)
{
	struct tt_migrate_result r;
	bool async = m->flags & TT_MIGRATE_ASYNC;
	uint64_t ps = tt_page_size();
	int ret;

	memset(&m->result, 0, sizeof(m->result));
	ret = tt_mp_check_args(s, m->flags, TT_MIGRATE_FLAGS_ALL, m->addr,
			       m->len);
	if (ret < 0)
		return ret;
	ret = tt_node_check(TT_SYSFS_NODE_DIR, m->node);
	if (ret < 0)
		return ret;
	ret = tt_maps_check_self(m->addr, m->addr + m->len, true);
	if (ret < 0)
		return ret;

	pthread_mutex_lock(&s->lock);
	s->stats.migrate_calls++;
	if (async)
		s->stats.async_queued++;
	pthread_mutex_unlock(&s->lock);

	ret = tt_mp_move_passes(m->addr, m->addr + m->len, m->node, &r);
	/* A result after a failure covers the pages handled before it. */

	pthread_mutex_lock(&s->lock);
	tt_mp_add_result(&s->stats.total, &r);
	if (async)
		s->stats.async_done++;
	if (r.moved) {
		if (tt_node_has_cpus(TT_SYSFS_NODE_DIR, m->node) == 1)
			s->stats.bytes_to_fast += r.moved * ps;
		else
			s->stats.bytes_to_slow += r.moved * ps;
	}
	pthread_mutex_unlock(&s->lock);

	if (async)
		return ret;
	/* A failure past the checks still reports what moved. */
	m->result = r;
	if (ret < 0)
		return ret;
	if (r.skipped_no_memory)
		return -ENOSPC;
	return r.skipped_busy || r.skipped_unsupported ? -EBUSY : 0;
}

static int tt_mp_flush(struct tt_session *s)
{
	/* Nothing is ever queued. */
	return tt_mp_owner(s);
}

/**
 * tt_mp_account_residency() - add a status-query result to a residency.
 * @status:      the statuses of @n pages.
 * @n:           how many.
 * @page_size:   bytes per page.
 * @bytes:       per-node byte counts, @nr_nodes of them.
 * @nr_nodes:    their number.
 * @not_present: bytes not resident (-ENOENT, -EFAULT or any other error).
 * @other:       bytes on nodes >= @nr_nodes.
 */
void tt_mp_account_residency(const int *status, size_t n, uint64_t page_size,
			     uint64_t *bytes, uint32_t nr_nodes,
			     uint64_t *not_present, uint64_t *other)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (status[i] < 0)
			*not_present += page_size;
		else if ((uint32_t)status[i] < nr_nodes)
			bytes[status[i]] += page_size;
		else
			*other += page_size;
	}
}

/* TT_IOC_RESIDENCY: any mapping type, no faulting, no moving. */
static int tt_mp_residency(struct tt_session *s, struct tt_ioc_residency *r)
{
	uint64_t ps = tt_page_size(), mask = ps - 1;
	uint64_t *bytes = (uint64_t *)(uintptr_t)r->bytes_ptr;
	uint64_t start, end, addr, n, i, not_present = 0, other = 0;
	void *pages[TT_MP_CHUNK];
	int status[TT_MP_CHUNK];
	int ret;

	ret = tt_mp_owner(s);
	if (ret < 0)
		return ret;
	if (r->flags)
		return -EOPNOTSUPP;
	if (!r->len || r->nr_nodes < 1 || r->nr_nodes > TT_MAX_NODES)
		return -EINVAL;
	end = r->addr + r->len;
	if (end < r->addr || end > UINT64_MAX - mask)
		return -EOVERFLOW;
	start = r->addr & ~mask;
	end = (end + mask) & ~mask;
	if (end > tt_user_addr_limit())
		return -EOVERFLOW;
	if (!bytes)
		return -EFAULT;
	ret = tt_maps_check_self(start, end, false);
	if (ret < 0)
		return ret;

	memset(bytes, 0, r->nr_nodes * sizeof(*bytes));
	for (addr = start; addr < end; addr += n * ps) {
		n = (end - addr) / ps;
		if (n > TT_MP_CHUNK)
			n = TT_MP_CHUNK;
		for (i = 0; i < n; i++)
			pages[i] = (void *)(uintptr_t)(addr + i * ps);
		ret = tt_mp_query(pages, n, status);
		if (ret < 0)
			return ret;
		tt_mp_account_residency(status, n, ps, bytes, r->nr_nodes,
					&not_present, &other);
	}
	r->not_present_bytes = not_present;
	r->other_bytes = other;
	return 0;
}

/* Index of the first registration starting at or after @addr. */
static size_t tt_mp_ranges_find(const struct tt_session *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nr_ranges;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->ranges[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/**
 * tt_mp_ranges_insert() - add a (checked) registration to the session.
 * @s: the session.
 * @r: the range.
 *
 * Return: 0, -EEXIST when it overlaps a registration, -ENOSPC when the
 * session holds TT_MP_MAX_RANGES already, or -ENOMEM.
 */
int tt_mp_ranges_insert(struct tt_session *s, const struct tt_ioc_range *r)
{
	struct tt_mp_range *prev, *next;
	int ret = 0;
	size_t i;

	pthread_mutex_lock(&s->lock);
	i = tt_mp_ranges_find(s, r->addr);
	prev = i ? &s->ranges[i - 1] : NULL;
	next = i < s->nr_ranges ? &s->ranges[i] : NULL;
	if ((prev && prev->addr + prev->len > r->addr) ||
	    (next && r->addr + r->len > next->addr)) {
		ret = -EEXIST;
		goto out;
	}
	if (s->nr_ranges >= TT_MP_MAX_RANGES) {
		ret = -ENOSPC;
		goto out;
	}
	if (s->nr_ranges == s->cap_ranges) {
		size_t cap = s->cap_ranges ? 2 * s->cap_ranges : 16;
		struct tt_mp_range *nr;

		nr = realloc(s->ranges, cap * sizeof(*nr));
		if (!nr) {
			ret = -ENOMEM;
			goto out;
		}
		s->ranges = nr;
		s->cap_ranges = cap;
	}
	memmove(&s->ranges[i + 1], &s->ranges[i],
		(s->nr_ranges - i) * sizeof(*s->ranges));
	s->ranges[i] = (struct tt_mp_range){
		.addr = r->addr,
		.len = r->len,
		.layer = r->layer,
		.flags = r->flags,
	};
	s->nr_ranges++;
	s->stats.registered_ranges++;
	s->stats.registered_bytes += r->len;
out:
	pthread_mutex_unlock(&s->lock);
	return ret;
}

/**
 * tt_mp_ranges_remove() - forget the registration with @r's addr and len.
 * @s: the session.
 * @r: the range.
 *
 * Return: 0, or -ENOENT when there is none.
 */
int tt_mp_ranges_remove(struct tt_session *s, const struct tt_ioc_range *r)
{
	int ret = -ENOENT;
	size_t i;

	pthread_mutex_lock(&s->lock);
	i = tt_mp_ranges_find(s, r->addr);
	if (i < s->nr_ranges && s->ranges[i].addr == r->addr &&
	    s->ranges[i].len == r->len) {
		memmove(&s->ranges[i], &s->ranges[i + 1],
			(s->nr_ranges - i - 1) * sizeof(*s->ranges));
		s->nr_ranges--;
		s->stats.registered_ranges--;
		s->stats.registered_bytes -= r->len;
		ret = 0;
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

/* TT_IOC_REGISTER: flags, range arithmetic, mappings, then overlap. */
static int tt_mp_reg(struct tt_session *s, const struct tt_ioc_range *r)
{
	int ret;

	ret = tt_mp_check_args(s, r->flags, TT_RANGE_FLAGS_ALL, r->addr,
			       r->len);
	if (ret < 0)
		return ret;
	ret = tt_maps_check_self(r->addr, r->addr + r->len, true);
	if (ret < 0)
		return ret;
	return tt_mp_ranges_insert(s, r);
}

/* TT_IOC_UNREGISTER: flags must be 0, layer is ignored. */
static int tt_mp_unreg(struct tt_session *s, const struct tt_ioc_range *r)
{
	int ret;

	ret = tt_mp_owner(s);
	if (ret < 0)
		return ret;
	if (r->flags)
		return -EOPNOTSUPP;
	return tt_mp_ranges_remove(s, r);
}

static int tt_mp_stats(struct tt_session *s, struct tt_ioc_stats *st)
{
	int ret;

	ret = tt_mp_owner(s);
	if (ret < 0)
		return ret;
	if (!st)
		return -EFAULT;
	pthread_mutex_lock(&s->lock);
	*st = s->stats;
	pthread_mutex_unlock(&s->lock);
	tt_us_stats(s, st);
	return 0;
}

/*
 * Stop the scheduler (which brings back what it evicted) and free
 * everything. In a child that inherited the session across fork() the
 * scheduler's threads do not exist and the lock may have been copied held:
 * only memory is freed there.
 */
static void tt_mp_close(struct tt_session *s)
{
	bool owner = tt_mp_owner(s) == 0;

	tt_us_close(s);
	free(s->ranges);
	s->ranges = NULL;
	s->nr_ranges = 0;
	s->cap_ranges = 0;
	if (owner)
		pthread_mutex_destroy(&s->lock);
}

int tt_mp_open(struct tt_session *s)
{
	int ret;

	ret = pthread_mutex_init(&s->lock, NULL);
	if (ret)
		return -ret;
	s->ops = &tt_mp_ops;
	s->fd = -1;
	s->pid = getpid();
	s->ranges = NULL;
	s->nr_ranges = 0;
	s->cap_ranges = 0;
	memset(&s->stats, 0, sizeof(s->stats));
	s->stats.abi_version = TT_ABI_VERSION;
	s->stats.size = sizeof(s->stats);
	tt_sched_defaults(&s->sched);
	s->us = NULL;
	ret = tt_us_open(s);
	if (ret < 0)
		pthread_mutex_destroy(&s->lock);
	return ret;
}

const struct tt_ops tt_mp_ops = {
	.name = "move_pages",
	.migrate = tt_mp_migrate,
	.flush = tt_mp_flush,
	.residency = tt_mp_residency,
	.reg = tt_mp_reg,
	.unreg = tt_mp_unreg,
	.stats = tt_mp_stats,
	.event = tt_mp_event_op,
	.events = tt_mp_events_op,
	.sched_get = tt_mp_sched_get,
	.sched_set = tt_mp_sched_set,
	.layers = tt_mp_layers,
	.hint = tt_mp_hint,
	.close = tt_mp_close,
};
