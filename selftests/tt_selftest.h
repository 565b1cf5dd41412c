/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the tiertrain selftests (selftests/ *_test.c) and the
 * migration benchmark (bench/migrate.c): NUMA topology from sysfs, pattern
 * fill and check, placement through move_pages(2) status queries (an
 * observer independent of tiertrain), thin wrappers around the raw ioctls,
 * /proc and /sys readers, the module's parameters, and a raw generic
 * netlink client of the tiertrain family.
 *
 * Every function returns 0 (or a documented non-negative value) on success
 * and -errno on failure; none of them prints or exits, so callers decide
 * what a failure means. No libnuma: the few NUMA system calls are made with
 * syscall(2).
 */
#ifndef TT_SELFTEST_H
#define TT_SELFTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <linux/tiertrain.h>

struct nlmsghdr;
struct nlattr;

#define TT_ST_DEV		"/dev/" TT_DEVICE_NAME
#define TT_ST_SYSMOD		"/sys/module/tiertrain"
#define TT_ST_PARAMS		TT_ST_SYSMOD "/parameters"
#define TT_ST_WORKERS		TT_ST_PARAMS "/workers"
#define TT_ST_MIB		(1024UL * 1024UL)
#define TT_ST_THP_SIZE		(2UL * TT_ST_MIB)
/* Highest node count the helpers handle (the kernel's MAX_NUMNODES). */
#define TT_ST_MAX_NODES		TT_MAX_NODES

/**
 * struct tt_st_topo - the NUMA nodes a test can use
 * @nr_node_ids: the kernel's nr_node_ids (highest possible node + 1).
 * @nr_mem_nodes: online nodes with memory.
 * @fast: the node of the CPUs the process runs on (a node with CPUs and
 *        memory); -1 when there is none.
 * @slow: the memory-only node with the most free memory; -1 if none.
 * @small: the memory-only node other than @slow with the least memory;
 *         -1 if there is only one memory-only node.
 * @offline: a possible node that is offline or has no memory; -1 if none.
 */
struct tt_st_topo {
	int nr_node_ids;
	int nr_mem_nodes;
	int fast;
	int slow;
	int small;
	int offline;
};

/**
 * struct tt_st_place - where the pages of a range are, per move_pages(2)
 * @pages: pages queried.
 * @on_node: pages on each node (index = node id; TT_ST_MAX_NODES entries).
 * @absent: pages with status -ENOENT (6.1: a present PTE without a normal
 *          page, e.g. a NUMA-hinting PROT_NONE entry, or a swap entry).
 * @faulted: pages with status -EFAULT (6.1, FOLL_DUMP: never-touched
 *           anonymous pages, the shared zero page, addresses without VMA).
 * @other: pages with any other negative status.
 * @first_other: the first such status (a negative errno), 0 if none.
 */
struct tt_st_place {
	uint64_t pages;
	uint64_t on_node[TT_ST_MAX_NODES];
	uint64_t absent;
	uint64_t faulted;
	uint64_t other;
	int first_other;
};

/* Topology: 0 or -errno (sysfs unreadable). */
int tt_st_topo_read(struct tt_st_topo *t);
/* Node bitmask from a sysfs list file ("0-2,4"): number of nodes or -errno. */
int tt_st_read_nodelist(const char *path, unsigned char *set, int max);
/* Free and total bytes of @node from its sysfs meminfo: 0 or -errno. */
int tt_st_node_mem(int node, uint64_t *free_bytes, uint64_t *total_bytes);
/*
 * The sum over @node's zones of the /proc/zoneinfo lines "KEY VALUE" (the
 * per-CPU "count:" lines too, with KEY "count:"), or -1 when it cannot be
 * read.
 */
long long tt_st_zoneinfo_sum(int node, const char *key);
/* Run the calling thread on the CPUs of @node only: 0 or -errno. */
int tt_st_run_on_node(int node);

