// SPDX-License-Identifier: GPL-2.0
/*
 * tt_fuzz: an ABI-aware fuzzer for tiertrain.ko, run in the QEMU guest
 * (`make fuzz SECONDS=N [KERNEL=6.1|6.12|debug]`, see selftests/README).
 *
 * It drives every ioctl of /dev/tiertrain and every command of the generic
 * netlink family "tiertrain" with structured random input built from the
 * uapi header (valid-looking, huge, overlapping, unmapped and wrapping
 * ranges; random and unknown flags, sizes, event orders, budgets, hints;
 * a mover that takes orders and completes, lies, never completes or dies),
 * from several threads and processes, as root and as an unprivileged member
 * of the device's group, while other threads munmap, mremap, mprotect,
 * fork, exit, close and the supervisor SIGKILLs whole processes.
 *
 * A canary in every worker process (its own session, in the same address
 * space the fuzz threads attack) is moved by valid calls (TT_IOC_MIGRATE to
 * the slow node and back, saved-tensor eviction and prefetch by the
 * scheduler) and its contents checked again and again: any mismatch fails
 * the run. So does an "unexpected result": a call that succeeded where it
 * must fail (unknown ioctl, bad pointer, inherited descriptor, a SET_*
 * command from an unprivileged caller) or whose output is impossible
 * (counts that do not add up, an order outside the rules), and a worker
 * that cannot be killed (stuck in the kernel).
 *
 * It prints the seed, per-command counts, errors by errno, canary checks,
 * rates, and a kselftest-style "# Totals:" line; exit 0 when every check
 * passed, 1 otherwise, 4 (skip) without /dev/tiertrain.
 */
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "tt_selftest.h"

#define FZ_PAGE		4096ULL
#define FZ_HUGE		(2ULL << 20)
#define FZ_NOBODY	65534
#define FZ_MAXPROCS	16
#define FZ_NR_IOC	16	/* by _IOC_NR; 0 = unknown number / bad encoding */
#define FZ_NL_CTRL	(__TT_CMD_MAX + 1)	/* CTRL_CMD_GETFAMILY */
#define FZ_NL_BOGUS	(__TT_CMD_MAX + 2)	/* malformed messages */
#define FZ_NR_NL	(__TT_CMD_MAX + 3)
#define FZ_NR_ERRNO	256
#define FZ_MSGS		16
#define FZ_SLOTS	12
#define FZ_SEGS		3
#define FZ_MPOL_MF_MOVE	(1 << 1)	/* <numaif.h> without libnuma */

/* ---- input classes that --avoid can leave out ---------------------------- */
enum {
	FZ_AV_HUGE_TENSORS = 1 << 0,	/* saved tensors > 1 GiB or unmapped */
	FZ_AV_DYNAMIC = 1 << 1,		/* TT_SCHED_DYNAMIC */
	FZ_AV_MOVER_STALL = 1 << 2,	/* movers that never complete, uffd */
	FZ_AV_SINCE_WRAP = 1 << 3,	/* TT_A_SINCE near U64_MAX */
	FZ_AV_BUDGET = 1 << 4,		/* budgets (victim scans) */
	FZ_AV_KILL = 1 << 5,		/* SIGKILL of workers */
};

static const struct {
	const char *name;
	unsigned int bit;
	const char *what;
} fz_avoid_names[] = {
	{ "huge-tensors", FZ_AV_HUGE_TENSORS, "saved tensors over 1 GiB or at unmapped addresses" },
	{ "dynamic", FZ_AV_DYNAMIC, "TT_SCHED_DYNAMIC in TT_IOC_SET_SCHED" },
	{ "mover-stall", FZ_AV_MOVER_STALL, "movers that never complete or whose status page never faults in" },
	{ "since-wrap", FZ_AV_SINCE_WRAP, "TT_A_SINCE near U64_MAX" },
	{ "budget", FZ_AV_BUDGET, "fast-tier budgets (session and module)" },
	{ "kill", FZ_AV_KILL, "SIGKILL of worker processes" },
};

/* ---- shared counters (MAP_SHARED: every worker process adds to them) ---- */
struct fz_shared {
	uint64_t ioc[FZ_NR_IOC];
	uint64_t ioc_err[FZ_NR_ERRNO];
	uint64_t nl[FZ_NR_NL];
	uint64_t nl_err[FZ_NR_ERRNO];
	uint64_t nl_replies, nl_timeouts;
	uint64_t canary_checks, canary_bad, canary_moves;
	uint64_t unexpected;
	uint64_t mover_orders, mover_honest, mover_lies, mover_stalls,
		 mover_deaths, mover_bad;
	uint64_t mem_ops, forks, reopens, kills, spawns, exits;
	uint64_t unpriv_ioctls, unpriv_nl;
	uint32_t nmsg;
	char msg[FZ_MSGS][240];
	volatile int stop;
};

static struct fz_shared *sh;

#define ADD(f, n) __atomic_fetch_add(&sh->f, (n), __ATOMIC_RELAXED)
#define INC(f) ADD(f, 1)

/* ---- options ------------------------------------------------------------- */
static uint64_t opt_seed;
static unsigned int opt_seconds = 30;
static unsigned int opt_procs = 3;	/* worker processes, the last unprivileged */
static unsigned int opt_threads = 2;	/* fuzz threads per worker */
static unsigned int opt_rate_threads = 2;	/* high-rate threads per worker */
static unsigned int opt_nl_threads = 2;	/* netlink threads per worker */
static unsigned int opt_avoid;
static bool opt_no_unpriv, opt_verbose;

/* ---- per-process state of a worker ---------------------------------------- */
static struct tt_st_topo topo;
static int nodes_with_mem[TT_MAX_NODES], nr_nodes_with_mem;
static bool is_unpriv;
static uid_t my_euid;
static unsigned int worker_id;
static volatile int shared_fd = -1;	/* the session the fuzz threads share */
static volatile int proc_stop;
static volatile int mover_alive;
static volatile int uffd_fd = -1;
static void *uffd_page;

struct fz_seg {
	uint64_t addr, len;	/* racy on purpose: readers may see stale values */
};

static struct fz_seg slots[FZ_SLOTS][FZ_SEGS];
static uint64_t stale[16][2];
static unsigned int stale_i;
static uint64_t canary_addr, canary_len;

