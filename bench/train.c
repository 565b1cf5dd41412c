// SPDX-License-Identifier: GPL-2.0
/*
 * bench/train: a synthetic DNN training loop, run without tiering, with
 * tiertrain's kernel scheduler and with libtiertrain's userspace scheduler,
 * side by side in one process run.
 *
 * The model: L layers. Each iteration runs the forward pass of layers
 * 0..L-1 and then the backward pass of layers L-1..0. A layer's forward
 * runs --compute passes over the running activation and the layer's
 * weights, allocates its saved activation, writes its output there in one
 * pass, reports it as a saved tensor and ends. A layer's backward reads
 * its saved activation whole and checks its checksum (a mismatch exits with
 * status 2: tiering lost or corrupted data), runs --compute passes over it
 * and the weights into a gradient buffer, frees it and ends. Activations
 * are allocated as PyTorch's CPU allocator does (posix_memalign(3) with a
 * 64-byte alignment: glibc's malloc, so the system's THP setting, Debian's
 * "always", decides their pages, and a large one is an mmap(2) of its own
 * whose ends share huge pages with nothing 2 MiB aligned), or with
 * --base-pages each in a fresh mapping of base pages (MADV_NOHUGEPAGE where
 * THP is "always"), or with --thp each in a fresh 2 MiB-aligned
 * MADV_HUGEPAGE mapping, unmapped when freed. Only the saved
 * activations are reported to the scheduler; weights and the two scratch
 * buffers (running activation, gradient) stay on the fast node.
 *
 * Modes: "none" makes no scheduler call at all; "tiertrain" reports the
 * events to a kernel session (/dev/tiertrain); "userspace" reports them to a
 * move_pages-backend session (TIERTRAIN_BACKEND=move_pages), the library's
 * userspace scheduler; "budget" (only with --budget-mib N) is "tiertrain"
 * with a fast-tier budget of N MiB (TT_SCHED_SET_BUDGET), and there an
 * activation enters the sampler's sight when its registration returns, so
 * its figures are the registered bytes the budget counts; "copy" (only
 * when asked for) tiers nothing, and a thread of the process copies, as
 * each forward ends and as each backward nears, the share of the
 * activation that the tiertrain mode evicted and prefetched per iteration
 * between two buffers on the fast and the slow node, the iteration ending
 * when it is done: the step cost of the bytes alone, with no page-table
 * change, the floor of any mover (tt_copier_share()); "unmap" (only when
 * asked for) is "copy" whose thread also sends the process's other CPUs
 * one TLB shootdown per 2 MiB it copies (tt_copier_shoot()): the fewest
 * that any exported migration path sends, one per PMD-mapped huge page
 * (Documentation/mover.md), so copy + unmap is the floor of moving pages,
 * not only bytes; "move" (only when asked for) has the same thread move,
 * instead of copying, the same bytes of a buffer of its own (2 MiB aligned,
 * MADV_HUGEPAGE, as large as one iteration's activations) with
 * move_pages(2), 2 MiB per call, to the slow node and back in the order
 * they went (tt_copier_move()): the step cost of migrating the bytes with
 * no scheduler, no session and no other thread, whole huge pages where the
 * kernel gave them. A backend that cannot tier is reported as such and
 * its row is "n/a"; "linux" (only when asked for) makes no scheduler call
 * and turns on Linux's own tiering while it runs: demotion by reclaim
 * (/sys/kernel/mm/numa/demotion_enabled) and NUMA balancing's
 * memory-tiering mode (kernel.numa_balancing = 2), both put back as they
 * were when another mode runs and at exit. The modes take turns iteration
 * by iteration in this one process (tt_run_modes()), each with its own
 * session, so a change in the host's load weighs on all of them alike.
 *
 * --model-mib N adds the model's state (weights, gradients, the
 * optimizer's state), N MiB split evenly among the layers: a layer's
 * forward reads its share once, its backward reads and writes it once. The
 * modes then run one after another (tt_run_sequential()), each with a
 * model state of its own allocated at its start, so that no mode inherits
 * the page placement another's tiering made; with a fast node smaller than
 * the model and the activations together, this is the memory-constrained
 * case in which Linux's tiering has work to do. Then the bytes each
 * layer's compute reads are counted by tier as the layer's forward and
 * backward begin (tt_count_reads(), time excluded), the kernel's own
 * migrations from /proc/vmstat, and the step is projected on hardware
 * from those bytes (tt_projected()).
 *
 * Measurement: a sampler thread asks, every --sample-ms, where the pages of
 * every live saved activation are (TT_IOC_RESIDENCY through a separate
 * observer session, the same in every mode), and sums them per tier: fast =
 * nodes with CPUs, slow = the others. The first profile_iters + 1
 * iterations are warm-up (the scheduler profiles, then plans its first
 * iteration) and are left out of every figure. The oracle footprint (each
 * activation leaves the fast tier the instant its forward ends and is back
 * the instant its backward begins) is computed from the measured event
 * times of the same iterations.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <tiertrain.h>
#include "tt_bench.h"
#include "tt_selftest.h"

#define TT_TRAIN_MAX_LAYERS	256
/* The longest value of a kernel knob kept to be restored, with its NUL. */
#define TT_KNOB_LEN		16
#define TT_MIB			(1024.0 * 1024.0)
#define TT_MUL			0x9e3779b97f4a7c15ULL

/* What a layer's compute reads (struct tt_lrec @rd_kind). */
enum {
	TT_RD_SCRATCH,
	TT_RD_MODEL,
	TT_RD_ACT,
	TT_RD_NR,
};

static const char *const tt_rd_name[TT_RD_NR] = {
	"scratch", "model", "activations",
};

/* How activations are allocated (struct tt_cfg @alloc). */
enum {
	TT_ALLOC_MALLOC,
	TT_ALLOC_BASE,
	TT_ALLOC_THP,
};

static const char *const tt_alloc_name[] = {
	"malloc", "base-page", "THP",
};

/* PyTorch's CPU allocator alignment (c10 gAlignment). */
#define TT_MALLOC_ALIGN		64

/* Goals printed next to the figures. */
#define TT_GOAL_AVG_PCT		-80.0
#define TT_GOAL_PEAK_PCT	-60.0
#define TT_GOAL_ONTIME_PCT	99.0
#define TT_GOAL_STEP_PCT	3.0
/* or within this many points of the copy mode's step cost (the floor) */
#define TT_GOAL_FLOOR_PTS	1.0

enum tt_mode {
	TT_MODE_NONE,
	TT_MODE_TIERTRAIN,
	TT_MODE_USERSPACE,
	TT_MODE_BUDGET,
	TT_MODE_COPY,
	TT_MODE_UNMAP,
	TT_MODE_MOVE,
	TT_MODE_LINUX,
	TT_MODE_NR,
};

static const char *const tt_mode_name[TT_MODE_NR] = {
	"none", "tiertrain", "userspace", "budget", "copy", "unmap", "move",
	"linux",
};

/*
 * The kernel counters of /proc/vmstat each iteration records (its delta):
 * who else migrated what (Linux's own tiering: demotion by reclaim,
 * promotion by NUMA hinting faults). A counter the kernel lacks reads 0.
 */
enum {
	TT_VM_DEMOTE_KSWAPD,
	TT_VM_DEMOTE_DIRECT,
	TT_VM_DEMOTE_KHUGEPAGED,
	TT_VM_PROMOTE,
	TT_VM_NUMA_MIGRATED,
	TT_VM_HINT_FAULTS,
	TT_VM_HINT_FAULTS_LOCAL,
	TT_VM_PGMIGRATE,
	TT_VM_NR,
};

static const char *const tt_vm_name[TT_VM_NR] = {
	"pgdemote_kswapd", "pgdemote_direct", "pgdemote_khugepaged",
	"pgpromote_success", "numa_pages_migrated", "numa_hint_faults",
	"numa_hint_faults_local", "pgmigrate_success",
};

/* The modes whose thread copies (or moves) bytes instead of tiering them. */
static int tt_copying(int mode)
{
	return mode == TT_MODE_COPY || mode == TT_MODE_UNMAP ||
	       mode == TT_MODE_MOVE;
}

/**
 * struct tt_cfg - the workload and what to run
 * @layers:        number of layers.
 * @size:          saved activation bytes of each layer (page multiples).
 * @compute:       passes per forward and per backward (after the checksum).
 * @compute_ms:    --compute-ms: each layer's passes are calibrated at the
 *                 start to last about this long (0: @compute passes).
 * @fwd_passes:    passes of each layer's forward (@compute, or calibrated).
 * @bwd_passes:    passes of each layer's backward (the same).
 * @time_limit_s:  --time-limit: no round of iterations begins that would
 *                 end later than this many seconds from the start (the
 *                 last round's time as the estimate); 0: none.
 * @weights_bytes: weights per layer (a power of two).
 * @iters:         iterations per mode, warm-up included.
 * @profile_iters: scheduler profile iterations; 0 = the session's default.
 * @sample_ns:     sampler period.
 * @alloc:         how activations are allocated: TT_ALLOC_MALLOC (the
 *                 default), TT_ALLOC_BASE (--base-pages), TT_ALLOC_THP
 *                 (--thp).
 * @thp:           @alloc is TT_ALLOC_THP.
 * @map_thp:       tt_st_map()'s @thp argument for activations (not
 *                 TT_ALLOC_MALLOC): 1 huge pages,
 *                 -1 base pages where THP is "always", 0 base pages where
 *                 it is "madvise" or "never" (no madvise(2) call: each
 *                 one takes mmap_lock for writing, which a migration in
 *                 flight holds up).
 * @verify_ontime: query residency at each backward begin (time excluded).
 * @sync_late:     set TT_SCHED_SYNC_LATE.
 * @reference:     set TT_SCHED_REFERENCE (the paper's semantics).
 * @anchor:        set TT_SCHED_ANCHOR (triggers follow the iteration).
 * @alap:          set TT_SCHED_ALAP (as-late-as-possible prefetch plan).
 * @defer_late:    set TT_SCHED_DEFER_LATE (late bytes read from the slow
 *                 node, brought back after the backward pass).
 * @merge:         set TT_SCHED_MERGE (touching tensors in joined batches).
 * @count:         set TT_SCHED_COUNT (prefetches released by backward
 *                 progress too).
 * @dynamic:       set TT_SCHED_DYNAMIC (one profile per layer sequence,
 *                 the layer-count fallback otherwise).
 * @min_depth:     --random-depth: each iteration runs the first D layers,
 *                 D drawn from [@min_depth, @layers] by the iteration
 *                 number (the same D in every mode); 0 = all layers.
 * @pieces:        tensors each activation is reported as (contiguous
 *                 pieces of it, one tt_tensor_saved() each).
 * @budget_mib:    the budget mode's fast-tier budget, MiB (0: no budget mode).
 * @model_bytes:   --model-mib: the model's state (weights, gradients and
 *                 the optimizer's state), split evenly among the layers;
 *                 each layer's forward reads its share once, its backward
 *                 reads and writes it once (0: none). Implies @sequential
 *                 and @reads.
 * @sequential:    the modes run one after another, each with its own
 *                 model state allocated at its start and freed at its end,
 *                 instead of taking turns iteration by iteration.
 * @reads:         account the bytes each layer's compute reads from each
 *                 tier (residency taken as the layer's forward and its
 *                 backward begin; time excluded).
 * @rows:          rows of the ASCII timeline.
 * @timeline:      print the ASCII timeline and the moves.
 * @run:           modes to run.
 * @out:           JSON output path.
 */
struct tt_cfg {
	unsigned int layers;
	size_t size[TT_TRAIN_MAX_LAYERS];
	unsigned int compute;
	double compute_ms;
	unsigned int fwd_passes[TT_TRAIN_MAX_LAYERS];
	unsigned int bwd_passes[TT_TRAIN_MAX_LAYERS];
	double time_limit_s;
	size_t weights_bytes;
	unsigned int iters;
	unsigned int profile_iters;
	uint64_t sample_ns;
	int alloc;
	int thp;
	int map_thp;
	int verify_ontime;
	int sync_late;
	int reference;
	int anchor;
	int alap;
	int defer_late;
	int merge;
	int count;
	int dynamic;
	unsigned int min_depth;
	unsigned int pieces;
	unsigned int budget_mib;
	size_t model_bytes;
	int sequential;
	int reads;
	unsigned int rows;
	int timeline;
	int run[TT_MODE_NR];
	char out[PATH_MAX];
};

/* Whether a flag option was given: else the sessions keep their default. */
static int tt_flags_given(const struct tt_cfg *c)
{
	return c->reference || c->sync_late || c->anchor || c->alap ||
	       c->defer_late || c->merge || c->count || c->dynamic;
}

/**
 * struct tt_lrec - event times of one layer in one iteration (CLOCK_MONOTONIC)
 * @fwd_begin:    forward begins (before tt_layer_begin()).
 * @fwd_computed: its compute passes are done (before the mmap).
 * @mapped:       its activation is mapped (before the first write).
 * @touched:      the output pass wrote every page of it.
 * @fwd_end:      forward ends (before tt_layer_end()).
 * @fwd_done:     tt_layer_end() returned.
 * @bwd_call:     tt_layer_begin(TT_BWD) is called.
 * @bwd_begin:    backward begins (after tt_layer_begin() returned).
 * @checked:      the checksum pass is done.
 * @bwd_computed: the compute passes are done.
 * @freed:        the activation is unmapped.
 * @bwd_end:      backward ends (after tt_layer_end() returned).
 * @late_own:     bytes on slow nodes at @bwd_begin (--verify-ontime only).
 * @rd_fast:      bytes the layer's compute read from fast nodes in this
 *                iteration (@reads only): each pass over a buffer reads
 *                it whole, from where it was as the pass's half (forward
 *                or backward) began.
 * @rd_slow:      the same from slow nodes.
 * @wr_fast:      bytes its compute wrote to fast nodes, the same way.
 * @wr_slow:      the same to slow nodes.
 * @rd_kind:      @rd_slow by what was read: TT_RD_SCRATCH (the running
 *                activation and the gradient), TT_RD_MODEL, TT_RD_ACT (the
 *                saved activation).
 * @addr:         the activation's address (its offset in a 2 MiB block says
 *                how large the base-page pieces at its ends are).
 */
struct tt_lrec {
	uint64_t fwd_begin, fwd_computed, mapped, touched, fwd_end, fwd_done;
	uint64_t bwd_call, bwd_begin, checked, bwd_computed, freed, bwd_end;
	uint64_t late_own;
	uint64_t rd_fast, rd_slow, wr_fast, wr_slow;
	uint64_t rd_kind[3];
	uint64_t addr;
};

/**
 * struct tt_irec - one iteration
 * @begin:    start (before tt_iter_begin()).
 * @end:      end of the last backward.
 * @excluded: time spent in --verify-ontime checks (not training).
 * @tlb:      TLB shootdown interrupts the CPUs received during it (the
 *            "TLB" row of /proc/interrupts; 0 when unreadable).
 * @cpu:      CPU time of the training thread in it, ns (the first field of
 *            /proc/thread-self/schedstat; 0 when unreadable).
 * @wait:     time the training thread was runnable but waited for a CPU in
 *            it, ns (schedstat's second field): another thread ran on it.
 * @depth:    layers it ran (--random-depth).
 * @vm:       /proc/vmstat counter deltas over it (TT_VM_*).
 * @st:       the session's counters over it (the tiering modes; zero in
 *            the others): its late and on-time bytes, evictions, dropped
 *            layers.
 */
struct tt_irec {
	uint64_t begin, end, excluded;
	uint64_t tlb;
	uint64_t cpu, wait;
	unsigned int depth;
	uint64_t vm[TT_VM_NR];
	struct tt_ioc_stats st;
};

/**
 * struct tt_sample - one sampler pass over the live activations
 * @t:    CLOCK_MONOTONIC middle of the pass.
 * @fast: bytes on fast nodes.
 * @slow: bytes on slow nodes.
 * @free: bytes free on the fast nodes (their MemFree; --model-mib only).
 */
struct tt_sample {
	uint64_t t, fast, slow, free;
};

/**
 * struct tt_live - a live saved activation, as the sampler sees it
 * @addr: start; NULL when the slot is free.
 * @len:  length in bytes.
 * @gen:  changes whenever the slot changes, so that the sampler can tell
 *        that an activation went away while it was querying it (the
 *        training thread never waits for the sampler).
 */
struct tt_live {
	void *addr;
	size_t len;
	uint64_t gen;
};

/**
 * struct tt_result - the figures of one mode
 * @ran:        the mode was requested.
 * @ok:         it ran to the end and produced figures.
 * @fatal:      it could not run and that is an error (not just "n/a").
 * @reason:     why not, for humans.
 * @backend:    libtiertrain backend used ("-" for none).
 * @warmup:     iterations left out.
 * @measured:   iterations measured.
 * @iter_ms:    time of each measured iteration.
 * @step_ms:    their median.
 * @fast_avg:   time-weighted average fast-tier bytes of saved activations.
 * @fast_peak:  maximum sampled.
 * @slow_avg:   the same on slow nodes.
 * @slow_peak:  maximum sampled.
 * @base_avg:   model of no tiering from the event times (mapped..freed).
 * @base_peak:  its maximum.
 * @oracle_avg: oracle from the event times (see the header comment).
 * @oracle_peak: its maximum.
 * @have_stats: @st holds session counter deltas over the measured iterations.
 * @st:         those deltas (rates: the final values).
 * @late_own:   bytes found slow at backward begins (--verify-ontime).
 * @tlb_per_iter: median TLB shootdowns received per measured iteration.
 * @tlb_per_mib: TLB shootdowns received over the measured iterations per
 *              MiB the session moved in them (evicted + prefetched); -1
 *              when it moved nothing or has no counters (the copy mode:
 *              per MiB it copied).
 * @copied:     the copy mode: bytes copied in the measured iterations.
 * @rd_fast:    bytes the compute read from fast nodes per measured
 *              iteration (their mean; @reads only).
 * @rd_slow:    the same from slow nodes.
 * @wr_fast:    bytes it wrote to fast nodes per measured iteration (mean).
 * @wr_slow:    the same to slow nodes.
 * @rd_kind:    @rd_slow by what was read (TT_RD_*).
 * @vm:         /proc/vmstat deltas summed over the measured iterations.
 * @free_avg:   bytes free on the fast nodes, time-weighted average over
 *              the measured iterations (--model-mib only).
 * @free_min:   the least sampled.
 * @peak_med:   median over the measured iterations of each one's peak
 *              fast-tier bytes (@fast_peak is the maximum).
 * @nlayers:    entries in @layers.
 * @layers:     tt_layers() after the last iteration.
 * @nsamples:   sampler passes in the measured iterations.
 * @mean_gap_ms: their mean spacing.
 * @max_pass_ms: the longest pass.
 * @busy_pct:   share of the mode's wall time the sampler spent in passes.
 * @tl_iter:    iteration of the timeline (the last one).
 * @tl_samples: its samples.
 * @tl_n:       their number.
 * @tl_rec:     its per-layer event times.
 * @tl_irec:    the iteration's times.
 * @all_rec:    per-layer event times of every iteration, warm-up included.
 * @all_irec:   every iteration's times.
 */
struct tt_result {
	int ran, ok, fatal;
	char reason[512];
	const char *backend;
	unsigned int warmup, measured;
	double *iter_ms;
	double step_ms;
	double fast_avg, fast_peak, slow_avg, slow_peak;
	double base_avg, base_peak, oracle_avg, oracle_peak;
	int have_stats;
	struct tt_ioc_stats st;
	uint64_t late_own;
	double tlb_per_iter;
	double tlb_per_mib;
	uint64_t copied;
	double rd_fast, rd_slow, wr_fast, wr_slow, rd_kind[TT_RD_NR];
	double free_avg, free_min;
	uint64_t vm[TT_VM_NR];
	double peak_med;
	int nlayers;
	struct tt_layer_info *layers;
	size_t nsamples;
	double mean_gap_ms, max_pass_ms, busy_pct;
	unsigned int tl_iter;
	struct tt_sample *tl_samples;
	size_t tl_n;
	struct tt_lrec *tl_rec;
	struct tt_irec tl_irec;
	struct tt_lrec *all_rec;
	struct tt_irec *all_irec;
};

/**
 * struct tt_mstate - what one mode records while the modes take turns
 * @s:        its session (NULL for none, or once it stopped).
 * @active:   it still runs iterations.
 * @st0:      its session counters when its measured iterations began.
 * @irec:     its iterations.
 * @lrec:     its layer events, [iter * layers + layer].
 * @smp:      the sampler's passes made during its iterations.
 * @nsmp:     used entries of @smp.
 * @capsmp:   allocated entries of @smp.
 * @max_pass: longest of those passes, ns.
 * @sum_pass: time spent in them, ns.
 */
