/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libtiertrain: the C API of tiertrain.
 *
 * Every call that returns int returns 0 (or a non-negative count where
 * documented) on success and -errno on failure, and also sets errno, so both
 * `if (tt_x(...) < 0) perror(...)` and `ret = tt_x(...); strerror(-ret)` work.
 *
 * Backends. tt_open() uses the kernel module through /dev/tiertrain when the
 * device exists ("kernel" backend). When it does not (module not loaded, or
 * not installed) the same calls work in-process through move_pages(2)
 * ("move_pages" backend): migrations are synchronous and use the calling
 * thread, residency is read with move_pages(2) status queries, registrations
 * are kept in the library (and, unlike the module's, are not forgotten when
 * their memory is unmapped), and the scheduler events drive a scheduler in
 * the library that makes the module's decisions and moves memory from
 * helper threads of the session (see "Scheduler events" below). Setting the
 * environment variable TIERTRAIN_BACKEND=move_pages forces the fallback;
 * TIERTRAIN_BACKEND=kernel makes tt_open() fail instead of falling back; any
 * other non-empty value is an error (EINVAL).
 *
 * Errors are those documented in <linux/tiertrain.h> for the matching ioctl,
 * in both backends: EINVAL, EOVERFLOW, EFAULT, EOPNOTSUPP, ENODEV, ENOSPC...
 * A NULL session fails with EBADF.
 *
 * Thread safety: a session may be used from several threads at once.
 */
#ifndef TIERTRAIN_H
#define TIERTRAIN_H

#include <stddef.h>
#include <stdint.h>
#include <linux/tiertrain.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tt_session;

/* Library version string, e.g. "0.1.0". */
const char *tt_version(void);

/*
 * tt_open() - open a session bound to the calling process's memory. On
 * the kernel backend it also starts the session's mover thread (see
 * "Movers" below). Returns NULL and sets errno on failure (EACCES: no
 * permission on /dev/tiertrain; ENOENT: TIERTRAIN_BACKEND=kernel and no
 * device; EINVAL: TIERTRAIN_BACKEND or TIERTRAIN_MOVER has an unknown
 * value, TIERTRAIN_MOVER_CPUS is not a CPU list of this machine or names
 * CPUs the movers may not run on, or the move_pages backend's
 * TIERTRAIN_MP_WORKERS is malformed, which is also reported on stderr;
 * ENOMEM).
 */
struct tt_session *tt_open(void);

/*
 * tt_close() - wait for queued work, forget registrations, free @s. NULL ok.
 * The move_pages backend also stops its scheduler's threads and first moves
 * back to the fast node whatever its scheduler still has evicted (the
 * module leaves such data on the slow node, intact).
 */
void tt_close(struct tt_session *s);

/*
 * tt_backend() - "kernel" or "move_pages": the backend @s uses, or, with
 * @s == NULL, the backend tt_open() would pick now (NULL with errno EINVAL
 * when TIERTRAIN_BACKEND has an unknown value).
 */
const char *tt_backend(const struct tt_session *s);

/*
 * tt_migrate() - move the pages of [addr, addr + len) to @node, synchronously.
 * addr and len must be page aligned. Pages busy for a moment are tried
 * again, in up to 10 passes with short growing sleeps; a transparent huge
 * page the range covers only in part is split and the range's pages of it
 * moved. Returns 0 only when every present page of the range is on @node;
 * otherwise -ENOSPC when @node was full for some pages, else -EBUSY when
 * some stayed busy or could not be moved (pinned, shared with another
 * process without CAP_SYS_NICE, KSM, a huge page mapped by page-table
 * entries). Pages that stay are where they were; tt_migrate_ex() tells
 * how many, by reason. Both backends.
 */
int tt_migrate(struct tt_session *s, void *addr, size_t len, int node);

/*
 * tt_migrate_ex() - tt_migrate() with TT_MIGRATE_* @flags and, when @res is
 * not NULL, the per-reason page counts of the migration (filled on
 * success, ENOSPC, EBUSY and EINTR too). With
 * TT_MIGRATE_ASYNC (kernel backend only; the move_pages backend runs it
 * synchronously) @res is zeroed and tt_flush() waits for completion.
 */
