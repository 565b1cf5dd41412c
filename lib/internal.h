/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libtiertrain internals: the backend interface and the helpers the
 * move_pages backend is built from. Nothing here is exported from
 * libtiertrain.so (the library is built with -fvisibility=hidden and only
 * TT_EXPORT functions are visible); the unit tests link the objects directly.
 */
#ifndef TT_LIB_INTERNAL_H
#define TT_LIB_INTERNAL_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "tiertrain.h"
#include "core/event.h"

#define TT_EXPORT __attribute__((visibility("default")))

/* Where the kernel describes NUMA nodes. */
#define TT_SYSFS_NODE_DIR	"/sys/devices/system/node"

/*
 * The move_pages backend accepts as many registrations per session as the
 * module does by default (its max_ranges parameter).
 */
#define TT_MP_MAX_RANGES	65536

/* Words of a node bitmap covering TT_MAX_NODES nodes. */
#define TT_NODEMASK_WORDS	(TT_MAX_NODES / 64)

/**
 * struct tt_nodemask - a set of node ids below TT_MAX_NODES
 * @bits: bit n of word n / 64 is set when node n is in the set.
 */
struct tt_nodemask {
	uint64_t bits[TT_NODEMASK_WORDS];
};

struct tt_session;

/**
 * struct tt_ops - what a backend implements. Every function returns 0 or
 * -errno and never touches errno on the caller's behalf (tiertrain.c does).
 * @name:      "kernel" or "move_pages", returned by tt_backend().
 * @migrate:   TT_IOC_MIGRATE; fills @res (never NULL) in every case.
 * @flush:     TT_IOC_FLUSH.
 * @residency: TT_IOC_RESIDENCY on the caller-built argument.
 * @reg:       TT_IOC_REGISTER.
 * @unreg:     TT_IOC_UNREGISTER.
 * @stats:     TT_IOC_STATS.
 * @event:     TT_IOC_EVENT: one scheduler event.
 * @events:    TT_IOC_EVENTS: @a->count events; sets @a->done in every case.
 * @sched_get: TT_IOC_GET_SCHED.
 * @sched_set: TT_IOC_SET_SCHED.
 * @layers:    TT_IOC_LAYERS; sets @a->count to the layers known.
 * @hint:      TT_IOC_HINT.
 * @close:     release the backend's resources (not the session memory).
 */
struct tt_ops {
	const char *name;
	int (*migrate)(struct tt_session *s, struct tt_ioc_migrate *m);
	int (*flush)(struct tt_session *s);
	int (*residency)(struct tt_session *s, struct tt_ioc_residency *r);
	int (*reg)(struct tt_session *s, const struct tt_ioc_range *r);
	int (*unreg)(struct tt_session *s, const struct tt_ioc_range *r);
	int (*stats)(struct tt_session *s, struct tt_ioc_stats *st);
	int (*event)(struct tt_session *s, const struct tt_event *ev);
	int (*events)(struct tt_session *s, struct tt_ioc_events *a);
	int (*sched_get)(struct tt_session *s, struct tt_ioc_sched *cfg);
	int (*sched_set)(struct tt_session *s, const struct tt_ioc_sched *cfg);
	int (*layers)(struct tt_session *s, struct tt_ioc_layers *a);
	int (*hint)(struct tt_session *s, const struct tt_ioc_hint *req);
	void (*close)(struct tt_session *s);
};

/**
 * struct tt_mp_range - one registration kept by the move_pages backend
 * @addr:  start address, page aligned.
 * @len:   length in bytes, page aligned, > 0.
 * @layer: as given to tt_register().
 * @flags: TT_RANGE_* as given to tt_register().
 */
struct tt_mp_range {
	uint64_t addr;
	uint64_t len;
	uint32_t layer;
	uint32_t flags;
};

/**
 * struct tt_session - an open session
 * @ops:       the backend.
 * @fd:        kernel backend: the /dev/tiertrain descriptor; -1 otherwise.
 * @pid:       move_pages backend: the process the session belongs to (its
 *             calls from another process fail with EPERM, as the kernel's
 *             do from another mm).
 * @lock:      move_pages backend: protects @ranges, @nr_ranges,
 *             @cap_ranges, @stats and @sched; the executor behind @us
 *             takes it as its lock (core/exec.h); never held while memory
 *             moves.
 * @ranges:    move_pages backend: registrations, sorted by address, disjoint.
 * @nr_ranges: entries used in @ranges.
 * @cap_ranges: entries allocated in @ranges.
 * @stats:     move_pages backend: the session counters.
 * @sched:     move_pages backend: the scheduler settings (valid is
 *             TT_SCHED_SET_ALL); the rates are the timeline's (in @us).
 * @us:        move_pages backend: the userspace scheduler (usched.c),
 *             whose state @lock protects too.
 * @movers:    kernel backend: the mover threads (mover.c), or NULL.
 * @cpus:      with @cpus_set, the CPUs the session's own threads run on
 *             (TIERTRAIN_MOVER_CPUS, cpus.c); anywhere without.
 * @cpus_set:  1 when @cpus applies.
 */