struct tt_mstate {
	struct tt_session *s;
	int active;
	struct tt_ioc_stats st0;
	struct tt_irec *irec;
	struct tt_lrec *lrec;
	struct tt_sample *smp;
	size_t nsmp, capsmp;
	uint64_t max_pass, sum_pass;
};

/**
 * struct tt_copier - the copy mode's thread: the floor of every mover
 * @th:      the thread.
 * @lock:    protects the fields below.
 * @cond:    signalled when work is posted, done, or the thread must stop.
 * @pending: bytes still to copy: [0] fast to slow, [1] slow to fast.
 * @stop:    the thread ends.
 * @fast:    a buffer on the fast node, @len bytes.
 * @slow:    a buffer bound to the slow node, @len bytes.
 * @len:     their size (the largest activation).
 * @off:     where the next copy starts in them.
 * @copied:  bytes copied in the measured iterations.
 * @count:   add to @copied (written between iterations, under @lock).
 * @running: the thread was started.
 * @share:   this iteration's share of each activation to copy out ([0])
 *           and back ([1]) (tt_copier_share()).
 * @mode:    the copying mode of this iteration (TT_MODE_COPY,
 *           TT_MODE_UNMAP or TT_MODE_MOVE; set between iterations, under
 *           @lock).
 * @scratch: a page of its own, resident, that the unmap mode write-protects
 *           to send a shootdown.
 * @unshot:  bytes copied since its last shootdown (the unmap mode).
 * @mv:      the move mode's buffer (@mv_len bytes, @mv_len / 2 MiB
 *           blocks), or NULL.
 * @mv_out:  blocks of @mv on the slow node: those from @mv_first on,
 *           cyclically; the move mode moves the next fast block out and
 *           the oldest one out back.
 * @mv_first: the oldest block on the slow node.
 * @mv_carry: bytes posted to each direction not yet a whole block.
 * @fast_node: the node the process runs on (the move mode's way back).
 * @slow_node: the slow node (the move mode's way out).
 */
struct tt_copier {
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t pending[2];
	int stop;
	char *fast, *slow;
	size_t len, off;
	uint64_t copied[TT_MODE_NR];
	int count;
	int running;
	double share[2];
	int mode;
	char *scratch;
	uint64_t unshot;
	char *mv;
	size_t mv_len, mv_out, mv_first;
	uint64_t mv_carry[2];
	int fast_node, slow_node;
};

/**
 * struct tt_train - the whole run
 * @cfg:       configuration.
 * @obs:       observer session for residency (never gets events).
 * @s:         the session of the running mode (NULL for none).
 * @mode:      the running mode (changed under @lock, between iterations).
 * @nr_nodes:  node ids 0..nr_nodes - 1 exist.
 * @fast:      node ids with CPUs.
 * @fast_node: the node the process runs on.
 * @slow_node: a memory-only node (the copy mode's target), or -1.
 * @cp:        the copy mode's thread.
 * @x:         running activation (max layer size).
 * @g:         gradient scratch (max layer size).
 * @w:         weights of each layer.
 * @act:       activation of each layer in the current iteration.
 * @sum:       its checksum.
 * @lock:      protects @live, @stop, @mode and the sampler's records.
 * @live:      live activations by layer; from TT_TRAIN_MAX_LAYERS on,
 *             each layer's model state while the mode's model is there.
 * @model:     each layer's share of the model state (--model-mib), or NULL.
 * @model_len: its size in bytes.
 * @sink:      what the forward's read of the model state sums to (kept so
 *             that the read is not optimised away).
 * @knob_nb:   kernel.numa_balancing as the run found it ("" unread).
 * @knob_dem:  /sys/kernel/mm/numa/demotion_enabled as found ("" unread).
 * @knobs_set: the linux mode's settings are in force.
 * @stop:      tells the sampler to end.
 * @sampler:   sampler thread.
 * @irec:      iterations of the running mode (its @ms's).
 * @lrec:      layer events of the running mode (its @ms's).
 * @ms:        what each mode records.
 * @res:       results per mode.
 */
struct tt_train {
	struct tt_cfg cfg;
	struct tt_session *obs;
	struct tt_session *s;
	enum tt_mode mode;
	int nr_nodes;
	unsigned char fast[TT_MAX_NODES];
	int fast_node;
	int slow_node;
	struct tt_copier cp;
	uint64_t *x, *g;
	uint64_t *w[TT_TRAIN_MAX_LAYERS];
	uint64_t *act[TT_TRAIN_MAX_LAYERS];
	uint64_t sum[TT_TRAIN_MAX_LAYERS];
	pthread_mutex_t lock;
	struct tt_live live[2 * TT_TRAIN_MAX_LAYERS];
	uint64_t *model[TT_TRAIN_MAX_LAYERS];
	size_t model_len;
	uint64_t sink;
	char knob_nb[TT_KNOB_LEN], knob_dem[TT_KNOB_LEN];
	int knobs_set;
	int stop;
	pthread_t sampler;
	struct tt_irec *irec;
	struct tt_lrec *lrec;
	struct tt_mstate ms[TT_MODE_NR];
	struct tt_result res[TT_MODE_NR];
	uint64_t t_start;
	unsigned int iters_planned;
	char stopped[128];
};

#ifndef __printf
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#endif
#ifndef __noreturn
#define __noreturn	__attribute__((noreturn))
#endif

static void tt_die(const char *fmt, ...) __printf(1, 2) __noreturn;

static void tt_die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	fprintf(stderr, "train: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static void *tt_zalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (!p)
		tt_die("out of memory (%zu bytes)", n);
	return p;
}

static uint64_t tt_now(void)
{
	return tt_st_now_ns();
}

static double tt_ms(uint64_t ns)
{
	return ns / 1e6;
}

static struct tt_lrec *tt_rec(struct tt_train *t, unsigned int it,
			      unsigned int l)
{
	return &t->lrec[(size_t)it * t->cfg.layers + l];
}

/* A signal asked the run to end: the table is made from the rounds done. */
static volatile sig_atomic_t tt_signalled;

static void tt_on_signal(int sig)
{
	tt_signalled = sig;
}

/* ---- the compute kernels ---------------------------------------------- */

/* Each one a TT_KERNEL (tt_bench.h): inside one page of code. */

/* A forward compute pass: the running activation through the weights. */
static TT_KERNEL void tt_fwd_pass(uint64_t *restrict x,
				  const uint64_t *restrict w, size_t wmask,
				  size_t n)
{
	size_t j;

	for (j = 0; j < n; j++)
		x[j] = x[j] * TT_MUL + w[j & wmask];
}

/*
 * The checksum of a buffer: two running sums (Fletcher-like), so a lost,
 * zeroed or misplaced page changes it.
 */
static TT_KERNEL uint64_t tt_checksum(const uint64_t *restrict a, size_t n)
{
	uint64_t s1 = 0, s2 = 0;
	size_t j;

	for (j = 0; j < n; j++) {
		s1 += a[j];
		s2 += s1;
	}
	return s1 ^ (s2 * TT_MUL);
}

/*
 * The layer's output, saved for its backward pass: written once from the
 * running activation (every word, no read of the fresh pages), with the
 * checksum tt_checksum() will find in it.
 */
static TT_KERNEL uint64_t tt_fwd_out(uint64_t *restrict act,
				     const uint64_t *restrict x, size_t n,
				     uint64_t salt)
{
	uint64_t s1 = 0, s2 = 0, v;
	size_t j;

	for (j = 0; j < n; j++) {
		v = (x[j] ^ salt) + j;
		act[j] = v;
		s1 += v;
		s2 += s1;
	}
	return s1 ^ (s2 * TT_MUL);
}

/* A backward pass: read the saved activation and weights into @g. */
static TT_KERNEL void tt_bwd_pass(uint64_t *restrict g,
				  const uint64_t *restrict act,
				  const uint64_t *restrict w, size_t wmask,
				  size_t n)
{
	size_t j;

	for (j = 0; j < n; j++)
		g[j] = g[j] * TT_MUL + (act[j] ^ w[j & wmask]);
}

/*
 * The backward's update of a layer's model state (--model-mib): every word
 * read and written once, as an optimizer step reads the weights, the
 * gradients and its own state and writes them back.
 */
static TT_KERNEL void tt_model_step(uint64_t *restrict m, size_t n)
{
	size_t j;

	for (j = 0; j < n; j++)
		m[j] = m[j] * TT_MUL + 1;
}

/* ---- topology --------------------------------------------------------- */

static void tt_topology(struct tt_train *t)
{
	struct tt_st_topo topo;
	char path[128], buf[4096];
	int n, ret, nfast = 0;

	ret = tt_st_topo_read(&topo);
	if (ret)
		tt_die("reading the NUMA topology from /sys/devices/system/node: %s",
		       strerror(-ret));
	t->nr_nodes = topo.nr_node_ids;
	if (t->nr_nodes < 1 || t->nr_nodes > TT_MAX_NODES)
		tt_die("nr_node_ids %d out of range 1..%d", t->nr_nodes,
		       TT_MAX_NODES);
	for (n = 0; n < t->nr_nodes; n++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/node/node%d/cpulist", n);
		ret = tt_st_read_file(path, buf, sizeof(buf));
		t->fast[n] = ret > 0;
		nfast += t->fast[n];
	}
	if (!nfast)
		tt_die("no NUMA node has CPUs (read /sys/devices/system/node/node*/cpulist)");
	t->fast_node = topo.fast;
	t->slow_node = topo.slow;
	if (t->fast_node >= 0) {
		ret = tt_st_run_on_node(t->fast_node);
		if (ret)
			tt_die("cannot run on the CPUs of node %d: %s",
			       t->fast_node, strerror(-ret));
	}
}

/* ---- the live table and the sampler ------------------------------------ */

static void tt_live_add(struct tt_train *t, unsigned int l, void *addr,
			size_t len)
{
	pthread_mutex_lock(&t->lock);
	t->live[l].addr = addr;
	t->live[l].len = len;
	t->live[l].gen++;
	pthread_mutex_unlock(&t->lock);
}

/*
 * Take the activation out of the sampler's sight before it is unmapped. A
 * query the sampler has in flight on it may then fail or see another
 * mapping at that address: the sampler drops such a result.
 */
static void tt_live_del(struct tt_train *t, unsigned int l)
{
	pthread_mutex_lock(&t->lock);
	t->live[l].addr = NULL;
	t->live[l].len = 0;
	t->live[l].gen++;
	pthread_mutex_unlock(&t->lock);
}

/* Fast and slow bytes of [addr, addr + len) per the observer session. */
static int tt_where(struct tt_train *t, const void *addr, size_t len,
		    uint64_t *fast, uint64_t *slow)
{
	uint64_t bytes[TT_MAX_NODES];
	int n, ret;

	ret = tt_residency(t->obs, addr, len, bytes, t->nr_nodes);
	if (ret < 0)
		return ret;
	*fast = 0;
	*slow = 0;
	for (n = 0; n < t->nr_nodes; n++) {
		if (t->fast[n])
			*fast += bytes[n];
		else
			*slow += bytes[n];
	}
	return 0;
}

/* Bytes free on the nodes with CPUs (MemFree of each node's meminfo). */
static uint64_t tt_fast_free(const struct tt_train *t)
{
	char path[96], buf[4096], *p;
	uint64_t sum = 0;
	int n;

	for (n = 0; n < t->nr_nodes; n++) {
		if (!t->fast[n])
			continue;
		snprintf(path, sizeof(path),
			 "/sys/devices/system/node/node%d/meminfo", n);
		if (tt_st_read_file(path, buf, sizeof(buf)) <= 0)
			continue;
		p = strstr(buf, "MemFree:");
		if (p)
			sum += strtoull(p + strlen("MemFree:"), NULL, 10) << 10;
	}
	return sum;
}

static void *tt_sampler_main(void *arg)
{
	struct tt_train *t = arg;
	struct sched_param sp = { .sched_priority = 0 };
	struct timespec next;
	uint64_t due = tt_now();
	int err;

	/*
	 * The sampler is an observer: it takes only CPU time nobody else
	 * wants, so the training thread and the migration workers run as if
	 * it were not there. When CPUs are busy its passes thin out; the
	 * averages weight each sample by the time until the next one.
	 */
	err = pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp);
	if (err)
		tt_die("sampler: cannot switch to SCHED_IDLE: %s", strerror(err));

	for (;;) {
		uint64_t t0, t1, fast = 0, slow = 0, f, s;
		unsigned int i, l, L = t->cfg.layers;
		struct tt_mstate *ms;
		enum tt_mode mode;
		int ret;

		pthread_mutex_lock(&t->lock);
		mode = t->mode;
		pthread_mutex_unlock(&t->lock);
		t0 = tt_now();
		/* the activations, then the model state (--model-mib) */
		for (i = 0; i < 2 * L; i++) {
			uint64_t gen;
			void *addr;
			size_t len;
			int gone;

			l = i < L ? i : TT_TRAIN_MAX_LAYERS + i - L;
			pthread_mutex_lock(&t->lock);
			if (t->stop) {
				pthread_mutex_unlock(&t->lock);
				return NULL;
			}
			addr = t->live[l].addr;
			len = t->live[l].len;
			gen = t->live[l].gen;
			pthread_mutex_unlock(&t->lock);
			if (!addr)
				continue;
			ret = tt_where(t, addr, len, &f, &s);
			pthread_mutex_lock(&t->lock);
			gone = t->live[l].gen != gen;
			pthread_mutex_unlock(&t->lock);
			if (gone)
				continue;
			if (ret)
				tt_die("sampler: residency of layer %u's %s (%zu bytes at %p): %s",
				       i % L, i < L ? "activation" : "model state",
				       len, addr, strerror(-ret));
			fast += f;
			slow += s;
		}
		t1 = tt_now();
		/*
		 * The pass belongs to the mode whose turn it was; one that
		 * saw the turn change (only between iterations, when nothing
		 * is live) is dropped.
		 */
		pthread_mutex_lock(&t->lock);
		ms = &t->ms[mode];
		if (t->mode != mode) {
			pthread_mutex_unlock(&t->lock);
			continue;
		}
		if (ms->nsmp == ms->capsmp) {
			ms->capsmp = ms->capsmp ? 2 * ms->capsmp : 65536;
			ms->smp = realloc(ms->smp, ms->capsmp * sizeof(*ms->smp));
			if (!ms->smp)
				tt_die("sampler: out of memory for %zu samples",
				       ms->capsmp);
		}
		ms->smp[ms->nsmp].t = t0 + (t1 - t0) / 2;
		ms->smp[ms->nsmp].fast = fast;
		ms->smp[ms->nsmp].slow = slow;
		ms->smp[ms->nsmp].free = t->cfg.reads ? tt_fast_free(t) : 0;
		ms->nsmp++;
		if (t1 - t0 > ms->max_pass)
			ms->max_pass = t1 - t0;
		ms->sum_pass += t1 - t0;
		pthread_mutex_unlock(&t->lock);
		due += t->cfg.sample_ns;
		if (due < t1)
			due = t1;
		next.tv_sec = due / 1000000000ULL;
		next.tv_nsec = due % 1000000000ULL;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next,
				       NULL) == EINTR)
			;
	}
}

static void tt_sampler_start(struct tt_train *t)
{
	int ret;

	t->stop = 0;
	ret = pthread_create(&t->sampler, NULL, tt_sampler_main, t);
	if (ret)
		tt_die("cannot start the sampler thread: %s", strerror(ret));
}

static void tt_sampler_stop(struct tt_train *t)
{
	pthread_mutex_lock(&t->lock);
	t->stop = 1;
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->sampler, NULL);
}

/* ---- one training iteration ------------------------------------------- */

/* A scheduler call of mode @t->s; any failure past the first is fatal. */
static void tt_call(struct tt_train *t, int ret, const char *what,
		    unsigned int layer, unsigned int it)
{
	if (ret < 0)
		tt_die("%s: %s(layer %u) in iteration %u: %s",
		       tt_backend(t->s), what, layer, it, strerror(-ret));
}

/*
 * Report layer @l's activation as --tensors-per-layer contiguous tensors
 * (a framework saves many tensors per layer), page aligned pieces.
 */
static void tt_saved_pieces(struct tt_train *t, unsigned int l,
			    unsigned int it, uint64_t *a, size_t len)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE), off = 0, piece;
	unsigned int k, n = t->cfg.pieces;

	piece = (len / n + ps - 1) / ps * ps;
	for (k = 0; k < n && off < len; k++, off += piece) {
		size_t sz = len - off < piece ? len - off : piece;

		tt_call(t, tt_tensor_saved(t->s, l, (char *)a + off, sz),
			"tt_tensor_saved", l, it);
	}
}

static void tt_copier_post(struct tt_train *t, int dir, double bytes);

/*
 * --model-mib: the bytes of [@addr, @addr + @len) that @passes passes of
 * layer @l's compute read and @wpasses passes write, by tier, taken from
 * where they are now; the query's time is left out of iteration @it's.
 * Every buffer counted here is written before it is read, so bytes the
 * query finds on no node are pages in migration (a prefetch still under
 * way): they count as slow, since the compute waits for them.
 */
static void tt_count_reads(struct tt_train *t, unsigned int it,
			   unsigned int l, const void *addr, size_t len,
			   unsigned int passes, unsigned int wpasses, int kind)
{
	struct tt_lrec *r = tt_rec(t, it, l);
	uint64_t t0 = tt_now(), fast, slow;
	int ret;

	ret = tt_where(t, addr, len, &fast, &slow);
	if (ret)
		tt_die("residency of layer %u's %s (%zu bytes at %p): %s", l,
		       tt_rd_name[kind], len, addr, strerror(-ret));
	if (fast + slow < len)
		slow = len - fast;
	r->rd_fast += fast * passes;
	r->rd_slow += slow * passes;
	r->wr_fast += fast * wpasses;
	r->wr_slow += slow * wpasses;
	r->rd_kind[kind] += slow * passes;
	t->irec[it].excluded += tt_now() - t0;
}

static void tt_forward(struct tt_train *t, unsigned int it, unsigned int l)
{
	struct tt_lrec *r = tt_rec(t, it, l);
	size_t len = t->cfg.size[l], n = len / sizeof(uint64_t);
	size_t wmask = t->cfg.weights_bytes / sizeof(uint64_t) - 1;
	unsigned int p;
	uint64_t *a;

	if (t->cfg.reads) {
		/*
		 * the passes and the output read the running activation,
		 * the passes write it
		 */
		tt_count_reads(t, it, l, t->x, len, t->cfg.fwd_passes[l] + 1,
			       t->cfg.fwd_passes[l], TT_RD_SCRATCH);
		if (t->model[l])
			tt_count_reads(t, it, l, t->model[l], t->model_len, 1,
				       0, TT_RD_MODEL);
	}
	r->fwd_begin = tt_now();
	if (t->s)
		tt_call(t, tt_layer_begin(t->s, l, TT_FWD), "tt_layer_begin(TT_FWD)",
			l, it);
	if (t->model[l])
		t->sink += tt_checksum(t->model[l], t->model_len / sizeof(uint64_t));
	for (p = 0; p < t->cfg.fwd_passes[l]; p++)
		tt_fwd_pass(t->x, t->w[l], wmask, n);
	r->fwd_computed = tt_now();
	if (t->cfg.alloc == TT_ALLOC_MALLOC) {
		void *p = NULL;
		int err = posix_memalign(&p, TT_MALLOC_ALIGN, len);

		if (err)
			tt_die("posix_memalign of layer %u's %zu-byte activation: %s",
			       l, len, strerror(err));
		a = p;
	} else {
		a = tt_st_map(len, t->cfg.map_thp);
		if (!a)
			tt_die("mmap of layer %u's %zu-byte activation: %s", l,
			       len, strerror(errno));
	}
	r->mapped = tt_now();
	t->sum[l] = tt_fwd_out(a, t->x, n, (uint64_t)it << 32 | l);
	r->touched = tt_now();
	/* where the output pass wrote the activation */
	if (t->cfg.reads)
		tt_count_reads(t, it, l, a, len, 0, 1, TT_RD_ACT);
	if (t->mode != TT_MODE_BUDGET)
		tt_live_add(t, l, a, len);
	t->act[l] = a;
	r->addr = (uintptr_t)a;
	if (t->s)
		tt_saved_pieces(t, l, it, a, len);
	/* the budget counts registered bytes: in sight once registered */
	if (t->mode == TT_MODE_BUDGET)
		tt_live_add(t, l, a, len);
	/* the copy modes: as the activation would be evicted */
	if (tt_copying(t->mode))
		tt_copier_post(t, 0, len * t->cp.share[0]);
	r->fwd_end = tt_now();
	if (t->s)
		tt_call(t, tt_layer_end(t->s, l, TT_FWD), "tt_layer_end(TT_FWD)",
			l, it);
	r->fwd_done = tt_now();
}

