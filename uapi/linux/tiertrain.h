/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * tiertrain: move DNN training tensors between memory tiers (NUMA nodes).
 *
 * This header is the whole user/kernel ABI of tiertrain. It is shared,
 * unmodified, by the kernel module (kmod/), the C library (lib/), tierctl
 * (ctl/) and the tests. It is append-only: numbers below never change
 * meaning; new ioctls, commands, attributes and flags are added at the end.
 *
 * Terms
 * -----
 *
 * node         a NUMA node id as the running kernel numbers them (0 ..
 *              nr_node_ids - 1).
 * fast node    a node whose memory training data should live on while it is
 *              in use. By default every node with CPUs.
 * slow node    a node tensors are evicted to while they are idle. By default
 *              every node with memory and no CPUs (CXL expanders, NVMM,
 *              emulated memory-only nodes). The module parameters fast_nodes=
 *              and slow_nodes= override the automatic choice.
 * eviction     the slow nodes a fast node evicts to, nearest first: by the
 *   order      kernel's memory tier (the dax/kmem tier of NVDIMM and CXL
 *              memory comes after a RAM-only node), then HMAT latency or
 *              NUMA distance (TT_NODE_A_EVICT_ORDER). A full node spills to
 *              the next one.
 * page         PAGE_SIZE bytes of the caller's address space (4096 on x86-64).
 *              Ranges are page granular: addr and len of a range given to
 *              TT_IOC_REGISTER, TT_IOC_UNREGISTER or TT_IOC_MIGRATE must both
 *              be multiples of the page size.
 * supported    a mapping tiertrain can move: private anonymous memory (malloc,
 *   mapping    mmap(MAP_PRIVATE | MAP_ANONYMOUS), the heap, stacks), including
 *              memory backed by transparent huge pages (moved whole by a
 *              session's movers, else split into base pages by the
 *              in-kernel engine; see "Mover"). Not supported: file-backed
 *              or shared mappings, hugetlbfs, DAX, VM_IO and VM_PFNMAP
 *              mappings (device memory, /dev/mem).
 *
 * Character device: /dev/tiertrain
 * --------------------------------
 *
 * Each open() of /dev/tiertrain creates one *session*, bound to the memory
 * (mm) of the process that opened it. Every ioctl of a session acts on that
 * mm only: an ioctl issued by a process with another mm (for example a child
 * that inherited the descriptor across fork()) fails with EPERM. The device is
 * mode 0660, group "tiertrain" when the shipped udev rule is installed.
 *
 * Closing the last descriptor of a session (or the process exiting) cancels
 * the session's queued asynchronous migrations that have not started, waits
 * for those running, and forgets every registration. Memory is never lost or
 * changed by that: a page is always either where it was or fully migrated.
 *
 * Errors common to every ioctl:
 *   EPERM       the caller's mm is not the session's mm.
 *   EOPNOTSUPP  a flags field has a bit this version does not know, or a
 *               field documented as "must be 0" is not 0.
 *   EFAULT      the argument pointer (or a pointer inside it) is not valid
 *               user memory.
 *   ENOTTY      unknown ioctl number.
 *   EINTR       a fatal signal arrived while waiting; nothing half-done
 *               remains (pages already moved stay moved and are reported).
 *
 * Range errors (TT_IOC_REGISTER, TT_IOC_MIGRATE; TT_IOC_RESIDENCY as noted):
 *   EINVAL      len is 0, or addr or len is not a multiple of the page size.
 *   EOVERFLOW   addr + len wraps around or ends beyond the user address
 *               space.
 *   EFAULT      part of [addr, addr + len) is not mapped.
 *   EOPNOTSUPP  part of the range is not a supported mapping (see Terms).
 * A range is checked completely before anything is done, so a rejected call
 * has changed nothing.
 *
 * Node errors (TT_IOC_MIGRATE):
 *   EINVAL      node < 0 or node >= the kernel's number of possible nodes.
 *   ENODEV      the node is offline or has no memory.
 */
#ifndef _UAPI_LINUX_TIERTRAIN_H
#define _UAPI_LINUX_TIERTRAIN_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* Name of the misc device (/dev/tiertrain). */
#define TT_DEVICE_NAME		"tiertrain"
/* Version of this ABI; reported by TT_IOC_STATS and the netlink status. */
#define TT_ABI_VERSION		1
/* ioctl type byte (free in Documentation/userspace-api/ioctl/ioctl-number.rst). */
#define TT_IOC_MAGIC		0xB8
/* Highest node count any call accepts (the kernel's MAX_NUMNODES on x86-64). */
#define TT_MAX_NODES		1024

/*
 * struct tt_ioc_range - a registration (TT_IOC_REGISTER, TT_IOC_UNREGISTER)
 * @addr:  start address, page aligned.
 * @len:   length in bytes, page aligned, > 0.
 * @layer: a label stored with the registration (any value). The scheduler
 *         does not read registrations: its input is TT_EV_TENSOR_SAVED.
 * @flags: TT_RANGE_* bits.
 */
struct tt_ioc_range {
	__u64 addr;
	__u64 len;
	__u32 layer;
	__u32 flags;
};

/*
 * TT_RANGE_PERSISTENT: accepted and stored with the registration. A
 * registration made with TT_IOC_REGISTER lasts until TT_IOC_UNREGISTER or an
 * unmap whether or not it is set; one-shot versus persistent tensors are
 * expressed with TT_EV_TENSOR_SAVED and TT_EV_PERSISTENT.
 */
#define TT_RANGE_PERSISTENT	(1U << 0)
#define TT_RANGE_FLAGS_ALL	(TT_RANGE_PERSISTENT)

/*
 * TT_IOC_REGISTER - tell the session about a range of its memory.
 *
 * The range must pass the range checks above. Registered ranges are watched
 * with an MMU interval notifier: when any part of a range is unmapped
 * (munmap, mremap away, exit) the whole registration is forgotten and counted
 * in tt_ioc_stats.ranges_unmapped. Registrations do not move memory by
 * themselves.
 *
 * Errors (besides the common and range errors):
 *   EEXIST  the range overlaps a registration of this session.
 *   ENOSPC  the session already holds max_ranges registrations (module
 *           parameter, default 65536).
 *   ENOMEM  out of kernel memory.
 */
#define TT_IOC_REGISTER		_IOW(TT_IOC_MAGIC, 0x01, struct tt_ioc_range)

/*
 * TT_IOC_UNREGISTER - forget the registration with exactly this addr and len.
 * layer is ignored; flags must be 0.
 * Errors: ENOENT when no registration has that addr and len.
 */
#define TT_IOC_UNREGISTER	_IOW(TT_IOC_MAGIC, 0x02, struct tt_ioc_range)

/*
 * struct tt_migrate_result - what a migration did, in pages
 * @pages:               pages in the range.
 * @moved:               pages migrated to the target node.
 * @already_on_node:     pages that were on the target node already.
 * @skipped_not_present: pages never touched, swapped out, or the shared zero
 *                       page: nothing to move (they will be allocated where
 *                       the process runs when first touched).
 * @skipped_busy:        pages the kernel could not isolate: pinned (O_DIRECT,
 *                       RDMA, vfio, io_uring fixed buffers), locked or under
 *                       writeback at that moment, or with extra references.
 * @skipped_unsupported: pages of a kind the engine cannot move (KSM, device
 *                       memory) inside an otherwise supported mapping.
 * @skipped_no_memory:   pages left in place because the target node had no
 *                       free page for them.
 * @elapsed_ns:          wall time the migration took, in nanoseconds.
 *
 * moved + already_on_node + the skipped_* fields == pages.
 */
struct tt_migrate_result {
	__u64 pages;
	__u64 moved;
	__u64 already_on_node;
	__u64 skipped_not_present;
	__u64 skipped_busy;
	__u64 skipped_unsupported;
	__u64 skipped_no_memory;
	__u64 elapsed_ns;
};

/*
 * struct tt_ioc_migrate - argument of TT_IOC_MIGRATE
 * @addr:   start address, page aligned.
 * @len:    length in bytes, page aligned, > 0.
 * @node:   target node.
 * @flags:  TT_MIGRATE_* bits.
 * @result: out: what the call did (zero for TT_MIGRATE_ASYNC).
 */
struct tt_ioc_migrate {
	__u64 addr;
	__u64 len;
	__s32 node;
	__u32 flags;
	struct tt_migrate_result result;
};

/*
 * TT_MIGRATE_ASYNC: queue the migration on the module's unbound workqueue
 * and return at once. Its result is added to the session totals
 * (TT_IOC_STATS) when it completes; TT_IOC_FLUSH waits for it.
 */
#define TT_MIGRATE_ASYNC	(1U << 0)
#define TT_MIGRATE_FLAGS_ALL	(TT_MIGRATE_ASYNC)

/*
 * TT_IOC_MIGRATE - move the pages of [addr, addr + len) to node.
 *
 * Synchronous unless TT_MIGRATE_ASYNC: the call returns when every page has
 * been moved or skipped, and fills @result. The range does not need to be
 * registered. Pages are moved in batches (module parameter batch_pages,
 * default 512); a synchronous call on a range of several batches is spread
 * over the module's worker pool (module parameter workers, default 2) while
 * the caller waits. Data is copied before the old page is released: a page
 * is never lost, whatever fails.
 *
 * A synchronous call keeps its word: pages that are busy for a moment (in
 * another CPU's LRU batch, isolated by someone else, a huge page whose
 * split failed) are tried again, in up to 10 passes over the range with
 * sleeps of 1 ms growing to 16 ms between them, as the kernel's
 * migrate_pages() retries (no pass follows one that found @node full). A
 * transparent huge page the range covers only in part is split and the
 * range's pages of it moved (huge_split); whole ones move whole when the
 * session has a mover (see "Mover"). The call
 * returns 0 only when every present page of the range is on @node (moved
 * or already there; pages not present are not faulted in), and otherwise
 *   ENOSPC  at least one page stayed in place because @node was full;
 *   EBUSY   else: at least one page stayed busy through every pass, or
 *           is of a kind the engine cannot move (skipped_busy,
 *           skipped_unsupported: KSM or device pages, a huge page mapped
 *           by page-table entries after a partial mprotect or munmap,
 *           pages other processes map too, see below);
 * with @result filled all the same (how many pages stayed, by reason;
 * nothing was lost), plus the common, range and node errors. (Versions
 * before this contract returned 0 when pages were skipped busy or
 * unsupported.)
 *
 * Pages another process maps too (copy-on-write after fork(), as
 * move_pages(2) sees them) move only when the caller has CAP_SYS_NICE now
 * or the session's opener had it at open (as move_pages(2) with
 * MPOL_MF_MOVE_ALL: they move for every process that maps them);
 * otherwise they stay in place, count as skipped_busy (what
 * libtiertrain's move_pages(2) fallback reports for them too) and the
 * call fails with EBUSY. The same
 * holds for the scheduler's migrations, with the opener's capability;
 * pages of a mapping without read permission, whose sharing cannot be
 * read, then count as skipped_busy too.
 *
 * TT_MIGRATE_ASYNC moves in one pass: a huge page the range covers only
 * in part stays where it is when the session has a mover (huge_partial),
 * and what stays is counted in the session totals.
 * A session has at most TT_ASYNC_MAX_QUEUED asynchronous
 * migrations queued or running; one more fails with
 *   EAGAIN  (nothing queued: TT_IOC_FLUSH, then try again).
 * The sessions share the module's worker pool fairly: each runs its
 * oldest asynchronous migration in turns of a few MiB, one turn per
 * session in queue order, and a synchronous migration never waits for the
 * pool's queue (it runs in the caller when the pool is busy).
 */
#define TT_ASYNC_MAX_QUEUED	64
#define TT_IOC_MIGRATE		_IOWR(TT_IOC_MAGIC, 0x03, struct tt_ioc_migrate)