struct tt_session {
	const struct tt_ops *ops;
	int fd;
	pid_t pid;
	pthread_mutex_t lock;
	struct tt_mp_range *ranges;
	size_t nr_ranges;
	size_t cap_ranges;
	struct tt_ioc_stats stats;
	struct tt_ioc_sched sched;
	struct tt_us *us;
	struct tt_movers *movers;
	cpu_set_t cpus;
	int cpus_set;
};

extern const struct tt_ops tt_kernel_ops;
extern const struct tt_ops tt_mp_ops;

/* kernel.c */
int tt_kernel_open(struct tt_session *s);

/*
 * mover.c: tt_open() starts TT_MOVERS_AUTO mover threads, or the N of
 * TIERTRAIN_MOVER=N (0: none).
 */
#define TT_ENV_MOVER		"TIERTRAIN_MOVER"
#define TT_MOVERS_MAX		64
#define TT_MOVERS_DEFAULT	2
#define TT_MOVERS_AUTO		1
int tt_mover_open(struct tt_session *s);

/*
 * cpus.c: TIERTRAIN_MOVER_CPUS, a CPU list ("0-3,8") that the session's
 * own threads run on. tt_cpus_parse() fills @set from @list, each CPU
 * below @ncpus: 0 or -EINVAL. tt_cpus_open() reads the variable into
 * @s (unset or empty: anywhere): 0, or -EINVAL with a message naming the
 * value. tt_cpus_thread() is pthread_create() on them: 0 or its error.
 */
#define TT_ENV_MOVER_CPUS	"TIERTRAIN_MOVER_CPUS"
int tt_cpus_parse(const char *list, long ncpus, cpu_set_t *set);
int tt_cpus_open(struct tt_session *s);
int tt_cpus_thread(const struct tt_session *s, pthread_t *th,
		   void *(*fn)(void *), void *arg);

/* mp.c */
int tt_mp_open(struct tt_session *s);
int tt_mp_owner(const struct tt_session *s);
uint64_t tt_now_ns(void);

/*
 * sched.c: the checks of scheduler events and settings, as the module does
 * them, and the move_pages backend's event and settings calls.
 */

/* Most events one TT_IOC_EVENTS call takes. */
#define TT_EVENTS_MAX		4096

/* Scheduler defaults: the module parameters' defaults. */
#define TT_SCHED_DEF_PROFILE_ITERS	1
#define TT_SCHED_DEF_STAY_NS		(1000ULL * 1000)
#define TT_SCHED_DEF_RATE_BPS		(1024ULL * 1024 * 1024)

void tt_sched_defaults(struct tt_ioc_sched *cfg);
int tt_sched_apply(struct tt_ioc_sched *cur, const struct tt_ioc_sched *req,
		   const char *node_dir);
int tt_mp_event(struct tt_session *s, const struct tt_event *ev);
int tt_mp_event_op(struct tt_session *s, const struct tt_event *ev);
int tt_mp_events_op(struct tt_session *s, struct tt_ioc_events *a);
int tt_mp_sched_get(struct tt_session *s, struct tt_ioc_sched *cfg);
int tt_mp_sched_set(struct tt_session *s, const struct tt_ioc_sched *cfg);
int tt_mp_layers(struct tt_session *s, struct tt_ioc_layers *a);
int tt_mp_hint(struct tt_session *s, const struct tt_ioc_hint *req);

/* nodes.c: node lists and the node checks of the move_pages backend. */
int tt_nodelist_parse(const char *str, struct tt_nodemask *mask);
bool tt_nodemask_test(const struct tt_nodemask *mask, int node);
int tt_nodemask_read(const char *path, struct tt_nodemask *mask);
int tt_nodemask_last(const struct tt_nodemask *mask);
int tt_node_check(const char *dir, int node);
int tt_node_has_cpus(const char *dir, int node);