static void tt_backward(struct tt_train *t, unsigned int it, unsigned int l)
{
	struct tt_lrec *r = tt_rec(t, it, l);
	size_t len = t->cfg.size[l], n = len / sizeof(uint64_t);
	size_t wmask = t->cfg.weights_bytes / sizeof(uint64_t) - 1;
	uint64_t *a = t->act[l], sum, t0, fast, slow;
	unsigned int p;
	int ret;

	r->bwd_call = tt_now();
	if (tt_copying(t->mode)) {
		/* as this layer's and the next one's would be prefetched */
		if (l + 1 == t->irec[it].depth)
			tt_copier_post(t, 1, len * t->cp.share[1]);
		if (l)
			tt_copier_post(t, 1, t->cfg.size[l - 1] * t->cp.share[1]);
	}
	if (t->s)
		tt_call(t, tt_layer_begin(t->s, l, TT_BWD), "tt_layer_begin(TT_BWD)",
			l, it);
	r->bwd_begin = tt_now();
	if (t->cfg.verify_ontime) {
		ret = tt_where(t, a, len, &fast, &slow);
		if (ret)
			tt_die("--verify-ontime: residency of layer %u's activation: %s",
			       l, strerror(-ret));
		r->late_own = slow;
		t0 = tt_now();
		t->irec[it].excluded += t0 - r->bwd_begin;
		r->bwd_begin = t0;
	}
	if (t->cfg.reads) {
		/* the checksum and the passes read the activation */
		tt_count_reads(t, it, l, a, len, t->cfg.bwd_passes[l] + 1, 0,
			       TT_RD_ACT);
		tt_count_reads(t, it, l, t->g, len, t->cfg.bwd_passes[l],
			       t->cfg.bwd_passes[l], TT_RD_SCRATCH);
		if (t->model[l])
			tt_count_reads(t, it, l, t->model[l], t->model_len, 1,
				       1, TT_RD_MODEL);
		/* tt_count_reads() left its time out of the iteration's */
		r->bwd_begin = tt_now();
	}
	sum = tt_checksum(a, n);
	if (sum != t->sum[l]) {
		fflush(stdout);
		fprintf(stderr,
			"train: %s mode, iteration %u, layer %u: the saved activation (%zu bytes at %p) has checksum %#llx, written as %#llx: data was lost or corrupted\n",
			tt_mode_name[t->mode],
			it, l, len, (void *)a, (unsigned long long)sum,
			(unsigned long long)t->sum[l]);
		exit(2);
	}
	r->checked = tt_now();
	for (p = 0; p < t->cfg.bwd_passes[l]; p++)
		tt_bwd_pass(t->g, a, t->w[l], wmask, n);
	if (t->model[l])
		tt_model_step(t->model[l], t->model_len / sizeof(uint64_t));
	r->bwd_computed = tt_now();
	tt_live_del(t, l);
	if (t->cfg.alloc == TT_ALLOC_MALLOC)
		free(a);
	else if (munmap(a, len))
		tt_die("munmap of layer %u's activation: %s", l, strerror(errno));
	t->act[l] = NULL;
	r->freed = tt_now();
	if (t->s)
		tt_call(t, tt_layer_end(t->s, l, TT_BWD), "tt_layer_end(TT_BWD)",
			l, it);
	r->bwd_end = tt_now();
}

/* ---- figures ------------------------------------------------------------ */

static int tt_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double tt_median(const double *v, unsigned int n)
{
	double *tmp;
	double m;

	if (!n)
		return 0;
	tmp = tt_zalloc(n * sizeof(*tmp));
	memcpy(tmp, v, n * sizeof(*v));
	qsort(tmp, n, sizeof(*tmp), tt_cmp_double);
	m = n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
	free(tmp);
	return m;
}

/*
 * Bytes of layer @l's activation on the fast tier at @at without tiering
 * (@oracle 0: from its mapping, ramping up over the first pass, to its
 * unmapping) or with the oracle (@oracle 1: the same, but absent between
 * forward end and backward begin).
 */
static double tt_model_at(const struct tt_lrec *r, size_t size, uint64_t at,
			  int oracle)
{
	if (at < r->mapped || at >= r->freed)
		return 0;
	if (at < r->touched)
		return (double)size * (at - r->mapped) / (r->touched - r->mapped);
	if (oracle && at >= r->fwd_end && at < r->bwd_begin)
		return 0;
	return size;
}

/* Integral of tt_model_at() over all time, in byte-ns. */
static double tt_model_area(const struct tt_lrec *r, size_t size, int oracle)
{
	double a = (double)size * (r->touched - r->mapped) / 2;

	if (oracle)
		return a + (double)size * ((r->fwd_end - r->touched) +
					   (r->freed - r->bwd_begin));
	return a + (double)size * (r->freed - r->touched);
}

static void tt_models(struct tt_train *t, struct tt_result *res)
{
	unsigned int it, l, k, o, L = t->cfg.layers;
	double area[2] = { 0, 0 }, span = 0;

	res->base_peak = 0;
	res->oracle_peak = 0;
	for (it = res->warmup; it < t->cfg.iters; it++) {
		span += t->irec[it].end - t->irec[it].begin;
		for (l = 0; l < L; l++)
			for (o = 0; o < 2; o++)
				area[o] += tt_model_area(tt_rec(t, it, l),
							 t->cfg.size[l], o);
		/* the maxima of the step/ramp sums sit on a breakpoint */
		for (l = 0; l < L; l++) {
			const struct tt_lrec *r = tt_rec(t, it, l);
			uint64_t pts[4] = { r->touched, r->fwd_end - 1,
					    r->bwd_begin, r->freed - 1 };

			for (k = 0; k < 4; k++) {
				double sb = 0, so = 0;
				unsigned int m;

				for (m = 0; m < L; m++) {
					sb += tt_model_at(tt_rec(t, it, m),
							  t->cfg.size[m], pts[k], 0);
					so += tt_model_at(tt_rec(t, it, m),
							  t->cfg.size[m], pts[k], 1);
				}
				if (sb > res->base_peak)
					res->base_peak = sb;
				if (so > res->oracle_peak)
					res->oracle_peak = so;
			}
		}
	}
	res->base_avg = span ? area[0] / span : 0;
	res->oracle_avg = span ? area[1] / span : 0;
}

/*
 * Time-weighted average and peak of the samples over the measured
 * iterations: each sample holds from its time to the next sample's.
 */
static void tt_measured(struct tt_train *t, struct tt_result *res)
{
	const struct tt_mstate *ms = &t->ms[t->mode];
	double fa = 0, sa = 0, fr = 0, span = 0, gaps = 0, wall = 0;
	double *ipeak = tt_zalloc(res->measured * sizeof(*ipeak));
	size_t i, ngaps = 0;
	unsigned int it;

	res->fast_peak = 0;
	res->slow_peak = 0;
	res->free_min = -1;
	res->nsamples = 0;
	for (it = res->warmup; it < t->cfg.iters; it++) {
		uint64_t b = t->irec[it].begin, e = t->irec[it].end;
		double *ip = &ipeak[it - res->warmup];

		span += e - b;
		for (i = 0; i < ms->nsmp; i++) {
			uint64_t from, to;

			to = i + 1 < ms->nsmp ? ms->smp[i + 1].t : e;
			from = ms->smp[i].t;
			if (to <= b || from >= e)
				continue;
			if (from >= b && from < e) {
				res->nsamples++;
				if (ms->smp[i].fast > *ip)
					*ip = ms->smp[i].fast;
				if (ms->smp[i].fast > res->fast_peak)
					res->fast_peak = ms->smp[i].fast;
				if (ms->smp[i].slow > res->slow_peak)
					res->slow_peak = ms->smp[i].slow;
				if (res->free_min < 0 ||
				    ms->smp[i].free < res->free_min)
					res->free_min = ms->smp[i].free;
				if (i + 1 < ms->nsmp && ms->smp[i + 1].t < e) {
					gaps += ms->smp[i + 1].t - from;
					ngaps++;
				}
			}
			if (from < b)
				from = b;
			if (to > e)
				to = e;
			fa += (double)ms->smp[i].fast * (to - from);
			sa += (double)ms->smp[i].slow * (to - from);
			fr += (double)ms->smp[i].free * (to - from);
		}
	}
	res->peak_med = tt_median(ipeak, res->measured);
	free(ipeak);
	res->fast_avg = span ? fa / span : 0;
	res->slow_avg = span ? sa / span : 0;
	res->free_avg = span ? fr / span : 0;
	if (res->free_min < 0)
		res->free_min = 0;
	res->mean_gap_ms = ngaps ? gaps / ngaps / 1e6 : 0;
	res->max_pass_ms = tt_ms(ms->max_pass);
	/* the mode's own wall time: its iterations, not the others' turns */
	for (it = 0; it < t->cfg.iters; it++)
		wall += t->irec[it].end - t->irec[it].begin;
	res->busy_pct = wall ? 100.0 * ms->sum_pass / wall : 0;
}

/* Keep the last iteration's samples and events for the timeline. */
static void tt_keep_timeline(struct tt_train *t, struct tt_result *res)
{
	const struct tt_mstate *ms = &t->ms[t->mode];
	unsigned int it = t->cfg.iters - 1;
	uint64_t b = t->irec[it].begin, e = t->irec[it].end;
	size_t i;

	res->tl_iter = it;
	res->tl_irec = t->irec[it];
	res->all_irec = tt_zalloc(t->cfg.iters * sizeof(*res->all_irec));
	memcpy(res->all_irec, t->irec, t->cfg.iters * sizeof(*res->all_irec));
	res->all_rec = tt_zalloc((size_t)t->cfg.iters * t->cfg.layers *
				 sizeof(*res->all_rec));
	memcpy(res->all_rec, t->lrec, (size_t)t->cfg.iters * t->cfg.layers *
	       sizeof(*res->all_rec));
	res->tl_rec = tt_zalloc(t->cfg.layers * sizeof(*res->tl_rec));
	memcpy(res->tl_rec, tt_rec(t, it, 0),
	       t->cfg.layers * sizeof(*res->tl_rec));
	res->tl_samples = tt_zalloc((ms->nsmp + 1) * sizeof(*res->tl_samples));
	res->tl_n = 0;
	for (i = 0; i < ms->nsmp; i++) {
		if (ms->smp[i].t >= e)
			break;
		if (ms->smp[i].t >= b) {
			res->tl_samples[res->tl_n++] = ms->smp[i];
		} else if (i + 1 == ms->nsmp || ms->smp[i + 1].t >= b) {
			/* the state the iteration starts in */
			res->tl_samples[res->tl_n] = ms->smp[i];
			res->tl_samples[res->tl_n++].t = b;
		}
	}
}

static void tt_stats_delta(struct tt_ioc_stats *d, const struct tt_ioc_stats *a,
			   const struct tt_ioc_stats *b)
{
	*d = *b;
#define TT_D(f) (d->f = b->f - a->f)
	TT_D(iterations);
	TT_D(events);
	TT_D(tensors_saved);
	TT_D(tensors_ignored);
	TT_D(layers_accepted);
	TT_D(layers_modified);
	TT_D(layers_dropped);
	TT_D(layers_unknown);
	TT_D(bytes_evicted);
	TT_D(bytes_prefetched);
	TT_D(ontime_bytes);
	TT_D(late_bytes);
	TT_D(late_count);
	TT_D(sync_fetched_bytes);
	TT_D(reprofiles);
	TT_D(bytes_to_fast);
	TT_D(bytes_to_slow);
	TT_D(total.skipped_busy);
	TT_D(total.skipped_no_memory);
	TT_D(prefetch_left_bytes);
	TT_D(left_returned_bytes);
	TT_D(landed_bytes);
	TT_D(engine_bytes);
	TT_D(mover_bytes);
	TT_D(huge_kept);
	TT_D(huge_split);
	TT_D(huge_partial);
	TT_D(mover_fallbacks);
	TT_D(dyn_predicted);
	TT_D(dyn_mispredicted);
	TT_D(dyn_fallback);
	TT_D(dyn_misses);
	TT_D(victims);
	TT_D(victim_bytes);
	TT_D(victim_archived_bytes);
	TT_D(victims_skipped_pages);
	TT_D(budget_waits);
	TT_D(budget_overruns);
#undef TT_D
}

/* ---- the copy mode: the floor ------------------------------------------ */

/* Bytes the copier copies between two looks at its work. */
#define TT_COPY_CHUNK	(2UL << 20)
/* The unmap mode: one shootdown per this many bytes copied (a PMD). */
#define TT_UNMAP_BYTES	(2UL << 20)

/*
 * One TLB shootdown to the process's other CPUs: the scratch page, made
 * resident, loses its write permission (the kernel flushes it on every CPU
 * the process runs on) and gets it back (no flush for more permission).
 */
static void tt_copier_shoot(struct tt_copier *c)
{
	long pg = sysconf(_SC_PAGESIZE);

	*(volatile char *)c->scratch = 1;
	if (mprotect(c->scratch, pg, PROT_READ) ||
	    mprotect(c->scratch, pg, PROT_READ | PROT_WRITE))
		tt_die("mprotect of the unmap mode's scratch page: %s",
		       strerror(errno));
}

/*
 * The move mode's share of @n more bytes in direction @dir (0: out to the
 * slow node, 1: back): each whole 2 MiB block of what was posted so far
 * moves the next block of @c->mv still fast out, or the oldest one out
 * back, in one move_pages(2) call of all its pages (tt_st_move_pages(); a
 * huge page moves whole). Return the bytes that moved (the block's, less
 * the pages the call reports not moved); a failing call ends the run.
 */
static size_t tt_copier_move(struct tt_copier *c, int dir, size_t n)
{
	size_t nb = c->mv_len / TT_COPY_CHUNK, moved = 0, blk;
	long pg = sysconf(_SC_PAGESIZE);
	int node, left, ret;

	for (c->mv_carry[dir] += n; c->mv_carry[dir] >= TT_COPY_CHUNK;
	     c->mv_carry[dir] -= TT_COPY_CHUNK) {
		if (dir == 0 && c->mv_out < nb) {
			blk = (c->mv_first + c->mv_out++) % nb;
			node = c->slow_node;
		} else if (dir == 1 && c->mv_out) {
			blk = c->mv_first;
			c->mv_first = (c->mv_first + 1) % nb;
			c->mv_out--;
			node = c->fast_node;
		} else {
			continue;	/* nothing left to move that way */
		}
		left = 0;
		ret = tt_st_move_pages(c->mv + blk * TT_COPY_CHUNK,
				       TT_COPY_CHUNK, node, &left);
		if (ret)
			tt_die("move_pages(2) of the move mode's block %zu to node %d: %s",
			       blk, node, strerror(-ret));
		moved += TT_COPY_CHUNK - (size_t)left * pg;
	}
	return moved;
}

static void *tt_copier_main(void *arg)
{
	struct tt_copier *c = arg;
	size_t n, off, moved;
	int dir;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		while (!c->stop && !c->pending[0] && !c->pending[1])
			pthread_cond_wait(&c->cond, &c->lock);
		if (c->stop)
			break;
		dir = c->pending[0] ? 0 : 1;
		n = c->pending[dir] < TT_COPY_CHUNK ? c->pending[dir] :
						       TT_COPY_CHUNK;
		if (n > c->len)
			n = c->len;
		if (c->off + n > c->len)
			c->off = 0;
		off = c->off;
		c->off += n;
		pthread_mutex_unlock(&c->lock);
		moved = n;
		if (c->mode == TT_MODE_MOVE)
			moved = tt_copier_move(c, dir, n);
		else if (dir)
			memcpy(c->fast + off, c->slow + off, n);
		else
			memcpy(c->slow + off, c->fast + off, n);
		if (c->mode == TT_MODE_UNMAP)
			for (c->unshot += n; c->unshot >= TT_UNMAP_BYTES;
			     c->unshot -= TT_UNMAP_BYTES)
				tt_copier_shoot(c);
		pthread_mutex_lock(&c->lock);
		c->pending[dir] -= n;
		if (c->count)
			c->copied[c->mode] += moved;
		if (!c->pending[0] && !c->pending[1])
			pthread_cond_broadcast(&c->cond);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* Start the copier with two buffers of the largest activation's size. */
static void tt_copier_start(struct tt_train *t)
{
	struct tt_copier *c = &t->cp;
	unsigned int l;
	int ret;

	if (c->running)		/* copy, unmap and move share it */
		return;
	if (t->slow_node < 0)
		tt_die("--mode copy, unmap and move need a memory-only (slow) node");
	for (l = 0; l < t->cfg.layers; l++)
		if (t->cfg.size[l] > c->len)
			c->len = t->cfg.size[l];
	c->fast = tt_st_map(c->len, 0);
	c->slow = tt_st_map(c->len, 0);
	if (!c->fast || !c->slow)
		tt_die("mmap of the copy mode's two %zu-byte buffers: %s",
		       c->len, strerror(errno));
	ret = tt_st_bind(c->slow, c->len, t->slow_node);
	if (ret)
		tt_die("binding the copy mode's buffer to node %d: %s",
		       t->slow_node, strerror(-ret));
	memset(c->fast, 1, c->len);
	memset(c->slow, 2, c->len);
	c->fast_node = t->fast_node;
	c->slow_node = t->slow_node;
	if (t->cfg.run[TT_MODE_MOVE]) {
		if (t->fast_node < 0)
			tt_die("--mode move needs a node with CPUs to run on");
		/* one iteration's activations, in whole huge pages */
		for (l = 0; l < t->cfg.layers; l++)
			c->mv_len += t->cfg.size[l];
		c->mv_len = (c->mv_len + TT_COPY_CHUNK - 1) /
			    TT_COPY_CHUNK * TT_COPY_CHUNK;
		c->mv = tt_st_map(c->mv_len, 1);
		if (!c->mv)
			tt_die("mmap of the move mode's %zu-byte buffer: %s",
			       c->mv_len, strerror(errno));
		memset(c->mv, 3, c->mv_len);
	}
	c->scratch = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->scratch == MAP_FAILED)
		tt_die("mmap of the unmap mode's scratch page: %s",
		       strerror(errno));
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	ret = pthread_create(&c->th, NULL, tt_copier_main, c);
	if (ret)
		tt_die("starting the copy mode's thread: %s", strerror(ret));
	c->running = 1;
}

/* Copy @bytes in direction @dir (0: to the slow node, 1: back). */
static void tt_copier_post(struct tt_train *t, int dir, double bytes)
{
	struct tt_copier *c = &t->cp;

	if (bytes < 1)
		return;
	pthread_mutex_lock(&c->lock);
	c->pending[dir] += (uint64_t)bytes;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

/* Wait until everything posted is copied. */
static void tt_copier_drain(struct tt_train *t)
{
	struct tt_copier *c = &t->cp;

	pthread_mutex_lock(&c->lock);
	while (c->pending[0] || c->pending[1])
		pthread_cond_wait(&c->cond, &c->lock);
	pthread_mutex_unlock(&c->lock);
}

static void tt_copier_stop(struct tt_train *t)
{
	struct tt_copier *c = &t->cp;

	if (!c->running)
		return;
	pthread_mutex_lock(&c->lock);
	c->stop = 1;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->th, NULL);
	munmap(c->fast, c->len);
	munmap(c->slow, c->len);
	munmap(c->scratch, sysconf(_SC_PAGESIZE));
	if (c->mv)
		munmap(c->mv, c->mv_len);
	c->mv = NULL;
	c->running = 0;
}

/*
 * The copy mode's iteration @it copies out and back the share of each
 * activation that the tiertrain mode evicted and prefetched per measured
 * iteration so far (it runs before the copy mode in every round); all of
 * it when the tiertrain mode does not run or has measured nothing yet.
 */
static void tt_copier_share(struct tt_train *t, unsigned int it,
			    double share[2])
{
	const struct tt_mstate *k = &t->ms[TT_MODE_TIERTRAIN];
	const struct tt_result *kr = &t->res[TT_MODE_TIERTRAIN];
	struct tt_ioc_stats st;
	double per = 0;
	unsigned int l;

	share[0] = share[1] = 1;
	if (!k->active || !k->s || it < kr->warmup || tt_stats(k->s, &st))
		return;
	for (l = 0; l < t->cfg.layers; l++)
		per += t->cfg.size[l];
	per *= it - kr->warmup + 1;
	share[0] = (st.bytes_evicted - k->st0.bytes_evicted) / per;
	share[1] = (st.bytes_prefetched - k->st0.bytes_prefetched) / per;
}

/* ---- one mode ----------------------------------------------------------- */

/* Open the session of @mode; NULL with @res->reason set when unavailable. */
static struct tt_session *tt_mode_open(struct tt_train *t, enum tt_mode mode,
				       struct tt_result *res)
{
	const char *want = mode == TT_MODE_TIERTRAIN || mode == TT_MODE_BUDGET ?
			   "kernel" : "move_pages";
	struct tt_ioc_sched cfg;
	struct tt_session *s;
	int ret;