/*
 * struct tt_ioc_residency - argument of TT_IOC_RESIDENCY
 * @addr:      start address; rounded down to a page.
 * @len:       length in bytes, > 0; the end is rounded up to a page.
 * @bytes_ptr: user pointer to an array of @nr_nodes __u64; out: element i
 *             receives the bytes of the range resident on node i.
 * @nr_nodes:  elements in that array, 1 .. TT_MAX_NODES.
 * @flags:     must be 0.
 * @not_present_bytes: out: bytes of pages not resident in RAM (never
 *             touched, swapped out, the shared zero page).
 * @other_bytes: out: bytes resident on nodes >= @nr_nodes.
 */
struct tt_ioc_residency {
	__u64 addr;
	__u64 len;
	__u64 bytes_ptr;
	__u32 nr_nodes;
	__u32 flags;
	__u64 not_present_bytes;
	__u64 other_bytes;
};

/*
 * TT_IOC_RESIDENCY - where the pages of a range are, in bytes per node.
 *
 * Read only: it never faults pages in and never moves them, and it also
 * sees pages that automatic NUMA balancing has made PROT_NONE (which
 * move_pages(2) on 6.1 reports as ENOENT, or as EFAULT for a THP). Any
 * mapping type is accepted.
 * Errors: EINVAL (len 0, nr_nodes out of range), EOVERFLOW, EFAULT (a hole
 * in the range), besides the common errors.
 */
#define TT_IOC_RESIDENCY	_IOWR(TT_IOC_MAGIC, 0x04, struct tt_ioc_residency)

/*
 * struct tt_ioc_stats - session counters (TT_IOC_STATS)
 * @abi_version:      out: TT_ABI_VERSION of the running module.
 * @size:             out: bytes of this structure the module filled.
 * @registered_ranges: registrations currently held.
 * @registered_bytes: bytes they cover.
 * @ranges_unmapped:  registrations forgotten because their memory was
 *                    unmapped.
 * @migrate_calls:    TT_IOC_MIGRATE calls that passed the checks (sync and
 *                    async).
 * @async_queued:     asynchronous migrations queued.
 * @async_done:       asynchronous migrations completed.
 * @async_cancelled:  asynchronous migrations cancelled before they started.
 * @bytes_to_fast:    bytes moved to fast nodes.
 * @bytes_to_slow:    bytes moved to slow nodes.
 * @total:            sum of the results of every completed migration.
 * @iterations:       TT_EV_ITER_BEGIN events seen.
 * @events:           events of any type accepted.
 * @tensors_saved:    TT_EV_TENSOR_SAVED events that covered whole pages.
 * @tensors_ignored:  TT_EV_TENSOR_SAVED events smaller than a page after
 *                    rounding inward (nothing to move).
 * @layers_accepted:  layer-iterations evicted whole (policy "accepted").
 * @layers_modified:  layer-iterations evicted in part ("modified").
 * @layers_dropped:   layer-iterations the policy kept on the fast tier,
 *                    or whose eviction was not ordered at the forward end
 *                    (its prefetch was due already, or its previous
 *                    iteration's eviction or prefetch was still running),
 *                    or whose eviction expired in the queue (not started:
 *                    its prefetch was due before it could end; counted in
 *                    @layers_accepted or @layers_modified too, when it was
 *                    ordered: every counter here only grows).
 * @layers_unknown:   layer-iterations not in the profile (never evicted).
 * @bytes_evicted:    bytes the scheduler moved to slow nodes.
 * @bytes_prefetched: bytes the scheduler moved back to fast nodes.
 * @ontime_bytes:     evicted bytes back on the fast tier when their backward
 *                    layer began.
 * @late_bytes:       evicted bytes still on the slow tier when their
 *                    backward layer began, those its prefetch left there
 *                    (prefetch_left_bytes) included.
 * @late_count:       layer-iterations with late bytes.
 * @sync_fetched_bytes: late bytes fetched synchronously (TT_SCHED_SYNC_LATE).
 * @reprofiles:       times the profile was restarted after a deviation.
 * @er_bps:           current eviction rate estimate ER, bytes/s.
 * @pr_bps:           current prefetch rate estimate PR, bytes/s.
 * @pinned_bytes:     bytes of memory hinted TT_HINT_PIN_FAST now (whole
 *                    pages; appended with TT_IOC_HINT).
 * @archived_bytes:   bytes of memory hinted TT_HINT_ARCHIVE now.
 * @count_ahead:      TT_SCHED_COUNT and TT_SCHED_DYNAMIC: the largest k of
 *                    the layers, how many backward layers ahead of its own
 *                    a layer's prefetch is released (1..8; 0 when both
 *                    flags are off).
 * @count_released:   TT_SCHED_COUNT: prefetches released by a backward
 *                    layer's begin before their planned trigger time.
 * The execution backends (see "Mover" below; every migration of the
 * session, TT_IOC_MIGRATE and the scheduler's, counts):
 * @engine_bytes:     bytes moved by the in-kernel engine (migrate_vma).
 * @mover_bytes:      bytes moved by the session's mover threads
 *                    (move_pages(2) in the process, TT_IOC_MOVER).
 * @huge_kept:        transparent huge pages moved whole: by a mover, and
 *                    still a huge page on the target node afterwards.
 * @huge_split:       transparent huge pages split to be moved: handed to
 *                    the in-kernel engine (which splits every huge page it
 *                    moves), or moved by a mover but found as base pages
 *                    on the target node afterwards (no free huge page
 *                    there).
 * @mover_orders:     orders completed by a mover and counted.
 * @mover_fallbacks:  orders that went back to the in-kernel engine: not
 *                    completed within mover_timeout_ms, their mover died,
 *                    or the session closed.
 * @mover_late:       completions that came after their order had gone
 *                    back to the engine (ignored: counted once, by the
 *                    engine).
 * @movers:           threads registered as movers now (alive).
 * Dynamic networks (TT_SCHED_DYNAMIC; 0 when the flag was never set):
 * @dyn_signatures:   layer-sequence signatures remembered now (at most 8).
 * @dyn_predicted:    iterations planned from a signature that held.
 * @dyn_mispredicted: iterations whose predicted signature diverged (a
 *                    layer at another forward position, more or fewer
 *                    forward layers).
 * @dyn_fallback:     iterations that ran, from the start or from the
 *                    divergence on, on the layer-count fallback.
 * @dyn_misses:       entries written to the miss log: new signatures,
 *                    failed predictions, layers late in a fallback; each
 *                    is also a TT_TRACE_MISS trace event.
 * @last_miss_iter:   iteration of the newest miss (0: none).
 * @last_miss_layer:  its layer (0: a new signature, or a forward pass that
 *                    ended early).
 * @last_miss_kind:   its kind: TT_TRACE_F_MISS_NEW, _PREDICT or _LATE.
 * Fast-tier budget (see "Fast-tier budget" under TT_IOC_SET_SCHED):
 * @budget_bytes:     the budget in force now: the smaller of the session's
 *                    own and its fair share of the module's (0: none).
 * @fast_registered_bytes: the session's registered bytes counted on the
 *                    fast tier now (kept whether or not a budget is set).
 * @fast_peak_bytes:  the highest @fast_registered_bytes after a call
 *                    returned or a prefetch was admitted, since the
 *                    session opened.
 * @victims:          victim evictions: saved tensors (or pieces of them)
 *                    evicted to make room.
 * @victim_bytes:     bytes they moved to the slow tier.
 * @victim_archived_bytes: of those, bytes hinted TT_HINT_ARCHIVE.
 * @victims_skipped_pages: pages of victims that could not move (pinned or
 *                    busy, not present, unsupported, no room on the slow
 *                    node); data stays where it is.
 * @budget_waits:     times a prefetch stopped to wait for room.
 * @budget_overruns:  calls that returned over the budget because no
 *                    victim could be found.
 * @heat_wf:          heat weight of the future access count, 1024 = 1.0.
 * @heat_wr:          heat weight of the distance to the next use.
 * @heat_ws:          heat weight of the size.
 * @heat_wl:          heat weight of the lifetime.
 * @huge_partial:     huge pages an asynchronous TT_IOC_MIGRATE's range
 *                    only partly covered, left where they were because
 *                    the session has a mover (see "Mover"); their pages
 *                    in the range count as skipped_unsupported in the
 *                    migration's result. A synchronous TT_IOC_MIGRATE,
 *                    the scheduler and hints split them instead
 *                    (huge_split).
 * @large_pte:        pages of large folios mapped by page-table entries
 *                    (a transparent huge page whose pmd a partial munmap,
 *                    mprotect or madvise split; multi-size THP, Linux 6.8
 *                    and later) that the in-kernel engine met and could not
 *                    move: migrate_vma skips them and the kernel exports
 *                    nothing that splits them, so they stayed where they
 *                    were. Their pages also count as skipped_unsupported
 *                    in the migration's result.
 * @kmem_bytes:       kernel memory the session holds now in arrays whose
 *                    size its input decides (the scheduler's eviction chunk
 *                    lists, the fast-tier budget's scratch, the hint set),
 *                    in bytes; charged to the memory cgroup of the process
 *                    that caused each allocation. Returns to what it was
 *                    once the evictions are back (the scratch and the hint
 *                    set stay until close).
 * @async_failed:     asynchronous migrations that ended early because of an
 *                    error (EINTR: stopped; ENOMEM: out of kernel memory):
 *                    counted here, not in @async_done; their pages so far
 *                    are in @total, and the next TT_IOC_FLUSH returns the
 *                    error.
 * @prefetch_left_bytes: bytes the scheduler's prefetches (and the
 *                    prefetches of TT_SCHED_SYNC_LATE) could not bring
 *                    back to the fast node: a chunk whose pages stay busy,
 *                    or find the fast node full, or read as not present
 *                    where the eviction moved them (as a page another
 *                    migration, memory offlining for one, holds at that
 *                    instant does), is moved again in up to
 *                    TT_SCHED_FETCH_PASSES passes with a growing pause;
 *                    the pages still not moved count here (each time a
 *                    prefetch leaves them) and in a TT_TRACE_LEFT_SLOW
 *                    trace event. They stay on the slow node, readable,
 *                    until the session's next TT_EV_ITER_BEGIN: that call
 *                    moves them back to the fast node before it returns
 *                    (pages a running eviction holds excepted), and again
 *                    at each iteration begin while some stay busy or find
 *                    the node full, 8 times at most
 *                    (left_returned_bytes); the layer's next prefetch or
 *                    a TT_IOC_MIGRATE moves them too. At most 16 such
 *                    spans (chunks, merged where they touch) are kept
 *                    for that; a TT_HINT_ARCHIVE hint drops those it
 *                    touches.
 * @landed_bytes:     bytes moved back to the fast node because a mover
 *                    completed an order of the scheduler after it had gone
 *                    back to the engine (mover_late), landing them where
 *                    the scheduler no longer held them evicted
 *                    (Documentation/mover.md, "A late landing is undone");
 *                    pages of chunks an episode still held evicted are not
 *                    counted here: its prefetch fetches them.
 * @rate_probes:      rate probes the scheduler ran: while the session has
 *                    no measured rate (none set with TT_IOC_SET_SCHED, no
 *                    migration sampled yet), each iteration that only
 *                    profiles evicts up to 1 MiB of the first layer that
 *                    ends its forward pass with at least 64 KiB saved and
 *                    brings it straight back (none smaller than
 *                    min_migrate_kib), so the first plan uses the
 *                    rates these two moves measured, not the seeds
 *                    (Documentation/scheduler.md, "Rates"). Their bytes
 *                    count in bytes_evicted, bytes_prefetched and
 *                    ontime_bytes or late_bytes like any eviction's, not
 *                    in layers_accepted or layers_modified.
 * @left_returned_bytes: bytes of prefetch_left_bytes that an iteration
 *                    begin's retry moved back to the fast node (also in
 *                    bytes_prefetched).
 *
 * Extensible: the kernel fills min(_IOC_SIZE(cmd), its own size) bytes, so
 * an older binary keeps working when fields are appended.
 */