/* ---- random numbers -------------------------------------------------------- */
struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rn(struct rng *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

/* true with probability @pct percent */
static bool pc(struct rng *r, unsigned int pct)
{
	return rn(r, 100) < pct;
}

/* an "interesting" 64-bit number */
static uint64_t rnd_u64(struct rng *r)
{
	static const uint64_t special[] = {
		0, 1, 2, 4095, 4096, 4097, FZ_HUGE - 1, FZ_HUGE, FZ_HUGE + 4096,
		1ULL << 30, 1ULL << 31, 1ULL << 32, (1ULL << 32) - 1, 1ULL << 40,
		(1ULL << 53) + (6ULL << 20), 1ULL << 60, 1ULL << 62, 1ULL << 63,
		INT64_MAX, UINT64_MAX, UINT64_MAX - 4095, UINT64_MAX - 4096,
		0x7ffffffff000ULL, 0x800000000000ULL, 0xffff888000000000ULL,
		0xffffffffff600000ULL,
	};

	switch (rn(r, 4)) {
	case 0:
		return special[rn(r, sizeof(special) / sizeof(special[0]))];
	case 1:
		return rn(r, 1ULL << rn(r, 64));
	case 2:
		return special[rn(r, sizeof(special) / sizeof(special[0]))] +
		       rn(r, 3) - 1;
	default:
		return rnd(r);
	}
}

static uint32_t rnd_u32(struct rng *r)
{
	switch (rn(r, 5)) {
	case 0:
		return (uint32_t)rn(r, 4);
	case 1:
		return 1U << rn(r, 32);
	case 2:
		return UINT32_MAX - (uint32_t)rn(r, 2);
	case 3:
		return (uint32_t)rn(r, 1U << rn(r, 32));
	default:
		return (uint32_t)rnd(r);
	}
}

/* random bits: mostly known ones, sometimes unknown */
static uint32_t rnd_flags(struct rng *r, uint32_t all)
{
	uint32_t f = (uint32_t)rnd(r) & all;

	if (pc(r, 30))
		f &= (uint32_t)rnd(r);
	if (pc(r, 10))
		f |= 1U << rn(r, 32);
	return f;
}

/* ---- bookkeeping ------------------------------------------------------------ */
static void fz_msg(const char *fmt, ...)
{
	uint32_t i = __atomic_fetch_add(&sh->nmsg, 1, __ATOMIC_RELAXED);
	va_list ap;

	if (i >= FZ_MSGS)
		return;
	va_start(ap, fmt);
	vsnprintf(sh->msg[i], sizeof(sh->msg[i]), fmt, ap);
	va_end(ap);
}

#define UNEXP(fmt, ...)                                                        \
	do {                                                                   \
		INC(unexpected);                                               \
		fz_msg("worker %u%s: " fmt, worker_id,                         \
		       is_unpriv ? " (unpriv)" : "", ##__VA_ARGS__);           \
	} while (0)

static int ioc_index(unsigned long cmd)
{
	unsigned int nr = _IOC_NR(cmd);

	if (_IOC_TYPE(cmd) != TT_IOC_MAGIC || nr >= FZ_NR_IOC)
		return 0;
	return (int)nr;
}

static const char *ioc_name(int i)
{
	static const char *const n[FZ_NR_IOC] = {
		[0] = "bad-number",
		[_IOC_NR(TT_IOC_REGISTER)] = "REGISTER",
		[_IOC_NR(TT_IOC_UNREGISTER)] = "UNREGISTER",
		[_IOC_NR(TT_IOC_MIGRATE)] = "MIGRATE",
		[_IOC_NR(TT_IOC_RESIDENCY)] = "RESIDENCY",
		[_IOC_NR(TT_IOC_STATS)] = "STATS",
		[_IOC_NR(TT_IOC_FLUSH)] = "FLUSH",
		[_IOC_NR(TT_IOC_EVENT)] = "EVENT",
		[_IOC_NR(TT_IOC_EVENTS)] = "EVENTS",
		[_IOC_NR(TT_IOC_SET_SCHED)] = "SET_SCHED",
		[_IOC_NR(TT_IOC_GET_SCHED)] = "GET_SCHED",
		[_IOC_NR(TT_IOC_LAYERS)] = "LAYERS",
		[_IOC_NR(TT_IOC_HINT)] = "HINT",
		[_IOC_NR(TT_IOC_MOVER)] = "MOVER",
	};

	return n[i] ? n[i] : "unknown-number";
}

static const char *nl_name(int i)
{
	static const char *const n[FZ_NR_NL] = {
		[TT_CMD_UNSPEC] = "UNSPEC",
		[TT_CMD_GET_STATUS] = "GET_STATUS",
		[TT_CMD_GET_TIERS] = "GET_TIERS",
		[TT_CMD_SET_TIERS] = "SET_TIERS",
		[TT_CMD_GET_SESSIONS] = "GET_SESSIONS",
		[TT_CMD_GET_LAYERS] = "GET_LAYERS",
		[TT_CMD_GET_CONFIG] = "GET_CONFIG",
		[TT_CMD_SET_CONFIG] = "SET_CONFIG",
		[TT_CMD_GET_EVENTS] = "GET_EVENTS",
		[TT_CMD_EVENT] = "EVENT",
		[__TT_CMD_MAX] = "beyond-max",
		[FZ_NL_CTRL] = "ctrl-getfamily",
		[FZ_NL_BOGUS] = "malformed",
	};

	return n[i] ? n[i] : "?";
}

/* ioctl, counted: 0 / positive, or -errno */
static long fz_ioctl(int fd, unsigned long cmd, void *arg)
{
	long r = ioctl(fd, cmd, arg);
	int e = r < 0 ? errno : 0;

	INC(ioc[ioc_index(cmd)]);
	INC(ioc_err[e < FZ_NR_ERRNO ? e : FZ_NR_ERRNO - 1]);
	if (is_unpriv)
		INC(unpriv_ioctls);
	return r < 0 ? -e : r;
}

/* ---- memory pool -------------------------------------------------------------- */
static int memfd_for_private = -1;

/* map a region of one of the kinds the ABI distinguishes */
static uint64_t pool_map(struct rng *r, uint64_t *lenp)
{
	uint64_t len = (1 + rn(r, 512)) * FZ_PAGE;
	int kind = (int)rn(r, 10);
	void *p;

	if (kind <= 3) {	/* THP-able, 2 MiB aligned */
		uint64_t want = (1 + rn(r, 2)) * FZ_HUGE;

		p = mmap(NULL, want + FZ_HUGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			return 0;
		uint64_t a = ((uint64_t)(uintptr_t)p + FZ_HUGE - 1) & ~(FZ_HUGE - 1);

		if (a > (uint64_t)(uintptr_t)p)
			munmap(p, a - (uint64_t)(uintptr_t)p);
		munmap((void *)(uintptr_t)(a + want),
		       (uint64_t)(uintptr_t)p + want + FZ_HUGE - a - want);
		madvise((void *)(uintptr_t)a, want, MADV_HUGEPAGE);
		if (pc(r, 70))
			memset((void *)(uintptr_t)a, (int)rn(r, 256), want);
		*lenp = want;
		return a;
	}
	if (kind == 4 && memfd_for_private >= 0) {	/* file-backed private */
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE,
			 memfd_for_private, 0);
	} else if (kind == 5) {		/* shared anonymous */
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	} else if (kind == 6) {		/* PROT_NONE */
		p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		if (p != MAP_FAILED) {
			*lenp = len;
			return (uint64_t)(uintptr_t)p;
		}
	} else {			/* base pages, some untouched */
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED && pc(r, 50))
			madvise(p, len, MADV_NOHUGEPAGE);
	}
	if (p == MAP_FAILED)
		return 0;
	if (pc(r, 80))
		memset(p, (int)rn(r, 256), pc(r, 50) ? len : len / 2);
	*lenp = len;
	return (uint64_t)(uintptr_t)p;
}

static void stale_add(uint64_t a, uint64_t l)
{
	unsigned int i = __atomic_fetch_add(&stale_i, 1, __ATOMIC_RELAXED) % 16;

	stale[i][0] = a;
	stale[i][1] = l;
}

/* one mutation of the pool: only mappings the pool made are touched */
static void pool_mutate(struct rng *r)
{
	unsigned int s = (unsigned int)rn(r, FZ_SLOTS), g = (unsigned int)rn(r, FZ_SEGS);
	struct fz_seg *sg = &slots[s][g];
	uint64_t a = sg->addr, l = sg->len;
	void *p;

	INC(mem_ops);
	if (!a) {
		a = pool_map(r, &l);
		sg->len = l;
		sg->addr = a;
		return;
	}
	switch (rn(r, 8)) {
	case 0:		/* munmap */
	case 1:
		sg->addr = 0;
		munmap((void *)(uintptr_t)a, l);
		stale_add(a, l);
		break;
	case 2: {	/* munmap a piece: the rest splits into segments */
		uint64_t np = l / FZ_PAGE, off = rn(r, np) * FZ_PAGE,
			 hl = (1 + rn(r, np - off / FZ_PAGE)) * FZ_PAGE;
		int free_g = -1;

		for (int i = 0; i < FZ_SEGS; i++)
			if (!slots[s][i].addr)
				free_g = i;
		if (free_g < 0 && off && off + hl < l)
			break;
		munmap((void *)(uintptr_t)(a + off), hl);
		stale_add(a + off, hl);
		if (!off) {
			if (hl >= l) {
				sg->addr = 0;
			} else {
				sg->len = l - hl;
				sg->addr = a + hl;
			}
		} else {
			sg->len = off;
			if (off + hl < l) {
				slots[s][free_g].len = l - off - hl;
				slots[s][free_g].addr = a + off + hl;
			}
		}
		break;
	}
	case 3: {	/* mremap: grow, shrink or move */
		uint64_t nl = (1 + rn(r, l / FZ_PAGE * 2)) * FZ_PAGE;

		p = mremap((void *)(uintptr_t)a, l, nl, MREMAP_MAYMOVE);
		if (p != MAP_FAILED) {
			if ((uint64_t)(uintptr_t)p != a)
				stale_add(a, l);
			sg->len = nl;
			sg->addr = (uint64_t)(uintptr_t)p;
		}
		break;
	}
	case 4:		/* mprotect */
		mprotect((void *)(uintptr_t)a, (1 + rn(r, l / FZ_PAGE)) * FZ_PAGE,
			 (int)rn(r, 4) & (PROT_READ | PROT_WRITE));
		break;
	case 5:
		madvise((void *)(uintptr_t)a, l,
			pc(r, 50) ? MADV_DONTNEED :
			pc(r, 50) ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
		break;
	default:	/* fork-share it, then drop: a COW window */
		madvise((void *)(uintptr_t)a, l, MADV_COLD);
		break;
	}
}

/* ---- ranges ------------------------------------------------------------------ */
static void pick_seg(struct rng *r, __u64 *a, __u64 *l)
{
	for (int tries = 0; tries < 4; tries++) {
		struct fz_seg *sg = &slots[rn(r, FZ_SLOTS)][rn(r, FZ_SEGS)];

		*a = sg->addr;
		*l = sg->len;
		if (*a && *l)
			return;
	}
	*a = canary_addr;
	*l = canary_len;
}

/* a range for REGISTER/MIGRATE/RESIDENCY/HINT: every class of the brief */
static void gen_range(struct rng *r, __u64 *addr, __u64 *len)
{
	__u64 a = 0, l = 0;

	switch (rn(r, 20)) {
	case 0 ... 7: {		/* valid-looking: a page-aligned piece of a mapping */
		pick_seg(r, &a, &l);
		uint64_t np = l / FZ_PAGE, first = rn(r, np ? np : 1);

		*addr = a + first * FZ_PAGE;
		*len = (1 + rn(r, np > first ? np - first : 1)) * FZ_PAGE;
		if (pc(r, 30)) {	/* cap: keep sync migrations cheap */
			if (*len > 64 * FZ_PAGE)
				*len = 64 * FZ_PAGE;
		}
		return;
	}
	case 8:			/* the canary, whole or part: must stay intact */
		*addr = canary_addr + rn(r, canary_len / FZ_PAGE) * FZ_PAGE;
		*len = (1 + rn(r, 64)) * FZ_PAGE;
		return;
	case 9:			/* overlapping two mappings, or spanning a gap */
		pick_seg(r, &a, &l);
		pick_seg(r, addr, len);
		if (a > *addr) {
			uint64_t t = a;

			a = *addr;
			*addr = t;
		}
		*len = *addr + *len - a;
		*addr = a;
		return;
	case 10:		/* unaligned */
		pick_seg(r, &a, &l);
		*addr = a + rn(r, l + 1);
		*len = rn(r, l + 2);
		return;
	case 11:		/* unmapped: a range the pool released */
		a = stale[rn(r, 16)][0];
		l = stale[rn(r, 16)][1];
		*addr = a ? a : 0x10000;
		*len = l ? l : FZ_PAGE;
		return;
	case 12:		/* huge */
		pick_seg(r, addr, &l);
		*len = 1ULL << (30 + rn(r, 34));
		if (pc(r, 30))
			*len += 6ULL << 20;
		return;
	case 13:		/* wrapping */
		*addr = UINT64_MAX - rn(r, 1ULL << 32) * FZ_PAGE - FZ_PAGE + 1;
		*addr &= ~(FZ_PAGE - 1);
		*len = (2 + rn(r, 1ULL << 33)) * FZ_PAGE;
		return;
	case 14:		/* end beyond user space, kernel addresses */
		*addr = pc(r, 50) ? 0x7ffffffff000ULL - rn(r, 4) * FZ_PAGE :
				    0xffff888000000000ULL;
		*len = (1 + rn(r, 16)) * FZ_PAGE;
		return;
	case 15:		/* zero or one page at the bottom */
		*addr = rn(r, 3) * FZ_PAGE;
		*len = rn(r, 3) * FZ_PAGE;
		return;
	case 16:		/* heap, stack: memory the process lives on */
		*addr = ((uint64_t)(uintptr_t)&a) & ~(FZ_PAGE - 1);
		*len = FZ_PAGE;
		if (pc(r, 50)) {
			*addr = ((uint64_t)(uintptr_t)sh) & ~(FZ_PAGE - 1);
			*len = FZ_PAGE;
		}
		return;
	default:
		*addr = rnd_u64(r);
		*len = rnd_u64(r);
		if (pc(r, 50)) {
			*addr &= ~(FZ_PAGE - 1);
			*len &= ~(FZ_PAGE - 1);
		}
		return;
	}
}

static int rnd_node(struct rng *r)
{
	switch (rn(r, 10)) {
	case 0:
		return (int)rnd_u32(r);
	case 1:
		return pc(r, 50) ? -1 : topo.nr_node_ids;
	case 2:
		return topo.offline >= 0 ? topo.offline : (int)rn(r, TT_MAX_NODES + 2);
	default:
		return nr_nodes_with_mem ? nodes_with_mem[rn(r, nr_nodes_with_mem)] : 0;
	}
}

/* ---- ioctl fuzzing ------------------------------------------------------------ */
static void chk_migrate(const struct tt_ioc_migrate *m, long ret)
{
	const struct tt_migrate_result *x = &m->result;
	uint64_t sum = x->moved + x->already_on_node + x->skipped_not_present +
		       x->skipped_busy + x->skipped_unsupported + x->skipped_no_memory;

	if (ret && ret != -ENOSPC)
		return;
	if (m->flags & TT_MIGRATE_ASYNC) {
		if (!ret && (x->pages || sum))
			UNEXP("MIGRATE async returned a non-zero result (pages %llu)",
			      (unsigned long long)x->pages);
		return;
	}
	if (x->pages != m->len / FZ_PAGE || sum != x->pages)
		UNEXP("MIGRATE %llx+%llx -> %d returned %ld with pages %llu, sum %llu",
		      (unsigned long long)m->addr, (unsigned long long)m->len,
		      m->node, ret, (unsigned long long)x->pages,
		      (unsigned long long)sum);
}

static void fz_one_event(struct rng *r, struct tt_event *e, unsigned int *state)
{
	memset(e, 0, sizeof(*e));
	/* a plausible training order most of the time, junk otherwise */
	if (pc(r, 85)) {
		unsigned int layer = 1 + (unsigned int)rn(r, 8);

		switch (rn(r, 6)) {
		case 0:
			e->type = TT_EV_ITER_BEGIN;
			break;
		case 1:
		case 2:
			e->type = TT_EV_TENSOR_SAVED;
			e->layer = layer;
			if (pc(r, 20))
				e->flags = TT_EV_PERSISTENT;
			if (!(opt_avoid & FZ_AV_HUGE_TENSORS) && pc(r, 8)) {
				gen_range(r, &e->addr, &e->len);
			} else if (pc(r, 20)) {
				e->addr = canary_addr + rn(r, canary_len / 2);
				e->len = rn(r, canary_len / 2);
			} else {
				__u64 a = 0, l = 0;

				pick_seg(r, &a, &l);
				e->addr = a + rn(r, 8) * FZ_PAGE;
				e->len = pc(r, 80) ? l : rn(r, l + 1);
			}
			if (!(opt_avoid & FZ_AV_HUGE_TENSORS) && pc(r, 2)) {
				/* the fake tensors of issue 14 finding 1 */
				e->addr = 0x100000000000ULL + rn(r, 1024) * FZ_HUGE;
				e->len = pc(r, 50) ? (1ULL << 53) + (6ULL << 20) :
						     1ULL << 40;
			}
			break;
		default:
			e->type = pc(r, 50) ? TT_EV_LAYER_BEGIN : TT_EV_LAYER_END;
			e->layer = layer;
			e->flags = (*state & 1) ? TT_BWD : TT_FWD;
			if (pc(r, 10))
				*state ^= 1;
			break;
		}
		if (pc(r, 3)) {
			e->flags |= TT_EV_TIMESTAMP;
			e->ts_ns = tt_st_now_ns() + rn(r, 1000000) - 500000;
		}
		if (pc(r, 2))
			e->layer = rnd_u32(r);
		return;
	}
	e->type = (uint16_t)(pc(r, 80) ? rn(r, 7) : rnd(r));
	e->flags = (uint16_t)rnd_flags(r, TT_EV_FLAGS_ALL);
	e->layer = rnd_u32(r);
	e->ts_ns = pc(r, 70) ? 0 : rnd_u64(r);
	e->addr = pc(r, 50) ? 0 : rnd_u64(r);
	e->len = pc(r, 50) ? 0 : rnd_u64(r);
	if ((opt_avoid & FZ_AV_HUGE_TENSORS) && e->type == TT_EV_TENSOR_SAVED) {
		__u64 a = 0, l = 0;

		pick_seg(r, &a, &l);
		e->addr = a;
		e->len = l;
	}
}

static void fz_set_sched(struct rng *r, int fd)
{
	struct tt_ioc_sched s;

	memset(&s, 0, sizeof(s));
	if (pc(r, 50))
		fz_ioctl(fd, TT_IOC_GET_SCHED, &s);
	s.valid = rnd_flags(r, TT_SCHED_SET_ALL);
	if (opt_avoid & FZ_AV_BUDGET)
		s.valid &= ~TT_SCHED_SET_BUDGET;
	s.flags = rnd_flags(r, TT_SCHED_FLAGS_ALL);
	if (opt_avoid & FZ_AV_DYNAMIC)
		s.flags &= ~TT_SCHED_DYNAMIC;
	s.profile_iters = pc(r, 70) ? 1 + (uint32_t)rn(r, 3) : rnd_u32(r);
	s.budget_mib = (s.valid & TT_SCHED_SET_BUDGET) ?
		(pc(r, 60) ? (uint32_t)rn(r, 64) : rnd_u32(r)) :
		(pc(r, 95) ? 0 : rnd_u32(r));
	s.stay_ns = pc(r, 50) ? rn(r, 2000000) : rnd_u64(r);
	s.er_bps = pc(r, 50) ? (1 + rn(r, 4096)) << 20 : rnd_u64(r);
	s.pr_bps = pc(r, 50) ? (1 + rn(r, 4096)) << 20 : rnd_u64(r);
	if (!(opt_avoid & FZ_AV_HUGE_TENSORS) && pc(r, 10)) {
		/* finding 1: rates that make the plan accept anything */
		s.valid |= TT_SCHED_SET_RATES | TT_SCHED_SET_STAY;
		s.er_bps = s.pr_bps = 1ULL << 60;
		s.stay_ns = 0;
	}
	s.slow_node = pc(r, 50) ? -1 : rnd_node(r);
	s.fast_node = pc(r, 50) ? -1 : rnd_node(r);
	fz_ioctl(fd, TT_IOC_SET_SCHED, &s);
}

/* known ioctl numbers with wrong sizes or directions, unknown numbers */
static unsigned long rnd_bad_cmd(struct rng *r)
{
	static const unsigned long good[] = {
		TT_IOC_REGISTER, TT_IOC_UNREGISTER, TT_IOC_MIGRATE,
		TT_IOC_RESIDENCY, TT_IOC_STATS, TT_IOC_FLUSH, TT_IOC_EVENT,
		TT_IOC_EVENTS, TT_IOC_SET_SCHED, TT_IOC_GET_SCHED,
		TT_IOC_LAYERS, TT_IOC_HINT, TT_IOC_MOVER,
	};
	unsigned long c = good[rn(r, sizeof(good) / sizeof(good[0]))];

	switch (rn(r, 4)) {
	case 0:
		return _IOC(_IOC_DIR(c), TT_IOC_MAGIC,
			    _IOC_NR(TT_IOC_MOVER) + 1 + rn(r, 200), _IOC_SIZE(c));
	case 1:
		return _IOC(_IOC_DIR(c), TT_IOC_MAGIC, _IOC_NR(c),
			    (_IOC_SIZE(c) + 1 + rn(r, 64)) & _IOC_SIZEMASK);
	case 2:
		return _IOC((_IOC_DIR(c) + 1 + rn(r, 3)) & 3, TT_IOC_MAGIC,
			    _IOC_NR(c), _IOC_SIZE(c));
	default:
		return _IOC(_IOC_DIR(c), (TT_IOC_MAGIC + 1 + rn(r, 254)) & 0xff,
			    _IOC_NR(c), _IOC_SIZE(c));
	}
}

static bool exact_cmd(unsigned long c)
{
	switch (c) {
	case TT_IOC_REGISTER: case TT_IOC_UNREGISTER: case TT_IOC_MIGRATE:
	case TT_IOC_RESIDENCY: case TT_IOC_FLUSH: case TT_IOC_EVENT:
	case TT_IOC_EVENTS: case TT_IOC_SET_SCHED: case TT_IOC_GET_SCHED:
	case TT_IOC_LAYERS: case TT_IOC_HINT: case TT_IOC_MOVER:
		return true;
	}
	/* TT_IOC_STATS matches any read size holding abi_version and size */
	return _IOC_TYPE(c) == TT_IOC_MAGIC && _IOC_DIR(c) == _IOC_READ &&
	       _IOC_NR(c) == _IOC_NR(TT_IOC_STATS) &&
	       _IOC_SIZE(c) >= 2 * sizeof(uint32_t);
}

/*
 * Pointers the kernel must refuse. A range the pool released may have been
 * mapped again since (a malloc arena, a thread stack): a pointer into it is
 * writable memory of this process, and a call that writes its result there
 * would corrupt it. So refused pointers come from a reservation kept for
 * the worker's life, never from released ranges: FZ_HOLE_PAGES pages, all
 * PROT_NONE but page FZ_HOLE_RO, which is PROT_READ (reads of it succeed,
 * writes fault), and a struct that begins near its end runs into the
 * PROT_NONE page after it (a read that faults part-way).
 */
#define FZ_HOLE_PAGES	4
#define FZ_HOLE_RO	2
static uint64_t hole_addr;

/* Map the reservation into hole_addr. Return: 0, or -errno. */
static int hole_setup(void)
{
	void *p = mmap(NULL, FZ_HOLE_PAGES * FZ_PAGE, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	int err;

	if (p == MAP_FAILED)
		return -errno;
	if (mprotect((char *)p + FZ_HOLE_RO * FZ_PAGE, FZ_PAGE, PROT_READ)) {
		err = -errno;
		munmap(p, FZ_HOLE_PAGES * FZ_PAGE);
		return err;
	}
	hole_addr = (uint64_t)(uintptr_t)p;
	return 0;
}

static void *bad_ptr(struct rng *r)
{
	static const uint64_t p[] = {
		0, 1, 4096, 0xffff888000000000ULL, 0xffffffffff600000ULL,
		0x7ffffffff000ULL, UINT64_MAX,
	};

	if (hole_addr && pc(r, 30)) {
		uint64_t off = rn(r, FZ_HOLE_PAGES * FZ_PAGE);

		if (pc(r, 30))	/* the last bytes of the readable page */
			off = (FZ_HOLE_RO + 1) * FZ_PAGE - 8 * (1 + rn(r, 8));
		return (void *)(uintptr_t)(hole_addr + (off & ~7ULL));
	}
	return (void *)(uintptr_t)p[rn(r, sizeof(p) / sizeof(p[0]))];
}

/* is @p surely not readable user memory of this process? */
static bool surely_bad(const void *p)
{
	uint64_t a = (uint64_t)(uintptr_t)p;

	/* a struct that begins in a PROT_NONE page faults on its first byte */
	if (hole_addr && a >= hole_addr &&
	    a < hole_addr + FZ_HOLE_PAGES * FZ_PAGE &&
	    (a - hole_addr) / FZ_PAGE != FZ_HOLE_RO)
		return true;
	return a < 65536 || a >= 0x800000000000ULL;
}

static uint8_t big_buf_storage[1 << 16] __attribute__((aligned(64)));

static void fz_ioctl_one(struct rng *r, int fd, unsigned int *evstate)
{
	unsigned int op = (unsigned int)rn(r, 100);
	__u64 a = 0, l = 0;
	long ret;

	if (op < 18) {		/* STATS, also with other sizes */
		struct tt_ioc_stats st;
		unsigned long cmd = TT_IOC_STATS;

		if (pc(r, 10))
			cmd = _IOC(_IOC_READ, TT_IOC_MAGIC, _IOC_NR(TT_IOC_STATS),
				   rn(r, sizeof(st) + 64));
		memset(&st, 0xa5, sizeof(st));
		ret = fz_ioctl(fd, cmd, _IOC_SIZE(cmd) > sizeof(st) ?
			       (void *)big_buf_storage : (void *)&st);
		if (!ret && _IOC_SIZE(cmd) <= sizeof(st) && _IOC_SIZE(cmd) >= 8) {
			if (st.abi_version != TT_ABI_VERSION || !st.size ||
			    st.size > _IOC_SIZE(cmd))
				UNEXP("STATS size %u: abi %u size %u",
				      _IOC_SIZE(cmd), st.abi_version, st.size);
		}
		if (!ret && !exact_cmd(cmd))
			UNEXP("STATS with size %u succeeded", _IOC_SIZE(cmd));
	} else if (op < 28) {	/* GET_SCHED */
		struct tt_ioc_sched s;

		memset(&s, 0xa5, sizeof(s));
		ret = fz_ioctl(fd, TT_IOC_GET_SCHED, &s);
		if (!ret && (s.valid != TT_SCHED_SET_ALL ||
			     (s.flags & ~TT_SCHED_FLAGS_ALL) ||
			     s.profile_iters < 1 || s.profile_iters > 1000))
			UNEXP("GET_SCHED: valid %#x flags %#x profile_iters %u",
			      s.valid, s.flags, s.profile_iters);
	} else if (op < 40) {	/* bad commands and bad pointers */
		unsigned long cmd = rnd_bad_cmd(r);
		void *p = pc(r, 50) ? (void *)big_buf_storage : bad_ptr(r);

		if (pc(r, 30)) {	/* a good command, a bad pointer */
			static const unsigned long ptrcmds[] = {
				TT_IOC_REGISTER, TT_IOC_MIGRATE, TT_IOC_RESIDENCY,
				TT_IOC_STATS, TT_IOC_EVENT, TT_IOC_EVENTS,
				TT_IOC_SET_SCHED, TT_IOC_GET_SCHED, TT_IOC_LAYERS,
				TT_IOC_HINT, TT_IOC_MOVER,
			};
			cmd = ptrcmds[rn(r, sizeof(ptrcmds) / sizeof(ptrcmds[0]))];
			p = bad_ptr(r);
			ret = fz_ioctl(fd, cmd, p);
			if (!ret && surely_bad(p))
				UNEXP("%s with pointer %p succeeded",
				      ioc_name(ioc_index(cmd)), p);
			return;
		}
		memset(big_buf_storage, 0, 4096);
		ret = fz_ioctl(fd, cmd, p);
		if (ret != -ENOTTY && !exact_cmd(cmd))
			UNEXP("ioctl %#lx (not in the ABI) returned %ld", cmd, ret);
	} else if (op < 60) {	/* EVENT */
		struct tt_event e;

		fz_one_event(r, &e, evstate);
		fz_ioctl(fd, TT_IOC_EVENT, &e);
	} else if (op < 64) {	/* EVENTS */
		static __thread struct tt_event evs[512];
		struct tt_ioc_events b;
		unsigned int n = (unsigned int)rn(r, 64);

		if (pc(r, 10))
			n = (unsigned int)rn(r, 512);
		for (unsigned int i = 0; i < n && i < 512; i++)
			fz_one_event(r, &evs[i], evstate);
		memset(&b, 0, sizeof(b));
		b.events_ptr = (uintptr_t)evs;
		b.count = n;
		if (pc(r, 5))
			b.count = 4096 + (uint32_t)rn(r, 3) - 1;	/* past our array: EFAULT or junk */
		if (pc(r, 5))
			b.events_ptr = (uintptr_t)bad_ptr(r);
		if (pc(r, 5))
			b.flags = rnd_u32(r);
		if (pc(r, 5))
			b.reserved = rnd_u32(r);
		b.done = 0;
		ret = fz_ioctl(fd, TT_IOC_EVENTS, &b);
		if (!ret && b.done != b.count)
			UNEXP("EVENTS of %u succeeded with done %u", b.count, b.done);
		if (ret && ret != -EFAULT && b.count <= 4096 && b.done > b.count)
			UNEXP("EVENTS of %u failed (%ld) with done %u", b.count,
			      ret, b.done);
		if (!ret && (b.flags || b.reserved || b.count > 4096))
			UNEXP("EVENTS with flags %#x reserved %#x count %u succeeded",
			      b.flags, b.reserved, b.count);
	} else if (op < 68) {	/* SET_SCHED */
		fz_set_sched(r, fd);
	} else if (op < 75) {	/* REGISTER / UNREGISTER */
		struct tt_ioc_range g;

		gen_range(r, &a, &l);
		g.addr = a;
		g.len = l;
		g.layer = rnd_u32(r);
		g.flags = pc(r, 80) ? rnd_flags(r, TT_RANGE_FLAGS_ALL) & TT_RANGE_FLAGS_ALL :
				      rnd_flags(r, TT_RANGE_FLAGS_ALL);
		ret = fz_ioctl(fd, pc(r, 60) ? TT_IOC_REGISTER : TT_IOC_UNREGISTER, &g);
		if (!ret && (!l || (a & (FZ_PAGE - 1)) || (l & (FZ_PAGE - 1)) ||
			     a + l < a || a + l > 0x800000000000ULL))
			UNEXP("REGISTER/UNREGISTER %llx+%llx succeeded",
			      (unsigned long long)a, (unsigned long long)l);
	} else if (op < 79) {	/* MIGRATE */
		struct tt_ioc_migrate m;

		memset(&m, 0, sizeof(m));
		gen_range(r, &m.addr, &m.len);
		if (m.len > (2ULL << 20) && m.len < (1ULL << 30) && pc(r, 90))
			m.len = 2ULL << 20;
		m.node = rnd_node(r);
		m.flags = rnd_flags(r, TT_MIGRATE_FLAGS_ALL);
		ret = fz_ioctl(fd, TT_IOC_MIGRATE, &m);
		chk_migrate(&m, ret);
	} else if (op < 84) {	/* RESIDENCY */
		static __thread uint64_t bytes[TT_MAX_NODES + 1];
		struct tt_ioc_residency q;

		memset(&q, 0, sizeof(q));
		gen_range(r, &q.addr, &q.len);
		q.nr_nodes = pc(r, 80) ? 1 + (uint32_t)rn(r, 8) : rnd_u32(r) % (TT_MAX_NODES + 3);
		q.bytes_ptr = (uintptr_t)bytes;
		if (q.nr_nodes > TT_MAX_NODES + 1 || pc(r, 5))
			q.bytes_ptr = (uintptr_t)bad_ptr(r);
		if (pc(r, 5))
			q.flags = rnd_u32(r);
		ret = fz_ioctl(fd, TT_IOC_RESIDENCY, &q);
		/* (a stale pointer may name mapped memory: check ours only) */
		if (!ret && q.bytes_ptr == (uintptr_t)bytes) {
			uint64_t s = q.not_present_bytes + q.other_bytes;
			uint64_t st = q.addr & ~(FZ_PAGE - 1);
			uint64_t en = (q.addr + q.len + FZ_PAGE - 1) & ~(FZ_PAGE - 1);

			for (uint32_t i = 0; i < q.nr_nodes && i <= TT_MAX_NODES; i++)
				s += bytes[i];
			if (q.flags || !q.len || !q.nr_nodes ||
			    q.nr_nodes > TT_MAX_NODES || s != en - st)
				UNEXP("RESIDENCY %llx+%llx nr %u flags %#x: sum %llu, range %llu",
				      (unsigned long long)q.addr,
				      (unsigned long long)q.len, q.nr_nodes,
				      q.flags, (unsigned long long)s,
				      (unsigned long long)(en - st));
		}
	} else if (op < 89) {	/* HINT */
		struct tt_ioc_hint h;

		gen_range(r, &h.addr, &h.len);
		h.hint = rnd_flags(r, TT_HINT_ALL);
		h.reserved = pc(r, 95) ? 0 : rnd_u32(r);
		ret = fz_ioctl(fd, TT_IOC_HINT, &h);
		if (!ret && (!h.hint || (h.hint & ~TT_HINT_ALL) || h.reserved ||
			     !h.len || h.addr + h.len < h.addr ||
			     ((h.hint & (h.hint - 1)) &&
			      h.hint != (TT_HINT_WILL_USE | TT_HINT_PIN_FAST))))
			UNEXP("HINT %#x reserved %#x %llx+%llx succeeded", h.hint,
			      h.reserved, (unsigned long long)h.addr,
			      (unsigned long long)h.len);
	} else if (op < 93) {	/* LAYERS */
		static __thread struct tt_layer_info li[64];
		struct tt_ioc_layers q;
		uint32_t in;

		memset(&q, 0, sizeof(q));
		q.count = in = pc(r, 80) ? (uint32_t)rn(r, 65) : rnd_u32(r);
		q.info_ptr = (uintptr_t)li;
		if (in > 64 || pc(r, 5))
			q.info_ptr = (uintptr_t)bad_ptr(r);
		if (pc(r, 5))
			q.flags = rnd_u32(r);
		/*
		 * Entries the kernel did not write keep the marker: a layer
		 * reported by another thread between its count and its copy
		 * raises count beyond what was written.
		 */
		memset(li, 0xff, sizeof(li));
		ret = fz_ioctl(fd, TT_IOC_LAYERS, &q);
		if (!ret && q.info_ptr == (uintptr_t)li) {
			for (uint32_t i = 0; i < in && i < q.count; i++)
				if (li[i].layer == UINT32_MAX && li[i].status == UINT32_MAX)
					break;
				else if (li[i].status > TT_LAYER_DROPPED ||
				    (i && li[i].layer <= li[i - 1].layer))
					UNEXP("LAYERS entry %u: layer %u status %u", i,
					      li[i].layer, li[i].status);
		}
	} else if (op < 97) {	/* MOVER from a thread that is no mover */
		struct tt_ioc_mover m;
		int32_t st[4] = { 0 };

		memset(&m, 0, sizeof(m));
		/*
		 * never REGISTER: DONE and TAKE must then fail (EINVAL); the
		 * thread unregisters first, as junk read from a stale pointer
		 * may have registered it
		 */
		m.flags = TT_MOVER_UNREGISTER;
		fz_ioctl(fd, TT_IOC_MOVER, &m);
		m.flags = rnd_flags(r, TT_MOVER_FLAGS_ALL) & ~TT_MOVER_REGISTER;
		m.done_id = rnd_u64(r);
		m.nr_status = (uint32_t)rn(r, 5);
		m.status_ptr = (uintptr_t)st;
		ret = fz_ioctl(fd, TT_IOC_MOVER, &m);
		if (!ret && (m.flags & (TT_MOVER_DONE | TT_MOVER_TAKE)))
			UNEXP("MOVER %#x from a thread that is no mover succeeded",
			      m.flags);
	} else {		/* FLUSH */
		fz_ioctl(fd, TT_IOC_FLUSH, NULL);
	}
}

/*
 * The high-rate share: calls that cost the kernel little (STATS, GET_SCHED,
 * commands and pointers it must refuse, layer events, unknown unregisters),
 * still random and still checked.
 */
static void fz_cheap_one(struct rng *r, int fd)
{
	unsigned int op = (unsigned int)rn(r, 100);
	long ret;

	if (op < 35) {
		struct tt_ioc_stats st;

		st.abi_version = 0;
		ret = fz_ioctl(fd, TT_IOC_STATS, &st);
		if (!ret && (st.abi_version != TT_ABI_VERSION || st.size != sizeof(st)))
			UNEXP("STATS: abi %u size %u", st.abi_version, st.size);
	} else if (op < 50) {
		struct tt_ioc_sched s;

		ret = fz_ioctl(fd, TT_IOC_GET_SCHED, &s);
		if (!ret && (s.valid != TT_SCHED_SET_ALL || (s.flags & ~TT_SCHED_FLAGS_ALL)))
			UNEXP("GET_SCHED: valid %#x flags %#x", s.valid, s.flags);
	} else if (op < 65) {
		unsigned long cmd = rnd_bad_cmd(r);

		memset(big_buf_storage, 0, 256);
		ret = fz_ioctl(fd, cmd, big_buf_storage);
		if (ret != -ENOTTY && !exact_cmd(cmd))
			UNEXP("ioctl %#lx (not in the ABI) returned %ld", cmd, ret);
	} else if (op < 75) {
		static const unsigned long ptrcmds[] = {
			TT_IOC_REGISTER, TT_IOC_MIGRATE, TT_IOC_RESIDENCY,
			TT_IOC_STATS, TT_IOC_EVENT, TT_IOC_EVENTS,
			TT_IOC_SET_SCHED, TT_IOC_GET_SCHED, TT_IOC_LAYERS,
			TT_IOC_HINT, TT_IOC_MOVER,
		};
		static const uint64_t kp[] = {
			0, 1, 4096, 0xffff888000000000ULL, 0xffffffffff600000ULL,
			UINT64_MAX,
		};
		unsigned long cmd = ptrcmds[rn(r, sizeof(ptrcmds) / sizeof(ptrcmds[0]))];
		void *p = (void *)(uintptr_t)kp[rn(r, sizeof(kp) / sizeof(kp[0]))];

		ret = fz_ioctl(fd, cmd, p);
		if (!ret)
			UNEXP("%s with pointer %p succeeded", ioc_name(ioc_index(cmd)), p);
	} else if (op < 92) {
		struct tt_event e;

		memset(&e, 0, sizeof(e));
		e.type = pc(r, 50) ? TT_EV_LAYER_BEGIN : TT_EV_LAYER_END;
		e.flags = pc(r, 50) ? TT_FWD : TT_BWD;
		e.layer = 1 + (uint32_t)rn(r, 16);
		if (pc(r, 5))
			e.type = TT_EV_ITER_BEGIN, e.flags = 0, e.layer = 0;
		if (pc(r, 5))
			e.flags |= (uint16_t)(1U << rn(r, 16));
		fz_ioctl(fd, TT_IOC_EVENT, &e);
	} else {
		struct tt_ioc_range g = {
			.addr = (rnd(r) & 0x7fffffff000ULL), .len = FZ_PAGE,
		};

		ret = fz_ioctl(fd, TT_IOC_UNREGISTER, &g);
		if (!ret)
			UNEXP("UNREGISTER of %llx, never registered, succeeded",
			      (unsigned long long)g.addr);
	}
}

static void *rate_thread(void *arg)
{
	struct rng r = { .s = (uint64_t)(uintptr_t)arg };

	while (!proc_stop && !sh->stop) {
		int fd = shared_fd;

		for (int i = 0; i < 256; i++)
			fz_cheap_one(&r, fd);
	}
	return NULL;
}

static void *fuzz_thread(void *arg)
{
	struct rng r = { .s = (uint64_t)(uintptr_t)arg };
	unsigned int evstate = 0;
	int own = -1;

	while (!proc_stop && !sh->stop) {
		int fd = shared_fd;

		/* now and then a session of its own, opened and closed */
		if (pc(&r, 1)) {
			if (own >= 0) {
				close(own);
				own = -1;
			} else {
				own = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);
			}
		}
		if (own >= 0 && pc(&r, 50))
			fd = own;
		for (int i = 0; i < 64 && !proc_stop; i++)
			fz_ioctl_one(&r, fd, &evstate);
	}
	if (own >= 0)
		close(own);
	return NULL;
}

/* ---- the mover ----------------------------------------------------------------- */
static void mover_check_order(const struct tt_ioc_mover *m)
{
	if (!m->id)
		return;
	if (!m->huge_size || (m->huge_size & (m->huge_size - 1)) ||
	    (m->addr & (m->huge_size - 1)) || !m->len ||
	    (m->len & (m->huge_size - 1)) || m->nr_nodes < 1 ||
	    m->nr_nodes > 8 || m->order_flags) {
		UNEXP("mover order %llu: %llx+%llx huge %llu nodes %u flags %#x",
		      (unsigned long long)m->id, (unsigned long long)m->addr,
		      (unsigned long long)m->len, (unsigned long long)m->huge_size,
		      m->nr_nodes, m->order_flags);
		INC(mover_bad);
		return;
	}
	for (uint32_t i = 0; i < m->nr_nodes; i++)
		if (m->nodes[i] < 0 || m->nodes[i] >= topo.nr_node_ids) {
			UNEXP("mover order %llu: node %d", (unsigned long long)m->id,
			      m->nodes[i]);
			INC(mover_bad);
		}
}

static void *mover_thread(void *arg)
{
	struct rng r = { .s = (uint64_t)(uintptr_t)arg };
	struct tt_ioc_mover m;
	static __thread int32_t status[4096];
	static __thread void *pages[4096];
	static __thread int tnodes[4096];
	int fd = shared_fd;

	memset(&m, 0, sizeof(m));
	m.flags = TT_MOVER_REGISTER;
	fz_ioctl(fd, TT_IOC_MOVER, &m);
	while (!proc_stop && !sh->stop) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t n;

		fd = shared_fd;
		p.fd = fd;
		poll(&p, 1, 20);
		memset(&m, 0, sizeof(m));
		m.flags = TT_MOVER_TAKE | (pc(&r, 5) ? TT_MOVER_REGISTER : 0);
		if (fz_ioctl(fd, TT_IOC_MOVER, &m) < 0) {
			if (pc(&r, 20)) {
				memset(&m, 0, sizeof(m));
				m.flags = TT_MOVER_REGISTER;
				fz_ioctl(fd, TT_IOC_MOVER, &m);
			}
			continue;
		}
		if (!m.id)
			continue;
		INC(mover_orders);
		mover_check_order(&m);
		n = m.huge_size ? m.len / m.huge_size : 0;
		if (n > 4096)
			n = 4096;
		switch (rn(&r, 20)) {
		case 0 ... 9: {	/* honest */
			for (uint64_t i = 0; i < n; i++) {
				pages[i] = (void *)(uintptr_t)(m.addr + i * m.huge_size);
				tnodes[i] = m.nodes[0];
			}
			if (syscall(SYS_move_pages, 0, n, pages, tnodes, status,
				    FZ_MPOL_MF_MOVE) < 0)
				for (uint64_t i = 0; i < n; i++)
					status[i] = -errno;
			INC(mover_honest);
			break;
		}
		case 10 ... 13:	/* lie: statuses without moving anything */
			for (uint64_t i = 0; i < n; i++)
				status[i] = pc(&r, 50) ? m.nodes[0] :
					    pc(&r, 50) ? -(int32_t)rn(&r, 140) :
							 (int32_t)rnd_u32(&r);
			INC(mover_lies);
			break;
		case 14:	/* wrong count, wrong id, bad pointer */
			m.done_id = pc(&r, 50) ? m.id : rnd_u64(&r);
			m.flags = TT_MOVER_DONE;
			m.nr_status = (uint32_t)(pc(&r, 50) ? n + 1 : rnd_u32(&r));
			m.status_ptr = (uintptr_t)(pc(&r, 50) ? (void *)status : bad_ptr(&r));
			fz_ioctl(fd, TT_IOC_MOVER, &m);
			INC(mover_lies);
			continue;
		case 15 ... 16:	/* never complete */
			if (opt_avoid & FZ_AV_MOVER_STALL)
				break;
			INC(mover_stalls);
			continue;
		case 17:	/* a status page that never faults in */
			if ((opt_avoid & FZ_AV_MOVER_STALL) || !uffd_page ||
			    uffd_fd < 0)
				break;
			INC(mover_stalls);
			m.flags = TT_MOVER_DONE;
			m.done_id = m.id;
			m.nr_status = (uint32_t)n;
			m.status_ptr = (uintptr_t)uffd_page;
			fz_ioctl(fd, TT_IOC_MOVER, &m);
			continue;
		case 18:	/* die holding the order */
			INC(mover_deaths);
			mover_alive = 0;
			return NULL;
		default:	/* late: after a while */
			usleep((useconds_t)rn(&r, 300000));
			for (uint64_t i = 0; i < n; i++)
				status[i] = m.nodes[0];
			break;
		}
		m.done_id = m.id;
		m.flags = TT_MOVER_DONE | (pc(&r, 10) ? TT_MOVER_UNREGISTER : 0);
		m.nr_status = (uint32_t)n;
		m.status_ptr = (uintptr_t)status;
		fz_ioctl(fd, TT_IOC_MOVER, &m);
		if (m.flags & TT_MOVER_UNREGISTER) {
			memset(&m, 0, sizeof(m));
			m.flags = TT_MOVER_REGISTER;
			fz_ioctl(fd, TT_IOC_MOVER, &m);
		}
	}
	mover_alive = 0;
	return NULL;
}

/* a page whose first touch waits for a userfaultfd handler that never comes */
static void uffd_setup(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	void *p;

	/* without privilege (vm.unprivileged_userfaultfd=0): user faults only */
	if (fd < 0)
		fd = (int)syscall(SYS_userfaultfd,
				  O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);

	if (fd < 0)
		return;
	if (ioctl(fd, UFFDIO_API, &api)) {
		close(fd);
		return;
	}
	p = mmap(NULL, FZ_PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return;
	}
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (uintptr_t)p;
	reg.range.len = FZ_PAGE;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(fd, UFFDIO_REGISTER, &reg)) {
		munmap(p, FZ_PAGE);
		close(fd);
		return;
	}
	uffd_page = p;
	uffd_fd = fd;
}