	setenv("TIERTRAIN_BACKEND", want, 1);
	s = tt_open();
	unsetenv("TIERTRAIN_BACKEND");
	if (!s) {
		res->fatal = 1;
		snprintf(res->reason, sizeof(res->reason),
			 "tt_open() with TIERTRAIN_BACKEND=%s: %s%s", want,
			 strerror(errno),
			 errno == ENOENT ? " (is tiertrain.ko loaded?)" : "");
		return NULL;
	}
	res->backend = tt_backend(s);
	ret = tt_sched_get(s, &cfg);
	if (ret == -ENOTTY) {
		res->fatal = 1;
		snprintf(res->reason, sizeof(res->reason),
			 "this tiertrain.ko has no scheduler (TT_IOC_GET_SCHED: %s)",
			 strerror(-ret));
		tt_close(s);
		return NULL;
	}
	if (ret)
		tt_die("%s: tt_sched_get: %s", want, strerror(-ret));
	memset(&cfg, 0, sizeof(cfg));
	cfg.valid = TT_SCHED_SET_PROFILE;
	cfg.profile_iters = t->cfg.profile_iters;
	/*
	 * No flag option: the session keeps its default flag set
	 * (TT_SCHED_DEFAULT_FLAGS); any flag option sets exactly the flags
	 * asked for.
	 */
	if (tt_flags_given(&t->cfg))
		cfg.valid |= TT_SCHED_SET_FLAGS;
	cfg.flags = (t->cfg.reference ? TT_SCHED_REFERENCE : 0) |
		    (t->cfg.sync_late ? TT_SCHED_SYNC_LATE : 0) |
		    (t->cfg.anchor ? TT_SCHED_ANCHOR : 0) |
		    (t->cfg.alap ? TT_SCHED_ALAP : 0) |
		    (t->cfg.defer_late ? TT_SCHED_DEFER_LATE : 0) |
		    (t->cfg.merge ? TT_SCHED_MERGE : 0) |
		    (t->cfg.count ? TT_SCHED_COUNT : 0) |
		    (t->cfg.dynamic ? TT_SCHED_DYNAMIC : 0);
	if (mode == TT_MODE_BUDGET) {
		cfg.valid |= TT_SCHED_SET_BUDGET;
		cfg.budget_mib = t->cfg.budget_mib;
	}
	ret = tt_sched_set(s, &cfg);
	if (ret)
		tt_die("%s: tt_sched_set(profile_iters %u, flags %#x): %s", want,
		       cfg.profile_iters, cfg.flags, strerror(-ret));
	return s;
}

static void tt_reset_x(struct tt_train *t, size_t maxlen)
{
	size_t j;

	for (j = 0; j < maxlen / sizeof(uint64_t); j++) {
		t->x[j] = j * TT_MUL + 1;
		t->g[j] = 0;
	}
}

/*
 * TLB shootdown interrupts received so far, all CPUs: each one makes the
 * receiving CPU drop its TLB (in a TCG guest: the whole soft TLB, which
 * the training loop then refills page by page). 0 when unreadable.
 */
static uint64_t tt_tlb_shootdowns(void)
{
	char line[4096], *p, *end;
	uint64_t sum = 0;
	FILE *f = fopen("/proc/interrupts", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		p = line + strspn(line, " ");
		if (strncmp(p, "TLB:", 4))
			continue;
		p += 4;
		for (;;) {
			unsigned long long v = strtoull(p, &end, 10);

			if (end == p)
				break;
			sum += v;
			p = end;
		}
		break;
	}
	fclose(f);
	return sum;
}

/*
 * The calling thread's CPU time and run-queue wait so far, ns
 * (/proc/thread-self/schedstat); both 0 when it cannot be read.
 */
static void tt_schedstat(uint64_t *cpu, uint64_t *wait)
{
	unsigned long long c, w;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	*cpu = *wait = 0;
	if (!f)
		return;
	if (fscanf(f, "%llu %llu", &c, &w) == 2) {
		*cpu = c;
		*wait = w;
	}
	fclose(f);
}

/* Make @mode the running one (between iterations: nothing is live). */
/* The TT_VM_* counters now (0 for those the kernel lacks). */
static void tt_vmstat(uint64_t *v)
{
	unsigned int k;

	for (k = 0; k < TT_VM_NR; k++) {
		long long x = tt_st_vmstat(tt_vm_name[k]);

		v[k] = x > 0 ? (uint64_t)x : 0;
	}
}

/* ---- the linux mode: the kernel's own tiering ---------------------------- */

#define TT_KNOB_NB	"/proc/sys/kernel/numa_balancing"
#define TT_KNOB_DEM	"/sys/kernel/mm/numa/demotion_enabled"

/* The run whose knobs an exit must restore. */
static struct tt_train *tt_knobs_owner;

/*
 * Put kernel.numa_balancing and demotion_enabled back as the run found
 * them: 0, or -errno of the first write that failed.
 */
static int tt_knobs_restore(struct tt_train *t)
{
	int ret, ret2;

	if (!t->knobs_set)
		return 0;
	t->knobs_set = 0;
	ret = tt_st_write_file(TT_KNOB_NB, t->knob_nb);
	/* the file reads "true"/"false" and takes "1"/"0" */
	ret2 = tt_st_write_file(TT_KNOB_DEM,
				t->knob_dem[0] && strchr("tTyY1", t->knob_dem[0]) ?
				"1" : "0");
	return ret ? ret : ret2;
}

static void tt_knobs_atexit(void)
{
	if (tt_knobs_owner && tt_knobs_restore(tt_knobs_owner))
		fprintf(stderr, "train: could not put back %s = %s and %s = %s\n",
			TT_KNOB_NB, tt_knobs_owner->knob_nb, TT_KNOB_DEM,
			tt_knobs_owner->knob_dem);
}

/*
 * The linux mode's settings: demotion by reclaim on, NUMA balancing in its
 * memory-tiering mode (2); every other knob of the kernel as it is. 0, or
 * -errno naming nothing (the caller says which).
 */
static int tt_knobs_set(struct tt_train *t)
{
	int ret;

	if (t->knobs_set)
		return 0;
	t->knobs_set = 1;
	ret = tt_st_write_file(TT_KNOB_DEM, "1");
	if (!ret)
		ret = tt_st_write_file(TT_KNOB_NB, "2");
	if (ret)
		tt_knobs_restore(t);
	return ret;
}

/* Read knob @path into @buf (TT_KNOB_LEN bytes): 1, or 0 with @res saying why. */
static int tt_knob_read(const char *path, char *buf, const char *hint,
			struct tt_result *res)
{
	int ret = tt_st_read_file(path, buf, TT_KNOB_LEN);

	if (ret > 0)
		return 1;
	snprintf(res->reason, sizeof(res->reason), "cannot read %s: %s (%s)",
		 path, ret ? strerror(-ret) : "empty", hint);
	return 0;
}

/*
 * Whether the linux mode can run here: both knobs readable (kept to be
 * restored at the end and at any exit) and settable; else @res says why.
 */
static int tt_linux_check(struct tt_train *t, struct tt_result *res)
{
	int ret;

	if (!tt_knob_read(TT_KNOB_NB, t->knob_nb,
			  "a kernel without CONFIG_NUMA_BALANCING?", res) ||
	    !tt_knob_read(TT_KNOB_DEM, t->knob_dem,
			  "a kernel without memory tiers?", res))
		return 0;
	tt_knobs_owner = t;
	atexit(tt_knobs_atexit);
	ret = tt_knobs_set(t);
	if (!ret)
		ret = tt_knobs_restore(t);
	if (ret) {
		snprintf(res->reason, sizeof(res->reason),
			 "cannot set %s to 2 and %s to 1: %s (not root, or a kernel without the memory-tiering mode of NUMA balancing?)",
			 TT_KNOB_NB, TT_KNOB_DEM, strerror(-ret));
		return 0;
	}
	return 1;
}

/* ---- the model state (--model-mib) ------------------------------------- */

/*
 * Allocate and write each layer's share of the model state the way the
 * activations are allocated, and put it in the sampler's sight.
 */
static void tt_model_alloc(struct tt_train *t)
{
	size_t n = t->model_len / sizeof(uint64_t), j;
	unsigned int l;

	if (!t->cfg.model_bytes)
		return;
	for (l = 0; l < t->cfg.layers; l++) {
		uint64_t *m;

		if (t->cfg.alloc == TT_ALLOC_MALLOC) {
			void *p = NULL;
			int err = posix_memalign(&p, TT_MALLOC_ALIGN,
						 t->model_len);

			if (err)
				tt_die("posix_memalign of layer %u's %zu-byte model state: %s",
				       l, t->model_len, strerror(err));
			m = p;
		} else {
			m = tt_st_map(t->model_len, t->cfg.map_thp);
			if (!m)
				tt_die("mmap of layer %u's %zu-byte model state: %s",
				       l, t->model_len, strerror(errno));
		}
		for (j = 0; j < n; j++)
			m[j] = (j + 1) * TT_MUL ^ l;
		t->model[l] = m;
		tt_live_add(t, TT_TRAIN_MAX_LAYERS + l, m, t->model_len);
	}
}

static void tt_model_free(struct tt_train *t)
{
	unsigned int l;

	for (l = 0; l < t->cfg.layers; l++) {
		if (!t->model[l])
			continue;
		tt_live_del(t, TT_TRAIN_MAX_LAYERS + l);
		if (t->cfg.alloc == TT_ALLOC_MALLOC)
			free(t->model[l]);
		else if (munmap(t->model[l], t->model_len))
			tt_die("munmap of layer %u's model state: %s", l,
			       strerror(errno));
		t->model[l] = NULL;
	}
}

/*
 * Make @mode the running one. Entering the linux mode sets its knobs,
 * leaving it puts them back: the other modes run as the system was.
 */
static void tt_switch(struct tt_train *t, enum tt_mode mode)
{
	int ret = 0;

	if (mode == TT_MODE_LINUX)
		ret = tt_knobs_set(t);
	else if (t->knobs_set)
		ret = tt_knobs_restore(t);
	if (ret)
		tt_die("%s %s and %s for the %s mode: %s",
		       mode == TT_MODE_LINUX ? "setting" : "restoring",
		       TT_KNOB_NB, TT_KNOB_DEM, tt_mode_name[mode],
		       strerror(-ret));
	pthread_mutex_lock(&t->lock);
	t->mode = mode;
	t->s = t->ms[mode].s;
	t->irec = t->ms[mode].irec;
	t->lrec = t->ms[mode].lrec;
	pthread_mutex_unlock(&t->lock);
}

/* Stop @mode: it cannot tier (@res->reason says why). */
static void tt_mode_stop(struct tt_train *t, enum tt_mode mode)
{
	struct tt_mstate *ms = &t->ms[mode];

	ms->active = 0;
	if (ms->s)
		tt_close(ms->s);
	ms->s = NULL;
	t->s = NULL;
}

/* Open @mode's session and records; 0 when it is n/a. */
static int tt_mode_begin(struct tt_train *t, enum tt_mode mode)
{
	struct tt_result *res = &t->res[mode];
	struct tt_mstate *ms = &t->ms[mode];

	res->ran = 1;
	res->backend = "-";
	res->warmup = t->cfg.profile_iters + 1;
	res->measured = t->cfg.iters - res->warmup;
	memset(ms, 0, sizeof(*ms));
	if (tt_copying(mode))
		tt_copier_start(t);
	else if (mode == TT_MODE_LINUX) {
		if (!tt_linux_check(t, res)) {
			res->fatal = 1;
			return 0;
		}
	} else if (mode != TT_MODE_NONE) {
		ms->s = tt_mode_open(t, mode, res);
		if (!ms->s)
			return 0;
	}
	ms->irec = tt_zalloc(t->cfg.iters * sizeof(*ms->irec));
	ms->lrec = tt_zalloc((size_t)t->cfg.iters * t->cfg.layers *
			     sizeof(*ms->lrec));
	ms->active = 1;
	fprintf(stderr, "train: mode %s (backend %s): %u iterations, %u of them warm-up\n",
		tt_mode_name[mode], res->backend, t->cfg.iters, res->warmup);
	return 1;
}

/*
 * Layers iteration @it runs: all, or with --random-depth a depth drawn from
 * [min_depth, layers] by a hash of @it (every mode runs the same depths).
 */
static unsigned int tt_depth(const struct tt_train *t, unsigned int it)
{
	uint64_t h = (it + 1) * 0x9e3779b97f4a7c15ULL;
	unsigned int lo = t->cfg.min_depth, L = t->cfg.layers;

	if (!lo || lo >= L)
		return L;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 32;
	return lo + (unsigned int)(h % (L - lo + 1));
}

/* Iteration @it of the running mode; 0 when the mode had to stop. */
static int tt_mode_iter(struct tt_train *t, unsigned int it)
{
	enum tt_mode mode = t->mode;
	struct tt_result *res = &t->res[mode];
	struct tt_mstate *ms = &t->ms[mode];
	unsigned int l, L = t->cfg.layers;
	int ret;

	if (it == res->warmup && t->s) {
		ret = tt_stats(t->s, &ms->st0);
		if (ret)
			tt_die("tt_stats: %s", strerror(-ret));
		ret = tt_layers(t->s, NULL, 0);
		if (ret < 0)
			tt_die("tt_layers: %s", strerror(-ret));
		if (ret == 0 && ms->st0.bytes_evicted == 0) {
			res->fatal = mode == TT_MODE_TIERTRAIN ||
				     mode == TT_MODE_BUDGET;
			snprintf(res->reason, sizeof(res->reason),
				 "the %s backend's scheduler knows no layer and moved nothing after %u iterations%s",
				 res->backend, res->warmup,
				 mode == TT_MODE_USERSPACE ?
				 ": this libtiertrain has no userspace scheduler yet" :
				 "");
			tt_mode_stop(t, mode);
			return 0;
		}
	}
	if (t->s) {
		ret = tt_stats(t->s, &t->irec[it].st);
		if (ret)
			tt_die("tt_stats: %s", strerror(-ret));
	}
	t->irec[it].tlb = tt_tlb_shootdowns();
	tt_vmstat(t->irec[it].vm);
	tt_schedstat(&t->irec[it].cpu, &t->irec[it].wait);
	t->irec[it].begin = tt_now();
	if (t->s) {
		ret = tt_iter_begin(t->s);
		if (ret == -ENOTTY && it == 0) {
			res->fatal = 1;
			snprintf(res->reason, sizeof(res->reason),
				 "this tiertrain.ko has no scheduler (TT_IOC_EVENT: %s)",
				 strerror(-ret));
			tt_mode_stop(t, mode);
			return 0;
		}
		tt_call(t, ret, "tt_iter_begin", 0, it);
	}
	L = tt_depth(t, it);
	t->irec[it].depth = L;
	if (tt_copying(mode)) {
		tt_copier_share(t, it, t->cp.share);
		pthread_mutex_lock(&t->cp.lock);
		t->cp.count = it >= res->warmup;
		t->cp.mode = mode;
		pthread_mutex_unlock(&t->cp.lock);
	}
	for (l = 0; l < L; l++)
		tt_forward(t, it, l);
	for (l = L; l-- > 0;)
		tt_backward(t, it, l);
	if (tt_copying(mode))
		tt_copier_drain(t);
	t->irec[it].end = tt_now();
	t->irec[it].tlb = tt_tlb_shootdowns() - t->irec[it].tlb;
	{
		uint64_t cpu, wait, vm[TT_VM_NR];
		unsigned int k;

		tt_vmstat(vm);
		for (k = 0; k < TT_VM_NR; k++)
			t->irec[it].vm[k] = vm[k] >= t->irec[it].vm[k] ?
					    vm[k] - t->irec[it].vm[k] : 0;

		tt_schedstat(&cpu, &wait);
		t->irec[it].cpu = cpu >= t->irec[it].cpu ?
				  cpu - t->irec[it].cpu : 0;
		t->irec[it].wait = wait >= t->irec[it].wait ?
				   wait - t->irec[it].wait : 0;
	}
	if (t->s) {
		struct tt_ioc_stats st, st0 = t->irec[it].st;

		ret = tt_stats(t->s, &st);
		if (ret)
			tt_die("tt_stats: %s", strerror(-ret));
		tt_stats_delta(&t->irec[it].st, &st0, &st);
	}
	return 1;
}

/* The running mode's figures, once every mode is done. */
static void tt_mode_finish(struct tt_train *t)
{
	enum tt_mode mode = t->mode;
	struct tt_result *res = &t->res[mode];
	struct tt_mstate *ms = &t->ms[mode];
	unsigned int it, l, L = t->cfg.layers;
	struct tt_ioc_stats st1;
	int ret;

	if (t->s) {
		ret = tt_stats(t->s, &st1);
		if (ret)
			tt_die("tt_stats: %s", strerror(-ret));
		tt_stats_delta(&res->st, &ms->st0, &st1);
		res->have_stats = 1;
		ret = tt_layers(t->s, NULL, 0);
		if (ret < 0)
			tt_die("tt_layers: %s", strerror(-ret));
		res->layers = tt_zalloc((ret + 1) * sizeof(*res->layers));
		ret = tt_layers(t->s, res->layers, ret);
		if (ret < 0)
			tt_die("tt_layers: %s", strerror(-ret));
		res->nlayers = ret;
		tt_close(t->s);
		ms->s = NULL;
		t->s = NULL;
	}
	if (t->cfg.iters <= res->warmup) {
		snprintf(res->reason, sizeof(res->reason),
			 "stopped after %u iterations, before the end of the warm-up (%u): %s",
			 t->cfg.iters, res->warmup, t->stopped);
		ms->active = 0;
		return;
	}
	res->measured = t->cfg.iters - res->warmup;
	res->iter_ms = tt_zalloc(res->measured * sizeof(*res->iter_ms));
	for (it = res->warmup; it < t->cfg.iters; it++) {
		const struct tt_irec *ir = &t->irec[it];

		unsigned int k;

		res->iter_ms[it - res->warmup] =
			tt_ms(ir->end - ir->begin - ir->excluded);
		for (l = 0; l < L; l++) {
			res->late_own += tt_rec(t, it, l)->late_own;
			res->rd_fast += tt_rec(t, it, l)->rd_fast;
			res->rd_slow += tt_rec(t, it, l)->rd_slow;
			res->wr_fast += tt_rec(t, it, l)->wr_fast;
			res->wr_slow += tt_rec(t, it, l)->wr_slow;
			for (k = 0; k < TT_RD_NR; k++)
				res->rd_kind[k] += tt_rec(t, it, l)->rd_kind[k];
		}
		for (k = 0; k < TT_VM_NR; k++)
			res->vm[k] += ir->vm[k];
	}
	res->rd_fast /= res->measured;
	res->rd_slow /= res->measured;
	res->wr_fast /= res->measured;
	res->wr_slow /= res->measured;
	{
		unsigned int k;

		for (k = 0; k < TT_RD_NR; k++)
			res->rd_kind[k] /= res->measured;
	}
	res->step_ms = tt_median(res->iter_ms, res->measured);
	{
		double *v = tt_zalloc(res->measured * sizeof(*v));

		for (it = res->warmup; it < t->cfg.iters; it++)
			v[it - res->warmup] = t->irec[it].tlb;
		res->tlb_per_iter = tt_median(v, res->measured);
		free(v);
	}
	res->tlb_per_mib = -1;
	if (res->have_stats &&
	    res->st.bytes_evicted + res->st.bytes_prefetched) {
		double tlb = 0;

		for (it = res->warmup; it < t->cfg.iters; it++)
			tlb += t->irec[it].tlb;
		res->tlb_per_mib = tlb * TT_MIB / (res->st.bytes_evicted +
						    res->st.bytes_prefetched);
	}
	if (tt_copying(mode) && t->cp.copied[mode]) {
		double tlb = 0;

		for (it = res->warmup; it < t->cfg.iters; it++)
			tlb += t->irec[it].tlb;
		res->copied = t->cp.copied[mode];
		res->tlb_per_mib = tlb * TT_MIB / res->copied;
	}
	tt_measured(t, res);
	tt_models(t, res);
	tt_keep_timeline(t, res);
	res->ok = 1;
}

/*
 * Each layer's compute passes: --compute, or with --compute-ms as many as
 * last about that long over the layer's size on the fast node (the
 * median of 3 timed passes after one untimed).
 */