struct tt_ioc_stats {
	__u32 abi_version;
	__u32 size;
	__u64 registered_ranges;
	__u64 registered_bytes;
	__u64 ranges_unmapped;
	__u64 migrate_calls;
	__u64 async_queued;
	__u64 async_done;
	__u64 async_cancelled;
	__u64 bytes_to_fast;
	__u64 bytes_to_slow;
	struct tt_migrate_result total;
	/* appended in ABI 1 by the scheduler (see "Scheduler" below) */
	__u64 iterations;
	__u64 events;
	__u64 tensors_saved;
	__u64 tensors_ignored;
	__u64 layers_accepted;
	__u64 layers_modified;
	__u64 layers_dropped;
	__u64 layers_unknown;
	__u64 bytes_evicted;
	__u64 bytes_prefetched;
	__u64 ontime_bytes;
	__u64 late_bytes;
	__u64 late_count;
	__u64 sync_fetched_bytes;
	__u64 reprofiles;
	__u64 er_bps;
	__u64 pr_bps;
	__u64 pinned_bytes;
	__u64 archived_bytes;
	/* appended with TT_SCHED_COUNT */
	__u64 count_ahead;
	__u64 count_released;
	/* appended with the mover (TT_IOC_MOVER) */
	__u64 engine_bytes;
	__u64 mover_bytes;
	__u64 huge_kept;
	__u64 huge_split;
	__u64 mover_orders;
	__u64 mover_fallbacks;
	__u64 mover_late;
	__u64 movers;
	/* appended with TT_SCHED_DYNAMIC */
	__u64 dyn_signatures;
	__u64 dyn_predicted;
	__u64 dyn_mispredicted;
	__u64 dyn_fallback;
	__u64 dyn_misses;
	__u64 last_miss_iter;
	__u64 last_miss_layer;
	__u64 last_miss_kind;
	/* appended with the fast-tier budget */
	__u64 budget_bytes;
	__u64 fast_registered_bytes;
	__u64 fast_peak_bytes;
	__u64 victims;
	__u64 victim_bytes;
	__u64 victim_archived_bytes;
	__u64 victims_skipped_pages;
	__u64 budget_waits;
	__u64 budget_overruns;
	__u64 heat_wf;
	__u64 heat_wr;
	__u64 heat_ws;
	__u64 heat_wl;
	/* appended with the partial huge page rule (see "Mover") */
	__u64 huge_partial;
	/* appended with the large folios the engine cannot move */
	__u64 large_pte;
	/* appended with the session's kernel memory (issue 14) */
	__u64 kmem_bytes;
	/* appended with the asynchronous error reporting */
	__u64 async_failed;
	/* appended with the prefetch retries (issue 15) */
	__u64 prefetch_left_bytes;
	/* appended with the late-landing repair (issue 25) */
	__u64 landed_bytes;
	/* appended with the rate probe (issue 27) */
	__u64 rate_probes;
	/* appended with the retry of what prefetches left (issue 24) */
	__u64 left_returned_bytes;
};

/* Passes of the engine over a prefetched chunk, at most (see above). */
#define TT_SCHED_FETCH_PASSES	4

/* TT_IOC_STATS - read the session counters. */
#define TT_IOC_STATS		_IOR(TT_IOC_MAGIC, 0x05, struct tt_ioc_stats)

/*
 * TT_IOC_FLUSH - wait until every asynchronous migration of the session
 * queued before the call has completed. Errors: EINTR on a fatal signal.
 * Then it returns the error of the first asynchronous migration that
 * failed since the previous TT_IOC_FLUSH (counted in async_failed, not in
 * async_done): EINTR (stopped before its end) or ENOMEM (out of kernel
 * memory); the error is cleared. 0 means every one ended normally.
 */
#define TT_IOC_FLUSH		_IO(TT_IOC_MAGIC, 0x06)

/*
 * Scheduler
 * ---------
 *
 * A training process reports its iterations, layers and saved tensors as
 * events; the session's scheduler then evicts each layer's saved tensors to
 * a slow node right after the layer's forward pass ends and prefetches them
 * back to the fast node so they arrive before the layer's backward pass
 * begins, following TierTrain's queueing system (Documentation/scheduler.md).
 *
 * Timeline. Times are nanoseconds since TT_EV_ITER_BEGIN. For each layer
 * the scheduler keeps an exponentially weighted average over iterations of
 * its forward end (te_F), backward start (ts_B) and saved bytes (sz). The
 * first profile_iters iterations only record (default 1, module parameter
 * profile_iters); from then on each iteration is planned at its
 * TT_EV_ITER_BEGIN from the profile and the measured eviction/prefetch rates
 * (ER, PR: bytes/s per direction, averaged from the scheduler's own
 * migrations, seeded by the module parameters er_seed_mbps/pr_seed_mbps,
 * which the first sample of each direction replaces).
 *
 * What moves. At TT_EV_LAYER_END(TT_FWD) of a planned layer the first
 * final-size bytes (page granular) of the ranges saved for it in this
 * iteration, in the order they were reported, are queued for eviction on the
 * evict worker pool (module parameter evict_workers). A high-resolution timer
 * queues their prefetch on the prefetch pool (prefetch_workers) at the
 * planned trigger time. At TT_EV_LAYER_BEGIN(TT_BWD) evicted bytes still on
 * the slow node are counted late (late_bytes, late_count); with
 * TT_SCHED_SYNC_LATE the call fetches them before it returns. A late layer's
 * prefetch lead time grows by the lateness measured, and shrinks slowly back
 * while it is on time. At TT_EV_LAYER_END(TT_BWD) the layer's saved ranges
 * are forgotten unless saved with TT_EV_PERSISTENT.
 *
 * Deviations. A layer id not in the profile is never evicted (counted in
 * layers_unknown). When an iteration's layer set differs from the profile,
 * or it runs more than twice as long as the profile, the profile restarts
 * (reprofiles): nothing is evicted until profile_iters iterations have been
 * recorded again. Events out of order (a backward end without a begin, a
 * layer begin twice) never break anything: they are accepted and the layer
 * falls back to not being evicted in that iteration.
 */

/* enum tt_event_type - what a struct tt_event reports */
enum tt_event_type {
	TT_EV_ITER_BEGIN = 1,
	TT_EV_LAYER_BEGIN = 2,
	TT_EV_LAYER_END = 3,
	TT_EV_TENSOR_SAVED = 4,
};

/* Event flags. Layer events carry exactly one of TT_FWD and TT_BWD. */
#define TT_FWD			(1U << 0)
#define TT_BWD			(1U << 1)
/* TT_EV_TENSOR_SAVED: keep the range registered across iterations. */
#define TT_EV_PERSISTENT	(1U << 2)
/* @ts_ns holds a CLOCK_MONOTONIC time from the caller; else the kernel's. */
#define TT_EV_TIMESTAMP		(1U << 3)
#define TT_EV_FLAGS_ALL		(TT_FWD | TT_BWD | TT_EV_PERSISTENT | TT_EV_TIMESTAMP)

/*
 * struct tt_event - one scheduler event
 * @type:  enum tt_event_type.
 * @flags: TT_FWD/TT_BWD (layer events), TT_EV_PERSISTENT (tensor saved),
 *         TT_EV_TIMESTAMP (any).
 * @layer: layer id (layer and tensor events; must be 0 for TT_EV_ITER_BEGIN).
 * @ts_ns: with TT_EV_TIMESTAMP, CLOCK_MONOTONIC in ns; must not go backwards
 *         within a session. Otherwise must be 0.
 * @addr:  TT_EV_TENSOR_SAVED: start of the tensor's memory (any alignment).
 *         Other events: 0.
 * @len:   TT_EV_TENSOR_SAVED: its length in bytes. The range is rounded
 *         inward to whole pages: a tensor that covers no whole page is
 *         counted in tensors_ignored and otherwise ignored. Other events: 0.
 *
 * The range of a saved tensor is checked when the event is submitted, as
 * far as it costs no page-table walk: it must end inside the user address
 * space without wrapping around (else EOVERFLOW, even when it covers no
 * whole page) and its whole pages must be mapped (else EFAULT; a tensor of
 * length 0 or covering no whole page is not looked up). Whether the mapping
 * is one the module supports is checked when it is evicted: a range that is
 * no longer mapped or not a supported mapping is skipped and forgotten then.
 * The bytes of the tensors a session holds (overlaps counted each time)
 * must add up to less than 2^64 (else EOVERFLOW). An eviction takes at most
 * as many bytes of a layer's tensors as the machine has RAM.
 */
struct tt_event {
	__u16 type;
	__u16 flags;
	__u32 layer;
	__u64 ts_ns;
	__u64 addr;
	__u64 len;
};

/*
 * TT_IOC_EVENT - submit one event.
 * Errors: EINVAL (unknown type, a layer event without exactly one phase,
 * a flag of another event type, a non-zero field that must be 0, a
 * timestamp going backwards),
 * EOPNOTSUPP (unknown flag bit), ENOSPC (more than max_ranges tensors saved
 * and not yet forgotten, or a layer id beyond the max_layers distinct ids a
 * session may report, module parameter, default 4096), besides the common
 * errors. A saved tensor's range (see struct tt_event): EOVERFLOW (it wraps
 * around or ends beyond the user address space, or the session's saved
 * bytes would wrap), EFAULT (part of its whole pages is not mapped), EINTR
 * (a fatal signal while the mappings were looked up).
 */
#define TT_IOC_EVENT		_IOW(TT_IOC_MAGIC, 0x07, struct tt_event)

/*
 * struct tt_ioc_events - argument of TT_IOC_EVENTS
 * @events_ptr: user pointer to @count struct tt_event.
 * @count:      number of events, at most 4096.
 * @flags:      must be 0.
 * @done:       out: events processed before the first error (== @count on
 *              success).
 * @reserved:   must be 0.
 */
struct tt_ioc_events {
	__u64 events_ptr;
	__u32 count;
	__u32 flags;
	__u32 done;
	__u32 reserved;
};

/*
 * TT_IOC_EVENTS - submit events in order in one call; stops at the first
 * invalid event and returns its error (EINVAL also for @count > 4096).
 */
#define TT_IOC_EVENTS		_IOWR(TT_IOC_MAGIC, 0x08, struct tt_ioc_events)

/*
 * struct tt_ioc_sched - per-session scheduler settings
 * @valid:         TT_SCHED_SET_* bits: which fields below TT_IOC_SET_SCHED
 *                 applies (the others keep their values). TT_IOC_GET_SCHED
 *                 sets all the bits it knows.
 * @flags:         TT_SCHED_* behaviour bits (applied with TT_SCHED_SET_FLAGS).
 * @profile_iters: iterations that only record the profile, 1..1000.
 * @budget_mib:    the session's fast-tier budget in MiB (applied with
 *                 TT_SCHED_SET_BUDGET; 0 means no budget of its own, the
 *                 default): its registered bytes on the fast tier stay
 *                 within it (see "Fast-tier budget" below). Without
 *                 TT_SCHED_SET_BUDGET in @valid it must be 0 (it was the
 *                 member @reserved, which older programs leave 0).
 * @stay_ns:       stay time ST in ns (minimum time evicted data stays slow);
 *                 0 is allowed.
 * @er_bps:        eviction rate to assume now (bytes/s, > 0); the measured
 *                 average continues from it.
 * @pr_bps:        prefetch rate to assume now (bytes/s, > 0). Plans take
 *                 the prefetches at the slow end of the measured samples
 *                 (Documentation/scheduler.md, "Plan"); a rate set here
 *                 clears it, so the next plan takes @pr_bps as set.
 * @slow_node:     node to evict to (only that node: pages it has no room
 *                 for stay in place), or -1 for automatic (the eviction
 *                 order of the fast node the layer ran on: the nearest slow
 *                 node with room, see "eviction order").
 * @fast_node:     node to prefetch to, or -1 for automatic (the node the
 *                 tensor was on before eviction).
 */
struct tt_ioc_sched {
	__u32 valid;
	__u32 flags;
	__u32 profile_iters;
	union {
		__u32 reserved;		/* the name before TT_SCHED_SET_BUDGET */
		__u32 budget_mib;
	};
	__u64 stay_ns;
	__u64 er_bps;
	__u64 pr_bps;
	__s32 slow_node;
	__s32 fast_node;
};