/* ---- the canary ----------------------------------------------------------------- */
static void canary_check(uint64_t seed, const char *when)
{
	long long bad = tt_st_check((void *)(uintptr_t)canary_addr, canary_len, seed);

	INC(canary_checks);
	if (bad >= 0) {
		INC(canary_bad);
		fz_msg("worker %u%s: CANARY CORRUPTED after %s at offset %lld (addr %#llx): word %#llx",
		       worker_id, is_unpriv ? " (unpriv)" : "", when, bad,
		       (unsigned long long)(canary_addr + (uint64_t)bad),
		       (unsigned long long)*(uint64_t *)(uintptr_t)(canary_addr + (uint64_t)bad));
		/* count once, then refill and go on */
		tt_st_fill((void *)(uintptr_t)canary_addr, canary_len, seed);
	}
}

static int canary_migrate(int fd, uint64_t a, uint64_t l, int node)
{
	struct tt_ioc_migrate m;
	long ret;

	memset(&m, 0, sizeof(m));
	m.addr = a;
	m.len = l;
	m.node = node;
	ret = fz_ioctl(fd, TT_IOC_MIGRATE, &m);
	chk_migrate(&m, ret);
	INC(canary_moves);
	return (int)ret;
}

static void canary_event(int fd, uint16_t type, uint16_t flags, uint32_t layer,
			 uint64_t a, uint64_t l)
{
	struct tt_event e;

	memset(&e, 0, sizeof(e));
	e.type = type;
	e.flags = flags;
	e.layer = layer;
	e.addr = a;
	e.len = l;
	fz_ioctl(fd, TT_IOC_EVENT, &e);
}