static void tt_calibrate(struct tt_train *t, size_t maxlen)
{
	size_t wmask = t->cfg.weights_bytes / sizeof(uint64_t) - 1;
	unsigned int l, k;

	for (l = 0; l < t->cfg.layers; l++) {
		size_t n = t->cfg.size[l] / sizeof(uint64_t);
		double f[3], b[3], pf, pb;

		t->cfg.fwd_passes[l] = t->cfg.bwd_passes[l] = t->cfg.compute;
		if (!(t->cfg.compute_ms > 0))
			continue;
		tt_fwd_pass(t->x, t->w[l], wmask, n);
		tt_bwd_pass(t->g, t->x, t->w[l], wmask, n);
		for (k = 0; k < 3; k++) {
			uint64_t t0 = tt_now();

			tt_fwd_pass(t->x, t->w[l], wmask, n);
			f[k] = tt_ms(tt_now() - t0);
			t0 = tt_now();
			tt_bwd_pass(t->g, t->x, t->w[l], wmask, n);
			b[k] = tt_ms(tt_now() - t0);
		}
		pf = tt_median(f, 3);
		pb = tt_median(b, 3);
		t->cfg.fwd_passes[l] = pf > 0 ? (unsigned int)
			(t->cfg.compute_ms / pf + 0.5) : 1;
		t->cfg.bwd_passes[l] = pb > 0 ? (unsigned int)
			(t->cfg.compute_ms / pb + 0.5) : 1;
		if (!t->cfg.fwd_passes[l])
			t->cfg.fwd_passes[l] = 1;
		if (!t->cfg.bwd_passes[l])
			t->cfg.bwd_passes[l] = 1;
		fprintf(stderr, "train: layer %u: a forward pass %.2f ms, a backward pass %.2f ms: %u and %u passes for %.0f ms\n",
			l, pf, pb, t->cfg.fwd_passes[l], t->cfg.bwd_passes[l],
			t->cfg.compute_ms);
	}
	tt_reset_x(t, maxlen);
}

/*
 * --model-mib: the modes one after another, each from the same state: its
 * own model state allocated (and written) at its start, freed at its end,
 * so that none inherits the page placement another mode's tiering made.
 * The time limit is shared out evenly: the k-th of n modes begins no
 * iteration that would end after k/n of it. The iterations every mode
 * completed (the fewest), for the caller to keep.
 */
static unsigned int tt_run_sequential(struct tt_train *t, size_t maxlen)
{
	unsigned int m, it, n = 0, k = 0, done = t->cfg.iters;

	for (m = 0; m < TT_MODE_NR; m++)
		n += t->ms[m].active;
	for (m = 0; m < TT_MODE_NR; m++) {
		double until;
		uint64_t last = 0;

		if (!t->ms[m].active)
			continue;
		until = t->cfg.time_limit_s * ++k / n;
		if (tt_signalled) {
			/* never began: no figures */
			t->ms[m].active = 0;
			snprintf(t->res[m].reason, sizeof(t->res[m].reason),
				 "not run: signal %d before its turn",
				 (int)tt_signalled);
			continue;
		}
		tt_switch(t, m);
		tt_reset_x(t, maxlen);
		tt_model_alloc(t);
		for (it = 0; it < t->cfg.iters && !tt_signalled; it++) {
			uint64_t r0 = tt_now();

			if (t->cfg.time_limit_s > 0 &&
			    (r0 - t->t_start + last) / 1e9 > until) {
				snprintf(t->stopped, sizeof(t->stopped),
					 "time limit (%.0f s; %.0f s for the modes up to %s) before its iteration %u of %u",
					 t->cfg.time_limit_s, until,
					 tt_mode_name[m], it, t->cfg.iters);
				break;
			}
			if (!tt_mode_iter(t, it))
				break;
			last = tt_now() - r0;
		}
		tt_model_free(t);
		if (t->ms[m].active && it < done)
			done = it;
	}
	if (tt_signalled)
		snprintf(t->stopped, sizeof(t->stopped),
			 "signal %d in the %s mode (its times are left out, not its counters)",
			 (int)tt_signalled, tt_mode_name[t->mode]);
	return done;
}

/*
 * Every requested mode, taking turns iteration by iteration (none,
 * tiertrain, userspace, none, ...): the host's load, which on these
 * machines changes by 2x within a minute, then weighs on every mode alike
 * instead of on whichever ran when it peaked. Each mode has its own
 * session; the others' turns are idle gaps between its iterations (the
 * scheduler times a layer from its iteration's begin, so gaps do not
 * matter), and every activation is unmapped by the end of an iteration.
 */
static void tt_run_modes(struct tt_train *t, size_t maxlen)
{
	unsigned int it, m;
	uint64_t last = 0;
	int any = 0;

	for (m = 0; m < TT_MODE_NR; m++)
		if (t->cfg.run[m])
			any |= tt_mode_begin(t, m);
	if (!any)
		return;
	tt_reset_x(t, maxlen);
	tt_switch(t, TT_MODE_NONE);
	tt_sampler_start(t);
	if (t->cfg.sequential) {
		it = tt_run_sequential(t, maxlen);
		goto done;
	}
	for (it = 0; it < t->cfg.iters && !tt_signalled; it++) {
		uint64_t r0 = tt_now();

		if (t->cfg.time_limit_s > 0 &&
		    (r0 - t->t_start + last) / 1e9 > t->cfg.time_limit_s) {
			snprintf(t->stopped, sizeof(t->stopped),
				 "time limit (%.0f s) before round %u of %u",
				 t->cfg.time_limit_s, it, t->cfg.iters);
			break;
		}
		for (m = 0; m < TT_MODE_NR && !tt_signalled; m++) {
			if (!t->ms[m].active)
				continue;
			tt_switch(t, m);
			tt_mode_iter(t, it);
		}
		if (tt_signalled)
			break;
		last = tt_now() - r0;
	}
	if (tt_signalled)
		snprintf(t->stopped, sizeof(t->stopped),
			 "signal %d in round %u of %u (its times are left out, not its counters)",
			 (int)tt_signalled, it, t->cfg.iters);
done:
	tt_switch(t, TT_MODE_NONE);
	tt_sampler_stop(t);
	tt_copier_stop(t);
	if (it < t->cfg.iters) {
		/* the rounds every mode completed */
		fprintf(stderr, "train: stopped early: %s; the table is made from the %u rounds done\n",
			t->stopped, it);
		t->iters_planned = t->cfg.iters;
		t->cfg.iters = it;
	}
	for (m = 0; m < TT_MODE_NR; m++) {
		if (!t->ms[m].active)
			continue;
		tt_switch(t, m);
		tt_mode_finish(t);
	}
	any = tt_knobs_restore(t);
	if (any)
		tt_die("restoring %s = %s and %s = %s: %s", TT_KNOB_NB,
		       t->knob_nb, TT_KNOB_DEM, t->knob_dem, strerror(-any));
}

/* ---- output ------------------------------------------------------------- */

static double tt_pct(double v, double ref)
{
	return ref > 0 ? 100.0 * (v - ref) / ref : 0;
}

/* On-time share from the session counters, or -1 when nothing was due. */
static double tt_ontime_pct(const struct tt_result *r)
{
	uint64_t due = r->st.ontime_bytes + r->st.late_bytes;

	return r->have_stats && due ? 100.0 * r->st.ontime_bytes / due : -1;
}

/*
 * The same with the late bytes our own residency checks found at backward
 * begins (--verify-ontime), over the bytes the scheduler says were due.
 */
static double tt_ontime_own_pct(const struct tt_train *t,
				const struct tt_result *r)
{
	uint64_t due = r->st.ontime_bytes + r->st.late_bytes;

	if (!t->cfg.verify_ontime || !r->have_stats || !due)
		return -1;
	if (r->late_own >= due)
		return 0;
	return 100.0 * (due - r->late_own) / due;
}

/* Shortest and longest measured iteration, in ms. */
static double tt_min(const struct tt_result *r)
{
	double v = r->measured ? r->iter_ms[0] : 0;
	unsigned int i;

	for (i = 1; i < r->measured; i++)
		if (r->iter_ms[i] < v)
			v = r->iter_ms[i];
	return v;
}

static double tt_max(const struct tt_result *r)
{
	double v = 0;
	unsigned int i;

	for (i = 0; i < r->measured; i++)
		if (r->iter_ms[i] > v)
			v = r->iter_ms[i];
	return v;
}

static const char *tt_verdict(int met)
{
	return met ? "met" : "MISSED";
}

/* The reference for "vs none": the measured none run, else its model. */
static const struct tt_result *tt_ref(const struct tt_train *t)
{
	const struct tt_result *n = &t->res[TT_MODE_NONE];

	return n->ok ? n : NULL;
}

static double tt_total_bytes(const struct tt_cfg *c)
{
	double s = 0;
	unsigned int l;

	for (l = 0; l < c->layers; l++)
		s += c->size[l];
	return s;
}

static void tt_print_table(const struct tt_train *t)
{
	const struct tt_result *ref = tt_ref(t);
	int m;

	if (t->cfg.compute_ms > 0)
		printf("\nbench/train: %u layers, %.1f MiB of saved activations per iteration, compute %.0f ms per layer forward and backward (calibrated passes), %u iterations (%u warm-up), %s activations, sample every %.1f ms\n",
		       t->cfg.layers, tt_total_bytes(&t->cfg) / TT_MIB, t->cfg.compute_ms, t->cfg.iters, t->cfg.profile_iters + 1,
		       tt_alloc_name[t->cfg.alloc], t->cfg.sample_ns / 1e6);
	else
		printf("\nbench/train: %u layers, %.1f MiB of saved activations per iteration, %u compute passes, %u iterations (%u warm-up), %s activations, sample every %.1f ms\n",
		       t->cfg.layers, tt_total_bytes(&t->cfg) / TT_MIB, t->cfg.compute, t->cfg.iters, t->cfg.profile_iters + 1,
		       tt_alloc_name[t->cfg.alloc], t->cfg.sample_ns / 1e6);
	if (t->stopped[0])
		printf("STOPPED EARLY after %u of %u rounds: %s; the figures are from the rounds done\n",
		       t->cfg.iters, t->iters_planned, t->stopped);
	if (t->cfg.model_bytes)
		printf("model state (weights, gradients, optimizer state) %.0f MiB, %.1f MiB per layer: read by its forward, read and written by its backward; the modes run one after another, each with a model state of its own\n",
		       t->model_len * t->cfg.layers / TT_MIB,
		       t->model_len / TT_MIB);
	printf("%s; %u tensor%s per layer; scheduler extensions: %s%s%s%s%s%s%s%s%s\n",
	       t->cfg.sequential ? "modes one after another" :
	       "modes take turns iteration by iteration", t->cfg.pieces, t->cfg.pieces == 1 ? "" : "s",
	       !tt_flags_given(&t->cfg) ? "the session default (TT_SCHED_DEFAULT_FLAGS)" : "",
	       t->cfg.anchor ? "anchor " : "", t->cfg.alap ? "alap " : "",
	       t->cfg.defer_late ? "defer-late " : "",
	       t->cfg.merge ? "merge " : "",
	       t->cfg.count ? "count " : "",
	       t->cfg.dynamic ? "dynamic " : "",
	       t->cfg.sync_late ? "sync-late " : "",
	       !t->cfg.reference ? "" :
	       "none (the paper's reference, TT_SCHED_REFERENCE)");
	printf("fast-tier bytes of saved activations%s (measured); \"vs none\" against the none run%s\n\n",
	       t->cfg.model_bytes ? " and the model state" : "",
	       ref ? "" : " (not run: against this run's untiered model)");
	printf("%-10s %9s %8s %9s %8s %9s %8s %13s %8s %8s %9s %8s %11s\n",
	       "mode", "step ms", "vs none", "avg MiB", "vs none", "peak MiB",
	       "vs none", "oracle avg/pk", "on time", "late MiB",
	       "moved MiB", "tlb/MiB", "acc/mod/dr");
	for (m = 0; m < TT_MODE_NR; m++) {
		const struct tt_result *r = &t->res[m];
		double ravg, rpeak, ot;
		char step[16], avg[16], peak[16], ots[16], late[16], moved[16];
		char lay[32], tlb[16];

		if (!r->ran)
			continue;
		if (!r->ok) {
			printf("%-10s n/a: %s\n", tt_mode_name[m], r->reason);
			continue;
		}
		ravg = ref ? ref->fast_avg : r->base_avg;
		rpeak = ref ? ref->fast_peak : r->base_peak;
		if (m == TT_MODE_NONE) {
			snprintf(step, sizeof(step), "-");
			snprintf(avg, sizeof(avg), "-");
			snprintf(peak, sizeof(peak), "-");
		} else {
			snprintf(step, sizeof(step), ref ? "%+.1f%%" : "-",
				 ref ? tt_pct(r->step_ms, ref->step_ms) : 0);
			snprintf(avg, sizeof(avg), "%+.1f%%",
				 tt_pct(r->fast_avg, ravg));
			snprintf(peak, sizeof(peak), "%+.1f%%",
				 tt_pct(r->fast_peak, rpeak));
		}
		ot = tt_ontime_pct(r);
		if (ot < 0)
			snprintf(ots, sizeof(ots), "-");
		else
			snprintf(ots, sizeof(ots), "%.2f%%", ot);
		if (r->have_stats) {
			snprintf(late, sizeof(late), "%.1f",
				 r->st.late_bytes / TT_MIB);
			snprintf(moved, sizeof(moved), "%.0f",
				 (r->st.bytes_evicted + r->st.bytes_prefetched) /
				 TT_MIB);
			snprintf(lay, sizeof(lay), "%llu/%llu/%llu",
				 (unsigned long long)r->st.layers_accepted,
				 (unsigned long long)r->st.layers_modified,
				 (unsigned long long)r->st.layers_dropped);
		} else {
			snprintf(late, sizeof(late), "-");
			snprintf(moved, sizeof(moved), "-");
			snprintf(lay, sizeof(lay), "-");
			if (tt_copying(m))
				snprintf(moved, sizeof(moved), "%.0f",
					 r->copied / TT_MIB);
		}
		if (r->tlb_per_mib < 0)
			snprintf(tlb, sizeof(tlb), "-");
		else
			snprintf(tlb, sizeof(tlb), "%.1f", r->tlb_per_mib);
		printf("%-10s %9.1f %8s %9.1f %8s %9.1f %8s %6.1f/%6.1f %8s %8s %9s %8s %11s\n",
		       tt_mode_name[m], r->step_ms, step, r->fast_avg / TT_MIB,
		       avg, r->fast_peak / TT_MIB, peak,
		       r->oracle_avg / TT_MIB, r->oracle_peak / TT_MIB, ots,
		       late, moved, tlb, lay);
	}
	printf("%-10s %9s %8s %9s %8s %9s %8s %13s %8s\n", "goal", "",
	       "<=+3%", "", "<=-80%", "", "<=-60%", "", ">=99%");
	/* the execution backends of the kernel scheduler (Documentation/mover.md) */
	for (m = TT_MODE_TIERTRAIN; m < TT_MODE_NR; m++) {
		const struct tt_result *r = &t->res[m];

		if (!r->ok || !r->have_stats || strcmp(r->backend, "kernel"))
			continue;
		printf("%s (%s activations, %llu mover threads): engine %.0f MiB, movers %.0f MiB, huge pages kept %llu, split %llu, partly covered and left %llu, orders back to the engine %llu\n",
		       tt_mode_name[m], tt_alloc_name[t->cfg.alloc],
		       (unsigned long long)r->st.movers,
		       r->st.engine_bytes / TT_MIB, r->st.mover_bytes / TT_MIB,
		       (unsigned long long)r->st.huge_kept,
		       (unsigned long long)r->st.huge_split,
		       (unsigned long long)r->st.huge_partial,
		       (unsigned long long)r->st.mover_fallbacks);
	}
}

/*
 * The budget mode against its budget and against the same scheduler
 * without one (the tiertrain mode of this run).
 */
static void tt_print_budget(const struct tt_train *t, const struct tt_result *r)
{
	const struct tt_result *k = &t->res[TT_MODE_TIERTRAIN];
	double b = t->cfg.budget_mib * TT_MIB;

	printf("budget: %u MiB; registered bytes on the fast tier (measured) avg %.1f MiB (%.0f%% of the budget), peak %.1f MiB (%+.1f MiB against it); scheduler's own count: peak %.1f MiB\n",
	       t->cfg.budget_mib, r->fast_avg / TT_MIB, 100.0 * r->fast_avg / b,
	       r->fast_peak / TT_MIB, (r->fast_peak - b) / TT_MIB,
	       r->st.fast_peak_bytes / TT_MIB);
	printf("budget: victims %llu (%.1f MiB, %llu pages could not move), prefetches that waited for room %llu, calls over the budget %llu\n",
	       (unsigned long long)r->st.victims, r->st.victim_bytes / TT_MIB,
	       (unsigned long long)r->st.victims_skipped_pages,
	       (unsigned long long)r->st.budget_waits,
	       (unsigned long long)r->st.budget_overruns);
	if (k->ok)
		printf("budget vs tiertrain (no budget): step %.1f vs %.1f ms (%+.1f%%), avg fast %.1f vs %.1f MiB, peak fast %.1f vs %.1f MiB (tiertrain counts an activation from its first write), late %.1f vs %.1f MiB\n",
		       r->step_ms, k->step_ms, tt_pct(r->step_ms, k->step_ms),
		       r->fast_avg / TT_MIB, k->fast_avg / TT_MIB,
		       r->fast_peak / TT_MIB, k->fast_peak / TT_MIB,
		       r->st.late_bytes / TT_MIB, k->st.late_bytes / TT_MIB);
}

/*
 * The step goal: at most TT_GOAL_STEP_PCT over none, or within
 * TT_GOAL_FLOOR_PTS points of the copy mode's (the floor), when it ran.
 */
static int tt_step_met(const struct tt_train *t, double step)
{
	const struct tt_result *ref = tt_ref(t), *cp = &t->res[TT_MODE_COPY];

	if (step <= TT_GOAL_STEP_PCT)
		return 1;
	return cp->ok && ref &&
	       step <= tt_pct(cp->step_ms, ref->step_ms) + TT_GOAL_FLOOR_PTS;
}

/*
 * The kernel scheduler @k against the userspace one @us: "beaten" at a
 * lower or equal median step with equal or smaller avg and peak
 * fast-tier bytes; "equal within the spread" when the step is higher but
 * within the range of @us's own measured iterations; else "NOT met",
 * naming what fails.
 */
static void tt_print_vs(const struct tt_result *k, const struct tt_result *us)
{
	int avg = k->fast_avg <= us->fast_avg;
	int peak = k->fast_peak <= us->fast_peak;
	int step = k->step_ms <= us->step_ms;
	int spread = k->step_ms <= tt_max(us);

	printf("tiertrain vs userspace: avg fast %.1f vs %.1f MiB, peak fast %.1f vs %.1f MiB, step %.1f vs %.1f ms (userspace's iterations %.1f..%.1f): %s%s%s%s\n",
	       k->fast_avg / TT_MIB, us->fast_avg / TT_MIB,
	       k->fast_peak / TT_MIB, us->fast_peak / TT_MIB,
	       k->step_ms, us->step_ms, tt_min(us), tt_max(us),
	       avg && peak && step ? "beaten" :
	       avg && peak && spread ? "equal within the spread" : "NOT met",
	       avg ? "" : "; avg larger", peak ? "" : "; peak larger",
	       step || spread ? "" : "; step above the spread");
}

