// SPDX-License-Identifier: GPL-2.0
/*
 * The module's settings in one place.
 *
 * tt_cfg_descs[] is the single table: each setting's key, default, range,
 * unit, when it applies and its description, what netlink reports and
 * checks against. Each key is also a module parameter of the same name
 * (modprobe arguments and /sys/module/tiertrain/parameters/), whose set
 * operation finds its entry by its address. Both ways of setting a value go
 * through tt_config_check() and tt_config_apply(), under
 * kernel_param_lock(THIS_MODULE): the parameter core takes it around a
 * parameter's set operation, the netlink path takes it itself, so a pool
 * size is never changed by two writers at once and a multi-key netlink
 * request is applied as a whole.
 *
 * The other subsystems read values with tt_config_get() (a READ_ONCE of an
 * u32). A setting with a side effect (a worker pool's size, the budget) has
 * a change hook that the subsystem owning it registers at its init with
 * tt_config_hook() and removes at its exit with tt_config_unhook(): this
 * file calls nothing but the hooks so registered (calls point down:
 * scripts/calls-check).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include "compat.h"
#include "config.h"
#include "exec.h"

/*
 * Defaults and descriptions, each written once: the descriptions are also
 * the module parameters' (MODULE_PARM_DESC() needs a string literal).
 */
/* The flag parameters' defaults: TT_SCHED_DEFAULT_FLAGS, the one definition. */
#define TT_SCHED_DEFAULT_BIT(bit)	((TT_SCHED_DEFAULT_FLAGS & (bit)) ? 1 : 0)
#define TT_WORKERS_DEF	2
#define TT_WORKERS_DESC \
	"Migration worker pool size, 1..64 (default 2); a synchronous migration of several batches is split over this many workers"
#define TT_BATCH_PAGES_DEF 512
#define TT_BATCH_PAGES_DESC \
	"Pages per migrate_vma batch at most, 1..65536 (default 512); a synchronous migration split over several workers uses smaller ones when the range is only a few batches long"
#define TT_MAX_RANGES_DEF 65536
#define TT_MAX_RANGES_DESC \
	"Registrations (and saved tensors) a session may hold, 1..1048576 (default 65536)"
#define TT_MAX_LAYERS_DEF 4096
#define TT_MAX_LAYERS_DESC \
	"Distinct layer ids a session may report, 1..1048576 (default 4096)"
#define TT_PROFILE_ITERS_DEF 1
#define TT_PROFILE_ITERS_DESC \
	"Iterations a new session only profiles before planning, 1..1000 (default 1)"
#define TT_STAY_TIME_US_DEF 1000
#define TT_STAY_TIME_US_DESC \
	"Stay time ST of new sessions in microseconds, 0..60000000 (default 1000)"
#define TT_ER_SEED_MBPS_DEF 1024
#define TT_ER_SEED_MBPS_DESC \
	"Eviction rate new sessions start from, MiB/s, 1..1048576 (default 1024)"
#define TT_PR_SEED_MBPS_DEF 1024
#define TT_PR_SEED_MBPS_DESC \
	"Prefetch rate new sessions start from, MiB/s, 1..1048576 (default 1024)"
#define TT_EVICT_WORKERS_DEF 1
#define TT_EVICT_WORKERS_DESC \
	"Scheduler eviction worker pool size, 1..64 (default 1)"
#define TT_PREFETCH_WORKERS_DEF 1
#define TT_PREFETCH_WORKERS_DESC \
	"Scheduler prefetch worker pool size, 1..64 (default 1)"
#define TT_SYNC_LATE_DEF TT_SCHED_DEFAULT_BIT(TT_SCHED_SYNC_LATE)
#define TT_SYNC_LATE_DESC \
	"1: new sessions fetch late bytes in the backward begin itself (TT_SCHED_SYNC_LATE), 0..1 (default: its bit of TT_SCHED_DEFAULT_FLAGS)"
#define TT_BW_CAP_MBPS_DEF 0
#define TT_BW_CAP_MBPS_DESC \
	"Bandwidth cap of all migrations together, MiB/s, 0..1048576; 0 means off (default 0)"