#define TT_SCHED_SET_FLAGS	(1U << 0)
#define TT_SCHED_SET_PROFILE	(1U << 1)
#define TT_SCHED_SET_STAY	(1U << 2)
#define TT_SCHED_SET_RATES	(1U << 3)
#define TT_SCHED_SET_NODES	(1U << 4)
#define TT_SCHED_SET_BUDGET	(1U << 5)
#define TT_SCHED_SET_ALL	(TT_SCHED_SET_FLAGS | TT_SCHED_SET_PROFILE | \
				 TT_SCHED_SET_STAY | TT_SCHED_SET_RATES | \
				 TT_SCHED_SET_NODES | TT_SCHED_SET_BUDGET)

/*
 * TT_SCHED_SYNC_LATE: at TT_EV_LAYER_BEGIN(TT_BWD), fetch the layer's late
 * bytes synchronously before the call returns (default off: the backward
 * pass then reads them from the slow node while the prefetch completes).
 */
#define TT_SCHED_SYNC_LATE	(1U << 0)
/*
 * TT_SCHED_OFF: record events and the profile but never move anything (a
 * baseline for measurements).
 */
#define TT_SCHED_OFF		(1U << 1)
/*
 * TT_SCHED_ANCHOR (extension of TierTrain, in TT_SCHED_DEFAULT_FLAGS): the prefetch
 * trigger times follow the iteration as it runs. The plan's times are
 * from the profile (an average); at every layer event of a planned layer
 * the scheduler takes how much later (or earlier) it came than its
 * profiled time and shifts every prefetch not yet started by as much, so
 * an iteration that runs slower than the profile as a whole does not find
 * its prefetches late, nor a faster one early.
 */
#define TT_SCHED_ANCHOR		(1U << 2)
/*
 * TT_SCHED_ALAP (extension of TierTrain, in TT_SCHED_DEFAULT_FLAGS): plan the prefetch
 * queue as late as possible instead of eq. 8-10. Layers are placed in
 * decreasing order of their backward begin less their lead (the last
 * backward layer first when no lead reorders them); each prefetch ends by
 * its backward begin (less its lead) or by the start of the prefetch
 * placed after it, whichever is earlier, and starts no earlier than its
 * eviction can have ended plus the stay time. A large tensor may then use
 * the queue during several earlier backward layers instead of only the
 * one right before its own, so less is cut where the saved size shrinks
 * from one layer to the next; tensors may be back earlier than just in
 * time. `tierctl simulate --alap` shows the plan.
 */
#define TT_SCHED_ALAP		(1U << 3)
/*
 * TT_SCHED_DEFER_LATE (extension, in TT_SCHED_DEFAULT_FLAGS): at TT_EV_LAYER_BEGIN
 * (TT_BWD), the layer's bytes still on the slow node stay there while its
 * backward pass reads them, instead of being moved back under the reader
 * (a page the reader touches while its batch is being migrated waits for
 * the batch): a queued prefetch is taken back, a running one stops after
 * its current batch, an eviction not started is dropped and a running one
 * stops. What is still slow comes back at the layer's TT_EV_LAYER_END
 * (TT_BWD). The bytes count as late either way. TT_SCHED_SYNC_LATE, which
 * fetches them at once instead, takes precedence when both are set.
 */
#define TT_SCHED_DEFER_LATE	(1U << 4)
/*
 * TT_SCHED_MERGE (extension after DeepTM's aggregation, default off):
 * contiguous batching. The pieces an eviction takes from the layer's
 * tensors are sorted by address and those that touch (one tensor ending
 * where the next begins) are joined into one migration batch (up to the
 * batch_pages parameter), so many small adjacent tensors move in a few
 * large batches instead of one small batch each. A joined batch whose
 * check fails (memory unmapped, a mapping the engine cannot move) is
 * skipped whole and forgets none of its tensors.
 */
#define TT_SCHED_MERGE		(1U << 5)
/*
 * TT_SCHED_COUNT (extension after DyNN-Offload's layer-count trigger, in
 * TT_SCHED_DEFAULT_FLAGS): a planned prefetch fires at its trigger time or when the
 * backward pass reaches the layer k places before it in the profiled
 * backward order, whichever comes first. The backward begin of the layer
 * of rank r (1 = the first backward layer) releases the prefetches of the
 * layers of rank r+1..r+k, each layer with its own k: 1 at first, one more
 * each time the layer is late although its eviction had ended before its
 * backward pass and its prefetch did not wait in the queue (to at most 8),
 * one less after 16 iterations in a row on time; stats count_ahead shows
 * the largest. Steps whose layers vary in pace (a CPU-bound framework, a
 * shared host) otherwise find the prefetches timed from the profile's
 * averages late whenever the backward pass runs faster than average.
 * With TT_SCHED_ANCHOR, the released prefetch of a layer whose transfer
 * (at the session's prefetch rate, stats pr_bps) takes 1/128 of the
 * profiled iteration or more fires no earlier than k such transfer times
 * before its anchored trigger time: released early, but not back on the
 * fast tier a whole backward layer before it is used.
 */
#define TT_SCHED_COUNT		(1U << 6)
/*
 * TT_SCHED_DYNAMIC (extension after DyNN-Offload, default off): dynamic
 * networks, whose layer sequence differs from one iteration to the next
 * (conditional layers, variable depth). The scheduler keeps one profile
 * per layer-sequence signature (a hash of the layer ids in forward-end
 * order), up to 8, the least recently seen replaced. An iteration is
 * planned from the signature seen most often if it holds a majority of the
 * iterations remembered, as the reference plans from its one profile but
 * with each planned eviction ordered 2 forward positions after the
 * layer's forward end. When the iteration's forward sequence departs from
 * it (a layer at another position, more or fewer layers), or when no
 * signature is predicted, the rest of the iteration runs on the
 * layer-count fallback: a forward layer is evicted whole once the forward
 * pass is at least 2 positions past it (the last 2 layers of a pass are
 * never evicted) and only if, should the backward pass begin at once, its
 * eviction and prefetch and every prefetch still out would be back in
 * time, estimated from the measured rates and the backward times seen per
 * layer, with a 25 % margin; a layer that does not fit is considered again
 * at the following forward ends (the deeper the pass, the later its
 * need). Every prefetch still out is released when the backward pass
 * begins the layer k forward positions after it, k being the layer's k
 * adapted as for TT_SCHED_COUNT or the positions whose backward times
 * cover its transfer, whichever is larger. Deviations never restart the profile
 * with this flag. Misses (new signature, failed prediction, late layer in
 * a fallback) go to the miss log: stats dyn_* and last_miss_*, trace
 * events TT_TRACE_MISS.
 */
#define TT_SCHED_DYNAMIC	(1U << 7)
/*
 * TT_SCHED_REFERENCE: TierTrain's reference semantics (the paper's eq. 2-10:
 * prefetch triggers at the profiled times, the prefetch queue of eq. 8-10,
 * late bytes moved back at the backward begin) and no extension. It
 * combines with TT_SCHED_SYNC_LATE and TT_SCHED_OFF; with any bit of
 * TT_SCHED_EXTENSIONS TT_IOC_SET_SCHED fails with EINVAL. Flags 0 behave
 * the same (no extension bit set); the bit names the choice, so a session
 * that asks for it keeps it whatever TT_SCHED_DEFAULT_FLAGS becomes.
 */
#define TT_SCHED_REFERENCE	(1U << 8)
#define TT_SCHED_FLAGS_ALL	(TT_SCHED_SYNC_LATE | TT_SCHED_OFF | \
				 TT_SCHED_ANCHOR | TT_SCHED_ALAP | \
				 TT_SCHED_DEFER_LATE | TT_SCHED_MERGE | \
				 TT_SCHED_COUNT | TT_SCHED_DYNAMIC | \
				 TT_SCHED_REFERENCE)
/* The extensions of TierTrain's reference semantics. */
#define TT_SCHED_EXTENSIONS	(TT_SCHED_ANCHOR | TT_SCHED_ALAP | \
				 TT_SCHED_DEFER_LATE | TT_SCHED_MERGE | \
				 TT_SCHED_COUNT | TT_SCHED_DYNAMIC)
/*
 * TT_SCHED_DEFAULT_FLAGS: the flags every new session starts with, chosen
 * by measurement (bench/README.md): the kernel module's parameters
 * sync_late, anchor, alap, defer_late, merge, count and dynamic default to
 * these bits (a parameter changed at load or in sysfs changes the flags
 * of the sessions opened after it), libtiertrain's move_pages backend
 * starts its sessions with them, and tiertrain.torch.attach() keeps them
 * unless told otherwise. TT_SCHED_REFERENCE asks for the reference
 * semantics instead.
 */
#define TT_SCHED_DEFAULT_FLAGS	(TT_SCHED_ANCHOR | TT_SCHED_ALAP | \
				 TT_SCHED_DEFER_LATE | TT_SCHED_COUNT)

/*
 * TT_IOC_SET_SCHED / TT_IOC_GET_SCHED - change / read the session's
 * scheduler settings. Defaults come from the module parameters
 * profile_iters (1), stay_time_us (1000), er_seed_mbps and pr_seed_mbps
 * (1024 each), budget_mib (none), and the flag parameters (sync_late,
 * anchor, alap, defer_late, merge, count, dynamic: TT_SCHED_DEFAULT_FLAGS).
 * TT_SCHED_SET_FLAGS replaces the flags as a whole. Errors: EOPNOTSUPP
 * (unknown valid or flags bits, even when TT_SCHED_SET_FLAGS is not set;
 * budget_mib not 0 without TT_SCHED_SET_BUDGET), EINVAL (a value out of
 * range; TT_SCHED_REFERENCE with a bit of TT_SCHED_EXTENSIONS), ENODEV (a
 * node that is offline or has no memory). A budget lowered below what the
 * session holds on the fast tier makes room (evicts victims, see below)
 * before TT_IOC_SET_SCHED returns.
 *
 * Fast-tier budget (after DeepTM's eq. 7 and CachedArrays' evictfrom;
 * off unless budget_mib or the module setting budget_mib is set). The
 * budget counts a session's registered bytes on the fast tier: the bytes
 * of the saved tensors its scheduler holds (fast_registered_bytes in
 * TT_IOC_STATS), less what its evictions moved to the slow tier, with a
 * prefetch counted on the fast tier from the moment it is admitted, before
 * it moves. The budget in force (budget_bytes) is the smaller of the
 * session's own budget_mib and its share of the module's budget_mib:
 * max-min fair among the open sessions that hold registered bytes, each
 * demanding what it holds (capped by its own budget), so a session
 * holding less than an equal split keeps all of it and the others split
 * the rest equally; the sum of the sessions' registered bytes on the fast
 * tier also stays within the module's budget.
 *   Registration: a TT_EV_TENSOR_SAVED that takes the session over makes
 *   room before the call returns: it waits for the session's evictions
 *   already queued or running when they free enough, else evicts
 *   victims itself.
 *   Admission: a prefetch moves a migration batch only when it fits;
 *   otherwise victims colder than the layer being prefetched are evicted
 *   first; when there are none the prefetch waits (budget_waits) and is
 *   retried when registered memory is released (a backward pass ends, an
 *   iteration begins, tensors are retired or unmapped, another session
 *   releases or closes, a budget grows). A layer whose backward pass has
 *   begun is the hottest: its prefetch may evict any other victim.
 *   Victims: the session's own saved tensors on the fast tier with no
 *   migration in flight and whose layer's backward pass is not running:
 *   pages hinted TT_HINT_ARCHIVE first, then tensors by increasing heat
 *   (DeepTM: future access count, minus distance to the next use, size
 *   and lifetime, normalised, with weights adjusted toward the budget;
 *   heat_w* in TT_IOC_STATS). Pages hinted TT_HINT_PIN_FAST are never
 *   victims. Evicted bytes come back, victims or planned, at the
 *   planned trigger time, at the latest at their layer's backward begin,
 *   and whenever the budget has room (after a release, or once victims
 *   made it), nearest next use first. Pages a
 *   victim eviction cannot move (pinned, not present, no room on the slow
 *   node) are skipped and counted (victims_skipped_pages); data is never
 *   lost and no call waits for room forever: when no victim can be found
 *   the call returns over budget (budget_overruns).
 * So after any call returns, the session's registered bytes on the fast
 * tier are within its budget plus one scheduler chunk (batch_pages, rounded
 * up to 2 MiB; see the config keys), and the sessions together within the
 * module's budget plus one chunk each, except that a session which could
 * not get within its budget in force (its remaining bytes are in use,
 * pinned or not present, so no victim gives them back; or it is
 * TT_SCHED_OFF) counts in the module's total at most at that budget, until
 * its next attempt: registered bytes a session cannot be made to give back
 * never take the other sessions' shares.
 * A session closing gives its share to the others; nothing is forced on
 * them. Only the kernel backend has budgets: libtiertrain's move_pages
 * backend rejects a budget_mib other than 0 (EOPNOTSUPP).
 */
