// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The mover threads of a kernel-backend session (TT_IOC_MOVER, "Mover" in
 * <linux/tiertrain.h>, Documentation/mover.md).
 *
 * Each thread registers itself with the session, then loops: report the
 * order it finished and take the next one in one ioctl (TT_MOVER_DONE |
 * TT_MOVER_TAKE); when none is queued, sleep in poll(2) on the session
 * descriptor (POLLIN: an order is queued) and on an eventfd that
 * tt_mover_stop() writes. No busy polling: an idle mover is asleep.
 *
 * An order is a range of whole huge pages, or of base pages
 * (TT_ORDER_BASE, taken because the threads register with TT_MOVER_BASE),
 * and up to 8 target nodes in order of preference: move_pages(2) of the
 * first address of each huge page, or of every base page, to the first
 * node, then the pages it had no room for (-ENOMEM) or did not get to (a
 * move_pages(2) that stops at its first failing batch leaves the later
 * statuses unwritten) to the next node, once each. With TT_ORDER_COLLAPSE
 * each 2 MiB block lying whole inside the order is first collapsed into a
 * huge page (MADV_COLLAPSE) and moved by its first address. The module
 * reads the outcome from the page tables itself; the statuses (one per
 * block) only tell it why a page stayed.
 *
 * Mover threads block every signal, so the process's signals go to its own
 * threads; they are named "tt-mover".
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/mempolicy.h>

#include "internal.h"

/* A status move_pages(2) never writes: the page was not attempted. */
#define TT_MV_UNTRIED	INT_MIN

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25	/* <asm-generic/mman-common.h>, Linux 6.1+ */
#endif

/**
 * struct tt_mv_thread - one mover thread
 * @th:    the thread.
 * @mv:    the set it belongs to.
 * @ret:   0 once registered, or -errno of the registration.
 * @ready: set (under @mv->lock) when @ret is known.
 */
struct tt_mv_thread {
	pthread_t th;
	struct tt_movers *mv;
	int ret;
	int ready;
};

/**
 * struct tt_movers - the mover threads of a session
 * @fd:      the session descriptor.
 * @stop_fd: eventfd written by tt_mover_stop(): every thread ends.
 * @stop:    set with @stop_fd: a thread busy with an order ends after it.
 * @lock:    protects the @ready flags of @t.
 * @cond:    signalled when a thread's registration is known.
 * @pid:     the process that started them (a child after fork() has
 *           none of them: it must neither join them nor stop them).
 * @automatic: started by tt_open() without TIERTRAIN_MOVER: a
 *           tt_mover_start() replaces them.
 * @n:       threads in @t.
 * @t:       the threads.
 */
struct tt_movers {
	int fd;
	int stop_fd;
	int stop;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pid_t pid;
	int automatic;
	unsigned int n;
	struct tt_mv_thread t[];
};

/* Serialises tt_mover_start() and tt_mover_stop() of every session. */
static pthread_mutex_t tt_movers_lock = PTHREAD_MUTEX_INITIALIZER;

static int tt_mv_ioctl(int fd, struct tt_ioc_mover *m)
{
	return ioctl(fd, TT_IOC_MOVER, m) < 0 ? -errno : 0;
}

/**
 * struct tt_mv_buf - the move_pages(2) arrays of a thread
 * @addr:   per address of the order (one per huge page, or per base page
 *          of a base-page order): the address.
 * @blk:    its block: the index of the huge-page-aligned block it is in.
 * @st:     its status so far (TT_MV_UNTRIED: not attempted yet).
 * @pages:  one move_pages(2) call: addresses.
 * @nodes:  target node of each.
 * @status: status of each.
 * @idx:    index in @addr of each.
 * @all:    per block of the order: the status reported to the module.
 * @cap:    entries of each array.
 */
struct tt_mv_buf {
	uintptr_t *addr;
	size_t *blk;
	int *st;
	void **pages;
	int *nodes;
	int *status;
	size_t *idx;
	int32_t *all;
	size_t cap;
};

#define TT_MV_GROW(b, field, n)						\
	({								\
		void *__p = realloc((b)->field, (n) * sizeof(*(b)->field)); \
		if (__p)						\
			(b)->field = __p;				\
		__p != NULL;						\
	})

static int tt_mv_buf_grow(struct tt_mv_buf *b, size_t n)
{
	int ok = 1;

	if (n <= b->cap)
		return 0;
	ok &= TT_MV_GROW(b, addr, n);
	ok &= TT_MV_GROW(b, blk, n);
	ok &= TT_MV_GROW(b, st, n);
	ok &= TT_MV_GROW(b, pages, n);
	ok &= TT_MV_GROW(b, nodes, n);
	ok &= TT_MV_GROW(b, status, n);
	ok &= TT_MV_GROW(b, idx, n);
	ok &= TT_MV_GROW(b, all, n);
	if (!ok)
		return -ENOMEM;
	b->cap = n;
	return 0;
}