static void tt_print_goals(const struct tt_train *t)
{
	const struct tt_result *ref = tt_ref(t);
	const struct tt_result *us = &t->res[TT_MODE_USERSPACE];
	const struct tt_result *cp = &t->res[TT_MODE_COPY];
	const struct tt_result *um = &t->res[TT_MODE_UNMAP];
	const struct tt_result *mv = &t->res[TT_MODE_MOVE];
	int m;

	printf("\n");
	if (cp->ok && ref)
		printf("copy: step %.1f ms (median; %.1f..%.1f) vs %.1f ms without tiering: %+.1f%%: the floor, a thread of the process copying the bytes the tiertrain mode moved (%.0f MiB in the measured iterations) between the same nodes, as they would move\n",
		       cp->step_ms, tt_min(cp), tt_max(cp), ref->step_ms,
		       tt_pct(cp->step_ms, ref->step_ms), cp->copied / TT_MIB);
	if (um->ok && ref)
		printf("unmap: step %.1f ms (median; %.1f..%.1f) vs %.1f ms without tiering: %+.1f%%: the floor of moving pages, the copy mode's thread also sending one TLB shootdown per 2 MiB it copies (%.0f MiB; %.2f shootdowns received per MiB), the fewest any exported migration path sends\n",
		       um->step_ms, tt_min(um), tt_max(um), ref->step_ms,
		       tt_pct(um->step_ms, ref->step_ms), um->copied / TT_MIB,
		       um->tlb_per_mib);
	if (mv->ok && ref)
		printf("move: step %.1f ms (median; %.1f..%.1f) vs %.1f ms without tiering: %+.1f%%: the floor of migrating, the copy mode's thread moving the same bytes of its own huge-page buffer with move_pages(2) instead (%.0f MiB; %.2f shootdowns received per MiB), no scheduler, no session\n",
		       mv->step_ms, tt_min(mv), tt_max(mv), ref->step_ms,
		       tt_pct(mv->step_ms, ref->step_ms), mv->copied / TT_MIB,
		       mv->tlb_per_mib);
	for (m = TT_MODE_TIERTRAIN; m < TT_MODE_NR; m++) {
		const struct tt_result *r = &t->res[m];
		double ravg, rpeak, avg, peak, ot, own, step;

		if (!r->ok || tt_copying(m) || m == TT_MODE_LINUX)
			continue;
		ravg = ref ? ref->fast_avg : r->base_avg;
		rpeak = ref ? ref->fast_peak : r->base_peak;
		avg = tt_pct(r->fast_avg, ravg);
		peak = tt_pct(r->fast_peak, rpeak);
		ot = tt_ontime_pct(r);
		own = tt_ontime_own_pct(t, r);
		printf("%s: avg fast %+.1f%% (goal %.0f%%: %s; oracle %+.1f%%), peak fast %+.1f%% (goal %.0f%%: %s; oracle %+.1f%%)\n",
		       tt_mode_name[m], avg, TT_GOAL_AVG_PCT,
		       tt_verdict(avg <= TT_GOAL_AVG_PCT),
		       tt_pct(r->oracle_avg, r->base_avg), peak,
		       TT_GOAL_PEAK_PCT, tt_verdict(peak <= TT_GOAL_PEAK_PCT),
		       tt_pct(r->oracle_peak, r->base_peak));
		printf("%s: per-iteration peak fast %.1f MiB (median over the measured iterations; %+.1f%% against none's %.1f MiB); TLB shootdowns received per iteration %.0f (none %.0f), per MiB moved %.1f\n",
		       tt_mode_name[m], r->peak_med / TT_MIB,
		       ref ? tt_pct(r->peak_med, ref->peak_med) : 0.0,
		       ref ? ref->peak_med / TT_MIB : 0.0, r->tlb_per_iter,
		       ref ? ref->tlb_per_iter : 0.0, r->tlb_per_mib);
		if (ot >= 0)
			printf("%s: on time %.2f%% of %.1f MiB due (goal >= %.0f%%: %s), late %.1f MiB in %llu layer-iterations, sync-fetched %.1f MiB\n",
			       tt_mode_name[m], ot,
			       (r->st.ontime_bytes + r->st.late_bytes) / TT_MIB,
			       TT_GOAL_ONTIME_PCT,
			       tt_verdict(ot >= TT_GOAL_ONTIME_PCT),
			       r->st.late_bytes / TT_MIB,
			       (unsigned long long)r->st.late_count,
			       r->st.sync_fetched_bytes / TT_MIB);
		else
			printf("%s: on time: nothing was evicted in the measured iterations (goal >= %.0f%%: MISSED)\n",
			       tt_mode_name[m], TT_GOAL_ONTIME_PCT);
		if (t->cfg.dynamic)
			printf("%s: dynamic: %llu signatures known, over the measured iterations %llu planned from a signature that held, %llu mispredicted, %llu on the layer-count fallback, %llu misses logged; k %llu\n",
			       tt_mode_name[m],
			       (unsigned long long)r->st.dyn_signatures,
			       (unsigned long long)r->st.dyn_predicted,
			       (unsigned long long)r->st.dyn_mispredicted,
			       (unsigned long long)r->st.dyn_fallback,
			       (unsigned long long)r->st.dyn_misses,
			       (unsigned long long)r->st.count_ahead);
		if (own >= 0)
			printf("%s: own check at backward begins: %.1f MiB still slow (scheduler: %.1f MiB late), on time %.2f%%\n",
			       tt_mode_name[m], r->late_own / TT_MIB,
			       r->st.late_bytes / TT_MIB, own);
		if (ref) {
			step = tt_pct(r->step_ms, ref->step_ms);
			if (cp->ok)
				printf("%s: step %.1f ms (median; %.1f..%.1f) vs %.1f ms (%.1f..%.1f) without tiering: %+.1f%% (goal <= +%.0f%% or within %.0f point of the floor's %+.1f%%: %s)\n",
				       tt_mode_name[m], r->step_ms, tt_min(r),
				       tt_max(r), ref->step_ms, tt_min(ref),
				       tt_max(ref), step, TT_GOAL_STEP_PCT,
				       TT_GOAL_FLOOR_PTS,
				       tt_pct(cp->step_ms, ref->step_ms),
				       tt_verdict(tt_step_met(t, step)));
			else
				printf("%s: step %.1f ms (median; %.1f..%.1f) vs %.1f ms (%.1f..%.1f) without tiering: %+.1f%% (goal <= +%.0f%%: %s)\n",
				       tt_mode_name[m], r->step_ms, tt_min(r),
				       tt_max(r), ref->step_ms, tt_min(ref),
				       tt_max(ref), step, TT_GOAL_STEP_PCT,
				       tt_verdict(tt_step_met(t, step)));
		}
		if (m == TT_MODE_BUDGET)
			tt_print_budget(t, r);
		if (r->have_stats)
			printf("%s: layer-iterations accepted %llu, modified %llu, dropped %llu, unknown %llu; reprofiles %llu; ER %.0f MB/s, PR %.0f MB/s; busy pages %llu, no-memory pages %llu; prefetches left %.1f MiB on slow nodes, %.1f MiB of it moved back at iteration begins; late landings moved back %.1f MiB\n",
			       tt_mode_name[m],
			       (unsigned long long)r->st.layers_accepted,
			       (unsigned long long)r->st.layers_modified,
			       (unsigned long long)r->st.layers_dropped,
			       (unsigned long long)r->st.layers_unknown,
			       (unsigned long long)r->st.reprofiles,
			       r->st.er_bps / 1e6, r->st.pr_bps / 1e6,
			       (unsigned long long)r->st.total.skipped_busy,
			       (unsigned long long)r->st.total.skipped_no_memory,
			       r->st.prefetch_left_bytes / TT_MIB,
			       r->st.left_returned_bytes / TT_MIB,
			       r->st.landed_bytes / TT_MIB);
	}
	if (t->res[TT_MODE_TIERTRAIN].ok && us->ran) {
		const struct tt_result *k = &t->res[TT_MODE_TIERTRAIN];

		if (!us->ok)
			printf("tiertrain vs userspace: no userspace figures (%s)\n",
			       us->reason);
		else
			tt_print_vs(k, us);
	}
	for (m = 0; m < TT_MODE_NR; m++)
		if (t->res[m].ok)
			printf("%s: sampler %zu passes in the measured iterations, every %.2f ms on average, longest pass %.2f ms, busy %.0f%% of the time\n",
			       tt_mode_name[m], t->res[m].nsamples,
			       t->res[m].mean_gap_ms, t->res[m].max_pass_ms,
			       t->res[m].busy_pct);
}

/*
 * The step projected on hardware (bench/README.md, "Against Linux's own
 * tiering"): the compute streams the bytes it reads and writes, so a step
 * lasts about the bytes it moves on each tier over that tier's bandwidth:
 * (read + written on the fast tier) / DRAM's + read from the slow tier /
 * its read bandwidth + written there / its write bandwidth. Per socket,
 * every core streaming (GB/s, 10^9 bytes):
 * CXL: a Xeon Max 9480's DDR5-4800 x 8 channels at 80 % of peak (246)
 *      against one CXL 2.0 expander (17.8 read-only, Intel's CacheLib
 *      "OCP demo configuration"; its mixes are faster, so writes are
 *      priced at the read figure);
 * Optane: 6 x DDR4-2666 at 80 % (102) against 6 interleaved Optane DC
 *      PMMs (39.4 read, 13.9 write; Izraelevitz et al., arXiv:1903.05714).
 */
#define TT_PROJ_CXL_DRAM_GBS	246.0
#define TT_PROJ_CXL_GBS		17.8
#define TT_PROJ_CXL_WR_GBS	17.8
#define TT_PROJ_OPT_DRAM_GBS	102.0
#define TT_PROJ_OPT_GBS		39.4
#define TT_PROJ_OPT_WR_GBS	13.9

/*
 * What the slow tier adds to a step of @r on CXL (@optane 0) or Optane (1)
 * hardware over reading and writing the same bytes in DRAM, ms.
 */
static double tt_slow_extra(const struct tt_result *r, int optane)
{
	double dram = optane ? TT_PROJ_OPT_DRAM_GBS : TT_PROJ_CXL_DRAM_GBS;
	double rd = optane ? TT_PROJ_OPT_GBS : TT_PROJ_CXL_GBS;
	double wr = optane ? TT_PROJ_OPT_WR_GBS : TT_PROJ_CXL_WR_GBS;

	return (r->rd_slow * (1 / rd - 1 / dram) +
		r->wr_slow * (1 / wr - 1 / dram)) / 1e9 * 1e3;
}

/* The projected step of @r on CXL (@optane 0) or Optane (1) hardware, ms. */
static double tt_projected(const struct tt_result *r, int optane)
{
	double dram = optane ? TT_PROJ_OPT_DRAM_GBS : TT_PROJ_CXL_DRAM_GBS;

	return (r->rd_fast + r->rd_slow + r->wr_fast + r->wr_slow) / dram /
	       1e9 * 1e3 + tt_slow_extra(r, optane);
}

/* Bytes the kernel's own tiering migrated over @r's measured iterations. */
static double tt_kernel_migrated(const struct tt_result *r)
{
	return ((double)r->vm[TT_VM_DEMOTE_KSWAPD] + r->vm[TT_VM_DEMOTE_DIRECT] +
		r->vm[TT_VM_DEMOTE_KHUGEPAGED] + r->vm[TT_VM_NUMA_MIGRATED]) *
	       tt_page_size();
}

/*
 * --model-mib: where the compute read its bytes, who migrated what, and the
 * step projected on hardware, per mode; then the goals against the linux
 * mode (Linux's own tiering).
 */
static void tt_print_reads(const struct tt_train *t)
{
	const struct tt_result *ref = tt_ref(t), *lx = &t->res[TT_MODE_LINUX];
	const struct tt_result *k = &t->res[TT_MODE_TIERTRAIN];
	double ps = tt_page_size();
	int m;

	printf("\nwhere the compute read (residency as each layer's forward and backward begin; per step), who migrated (per step), the step projected on hardware (bench/README.md: bytes / bandwidth)\n");
	printf("%-10s %9s %9s %9s %9s %7s %9s %9s %8s %8s %8s %8s %9s %8s %9s %8s\n",
	       "mode", "step ms", "peak MiB", "read MiB", "slow MiB", "slow %",
	       "tt MiB", "kern MiB", "demoted", "promoted", "hint flt",
	       "tlb", "CXL ms", "vs none", "Optane ms", "vs none");
	for (m = 0; m < TT_MODE_NR; m++) {
		const struct tt_result *r = &t->res[m];
		double n, cxl, opt, rcxl = 0, ropt = 0, rd, moved = 0;
		char vc[16], vo[16];

		if (!r->ok || tt_copying(m))
			continue;
		n = r->measured;
		rd = r->rd_fast + r->rd_slow;
		if (r->have_stats)
			moved = (r->st.bytes_evicted + r->st.bytes_prefetched) / n;
		cxl = tt_projected(r, 0);
		opt = tt_projected(r, 1);
		if (ref) {
			rcxl = tt_projected(ref, 0);
			ropt = tt_projected(ref, 1);
		}
		snprintf(vc, sizeof(vc), ref && m ? "%+.1f%%" : "-",
			 tt_pct(cxl, rcxl));
		snprintf(vo, sizeof(vo), ref && m ? "%+.1f%%" : "-",
			 tt_pct(opt, ropt));
		printf("%-10s %9.1f %9.1f %9.1f %9.1f %6.2f%% %9.1f %9.1f %8.1f %8.1f %8.0f %8.0f %9.2f %8s %9.2f %8s\n",
		       tt_mode_name[m], r->step_ms, r->fast_peak / TT_MIB,
		       rd / TT_MIB, r->rd_slow / TT_MIB,
		       rd > 0 ? 100.0 * r->rd_slow / rd : 0.0, moved / TT_MIB,
		       tt_kernel_migrated(r) / n / TT_MIB,
		       (r->vm[TT_VM_DEMOTE_KSWAPD] + r->vm[TT_VM_DEMOTE_DIRECT] +
			r->vm[TT_VM_DEMOTE_KHUGEPAGED]) * ps / n / TT_MIB,
		       r->vm[TT_VM_PROMOTE] * ps / n / TT_MIB,
		       r->vm[TT_VM_HINT_FAULTS] / n, r->tlb_per_iter, cxl, vc,
		       opt, vo);
	}
	for (m = 0; m < TT_MODE_NR; m++) {
		const struct tt_result *r = &t->res[m];

		if (r->ok && !tt_copying(m))
			printf("%s: slow reads per step: model state %.1f MiB, saved activations %.1f MiB, scratch %.1f MiB; written to the slow tier %.1f MiB, to the fast %.1f MiB; fast nodes' free memory avg %.1f MiB, least %.1f MiB\n",
			       tt_mode_name[m], r->rd_kind[TT_RD_MODEL] / TT_MIB,
			       r->rd_kind[TT_RD_ACT] / TT_MIB,
			       r->rd_kind[TT_RD_SCRATCH] / TT_MIB,
			       r->wr_slow / TT_MIB, r->wr_fast / TT_MIB,
			       r->free_avg / TT_MIB, r->free_min / TT_MIB);
	}
	printf("(MiB per step; demoted, promoted: the kernel's pgdemote_* and pgpromote_success; kern MiB: those demotions and numa_pages_migrated; tt MiB: tiertrain's evictions and prefetches; hint flt: numa_hint_faults; tlb: shootdowns received)\n");
	if (!k->ok || !lx->ok) {
		printf("against linux: %s\n", !k->ok ? "the tiertrain mode has no figures" :
		       "the linux mode has no figures (--mode ...,linux)");
		return;
	}
	{
		double rd = k->rd_fast + k->rd_slow;
		double slow = rd > 0 ? 100.0 * k->rd_slow / rd : 100.0;
		double kc = tt_projected(k, 0);
		double lc = tt_projected(lx, 0);
		double ko = tt_projected(k, 1);
		double lo = tt_projected(lx, 1);

		printf("tiertrain: reads %.2f%% of its bytes from the slow tier (goal <= 1%%: %s)\n",
		       slow, tt_verdict(slow <= 1.0));
		printf("tiertrain: projected step on CXL %.2f vs linux's %.2f ms (%+.1f%%), on Optane %.2f vs %.2f ms (%+.1f%%) (goal <= -35%%: %s)\n",
		       kc, lc, tt_pct(kc, lc), ko, lo, tt_pct(ko, lo),
		       tt_verdict(tt_pct(kc, lc) <= -35.0 &&
				  tt_pct(ko, lo) <= -35.0));
		printf("tiertrain: peak fast %.1f vs linux's %.1f MiB (goal: equal or smaller: %s)\n",
		       k->fast_peak / TT_MIB, lx->fast_peak / TT_MIB,
		       tt_verdict(k->fast_peak <= lx->fast_peak));
	}
}

static const char *tt_status_name(uint32_t s)
{
	switch (s) {
	case TT_LAYER_PROFILING:
		return "profiling";
	case TT_LAYER_ACCEPTED:
		return "accepted";
	case TT_LAYER_MODIFIED:
		return "modified";
	case TT_LAYER_DROPPED:
		return "dropped";
	}
	return "?";
}

static void tt_fmt_ms(char *buf, size_t size, uint64_t ns)
{
	if (ns)
		snprintf(buf, size, "%.1f", tt_ms(ns));
	else
		snprintf(buf, size, "-");
}

/* What moved and when in the last iteration, from tt_layers(). */
static void tt_print_moves(const struct tt_train *t, enum tt_mode mode)
{
	const struct tt_result *r = &t->res[mode];
	int i;

	printf("\n%s, iteration %u: what moved and when (ms from the iteration's start, per the scheduler)\n",
	       tt_mode_name[mode], r->tl_iter);
	printf("%5s %-9s %8s %8s %8s %15s %17s %9s %s\n", "layer", "next plan",
	       "MiB", "evicted", "fwd end", "evict start-end",
	       "prefetch start-end", "bwd begin", "arrival");
	for (i = 0; i < r->nlayers; i++) {
		const struct tt_layer_info *li = &r->layers[i];
		char fe[16], es[16], ee[16], ps[16], pe[16], bb[16], arr[48];

		tt_fmt_ms(fe, sizeof(fe), li->last_fwd_end_ns);
		tt_fmt_ms(es, sizeof(es), li->last_evict_start_ns);
		tt_fmt_ms(ee, sizeof(ee), li->last_evict_end_ns);
		tt_fmt_ms(ps, sizeof(ps), li->last_prefetch_start_ns);
		tt_fmt_ms(pe, sizeof(pe), li->last_prefetch_end_ns);
		if (!li->last_evict_start_ns)
			es[0] = ee[0] = '\0';
		if (!li->last_prefetch_start_ns)
			ps[0] = pe[0] = '\0';
		tt_fmt_ms(bb, sizeof(bb), li->last_bwd_start_ns);
		if (!li->last_evicted_bytes)
			snprintf(arr, sizeof(arr), "stayed fast");
		else if (li->last_late_bytes)
			snprintf(arr, sizeof(arr), "LATE %.1f MiB",
				 li->last_late_bytes / TT_MIB);
		else if (li->last_prefetch_end_ns &&
			 li->last_bwd_start_ns > li->last_prefetch_end_ns)
			snprintf(arr, sizeof(arr), "on time, %.1f ms early",
				 tt_ms(li->last_bwd_start_ns -
				       li->last_prefetch_end_ns));
		else
			snprintf(arr, sizeof(arr), "on time");
		printf("%5u %-9s %8.1f %8.1f %8s %7s%c%-7s %8s%c%-8s %9s %s\n",
		       li->layer, tt_status_name(li->status),
		       li->saved_bytes / TT_MIB, li->last_evicted_bytes / TT_MIB,
		       fe, es, es[0] ? '-' : ' ', ee, ps, ps[0] ? '-' : ' ', pe,
		       bb, arr);
	}
}

/* The ASCII timeline of the last iteration: fast (#) and slow (o) MiB. */
static void tt_print_timeline(const struct tt_train *t, enum tt_mode mode)
{
	const struct tt_result *r = &t->res[mode];
	const unsigned int width = 50, L = t->cfg.layers;
	uint64_t b = r->tl_irec.begin, e = r->tl_irec.end, span = e - b, row;
	double top = 0, per_col;
	unsigned int k, l, rows = t->cfg.rows;
	size_t i = 0;
	const struct tt_sample *cur = NULL;

	for (i = 0; i < r->tl_n; i++)
		if (r->tl_samples[i].fast + r->tl_samples[i].slow > top)
			top = r->tl_samples[i].fast + r->tl_samples[i].slow;
	if (!r->tl_n || !span || top <= 0) {
		printf("\n%s: no samples in iteration %u for a timeline\n",
		       tt_mode_name[mode], r->tl_iter);
		return;
	}
	row = (span + rows - 1) / rows;
	per_col = top / width;
	printf("\n%s, iteration %u: saved activations on the fast (#) and slow (o) tier, one row = %.1f ms, one column = %.1f MiB\n",
	       tt_mode_name[mode], r->tl_iter, tt_ms(row), per_col / TT_MIB);
	printf("events: Fn| forward of layer n ends (its eviction may start), Bn> backward of layer n begins (its activation must be back)\n");
	printf("* the sampler took no sample in that row (its residency queries were held up): the previous one is shown\n");
	printf("%8s %7s %7s   %-*s  %s\n", "ms", "fast", "slow", width, "",
	       "events");
	i = 0;
	for (k = 0; k < rows; k++) {
		uint64_t from = b + k * row, to = from + row;
		char bar[64], ev[256];
		unsigned int nf, ns, c;
		size_t evlen = 0;
		int fresh = 0;

		if (from >= e)
			break;
		while (i < r->tl_n && r->tl_samples[i].t < to) {
			cur = &r->tl_samples[i++];
			fresh = 1;
		}
		nf = cur ? (unsigned int)(cur->fast / per_col + 0.5) : 0;
		ns = cur ? (unsigned int)(cur->slow / per_col + 0.5) : 0;
		if (nf > width)
			nf = width;
		if (nf + ns > width)
			ns = width - nf;
		for (c = 0; c < width; c++)
			bar[c] = c < nf ? '#' : c < nf + ns ? 'o' : ' ';
		bar[width] = '\0';
		ev[0] = '\0';
		for (l = 0; l < L; l++) {
			const struct tt_lrec *lr = &r->tl_rec[l];

			if (lr->fwd_end >= from && lr->fwd_end < to &&
			    evlen + 8 < sizeof(ev))
				evlen += snprintf(ev + evlen, sizeof(ev) - evlen,
						  "F%u| ", l);
		}
		for (l = L; l-- > 0;) {
			const struct tt_lrec *lr = &r->tl_rec[l];

			if (lr->bwd_begin >= from && lr->bwd_begin < to &&
			    evlen + 8 < sizeof(ev))
				evlen += snprintf(ev + evlen, sizeof(ev) - evlen,
						  "B%u> ", l);
		}
		printf("%8.1f %7.1f %7.1f %c %s  %s\n", tt_ms(from - b),
		       cur ? cur->fast / TT_MIB : 0.0,
		       cur ? cur->slow / TT_MIB : 0.0, fresh ? ' ' : '*', bar,
		       ev);
	}
}