static void *canary_thread(void *arg)
{
	struct rng r = { .s = (uint64_t)(uintptr_t)arg };
	uint64_t seed = rnd(&r);
	int fd = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);
	int fast = topo.fast >= 0 ? topo.fast : 0;
	int slow = topo.slow >= 0 ? topo.slow : fast;
	struct tt_ioc_sched s;
	uint64_t half = canary_len / 2;

	if (fd < 0) {
		UNEXP("canary: open %s: %s", TT_ST_DEV, strerror(errno));
		return NULL;
	}
	tt_st_fill((void *)(uintptr_t)canary_addr, canary_len, seed);
	memset(&s, 0, sizeof(s));
	s.valid = TT_SCHED_SET_PROFILE | TT_SCHED_SET_STAY;
	s.profile_iters = 1;
	s.stay_ns = 0;
	fz_ioctl(fd, TT_IOC_SET_SCHED, &s);
	while (!proc_stop && !sh->stop) {
		/*
		 * TT_IOC_MIGRATE to the slow node and back, half of the time
		 * on the shared session, whose mover (honest, lying, stalled
		 * or dead) gets the huge pages
		 */
		int mfd = pc(&r, 50) ? shared_fd : fd;

		canary_migrate(mfd, canary_addr, canary_len, slow);
		canary_check(seed, "MIGRATE to the slow node");
		canary_migrate(mfd, canary_addr + rn(&r, 8) * FZ_PAGE,
			       half, fast);
		canary_check(seed, "MIGRATE of a part back");
		canary_migrate(mfd, canary_addr, canary_len, fast);
		canary_check(seed, "MIGRATE back to the fast node");
		/* two iterations of a 2-layer model: the scheduler evicts and prefetches */
		for (int it = 0; it < 3 && !proc_stop && !sh->stop; it++) {
			canary_event(fd, TT_EV_ITER_BEGIN, 0, 0, 0, 0);
			for (uint32_t ly = 1; ly <= 2; ly++) {
				canary_event(fd, TT_EV_LAYER_BEGIN, TT_FWD, ly, 0, 0);
				canary_event(fd, TT_EV_TENSOR_SAVED, 0, ly,
					     canary_addr + (ly - 1) * half, half);
				canary_event(fd, TT_EV_LAYER_END, TT_FWD, ly, 0, 0);
				usleep(2000);
			}
			if (pc(&r, 20)) {
				struct tt_ioc_hint h = {
					.addr = canary_addr, .len = canary_len,
					.hint = pc(&r, 50) ? TT_HINT_WILL_USE : TT_HINT_ARCHIVE,
				};
				fz_ioctl(fd, TT_IOC_HINT, &h);
			}
			usleep(5000);
			canary_check(seed, "eviction (scheduler)");
			for (uint32_t ly = 2; ly >= 1; ly--) {
				canary_event(fd, TT_EV_LAYER_BEGIN, TT_BWD, ly, 0, 0);
				canary_check(seed, "prefetch (scheduler)");
				canary_event(fd, TT_EV_LAYER_END, TT_BWD, ly, 0, 0);
			}
		}
		if (pc(&r, 10)) {
			struct tt_ioc_hint h = {
				.addr = canary_addr, .len = canary_len,
				.hint = TT_HINT_RETIRE,
			};
			fz_ioctl(fd, TT_IOC_HINT, &h);
		}
		canary_check(seed, "an iteration");
		usleep(20000);
	}
	close(fd);
	canary_check(seed, "close of its session");
	return NULL;
}