/**
 * struct tt_node_topo - the node layout the userspace scheduler places
 *                       pages by (tt_node_topo_read())
 * @cpu:          nodes with CPUs: fast nodes.
 * @mem:          nodes with memory; those without CPUs are slow nodes.
 * @nearest_slow: the slow node nearest to the fast node asked about, or -1
 *                when there is none.
 */
struct tt_node_topo {
	struct tt_nodemask cpu;
	struct tt_nodemask mem;
	int nearest_slow;
};

int tt_node_topo_read(const char *dir, int fast, struct tt_node_topo *t);
bool tt_node_is_slow(const struct tt_node_topo *t, int nid);

/* maps.c: /proc/self/maps parsing for the range checks. */

/**
 * struct tt_maps_entry - one line of /proc/PID/maps
 * @start:  first address of the mapping.
 * @end:    first address after it.
 * @perms:  the permission field, e.g. "rw-p" (NUL terminated).
 * @dev_major: major number of the backing device (0 for anonymous memory).
 * @dev_minor: minor number of the backing device.
 * @inode:  inode of the backing file (0 for anonymous memory).
 * @name:   pathname or pseudo name ("[heap]", "[anon:x]"); "" when none.
 */
struct tt_maps_entry {
	uint64_t start;
	uint64_t end;
	char perms[5];
	unsigned int dev_major;
	unsigned int dev_minor;
	uint64_t inode;
	char name[256];
};

int tt_maps_parse_line(const char *line, struct tt_maps_entry *e);
bool tt_maps_entry_supported(const struct tt_maps_entry *e);
int tt_maps_check(FILE *maps, uint64_t start, uint64_t end,
		  bool need_supported);
int tt_maps_check_self(uint64_t start, uint64_t end, bool need_supported);
int tt_maps_mapped_self(uint64_t start, uint64_t end);

/**
 * struct tt_maps_span - one mapping of a tt_maps_snap
 * @start:     first address.
 * @end:       first address after it.
 * @supported: tt_maps_entry_supported() of its line.
 */
struct tt_maps_span {
	uint64_t start;
	uint64_t end;
	bool supported;
};

/**
 * struct tt_maps_snap - the mappings of a process at one moment
 * @n:    entries in @span.
 * @span: the mappings in address order.
 */
struct tt_maps_snap {
	size_t n;
	struct tt_maps_span span[];
};

int tt_maps_snap_read(FILE *maps, struct tt_maps_snap **snap);
int tt_maps_snap_self(struct tt_maps_snap **snap);
int tt_maps_snap_check(const struct tt_maps_snap *snap, uint64_t start,
		       uint64_t end, bool need_supported);
size_t tt_maps_snap_find(const struct tt_maps_snap *snap, uint64_t addr);

/* range.c: the arithmetic part of the range checks. */
uint64_t tt_user_addr_limit(void);
int tt_range_check(uint64_t addr, uint64_t len);

/* mp.c helpers, exposed for the unit tests. */

/**
 * enum tt_mp_fate - what happened to one page asked to move
 * @TT_MP_MOVED:       it is on the target node now.
 * @TT_MP_BUSY:        the kernel could not isolate or migrate it.
 * @TT_MP_NOT_PRESENT: it went away (unmapped, swapped) meanwhile.
 * @TT_MP_UNSUPPORTED: move_pages(2) reported an error we do not know.
 * @TT_MP_NO_MEMORY:   the target node had no free page for it.
 * @TT_MP_RETRY:       move_pages(2) gave up on its batch before reaching
 *                     this page; try it alone.
 */
enum tt_mp_fate {
	TT_MP_MOVED,
	TT_MP_BUSY,
	TT_MP_NOT_PRESENT,
	TT_MP_UNSUPPORTED,
	TT_MP_NO_MEMORY,
	TT_MP_RETRY,
};

/* Status value move_pages(2) never writes: "not written by the kernel". */
#define TT_MP_STATUS_UNSET	INT32_MIN

long tt_mp_move(unsigned long count, void **pages, const int *nodes,
		int *status, int *mflags);
bool tt_mp_account_before(int status, int node, struct tt_migrate_result *r);
enum tt_mp_fate tt_mp_fate(int move_status, int now, int node);
void tt_mp_account_fate(enum tt_mp_fate fate, struct tt_migrate_result *r);
void tt_mp_account_residency(const int *status, size_t n, uint64_t page_size,
			     uint64_t *bytes, uint32_t nr_nodes,
			     uint64_t *not_present, uint64_t *other);