static void tt_mkdirs(const char *path)
{
	char dir[4096] = "";
	int ret = tt_st_mkdirs(path, dir, sizeof(dir));

	if (ret)
		tt_die("mkdir %s: %s", dir[0] ? dir : path, strerror(-ret));
}

/* JSON string contents: our strings come from strerror() and our own text. */
static void tt_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* One "key": value member of a JSON object, comma-separated from the last. */
static void tt_jkv(FILE *f, int *n, const char *key, unsigned long long v)
{
	fprintf(f, "%s\"%s\": %llu", (*n)++ ? ", " : "", key, v);
}

static void tt_json_stats(FILE *f, const struct tt_ioc_stats *st)
{
	int n = 0;

	fprintf(f, "\"stats\": {");
	tt_jkv(f, &n, "iterations", st->iterations);
	tt_jkv(f, &n, "events", st->events);
	tt_jkv(f, &n, "tensors_saved", st->tensors_saved);
	tt_jkv(f, &n, "tensors_ignored", st->tensors_ignored);
	tt_jkv(f, &n, "layers_accepted", st->layers_accepted);
	tt_jkv(f, &n, "layers_modified", st->layers_modified);
	tt_jkv(f, &n, "layers_dropped", st->layers_dropped);
	tt_jkv(f, &n, "layers_unknown", st->layers_unknown);
	tt_jkv(f, &n, "bytes_evicted", st->bytes_evicted);
	tt_jkv(f, &n, "bytes_prefetched", st->bytes_prefetched);
	tt_jkv(f, &n, "ontime_bytes", st->ontime_bytes);
	tt_jkv(f, &n, "late_bytes", st->late_bytes);
	tt_jkv(f, &n, "late_count", st->late_count);
	tt_jkv(f, &n, "sync_fetched_bytes", st->sync_fetched_bytes);
	tt_jkv(f, &n, "reprofiles", st->reprofiles);
	tt_jkv(f, &n, "er_bps", st->er_bps);
	tt_jkv(f, &n, "pr_bps", st->pr_bps);
	tt_jkv(f, &n, "skipped_busy_pages", st->total.skipped_busy);
	tt_jkv(f, &n, "skipped_no_memory_pages", st->total.skipped_no_memory);
	tt_jkv(f, &n, "prefetch_left_bytes", st->prefetch_left_bytes);
	tt_jkv(f, &n, "left_returned_bytes", st->left_returned_bytes);
	tt_jkv(f, &n, "landed_bytes", st->landed_bytes);
	tt_jkv(f, &n, "engine_bytes", st->engine_bytes);
	tt_jkv(f, &n, "mover_bytes", st->mover_bytes);
	tt_jkv(f, &n, "huge_kept", st->huge_kept);
	tt_jkv(f, &n, "huge_split", st->huge_split);
	tt_jkv(f, &n, "huge_partial", st->huge_partial);
	tt_jkv(f, &n, "mover_fallbacks", st->mover_fallbacks);
	tt_jkv(f, &n, "movers", st->movers);
	tt_jkv(f, &n, "budget_bytes", st->budget_bytes);
	tt_jkv(f, &n, "fast_registered_peak_bytes", st->fast_peak_bytes);
	tt_jkv(f, &n, "victims", st->victims);
	tt_jkv(f, &n, "victim_bytes", st->victim_bytes);
	tt_jkv(f, &n, "victims_skipped_pages", st->victims_skipped_pages);
	tt_jkv(f, &n, "budget_waits", st->budget_waits);
	tt_jkv(f, &n, "budget_overruns", st->budget_overruns);
	fprintf(f, "}");
}

static void tt_json_layer(FILE *f, const struct tt_layer_info *li)
{
	int n = 0;

	fprintf(f, "{");
	tt_jkv(f, &n, "layer", li->layer);
	fprintf(f, ", \"status\": \"%s\"", tt_status_name(li->status));
	tt_jkv(f, &n, "saved_bytes", li->saved_bytes);
	tt_jkv(f, &n, "final_bytes", li->final_bytes);
	tt_jkv(f, &n, "fwd_end_ns", li->fwd_end_ns);
	tt_jkv(f, &n, "bwd_start_ns", li->bwd_start_ns);
	tt_jkv(f, &n, "prefetch_ns", li->prefetch_ns);
	tt_jkv(f, &n, "lead_ns", li->lead_ns);
	fprintf(f, ", \"last\": {");
	n = 0;
	tt_jkv(f, &n, "fwd_end_ns", li->last_fwd_end_ns);
	tt_jkv(f, &n, "evict_start_ns", li->last_evict_start_ns);
	tt_jkv(f, &n, "evict_end_ns", li->last_evict_end_ns);
	tt_jkv(f, &n, "prefetch_start_ns", li->last_prefetch_start_ns);
	tt_jkv(f, &n, "prefetch_end_ns", li->last_prefetch_end_ns);
	tt_jkv(f, &n, "bwd_start_ns", li->last_bwd_start_ns);
	tt_jkv(f, &n, "evicted_bytes", li->last_evicted_bytes);
	tt_jkv(f, &n, "late_bytes", li->last_late_bytes);
	fprintf(f, "}}");
}

static void tt_json_samples(FILE *f, const struct tt_result *r)
{
	size_t k;

	for (k = 0; k < r->tl_n; k++)
		fprintf(f, "%s[%llu, %llu, %llu]", k ? ", " : "",
			(unsigned long long)(r->tl_samples[k].t - r->tl_irec.begin),
			(unsigned long long)r->tl_samples[k].fast,
			(unsigned long long)r->tl_samples[k].slow);
}

/*
 * Every iteration: its time, its TLB shootdowns, the session's bytes
 * evicted, back on time and late and its layers dropped over it (the
 * warm-up's too: the first planned iteration is the last of the warm-up),
 * each layer's forward and backward time, and where that time went (forward: compute, mmap, output write, scheduler
 * calls; backward: tt_layer_begin() call, checksum read, compute, munmap,
 * tt_layer_end() call).
 */
static void tt_json_iters(FILE *f, const struct tt_train *t,
			  const struct tt_result *r)
{
	unsigned int it, l, L = t->cfg.layers;

	for (it = 0; it < t->cfg.iters; it++) {
		const struct tt_irec *ir = &r->all_irec[it];
		const struct tt_lrec *lr = &r->all_rec[(size_t)it * L];

		fprintf(f, "%s\n       {\"iteration\": %u, \"warmup\": %s, \"ms\": %.3f, \"tlb_shootdowns\": %llu, \"evicted_bytes\": %llu, \"ontime_bytes\": %llu, \"late_bytes\": %llu, \"late_count\": %llu, \"layers_dropped\": %llu, \"cpu_ms\": %.3f, \"wait_ms\": %.3f, \"excluded_ms\": %.3f, \"fwd_ms\": [",
			it ? "," : "", it, it < r->warmup ? "true" : "false",
			tt_ms(ir->end - ir->begin - ir->excluded),
			(unsigned long long)ir->tlb,
			(unsigned long long)ir->st.bytes_evicted,
			(unsigned long long)ir->st.ontime_bytes,
			(unsigned long long)ir->st.late_bytes,
			(unsigned long long)ir->st.late_count,
			(unsigned long long)ir->st.layers_dropped,
			tt_ms(ir->cpu), tt_ms(ir->wait), tt_ms(ir->excluded));
		for (l = 0; l < L; l++)
			fprintf(f, "%s%.3f", l ? ", " : "",
				tt_ms(lr[l].fwd_end - lr[l].fwd_begin));
		fprintf(f, "], \"bwd_ms\": [");
		for (l = 0; l < L; l++)
			fprintf(f, "%s%.3f", l ? ", " : "",
				tt_ms(lr[l].bwd_end - lr[l].bwd_begin));
		fprintf(f, "],\n        \"fwd_compute_map_write_calls_ms\": [");
		for (l = 0; l < L; l++)
			fprintf(f, "%s[%.3f, %.3f, %.3f, %.3f]", l ? ", " : "",
				tt_ms(lr[l].fwd_computed - lr[l].fwd_begin),
				tt_ms(lr[l].mapped - lr[l].fwd_computed),
				tt_ms(lr[l].touched - lr[l].mapped),
				tt_ms(lr[l].fwd_done - lr[l].touched));
		fprintf(f, "],\n        \"bwd_call_check_compute_unmap_call_ms\": [");
		for (l = 0; l < L; l++)
			fprintf(f, "%s[%.3f, %.3f, %.3f, %.3f, %.3f]", l ? ", " : "",
				tt_ms(lr[l].bwd_begin - lr[l].bwd_call),
				tt_ms(lr[l].checked - lr[l].bwd_begin),
				tt_ms(lr[l].bwd_computed - lr[l].checked),
				tt_ms(lr[l].freed - lr[l].bwd_computed),
				tt_ms(lr[l].bwd_end - lr[l].freed));
		/* where each activation starts in its 2 MiB block */
		fprintf(f, "],\n        \"act_offset_in_2mib_kib\": [");
		for (l = 0; l < L; l++)
			fprintf(f, "%s%.1f", l ? ", " : "",
				(lr[l].addr & ((2UL << 20) - 1)) / 1024.0);
		fprintf(f, "]}");
	}
}

static void tt_json_mode(FILE *f, const struct tt_train *t, enum tt_mode mode)
{
	const struct tt_result *r = &t->res[mode], *ref = tt_ref(t);
	unsigned int i, l;

	fprintf(f, "    {\"mode\": \"%s\", \"status\": \"%s\", \"backend\": \"%s\"",
		tt_mode_name[mode], r->ok ? "ok" : "n/a", r->backend);
	if (!r->ok) {
		fprintf(f, ", \"reason\": ");
		tt_json_str(f, r->reason);
		fprintf(f, "}");
		return;
	}
	fprintf(f, ",\n     \"warmup_iterations\": %u, \"measured_iterations\": %u, \"step_ms_median\": %.3f, \"iter_ms\": [",
		r->warmup, r->measured, r->step_ms);
	for (i = 0; i < r->measured; i++)
		fprintf(f, "%s%.3f", i ? ", " : "", r->iter_ms[i]);
	fprintf(f, "],\n     \"fast_avg_bytes\": %.0f, \"fast_peak_bytes\": %.0f, \"slow_avg_bytes\": %.0f, \"slow_peak_bytes\": %.0f,\n",
		r->fast_avg, r->fast_peak, r->slow_avg, r->slow_peak);
	fprintf(f, "     \"fast_peak_median_bytes\": %.0f, \"tlb_shootdowns_per_iter\": %.0f, \"tlb_shootdowns_per_mib\": %.2f, \"copied_bytes\": %llu,\n",
		r->peak_med, r->tlb_per_iter, r->tlb_per_mib,
		(unsigned long long)r->copied);
	fprintf(f, "     \"untiered_model_avg_bytes\": %.0f, \"untiered_model_peak_bytes\": %.0f, \"oracle_avg_bytes\": %.0f, \"oracle_peak_bytes\": %.0f",
		r->base_avg, r->base_peak, r->oracle_avg, r->oracle_peak);
	if (ref && mode != TT_MODE_NONE)
		fprintf(f, ",\n     \"step_vs_none_pct\": %.2f, \"fast_avg_vs_none_pct\": %.2f, \"fast_peak_vs_none_pct\": %.2f",
			tt_pct(r->step_ms, ref->step_ms),
			tt_pct(r->fast_avg, ref->fast_avg),
			tt_pct(r->fast_peak, ref->fast_peak));
	fprintf(f, ",\n     \"sampler\": {\"passes\": %zu, \"mean_interval_ms\": %.3f, \"max_pass_ms\": %.3f, \"busy_pct\": %.1f}",
		r->nsamples, r->mean_gap_ms, r->max_pass_ms, r->busy_pct);
	fprintf(f, ",\n     \"vmstat_measured\": {");
	for (i = 0; i < TT_VM_NR; i++)
		fprintf(f, "%s\"%s\": %llu", i ? ", " : "", tt_vm_name[i],
			(unsigned long long)r->vm[i]);
	fprintf(f, "}, \"kernel_migrated_bytes_per_step\": %.0f",
		tt_kernel_migrated(r) / r->measured);
	if (t->cfg.reads) {
		double rd = r->rd_fast + r->rd_slow;

		fprintf(f, ",\n     \"read_fast_bytes_per_step\": %.0f, \"read_slow_bytes_per_step\": %.0f, \"slow_read_pct\": %.3f, \"written_fast_bytes_per_step\": %.0f, \"written_slow_bytes_per_step\": %.0f,\n",
			r->rd_fast, r->rd_slow,
			rd > 0 ? 100.0 * r->rd_slow / rd : 0.0, r->wr_fast,
			r->wr_slow);
		fprintf(f, "     \"fast_free_avg_bytes\": %.0f, \"fast_free_min_bytes\": %.0f,\n",
			r->free_avg, r->free_min);
		fprintf(f, "     \"read_slow_bytes_per_step_by_kind\": {\"scratch\": %.0f, \"model\": %.0f, \"activations\": %.0f},\n",
			r->rd_kind[TT_RD_SCRATCH], r->rd_kind[TT_RD_MODEL],
			r->rd_kind[TT_RD_ACT]);
		fprintf(f, "     \"projected_ms\": {\"cxl\": %.3f, \"optane\": %.3f}, \"projected_guest_ms\": {\"cxl\": %.3f, \"optane\": %.3f}",
			tt_projected(r, 0),
			tt_projected(r, 1),
			r->step_ms + tt_slow_extra(r, 0),
			r->step_ms + tt_slow_extra(r, 1));
	}
	if (r->have_stats) {
		fprintf(f, ",\n     \"ontime_pct\": %.3f", tt_ontime_pct(r));
		if (t->cfg.verify_ontime)
			fprintf(f, ", \"late_bytes_own_check\": %llu, \"ontime_pct_own_check\": %.3f",
				(unsigned long long)r->late_own,
				tt_ontime_own_pct(t, r));
		fprintf(f, ",\n     ");
		tt_json_stats(f, &r->st);
		fprintf(f, ",\n     \"layers\": [");
		for (i = 0; i < (unsigned int)r->nlayers; i++) {
			fprintf(f, "%s\n       ", i ? "," : "");
			tt_json_layer(f, &r->layers[i]);
		}
		fprintf(f, "]");
	}
	fprintf(f, ",\n     \"timeline\": {\"iteration\": %u, \"events_ns\": [",
		r->tl_iter);
	for (l = 0; l < t->cfg.layers; l++) {
		const struct tt_lrec *lr = &r->tl_rec[l];
		uint64_t b = r->tl_irec.begin;

		fprintf(f, "%s\n       {\"layer\": %u, \"fwd_begin\": %llu, \"fwd_end\": %llu, \"bwd_begin\": %llu, \"bwd_end\": %llu}",
			l ? "," : "", l,
			(unsigned long long)(lr->fwd_begin - b),
			(unsigned long long)(lr->fwd_end - b),
			(unsigned long long)(lr->bwd_begin - b),
			(unsigned long long)(lr->bwd_end - b));
	}
	fprintf(f, "],\n      \"samples_ns_fast_slow\": [");
	tt_json_samples(f, r);
	fprintf(f, "]},\n     \"iterations\": [");
	tt_json_iters(f, t, r);
	fprintf(f, "]}");
}

static void tt_write_json(const struct tt_train *t)
{
	const char *path = t->cfg.out;
	struct utsname u;
	unsigned int l;
	int m, n = 0;
	FILE *f;

	tt_mkdirs(path);
	f = fopen(path, "w");
	if (!f)
		tt_die("cannot write %s: %s", path, strerror(errno));
	uname(&u);
	fprintf(f, "{\n  \"bench\": \"train\",\n  \"kernel\": \"%s\",\n  \"library\": \"%s\",\n",
		u.release, tt_version());
	fprintf(f, "  \"config\": {\"layers\": %u, \"sizes_bytes\": [", t->cfg.layers);
	for (l = 0; l < t->cfg.layers; l++)
		fprintf(f, "%s%zu", l ? ", " : "", t->cfg.size[l]);
	fprintf(f, "], \"compute_passes\": %u, \"compute_ms\": %.3f, \"fwd_passes\": [",
		t->cfg.compute, t->cfg.compute_ms);
	for (l = 0; l < t->cfg.layers; l++)
		fprintf(f, "%s%u", l ? ", " : "", t->cfg.fwd_passes[l]);
	fprintf(f, "], \"bwd_passes\": [");
	for (l = 0; l < t->cfg.layers; l++)
		fprintf(f, "%s%u", l ? ", " : "", t->cfg.bwd_passes[l]);
	fprintf(f, "], \"stopped_early\": ");
	tt_json_str(f, t->stopped[0] ? t->stopped : "");
	fprintf(f, ", \"iterations_planned\": %u, \"weights_bytes\": %zu, \"iterations\": %u, ",
		t->iters_planned ? t->iters_planned : t->cfg.iters,
		t->cfg.weights_bytes, t->cfg.iters);
	fprintf(f, "\"profile_iters\": %u, \"sample_ms\": %.3f, \"thp\": %s, \"alloc\": \"%s\", \"verify_ontime\": %s, \"session_default_flags\": %s, \"reference\": %s, \"sync_late\": %s, \"anchor\": %s, \"alap\": %s, \"defer_late\": %s, \"merge\": %s, \"count\": %s, \"dynamic\": %s, \"min_depth\": %u, \"tensors_per_layer\": %u, \"budget_mib\": %u, \"model_bytes\": %zu, \"schedule\": \"%s\", \"numa_balancing_found\": \"%s\", \"demotion_enabled_found\": \"%s\"},\n",
		t->cfg.profile_iters, t->cfg.sample_ns / 1e6,
		t->cfg.thp ? "true" : "false", tt_alloc_name[t->cfg.alloc],
		t->cfg.verify_ontime ? "true" : "false",
		tt_flags_given(&t->cfg) ? "false" : "true",
		t->cfg.reference ? "true" : "false",
		t->cfg.sync_late ? "true" : "false",
		t->cfg.anchor ? "true" : "false",
		t->cfg.alap ? "true" : "false",
		t->cfg.defer_late ? "true" : "false",
		t->cfg.merge ? "true" : "false",
		t->cfg.count ? "true" : "false",
		t->cfg.dynamic ? "true" : "false", t->cfg.min_depth,
		t->cfg.pieces, t->cfg.budget_mib,
		t->cfg.model_bytes ? t->model_len * t->cfg.layers : 0,
		t->cfg.sequential ? "sequential" : "interleaved",
		t->knob_nb, t->knob_dem);
	fprintf(f, "  \"goals\": {\"fast_avg_vs_none_pct\": %.0f, \"fast_peak_vs_none_pct\": %.0f, \"ontime_pct\": %.0f, \"step_vs_none_pct\": %.0f, \"step_vs_floor_points\": %.0f},\n",
		TT_GOAL_AVG_PCT, TT_GOAL_PEAK_PCT, TT_GOAL_ONTIME_PCT,
		TT_GOAL_STEP_PCT, TT_GOAL_FLOOR_PTS);
	fprintf(f, "  \"modes\": [\n");
	for (m = 0; m < TT_MODE_NR; m++) {
		if (!t->res[m].ran)
			continue;
		if (n++)
			fprintf(f, ",\n");
		tt_json_mode(f, t, m);
	}
	fprintf(f, "\n  ]\n}\n");
	if (fclose(f))
		tt_die("writing %s: %s", path, strerror(errno));
}

/* ---- options ------------------------------------------------------------ */