#define TT_MIN_MIGRATE_KIB_DEF 0
#define TT_MIN_MIGRATE_KIB_DESC \
	"Planned evictions smaller than this are not made (the layer is dropped), KiB, 0..1048576; 0 means off (default 0)"
#define TT_ANCHOR_DEF TT_SCHED_DEFAULT_BIT(TT_SCHED_ANCHOR)
#define TT_ANCHOR_DESC \
	"1: new sessions start with TT_SCHED_ANCHOR (prefetch triggers follow the iteration's drift from the profile), 0..1 (default: its bit of TT_SCHED_DEFAULT_FLAGS)"
#define TT_ALAP_DEF TT_SCHED_DEFAULT_BIT(TT_SCHED_ALAP)
#define TT_ALAP_DESC \
	"1: new sessions start with TT_SCHED_ALAP (prefetch queue planned as late as possible), 0..1 (default: its bit of TT_SCHED_DEFAULT_FLAGS)"
#define TT_DEFER_LATE_DEF TT_SCHED_DEFAULT_BIT(TT_SCHED_DEFER_LATE)
#define TT_DEFER_LATE_DESC \
	"1: new sessions start with TT_SCHED_DEFER_LATE (late bytes read from the slow node, back after the backward pass), 0..1 (default: its bit of TT_SCHED_DEFAULT_FLAGS)"
#define TT_MERGE_DEF TT_SCHED_DEFAULT_BIT(TT_SCHED_MERGE)
#define TT_MERGE_DESC \
	"1: new sessions start with TT_SCHED_MERGE (touching tensors of a layer move in joined batches), 0..1 (default: its bit of TT_SCHED_DEFAULT_FLAGS)"
#define TT_COUNT_DEF TT_SCHED_DEFAULT_BIT(TT_SCHED_COUNT)
#define TT_COUNT_DESC \
	"1: new sessions start with TT_SCHED_COUNT (a prefetch also fires when the backward pass is k layers before its own), 0..1 (default: its bit of TT_SCHED_DEFAULT_FLAGS)"
#define TT_DYNAMIC_DEF TT_SCHED_DEFAULT_BIT(TT_SCHED_DYNAMIC)
#define TT_DYNAMIC_DESC \
	"1: new sessions start with TT_SCHED_DYNAMIC (one profile per layer-sequence signature, the layer-count fallback otherwise), 0..1 (default: its bit of TT_SCHED_DEFAULT_FLAGS)"
#define TT_BUDGET_MIB_DEF 0
#define TT_BUDGET_MIB_DESC \
	"Fast-tier budget of all sessions' registered bytes together, MiB, shared max-min fairly among the sessions, 0..1048576; 0 means off (default 0)"
#define TT_MOVER_TIMEOUT_MS_DEF 1000
#define TT_MOVER_TIMEOUT_MS_DESC \
	"How long a migration order given to a session's mover thread may take per huge page it holds before it goes back to the in-kernel engine, ms, 0..600000; 0 means no orders (the engine moves everything, huge pages split) (default 1000)"
#define TT_MOVER_BASE_DEF TT_MOVER_BASE_DEFAULT
#define TT_MOVER_BASE_DESC \
	"How base pages move when every mover of the session takes base-page orders, 0..2: 0 the in-kernel engine (a TLB flush per page), 1 move_pages(2) by the movers (batched flushes on Linux 6.3+), 2 the same after collapsing whole 2 MiB blocks into huge pages (default 1 on Linux 6.3+, 0 before; Documentation/mover.md)"
#define TT_EVENT_RING_DEF 4096
#define TT_EVENT_RING_DESC \
	"Trace events each session keeps in its ring, 0..65536; 0 means no ring (default 4096)"

