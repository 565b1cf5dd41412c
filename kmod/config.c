// SPDX-License-Identifier: GPL-2.0
/*
 * The module's settings in one place.
 *
 * TT_CFG_LIST below is the single table: each setting's key, default,
 * range, unit, when it applies and its description. It is expanded twice:
 * into tt_cfg_descs[] (what netlink reports and checks against) and into
 * one module parameter per key with the same name (modprobe arguments and
 * /sys/module/tiertrain/parameters/). Both ways of setting a value go
 * through tt_config_check() and tt_config_apply(), under
 * kernel_param_lock(THIS_MODULE): the parameter core takes it around a
 * parameter's set operation, the netlink path takes it itself, so a pool
 * size is never changed by two writers at once and a multi-key netlink
 * request is applied as a whole.
 *
 * The other subsystems read values with tt_config_get() (a READ_ONCE of an
 * u32); settings with a side effect (worker pool sizes) call back into the
 * subsystem that owns the pool.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include "config.h"
#include "migrate.h"
#include "sched.h"

#define TT_NOW		TT_CFG_APPLIES_NOW
#define TT_NEW_SESS	TT_CFG_APPLIES_NEW_SESSIONS
#define TT_NEXT_ITER	TT_CFG_APPLIES_NEXT_ITER
#define TT_NEW_RINGS	TT_CFG_APPLIES_NEW_RINGS

/* X(KEY, name, default, min, max, unit, applies, description) */
#define TT_CFG_LIST(X)							\
	X(WORKERS, workers, 2, 1, 64, "", TT_NOW,			\
	  "Migration worker pool size, 1..64 (default 2); a synchronous migration of several batches is split over this many workers") \
	X(BATCH_PAGES, batch_pages, 512, 1, 65536, "pages", TT_NOW,	\
	  "Pages per migrate_vma batch at most, 1..65536 (default 512); a synchronous migration split over several workers uses smaller ones when the range is only a few batches long") \
	X(MAX_RANGES, max_ranges, 65536, 1, 1048576, "", TT_NOW,	\
	  "Registrations (and saved tensors) a session may hold, 1..1048576 (default 65536)") \
	X(MAX_LAYERS, max_layers, 4096, 1, 1048576, "", TT_NOW,		\
	  "Distinct layer ids a session may report, 1..1048576 (default 4096)") \
	X(PROFILE_ITERS, profile_iters, 1, 1, 1000, "iterations", TT_NEW_SESS, \
	  "Iterations a new session only profiles before planning, 1..1000 (default 1)") \
	X(STAY_TIME_US, stay_time_us, 1000, 0, 60000000, "us", TT_NEW_SESS, \
	  "Stay time ST of new sessions in microseconds, 0..60000000 (default 1000)") \
	X(ER_SEED_MBPS, er_seed_mbps, 1024, 1, 1048576, "MiB/s", TT_NEW_SESS, \
	  "Eviction rate new sessions start from, MiB/s, 1..1048576 (default 1024)") \
	X(PR_SEED_MBPS, pr_seed_mbps, 1024, 1, 1048576, "MiB/s", TT_NEW_SESS, \
	  "Prefetch rate new sessions start from, MiB/s, 1..1048576 (default 1024)") \
	X(EVICT_WORKERS, evict_workers, 1, 1, 64, "", TT_NOW,		\
	  "Scheduler eviction worker pool size, 1..64 (default 1)")	\
	X(PREFETCH_WORKERS, prefetch_workers, 1, 1, 64, "", TT_NOW,	\
	  "Scheduler prefetch worker pool size, 1..64 (default 1)")	\
	X(SYNC_LATE, sync_late, 0, 0, 1, "", TT_NEW_SESS,		\
	  "1: new sessions fetch late bytes in the backward begin itself (TT_SCHED_SYNC_LATE), 0..1 (default 0)") \
	X(BW_CAP_MBPS, bw_cap_mbps, 0, 0, 1048576, "MiB/s", TT_NOW,	\
	  "Bandwidth cap of all migrations together, MiB/s, 0..1048576; 0 means off (default 0)") \
	X(MIN_MIGRATE_KIB, min_migrate_kib, 0, 0, 1048576, "KiB", TT_NEXT_ITER, \
	  "Planned evictions smaller than this are not made (the layer is dropped), KiB, 0..1048576; 0 means off (default 0)") \
	X(EVENT_RING, event_ring, 4096, 0, 65536, "events", TT_NEW_RINGS, \
	  "Trace events each session keeps in its ring, 0..65536; 0 means no ring (default 4096)")

#define TT_CFG_DESC(KEY, name_, def_, min_, max_, unit_, applies_, desc_) \
	[TT_CFG_##KEY] = {						\
		.name = #name_, .def = def_, .min = min_, .max = max_,	\
		.unit = unit_, .applies = applies_, .desc = desc_,	\
	},

static const struct tt_cfg_desc tt_cfg_descs[TT_CFG_NR] = {
	TT_CFG_LIST(TT_CFG_DESC)
};

#define TT_CFG_DEFAULT(KEY, name_, def_, ...)	[TT_CFG_##KEY] = def_,

/* The values; written under kernel_param_lock(THIS_MODULE) only. */
static u32 tt_cfg_values[TT_CFG_NR] = {
	TT_CFG_LIST(TT_CFG_DEFAULT)
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

/* Side effects of a new value; kernel_param_lock(THIS_MODULE) held. */
static void tt_config_effect(enum tt_cfg_key key)
{
	switch (key) {
	case TT_CFG_WORKERS:
		tt_migrate_pool_resize();
		break;
	case TT_CFG_EVICT_WORKERS:
	case TT_CFG_PREFETCH_WORKERS:
		tt_sched_pools_resize();
		break;
	default:
		break;
	}
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

#define TT_CFG_PARAM(KEY, name_, def_, min_, max_, unit_, applies_, desc_) \
	module_param_cb(name_, &tt_config_param_ops,			\
			&tt_cfg_values[TT_CFG_##KEY], 0644);		\
	MODULE_PARM_DESC(name_, desc_);

TT_CFG_LIST(TT_CFG_PARAM)