/*
 * Whether @list (space-separated names; may be NULL) names @name exactly.
 */
bool tt_st_in_list(const char *list, const char *name);

/*
 * Whether @fixture.@test is left out here: TT_ST_LEAVE_OUT (a
 * space-separated list of "FIXTURE.TEST" names, set by run-vm for a kernel
 * that runs a subset) names it, or TT_ST_ONLY (the same form, set by
 * run-vm --debug-complement) is set, not empty, and does not name it.
 */
bool tt_st_left_out(const char *fixture, const char *test);

/* Is the running kernel at least @major.@minor? */
bool tt_st_kernel_at_least(int major, int minor);

/*
 * Map @len bytes of private anonymous memory: @thp < 0 MADV_NOHUGEPAGE,
 * > 0 MADV_HUGEPAGE and 2 MiB aligned, 0 leave the default. NULL on failure
 * (errno set).
 */
void *tt_st_map(size_t len, int thp);
/*
 * tt_st_map(@len, 1) filled with @seed (tt_st_fill()), only if the kernel
 * backed all of it with huge pages (AnonHugePages): else it is unmapped
 * and NULL returned (errno set; ENOMEM when the pages were not huge).
 */
void *tt_st_map_thp(size_t len, uint64_t seed);
/* Bind [addr, addr + len) to @node with mbind(MPOL_BIND): 0 or -errno. */
int tt_st_bind(void *addr, size_t len, int node);

/*
 * Fork a child that binds memory to @node (mbind MPOL_BIND) and faults it
 * in until the node has at most @leave bytes free above the node's min
 * watermarks (below them the child would be OOM-killed), then waits to be killed
 * (SIGKILL, then waitpid). Returns the child's pid with the bytes it holds
 * in @held, or -errno (-EIO: the child died while filling).
 */
int tt_st_hog_node(int node, uint64_t leave, size_t *held);

/* Fill with a pattern depending on @seed and the offset in the buffer. */
void tt_st_fill(void *buf, size_t len, uint64_t seed);
/* Check that pattern: -1 when intact, else the offset of the first bad word. */
long long tt_st_check(const void *buf, size_t len, uint64_t seed);
/* Check only the first and last word of every page (cheap sampling). */
long long tt_st_check_sample(const void *buf, size_t len, uint64_t seed);

/* Placement of the pages of a range, via move_pages(2) with nodes == NULL. */
int tt_st_place(const void *addr, size_t len, struct tt_st_place *p);
/*
 * tt_st_place() until @want pages are on @node or no page is in a transient
 * state (-ENOENT/-EFAULT, e.g. khugepaged collapsing a range has its PMD
 * cleared for a moment), for at most about one second.
 */
int tt_st_place_settled(const void *addr, size_t len, int node,
			uint64_t want, struct tt_st_place *p);
/* "node0=N node1=M faulted=F" summary of @p for messages. */
const char *tt_st_place_str(const struct tt_st_place *p, char *buf,
			    size_t size);
/* Pages of the range mincore(2) reports resident, or -errno. */
long long tt_st_mincore(const void *addr, size_t len);
/* Pages of the range on @node according to move_pages(2), or -errno. */
long long tt_st_pages_on(const void *addr, size_t len, int node);
/* move_pages(2) of the whole range to @node in one call: 0 or -errno. */
int tt_st_move_pages(void *addr, size_t len, int node, int *nr_failed);

/* Raw ioctls of /dev/tiertrain, each returning 0 or -errno. */
int tt_st_ioc_migrate(int fd, uint64_t addr, uint64_t len, int node,
		      uint32_t flags, struct tt_migrate_result *res);
int tt_st_ioc_range(int fd, unsigned long cmd, uint64_t addr, uint64_t len,
		    uint32_t layer, uint32_t flags);