static const struct tt_cfg_desc tt_cfg_descs[TT_CFG_NR] = {
	[TT_CFG_WORKERS] = {
		.name = "workers", .def = TT_WORKERS_DEF, .min = 1, .max = 64,
		.unit = "", .applies = TT_CFG_APPLIES_NOW,
		.desc = TT_WORKERS_DESC,
	},
	[TT_CFG_BATCH_PAGES] = {
		.name = "batch_pages", .def = TT_BATCH_PAGES_DEF, .min = 1, .max = 65536,
		.unit = "pages", .applies = TT_CFG_APPLIES_NOW,
		.desc = TT_BATCH_PAGES_DESC,
	},
	[TT_CFG_MAX_RANGES] = {
		.name = "max_ranges", .def = TT_MAX_RANGES_DEF, .min = 1, .max = 1048576,
		.unit = "", .applies = TT_CFG_APPLIES_NOW,
		.desc = TT_MAX_RANGES_DESC,
	},
	[TT_CFG_MAX_LAYERS] = {
		.name = "max_layers", .def = TT_MAX_LAYERS_DEF, .min = 1, .max = 1048576,
		.unit = "", .applies = TT_CFG_APPLIES_NOW,
		.desc = TT_MAX_LAYERS_DESC,
	},
	[TT_CFG_PROFILE_ITERS] = {
		.name = "profile_iters", .def = TT_PROFILE_ITERS_DEF, .min = 1,
		.max = TT_EXEC_PROFILE_ITERS_MAX,
		.unit = "iterations", .applies = TT_CFG_APPLIES_NEW_SESSIONS,
		.desc = TT_PROFILE_ITERS_DESC,
	},
	[TT_CFG_STAY_TIME_US] = {
		.name = "stay_time_us", .def = TT_STAY_TIME_US_DEF, .min = 0, .max = 60000000,
		.unit = "us", .applies = TT_CFG_APPLIES_NEW_SESSIONS,
		.desc = TT_STAY_TIME_US_DESC,
	},
	[TT_CFG_ER_SEED_MBPS] = {
		.name = "er_seed_mbps", .def = TT_ER_SEED_MBPS_DEF, .min = 1, .max = 1048576,
		.unit = "MiB/s", .applies = TT_CFG_APPLIES_NEW_SESSIONS,
		.desc = TT_ER_SEED_MBPS_DESC,
	},
	[TT_CFG_PR_SEED_MBPS] = {
		.name = "pr_seed_mbps", .def = TT_PR_SEED_MBPS_DEF, .min = 1, .max = 1048576,
		.unit = "MiB/s", .applies = TT_CFG_APPLIES_NEW_SESSIONS,
		.desc = TT_PR_SEED_MBPS_DESC,
	},
	[TT_CFG_EVICT_WORKERS] = {
		.name = "evict_workers", .def = TT_EVICT_WORKERS_DEF, .min = 1, .max = 64,
		.unit = "", .applies = TT_CFG_APPLIES_NOW,
		.desc = TT_EVICT_WORKERS_DESC,
	},
	[TT_CFG_PREFETCH_WORKERS] = {
		.name = "prefetch_workers", .def = TT_PREFETCH_WORKERS_DEF, .min = 1, .max = 64,
		.unit = "", .applies = TT_CFG_APPLIES_NOW,
		.desc = TT_PREFETCH_WORKERS_DESC,
	},
	[TT_CFG_SYNC_LATE] = {
		.name = "sync_late", .def = TT_SYNC_LATE_DEF, .min = 0, .max = 1,
		.unit = "", .applies = TT_CFG_APPLIES_NEW_SESSIONS,
		.desc = TT_SYNC_LATE_DESC,
	},
	[TT_CFG_BW_CAP_MBPS] = {
		.name = "bw_cap_mbps", .def = TT_BW_CAP_MBPS_DEF, .min = 0, .max = 1048576,
		.unit = "MiB/s", .applies = TT_CFG_APPLIES_NOW,
		.desc = TT_BW_CAP_MBPS_DESC,
	},
	[TT_CFG_MIN_MIGRATE_KIB] = {
		.name = "min_migrate_kib", .def = TT_MIN_MIGRATE_KIB_DEF, .min = 0, .max = 1048576,
		.unit = "KiB", .applies = TT_CFG_APPLIES_NEXT_ITER,
		.desc = TT_MIN_MIGRATE_KIB_DESC,
	},
	[TT_CFG_EVENT_RING] = {
		.name = "event_ring", .def = TT_EVENT_RING_DEF, .min = 0, .max = 65536,
		.unit = "events", .applies = TT_CFG_APPLIES_NEW_RINGS,
		.desc = TT_EVENT_RING_DESC,
	},
	[TT_CFG_ANCHOR] = {
		.name = "anchor", .def = TT_ANCHOR_DEF, .min = 0, .max = 1,
		.unit = "", .applies = TT_CFG_APPLIES_NEW_SESSIONS,
		.desc = TT_ANCHOR_DESC,
	},
	[TT_CFG_ALAP] = {
		.name = "alap", .def = TT_ALAP_DEF, .min = 0, .max = 1,
		.unit = "", .applies = TT_CFG_APPLIES_NEW_SESSIONS,
		.desc = TT_ALAP_DESC,
	},
	[TT_CFG_DEFER_LATE] = {
		.name = "defer_late", .def = TT_DEFER_LATE_DEF, .min = 0, .max = 1,
		.unit = "", .applies = TT_CFG_APPLIES_NEW_SESSIONS,
		.desc = TT_DEFER_LATE_DESC,
	},
	[TT_CFG_MERGE] = {
		.name = "merge", .def = TT_MERGE_DEF, .min = 0, .max = 1,
		.unit = "", .applies = TT_CFG_APPLIES_NEW_SESSIONS,
		.desc = TT_MERGE_DESC,
	},
	[TT_CFG_COUNT] = {
		.name = "count", .def = TT_COUNT_DEF, .min = 0, .max = 1,
		.unit = "", .applies = TT_CFG_APPLIES_NEW_SESSIONS,
		.desc = TT_COUNT_DESC,
	},
	[TT_CFG_MOVER_TIMEOUT_MS] = {
		.name = "mover_timeout_ms", .def = TT_MOVER_TIMEOUT_MS_DEF, .min = 0, .max = 600000,
		.unit = "ms", .applies = TT_CFG_APPLIES_NOW,
		.desc = TT_MOVER_TIMEOUT_MS_DESC,
	},
	[TT_CFG_DYNAMIC] = {
		.name = "dynamic", .def = TT_DYNAMIC_DEF, .min = 0, .max = 1,
		.unit = "", .applies = TT_CFG_APPLIES_NEW_SESSIONS,
		.desc = TT_DYNAMIC_DESC,
	},
	[TT_CFG_BUDGET_MIB] = {
		.name = "budget_mib", .def = TT_BUDGET_MIB_DEF, .min = 0, .max = 1048576,
		.unit = "MiB", .applies = TT_CFG_APPLIES_NOW,
		.desc = TT_BUDGET_MIB_DESC,
	},
	[TT_CFG_MOVER_BASE] = {
		.name = "mover_base", .def = TT_MOVER_BASE_DEF, .min = 0, .max = 2,
		.unit = "", .applies = TT_CFG_APPLIES_NOW,
		.desc = TT_MOVER_BASE_DESC,
	},
};