static void tt_mv_buf_free(struct tt_mv_buf *b)
{
	free(b->addr);
	free(b->blk);
	free(b->st);
	free(b->pages);
	free(b->nodes);
	free(b->status);
	free(b->idx);
	free(b->all);
}

/*
 * The addresses of order @m into @b: one per huge page, or for a base-page
 * order one per page, and one per block that MADV_COLLAPSE made a huge page
 * (TT_ORDER_COLLAPSE). Return how many (> 0), or 0 when the order cannot
 * be executed (malformed, no memory); *@nblk: the blocks it touches.
 */
static size_t tt_mv_plan(const struct tt_ioc_mover *m, struct tt_mv_buf *b,
			 size_t *nblk)
{
	uint64_t h = m->huge_size, unit, end = m->addr + m->len, b0, bs, be, a;
	int base = !!(m->order_flags & TT_ORDER_BASE);
	size_t n = 0, i;

	unit = base ? (uint64_t)sysconf(_SC_PAGESIZE) : h;
	if (!h || !unit || !m->len || m->addr % unit || m->len % unit ||
	    end < m->addr || tt_mv_buf_grow(b, m->len / unit))
		return 0;
	b0 = m->addr / h * h;
	*nblk = (end - b0 + h - 1) / h;
	if (*nblk > b->cap)
		return 0;
	for (i = 0; i < *nblk; i++) {
		bs = b0 + i * h > m->addr ? b0 + i * h : m->addr;
		be = b0 + (i + 1) * h < end ? b0 + (i + 1) * h : end;
		if (base && (m->order_flags & TT_ORDER_COLLAPSE) &&
		    be - bs == h && !madvise((void *)(uintptr_t)bs, h,
					      MADV_COLLAPSE))
			be = bs + unit;	/* one huge page: its first address */
		for (a = bs; a < be; a += unit) {
			b->addr[n] = a;
			b->blk[n] = i;
			b->st[n++] = TT_MV_UNTRIED;
		}
	}
	return n;
}

/*
 * The addresses of the order still to try at target @t: those not
 * attempted yet, and at a new node (@retry 0) those the previous node had
 * no room for. Return how many were put into the call's arrays.
 */
static size_t tt_mv_pick(const struct tt_ioc_mover *m, struct tt_mv_buf *b,
			 size_t n, unsigned int t, int retry)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (b->st[i] != TT_MV_UNTRIED &&
		    (retry || !t || b->st[i] != -ENOMEM))
			continue;
		b->pages[k] = (void *)b->addr[i];
		b->nodes[k] = m->nodes[t];
		b->status[k] = TT_MV_UNTRIED;
		b->idx[k++] = i;
	}
	return k;
}

/*
 * Execute order @m, planned in @b (@n addresses in @nblk blocks): b->all[]
 * gets each block's status, the first negative one among its addresses,
 * else the node of its first.
 */
static void tt_mv_exec(const struct tt_ioc_mover *m, struct tt_mv_buf *b,
		       size_t n, size_t nblk)
{
	unsigned int t, tries;
	size_t i, k;
	long ret;
	int st;

	for (t = 0; t < m->nr_nodes && t < 8; t++) {
		/* a call that stops early is made again for the rest, once */
		for (tries = 0; tries < 2; tries++) {
			k = tt_mv_pick(m, b, n, t, tries);
			if (!k)
				break;
			ret = syscall(SYS_move_pages, 0, k, b->pages, b->nodes,
				      b->status, MPOL_MF_MOVE);
			for (i = 0; i < k; i++)
				if (b->status[i] != TT_MV_UNTRIED || ret < 0)
					b->st[b->idx[i]] =
						b->status[i] != TT_MV_UNTRIED ?
						b->status[i] : -errno;
			if (ret <= 0)
				break;
		}
	}
	for (i = 0; i < nblk; i++)
		b->all[i] = TT_MV_UNTRIED;
	for (i = 0; i < n; i++) {
		st = b->st[i] == TT_MV_UNTRIED ? -EBUSY : b->st[i];
		if (b->all[b->blk[i]] == TT_MV_UNTRIED ||
		    (st < 0 && b->all[b->blk[i]] >= 0))
			b->all[b->blk[i]] = st;
	}
	for (i = 0; i < nblk; i++)
		if (b->all[i] == TT_MV_UNTRIED)
			b->all[i] = -EBUSY;
}