#define TT_IOC_SET_SCHED	_IOW(TT_IOC_MAGIC, 0x09, struct tt_ioc_sched)
#define TT_IOC_GET_SCHED	_IOR(TT_IOC_MAGIC, 0x0a, struct tt_ioc_sched)

/*
 * struct tt_layer_info - what the scheduler knows and did for one layer
 * @layer:          layer id.
 * @status:         enum tt_layer_status of the current plan.
 * @saved_bytes:    profile: average saved bytes (sz).
 * @fwd_end_ns:     profile: average te_F.
 * @bwd_start_ns:   profile: average ts_B.
 * @final_bytes:    plan: bytes to evict and prefetch (szP).
 * @prefetch_ns:    plan: prefetch trigger time (includes @lead_ns).
 * @lead_ns:        extra lead time the plan gives the prefetch: learned
 *                  from late prefetches, and under TT_SCHED_COUNT at least
 *                  the turn's floor for a layer no backward step releases
 *                  in time (Documentation/scheduler.md).
 * The last iteration, in ns from its start (0 = did not happen):
 * @last_fwd_end_ns:     forward end.
 * @last_evict_start_ns: eviction started.
 * @last_evict_end_ns:   eviction finished.
 * @last_prefetch_start_ns: prefetch started.
 * @last_prefetch_end_ns:   prefetch finished.
 * @last_bwd_start_ns:   backward begin.
 * @last_evicted_bytes:  bytes evicted.
 * @last_late_bytes:     bytes still slow at backward begin.
 */
struct tt_layer_info {
	__u32 layer;
	__u32 status;
	__u64 saved_bytes;
	__u64 fwd_end_ns;
	__u64 bwd_start_ns;
	__u64 final_bytes;
	__u64 prefetch_ns;
	__u64 lead_ns;
	__u64 last_fwd_end_ns;
	__u64 last_evict_start_ns;
	__u64 last_evict_end_ns;
	__u64 last_prefetch_start_ns;
	__u64 last_prefetch_end_ns;
	__u64 last_bwd_start_ns;
	__u64 last_evicted_bytes;
	__u64 last_late_bytes;
};

/*
 * enum tt_layer_status - a layer's state in the plan
 * @TT_LAYER_PROFILING: no plan yet (profiling).
 * @TT_LAYER_ACCEPTED:  evicted whole.
 * @TT_LAYER_MODIFIED:  evicted in part.
 * @TT_LAYER_DROPPED:   kept on the fast tier by the policy.
 */
enum tt_layer_status {
	TT_LAYER_PROFILING,
	TT_LAYER_ACCEPTED,
	TT_LAYER_MODIFIED,
	TT_LAYER_DROPPED,
};

/*
 * struct tt_ioc_layers - argument of TT_IOC_LAYERS
 * @info_ptr: user pointer to @count struct tt_layer_info.
 * @count:    in: elements available; out: layers known (may be larger: call
 *            again with a bigger array).
 * @flags:    must be 0.
 */
struct tt_ioc_layers {
	__u64 info_ptr;
	__u32 count;
	__u32 flags;
};

/* TT_IOC_LAYERS - the scheduler's per-layer view, in layer id order. */
#define TT_IOC_LAYERS		_IOWR(TT_IOC_MAGIC, 0x0b, struct tt_ioc_layers)

/*
 * Semantic hints (after CachedArrays): what the caller knows about a range
 * of its memory that the schedule cannot see. Bits of struct tt_ioc_hint's
 * @hint:
 *
 * TT_HINT_WILL_USE: the range is needed soon: the saved tensors it
 *   overlaps come back to the fast node now (queued on the prefetch
 *   workers), ahead of the schedule, and a queued eviction of their layer
 *   is dropped. Not remembered: the next iteration's plan evicts them as
 *   usual.
 * TT_HINT_PIN_FAST: never evict the range: the scheduler skips its pages
 *   (rounded outward to whole pages) in every later eviction, and what of
 *   the tensors it overlaps is evicted now comes back.
 * TT_HINT_ARCHIVE: the range is cold data to evict first under fast-tier
 *   pressure, and not otherwise: the schedule does not evict it (as
 *   TT_HINT_PIN_FAST) until a fast-tier budget needs room.
 * TT_HINT_RETIRE: the range is done with: queued work on the tensors it
 *   overlaps is cancelled, what of them is evicted comes back (data is
 *   never discarded), the scheduler forgets those tensors (one-shot and
 *   persistent alike), and earlier PIN_FAST / ARCHIVE hints on the range
 *   end.
 *
 * A later PIN_FAST or ARCHIVE hint on a range replaces earlier ones on it.
 * TT_HINT_WILL_USE may be combined with TT_HINT_PIN_FAST; ARCHIVE and
 * RETIRE go alone.
 *
 * Plain pages. Every hint also acts on the pages of the range that are
 * not saved tensors of the session ("plain" pages: memory the program
 * mapped itself, moved with TT_IOC_MIGRATE, or never reported), as far as
 * the caller maps them with a supported mapping (private anonymous);
 * unmapped parts of the range are skipped at no cost:
 *   TT_HINT_WILL_USE and TT_HINT_PIN_FAST move the plain pages to the
 *   session's fast node (its fast_node, else the node of the CPU the call
 *   runs on) synchronously, in the calling thread, as TT_IOC_MIGRATE
 *   would: when the call returns 0 they are there. Pages that cannot move
 *   (busy, not present) stay and are counted as for TT_IOC_MIGRATE in
 *   TT_IOC_STATS; when the fast node has no room for some, the call fails
 *   with ENOSPC after the hint was recorded. The saved tensors the range
 *   overlaps come back through the scheduler as above (asynchronously,
 *   admitted under the fast-tier budget).
 *   TT_HINT_ARCHIVE: the plain pages leave first under fast-tier
 *   pressure: when the session's next victim round runs (its budget needs
 *   room, at a TT_EV_TENSOR_SAVED in the session's process), they move to
 *   the slow tier before any saved tensor is chosen; then the round makes
 *   its room from saved tensors as before (plain pages are not counted in
 *   the budget). Each ARCHIVE hint sends its plain pages out once; a
 *   later WILL_USE or PIN_FAST on the range brings them back and arms it
 *   again. Without a budget (or with the move_pages backend, which has
 *   none) there is no pressure and they stay.
 *   TT_HINT_PIN_FAST also means the plain pages are never sent out (it
 *   replaces an ARCHIVE hint on the range).
 *   TT_HINT_RETIRE moves no plain page (data is never discarded nor
 *   moved); it ends the range's PIN_FAST and ARCHIVE hints, so its plain
 *   pages no longer leave under pressure.
 */
#define TT_HINT_WILL_USE	(1U << 0)
#define TT_HINT_PIN_FAST	(1U << 1)
#define TT_HINT_ARCHIVE		(1U << 2)
#define TT_HINT_RETIRE		(1U << 3)
#define TT_HINT_ALL		(TT_HINT_WILL_USE | TT_HINT_PIN_FAST | \
				 TT_HINT_ARCHIVE | TT_HINT_RETIRE)

/*
 * struct tt_ioc_hint - TT_IOC_HINT argument
 * @addr:     start of the range, bytes (any alignment).
 * @len:      length in bytes, > 0; @addr + @len must not wrap.
 * @hint:     TT_HINT_* bits, at least one.
 * @reserved: must be 0.
 */
struct tt_ioc_hint {
	__u64 addr;
	__u64 len;
	__u32 hint;
	__u32 reserved;
};

/*
 * TT_IOC_HINT - give a hint on a range. Errors: EOPNOTSUPP (unknown @hint
 * bits, @reserved not 0), EINVAL (no bit, a combination the comment above
 * excludes, @len 0 or the range wrapping around), ENOSPC (more hinted
 * ranges than the max_ranges parameter allows), ENOMEM, EOVERFLOW (the
 * range ends beyond the user address space). The range need not be mapped
 * nor saved: a hint on memory the scheduler does not manage is remembered
 * (PIN_FAST, ARCHIVE) for tensors saved there later, and acts on the plain
 * pages mapped there (see "Plain pages" above); a hint costs one interval
 * whatever its length, and only the saved tensors it overlaps (themselves
 * mapped) are cut by it. After the hint is recorded, moving the plain pages
 * (WILL_USE, PIN_FAST) may fail with ENOSPC (no room on the fast node) or
 * EINTR (a fatal signal); the work it costs is bounded by what the caller
 * maps in the range, as for TT_IOC_MIGRATE.
 */
#define TT_IOC_HINT		_IOW(TT_IOC_MAGIC, 0x0c, struct tt_ioc_hint)

/*
 * Mover
 * -----
 *
 * Moving a transparent huge page (THP) whole needs the kernel's
 * migrate_pages(), which 6.1 does not export to modules; the in-kernel
 * engine (migrate_vma) splits every huge page it moves. A process may
 * therefore lend the session threads of its own, "movers", that execute
 * migration orders with move_pages(2), which keeps huge pages whole. The
 * module stays the single owner of what moves when; the execution backend
 * is chosen per piece of each migration (TT_IOC_MIGRATE, the scheduler's
 * evictions and prefetches):
 *
 *   - every 2 MiB-aligned block of the range that is, when the migration
 *     starts, one transparent huge page mapped by a huge page-table entry
 *     (pmd), lying whole inside the range and not on a target node, goes
 *     to a mover, as an order of consecutive such blocks;
 *   - a huge page the range only partly covers: move_pages(2) would move
 *     its bytes outside the range as well. A synchronous TT_IOC_MIGRATE,
 *     the scheduler's moves and hints have the engine split it and move
 *     the range's pages (huge_split: a tensor inside one huge page still
 *     leaves the fast tier); TT_MIGRATE_ASYNC leaves it where it is
 *     (counted in huge_partial; its pages in the range as
 *     skipped_unsupported);
 *   - the rest of the range that lies in private anonymous memory (base
 *     pages, huge pages made PROT_NONE by NUMA balancing, whose mapping
 *     size the module cannot see) goes to a mover too, as base-page
 *     orders (TT_ORDER_BASE) of 256 KiB or more, when the setting
 *     mover_base is not 0, every live mover of the session registered
 *     with TT_MOVER_BASE and no fast-tier budget is in force for the
 *     session (its own or the module's);
 *     with mover_base 2 the order also carries TT_ORDER_COLLAPSE. An
 *     order never holds part of a large folio: move_pages(2) moves folios
 *     whole, so one mapped by base page-table entries (pte) that lies
 *     whole in the order moves, and the part of one that the order would
 *     cover only in part goes to the engine (which leaves it: large_pte);
 *   - everything else goes to the in-kernel engine, as it does when the
 *     session has no mover.
 * Without a mover every piece goes to the engine, which splits the huge
 * pages it moves (huge_split) and unmaps each base page with a TLB flush
 * of its own. libtiertrain's tt_open() lends every session one mover
 * thread, able to take base-page orders, unless the program opts out
 * (TIERTRAIN_MOVER=0), so huge pages stay huge by default.
 *
 * An order is one range and the target nodes in order of preference; the
 * mover moves it (one address per huge page is enough; every page of a
 * TT_ORDER_BASE order) and reports, per @huge_size-aligned block the
 * order touches, the status move_pages(2) gave it (for a base-page order:
 * the first negative status among the block's pages, else the node of its
 * first page). The module then reads the page tables of the order itself:
 * a page on a target node is counted moved (already_on_node when it was
 * there when the order was issued: the module counts those first), a
 * huge page of a huge-page order still mapped huge there kept
 * (huge_kept), otherwise split (huge_split); a page left behind counts by
 * its block's status (-ENOMEM: skipped_no_memory, -ENOENT or -EFAULT:
 * skipped_not_present, anything else: skipped_busy). So the counters and
 * the scheduler's accounting do not depend on what a mover claims.
 *
 * A mover never blocks the module: an order not completed within the
 * setting mover_timeout_ms (default 1000) per @huge_size-aligned block it
 * touches, counted from its issue, or whose mover thread died, goes back to the in-kernel
 * engine (mover_fallbacks), and
 * the movers of the session are not given orders again until one of them
 * calls TT_IOC_MOVER. A completion that comes after that is ignored
 * (counted in mover_late, not an error): a page is counted once. Closing
 * the session sends every order back.
 */