static void tt_usage(FILE *f)
{
	fprintf(f,
		"Usage: train [OPTION]...\n"
		"A synthetic DNN training loop; measures the fast-tier footprint of its saved\n"
		"activations, the step time and the scheduler's punctuality without tiering,\n"
		"with tiertrain's kernel scheduler and with libtiertrain's userspace one.\n"
		"\n"
		"  --mode M[,M]...    none, tiertrain, userspace, budget, copy, unmap, move,\n"
		"                     linux or all (default all: the first three); modes\n"
		"                     take turns, iteration by iteration, in this process\n"
		"                     (one after another with --model-mib);\n"
		"                     linux: no session, Linux's own tiering: demotion\n"
		"                     on (/sys/kernel/mm/numa/demotion_enabled) and\n"
		"                     kernel.numa_balancing 2 while the mode runs, put\n"
		"                     back as found after it (needs root);\n"
		"                     copy: no tiering, a thread copies the bytes the\n"
		"                     tiertrain mode moved between the fast and the\n"
		"                     slow node as they would move (the floor of any\n"
		"                     mover's cost); unmap: copy, and one TLB shootdown\n"
		"                     to the process's other CPUs per 2 MiB copied (the\n"
		"                     floor of moving pages on any exported path);\n"
		"                     move: the same thread moves the same bytes of its\n"
		"                     own 2 MiB-aligned THP buffer with move_pages(2)\n"
		"                     instead (the cost of migrating them, with no\n"
		"                     scheduler)\n"
		"  --budget-mib N     the budget mode: tiertrain with a fast-tier budget\n"
		"                     of N MiB (TT_SCHED_SET_BUDGET); its figures are\n"
		"                     the registered bytes the budget counts, printed\n"
		"                     against the budget and the tiertrain mode\n"
		"  --model-mib N      the model's state (weights, gradients, optimizer\n"
		"                     state), N MiB split among the layers: each\n"
		"                     layer's forward reads its share, its backward\n"
		"                     reads and writes it; the modes then run one after\n"
		"                     another, each with its own, and the table adds\n"
		"                     where the compute read its bytes (residency at\n"
		"                     each layer's begin), what the kernel migrated\n"
		"                     (/proc/vmstat) and the step projected on CXL and\n"
		"                     Optane hardware (bench/README.md)\n"
		"  --layers N         layers, 1..%d (default 12)\n"
		"  --base-mib N       activation of layer 0 in MiB (default 32)\n"
		"  --halve-every N    halve the activation every N layers (default 3)\n"
		"  --sizes LIST       activation sizes, comma separated, in MiB or with a\n"
		"                     K/M/G suffix (sets the number of layers)\n"
		"  --compute N        compute passes per forward and backward (default 6)\n"
		"  --compute-ms MS    instead: each layer's forward and backward compute\n"
		"                     lasts about MS ms (passes calibrated at the start)\n"
		"  --time-limit S     no round of iterations begins that would end more\n"
		"                     than S seconds after the start (default 1500, below\n"
		"                     scripts/vmrun's 1800; 0: none); on it, SIGTERM,\n"
		"                     SIGINT or SIGHUP the table is made from the rounds done"
		"  --weights-kib N    weights per layer, a power of two >= 4 (default 256)\n"
		"  --iters N          iterations per mode, warm-up included (default 8)\n"
		"  --profile-iters N  scheduler profile iterations, 1..1000 (default 1);\n"
		"                     the first N + 1 iterations are not measured\n"
		"  --sample-ms MS     sampler period (default 10)\n"
		"  --thp              activations in fresh MADV_HUGEPAGE mappings (default:\n"
		"                     posix_memalign(3), as PyTorch's CPU allocator)\n"
		"  --base-pages       activations in fresh mappings of base pages\n"
		"  --movers N         the tiertrain session's mover threads (TIERTRAIN_MOVER;\n"
		"                     default: libtiertrain's, one; 0: none, the engine\n"
		"                     splits huge pages)\n"
		"  --verify-ontime    check residency at each backward begin (time excluded)\n"
		"  --reference        the paper's semantics, no extension (TT_SCHED_REFERENCE);\n"
		"                     without any flag option the sessions keep their\n"
		"                     default flag set (TT_SCHED_DEFAULT_FLAGS); with\n"
		"                     one, they get exactly the flags given\n"
		"  --sync-late        fetch late bytes at backward begin (TT_SCHED_SYNC_LATE)\n"
		"  --anchor           prefetch triggers follow the iteration's drift from\n"
		"                     the profile (TT_SCHED_ANCHOR, an extension)\n"
		"  --alap             plan prefetches as late as possible (TT_SCHED_ALAP,\n"
		"                     an extension)\n"
		"  --merge            join touching tensors into one migration batch\n"
		"                     (TT_SCHED_MERGE, an extension)\n"
		"  --count            a backward begin also releases the next k layers'\n"
		"                     prefetches (TT_SCHED_COUNT, an extension)\n"
		"  --dynamic          one profile per layer sequence, the layer-count\n"
		"                     fallback otherwise (TT_SCHED_DYNAMIC, an extension)\n"
		"  --random-depth MIN each iteration runs the first D layers, D drawn\n"
		"                     from MIN..LAYERS (the same D in every mode)\n"
		"  --tensors-per-layer N  report each activation as N contiguous tensors,\n"
		"                     1..4096 (default 1)\n"
		"  --defer-late       late bytes stay slow while the backward pass reads\n"
		"                     them (TT_SCHED_DEFER_LATE, an extension); these\n"
		"                     flags apply to tiertrain and userspace alike\n"
		"  --rows N           rows of the ASCII timeline (default 40)\n"
		"  --no-timeline      print only the table\n"
		"  -o FILE            JSON output (default <repo>/build/bench/train.json)\n"
		"  -h, --help         this help\n"
		"\n"
		"Exit status: 0 done, 1 error (or the tiertrain mode could not run),\n"
		"2 a saved activation came back with different contents.\n",
		TT_TRAIN_MAX_LAYERS);
}

static unsigned long long tt_num(const char *opt, const char *s,
				 unsigned long long lo, unsigned long long hi)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi)
		tt_die("%s '%s': want an integer in %llu..%llu", opt, s, lo, hi);
	return v;
}

/* "32", "1.5M", "512K", "1G": bytes rounded up to a page. */
static size_t tt_size(const char *s, size_t len)
{
	size_t ps = tt_page_size();
	char buf[64], *end;
	double v, unit = TT_MIB;

	if (len >= sizeof(buf))
		tt_die("--sizes: '%.*s' is too long for a size", (int)len, s);
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	v = strtod(buf, &end);
	if (end == buf || errno)
		tt_die("--sizes: '%s' is not a size", buf);
	switch (*end) {
	case 'k': case 'K':
		unit = 1024.0;
		end++;
		break;
	case 'm': case 'M':
		end++;
		break;
	case 'g': case 'G':
		unit = 1024.0 * TT_MIB;
		end++;
		break;
	}
	if (*end)
		tt_die("--sizes: '%s' has trailing '%s' (want MiB or a K/M/G suffix)",
		       buf, end);
	v *= unit;
	if (!(v >= ps) || v > 64.0 * 1024 * TT_MIB)
		tt_die("--sizes: '%s' is outside %zu bytes..64 GiB", buf, ps);
	return ((size_t)v + ps - 1) / ps * ps;
}

static unsigned int tt_parse_sizes(struct tt_cfg *c, const char *list)
{
	const char *p = list;
	unsigned int n = 0;

	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		if (n == TT_TRAIN_MAX_LAYERS)
			tt_die("--sizes: more than %d layers", TT_TRAIN_MAX_LAYERS);
		c->size[n++] = tt_size(p, len);
		p += len;
		if (*p == ',' && !*++p)
			tt_die("--sizes '%s': trailing comma", list);
	}
	if (!n)
		tt_die("--sizes: empty list");
	return n;
}

/* tt_st_map()'s @thp argument that gives activations the pages asked for. */
static int tt_thp_mode(int thp)
{
	const char *path = "/sys/kernel/mm/transparent_hugepage/enabled";
	char buf[128];
	int ret;

	ret = tt_st_read_file(path, buf, sizeof(buf));
	if (ret < 0) {
		if (thp)
			tt_die("--thp: cannot read %s: %s", path, strerror(-ret));
		return 0;
	}
	if (thp && strstr(buf, "[never]"))
		tt_die("--thp: transparent huge pages are disabled (%s: %s)",
		       path, buf);
	if (thp)
		return 1;
	return strstr(buf, "[always]") ? -1 : 0;
}

/*
 * "none,tiertrain", "all"...: add the modes listed to @c->run ("all": every
 * mode but budget, which needs --budget-mib). Return: whether "all" was
 * listed.
 */
static int tt_parse_modes(struct tt_cfg *c, const char *list)
{
	const char *p = list;
	int m, all = 0;

	while (*p) {
		size_t len = strcspn(p, ",");
		int found = 0;

		if (len == 3 && !strncmp(p, "all", 3))
			all = 1;
		for (m = 0; m < TT_MODE_NR; m++) {
			if ((len == 3 && !strncmp(p, "all", 3) &&
			     m != TT_MODE_BUDGET && m != TT_MODE_LINUX &&
			     !tt_copying(m)) ||
			    (len == strlen(tt_mode_name[m]) &&
			     !strncmp(p, tt_mode_name[m], len))) {
				c->run[m] = 1;
				found = 1;
			}
		}
		if (!found)
			tt_die("--mode '%s': '%.*s' is not none, tiertrain, userspace, budget, copy, unmap, move, linux or all",
			       list, (int)len, p);
		p += len;
		if (*p == ',')
			p++;
	}
	for (m = 0; m < TT_MODE_NR && !c->run[m]; m++)
		;
	if (m == TT_MODE_NR)
		tt_die("--mode '%s': no mode", list);
	return all;
}

/* <repo>/build/bench/train.json, the repository being two levels above us. */
static void tt_default_out(struct tt_cfg *c)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;
	int i;

	snprintf(c->out, sizeof(c->out), "build/bench/train.json");
	if (n <= 0)
		return;
	exe[n] = '\0';
	for (i = 0; i < 2; i++) {
		slash = strrchr(exe, '/');
		if (!slash)
			return;
		*slash = '\0';
	}
	if (snprintf(c->out, sizeof(c->out), "%s/build/bench/train.json",
		     exe) >= (int)sizeof(c->out))
		tt_die("the default output path under %s is too long; use -o",
		       exe);
}

static void tt_parse(struct tt_cfg *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "layers", required_argument, NULL, 'L' },
		{ "base-mib", required_argument, NULL, 'B' },
		{ "halve-every", required_argument, NULL, 'H' },
		{ "sizes", required_argument, NULL, 'S' },
		{ "compute", required_argument, NULL, 'c' },
		{ "compute-ms", required_argument, NULL, 'X' },
		{ "time-limit", required_argument, NULL, 'I' },
		{ "weights-kib", required_argument, NULL, 'W' },
		{ "iters", required_argument, NULL, 'i' },
		{ "profile-iters", required_argument, NULL, 'P' },
		{ "sample-ms", required_argument, NULL, 's' },
		{ "thp", no_argument, NULL, 'T' },
		{ "base-pages", no_argument, NULL, 'b' },
		{ "movers", required_argument, NULL, 'v' },
		{ "verify-ontime", no_argument, NULL, 'V' },
		{ "sync-late", no_argument, NULL, 'Y' },
		{ "reference", no_argument, NULL, 'F' },
		{ "anchor", no_argument, NULL, 'A' },
		{ "alap", no_argument, NULL, 'Q' },
		{ "defer-late", no_argument, NULL, 'D' },
		{ "merge", no_argument, NULL, 'G' },
		{ "count", no_argument, NULL, 'C' },
		{ "dynamic", no_argument, NULL, 'Z' },
		{ "random-depth", required_argument, NULL, 'E' },
		{ "tensors-per-layer", required_argument, NULL, 'K' },
		{ "budget-mib", required_argument, NULL, 'U' },
		{ "model-mib", required_argument, NULL, '1' },
		{ "rows", required_argument, NULL, 'R' },
		{ "no-timeline", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sizes = NULL, *layers_arg = NULL;
	unsigned int base_mib = 32, halve = 3, l;
	int opt, m, mode_given = 0, all = 1;
	double ms;
	char *end;

	c->layers = 12;
	c->compute = 6;
	c->time_limit_s = 1500;
	c->weights_bytes = 256 * 1024;
	c->iters = 8;
	c->profile_iters = 1;
	c->sample_ns = 10000000;
	c->pieces = 1;
	c->rows = 40;
	c->timeline = 1;
	for (m = 0; m < TT_MODE_NR; m++)
		c->run[m] = m != TT_MODE_BUDGET && !tt_copying(m);
	tt_default_out(c);

	while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'm':
			if (!mode_given)
				memset(c->run, 0, sizeof(c->run));
			mode_given = 1;
			all = tt_parse_modes(c, optarg);
			break;
		case 'L':
			layers_arg = optarg;
			c->layers = tt_num("--layers", optarg, 1,
					   TT_TRAIN_MAX_LAYERS);
			break;
		case 'B':
			base_mib = tt_num("--base-mib", optarg, 1, 65536);
			break;
		case 'H':
			halve = tt_num("--halve-every", optarg, 1,
				       TT_TRAIN_MAX_LAYERS);
			break;
		case 'S':
			sizes = optarg;
			break;
		case 'c':
			c->compute = tt_num("--compute", optarg, 1, 1000);
			break;
		case 'X':
			c->compute_ms = strtod(optarg, &end);
			if (end == optarg || *end || !(c->compute_ms > 0) ||
			    c->compute_ms > 60000)
				tt_die("--compute-ms '%s': want 0 < MS <= 60000",
				       optarg);
			break;
		case 'I':
			c->time_limit_s = strtod(optarg, &end);
			if (end == optarg || *end || !(c->time_limit_s >= 0) ||
			    c->time_limit_s > 1e7)
				tt_die("--time-limit '%s': want seconds, 0 for none",
				       optarg);
			break;
		case 'W':
			c->weights_bytes = tt_num("--weights-kib", optarg, 4,
						  1 << 20) * 1024;
			if (c->weights_bytes & (c->weights_bytes - 1))
				tt_die("--weights-kib '%s': want a power of two",
				       optarg);
			break;
		case 'i':
			c->iters = tt_num("--iters", optarg, 1, 100000);
			break;
		case 'P':
			c->profile_iters = tt_num("--profile-iters", optarg, 1,
						  1000);
			break;
		case 's':
			errno = 0;
			ms = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(ms >= 0.1) ||
			    ms > 10000)
				tt_die("--sample-ms '%s': want 0.1..10000 ms",
				       optarg);
			c->sample_ns = (uint64_t)(ms * 1e6);
			break;
		case 'T':
			if (c->alloc == TT_ALLOC_BASE)
				tt_die("--thp and --base-pages: pick one");
			c->alloc = TT_ALLOC_THP;
			c->thp = 1;
			break;
		case 'b':
			if (c->alloc == TT_ALLOC_THP)
				tt_die("--thp and --base-pages: pick one");
			c->alloc = TT_ALLOC_BASE;
			break;
		case 'v':	/* tt_open() starts them (TIERTRAIN_MOVER) */
			if (strspn(optarg, "0123456789") != strlen(optarg) ||
			    !*optarg || atoi(optarg) > 64)
				tt_die("--movers '%s': want 0..64 mover threads",
				       optarg);
			setenv("TIERTRAIN_MOVER", optarg, 1);
			break;
		case 'V':
			c->verify_ontime = 1;
			break;
		case 'Y':
			c->sync_late = 1;
			break;
		case 'F':
			c->reference = 1;
			break;
		case 'A':
			c->anchor = 1;
			break;
		case 'Q':
			c->alap = 1;
			break;
		case 'D':
			c->defer_late = 1;
			break;
		case 'G':
			c->merge = 1;
			break;
		case 'C':
			c->count = 1;
			break;
		case 'Z':
			c->dynamic = 1;
			break;
		case 'U':
			c->budget_mib = tt_num("--budget-mib", optarg, 1, 1048576);
			break;
		case '1':
			c->model_bytes = (size_t)tt_num("--model-mib", optarg, 1,
							65536) << 20;
			break;
		case 'E':
			c->min_depth = tt_num("--random-depth", optarg, 1,
					      TT_TRAIN_MAX_LAYERS);
			break;
		case 'K':
			c->pieces = tt_num("--tensors-per-layer", optarg, 1, 4096);
			break;
		case 'R':
			c->rows = tt_num("--rows", optarg, 4, 10000);
			break;
		case 'N':
			c->timeline = 0;
			break;
		case 'o':
			if (snprintf(c->out, sizeof(c->out), "%s", optarg) >=
			    (int)sizeof(c->out))
				tt_die("-o '%s': path too long", optarg);
			break;
		case 'h':
			tt_usage(stdout);
			exit(0);
		default:
			tt_usage(stderr);
			exit(1);
		}
	}
	if (optind != argc)
		tt_die("unexpected argument '%s' (see --help)", argv[optind]);
	if (c->budget_mib && all)
		c->run[TT_MODE_BUDGET] = 1;
	if (c->run[TT_MODE_BUDGET] && !c->budget_mib)
		tt_die("--mode budget needs --budget-mib N (the budget in MiB)");
	if (sizes) {
		unsigned int n = tt_parse_sizes(c, sizes);

		if (layers_arg && n != c->layers)
			tt_die("--layers %u but --sizes '%s' lists %u sizes",
			       c->layers, sizes, n);
		c->layers = n;
	} else {
		for (l = 0; l < c->layers; l++) {
			unsigned int shift = l / halve;
			size_t sz = shift >= 30 ? 0 :
				    ((size_t)base_mib << 20) >> shift;

			if (sz < tt_page_size())
				sz = tt_page_size();
			c->size[l] = sz / tt_page_size() * tt_page_size();
		}
	}
	if (c->iters < c->profile_iters + 2)
		tt_die("--iters %u: with --profile-iters %u the first %u iterations are warm-up; want at least %u",
		       c->iters, c->profile_iters, c->profile_iters + 1,
		       c->profile_iters + 2);
	if (c->model_bytes) {
		c->sequential = 1;
		c->reads = 1;
		if (c->model_bytes / c->layers < tt_page_size())
			tt_die("--model-mib %zu: less than a page for each of the %u layers",
			       c->model_bytes >> 20, c->layers);
	}
	c->map_thp = tt_thp_mode(c->thp);
	if (c->thp)
		for (l = 0; l < c->layers; l++)
			c->size[l] = (c->size[l] + TT_ST_THP_SIZE - 1) /
				     TT_ST_THP_SIZE * TT_ST_THP_SIZE;
}

int main(int argc, char **argv)
{
	static struct tt_train t;
	size_t maxlen = 0, j;
	unsigned int l;
	int m, failed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	t.t_start = tt_now();
	tt_parse(&t.cfg, argc, argv);
	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = tt_on_signal;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
	}
	tt_topology(&t);
	pthread_mutex_init(&t.lock, NULL);

	/* the observer: the kernel's residency when it is there */
	t.obs = tt_open();
	if (!t.obs)
		tt_die("tt_open() for the residency observer: %s",
		       strerror(errno));

	for (l = 0; l < t.cfg.layers; l++)
		if (t.cfg.size[l] > maxlen)
			maxlen = t.cfg.size[l];
	t.x = tt_st_map(maxlen, -1);
	t.g = tt_st_map(maxlen, -1);
	if (!t.x || !t.g)
		tt_die("mmap of two %zu-byte scratch buffers: %s", maxlen,
		       strerror(errno));
	for (l = 0; l < t.cfg.layers; l++) {
		t.w[l] = tt_st_map(t.cfg.weights_bytes, -1);
		if (!t.w[l])
			tt_die("mmap of layer %u's weights: %s", l,
			       strerror(errno));
		for (j = 0; j < t.cfg.weights_bytes / sizeof(uint64_t); j++)
			t.w[l][j] = (j + 1) * TT_MUL ^ l;
	}
	if (t.cfg.model_bytes) {
		size_t ps = tt_page_size();

		t.model_len = t.cfg.model_bytes / t.cfg.layers / ps * ps;
		if (t.cfg.thp)
			t.model_len = (t.model_len + TT_ST_THP_SIZE - 1) /
				      TT_ST_THP_SIZE * TT_ST_THP_SIZE;
	}
	tt_calibrate(&t, maxlen);
	tt_run_modes(&t, maxlen);

	tt_print_table(&t);
	tt_print_goals(&t);
	if (t.cfg.reads)
		tt_print_reads(&t);
	for (m = TT_MODE_TIERTRAIN; m < TT_MODE_NR && t.cfg.timeline; m++) {
		if (!t.res[m].ok || tt_copying(m))
			continue;
		tt_print_timeline(&t, m);
		tt_print_moves(&t, m);
	}
	tt_write_json(&t);
	printf("\nJSON: %s\n", t.cfg.out);
	for (m = 0; m < TT_MODE_NR; m++) {
		if (t.res[m].ran && !t.res[m].ok && t.res[m].fatal) {
			fprintf(stderr, "train: mode %s failed: %s\n",
				tt_mode_name[m], t.res[m].reason);
			failed = 1;
		}
	}
	tt_close(t.obs);
	return failed;
}