/* ---- netlink ------------------------------------------------------------------------- */
struct nl;
typedef void (*nl_cb)(struct nl *n, const struct nlmsghdr *h, void *data);

/* a request of a batch, waiting for its answer */
struct nl_pend {
	uint32_t seq;
	uint8_t cmd;
	bool done;
	nl_cb cb;
};

#define NL_BATCH 16

struct nl {
	int sock;
	char bb[NL_BATCH * 8192];	/* requests sent in one sendto */
	unsigned int bl, np, want;
	struct nl_pend pend[NL_BATCH];
	uint16_t family;
	uint32_t grp[2];
	uint32_t seq;
	uint64_t sessions[32];
	unsigned int nsess;
	char keys[64][64];
	unsigned int nkeys;
};

static __thread char *nl_rx;	/* the receive buffer of the thread's socket */
#define NL_RX_SIZE (1 << 17)

#define NLA_ALIGNTO_ 4
#define NLA_AL(x) (((x) + 3U) & ~3U)

struct nlbuf {
	char b[8192];
	unsigned int len;
};

static void nb_init(struct nlbuf *m, uint16_t type, uint16_t flags, uint8_t cmd,
		    uint8_t version, uint32_t seq)
{
	struct nlmsghdr *h = (struct nlmsghdr *)m->b;
	struct genlmsghdr *g = (struct genlmsghdr *)(m->b + NLMSG_HDRLEN);

	memset(m->b, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	h->nlmsg_type = type;
	h->nlmsg_flags = flags;
	h->nlmsg_seq = seq;
	g->cmd = cmd;
	g->version = version;
	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
}

static unsigned int nb_put(struct nlbuf *m, uint16_t type, const void *data,
			   unsigned int len)
{
	struct nlattr *a = (struct nlattr *)(m->b + m->len);
	unsigned int at = m->len;

	if (m->len + NLA_HDRLEN + NLA_AL(len) > sizeof(m->b))
		return at;
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	if (len)
		memcpy(m->b + m->len + NLA_HDRLEN, data, len);
	memset(m->b + m->len + NLA_HDRLEN + len, 0, NLA_AL(len) - len);
	m->len += NLA_HDRLEN + NLA_AL(len);
	return at;
}

static void nb_end_nest(struct nlbuf *m, unsigned int at)
{
	((struct nlattr *)(m->b + at))->nla_len = (uint16_t)(m->len - at);
}

static void nb_str(struct nlbuf *m, uint16_t type, const char *s)
{
	nb_put(m, type, s, (unsigned int)strlen(s) + 1);
}

static int nl_send(struct nl *n, struct nlbuf *m)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	((struct nlmsghdr *)m->b)->nlmsg_len = m->len;
	return sendto(n->sock, m->b, m->len, 0, (struct sockaddr *)&sa,
		      sizeof(sa)) < 0 ? -errno : 0;
}

/* Receive until the ack, the error or the end of the dump of @seq: 0 or -errno. */
static int nl_recv(struct nl *n, uint32_t seq, nl_cb cb, void *data)
{
	for (;;) {
		ssize_t len = recv(n->sock, nl_rx, NL_RX_SIZE, 0);
		const struct nlmsghdr *h;

		if (len < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				INC(nl_timeouts);
				return -ETIMEDOUT;
			}
			return -errno;
		}
		for (h = (struct nlmsghdr *)nl_rx; NLMSG_OK(h, (size_t)len);
		     h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				return e->error;
			}
			if (h->nlmsg_type == NLMSG_DONE) {
				int e = 0;

				if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(int)))
					memcpy(&e, NLMSG_DATA(h), sizeof(e));
				return e;
			}
			INC(nl_replies);
			if (cb)
				cb(n, h, data);
		}
	}
}

/* walk the attributes of a genl message (or a nest) */
#define FOR_ATTR(a, start, len)                                                \
	for (a = (const struct nlattr *)(start);                               \
	     (len) >= (int)NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&           \
	     (int)a->nla_len <= (len);                                         \
	     (len) -= NLA_AL(a->nla_len),                                      \
	     a = (const struct nlattr *)((const char *)a + NLA_AL(a->nla_len)))

static void nl_result(struct nl *n, struct nl_pend *p, int ret)
{
	(void)n;
	p->done = true;
	INC(nl_err[ret < 0 ? (-ret < FZ_NR_ERRNO ? -ret : FZ_NR_ERRNO - 1) : 0]);
	if (!ret && is_unpriv &&
	    (p->cmd == TT_CMD_SET_CONFIG || p->cmd == TT_CMD_SET_TIERS))
		UNEXP("%s succeeded for uid %u", nl_name(p->cmd), my_euid);
	if (!ret && (p->cmd == TT_CMD_EVENT || p->cmd == TT_CMD_UNSPEC ||
		     p->cmd > TT_CMD_MAX))
		UNEXP("netlink command %s succeeded", nl_name(p->cmd));
}

static int nl_open(struct nl *n);

/* send the batch and wait for the answer to each of its requests */
static void nl_flush(struct nl *n)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	unsigned int left = n->np;

	if (!n->np)
		return;
	if (sendto(n->sock, n->bb, n->bl, 0, (struct sockaddr *)&sa,
		   sizeof(sa)) < 0)
		left = 0;
	while (left) {
		ssize_t len = recv(n->sock, nl_rx, NL_RX_SIZE, 0);
		const struct nlmsghdr *h;

		if (len < 0) {
			if (errno == EINTR)
				continue;
			INC(nl_timeouts);
			close(n->sock);	/* start afresh */
			nl_open(n);
			break;
		}
		for (h = (struct nlmsghdr *)nl_rx; NLMSG_OK(h, (size_t)len);
		     h = NLMSG_NEXT(h, len)) {
			struct nl_pend *p = NULL;

			for (unsigned int i = 0; i < n->np; i++)
				if (n->pend[i].seq == h->nlmsg_seq && !n->pend[i].done)
					p = &n->pend[i];
			if (!p)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				nl_result(n, p, e->error);
				left--;
			} else if (h->nlmsg_type == NLMSG_DONE) {
				int e = 0;

				if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(int)))
					memcpy(&e, NLMSG_DATA(h), sizeof(e));
				nl_result(n, p, e);
				left--;
			} else {
				INC(nl_replies);
				if (p->cb)
					p->cb(n, h, NULL);
			}
		}
	}
	n->np = n->bl = n->want = 0;
}

static const void *genl_attrs(const struct nlmsghdr *h, int *len)
{
	*len = (int)h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
	return (const char *)h + NLMSG_HDRLEN + GENL_HDRLEN;
}

static void ctrl_cb(struct nl *n, const struct nlmsghdr *h, void *data)
{
	const struct nlattr *a, *g, *x;
	int len;
	const void *p = genl_attrs(h, &len);

	(void)data;
	FOR_ATTR(a, p, len) {
		if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID)
			memcpy(&n->family, (const char *)a + NLA_HDRLEN, 2);
		if ((a->nla_type & NLA_TYPE_MASK) != CTRL_ATTR_MCAST_GROUPS)
			continue;
		int l2 = a->nla_len - NLA_HDRLEN;

		FOR_ATTR(g, (const char *)a + NLA_HDRLEN, l2) {
			int l3 = g->nla_len - NLA_HDRLEN;
			const char *name = NULL;
			uint32_t id = 0;

			FOR_ATTR(x, (const char *)g + NLA_HDRLEN, l3) {
				if (x->nla_type == CTRL_ATTR_MCAST_GRP_NAME)
					name = (const char *)x + NLA_HDRLEN;
				if (x->nla_type == CTRL_ATTR_MCAST_GRP_ID)
					memcpy(&id, (const char *)x + NLA_HDRLEN, 4);
			}
			if (name && !strcmp(name, TT_GENL_MCGRP_EVENTS))
				n->grp[0] = id;
			if (name && !strcmp(name, TT_GENL_MCGRP_TRACE))
				n->grp[1] = id;
		}
	}
}

static int nl_resolve(struct nl *n)
{
	struct nlbuf m;

	nb_init(&m, GENL_ID_CTRL, NLM_F_REQUEST | NLM_F_ACK, CTRL_CMD_GETFAMILY,
		1, ++n->seq);
	nb_str(&m, CTRL_ATTR_FAMILY_NAME, TT_GENL_NAME);
	INC(nl[FZ_NL_CTRL]);
	if (nl_send(n, &m))
		return -errno;
	return nl_recv(n, n->seq, ctrl_cb, NULL);
}