int tt_st_ioc_residency(int fd, uint64_t addr, uint64_t len,
			uint64_t *bytes, uint32_t nr_nodes,
			uint64_t *not_present, uint64_t *other);
int tt_st_ioc_stats(int fd, struct tt_ioc_stats *st);
int tt_st_ioc_flush(int fd);

/* Sum of a kB field (e.g. "AnonHugePages") over the VMAs of a range, or -errno. */
long long tt_st_smaps_kb(const void *addr, size_t len, const char *field);
/* The VmFlags line of the VMA holding @addr into @buf: 0 or -errno. */
int tt_st_vmflags(const void *addr, char *buf, size_t size);
/* Number of VMAs intersecting [addr, addr + len), or -errno. */
int tt_st_nr_vmas(const void *addr, size_t len);
/* A counter of /proc/vmstat, or -errno when absent. */
long long tt_st_vmstat(const char *name);
/* Read a small text file (trailing newline removed): length or -errno. */
int tt_st_read_file(const char *path, char *buf, size_t size);
/* Write @s to a file in one write(2): 0 or -errno. */
int tt_st_write_file(const char *path, const char *s);
/*
 * Print to stderr, after "# @why", the kernel stacks of this process's
 * threads, then of other tasks in the module's code (its workqueues'
 * kworkers among them) or in uninterruptible sleep (32 at most), then the
 * kernel log's last 4 KiB: what a stalled operation waits on, said before
 * a harness timeout kills the test without a word.
 */
void tt_st_log_stacks(const char *why);
/*
 * Write @state ("offline", "online", "online_movable") to the memory
 * block state file @path, interrupted after @secs seconds: 0 or -errno;
 * -EINTR when interrupted (the block stays as it was, and
 * tt_st_log_stacks() said why, with the writer's kernel stack read by a
 * forked watcher just before it interrupted the write). offline_pages() retries a page that does
 * not migrate until a signal comes.
 */
int tt_st_block_write(const char *path, const char *state, unsigned int secs);
/*
 * Anonymous transparent huge pages that nothing maps but that are still
 * on an LRU list (/proc/kpageflags: THP, compound head, anon and lru, not
 * mmap, not swap cache), in the whole guest. On a quiet system such a page is one whose last user
 * is gone and that an extra reference keeps from being freed: leaked
 * (a page being migrated is off the LRU). Return the count, or -errno.
 */
long tt_st_orphan_thps(void);
/*
 * The kernel stack (function names, innermost first, " < " between) that
 * the last tt_st_block_write() interrupted was in when its time ran out:
 * where offline_pages() waited. "" before any interruption.
 */
const char *tt_st_block_stall(void);
/*
 * Copy into @out (@size bytes, NUL-terminated, "" when none) the kernel
 * log's last line that holds any of the NULL-terminated @needles, joined
 * with " | " to the two lines after it (offline_pages()'s "failed to
 * isolate pfn" and "migrating pfn ... failed" come with dump_page()'s
 * "page:" and flags lines). Return the length copied.
 */
size_t tt_st_kmsg_last(const char *const *needles, char *out, size_t size);
/*
 * Create the directories of @path up to its last '/' (mkdir -p of its
 * directory part, mode 0755): 0, or -errno with the failing directory in
 * @failed (@size bytes) when not NULL.
 */
int tt_st_mkdirs(const char *path, char *failed, size_t size);
/* A file holding one integer (sysfs): 0 or -errno. */
int tt_st_read_ll(const char *path, long long *v);

/* Module parameter @name (a file of TT_ST_PARAMS) as text: length or -errno. */
int tt_st_param_read_str(const char *name, char *buf, size_t size);
/* Module parameter @name as an integer: its value (>= 0) or -errno. */
long long tt_st_param_read(const char *name);
/* Write @val to module parameter @name in one write(2): 0 or -errno. */
int tt_st_param_write_str(const char *name, const char *val);
/* Write @v ("%lld") to module parameter @name: 0 or -errno. */
int tt_st_param_write(const char *name, long long v);