int tt_mp_ranges_insert(struct tt_session *s, const struct tt_ioc_range *r);
int tt_mp_ranges_remove(struct tt_session *s, const struct tt_ioc_range *r);
void tt_mp_add_result(struct tt_migrate_result *sum,
		      const struct tt_migrate_result *r);
int tt_mp_move_range(uint64_t start, uint64_t end, int node,
		     struct tt_migrate_result *r, uint64_t *from);

/*
 * usched.c: the move_pages backend's scheduler (the userspace scheduler).
 */

/* Distinct layer ids a session may report (the module's max_layers). */
#define TT_US_MAX_LAYERS	4096
/* Most evict or prefetch threads per session (the module's pool limit). */
#define TT_US_WORKERS_MAX	64
/* The environment variable that sizes the pools: "E,P". */
#define TT_US_ENV_WORKERS	"TIERTRAIN_MP_WORKERS"

struct tt_us;

/**
 * struct tt_us_ops - what the userspace scheduler does to the world; the
 * real ones use the clock, getcpu(), sysfs, /proc/self/maps and
 * move_pages(2), the unit tests substitute their own (tt_us_set_ops())
 * @now:      CLOCK_MONOTONIC now, in ns.
 * @cpu_node: the node the calling thread runs on (-1 if unknown).
 * @topo:     the node layout, with the slow node nearest to @fast; 0 or
 *            -errno.
 * @check:    whether [@start, @end) is mapped and a supported mapping: 0,
 *            -EFAULT or -EOPNOTSUPP. *@cache is NULL at the first call of
 *            an eviction and free()d after its last one.
 * @mapped:   whether every byte of [@start, @end) is mapped, when a
 *            tensor is saved: 0 or -EFAULT.
 * @move:     move the pages of [@start, @end) to @node and fill @res (its
 *            page counts add up to the range's pages); when @from is not
 *            NULL, add the bytes found on each node before the move to
 *            @from[node] (TT_MAX_NODES entries). 0 or -errno; the pages
 *            a failure left unhandled are in @res as skipped_unsupported.
 * @clip:     optional: the first supported mapping of [@start, @end), cut
 *            to it: 1 with it in [*@a, *@b), 0 when there is none, or
 *            -errno; *@cache as for @check. Without it (or on an error) a
 *            hint's plain pieces are checked whole with @check.
 * @manual_clock: the clock only moves when the tests say so: the timer
 *            thread sleeps until tt_us_kick() instead of until a time.
 */
struct tt_us_ops {
	uint64_t (*now)(void *ctx);
	int (*cpu_node)(void *ctx);
	int (*topo)(void *ctx, int fast, struct tt_node_topo *t);
	int (*check)(void *ctx, uint64_t start, uint64_t end, void **cache);
	int (*mapped)(void *ctx, uint64_t start, uint64_t end);
	int (*move)(void *ctx, uint64_t start, uint64_t end, int node,
		    struct tt_migrate_result *res, uint64_t *from);
	int (*clip)(void *ctx, uint64_t start, uint64_t end, void **cache,
		    uint64_t *a, uint64_t *b);
	bool manual_clock;
};

extern const struct tt_us_ops tt_us_real_ops;

int tt_us_parse_workers(const char *str, unsigned int *evict,
			unsigned int *prefetch);
int tt_us_open(struct tt_session *s);
void tt_us_close(struct tt_session *s);
int tt_us_events(struct tt_session *s, const struct tt_event *ev,
		 unsigned int n, unsigned int *done);
void tt_us_stats(struct tt_session *s, struct tt_ioc_stats *st);
void tt_us_sched_get(struct tt_session *s, struct tt_ioc_sched *cfg);
void tt_us_sched_apply(struct tt_session *s, const struct tt_ioc_sched *req);
int tt_us_layers(struct tt_session *s, struct tt_ioc_layers *a);
int tt_us_hint(struct tt_session *s, const struct tt_ioc_hint *req,
	       uint64_t start, uint64_t end);

/* Test hooks: the ops, and waiting for the threads with a manual clock. */
int tt_us_set_ops(struct tt_session *s, const struct tt_us_ops *ops,
		  void *ctx);
void tt_us_kick(struct tt_session *s);
void tt_us_settle(struct tt_session *s);
unsigned int tt_us_threads(struct tt_session *s);
uint64_t tt_us_last_ts(struct tt_session *s);

#endif /* TT_LIB_INTERNAL_H */