int tt_migrate_ex(struct tt_session *s, void *addr, size_t len, int node,
		  unsigned int flags, struct tt_migrate_result *res);

/* tt_flush() - wait for every asynchronous migration queued so far. */
int tt_flush(struct tt_session *s);

/*
 * tt_residency() - bytes of [addr, addr + len) resident on each node.
 * @bytes_per_node has @nr_nodes elements (1 .. TT_MAX_NODES); element i gets
 * the bytes on node i. Pages that are not resident or on nodes >= nr_nodes
 * are not counted (use tt_residency_ex() to see them).
 */
int tt_residency(struct tt_session *s, const void *addr, size_t len,
		 uint64_t *bytes_per_node, int nr_nodes);

/*
 * tt_residency_ex() - tt_residency() that also reports bytes not resident
 * (@not_present) and bytes on nodes >= nr_nodes (@other); either may be NULL.
 */
int tt_residency_ex(struct tt_session *s, const void *addr, size_t len,
		    uint64_t *bytes_per_node, int nr_nodes,
		    uint64_t *not_present, uint64_t *other);

/*
 * tt_register() / tt_unregister() - tell the session about a range (see
 * TT_IOC_REGISTER). @flags: TT_RANGE_*. Unregister needs the same addr, len.
 */
int tt_register(struct tt_session *s, void *addr, size_t len, uint32_t layer,
		uint32_t flags);
int tt_unregister(struct tt_session *s, void *addr, size_t len);

/*
 * tt_stats() - copy the session counters into @st (see struct tt_ioc_stats).
 */
int tt_stats(struct tt_session *s, struct tt_ioc_stats *st);

/* tt_page_size() - the page size ranges must be aligned to. */
size_t tt_page_size(void);

/*
 * Scheduler events (see "Scheduler" in <linux/tiertrain.h>). A training
 * process reports each iteration's start, each layer's forward and backward
 * begin and end, and the tensors each layer saves for its backward pass;
 * the session's scheduler evicts and prefetches them.
 *
 * Kernel backend: each call below is one ioctl (TT_IOC_EVENT...); the
 * module takes the timestamps (CLOCK_MONOTONIC) and checks the arguments.
 * Nothing is allocated or locked in the library on this path.
 *
 * move_pages backend: each event is checked exactly as the module checks it
 * (same EINVAL and EOPNOTSUPP cases, including a TT_EV_TIMESTAMP going
 * backwards, and ENOSPC beyond 65536 saved tensors not yet forgotten or
 * 4096 distinct layer ids, the module parameters' defaults) and handed
 * under a mutex to a scheduler in the library, in the style of TierTrain's
 * daemon. It makes the module's decisions with the module's own code
 * (core/timeline.c and core/policy.c, compiled into the library): the same
 * profile, plan, deviation rules, lead-time feedback and rate averages, the
 * same counters in tt_stats(), the same tt_layers() view and the same
 * tt_sched_set() settings. Memory moves with move_pages(2) in helper threads
 * the session starts at its first eviction: evict threads that evict a
 * layer's first final-size bytes right after its forward end, prefetch
 * threads, and a timer thread that sleeps until the next planned prefetch
 * trigger time (CLOCK_MONOTONIC) and hands the due prefetches over.
 * TIERTRAIN_MP_WORKERS=E,P sets how many evict and prefetch threads each
 * session has (1..64 each, default 1,1: the module's evict_workers and
 * prefetch_workers). ER and PR are averaged from the threads' own
 * move_pages(2) timings. At a backward begin the bytes not yet back are
 * counted late, and with TT_SCHED_SYNC_LATE the tt_layer_begin(TT_BWD) call
 * itself fetches them before it returns. Slow node -1 (automatic) is the
 * node with memory and no CPUs nearest (sysfs distance) to the node the
 * thread reporting the forward end runs on; fast node -1 is the fast node
 * most of the evicted pages were on before, else that same node. Failures
 * of move_pages(2) never fail an event: they are counted in the session
 * totals (total.skipped_*), and a saved tensor that is no longer mapped, or
 * not a supported mapping, when it is evicted is skipped and forgotten.
 * Only TT_SCHED_SYNC_LATE's fetch ever makes an event call wait for memory
 * to move. If the helper threads cannot be created the session evicts
 * nothing (events are still checked and counted).
 */