/* The values; written under kernel_param_lock(THIS_MODULE) only. */
static u32 tt_cfg_values[TT_CFG_NR] = {
	[TT_CFG_WORKERS] = TT_WORKERS_DEF,
	[TT_CFG_BATCH_PAGES] = TT_BATCH_PAGES_DEF,
	[TT_CFG_MAX_RANGES] = TT_MAX_RANGES_DEF,
	[TT_CFG_MAX_LAYERS] = TT_MAX_LAYERS_DEF,
	[TT_CFG_PROFILE_ITERS] = TT_PROFILE_ITERS_DEF,
	[TT_CFG_STAY_TIME_US] = TT_STAY_TIME_US_DEF,
	[TT_CFG_ER_SEED_MBPS] = TT_ER_SEED_MBPS_DEF,
	[TT_CFG_PR_SEED_MBPS] = TT_PR_SEED_MBPS_DEF,
	[TT_CFG_EVICT_WORKERS] = TT_EVICT_WORKERS_DEF,
	[TT_CFG_PREFETCH_WORKERS] = TT_PREFETCH_WORKERS_DEF,
	[TT_CFG_SYNC_LATE] = TT_SYNC_LATE_DEF,
	[TT_CFG_BW_CAP_MBPS] = TT_BW_CAP_MBPS_DEF,
	[TT_CFG_MIN_MIGRATE_KIB] = TT_MIN_MIGRATE_KIB_DEF,
	[TT_CFG_EVENT_RING] = TT_EVENT_RING_DEF,
	[TT_CFG_ANCHOR] = TT_ANCHOR_DEF,
	[TT_CFG_ALAP] = TT_ALAP_DEF,
	[TT_CFG_DEFER_LATE] = TT_DEFER_LATE_DEF,
	[TT_CFG_MERGE] = TT_MERGE_DEF,
	[TT_CFG_COUNT] = TT_COUNT_DEF,
	[TT_CFG_MOVER_TIMEOUT_MS] = TT_MOVER_TIMEOUT_MS_DEF,
	[TT_CFG_DYNAMIC] = TT_DYNAMIC_DEF,
	[TT_CFG_BUDGET_MIB] = TT_BUDGET_MIB_DEF,
	[TT_CFG_MOVER_BASE] = TT_MOVER_BASE_DEF,
};

