/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module's settings: one table of keys, ranges, defaults and
 * descriptions, shared by the module parameters and the netlink
 * TT_CMD_GET_CONFIG / TT_CMD_SET_CONFIG commands.
 */
#ifndef TT_CONFIG_H
#define TT_CONFIG_H

#include <linux/types.h>
#include <linux/tiertrain.h>

/*
 * enum tt_cfg_key - the settings, in the order tierctl lists them (the
 * names are in config.c's table; the netlink ABI uses the names only)
 */
enum tt_cfg_key {
	TT_CFG_WORKERS,
	TT_CFG_BATCH_PAGES,
	TT_CFG_MAX_RANGES,
	TT_CFG_MAX_LAYERS,
	TT_CFG_PROFILE_ITERS,
	TT_CFG_STAY_TIME_US,
	TT_CFG_ER_SEED_MBPS,
	TT_CFG_PR_SEED_MBPS,
	TT_CFG_EVICT_WORKERS,
	TT_CFG_PREFETCH_WORKERS,
	TT_CFG_SYNC_LATE,
	TT_CFG_BW_CAP_MBPS,
	TT_CFG_MIN_MIGRATE_KIB,
	TT_CFG_EVENT_RING,
	TT_CFG_ANCHOR,
	TT_CFG_ALAP,
	TT_CFG_DEFER_LATE,
	TT_CFG_MERGE,
	TT_CFG_COUNT,
	TT_CFG_MOVER_TIMEOUT_MS,
	TT_CFG_DYNAMIC,
	TT_CFG_BUDGET_MIB,
	TT_CFG_MOVER_BASE,
	TT_CFG_NR,
};

/**
 * struct tt_cfg_desc - one setting
 * @name:    its key: the module parameter and TT_CFG_A_KEY.
 * @def:     value at load time when no parameter is given.
 * @min:     smallest value accepted.
 * @max:     largest value accepted.
 * @unit:    unit for humans ("" for counts and flags).
 * @applies: enum tt_cfg_applies.
 * @desc:    one sentence (also the parameter's description).
 */
struct tt_cfg_desc {
	const char *name;
	u32 def;
	u32 min;
	u32 max;
	const char *unit;
	u32 applies;
	const char *desc;
};

/**
 * struct tt_cfg_change - one key=value of a TT_CMD_SET_CONFIG request
 * @key:   the setting.
 * @value: its new value, checked with tt_config_check().
 */
struct tt_cfg_change {
	enum tt_cfg_key key;
	u32 value;
};

/* A setting's change hook: see tt_config_hook(). */
typedef void (*tt_cfg_hook_fn)(void);

int tt_config_init(void);
void tt_config_hook(enum tt_cfg_key key, tt_cfg_hook_fn fn);
void tt_config_unhook(enum tt_cfg_key key, tt_cfg_hook_fn fn);
u32 tt_config_get(enum tt_cfg_key key);
const struct tt_cfg_desc *tt_config_desc(enum tt_cfg_key key);
int tt_config_find(const char *name);
int tt_config_check(enum tt_cfg_key key, u64 value);
void tt_config_apply(const struct tt_cfg_change *c, unsigned int n);

#endif /* TT_CONFIG_H */