/*
 * struct tt_ioc_mover - argument of TT_IOC_MOVER
 * @flags:       in: TT_MOVER_* bits, at least one.
 * @nr_status:   in (TT_MOVER_DONE): entries at @status_ptr: the number of
 *               @huge_size-aligned blocks the order touches (its length
 *               divided by @huge_size for a huge-page order).
 * @done_id:     in (TT_MOVER_DONE): the id of the order completed.
 * @status_ptr:  in (TT_MOVER_DONE): user pointer to @nr_status __s32, per
 *               block: the status move_pages(2) stored for the first page
 *               of the block's huge page, or for a TT_ORDER_BASE order the
 *               first negative status among the block's pages, else the
 *               node of its first page (a node id, or a negative errno).
 * @id:          out (TT_MOVER_TAKE): the order taken, 0 when none was
 *               queued.
 * @addr:        out: its start, aligned to @huge_size (to the page size
 *               for a TT_ORDER_BASE order).
 * @len:         out: its length, a multiple of @huge_size (of the page
 *               size for a TT_ORDER_BASE order).
 * @huge_size:   out: the size of the huge pages (2 MiB on x86-64): the
 *               pages of a huge-page order, whose first page moves each
 *               whole; the blocks the statuses are given for.
 * @order_flags: out: TT_ORDER_* bits (0: a huge-page order).
 * @nr_nodes:    out: entries of @nodes used, 1..8.
 * @nodes:       out: target nodes in order of preference: a page goes to
 *               the first one with room for it.
 */
struct tt_ioc_mover {
	__u32 flags;
	__u32 nr_status;
	__u64 done_id;
	__u64 status_ptr;
	__u64 id;
	__u64 addr;
	__u64 len;
	__u64 huge_size;
	__u32 order_flags;
	__u32 nr_nodes;
	__s32 nodes[8];
};

/*
 * TT_MOVER_REGISTER: the calling thread becomes a mover of the session
 *   (again: no error) until it unregisters or exits.
 * TT_MOVER_DONE: report the completion of order @done_id (taken by this
 *   thread) with its statuses.
 * TT_MOVER_TAKE: then take the next queued order, if any (@id 0 if not).
 * TT_MOVER_WAIT: with TT_MOVER_TAKE, wait for an order if none is queued
 *   (interruptible: EINTR on a signal). Without it a mover may poll(2) the
 *   session descriptor: POLLIN means an order is queued.
 * TT_MOVER_UNREGISTER: the calling thread is no mover any more (last, after
 *   the other bits).
 * TT_MOVER_BASE: with TT_MOVER_REGISTER: the thread executes TT_ORDER_BASE
 *   orders (and TT_ORDER_COLLAPSE); a registration without it, also a
 *   repeated one, says it does not. A module older than this bit refuses
 *   it with EOPNOTSUPP: register again without it.
 */
#define TT_MOVER_REGISTER	(1U << 0)
#define TT_MOVER_DONE		(1U << 1)
#define TT_MOVER_TAKE		(1U << 2)
#define TT_MOVER_WAIT		(1U << 3)
#define TT_MOVER_UNREGISTER	(1U << 4)
#define TT_MOVER_BASE		(1U << 5)
#define TT_MOVER_FLAGS_ALL	(TT_MOVER_REGISTER | TT_MOVER_DONE | \
				 TT_MOVER_TAKE | TT_MOVER_WAIT | \
				 TT_MOVER_UNREGISTER | TT_MOVER_BASE)

/*
 * Order flags (@order_flags of struct tt_ioc_mover):
 * TT_ORDER_BASE: a base-page order: move every page of [@addr, @addr +
 *   @len) (move_pages(2) of each, or of the first page of a huge page).
 * TT_ORDER_COLLAPSE: with TT_ORDER_BASE: first collapse each
 *   @huge_size-aligned block lying whole inside the order into one huge
 *   page (madvise(2) MADV_COLLAPSE), then move it by its first page; a
 *   block that does not collapse moves page by page. Where move_pages(2)
 *   flushes the TLB once per page (Linux before 6.3) this leaves one
 *   flush per block.
 */
#define TT_ORDER_BASE		(1U << 0)
#define TT_ORDER_COLLAPSE	(1U << 1)

/*
 * TT_IOC_MOVER - register or unregister the calling thread as a mover,
 * report a completed order, take the next one (see "Mover").
 * Errors: EOPNOTSUPP (unknown flag bits), EINVAL (no bit, TT_MOVER_WAIT
 * without TT_MOVER_TAKE, TT_MOVER_BASE without TT_MOVER_REGISTER, DONE or
 * TAKE from a thread that is not
 * registered, @nr_status not the order's number of huge pages), ENOENT
 * (DONE: the session never issued an order @done_id, or another thread
 * took it), EINTR (a signal while waiting), EFAULT, besides the common
 * errors. The completion reaches the counters whether or not a TAKE
 * follows.
 */
#define TT_IOC_MOVER		_IOWR(TT_IOC_MAGIC, 0x0d, struct tt_ioc_mover)