static void tt_mv_ready(struct tt_mv_thread *t, int ret)
{
	struct tt_movers *mv = t->mv;

	pthread_mutex_lock(&mv->lock);
	t->ret = ret;
	t->ready = 1;
	pthread_cond_broadcast(&mv->cond);
	pthread_mutex_unlock(&mv->lock);
}

/* Sleep until an order is queued (1) or the set is stopped (0). */
static int tt_mv_idle(struct tt_movers *mv)
{
	struct pollfd p[2] = {
		{ .fd = mv->fd, .events = POLLIN },
		{ .fd = mv->stop_fd, .events = POLLIN },
	};

	for (;;) {
		if (__atomic_load_n(&mv->stop, __ATOMIC_ACQUIRE))
			return 0;
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 0;
		}
		if (p[1].revents)
			return 0;
		if (p[0].revents & POLLIN)
			return 1;
		if (p[0].revents & (POLLERR | POLLHUP | POLLNVAL))
			return 0;
	}
}

static void *tt_mv_main(void *arg)
{
	struct tt_mv_thread *t = arg;
	struct tt_movers *mv = t->mv;
	struct tt_ioc_mover m = { .flags = TT_MOVER_REGISTER | TT_MOVER_BASE };
	struct tt_mv_buf b = { 0 };
	uint64_t done = 0;
	size_t n, nblk = 0;
	uint32_t nr_done = 0;
	int ret;

	ret = tt_mv_ioctl(mv->fd, &m);
	if (ret == -EOPNOTSUPP) {
		/* a module without base-page orders: huge pages only */
		m.flags = TT_MOVER_REGISTER;
		ret = tt_mv_ioctl(mv->fd, &m);
	}
	tt_mv_ready(t, ret);
	if (ret)
		return NULL;
	for (;;) {
		int stop = __atomic_load_n(&mv->stop, __ATOMIC_ACQUIRE);

		memset(&m, 0, sizeof(m));
		m.flags = stop ? 0 : TT_MOVER_TAKE;
		if (done) {
			m.flags |= TT_MOVER_DONE;
			m.done_id = done;
			m.nr_status = nr_done;
			m.status_ptr = (uintptr_t)b.all;
		}
		if (!m.flags)
			break;
		ret = tt_mv_ioctl(mv->fd, &m);
		done = 0;
		if (ret == -EINTR)
			continue;
		if (ret && ret != -ENOENT && ret != -EINVAL && ret != -EFAULT)
			break;	/* the session is unusable (EBADF...) */
		if (stop)
			break;
		if (!m.id) {
			if (!tt_mv_idle(mv))
				break;
			continue;
		}
		n = tt_mv_plan(&m, &b, &nblk);
		if (!n) {
			/* cannot execute it: the module's timeout takes it back */
			continue;
		}
		tt_mv_exec(&m, &b, n, nblk);
		nr_done = nblk;
		done = m.id;
	}
	memset(&m, 0, sizeof(m));
	m.flags = TT_MOVER_UNREGISTER;
	if (done) {
		m.flags |= TT_MOVER_DONE;
		m.done_id = done;
		m.nr_status = nr_done;
		m.status_ptr = (uintptr_t)b.all;
	}
	tt_mv_ioctl(mv->fd, &m);
	tt_mv_buf_free(&b);
	return NULL;
}

/* Stop and join the first @n threads of @mv, then free it. */
static void tt_movers_end(struct tt_movers *mv, unsigned int n)
{
	uint64_t one = 1;
	unsigned int i;

	if (getpid() != mv->pid) {
		/*
		 * A child after fork(): the threads are its parent's, and
		 * the eventfd is shared with it. Only the copies go.
		 */
		close(mv->stop_fd);
		free(mv);
		return;
	}
	__atomic_store_n(&mv->stop, 1, __ATOMIC_RELEASE);
	if (write(mv->stop_fd, &one, sizeof(one)) < 0) {
		/* an eventfd write of 1 cannot fail; the flag is set anyway */
	}
	for (i = 0; i < n; i++)
		pthread_join(mv->t[i].th, NULL);
	close(mv->stop_fd);
	pthread_cond_destroy(&mv->cond);
	pthread_mutex_destroy(&mv->lock);
	free(mv);
}

/*
 * Parse TIERTRAIN_MOVER: 0..TT_MOVERS_MAX threads, or 1 when it is unset
 * or empty (*@set 0: tt_open()'s default); -EINVAL otherwise.
 */