/*
 * Pause khugepaged (scan_sleep_millisecs set to a day) so it cannot collapse
 * base pages into a huge page on the node it saw them on before a migration
 * moved them; @saved receives the value to give tt_st_khugepaged_resume().
 * The write itself wakes khugepaged for one more scan, which is given
 * 200 ms times tt_st_time_mul() to end: a test that must see no collapse
 * at all also marks its range MADV_NOHUGEPAGE.
 */
int tt_st_khugepaged_pause(long long *saved);
int tt_st_khugepaged_resume(long long saved);

/* Nanoseconds of CLOCK_MONOTONIC. */
uint64_t tt_st_now_ns(void);

/*
 * A training layer's compute in the selftests: one pass over @buf (a read
 * of every page: the cache and TLB work of a real layer), then the rest of
 * @ms asleep. Not a busy loop: in the QEMU TCG guest on a loaded host, a
 * vCPU spinning in user mode answers the TLB-shootdown IPIs and per-CPU
 * work that migrate_vma needs very late, and an 8 MiB migration of the
 * spinning process then takes seconds instead of ~50 ms (measured); on
 * hardware a spinning thread does not do that. @ms is scaled by
 * tt_st_time_scale() (tt_st_ms()).
 */
void tt_st_compute(const void *buf, size_t len, unsigned int ms);
/*
 * tt_st_compute() of a layer pass that began at @t0 (tt_st_now_ns()): it
 * ends @ms (scaled) after @t0, whatever the pass did before (filling or
 * checking its tensor, its events), unless that took longer. A trainer
 * whose passes keep their length keeps the timeline its profile learned
 * when a busy host slows the work between its events down.
 */
void tt_st_compute_from(const void *buf, size_t len, uint64_t t0,
			unsigned int ms);

/*
 * Calibration of the timing tests: a test whose assertions depend on
 * migrations fitting between its layer events (the scheduler's trainers)
 * writes its compute for a guest whose engine moves a MiB in
 * TT_ST_REF_MS_PER_MIB (the stock 6.1 guest between two RAM nodes on an
 * idle host) and calls tt_st_calibrate() in its fixture before it runs.
 * That times real moves through the module's engine (TT_IOC_MIGRATE, the
 * same engine the scheduler's evictions and prefetches use) between the
 * nodes the test uses, and from then on every compute and pause of the
 * process (tt_st_compute(), tt_st_ms()) lasts tt_st_time_scale() times its
 * written length: the ratio of migration time to compute the test was
 * written for holds on a busy host (another guest beside it), on emulated
 * CXL memory (~1000x slower than RAM) and on the debug kernel alike. A
 * scheduler that is late for other reasons (its timers, its work items,
 * its plan) is not scaled for and still fails the tests.
 */
#define TT_ST_REF_MS_PER_MIB	6.0
/*
 * Rounds of moves there and back timed; the second slowest round counts:
 * the spikes of a busy host do, a single outlier does not. Only 3 when
 * they took more than TT_ST_CALIB_LONG_MS (emulated CXL: a 2 MiB round
 * takes 1-7 s).
 */
#define TT_ST_CALIB_ROUNDS	5
#define TT_ST_CALIB_LONG_MS	4000
/*
 * The largest calibrated factor. Emulated CXL measured 35-90 with one
 * guest beside it, up to 300 with two busy ones; at 100 a sched_test
 * case's iterations (9 layer passes of 20 ms) take 18 s, and the worst
 * case of the slowest of them stays within its 300 s timeout only about.
 */
#define TT_ST_CALIB_MAX		100.0