/* tt_iter_begin() - a training iteration starts (TT_EV_ITER_BEGIN). */
int tt_iter_begin(struct tt_session *s);

/*
 * tt_layer_begin() / tt_layer_end() - @layer's forward (@phase TT_FWD) or
 * backward (@phase TT_BWD) pass begins / ends (TT_EV_LAYER_BEGIN,
 * TT_EV_LAYER_END). @phase must be exactly one of TT_FWD and TT_BWD, else
 * EINVAL.
 */
int tt_layer_begin(struct tt_session *s, uint32_t layer, unsigned int phase);
int tt_layer_end(struct tt_session *s, uint32_t layer, unsigned int phase);

/*
 * tt_tensor_saved() - @layer saved the tensor at [addr, addr + len) for its
 * backward pass (TT_EV_TENSOR_SAVED). Any alignment: the range is rounded
 * inward to whole pages, and a tensor that covers no whole page is counted
 * in tensors_ignored. Errors besides those of every event: EOVERFLOW (the
 * range wraps around or ends beyond the user address space, or the
 * session's saved bytes would wrap), EFAULT (part of its whole pages is not
 * mapped), ENOSPC (max_ranges). Whether the mapping is supported is checked
 * when it is evicted. The scheduler forgets it at the end of the layer's
 * backward pass.
 */
int tt_tensor_saved(struct tt_session *s, uint32_t layer, const void *addr,
		    size_t len);

/*
 * tt_tensor_saved_ex() - tt_tensor_saved() with @flags: 0 or
 * TT_EV_PERSISTENT (keep the tensor across iterations, e.g. weights).
 * Unknown bits fail with EOPNOTSUPP, the other event flags with EINVAL.
 */
int tt_tensor_saved_ex(struct tt_session *s, uint32_t layer, const void *addr,
		       size_t len, unsigned int flags);

/*
 * tt_events() - submit @n events in order, in batches of at most 4096 per
 * ioctl (TT_IOC_EVENTS). The caller fills each struct tt_event as
 * <linux/tiertrain.h> documents it; with TT_EV_TIMESTAMP in an event's
 * flags its @ts_ns is the caller's CLOCK_MONOTONIC time, else @ts_ns must be
 * 0 and the time of submission is used. Returns @n, or -errno at the first
 * invalid event: the events before it have been processed, it and those
 * after it have not. @n above INT_MAX fails with EINVAL; @n == 0 returns 0.
 */
int tt_events(struct tt_session *s, const struct tt_event *ev, unsigned int n);

/*
 * tt_sched_get() - the session's scheduler settings (TT_IOC_GET_SCHED):
 * @cfg->valid gets every TT_SCHED_SET_* bit this version knows.
 */
int tt_sched_get(struct tt_session *s, struct tt_ioc_sched *cfg);

/*
 * tt_sched_set() - change the fields of @cfg that @cfg->valid selects
 * (TT_IOC_SET_SCHED); nothing changes when a value is rejected. Errors:
 * EOPNOTSUPP (unknown valid or flags bits, budget_mib not 0 without
 * TT_SCHED_SET_BUDGET), EINVAL (profile_iters outside 1..1000, a rate of
 * 0, a node id below -1 or not a possible node), ENODEV (a node that is
 * offline or has no memory). TT_SCHED_SET_BUDGET with budget_mib sets the
 * session's fast-tier budget (see "Fast-tier budget" in
 * <linux/tiertrain.h>); a budget lowered below what the session holds on
 * the fast tier evicts victims before the call returns. Both backends:
 * the move_pages backend keeps the session's own budget the same way (no
 * module-wide budget there; Documentation/scheduler.md, "Fast-tier
 * budget").
 */
int tt_sched_set(struct tt_session *s, const struct tt_ioc_sched *cfg);