static int tt_mover_env(unsigned int *threads, int *set)
{
	const char *env = getenv(TT_ENV_MOVER);
	unsigned long v;
	char *end;

	*threads = TT_MOVERS_AUTO;
	*set = 0;
	if (!env || !*env)
		return 0;
	*set = 1;
	errno = 0;
	v = strtoul(env, &end, 10);
	if (errno || *end || env[0] == '-' || v > TT_MOVERS_MAX) {
		fprintf(stderr,
			"libtiertrain: %s=\"%s\" is not a number of mover threads, 0..%u\n",
			TT_ENV_MOVER, env, TT_MOVERS_MAX);
		return -EINVAL;
	}
	*threads = v;
	return 0;
}

static int tt_movers_start(struct tt_session *s, unsigned int threads,
			   int automatic)
{
	struct tt_movers *mv;
	sigset_t all, old;
	unsigned int i, started = 0;
	int ret = 0;

	mv = calloc(1, sizeof(*mv) + threads * sizeof(mv->t[0]));
	if (!mv)
		return -ENOMEM;
	mv->fd = s->fd;
	mv->n = threads;
	mv->pid = getpid();
	mv->automatic = automatic;
	mv->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (mv->stop_fd < 0) {
		ret = -errno;
		free(mv);
		return ret;
	}
	pthread_mutex_init(&mv->lock, NULL);
	pthread_cond_init(&mv->cond, NULL);

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 0; i < threads; i++) {
		mv->t[i].mv = mv;
		ret = -tt_cpus_thread(s, &mv->t[i].th, tt_mv_main, &mv->t[i]);
		if (ret)
			break;
		pthread_setname_np(mv->t[i].th, "tt-mover");
		started++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);

	pthread_mutex_lock(&mv->lock);
	for (i = 0; i < started; i++) {
		while (!mv->t[i].ready)
			pthread_cond_wait(&mv->cond, &mv->lock);
		if (mv->t[i].ret && !ret)
			ret = mv->t[i].ret;
	}
	pthread_mutex_unlock(&mv->lock);
	if (ret) {
		tt_movers_end(mv, started);
		return ret;
	}
	s->movers = mv;
	return 0;
}

/**
 * tt_mover_open() - tt_open()'s movers (kernel backend)
 * @s: the new session.
 *
 * TIERTRAIN_MOVER=N starts N threads (0: none), and their failure fails
 * tt_open(). Without it TT_MOVERS_AUTO start, so that huge pages stay
 * huge without the program doing anything; when they cannot start (a
 * module without TT_IOC_MOVER, no thread to be had) the session works
 * without them: the module's engine then moves, and splits, huge pages.
 *
 * Return: 0, or -errno when TIERTRAIN_MOVER is malformed or its threads
 * could not start.
 */
int tt_mover_open(struct tt_session *s)
{
	unsigned int threads;
	int saved = errno, set, ret;

	ret = tt_mover_env(&threads, &set);
	if (ret || !threads)
		return ret;
	pthread_mutex_lock(&tt_movers_lock);
	ret = tt_movers_start(s, threads, !set);
	pthread_mutex_unlock(&tt_movers_lock);
	errno = saved;
	/* CPUs TIERTRAIN_MOVER_CPUS names that no thread may run on */
	if (ret == -EINVAL && s->cpus_set)
		return ret;
	return set ? ret : 0;
}

TT_EXPORT int tt_mover_start(struct tt_session *s, unsigned int threads)
{
	int saved = errno, ret;

	if (!s)
		ret = -EBADF;
	else if (threads > TT_MOVERS_MAX)
		ret = -EINVAL;
	else if (s->ops != &tt_kernel_ops)
		ret = 0;	/* move_pages(2) moves everything already */
	else {
		pthread_mutex_lock(&tt_movers_lock);
		if (s->movers && s->movers->automatic) {
			/* tt_open()'s own: the program's choice replaces them */
			tt_movers_end(s->movers, s->movers->n);
			s->movers = NULL;
		}
		if (s->movers)
			ret = -EALREADY;
		else
			ret = tt_movers_start(s, threads ? threads :
					      TT_MOVERS_DEFAULT, 0);
		pthread_mutex_unlock(&tt_movers_lock);
	}
	if (ret < 0) {
		errno = -ret;
		return ret;
	}
	errno = saved;
	return 0;
}

TT_EXPORT int tt_mover_stop(struct tt_session *s)
{
	struct tt_movers *mv;

	if (!s) {
		errno = EBADF;
		return -EBADF;
	}
	pthread_mutex_lock(&tt_movers_lock);
	mv = s->movers;
	s->movers = NULL;
	pthread_mutex_unlock(&tt_movers_lock);
	if (mv)
		tt_movers_end(mv, mv->n);
	return 0;
}