static int nl_open(struct nl *n)
{
	struct timeval tv = { .tv_sec = 10 };
	int one = 1;

	n->sock = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (n->sock < 0)
		return -errno;
	setsockopt(n->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(n->sock, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	if (nl_resolve(n) || !n->family) {
		close(n->sock);
		n->sock = -1;
		return -ENOENT;
	}
	return 0;
}

/* reply of GET_SESSIONS: learn the ids; an unprivileged caller sees its own only */
static void sessions_cb(struct nl *n, const struct nlmsghdr *h, void *data)
{
	const struct nlattr *a;
	int len;
	const void *p = genl_attrs(h, &len);

	(void)data;
	FOR_ATTR(a, p, len) {
		const char *v = (const char *)a + NLA_HDRLEN;

		if (a->nla_type == TT_A_SESSION && a->nla_len >= NLA_HDRLEN + 8) {
			uint64_t id;

			memcpy(&id, v, 8);
			n->sessions[n->nsess++ % 32] = id;
		}
		if (a->nla_type == TT_A_UID && a->nla_len >= NLA_HDRLEN + 4) {
			uint32_t uid;

			memcpy(&uid, v, 4);
			if (is_unpriv && uid != my_euid)
				UNEXP("GET_SESSIONS showed uid %u's session to uid %u",
				      uid, my_euid);
		}
	}
}

static void config_cb(struct nl *n, const struct nlmsghdr *h, void *data)
{
	const struct nlattr *a, *x;
	int len;
	const void *p = genl_attrs(h, &len);

	(void)data;
	FOR_ATTR(a, p, len) {
		if (a->nla_type != TT_A_CONFIG && a->nla_type != (TT_A_CONFIG | NLA_F_NESTED))
			continue;
		int l2 = a->nla_len - NLA_HDRLEN;

		FOR_ATTR(x, (const char *)a + NLA_HDRLEN, l2)
			if (x->nla_type == TT_CFG_A_KEY && n->nkeys < 64)
				snprintf(n->keys[n->nkeys++], 64, "%s",
					 (const char *)x + NLA_HDRLEN);
	}
}

static void status_cb(struct nl *n, const struct nlmsghdr *h, void *data)
{
	const struct nlattr *a;
	int len;
	const void *p = genl_attrs(h, &len);

	(void)n;
	(void)data;
	FOR_ATTR(a, p, len)
		if (a->nla_type == TT_A_ABI_VERSION && a->nla_len >= NLA_HDRLEN + 4) {
			uint32_t v;

			memcpy(&v, (const char *)a + NLA_HDRLEN, 4);
			if (v != TT_ABI_VERSION)
				UNEXP("GET_STATUS: abi version %u", v);
		}
}

/* keys whose values could make the run crawl get mild values only */
static uint64_t cfg_value(struct rng *r, const char *key)
{
	if (!strcmp(key, "budget_mib") && (opt_avoid & FZ_AV_BUDGET))
		return pc(r, 50) ? 0 : UINT64_MAX;
	if (!strcmp(key, "dynamic") && (opt_avoid & FZ_AV_DYNAMIC))
		return pc(r, 50) ? 0 : UINT64_MAX;
	if (pc(r, 40))
		return rnd_u64(r);	/* mostly out of range: ERANGE */
	if (!strcmp(key, "workers") || !strcmp(key, "evict_workers") ||
	    !strcmp(key, "prefetch_workers"))
		return 1 + rn(r, 4);
	if (!strcmp(key, "batch_pages"))
		return 1 + rn(r, 1024);
	if (!strcmp(key, "max_ranges") || !strcmp(key, "max_layers"))
		return 16 + rn(r, 70000);
	if (!strcmp(key, "stay_time_us"))
		return rn(r, 5000);
	if (!strcmp(key, "er_seed_mbps") || !strcmp(key, "pr_seed_mbps"))
		return 1 + rn(r, 1048576);
	if (!strcmp(key, "bw_cap_mbps"))
		return pc(r, 50) ? 0 : 256 + rn(r, 4096);
	if (!strcmp(key, "mover_timeout_ms"))
		return rn(r, 2000);
	if (!strcmp(key, "budget_mib"))
		return (opt_avoid & FZ_AV_BUDGET) ? 0 : rn(r, 256);
	if (!strcmp(key, "event_ring"))
		return rn(r, 8192);
	if (!strcmp(key, "min_migrate_kib"))
		return rn(r, 4096);
	if (!strcmp(key, "profile_iters"))
		return 1 + rn(r, 3);
	if (!strcmp(key, "dynamic") && (opt_avoid & FZ_AV_DYNAMIC))
		return 0;
	return rn(r, 3);
}

static const char *rnd_nodelist(struct rng *r, char *buf, size_t size)
{
	static const char *const lists[] = {
		"", "0", "1", "2", "0-1", "1-2", "0,1", "1,2", "3", "0-3",
		"abc", "-1", "99999", "0-", "1-0", ",", "0,,1", "4294967296",
	};

	if (pc(r, 85))
		return lists[rn(r, sizeof(lists) / sizeof(lists[0]))];
	memset(buf, '0' + (int)rn(r, 10), size - 1);
	buf[rn(r, size)] = 0;
	return buf;
}

/* one netlink request of a random command with random attributes */
static void nl_one(struct nl *n, struct rng *r, bool allow_set)
{
	struct nlbuf m;
	uint8_t cmd = (uint8_t)rn(r, __TT_CMD_MAX + 1);
	bool dump = false;
	nl_cb cb = NULL;
	char sbuf[300];
	uint32_t u32;
	uint64_t u64;

	/* cheap commands more often: they carry the rate */
	if (pc(r, 50))
		cmd = pc(r, 40) ? TT_CMD_GET_STATUS :
		      pc(r, 50) ? TT_CMD_GET_CONFIG : TT_CMD_GET_TIERS;
	if (!allow_set && (cmd == TT_CMD_SET_CONFIG || cmd == TT_CMD_SET_TIERS) &&
	    pc(r, 90))
		cmd = TT_CMD_GET_TIERS;
	if (cmd == TT_CMD_GET_SESSIONS || cmd == TT_CMD_GET_LAYERS ||
	    cmd == TT_CMD_GET_EVENTS)
		dump = true;
	if (pc(r, 3))
		dump = !dump;
	nb_init(&m, n->family, NLM_F_REQUEST | (dump ? NLM_F_DUMP : NLM_F_ACK),
		cmd, pc(r, 95) ? TT_GENL_VERSION : (uint8_t)rnd(r), ++n->seq);

	switch (cmd) {
	case TT_CMD_GET_STATUS:
		cb = status_cb;
		break;
	case TT_CMD_SET_TIERS:
		if (pc(r, 70))
			nb_str(&m, TT_A_FAST_NODES, rnd_nodelist(r, sbuf, sizeof(sbuf)));
		if (pc(r, 70))
			nb_str(&m, TT_A_SLOW_NODES, rnd_nodelist(r, sbuf, sizeof(sbuf)));
		if (pc(r, 5))	/* a string without its NUL */
			nb_put(&m, TT_A_FAST_NODES, "0", 1);
		break;
	case TT_CMD_GET_SESSIONS:
		cb = sessions_cb;
		if (pc(r, 30)) {
			u32 = pc(r, 50) ? (uint32_t)getpid() : rnd_u32(r);
			nb_put(&m, TT_A_PID, &u32, 4);
		}
		break;
	case TT_CMD_GET_LAYERS:
	case TT_CMD_GET_EVENTS:
		if (pc(r, 85)) {
			u64 = n->nsess && pc(r, 80) ? n->sessions[rn(r, n->nsess < 32 ? n->nsess : 32)] :
			      rnd_u64(r);
			nb_put(&m, TT_A_SESSION, &u64, 8);
		}
		if (pc(r, 30)) {
			u32 = pc(r, 50) ? (uint32_t)getpid() : rnd_u32(r);
			nb_put(&m, TT_A_PID, &u32, 4);
		}
		if (cmd == TT_CMD_GET_EVENTS && pc(r, 50)) {
			u64 = rnd_u64(r);
			if ((opt_avoid & FZ_AV_SINCE_WRAP) && u64 > UINT64_MAX - (1ULL << 32))
				u64 = 0;
			nb_put(&m, TT_A_SINCE, &u64, 8);
		}
		break;
	case TT_CMD_GET_CONFIG:
		cb = config_cb;
		if (pc(r, 70) && n->nkeys) {
			unsigned int at = nb_put(&m, TT_A_CONFIG | NLA_F_NESTED, NULL, 0);

			nb_str(&m, TT_CFG_A_KEY, pc(r, 90) ? n->keys[rn(r, n->nkeys)] :
					 rnd_nodelist(r, sbuf, sizeof(sbuf)));
			nb_end_nest(&m, at);
		}
		break;
	case TT_CMD_SET_CONFIG: {
		unsigned int nn = (unsigned int)rn(r, 4);

		for (unsigned int i = 0; i < nn && n->nkeys; i++) {
			unsigned int at = nb_put(&m, TT_A_CONFIG | NLA_F_NESTED, NULL, 0);
			const char *k = n->keys[rn(r, n->nkeys)];

			if (pc(r, 95))
				nb_str(&m, TT_CFG_A_KEY, pc(r, 95) ? k : "no_such_key");
			u64 = cfg_value(r, k);
			if (pc(r, 95))
				nb_put(&m, TT_CFG_A_VALUE, &u64, pc(r, 95) ? 8 : 4);
			nb_end_nest(&m, at);
		}
		break;
	}
	default:
		break;
	}
	/* stray attributes of every type, of right and wrong sizes */
	if (pc(r, 10)) {
		uint8_t junk[16];
		unsigned int k = (unsigned int)rn(r, 3) + 1;

		for (unsigned int i = 0; i < k; i++) {
			for (unsigned int j = 0; j < sizeof(junk); j++)
				junk[j] = (uint8_t)rnd(r);
			nb_put(&m, (uint16_t)(pc(r, 80) ? rn(r, __TT_A_MAX + 2) : rnd(r)),
			       junk, (unsigned int)rn(r, 17));
		}
	}
	INC(nl[cmd]);
	if (is_unpriv)
		INC(unpriv_nl);
	if (pc(r, 2)) {
		nl_flush(n);	/* malformed: truncated header, attribute past the end */
		struct nlmsghdr *h = (struct nlmsghdr *)m.b;

		INC(nl[FZ_NL_BOGUS]);
		if (pc(r, 50) && m.len > NLMSG_HDRLEN + GENL_HDRLEN + 4) {
			((struct nlattr *)(m.b + NLMSG_HDRLEN + GENL_HDRLEN))->nla_len = 0xfff0;
			nl_send(n, &m);
		} else {
			m.len = (unsigned int)rn(r, NLMSG_HDRLEN + GENL_HDRLEN);
			if (m.len < sizeof(*h))
				m.len = sizeof(*h);
			nl_send(n, &m);
		}
		return;	/* whatever comes back is skipped by its seq */
	}
	/* into the batch: several requests per sendto, answers matched by seq */
	((struct nlmsghdr *)m.b)->nlmsg_len = m.len;
	memcpy(n->bb + n->bl, m.b, m.len);
	n->bl += NLMSG_ALIGN(m.len);
	n->pend[n->np].seq = n->seq;
	n->pend[n->np].cmd = cmd;
	n->pend[n->np].cb = cb;
	n->pend[n->np].done = false;
	n->np++;
	if (!n->want)
		n->want = 1 + (unsigned int)rn(r, NL_BATCH);
	if (n->np >= n->want)
		nl_flush(n);
}

static void *netlink_thread(void *arg)
{
	struct rng r = { .s = (uint64_t)(uintptr_t)arg };
	struct nl *n = calloc(1, sizeof(*n));

	nl_rx = malloc(NL_RX_SIZE);
	if (!n || !nl_rx)
		return NULL;

	if (nl_open(n)) {
		UNEXP("cannot resolve the generic netlink family %s", TT_GENL_NAME);
		free(n);
		free(nl_rx);
		return NULL;
	}
	/* learn the config keys from the module (none hard-coded here) */
	{
		struct nlbuf m;

		nb_init(&m, n->family, NLM_F_REQUEST | NLM_F_ACK, TT_CMD_GET_CONFIG,
			TT_GENL_VERSION, ++n->seq);
		INC(nl[TT_CMD_GET_CONFIG]);
		if (!nl_send(n, &m))
			nl_recv(n, n->seq, config_cb, NULL);
	}
	/* join the multicast groups: root may, others must not */
	for (int g = 0; g < 2; g++) {
		int ret;

		if (!n->grp[g])
			continue;
		ret = setsockopt(n->sock, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
				 &n->grp[g], sizeof(n->grp[g]));
		if (!ret && is_unpriv)
			UNEXP("joined multicast group %u as uid %u", n->grp[g], my_euid);
		if (!ret)	/* do not read them: let the socket overflow */
			setsockopt(n->sock, SOL_NETLINK, NETLINK_DROP_MEMBERSHIP,
				   &n->grp[g], sizeof(n->grp[g]));
	}
	while (!proc_stop && !sh->stop && n->sock >= 0) {
		if (pc(&r, 1)) {
			nl_flush(n);
			close(n->sock);
			if (nl_open(n))
				break;
		}
		nl_one(n, &r, !is_unpriv);
	}
	if (n->sock >= 0)
		nl_flush(n);
	if (n->sock >= 0)
		close(n->sock);
	free(n);
	free(nl_rx);
	return NULL;
}

/* ---- chaos: fork, close and reopen, new movers, uffd release -------------------- */
static void child_of_fork(struct rng *r, int fd)
{
	static const unsigned long cmds[] = {
		TT_IOC_STATS, TT_IOC_GET_SCHED, TT_IOC_FLUSH, TT_IOC_EVENT,
		TT_IOC_MIGRATE, TT_IOC_REGISTER, TT_IOC_MOVER, TT_IOC_HINT,
	};
	uint8_t buf[sizeof(struct tt_ioc_stats)];
	int own;

	prctl(PR_SET_PDEATHSIG, SIGKILL);

	/* the inherited session is the parent's: every call must fail */
	for (int i = 0; i < 8; i++) {
		unsigned long c = cmds[rn(r, sizeof(cmds) / sizeof(cmds[0]))];
		long ret;

		memset(buf, 0, sizeof(buf));
		if (c == TT_IOC_EVENT)
			((struct tt_event *)buf)->type = TT_EV_ITER_BEGIN;
		if (c == TT_IOC_MOVER)
			((struct tt_ioc_mover *)buf)->flags = TT_MOVER_REGISTER;
		ret = fz_ioctl(fd, c, buf);
		if (ret != -EPERM)
			UNEXP("%s on an inherited session returned %ld, not EPERM",
			      ioc_name(ioc_index(c)), ret);
	}
	/* a session of its own, left with work queued */
	own = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);
	if (own >= 0) {
		struct tt_ioc_migrate m;

		memset(&m, 0, sizeof(m));
		m.addr = canary_addr;
		m.len = canary_len;
		m.node = rnd_node(r);
		m.flags = TT_MIGRATE_ASYNC;
		fz_ioctl(own, TT_IOC_MIGRATE, &m);
		if (pc(r, 50))
			close(own);
	}
	if (pc(r, 30))
		pause();	/* the parent SIGKILLs it */
	_exit(0);
}

static void *chaos_thread(void *arg)
{
	struct rng r = { .s = (uint64_t)(uintptr_t)arg };
	pid_t kids[8] = { 0 };

	while (!proc_stop && !sh->stop) {
		usleep((useconds_t)(1000 + rn(&r, 20000)));
		switch (rn(&r, 10)) {
		case 0: {	/* fork */
			unsigned int k = (unsigned int)rn(&r, 8);
			pid_t p;

			if (kids[k]) {
				kill(kids[k], SIGKILL);
				waitpid(kids[k], NULL, 0);
				kids[k] = 0;
			}
			p = fork();
			if (!p) {
				struct rng cr = { .s = rnd(&r) ^ (uint64_t)getpid() };

				child_of_fork(&cr, shared_fd);
			}
			if (p > 0) {
				kids[k] = p;
				INC(forks);
			}
			break;
		}
		case 1: {	/* close the shared session under the others: a new one */
			int nfd = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);

			if (nfd >= 0) {
				/*
				 * dup2 replaces it atomically: the number
				 * always names a session (checks rely on it)
				 * while the old one closes under the calls
				 * in flight on it
				 */
				dup2(nfd, shared_fd);
				close(nfd);
				INC(reopens);
			}
			break;
		}
		case 2:		/* a new mover if the last one died */
			if (!mover_alive) {
				pthread_t t;

				mover_alive = 1;
				if (pthread_create(&t, NULL, mover_thread,
						   (void *)(uintptr_t)rnd(&r)))
					mover_alive = 0;
				else
					pthread_detach(t);
			}
			break;
		case 3:		/* let the stalled status page fail now and then */
			if (uffd_fd >= 0 && pc(&r, 10)) {
				int fd = uffd_fd;

				uffd_fd = -1;
				close(fd);
				uffd_page = NULL;
				uffd_setup();
			}
			break;
		default:	/* reap */
			for (int k = 0; k < 8; k++)
				if (kids[k] && waitpid(kids[k], NULL, WNOHANG) == kids[k])
					kids[k] = 0;
			break;
		}
	}
	for (int k = 0; k < 8; k++)
		if (kids[k]) {
			kill(kids[k], SIGKILL);
			waitpid(kids[k], NULL, 0);
		}
	return NULL;
}