/**
 * tt_config_get() - the current value of a setting
 * @key: the setting.
 *
 * Return: its value.
 */
u32 tt_config_get(enum tt_cfg_key key)
{
	return READ_ONCE(tt_cfg_values[key]);
}

/**
 * tt_config_desc() - the table entry of a setting
 * @key: the setting.
 *
 * Return: its key, default, range, unit and description.
 */
const struct tt_cfg_desc *tt_config_desc(enum tt_cfg_key key)
{
	return &tt_cfg_descs[key];
}

/**
 * tt_config_find() - look a setting up by its key
 * @name: the key, e.g. "stay_time_us".
 *
 * Return: the enum tt_cfg_key, or -ENOENT.
 */
int tt_config_find(const char *name)
{
	int k;

	for (k = 0; k < TT_CFG_NR; k++)
		if (!strcmp(tt_cfg_descs[k].name, name))
			return k;
	return -ENOENT;
}

/**
 * tt_config_check() - is @value in the range of @key?
 * @key:   the setting.
 * @value: the proposed value.
 *
 * Return: 0 or -ERANGE.
 */
int tt_config_check(enum tt_cfg_key key, u64 value)
{
	const struct tt_cfg_desc *d = &tt_cfg_descs[key];

	return value < d->min || value > d->max ? -ERANGE : 0;
}

/* The change hooks, kernel_param_lock(THIS_MODULE) held to read or write. */
static tt_cfg_hook_fn tt_cfg_hooks[TT_CFG_NR];

/**
 * tt_config_hook() - have @fn called whenever @key changes
 * @key: the setting; it has no hook yet (one owner per setting).
 * @fn:  called with kernel_param_lock(THIS_MODULE) held after every new
 *       value of @key (by a module parameter write or TT_CMD_SET_CONFIG),
 *       and once now, so that a value set before the call (between the
 *       owner's reading of it and this call) takes effect too.
 *
 * Takes kernel_param_lock(THIS_MODULE): the caller must not hold it.
 */
void tt_config_hook(enum tt_cfg_key key, tt_cfg_hook_fn fn)
{
	kernel_param_lock(THIS_MODULE);
	if (!WARN_ON_ONCE(tt_cfg_hooks[key])) {
		tt_cfg_hooks[key] = fn;
		fn();
	}
	kernel_param_unlock(THIS_MODULE);
}

/**
 * tt_config_unhook() - no more calls of @fn for @key
 * @key: the setting.
 * @fn:  its hook, registered with tt_config_hook().
 *
 * @fn is not running and is never called again when this returns (it
 * takes kernel_param_lock(THIS_MODULE), which the calls hold): the caller
 * must not hold it.
 */
void tt_config_unhook(enum tt_cfg_key key, tt_cfg_hook_fn fn)
{
	kernel_param_lock(THIS_MODULE);
	if (tt_cfg_hooks[key] == fn)
		tt_cfg_hooks[key] = NULL;
	kernel_param_unlock(THIS_MODULE);
}