/**
 * struct tt_st_calib - what tt_st_calibrate() measured
 * @rounds:         rounds timed (TT_ST_CALIB_ROUNDS, or 3 on a slow node).
 * @ms_per_mib:     the second slowest round's time per MiB (each round:
 *                  the slower of the move to the slow node and the move
 *                  back, each queued on a libtiertrain session and waited
 *                  for).
 * @min_ms_per_mib: the fastest round's.
 * @max_ms_per_mib: the slowest round's.
 * @factor:         @ms_per_mib / TT_ST_REF_MS_PER_MIB, within
 *                  1..TT_ST_CALIB_MAX.
 * @scale:          tt_st_time_scale() after the calibration.
 */
struct tt_st_calib {
	int rounds;
	double ms_per_mib;
	double min_ms_per_mib;
	double max_ms_per_mib;
	double factor;
	double scale;
	int finished_sync;	/* moves whose asynchronous pass left pages */
};

/*
 * Move @len bytes of fresh private anonymous memory (base pages) to @fast,
 * then from @fast to @slow and back through a libtiertrain session on the
 * kernel backend with the library's default mover threads
 * (TT_MIGRATE_ASYNC, then tt_flush(): the engine's worker and the movers,
 * as for the scheduler's work of the tests' own sessions; with the module
 * setting mover_base, base pages go through the movers, slower under CPU
 * load), TT_ST_CALIB_ROUNDS times (3 when slow), timing each move; pages
 * the asynchronous pass left busy are moved by tt_migrate()'s passes
 * inside the timed move. Set the process's calibrated factor from the
 * second slowest round and fill @c. Returns 0, or -errno (the factor is
 * then unchanged; -ENODEV: no kernel backend; tt_migrate()'s errors for
 * pages that stayed; -EIO: pages still not on the node after it;
 * -EBADMSG: the data changed).
 */
int tt_st_calibrate(int fast, int slow, size_t len, struct tt_st_calib *c);

/*
 * struct tt_st_busy - a thread of this process that reads its own buffer
 * until stopped, as a training thread computes while its tensors move:
 * each page a move unmaps then costs it a TLB shootdown, and the move the
 * wait for it (what a timing taken with the process idle does not see).
 */
struct tt_st_busy {
	pthread_t thread;
	void *buf;
	size_t len;
	volatile int stop;
	int running;
};

/* Start @b's thread over a fresh @len bytes. Returns 0 or -errno. */
int tt_st_busy_start(struct tt_st_busy *b, size_t len);

/* Stop @b's thread and free its buffer (nothing when not running). */
void tt_st_busy_stop(struct tt_st_busy *b);

/*
 * How many times longer than written a compute or pause lasts: the larger
 * of tt_st_time_mul() and the factor of the last tt_st_calibrate() of this
 * process (1 before any).
 */
double tt_st_time_scale(void);

/* @ms milliseconds scaled by tt_st_time_scale(), rounded. */
unsigned int tt_st_ms(unsigned int ms);

/*
 * TT_ST_TIME_MUL (1..100, default 1): how many times longer a layer's
 * compute lasts at least (tt_st_time_scale()), and the factor of the
 * bounds some tests put on how long an operation may take. A kernel whose
 * migrations and everything else are slower than the stock kernel's (the
 * debug kernel: KASAN-instrumented copies and page-table walks, ~3x) keeps
 * the ratio the tests were written for; run-vm sets it per kernel.
 */
unsigned int tt_st_time_mul(void);

/*
 * TT_ST_COUNT_DIV (1..100, default 1): how many times fewer repetitions a
 * case makes whose point is one path taken many times over (@n divided,
 * at least 1). run-vm sets it on the debug kernel, where each repetition
 * costs several times as much and the checkers see every path at once.
 */
unsigned int tt_st_count(unsigned int n);

/*
 * A test buffer size scaled down by the environment variable
 * TT_ST_SIZE_DIV (an integer >= 1, default 1; selftests/run-vm sets it
 * where the slow tier is slow to emulate), rounded down to whole 2 MiB
 * huge pages, at least one.
 */
size_t tt_st_scaled(size_t len);