static void *mem_thread(void *arg)
{
	struct rng r = { .s = (uint64_t)(uintptr_t)arg };

	while (!proc_stop && !sh->stop) {
		pool_mutate(&r);
		usleep((useconds_t)rn(&r, 3000));
	}
	return NULL;
}

/* ---- a worker process ---------------------------------------------------------------- */
static gid_t dev_gid;

static void become_unpriv(void)
{
	if (setgroups(1, &dev_gid) || setgid(FZ_NOBODY) || setuid(FZ_NOBODY)) {
		fprintf(stderr, "tt_fuzz: cannot become uid %d with group %u: %s\n",
			FZ_NOBODY, (unsigned int)dev_gid, strerror(errno));
		_exit(3);
	}
	prctl(PR_SET_DUMPABLE, 1);
}

static void worker(unsigned int id, bool unpriv, uint64_t seed, unsigned int life_ms)
{
	struct rng r = { .s = seed };
	pthread_t t[32];
	unsigned int nt = 0;
	int ret;
	void *cb;
	uint64_t deadline;

	worker_id = id;
	is_unpriv = unpriv;
	if (unpriv)
		become_unpriv();
	my_euid = geteuid();
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	shared_fd = open(TT_ST_DEV, O_RDWR | O_CLOEXEC);
	if (shared_fd < 0) {
		UNEXP("open %s: %s", TT_ST_DEV, strerror(errno));
		_exit(2);
	}
	memfd_for_private = (int)syscall(SYS_memfd_create, "tt_fuzz", 0);
	if (memfd_for_private >= 0 && ftruncate(memfd_for_private, 16 << 20))
		memfd_for_private = -1;
	/* the canary: 4 MiB of huge pages (mover orders) and 1 MiB of base pages */
	canary_len = 5ULL << 20;
	cb = mmap(NULL, canary_len + FZ_HUGE, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (cb == MAP_FAILED) {
		UNEXP("mmap of the canary: %s", strerror(errno));
		_exit(2);
	}
	canary_addr = ((uint64_t)(uintptr_t)cb + FZ_HUGE - 1) & ~(FZ_HUGE - 1);
	madvise((void *)(uintptr_t)canary_addr, 4ULL << 20, MADV_HUGEPAGE);
	madvise((void *)(uintptr_t)(canary_addr + (4ULL << 20)), 1ULL << 20,
		MADV_NOHUGEPAGE);
	for (int i = 0; i < FZ_SLOTS; i++)
		slots[i][0].addr = pool_map(&r, &slots[i][0].len);
	if (!(opt_avoid & FZ_AV_MOVER_STALL))
		uffd_setup();
	ret = hole_setup();
	if (ret) {
		UNEXP("the refused-pointer reservation: %s", strerror(-ret));
		_exit(2);
	}

	mover_alive = 1;
	pthread_create(&t[nt++], NULL, canary_thread, (void *)(uintptr_t)rnd(&r));
	pthread_create(&t[nt++], NULL, mover_thread, (void *)(uintptr_t)rnd(&r));
	for (unsigned int i = 0; i < opt_nl_threads && nt < 32; i++)
		pthread_create(&t[nt++], NULL, netlink_thread, (void *)(uintptr_t)rnd(&r));
	pthread_create(&t[nt++], NULL, mem_thread, (void *)(uintptr_t)rnd(&r));
	pthread_create(&t[nt++], NULL, chaos_thread, (void *)(uintptr_t)rnd(&r));
	for (unsigned int i = 0; i < opt_threads && nt < 32; i++)
		pthread_create(&t[nt++], NULL, fuzz_thread, (void *)(uintptr_t)rnd(&r));
	for (unsigned int i = 0; i < opt_rate_threads && nt < 32; i++)
		pthread_create(&t[nt++], NULL, rate_thread, (void *)(uintptr_t)rnd(&r));
	pthread_detach(t[1]);	/* the mover may die and be replaced */

	deadline = tt_st_now_ns() + (uint64_t)life_ms * 1000000ULL;
	while (!sh->stop && tt_st_now_ns() < deadline)
		usleep(20000);
	/* exit with everything in flight, or stop the threads first */
	if (pc(&r, 30)) {
		INC(exits);
		exit(0);
	}
	proc_stop = 1;
	if (uffd_fd >= 0)
		close(uffd_fd);	/* a mover stuck on it gets EFAULT */
	uffd_fd = -1;
	for (unsigned int i = 0; i < nt; i++)
		if (i != 1)
			pthread_join(t[i], NULL);
	INC(exits);
	_exit(0);
}

/* ---- the supervisor ------------------------------------------------------------------ */
struct wslot {
	pid_t pid;
	bool unpriv;
	uint64_t started;
};

static uint64_t cfg_saved[64];
static char cfg_keys[64][64];
static unsigned int cfg_n;
static char tiers_fast[256], tiers_slow[256];

static void saved_cfg_cb(struct nl *n, const struct nlmsghdr *h, void *data)
{
	const struct nlattr *a, *x;
	int len;
	const void *p = genl_attrs(h, &len);

	(void)n;
	(void)data;
	FOR_ATTR(a, p, len) {
		if ((a->nla_type & NLA_TYPE_MASK) == TT_A_FAST_NODES)
			snprintf(tiers_fast, sizeof(tiers_fast), "%s", (const char *)a + NLA_HDRLEN);
		if ((a->nla_type & NLA_TYPE_MASK) == TT_A_SLOW_NODES)
			snprintf(tiers_slow, sizeof(tiers_slow), "%s", (const char *)a + NLA_HDRLEN);
		if ((a->nla_type & NLA_TYPE_MASK) != TT_A_CONFIG || cfg_n >= 64)
			continue;
		int l2 = a->nla_len - NLA_HDRLEN;
		const char *key = NULL;
		uint64_t v = 0;
		bool hv = false;

		FOR_ATTR(x, (const char *)a + NLA_HDRLEN, l2) {
			if (x->nla_type == TT_CFG_A_KEY)
				key = (const char *)x + NLA_HDRLEN;
			if (x->nla_type == TT_CFG_A_VALUE) {
				memcpy(&v, (const char *)x + NLA_HDRLEN, 8);
				hv = true;
			}
		}
		if (key && hv) {
			snprintf(cfg_keys[cfg_n], 64, "%s", key);
			cfg_saved[cfg_n++] = v;
		}
	}
}

/* save (restore = false) or restore the module settings and node roles */
static int settings(bool restore)
{
	static struct nl n;
	static char rx[NL_RX_SIZE];
	struct nlbuf m;
	int ret, bad = 0;

	nl_rx = rx;
	memset(&n, 0, sizeof(n));
	if (nl_open(&n))
		return -ENOENT;
	if (!restore) {
		nb_init(&m, n.family, NLM_F_REQUEST | NLM_F_ACK, TT_CMD_GET_CONFIG,
			TT_GENL_VERSION, ++n.seq);
		INC(nl[TT_CMD_GET_CONFIG]);
		nl_send(&n, &m);
		ret = nl_recv(&n, n.seq, saved_cfg_cb, NULL);
		nb_init(&m, n.family, NLM_F_REQUEST | NLM_F_ACK, TT_CMD_GET_TIERS,
			TT_GENL_VERSION, ++n.seq);
		INC(nl[TT_CMD_GET_TIERS]);
		nl_send(&n, &m);
		ret = ret ? ret : nl_recv(&n, n.seq, saved_cfg_cb, NULL);
		close(n.sock);
		return ret;
	}
	for (unsigned int i = 0; i < cfg_n; i++) {
		unsigned int at;

		nb_init(&m, n.family, NLM_F_REQUEST | NLM_F_ACK, TT_CMD_SET_CONFIG,
			TT_GENL_VERSION, ++n.seq);
		at = nb_put(&m, TT_A_CONFIG | NLA_F_NESTED, NULL, 0);
		nb_str(&m, TT_CFG_A_KEY, cfg_keys[i]);
		nb_put(&m, TT_CFG_A_VALUE, &cfg_saved[i], 8);
		nb_end_nest(&m, at);
		INC(nl[TT_CMD_SET_CONFIG]);
		nl_send(&n, &m);
		ret = nl_recv(&n, n.seq, NULL, NULL);
		if (ret) {
			fprintf(stderr, "# restoring %s=%" PRIu64 ": %s\n", cfg_keys[i],
				cfg_saved[i], strerror(-ret));
			bad++;
		}
	}
	nb_init(&m, n.family, NLM_F_REQUEST | NLM_F_ACK, TT_CMD_SET_TIERS,
		TT_GENL_VERSION, ++n.seq);
	nb_str(&m, TT_A_FAST_NODES, tiers_fast);
	nb_str(&m, TT_A_SLOW_NODES, tiers_slow);
	INC(nl[TT_CMD_SET_TIERS]);
	nl_send(&n, &m);
	ret = nl_recv(&n, n.seq, NULL, NULL);
	if (ret) {
		fprintf(stderr, "# restoring the node roles '%s' / '%s': %s\n",
			tiers_fast, tiers_slow, strerror(-ret));
		bad++;
	}
	close(n.sock);
	return bad ? -EIO : 0;
}

static const char *proc_state(pid_t p, char *buf, size_t size)
{
	char path[64], st[512];
	int n;

	snprintf(path, sizeof(path), "/proc/%d/stat", p);
	n = tt_st_read_file(path, st, sizeof(st));
	buf[0] = 0;
	if (n > 0) {
		char *c = strrchr(st, ')');

		snprintf(buf, size, "state %c", c && c[1] ? c[2] : '?');
	}
	snprintf(path, sizeof(path), "/proc/%d/wchan", p);
	n = tt_st_read_file(path, st, sizeof(st));
	if (n > 0)
		snprintf(buf + strlen(buf), size - strlen(buf), ", wchan %.200s", st);
	return buf;
}

/* SIGKILL every child (and describe them into @buf when given) */
static void kill_children(char *buf, size_t size)
{
	char path[64], st[512];
	struct dirent *d;
	DIR *dir = opendir("/proc");

	if (buf && size)
		buf[0] = 0;
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		pid_t p = (pid_t)atoi(d->d_name);
		char *c;
		int ppid = 0;

		if (p <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", p);
		if (tt_st_read_file(path, st, sizeof(st)) <= 0)
			continue;
		c = strrchr(st, ')');
		if (!c || sscanf(c + 2, "%*c %d", &ppid) != 1 || ppid != getpid())
			continue;
		kill(p, SIGKILL);
		if (buf && strlen(buf) + 80 < size) {
			char b[256];

			snprintf(buf + strlen(buf), size - strlen(buf), "[pid %d %s] ",
				 p, proc_state(p, b, sizeof(b)));
		}
	}
	closedir(dir);
}

static pid_t spawn(unsigned int id, bool unpriv, uint64_t seed, unsigned int life_ms)
{
	pid_t p = fork();

	if (!p)
		worker(id, unpriv, seed, life_ms);
	if (p > 0)
		INC(spawns);
	return p;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: tt_fuzz [--seed N] [--seconds N] [--procs N] [--threads N]\n"
"               [--rate-threads N] [--nl-threads N]\n"
"               [--avoid CLASS[,CLASS...]] [--no-unpriv] [--verbose] [--help]\n"
"\n"
"ABI-aware fuzzer of tiertrain.ko: every ioctl of /dev/tiertrain and every\n"
"command of the generic netlink family \"tiertrain\" with structured random\n"
"input, from several threads and processes (the last one unprivileged:\n"
"uid %d with the device's group), racing munmap, mremap, mprotect, fork,\n"
"exit, close, SIGKILL and mover death, while a canary buffer moved by valid\n"
"calls is checked. Run it as root in the guest: `make fuzz SECONDS=N\n"
"[KERNEL=6.1|6.12|debug]` (scripts/vmrun fails the run on any kernel report).\n"
"\n"
"  --seed N      seed of every random choice (default: from the clock; printed)\n"
"  --seconds N   how long to run (default 30)\n"
"  --procs N     worker processes at a time, 2..%d (default 3); the last one\n"
"                unprivileged unless --no-unpriv\n"
"  --threads N   ioctl fuzz threads per worker, 1..16 (default 2), besides\n"
"                one canary, mover, memory and chaos thread each\n"
"  --rate-threads N  threads per worker issuing only cheap calls (STATS,\n"
"                GET_SCHED, refused commands and pointers, layer events),\n"
"                0..16 (default 2): they carry the call rate\n"
"  --nl-threads N  netlink threads per worker, 0..8 (default 2)\n"
"  --avoid LIST  leave input classes out (to get past a known bug):\n",
		FZ_NOBODY, FZ_MAXPROCS);
	for (size_t i = 0; i < sizeof(fz_avoid_names) / sizeof(fz_avoid_names[0]); i++)
		fprintf(f, "                  %-13s %s\n", fz_avoid_names[i].name,
			fz_avoid_names[i].what);
	fprintf(f,
"  --no-unpriv   every worker runs as root\n"
"  --verbose     print progress every 10 s\n"
"\n"
"Output: TAP and a \"# Totals:\" line (canary, unexpected results, worker exit,\n"
"ioctls and netlink messages issued), then per-command counts, errors by\n"
"errno and rates. Exit 0 when every check passed, 1 when one failed, 4\n"
"(skip) without /dev/tiertrain, 2 on a usage error.\n");
}