/* Side effects of a new value; kernel_param_lock(THIS_MODULE) held. */
static void tt_config_effect(enum tt_cfg_key key)
{
	if (tt_cfg_hooks[key])
		tt_cfg_hooks[key]();
}

static void tt_config_store(const struct tt_cfg_change *c, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		WRITE_ONCE(tt_cfg_values[c[i].key], c[i].value);
	for (i = 0; i < n; i++)
		tt_config_effect(c[i].key);
}

/**
 * tt_config_apply() - set checked values, all together
 * @c: the changes, each checked with tt_config_check().
 * @n: how many.
 *
 * Takes kernel_param_lock(THIS_MODULE), as a parameter write does.
 */
void tt_config_apply(const struct tt_cfg_change *c, unsigned int n)
{
	kernel_param_lock(THIS_MODULE);
	tt_config_store(c, n);
	kernel_param_unlock(THIS_MODULE);
}

/* A parameter write (modprobe argument or sysfs); the core holds the lock. */
static int tt_config_param_set(const char *val, const struct kernel_param *kp)
{
	struct tt_cfg_change c;
	const struct tt_cfg_desc *d;
	unsigned int n;

	c.key = (u32 *)kp->arg - tt_cfg_values;
	if (WARN_ON_ONCE(c.key >= TT_CFG_NR))
		return -EINVAL;
	d = &tt_cfg_descs[c.key];
	if (kstrtouint(val, 0, &n)) {
		pr_err("%s=\"%.*s\" is not a number\n", d->name,
		       (int)strcspn(val, "\n"), val);
		return -EINVAL;
	}
	if (tt_config_check(c.key, n)) {
		pr_err("%s=%u is out of range %u..%u\n", d->name, n, d->min,
		       d->max);
		return -EINVAL;
	}
	c.value = n;
	tt_config_store(&c, 1);
	return 0;
}

static const struct kernel_param_ops tt_config_param_ops = {
	.set = tt_config_param_set,
	.get = param_get_uint,
};

/* One parameter per key, with the key as its name (tt_config_init() checks). */
module_param_cb(workers, &tt_config_param_ops, &tt_cfg_values[TT_CFG_WORKERS],
		0644);
MODULE_PARM_DESC(workers, TT_WORKERS_DESC);
module_param_cb(batch_pages, &tt_config_param_ops, &tt_cfg_values[TT_CFG_BATCH_PAGES],
		0644);
MODULE_PARM_DESC(batch_pages, TT_BATCH_PAGES_DESC);
module_param_cb(max_ranges, &tt_config_param_ops, &tt_cfg_values[TT_CFG_MAX_RANGES],
		0644);
MODULE_PARM_DESC(max_ranges, TT_MAX_RANGES_DESC);
module_param_cb(max_layers, &tt_config_param_ops, &tt_cfg_values[TT_CFG_MAX_LAYERS],
		0644);
MODULE_PARM_DESC(max_layers, TT_MAX_LAYERS_DESC);
module_param_cb(profile_iters, &tt_config_param_ops, &tt_cfg_values[TT_CFG_PROFILE_ITERS],
		0644);
MODULE_PARM_DESC(profile_iters, TT_PROFILE_ITERS_DESC);
module_param_cb(stay_time_us, &tt_config_param_ops, &tt_cfg_values[TT_CFG_STAY_TIME_US],
		0644);
MODULE_PARM_DESC(stay_time_us, TT_STAY_TIME_US_DESC);
module_param_cb(er_seed_mbps, &tt_config_param_ops, &tt_cfg_values[TT_CFG_ER_SEED_MBPS],
		0644);
MODULE_PARM_DESC(er_seed_mbps, TT_ER_SEED_MBPS_DESC);
module_param_cb(pr_seed_mbps, &tt_config_param_ops, &tt_cfg_values[TT_CFG_PR_SEED_MBPS],
		0644);
MODULE_PARM_DESC(pr_seed_mbps, TT_PR_SEED_MBPS_DESC);
module_param_cb(evict_workers, &tt_config_param_ops, &tt_cfg_values[TT_CFG_EVICT_WORKERS],
		0644);