/*
 * Generic netlink family "tiertrain" (administration, used by tierctl)
 * --------------------------------------------------------------------
 *
 * Version TT_GENL_VERSION. Requests and replies carry the attributes of
 * enum tt_attr. Unknown attributes in requests are rejected (strict
 * validation), with an extended ACK message naming the attribute.
 *
 * TT_CMD_GET_STATUS (doit, any user): reply attributes
 *   TT_A_VERSION      string, module version (e.g. "0.1.0").
 *   TT_A_ABI_VERSION  u32, TT_ABI_VERSION.
 *   TT_A_WORKERS      u32, migration worker pool size.
 *   TT_A_BATCH_PAGES  u32, pages per migration batch.
 *   TT_A_NR_SESSIONS  u32, open sessions.
 *   TT_A_NODES        nest holding one TT_A_NODE nest per online node with
 *                     memory, in node order, each with the enum
 *                     tt_node_attr attributes.
 *
 * The module is loaded on demand: the family has the module alias
 * "net-pf-16-proto-16-family-tiertrain", so resolving the family name
 * (CTRL_CMD_GETFAMILY) loads tiertrain.ko when it is installed.
 *
 * Permissions. Commands that change something (TT_CMD_SET_*) change the
 * whole host: they have GENL_ADMIN_PERM, so the generic netlink core
 * refuses them with EPERM to a caller without CAP_NET_ADMIN, and the module
 * itself requires CAP_SYS_ADMIN in the initial user namespace and a socket
 * in the initial network namespace (EPERM with an extended ACK naming the
 * command): the root of a container, with or without a user namespace of
 * its own, cannot change them. Every other command is open to any user,
 * but a session is visible to a caller only when both hold:
 *   - the session was opened in the caller's network namespace (that of
 *     the netlink socket), and
 *   - the caller is its owner (the effective uid of the process that
 *     opened /dev/tiertrain equals its own), or has CAP_SYS_ADMIN in the
 *     user namespace the session was opened in.
 * Sessions that are not visible are skipped by dumps, and a request naming
 * one (TT_A_SESSION, TT_A_PID) fails with ENOENT as if it did not exist.
 * The credentials are those of the netlink socket's opener. The multicast
 * groups TT_GENL_MCGRP_EVENTS and TT_GENL_MCGRP_TRACE carry the events of
 * the sessions of their network namespace and need CAP_SYS_ADMIN in the
 * user namespace owning that network namespace to join.
 *
 * Errors. A rejected request changes nothing and carries an extended ACK
 * message (NLMSGERR_ATTR_MSG) naming the attribute and the offending value,
 * and, where one attribute is at fault, its offset (NLMSGERR_ATTR_OFFS).
 * Attributes a command does not take are rejected (EINVAL) by the strict
 * validation of the generic netlink core ("Unsupported attribute", with
 * the offset). Besides the errors listed per command:
 *   EPERM    see Permissions.
 *   EINVAL   an attribute of the wrong type or size.
 *   ENOMEM   out of kernel memory.
 *
 * Dumps (NLM_F_DUMP) are restartable: each reply message stands alone, and
 * a dump resumes where the previous part ended (sessions in increasing
 * TT_A_SESSION order, events in increasing seq order). The sessions dump is
 * consistent: when a session was opened or closed between two parts of a
 * dump, the part that follows carries NLM_F_DUMP_INTR (the caller should
 * dump again); no session is ever reported twice in one dump.
 *
 * TT_CMD_GET_TIERS (doit, any user): the node roles. Reply attributes
 *   TT_A_NODES        as in TT_CMD_GET_STATUS (TT_NODE_A_SLOW_TARGET
 *                     included).
 *   TT_A_FAST_NODES   string, the fast node list in force ("0", "0,2",
 *                     "0-1"), "" when the roles are automatic.
 *   TT_A_SLOW_NODES   string, the same for the slow nodes.
 *
 * TT_CMD_SET_TIERS (doit, CAP_SYS_ADMIN): set the node roles, as the
 * fast_nodes= and slow_nodes= module parameters do at load time.
 *   TT_A_FAST_NODES   string, optional: a node list, or "" for automatic
 *                     (every node with memory and CPUs). Absent: unchanged.
 *   TT_A_SLOW_NODES   string, optional: the same for slow nodes (automatic:
 *                     every node with memory and no CPUs).
 * At least one must be given. The roles apply at once: evictions started
 * afterwards go to the new slow nodes; data already evicted is brought back
 * to the node it came from. Errors: EINVAL (not a node list, a node id the
 * kernel does not have, no attribute given), ENODEV (a node offline or
 * without memory), EEXIST (a node in both lists, counting the list that
 * stays unchanged).
 *
 * TT_CMD_GET_SESSIONS (dump, any user; see Permissions): one message per
 * session, in increasing TT_A_SESSION order. Request attributes:
 *   TT_A_PID          u32, optional: only the sessions of this process.
 * Each reply message:
 *   TT_A_SESSION      u64, the session id: unique while the module is
 *                     loaded, increasing in open order, never 0.
 *   TT_A_PID          u32, the process (thread group) that opened it, as
 *                     seen from the caller's pid namespace (0: not visible).
 *   TT_A_COMM         string, that process's command name at open time.
 *   TT_A_UID          u32, the owner: the opener's effective uid.
 *   TT_A_OPENED_NS    u64, when it was opened, CLOCK_MONOTONIC ns.
 *   TT_A_STATS        binary, struct tt_ioc_stats as TT_IOC_STATS returns
 *                     it (its @size member says how much is filled; read
 *                     min(attribute length, sizeof) bytes).
 *   TT_A_FAST_BYTES   u64, bytes of the saved tensors the scheduler holds
 *                     now that are not evicted (on the fast tier, as far as
 *                     the scheduler's own migrations know).
 *   TT_A_SLOW_BYTES   u64, bytes of them evicted and not yet brought back.
 *   TT_A_LAST_SEQ     u64, seq of the last trace event recorded (0: none).
 *   TT_A_EVENTS_LOST  u64, trace events recorded that the session's ring
 *                     no longer holds (overwritten by newer ones) or never
 *                     held (no ring: event_ring was 0, or no memory).
 * Errors: ENOENT (TT_A_PID given and no visible session has it).
 *
 * TT_CMD_GET_LAYERS (dump, any user): the scheduler's per-layer view
 * (struct tt_layer_info, as TT_IOC_LAYERS) of the selected sessions.
 * Request: exactly one of TT_A_SESSION (u64) or TT_A_PID (u32). Reply
 * messages carry TT_A_SESSION, TT_A_PID and one or more TT_A_LAYER (binary
 * struct tt_layer_info; read min(length, sizeof) bytes), in layer id order.
 * Errors: EINVAL (neither or both given), ENOENT (no such visible session).
 *
 * TT_CMD_GET_CONFIG (doit, any user): the module's settings, one TT_A_CONFIG
 * nest per key in a fixed order, each with every enum tt_cfg_attr
 * attribute. Request: optionally one TT_A_CONFIG nest holding
 * TT_CFG_A_KEY: only that key. Errors: ENOENT (unknown key).
 *
 * TT_CMD_SET_CONFIG (doit, CAP_SYS_ADMIN): one or more TT_A_CONFIG nests,
 * each with TT_CFG_A_KEY and TT_CFG_A_VALUE (u64). Every pair is checked
 * before any is applied: one bad pair and nothing changes. A key given
 * twice takes the last value. Errors: EINVAL (a nest without its key or
 * value, no nest at all), ENOENT (unknown key), ERANGE (a value outside the
 * key's TT_CFG_A_RANGE_MIN..TT_CFG_A_RANGE_MAX).
 *
 * The keys (the same names are module parameters, so they can be given to
 * modprobe and read or written in /sys/module/tiertrain/parameters/; both
 * paths check values against the same table):
 *   workers           migration worker pool, 1..64 (2). Now.
 *   batch_pages       pages per migration batch, 1..65536 (512). Now.
 *                     The scheduler's chunks (what an eviction moves and
 *                     its prefetch brings back, one at a time) are this
 *                     rounded up to whole huge pages (2 MiB), cut at its
 *                     multiples, so a chunk never cuts a huge page.
 *   max_ranges        registrations and saved tensors a session may hold,
 *                     1..1048576 (65536). Now.
 *   max_layers        distinct layer ids a session may report, 1..1048576
 *                     (4096). Now.
 *   profile_iters     iterations a session only profiles, 1..1000 (1). New
 *                     sessions.
 *   stay_time_us      stay time ST, microseconds, 0..60000000 (1000). New
 *                     sessions.
 *   er_seed_mbps      eviction rate a session starts from, MiB/s,
 *                     1..1048576 (1024). New sessions.
 *   pr_seed_mbps      prefetch rate a session starts from, MiB/s,
 *                     1..1048576 (1024). New sessions.
 *   evict_workers     scheduler eviction worker pool, 1..64 (1). Now.
 *   prefetch_workers  scheduler prefetch worker pool, 1..64 (1). Now.
 *   sync_late         1: new sessions start with TT_SCHED_SYNC_LATE, 0..1
 *                     (its bit of TT_SCHED_DEFAULT_FLAGS: 0). New sessions.
 *   bw_cap_mbps       migration bandwidth cap, MiB/s, over every migration
 *                     of the module together (a token bucket: the engine
 *                     sleeps after a batch until the bytes it moved are
 *                     paid for), 0..1048576; 0 means off (0). Now.
 *   min_migrate_kib   planned evictions smaller than this many KiB are not
 *                     made (the layer is dropped, reason "min_size"),
 *                     0..1048576; 0 means off (0). From the next iteration
 *                     of every session.
 *   event_ring        trace events each session keeps (struct
 *                     tt_trace_event, 56 bytes each), 0..65536; 0 means no
 *                     ring (the multicast group and the tracepoints still
 *                     work) (4096). Sessions whose ring is not allocated yet
 *                     (it is allocated at the first event).
 *   anchor            1: new sessions start with TT_SCHED_ANCHOR, 0..1 (its
 *                     bit of TT_SCHED_DEFAULT_FLAGS: 1). New sessions.
 *   alap              1: new sessions start with TT_SCHED_ALAP, 0..1 (1).
 *                     New sessions.
 *   defer_late        1: new sessions start with TT_SCHED_DEFER_LATE, 0..1
 *                     (1). New sessions.
 *   merge             1: new sessions start with TT_SCHED_MERGE, 0..1 (0).
 *                     New sessions.
 *   count             1: new sessions start with TT_SCHED_COUNT, 0..1 (1).
 *                     New sessions.
 *   dynamic           1: new sessions start with TT_SCHED_DYNAMIC, 0..1
 *                     (0). New sessions.
 *                     All seven 0: new sessions run the reference
 *                     semantics (see TT_SCHED_REFERENCE).
 *   mover_timeout_ms  how long an order given to a session's mover (see
 *                     "Mover") may take per huge page it holds before it
 *                     goes back to the in-kernel engine, ms, 0..600000; 0
 *                     means no orders: the engine moves everything, huge
 *                     pages split (1000). Now.
 *   budget_mib        the module's fast-tier budget, MiB: the registered
 *                     bytes of all sessions on the fast tier together,
 *                     shared max-min fairly (see "Fast-tier budget" under
 *                     TT_IOC_SET_SCHED), 0..1048576; 0 means off (0). Now.
 *   mover_base        how the base pages of a migration move when every
 *                     live mover of its session takes base-page orders
 *                     (see "Mover"), 0..2: 0 the in-kernel engine moves
 *                     them (a TLB flush per page); 1 base-page orders,
 *                     move_pages(2) by the movers; 2 the same, each whole
 *                     2 MiB block collapsed into a huge page first
 *                     (TT_ORDER_COLLAPSE) (1 on Linux 6.3 and later,
 *                     where move_pages(2) unmaps up to 512 pages per TLB
 *                     flush; 0 before, where it flushes per page as the
 *                     engine does; bench/README.md has the measurement,
 *                     Documentation/mover.md the reasons). Now.
 * "Now" means the running sessions see the new value at once; "new
 * sessions" that sessions opened afterwards start from it (a session changes
 * its own with TT_IOC_SET_SCHED).
 *
 * TT_CMD_GET_EVENTS (dump, any user): the trace events kept in the rings of
 * the selected sessions (see struct tt_trace_event), oldest first. Request:
 * exactly one of TT_A_SESSION or TT_A_PID, and optionally TT_A_SINCE (u64):
 * only events with seq > TT_A_SINCE. Reply messages carry TT_A_SESSION,
 * TT_A_PID, TT_A_EVENTS_LOST (u64) when events were skipped because the
 * ring no longer held them (the number of them: the first TT_A_EVENT that
 * follows has seq = the previous one + TT_A_EVENTS_LOST + 1), and one or
 * more TT_A_EVENT (binary struct tt_trace_event; read min(length, sizeof)
 * bytes). Errors, carried by the NLMSG_DONE that ends the dump with an
 * extended ACK message: EINVAL (neither or both of TT_A_SESSION and
 * TT_A_PID), ENOENT (no such visible session; the same for
 * TT_CMD_GET_LAYERS and for TT_CMD_GET_SESSIONS with TT_A_PID). Any
 * TT_A_SINCE is valid: one at or past a session's TT_A_LAST_SEQ (up to
 * U64_MAX) gives no event of it and no TT_A_EVENTS_LOST (an empty dump).
 *
 * TT_CMD_EVENT (multicast only): sent for every trace event of every
 * session as it is recorded (whether or not the session has a ring), in
 * the network namespace the session was opened in: TT_A_SESSION, TT_A_PID
 * (in the initial pid namespace), TT_A_EVENT. Evictions, prefetches, late and dropped
 * layers go to the group TT_GENL_MCGRP_EVENTS ("events", a few per layer
 * and iteration); iteration begins, layer begins and ends and saved
 * tensors, as frequent as the training's own events, to the group
 * TT_GENL_MCGRP_TRACE ("trace"): join both for the whole story. Nothing
 * is sent to a group nobody listens to. Both groups need CAP_SYS_ADMIN to
 * join (see Permissions). A listener that reads too slowly loses messages (its socket
 * reports ENOBUFS); the seq numbers show where.
 */
#define TT_GENL_NAME		"tiertrain"
#define TT_GENL_VERSION		1
/* The multicast groups of TT_CMD_EVENT (see there). */
#define TT_GENL_MCGRP_EVENTS	"events"
#define TT_GENL_MCGRP_TRACE	"trace"

enum tt_cmd {
	TT_CMD_UNSPEC,
	TT_CMD_GET_STATUS,
	TT_CMD_GET_TIERS,
	TT_CMD_SET_TIERS,
	TT_CMD_GET_SESSIONS,
	TT_CMD_GET_LAYERS,
	TT_CMD_GET_CONFIG,
	TT_CMD_SET_CONFIG,
	TT_CMD_GET_EVENTS,
	TT_CMD_EVENT,
	__TT_CMD_MAX,
};

#define TT_CMD_MAX (__TT_CMD_MAX - 1)

enum tt_attr {
	TT_A_UNSPEC,
	TT_A_PAD,
	TT_A_VERSION,		/* string */
	TT_A_ABI_VERSION,	/* u32 */
	TT_A_WORKERS,		/* u32 */
	TT_A_BATCH_PAGES,	/* u32 */
	TT_A_NR_SESSIONS,	/* u32 */
	TT_A_NODES,		/* nest of TT_A_NODE */
	TT_A_NODE,		/* nest of enum tt_node_attr */
	TT_A_FAST_NODES,	/* string */
	TT_A_SLOW_NODES,	/* string */
	TT_A_SESSION,		/* u64 */
	TT_A_PID,		/* u32 */
	TT_A_COMM,		/* string */
	TT_A_UID,		/* u32 */
	TT_A_OPENED_NS,		/* u64 */
	TT_A_STATS,		/* binary, struct tt_ioc_stats */
	TT_A_FAST_BYTES,	/* u64 */
	TT_A_SLOW_BYTES,	/* u64 */
	TT_A_LAST_SEQ,		/* u64 */
	TT_A_EVENTS_LOST,	/* u64 */
	TT_A_LAYER,		/* binary, struct tt_layer_info */
	TT_A_CONFIG,		/* nest of enum tt_cfg_attr */
	TT_A_EVENT,		/* binary, struct tt_trace_event */
	TT_A_SINCE,		/* u64 */
	__TT_A_MAX,
};

#define TT_A_MAX (__TT_A_MAX - 1)

/*
 * enum tt_node_attr - attributes of one node (inside TT_A_NODE)
 * @TT_NODE_A_ID:          u32, node id.
 * @TT_NODE_A_ROLE:        u32, enum tt_node_role.
 * @TT_NODE_A_ROLE_SOURCE: u32, enum tt_role_source: why it has that role.
 * @TT_NODE_A_NR_CPUS:     u32, online CPUs on the node.
 * @TT_NODE_A_TOTAL_BYTES: u64, memory managed by the kernel on the node.
 * @TT_NODE_A_FREE_BYTES:  u64, free memory on the node.
 * @TT_NODE_A_SLOW_TARGET: u32, only for a fast node: the slow node its
 *                         evictions go to first (the first node of
 *                         TT_NODE_A_EVICT_ORDER); absent when there is no
 *                         slow node.
 * @TT_NODE_A_MEMORY_TIER: u32, the kernel's memory tier of the node: N of
 *                         /sys/devices/virtual/memory_tiering/memory_tierN,
 *                         its abstract distance divided by 128 (lower is
 *                         faster; 4 is RAM by default and 22 memory onlined
 *                         by dax/kmem; from 6.8 on a RAM node the firmware's
 *                         HMAT describes gets a tier from its performance
 *                         relative to the CPUs' own memory, e.g. 16 for
 *                         half the bandwidth). Absent when the node is in no
 *                         tier (or the module could not read them).
 * @TT_NODE_A_ADIST_SOURCE: u32, enum tt_adist_source: what gave the node
 *                         its abstract distance, hence its memory tier.
 * @TT_NODE_A_DISTANCE:    u32, how far the node's memory is from the CPUs,
 *                         which orders the slow nodes of one memory tier:
 *                         the HMAT read latency in ns from the node's best
 *                         CPU initiators when the firmware describes it,
 *                         else the SLIT distance (10 = local) from the
 *                         nearest fast node (from the node itself when
 *                         there is no fast node).
 * @TT_NODE_A_DISTANCE_SOURCE: u32, enum tt_dist_source: which of the two
 *                         TT_NODE_A_DISTANCE is.
 * @TT_NODE_A_READ_BANDWIDTH: u32, HMAT read bandwidth from the same
 *                         initiators in MB/s; absent without HMAT data.
 * @TT_NODE_A_EVICT_ORDER: binary, only for a fast node with slow nodes: an
 *                         array of __u32 node ids, the slow nodes evictions
 *                         from this node go to, in order. A page goes to the
 *                         first one that has a free page for it (a full
 *                         node spills to the next); when all are full the
 *                         page stays where it is (counted in
 *                         skipped_no_memory). The order: memory tier
 *                         (highest first, unknown last), then within a tier
 *                         HMAT read latency when both nodes have it, else
 *                         SLIT distance from this node, then node id. A
 *                         node whose memory is being offlined is left out.
 */