static int parse_avoid(const char *s)
{
	char buf[256], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < sizeof(fz_avoid_names) / sizeof(fz_avoid_names[0]); i++)
			if (!strcmp(tok, fz_avoid_names[i].name))
				break;
		if (i == sizeof(fz_avoid_names) / sizeof(fz_avoid_names[0])) {
			fprintf(stderr, "tt_fuzz: --avoid: unknown class '%s'\n", tok);
			return -1;
		}
		opt_avoid |= fz_avoid_names[i].bit;
	}
	return 0;
}

static void print_totals(double secs)
{
	uint64_t ioc = 0, nl = 0;

	for (int i = 0; i < FZ_NR_IOC; i++)
		ioc += sh->ioc[i];
	for (int i = 0; i < FZ_NR_NL; i++)
		nl += sh->nl[i];
	printf("# ioctls issued: %" PRIu64 " (%.0f/s), netlink messages sent: %" PRIu64
	       " (%.0f/s) in %.1f s\n", ioc, ioc / secs, nl, nl / secs, secs);
	printf("# ioctls by command:");
	for (int i = 0; i < FZ_NR_IOC; i++)
		if (sh->ioc[i])
			printf(" %s=%" PRIu64, ioc_name(i), sh->ioc[i]);
	printf("\n# ioctl results:");
	for (int i = 0; i < FZ_NR_ERRNO; i++)
		if (sh->ioc_err[i])
			printf(" %s=%" PRIu64, i ? strerrorname_np(i) ? strerrorname_np(i) : "?" : "ok",
			       sh->ioc_err[i]);
	printf("\n# netlink by command:");
	for (int i = 0; i < FZ_NR_NL; i++)
		if (sh->nl[i])
			printf(" %s=%" PRIu64, nl_name(i), sh->nl[i]);
	printf("\n# netlink results:");
	for (int i = 0; i < FZ_NR_ERRNO; i++)
		if (sh->nl_err[i])
			printf(" %s=%" PRIu64, i ? strerrorname_np(i) ? strerrorname_np(i) : "?" : "ok",
			       sh->nl_err[i]);
	printf("\n# netlink reply messages %" PRIu64 ", receive timeouts %" PRIu64 "\n",
	       sh->nl_replies, sh->nl_timeouts);
	printf("# unprivileged: %" PRIu64 " ioctls, %" PRIu64 " netlink messages\n",
	       sh->unpriv_ioctls, sh->unpriv_nl);
	printf("# canary: %" PRIu64 " checks, %" PRIu64 " corrupted, %" PRIu64 " migrations\n",
	       sh->canary_checks, sh->canary_bad, sh->canary_moves);
	printf("# mover: %" PRIu64 " orders: %" PRIu64 " honest, %" PRIu64 " lies, %" PRIu64
	       " stalled, %" PRIu64 " deaths, %" PRIu64 " malformed orders\n",
	       sh->mover_orders, sh->mover_honest, sh->mover_lies, sh->mover_stalls,
	       sh->mover_deaths, sh->mover_bad);
	printf("# processes: %" PRIu64 " workers started, %" PRIu64 " exited, %" PRIu64
	       " SIGKILLed; %" PRIu64 " forks, %" PRIu64 " session reopens, %" PRIu64
	       " memory operations\n", sh->spawns, sh->exits, sh->kills, sh->forks,
	       sh->reopens, sh->mem_ops);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "seconds", required_argument, NULL, 't' },
		{ "procs", required_argument, NULL, 'p' },
		{ "threads", required_argument, NULL, 'n' },
		{ "rate-threads", required_argument, NULL, 'R' },
		{ "nl-threads", required_argument, NULL, 'L' },
		{ "avoid", required_argument, NULL, 'a' },
		{ "no-unpriv", no_argument, NULL, 'U' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct wslot ws[FZ_MAXPROCS];
	struct rng r;
	struct stat dst;
	bool have_seed = false, dev_changed = false, stuck = false;
	uint64_t t0, end, next_report;
	int c, ntests = 5, fails = 0;
	struct group *gr;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			opt_seed = strtoull(optarg, NULL, 0);
			have_seed = true;
			break;
		case 't':
			opt_seconds = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'p':
			opt_procs = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'n':
			opt_threads = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'L':
			opt_nl_threads = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'R':
			opt_rate_threads = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'a':
			if (parse_avoid(optarg))
				return 2;
			break;
		case 'U':
			opt_no_unpriv = true;
			break;
		case 'v':
			opt_verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || opt_procs < 2 || opt_procs > FZ_MAXPROCS ||
	    opt_threads < 1 || opt_threads > 16 || opt_rate_threads > 16 || opt_nl_threads > 8 ||
	    !opt_seconds) {
		usage(stderr);
		return 2;
	}
	if (!have_seed)
		opt_seed = tt_st_now_ns() ^ ((uint64_t)getpid() << 32);
	r.s = opt_seed;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	printf("# tt_fuzz --seed %" PRIu64 " --seconds %u --procs %u --threads %u --rate-threads %u --nl-threads %u%s",
	       opt_seed, opt_seconds, opt_procs, opt_threads, opt_rate_threads,
	       opt_nl_threads,
	       opt_no_unpriv ? " --no-unpriv" : "");
	for (size_t i = 0; i < sizeof(fz_avoid_names) / sizeof(fz_avoid_names[0]); i++)
		if (opt_avoid & fz_avoid_names[i].bit)
			printf(" --avoid %s", fz_avoid_names[i].name);
	printf("\n");

	if (access(TT_ST_DEV, F_OK)) {
		printf("1..0 # SKIP no %s (tiertrain.ko not loaded)\n", TT_ST_DEV);
		printf("# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:1 error:0\n");
		return 4;
	}
	if (tt_st_topo_read(&topo)) {
		printf("1..0 # SKIP cannot read the NUMA topology\n");
		printf("# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:1 error:0\n");
		return 4;
	}
	for (int i = 0; i < topo.nr_node_ids && i < TT_MAX_NODES; i++) {
		uint64_t fr, tot;

		if (!tt_st_node_mem(i, &fr, &tot) && tot)
			nodes_with_mem[nr_nodes_with_mem++] = i;
	}
	printf("# nodes: %d possible, fast %d, slow %d, offline %d\n",
	       topo.nr_node_ids, topo.fast, topo.slow, topo.offline);

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(sh, 0, sizeof(*sh));

	/* the unprivileged worker: a group member, as the udev rule makes it */
	if (geteuid())
		opt_no_unpriv = true;
	gr = getgrnam(TT_DEVICE_NAME);
	dev_gid = gr ? gr->gr_gid : 64999;
	if (!stat(TT_ST_DEV, &dst) && !opt_no_unpriv) {
		if (chown(TT_ST_DEV, 0, dev_gid) || chmod(TT_ST_DEV, 0660)) {
			printf("# cannot give %s to group %u: %s; no unprivileged worker\n",
			       TT_ST_DEV, (unsigned int)dev_gid, strerror(errno));
			opt_no_unpriv = true;
		} else {
			dev_changed = true;
			printf("# %s: mode 0660, group %u; the unprivileged worker is uid %d with that group\n",
			       TT_ST_DEV, (unsigned int)dev_gid, FZ_NOBODY);
		}
	}
	if (!geteuid() && settings(false))
		printf("# could not read the module settings: they will not be restored\n");

	signal(SIGPIPE, SIG_IGN);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	memset(ws, 0, sizeof(ws));
	t0 = tt_st_now_ns();
	end = t0 + (uint64_t)opt_seconds * 1000000000ULL;
	next_report = t0 + 10000000000ULL;
	for (unsigned int i = 0; i < opt_procs; i++) {
		ws[i].unpriv = !opt_no_unpriv && i == opt_procs - 1;
		ws[i].pid = spawn(i, ws[i].unpriv, rnd(&r), 4000 + (unsigned int)rn(&r, 20000));
		ws[i].started = tt_st_now_ns();
	}
	while (tt_st_now_ns() < end) {
		int st;
		pid_t p;

		usleep(50000);
		while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
			for (unsigned int i = 0; i < opt_procs; i++) {
				if (ws[i].pid != p)
					continue;
				if (WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL) {
					INC(unexpected);
					fz_msg("worker %u died of signal %d (%s)", i,
					       WTERMSIG(st), strsignal(WTERMSIG(st)));
				}
				ws[i].pid = spawn(i, ws[i].unpriv, rnd(&r),
						  4000 + (unsigned int)rn(&r, 20000));
				ws[i].started = tt_st_now_ns();
			}
		}
		/* SIGKILL a worker at a random moment */
		if (!(opt_avoid & FZ_AV_KILL) && rn(&r, 1000) < 8) {
			unsigned int i = (unsigned int)rn(&r, opt_procs);

			if (ws[i].pid > 0) {
				kill(ws[i].pid, SIGKILL);
				INC(kills);
			}
		}
		if (opt_verbose && tt_st_now_ns() > next_report) {
			next_report += 10000000000ULL;
			print_totals((tt_st_now_ns() - t0) / 1e9);
		}
	}
	sh->stop = 1;
	/*
	 * Every worker must go: by itself within 10 s, else SIGKILLed, and
	 * then every process left (forked children, reparented to us as the
	 * subreaper) within 50 s: one that does not die is stuck in the kernel.
	 */
	{
		uint64_t t_stop = tt_st_now_ns();
		bool killed = false;
		int st;
		pid_t p;

		for (;;) {
			while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
				for (unsigned int i = 0; i < opt_procs; i++)
					if (ws[i].pid == p) {
						if (WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL) {
							INC(unexpected);
							fz_msg("worker %u died of signal %d", i,
							       WTERMSIG(st));
						}
						ws[i].pid = 0;
					}
			}
			if (p < 0 && errno == ECHILD)
				break;
			if (!killed && tt_st_now_ns() - t_stop > 10000000000ULL) {
				killed = true;
				kill_children(NULL, 0);
			}
			if (tt_st_now_ns() - t_stop > 60000000000ULL) {
				char b[2048];

				kill_children(b, sizeof(b));
				stuck = true;
				fz_msg("processes alive 50 s after SIGKILL: %s", b);
				break;
			}
			usleep(50000);
		}
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	/* restored by a child: a module stuck on a lock must not hang the run */
	if (!geteuid() && cfg_n) {
		pid_t p = fork();
		int st = 0;
		uint64_t t1 = tt_st_now_ns();

		if (!p)
			_exit(settings(true) ? 1 : 0);
		while (p > 0 && waitpid(p, &st, WNOHANG) == 0 &&
		       tt_st_now_ns() - t1 < 30000000000ULL)
			usleep(50000);
		if (p > 0 && waitpid(p, &st, WNOHANG) == 0) {
			char b[256];

			stuck = true;
			fz_msg("restoring the module settings over netlink hung 30 s: %s",
			       proc_state(p, b, sizeof(b)));
			kill(p, SIGKILL);
		} else if (p < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
			INC(unexpected);
			fz_msg("could not restore the module settings");
		}
	}
	if (dev_changed) {
		if (chown(TT_ST_DEV, dst.st_uid, dst.st_gid) ||
		    chmod(TT_ST_DEV, dst.st_mode & 07777))
			printf("# could not restore the owner and mode of %s: %s\n",
			       TT_ST_DEV, strerror(errno));
	}

	{
		double secs = (tt_st_now_ns() - t0) / 1e9;
		uint64_t ioc = 0, nl = 0;
		uint32_t nm = sh->nmsg < FZ_MSGS ? sh->nmsg : FZ_MSGS;

		for (int i = 0; i < FZ_NR_IOC; i++)
			ioc += sh->ioc[i];
		for (int i = 0; i < FZ_NR_NL; i++)
			nl += sh->nl[i];
		print_totals(secs);
		for (uint32_t i = 0; i < nm; i++)
			printf("# finding: %s\n", sh->msg[i]);
		if (sh->nmsg > FZ_MSGS)
			printf("# (%u more not shown)\n", sh->nmsg - FZ_MSGS);
		printf("1..%d\n", ntests);
#define TAP(n, ok, ...)                                                        \
	do {                                                                   \
		printf("%s %d ", (ok) ? "ok" : "not ok", n);                   \
		printf(__VA_ARGS__);                                           \
		printf("\n");                                                  \
		fails += !(ok);                                                \
	} while (0)
		TAP(1, !sh->canary_bad && sh->canary_checks,
		    "canary_intact # %" PRIu64 " checks, %" PRIu64 " corrupted",
		    sh->canary_checks, sh->canary_bad);
		TAP(2, !sh->unexpected, "no_unexpected_results # %" PRIu64,
		    sh->unexpected);
		TAP(3, !stuck, "workers_killable");
		TAP(4, ioc > 0, "ioctls_issued # %" PRIu64, ioc);
		TAP(5, nl > 0, "netlink_sent # %" PRIu64, nl);
		printf("# seed %" PRIu64 " (rerun: tt_fuzz --seed %" PRIu64 " --seconds %u)\n",
		       opt_seed, opt_seed, opt_seconds);
		printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n",
		       ntests - fails, fails);
	}
	return fails ? 1 : 0;
}