/* ---- raw generic netlink of the tiertrain family -------------------------- */

/* Size of struct tt_st_nl's buffer: the largest request or datagram. */
#define TT_ST_NL_BUF		65536

/**
 * struct tt_st_nl - a generic netlink socket talking to the tiertrain family
 * @fd:     the socket (-1 when closed).
 * @family: the family id.
 * @seq:    the last sequence number used.
 * @buf:    TT_ST_NL_BUF bytes for the request being built and the replies.
 */
struct tt_st_nl {
	int fd;
	uint16_t family;
	uint32_t seq;
	char *buf;
};

/**
 * struct tt_st_nl_reply - what a request got back
 * @error:  0, or the negative errno of NLMSG_ERROR / NLMSG_DONE.
 * @extack: the extended ACK message, "" when none.
 * @msgs:   reply messages (not counting DONE/ERROR).
 * @parts:  datagrams received (a dump's parts).
 * @intr:   a part carried NLM_F_DUMP_INTR.
 */
struct tt_st_nl_reply {
	int error;
	char extack[256];
	unsigned int msgs;
	unsigned int parts;
	bool intr;
};

/* Called by tt_st_nl_talk() for each reply message of the request. */
typedef void (*tt_st_nl_cb)(const struct nlmsghdr *nlh, void *arg);

/*
 * Open a NETLINK_GENERIC socket with extended and capped ACKs and resolve
 * the TT_GENL_NAME family into @nl->family: 0 or -errno (-ENOENT: no such
 * family). Call tt_st_nl_close() in every case.
 */
int tt_st_nl_open(struct tt_st_nl *nl);
/* Close the socket and free the buffer; idempotent. */
void tt_st_nl_close(struct tt_st_nl *nl);
/*
 * Start a request in @nl->buf: message @type (the family id, or
 * GENL_ID_CTRL) with NLM_F_REQUEST | NLM_F_ACK | @flags, genl command @cmd,
 * the next sequence number. Returns the message, for tt_st_nl_put().
 */
struct nlmsghdr *tt_st_nl_msg(struct tt_st_nl *nl, uint16_t type, uint8_t cmd,
			      uint16_t flags);
/*
 * Append attribute @type with @len bytes of @data (zero padded; @data may
 * be NULL when @len is 0) to @nlh; returns the attribute (a nest's header:
 * set its nla_len once its contents are appended).
 */
struct nlattr *tt_st_nl_put(struct nlmsghdr *nlh, uint16_t type,
			    const void *data, uint16_t len);
/*
 * Send the request in @nl->buf and read replies until its ACK, error or the
 * end of its dump, filling @rep; @cb (may be NULL) sees each reply message.
 * Returns 0 when a reply came (the request's own result is @rep->error) or
 * the -errno of send(2) / recv(2).
 */
int tt_st_nl_talk(struct tt_st_nl *nl, struct tt_st_nl_reply *rep,
		  tt_st_nl_cb cb, void *arg);
/*
 * The attribute after @prev among the top-level attributes of genl message
 * @nlh (the first when @prev is NULL); NULL after the last or at a
 * malformed one.
 */
const struct nlattr *tt_st_nl_next(const struct nlmsghdr *nlh,
				   const struct nlattr *prev);
/* The first top-level attribute of @nlh of @type (flags masked), or NULL. */
const struct nlattr *tt_st_nl_attr(const struct nlmsghdr *nlh, int type);
/* @tb[type] = the attributes of @nlh up to @max, by type (last wins). */
void tt_st_nl_attrs(const struct nlmsghdr *nlh, const struct nlattr **tb,
		    unsigned int max);
/* The payload of an attribute. */
const void *tt_st_nla_data(const struct nlattr *a);
/* The payload of a u64 attribute (the caller checked its type). */
uint64_t tt_st_nla_u64(const struct nlattr *a);

#endif /* TT_SELFTEST_H */