enum tt_node_attr {
	TT_NODE_A_UNSPEC,
	TT_NODE_A_PAD,
	TT_NODE_A_ID,
	TT_NODE_A_ROLE,
	TT_NODE_A_ROLE_SOURCE,
	TT_NODE_A_NR_CPUS,
	TT_NODE_A_TOTAL_BYTES,
	TT_NODE_A_FREE_BYTES,
	TT_NODE_A_SLOW_TARGET,
	TT_NODE_A_MEMORY_TIER,
	TT_NODE_A_ADIST_SOURCE,
	TT_NODE_A_DISTANCE,
	TT_NODE_A_DISTANCE_SOURCE,
	TT_NODE_A_READ_BANDWIDTH,
	TT_NODE_A_EVICT_ORDER,
	__TT_NODE_A_MAX,
};

#define TT_NODE_A_MAX (__TT_NODE_A_MAX - 1)

/*
 * enum tt_node_role - what tiertrain uses a node for
 * @TT_ROLE_NONE: neither (for example a fast_nodes=/slow_nodes= override
 *                left it out).
 * @TT_ROLE_FAST: tensors in use live here.
 * @TT_ROLE_SLOW: idle tensors are evicted here.
 */
enum tt_node_role {
	TT_ROLE_NONE,
	TT_ROLE_FAST,
	TT_ROLE_SLOW,
};

/*
 * enum tt_role_source - where a node's role comes from
 * @TT_ROLE_SRC_CPUS:  automatic: fast because it has CPUs, slow because it
 *                     has memory and no CPUs.
 * @TT_ROLE_SRC_PARAM: the fast_nodes= / slow_nodes= module parameters.
 */
enum tt_role_source {
	TT_ROLE_SRC_CPUS,
	TT_ROLE_SRC_PARAM,
};

/*
 * enum tt_adist_source - what set a node's abstract distance (its memory
 * tier) in the kernel
 * @TT_ADIST_SRC_NONE: the node is in no memory tier (no memory, or the
 *                     module could not read the tiers).
 * @TT_ADIST_SRC_DRAM: the kernel's default for RAM: memory present at boot
 *                     and RAM hot-added as such.
 * @TT_ADIST_SRC_KMEM: the dax/kmem driver, which onlined device memory
 *                     (NVDIMM, CXL memory) as system RAM and gave it its
 *                     own, larger abstract distance.
 * @TT_ADIST_SRC_HMAT: the firmware's HMAT: RAM (not dax/kmem) in a tier
 *                     other than the default DRAM tier 4, which only the
 *                     kernel's HMAT code sets (Linux 6.8 and later; never
 *                     on 6.1).
 */
enum tt_adist_source {
	TT_ADIST_SRC_NONE,
	TT_ADIST_SRC_DRAM,
	TT_ADIST_SRC_KMEM,
	TT_ADIST_SRC_HMAT,
};

/*
 * enum tt_dist_source - what TT_NODE_A_DISTANCE measures
 * @TT_DIST_SRC_SLIT: the firmware's NUMA distance (SLIT, numactl -H).
 * @TT_DIST_SRC_HMAT: the firmware's HMAT read latency, in ns.
 */
enum tt_dist_source {
	TT_DIST_SRC_SLIT,
	TT_DIST_SRC_HMAT,
};

/*
 * enum tt_cfg_attr - one setting (inside TT_A_CONFIG)
 * @TT_CFG_A_KEY:     string, the key (see TT_CMD_SET_CONFIG).
 * @TT_CFG_A_VALUE:   u64, its value.
 * @TT_CFG_A_DEFAULT: u64, the value it has when the module loads without
 *                    the parameter (reply only).
 * @TT_CFG_A_RANGE_MIN: u64, the smallest value accepted (reply only).
 * @TT_CFG_A_RANGE_MAX: u64, the largest value accepted (reply only).
 * @TT_CFG_A_UNIT:    string, the unit ("MiB/s", "us", "pages", ...; ""
 *                    for a count or a flag) (reply only).
 * @TT_CFG_A_DESC:    string, one sentence saying what it does (reply only).
 * @TT_CFG_A_APPLIES: u32, enum tt_cfg_applies (reply only).
 */
enum tt_cfg_attr {
	TT_CFG_A_UNSPEC,
	TT_CFG_A_PAD,
	TT_CFG_A_KEY,
	TT_CFG_A_VALUE,
	TT_CFG_A_DEFAULT,
	TT_CFG_A_RANGE_MIN,
	TT_CFG_A_RANGE_MAX,
	TT_CFG_A_UNIT,
	TT_CFG_A_DESC,
	TT_CFG_A_APPLIES,
	__TT_CFG_A_MAX,
};

#define TT_CFG_A_MAX (__TT_CFG_A_MAX - 1)

/*
 * enum tt_cfg_applies - when a new value of a setting takes effect
 * @TT_CFG_APPLIES_NOW:          at once, for running sessions too.
 * @TT_CFG_APPLIES_NEW_SESSIONS: for sessions opened afterwards.
 * @TT_CFG_APPLIES_NEXT_ITER:    at the next iteration of every session.
 * @TT_CFG_APPLIES_NEW_RINGS:    for sessions whose trace ring is allocated
 *                               afterwards (at their first event).
 */
enum tt_cfg_applies {
	TT_CFG_APPLIES_NOW,
	TT_CFG_APPLIES_NEW_SESSIONS,
	TT_CFG_APPLIES_NEXT_ITER,
	TT_CFG_APPLIES_NEW_RINGS,
};

/*
 * Trace events
 * ------------
 *
 * Each session records what its scheduler saw and did as trace events:
 * into a bounded ring (module setting event_ring, default 4096 events: the
 * oldest are overwritten), to the multicast groups (TT_CMD_EVENT), and,
 * for evictions, prefetches, late and dropped layers, to the kernel
 * tracepoints tiertrain:tt_evict, tiertrain:tt_prefetch, tiertrain:tt_late
 * and tiertrain:tt_drop (perf, ftrace).
 */

/*
 * enum tt_trace_type - what a struct tt_trace_event reports
 * @TT_TRACE_ITER_BEGIN:  TT_EV_ITER_BEGIN was accepted.
 * @TT_TRACE_LAYER_BEGIN: TT_EV_LAYER_BEGIN (flags: TT_FWD or TT_BWD).
 * @TT_TRACE_LAYER_END:   TT_EV_LAYER_END (flags: TT_FWD or TT_BWD).
 * @TT_TRACE_SAVED:       TT_EV_TENSOR_SAVED covering whole pages; bytes:
 *                        its whole pages (flags: TT_EV_PERSISTENT).
 * @TT_TRACE_EVICT:       an eviction ended: bytes moved to @node in
 *                        [ts_ns - dur_ns, ts_ns] (TT_TRACE_F_STOPPED: it
 *                        was stopped before its end, by a backward begin or
 *                        the session closing; TT_TRACE_F_VICTIM: a victim
 *                        eviction made for the fast-tier budget, not by the
 *                        plan).
 * @TT_TRACE_PREFETCH:    a prefetch ended: bytes moved back to @node
 *                        (TT_TRACE_F_SYNC: fetched by the backward begin
 *                        itself, TT_SCHED_SYNC_LATE; TT_TRACE_F_STOPPED: the
 *                        engine stopped part-way, the rest follows).
 * @TT_TRACE_LATE:        a backward pass began with bytes of its layer
 *                        still on the slow node.
 * @TT_TRACE_DROP:        a planned layer's forward pass ended and nothing
 *                        was evicted; bytes: its saved bytes, which stay on
 *                        the fast tier. Why: the policy found no room in
 *                        the queueing system (TT_TRACE_F_MIN_SIZE clear),
 *                        or its planned eviction was below min_migrate_kib
 *                        (TT_TRACE_F_MIN_SIZE set), or its eviction waited
 *                        in the queue until it could no longer end before
 *                        its prefetch was due, and was not started
 *                        (TT_TRACE_F_EXPIRED set; the event's time is
 *                        then when the eviction would have started).
 * @TT_TRACE_MISS:        TT_SCHED_DYNAMIC's miss log: flags
 *                        TT_TRACE_F_MISS_NEW (the iteration ended with a
 *                        new signature; bytes: its forward layers),
 *                        TT_TRACE_F_MISS_PREDICT (the predicted signature
 *                        diverged at @layer, 0 when the forward pass ended
 *                        early; bytes: the forward position) or
 *                        TT_TRACE_F_MISS_LATE (@layer was late in a
 *                        fallback iteration; bytes: late bytes).
 * @TT_TRACE_LEFT_SLOW:   a prefetch of @layer ended with bytes it could
 *                        not bring back after its retries (pages busy,
 *                        the fast node full, pages it cannot move); bytes:
 *                        those, which stay on a slow node and are counted
 *                        in prefetch_left_bytes (TT_IOC_STATS).
 */
enum tt_trace_type {
	TT_TRACE_ITER_BEGIN = 1,
	TT_TRACE_LAYER_BEGIN = 2,
	TT_TRACE_LAYER_END = 3,
	TT_TRACE_SAVED = 4,
	TT_TRACE_EVICT = 5,
	TT_TRACE_PREFETCH = 6,
	TT_TRACE_LATE = 7,
	TT_TRACE_DROP = 8,
	TT_TRACE_MISS = 9,
	TT_TRACE_LEFT_SLOW = 10,
};

/* Trace event flags, besides TT_FWD, TT_BWD and TT_EV_PERSISTENT. */
#define TT_TRACE_F_SYNC		(1U << 8)
#define TT_TRACE_F_STOPPED	(1U << 9)
#define TT_TRACE_F_MIN_SIZE	(1U << 10)
#define TT_TRACE_F_MISS_NEW	(1U << 11)
#define TT_TRACE_F_MISS_PREDICT	(1U << 12)
#define TT_TRACE_F_MISS_LATE	(1U << 13)
#define TT_TRACE_F_VICTIM	(1U << 14)
#define TT_TRACE_F_EXPIRED	(1U << 15)

/*
 * struct tt_trace_event - one trace event (TT_A_EVENT)
 * @seq:    number of the event in its session, from 1, without gaps.
 * @ts_ns:  when it happened (for a migration: when it ended),
 *          CLOCK_MONOTONIC ns; the caller's stamp for events submitted
 *          with TT_EV_TIMESTAMP.
 * @dur_ns: migrations: how long they took, ns; others 0.
 * @bytes:  bytes (see enum tt_trace_type); 0 for layer and iteration
 *          events.
 * @iter:   the session's iteration number (1 for the first
 *          TT_EV_ITER_BEGIN, 0 before it).
 * @type:   enum tt_trace_type.
 * @layer:  layer id (0 for TT_TRACE_ITER_BEGIN).
 * @flags:  TT_FWD, TT_BWD, TT_EV_PERSISTENT, TT_TRACE_F_* bits.
 * @node:   migrations: the node the bytes moved to; others -1.
 */
struct tt_trace_event {
	__u64 seq;
	__u64 ts_ns;
	__u64 dur_ns;
	__u64 bytes;
	__u64 iter;
	__u32 type;
	__u32 layer;
	__u32 flags;
	__s32 node;
};

#endif /* _UAPI_LINUX_TIERTRAIN_H */