/*
 * tt_layers() - the scheduler's per-layer view (TT_IOC_LAYERS), in layer id
 * order: up to @n entries are written to @info (NULL is fine with @n == 0).
 * Returns the number of layers the scheduler knows, which may exceed @n
 * (call again with a larger array), or -errno.
 */
/*
 * tt_hint() - what the caller knows about [addr, addr + len) that the
 * schedule cannot see (TT_IOC_HINT): @hint is TT_HINT_WILL_USE (bring
 * the saved tensors there back now), TT_HINT_PIN_FAST (never evict it),
 * TT_HINT_ARCHIVE (evict only under fast-tier pressure: not by the
 * schedule) or TT_HINT_RETIRE (cancel queued work on the tensors there,
 * bring them back, forget them, end earlier hints on the range); see
 * <linux/tiertrain.h> for the combinations allowed. Both backends. Errors:
 * EOPNOTSUPP (unknown bits), EINVAL (no bit, a combination not allowed,
 * @len 0 or a range wrapping around), EOVERFLOW (a range ending beyond the
 * user address space), ENOSPC, ENOMEM.
 *
 * Any range, saved tensor or not: WILL_USE and PIN_FAST also move the
 * mapped pages of the range that are not saved tensors to the fast node
 * before returning (synchronously, in the calling thread, as tt_migrate();
 * ENOSPC when the fast node has no room for some, after the hint was
 * recorded; EINTR on a fatal signal, kernel backend). ARCHIVE makes those
 * pages the first to leave when the session's fast-tier budget needs room
 * (both backends).
 * RETIRE moves nothing and ends the range's PIN_FAST and ARCHIVE hints.
 */
int tt_hint(struct tt_session *s, const void *addr, size_t len,
	    unsigned int hint);

int tt_layers(struct tt_session *s, struct tt_layer_info *info,
	      unsigned int n);

/*
 * Movers (kernel backend; see "Mover" in <linux/tiertrain.h> and
 * Documentation/mover.md). The module's in-kernel engine splits every
 * transparent huge page it moves; a session with mover threads has its
 * huge pages moved whole instead, by those threads with move_pages(2),
 * on orders from the module (TT_IOC_MIGRATE and the scheduler alike: the
 * module still decides what moves when). An idle mover sleeps in poll(2);
 * one that dies or stalls costs at most mover_timeout_ms (module setting,
 * default 1000) before the module moves the order itself.
 *
 * tt_open() starts one mover thread for every kernel-backend session, so
 * that huge pages stay huge without the program doing anything (one: a
 * training process keeps a CPU busy, and one mover beat two in
 * bench/train; see Documentation/mover.md). The environment variable
 * TIERTRAIN_MOVER overrides that: a number of threads, 0..64 (0: none;
 * empty: the default; anything else makes tt_open() fail with EINVAL,
 * reported on stderr). When the default thread cannot start (a module
 * without TT_IOC_MOVER, no thread to be had) the session works without
 * it; threads TIERTRAIN_MOVER asks for that cannot start fail tt_open().
 * tt_close() stops them. A child process after fork() has none of its
 * parent's movers; its tt_close() of the inherited session leaves the
 * parent's running.
 *
 * tt_mover_start() - start @threads mover threads for @s (1..64; 0: 2).
 * tt_open()'s default thread is stopped first and replaced. They block
 * every signal and are named "tt-mover". Errors: EALREADY (started by
 * tt_mover_start() or TIERTRAIN_MOVER already), EINVAL (@threads above
 * 64), ENOTTY (a module without TT_IOC_MOVER), ENOMEM, EAGAIN (no thread
 * could be created), and the errors of TT_IOC_MOVER. The move_pages
 * backend moves every page with move_pages(2) anyway: there it starts
 * nothing and returns 0.
 */
int tt_mover_start(struct tt_session *s, unsigned int threads);

/*
 * tt_mover_stop() - stop the mover threads of @s (each finishes its order
 * first) and wait for them. Nothing to stop is fine. Orders issued from
 * then on are moved by the in-kernel engine.
 */
int tt_mover_stop(struct tt_session *s);

#ifdef __cplusplus
}
#endif

#endif /* TIERTRAIN_H */