MODULE_PARM_DESC(evict_workers, TT_EVICT_WORKERS_DESC);
module_param_cb(prefetch_workers, &tt_config_param_ops, &tt_cfg_values[TT_CFG_PREFETCH_WORKERS],
		0644);
MODULE_PARM_DESC(prefetch_workers, TT_PREFETCH_WORKERS_DESC);
module_param_cb(sync_late, &tt_config_param_ops, &tt_cfg_values[TT_CFG_SYNC_LATE],
		0644);
MODULE_PARM_DESC(sync_late, TT_SYNC_LATE_DESC);
module_param_cb(bw_cap_mbps, &tt_config_param_ops, &tt_cfg_values[TT_CFG_BW_CAP_MBPS],
		0644);
MODULE_PARM_DESC(bw_cap_mbps, TT_BW_CAP_MBPS_DESC);
module_param_cb(min_migrate_kib, &tt_config_param_ops, &tt_cfg_values[TT_CFG_MIN_MIGRATE_KIB],
		0644);
MODULE_PARM_DESC(min_migrate_kib, TT_MIN_MIGRATE_KIB_DESC);
module_param_cb(event_ring, &tt_config_param_ops, &tt_cfg_values[TT_CFG_EVENT_RING],
		0644);
MODULE_PARM_DESC(event_ring, TT_EVENT_RING_DESC);
module_param_cb(anchor, &tt_config_param_ops, &tt_cfg_values[TT_CFG_ANCHOR],
		0644);
MODULE_PARM_DESC(anchor, TT_ANCHOR_DESC);
module_param_cb(alap, &tt_config_param_ops, &tt_cfg_values[TT_CFG_ALAP],
		0644);
MODULE_PARM_DESC(alap, TT_ALAP_DESC);
module_param_cb(defer_late, &tt_config_param_ops, &tt_cfg_values[TT_CFG_DEFER_LATE],
		0644);
MODULE_PARM_DESC(defer_late, TT_DEFER_LATE_DESC);
module_param_cb(merge, &tt_config_param_ops, &tt_cfg_values[TT_CFG_MERGE],
		0644);
MODULE_PARM_DESC(merge, TT_MERGE_DESC);
module_param_cb(count, &tt_config_param_ops, &tt_cfg_values[TT_CFG_COUNT],
		0644);
MODULE_PARM_DESC(count, TT_COUNT_DESC);
module_param_cb(mover_timeout_ms, &tt_config_param_ops,
		&tt_cfg_values[TT_CFG_MOVER_TIMEOUT_MS], 0644);
MODULE_PARM_DESC(mover_timeout_ms, TT_MOVER_TIMEOUT_MS_DESC);
module_param_cb(dynamic, &tt_config_param_ops, &tt_cfg_values[TT_CFG_DYNAMIC],
		0644);
MODULE_PARM_DESC(dynamic, TT_DYNAMIC_DESC);
module_param_cb(budget_mib, &tt_config_param_ops, &tt_cfg_values[TT_CFG_BUDGET_MIB],
		0644);
MODULE_PARM_DESC(budget_mib, TT_BUDGET_MIB_DESC);
module_param_cb(mover_base, &tt_config_param_ops, &tt_cfg_values[TT_CFG_MOVER_BASE],
		0644);
MODULE_PARM_DESC(mover_base, TT_MOVER_BASE_DESC);

/**
 * tt_config_init() - check that every key has its module parameter
 *
 * The keys are written twice, in the table and as parameter names: a
 * mismatch is a bug caught at load time.
 *
 * Return: 0, or -EINVAL (logged) when a key has no parameter.
 */
int tt_config_init(void)
{
	const struct module *mod = THIS_MODULE;
	unsigned int k, i;

	for (k = 0; k < TT_CFG_NR; k++) {
		for (i = 0; i < mod->num_kp; i++)
			if (mod->kp[i].arg == &tt_cfg_values[k] &&
			    !strcmp(mod->kp[i].name, tt_cfg_descs[k].name))
				break;
		if (i == mod->num_kp) {
			pr_err("setting %s has no module parameter of that name\n",
			       tt_cfg_descs[k].name);
			return -EINVAL;
		}
	}
	return 0;
}
